"""Compares a run split between emulator processes with the same run in one process.

    compare_runs.py SPLIT_DIR ONE_DIR ITERATIONS [DELIVERY_SLACK_US]

Both directories hold the results of `etwire run`. The split run must have moved the same flows
and bytes, collective instance by collective instance, have every iteration, each port with the
host of its process, every flow in flows.csv (numbered 0 .. n-1, each joined with its delivery on
the other process), the same FCT sample counts. A delivery joined from another process lies between its
flow's posting (within 50 us plus the offset error the run states) and its finish (within
DELIVERY_SLACK_US, default 50 us, plus that error: a receiver's polling, which is later on a busy
machine where the receiver learns of a delivery only when its process next runs; at most 1
delivery in 100 may lie up to 2 ms past, one whose process lost its core at that moment). Prints
each problem and exits 1 if there is any; prints the mean CCT per collective type of both runs
either way, unbounded: how much slower the processes that share the machine's cores are depends
on what else runs there, and a wrong time base shows in the deliveries' times.
"""
import csv
import os
import json
import re
import sys

split_dir, one_dir, iterations = sys.argv[1], sys.argv[2], int(sys.argv[3])
split = json.load(open(f"{split_dir}/summary.json"))
one = json.load(open(f"{one_dir}/summary.json"))
# The run states how well it measured each process's clock offset ("... measured to within N
# ns"): a delivery put on process 0's clock may be off by that much more, which a loaded machine
# (long round trips while the offsets were measured) makes larger than the slack alone.
offset_error = max([int(m) for n in split.get("notes", [])
                    for m in re.findall(r"measured to within (\d+) ns", n)] or [0])
early_slack = 50_000 + offset_error
late_slack = (int(float(sys.argv[4]) * 1000) if len(sys.argv) > 4 else 50_000) + offset_error
STRAY_SLACK = max(late_slack, 2_000_000)
problems = []


def check(ok, what):
    if not ok:
        problems.append(what)


check(split["status"] == "completed", f"split status {split['status']}: {split.get('diagnosis', '')}")
check(len(split["iterations"]) == len(one["iterations"]) == iterations,
      f"iterations {len(split['iterations'])} split, {len(one['iterations'])} in one process, "
      f"{iterations} expected")


def key(c):
    return (c["job"], json.dumps(c["group"], sort_keys=True), c["sequence"], c["tag"])


s = {key(c): c for c in split["collectives"]}
o = {key(c): c for c in one["collectives"]}
check(len(split["collectives"]) == len(one["collectives"]) > 0,
      f"{len(split['collectives'])} collectives split, {len(one['collectives'])} in one process")
check(s.keys() == o.keys(), "the collective instances differ")
for k in sorted(s.keys() & o.keys()):
    for field in ("type", "wire_bytes", "flows", "trace_bytes", "group_size"):
        check(s[k][field] == o[k][field], f"collective {k}: {field} {s[k][field]} vs {o[k][field]}")
    check(s[k]["cct_ns"] > 0, f"collective {k}: CCT {s[k]['cct_ns']}")
    check(s[k]["first_arrival_ns"] <= s[k]["last_arrival_ns"] <= s[k]["end_ns"],
          f"collective {k}: times out of order {s[k]['first_arrival_ns']} "
          f"{s[k]['last_arrival_ns']} {s[k]['end_ns']}")

# Mean CCT per collective type over the measured iterations.
def mean_cct(doc):
    by_type = {}
    for c in doc["collectives"]:
        if not c["warmup"]:
            by_type.setdefault(c["type"], []).append(c["cct_ns"])
    return {t: sum(v) / len(v) for t, v in by_type.items()}


split_cct, one_cct = mean_cct(split), mean_cct(one)
for t in sorted(one_cct):
    ratio = split_cct.get(t, float("inf")) / one_cct[t]
    print(f"{t}: mean CCT {split_cct.get(t, 0) / 1e3:.1f} us split, {one_cct[t] / 1e3:.1f} us in "
          f"one process: x{ratio:.2f}")

check(any("times put on process 0's clock with an offset of" in n for n in split.get("notes", [])),
      "the summary does not say how the processes' clocks were put on one time base")
ports = {p["name"]: p for p in split["ports"]}
one_ports = {p["name"]: p for p in one["ports"]}
check(ports.keys() == one_ports.keys(), f"ports {sorted(ports)} vs {sorted(one_ports)}")
for name, p in ports.items():
    check(bool(p.get("host")), f"port {name} has no host")
    check(p["tx_bytes"] > 0 and p["rx_bytes"] > 0, f"port {name} moved nothing")
# The same frames leave both runs' ports, plus whatever was sent again: port by port where
# neither run resent anything. Either way both sent the same data packets once resends are taken
# out (the trace's own, segmented alike); acknowledgements and CNPs vary with the timing.
resent = {run: sum(p["retransmitted_packets"] for p in run_ports.values())
          for run, run_ports in (("split", ports), ("one", one_ports))}
