#!/usr/bin/env bash
# `etwire run` split between two emulator processes under mpirun (configs/multi-host-memif.yaml:
# each process drives one DPDK port, the ports cabled by a net_memif pair) moves the same flows
# and bytes, collective by collective, as one process driving both ports (configs/dpdk-ring.yaml,
# the same trace, mapping and port speeds on a ring cable), and process 0 writes results of the
# same form: every iteration, both ports with their host, flows.csv with every flow.
#
#   split_run_test.sh ETWIRE SOURCE_DIR
set -uo pipefail
etwire=$1
source_dir=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $1"; failures=$((failures + 1)); }

socket="$work/cable.sock"
memif="rsize=14,bsize=8192,socket=$socket"
split_args=(run "$source_dir/configs/multi-host-memif.yaml" --no-metrics --no-progress
  --out "$work/split"
  --set "ports[0].dpdk.vdev=net_memif0,role=server,id=0,$memif"
  --set "ports[1].dpdk.vdev=net_memif1,role=client,id=0,$memif")
timeout 240 mpirun --allow-run-as-root --oversubscribe -np 2 "$etwire" "${split_args[@]}" \
  >"$work/split.out" 2>"$work/split.err"
code=$?
[ "$code" -eq 0 ] || { fail "split run exited $code"; cat "$work/split.out" "$work/split.err"; }

# One process, both ports, the same speeds as the memif cable.
timeout 240 "$etwire" run "$source_dir/configs/dpdk-ring.yaml" --no-metrics --no-progress \
  --out "$work/one" --set ports[0].speed=10Gbps --set ports[1].speed=10Gbps \
  >"$work/one.out" 2>"$work/one.err"
code=$?
[ "$code" -eq 0 ] || { fail "single-process run exited $code"; cat "$work/one.err"; }

python3 - "$work/split" "$work/one" <<'PY' || failures=$((failures + 1))
import csv, json, sys
split_dir, one_dir = sys.argv[1], sys.argv[2]
split = json.load(open(f"{split_dir}/summary.json"))
one = json.load(open(f"{one_dir}/summary.json"))
problems = []
def check(ok, what):
    if not ok:
        problems.append(what)

check(split["status"] == "completed", f"split status {split['status']}: {split.get('diagnosis', '')}")
check(len(split["iterations"]) == len(one["iterations"]) == 5,
      f"iterations {len(split['iterations'])} vs {len(one['iterations'])}")
key = lambda c: (c["job"], json.dumps(c["group"], sort_keys=True), c["sequence"])
def by_key(doc):
    return {key(c): c for c in doc["collectives"]}
s, o = by_key(split), by_key(one)
check(len(split["collectives"]) == len(one["collectives"]) > 0,
      f"{len(split['collectives'])} collectives split, {len(one['collectives'])} in one process")
check(s.keys() == o.keys(), "the collective instances differ")
for k in s.keys() & o.keys():
    for field in ("wire_bytes", "flows", "trace_bytes", "group_size"):
        check(s[k][field] == o[k][field], f"collective {k}: {field} {s[k][field]} vs {o[k][field]}")
    check(s[k]["cct_ns"] > 0, f"collective {k}: CCT {s[k]['cct_ns']}")
    check(s[k]["first_arrival_ns"] <= s[k]["last_arrival_ns"] <= s[k]["end_ns"],
          f"collective {k}: times out of order {s[k]['first_arrival_ns']} {s[k]['last_arrival_ns']} {s[k]['end_ns']}")
ports = {p["name"]: p for p in split["ports"]}
check(set(ports) == {"left", "right"}, f"ports {set(ports)}")
for name, p in ports.items():
    check(bool(p.get("host")), f"port {name} has no host")
    check(p["tx_bytes"] > 0 and p["rx_bytes"] > 0, f"port {name} moved nothing")
one_ports = {p["name"]: p for p in one["ports"]}
# Payload crosses each way once per flow; retransmissions may add to the split run's bytes.
check(ports["left"]["tx_bytes"] >= one_ports["left"]["tx_bytes"] * 0.999,
      f"left tx {ports['left']['tx_bytes']} vs {one_ports['left']['tx_bytes']}")
check(split["flows"] == one["flows"] if "flows" in split else True, "flow counts differ")
rows = list(csv.DictReader(open(f"{split_dir}/flows.csv")))
one_rows = list(csv.DictReader(open(f"{one_dir}/flows.csv")))
check(len(rows) == len(one_rows) > 0, f"flows.csv: {len(rows)} rows split, {len(one_rows)} in one process")
check(sum(int(r["bytes"]) for r in rows) == sum(int(r["bytes"]) for r in one_rows),
      "flows.csv bytes differ")
# Each flow between processes is joined with its delivery on the other process: its time lies
# between posting and the acknowledgement (both on process 0's clock, within the measured offset).
slack = 50_000
for r in rows:
    if r["delivered_ns"] == "":
        check(False, f"flow {r['flow_id']} has no delivery")
        break
    posted, delivered, finished = int(r["posted_ns"]), int(r["delivered_ns"]), int(r["finished_ns"])
    if not (posted - slack <= delivered <= finished + slack):
        check(False, f"flow {r['flow_id']}: delivered at {delivered}, posted {posted}, finished {finished}")
        break
fct = {f["type"]: f["flows"] for f in split["fct"]}
one_fct = {f["type"]: f["flows"] for f in one["fct"]}
check(fct == one_fct and fct, f"FCT samples per collective {fct} vs {one_fct}")
ids = sorted(int(r["flow_id"]) for r in rows)
check(ids == list(range(len(rows))), "flows.csv: flow ids are not 0 .. n-1, each once")
per_instance = {}
for r in rows:
    per_instance[int(r["collective"])] = per_instance.get(int(r["collective"]), 0) + 1
expected = {c["instance"]: c["flows"] for c in split["collectives"]}
check(per_instance == expected,
      "flows.csv: flows per collective instance differ from summary.json's")
for p in problems[:20]:
    print("FAIL:", p)
sys.exit(1 if problems else 0)
PY

if [ "$failures" -gt 0 ]; then
  echo "$failures failed"
  exit 1
fi
echo "split run: same flows and bytes as one process"