original = {run: sum(p["data_packets"] - p["retransmitted_packets"] for p in run_ports.values())
            for run, run_ports in (("split", ports), ("one", one_ports))}
check(original["split"] == original["one"],
      f"data packets less resends: {original['split']} split (resent {resent['split']}), "
      f"{original['one']} in one process (resent {resent['one']})")
if resent["split"] == resent["one"] == 0:
    for name in ports.keys() & one_ports.keys():
        check(ports[name]["tx_bytes"] == one_ports[name]["tx_bytes"],
              f"port {name}: tx {ports[name]['tx_bytes']} vs {one_ports[name]['tx_bytes']}, "
              "nothing resent")
check(split["flows"] == one["flows"], f"flows {split['flows']} vs {one['flows']}")
# QP halves: each process's own, gathered to process 0 (none on verbs ports: null in both runs).
check((split.get("qps") is None) == (one.get("qps") is None),
      f"qps: {split.get('qps') is not None} split, {one.get('qps') is not None} in one process")
if split.get("qps") is not None and one.get("qps") is not None:
    check(split["qps"]["count"] == one["qps"]["count"],
          f"qps: {split['qps']['count']} halves split, {one['qps']['count']} in one process")
    qp_rows = list(csv.DictReader(open(f"{split_dir}/qps.csv")))
    check(len(qp_rows) == split["qps"]["count"],
          f"qps.csv: {len(qp_rows)} rows, summary.json counts {split['qps']['count']}")
    sent = sum(int(r["packets"]) for r in qp_rows if r["role"] == "requester")
    check(sent == sum(p["data_packets"] for p in ports.values()),
          f"qps.csv: requesters sent {sent} data packets, the ports "
          f"{sum(p['data_packets'] for p in ports.values())}")

rows = list(csv.DictReader(open(f"{split_dir}/flows.csv")))
one_rows = list(csv.DictReader(open(f"{one_dir}/flows.csv")))
check(len(rows) == len(one_rows) > 0, f"flows.csv: {len(rows)} rows split, {len(one_rows)} in one process")
check(sum(int(r["bytes"]) for r in rows) == sum(int(r["bytes"]) for r in one_rows),
      "flows.csv bytes differ")
# Each flow between processes is joined with its delivery on the other process: its time lies
# between posting and the acknowledgement (both on process 0's clock, within the offsets' error).
# A wrong join or time base moves many deliveries; a process that lost its core at the wrong
# moment moves a few: deliveries may lie up to STRAY_SLACK past their finish. Strays are counted
# by their finish time (at most 1 in 100 flows): the wall clock is read every few events, so a
# requester that loses its core amid a batch of acknowledgements stamps every flow the batch
# finishes with the reading from before, and one such moment moves them all (an ACK can finish
# several messages of a connection at once).
late_strays = []
late_stray_finishes = set()
for r in rows:
    if r["delivered_ns"] == "":
        check(False, f"flow {r['flow_id']} has no delivery")
        break
    posted, delivered, finished = int(r["posted_ns"]), int(r["delivered_ns"]), int(r["finished_ns"])
    if posted - early_slack <= delivered <= finished + late_slack:
        continue
    if finished + late_slack < delivered <= finished + STRAY_SLACK:
        late_strays.append(f"flow {r['flow_id']} delivered {(delivered - finished) / 1000:.1f} us "
                           f"after its finish")
        late_stray_finishes.add(finished)
        continue
    check(False, f"flow {r['flow_id']}: delivered at {delivered}, posted {posted}, finished {finished}")
    break
if late_strays:
    print(f"offsets measured to within {offset_error} ns; {len(late_strays)} of {len(rows)} "
          f"deliveries ({len(late_stray_finishes)} finish times) later than their finish by "
          f"more than {late_slack / 1000:.0f} us: {'; '.join(late_strays[:5])}")
# Under the sanitizers every process runs several times slower and loses its core more often;
# a wrong join or time base still moves most deliveries.
stray_share = 10 if os.environ.get("ETWIRE_SANITIZED") else 100
check(len(late_stray_finishes) * stray_share <= len(rows),
      f"{len(late_strays)} of {len(rows)} deliveries lie past their finish, at "
      f"{len(late_stray_finishes)} finish times (at most 1 in {stray_share} flows may)")
fct = {f["type"]: f["flows"] for f in split["fct"]}
one_fct = {f["type"]: f["flows"] for f in one["fct"]}
check(fct == one_fct and fct, f"FCT samples per collective {fct} vs {one_fct}")
ids = sorted(int(r["flow_id"]) for r in rows)
check(ids == list(range(len(rows))), "flows.csv: flow ids are not 0 .. n-1, each once")
per_instance = {}
for r in rows:
    per_instance[int(r["collective"])] = per_instance.get(int(r["collective"]), 0) + 1
expected = {c["instance"]: c["flows"] for c in split["collectives"]}
check(per_instance == expected, "flows.csv: flows per collective instance differ from summary.json's")

for p in problems[:20]:
    print("FAIL:", p)
sys.exit(1 if problems else 0)
