#!/usr/bin/env bash
# `etwire run` with verbs ports split between emulator processes under mpirun, each process with a
# software RNIC behind its verbs seam: the processes exchange their QPs' numbers, GIDs, PSNs and
# rkeys over MPI and then carry the traffic between their RNICs (datagrams on 127.0.0.1). Each
# split run is compared with the same run in one process (the software RNIC on the fabric twin)
# by compare_runs.py: the same flows and bytes collective by collective, every flow joined with
# its delivery; CCTs printed. And every flow between processes names QPs of both:
# the requester's number from the sending process's RNIC, the responder's from the receiving one's
# (each RNIC numbers from 0x800 + its process << 16), which only the exchange can have told it.
#   1. configs/multi-host-verbs-software.yaml: the 8-rank all-reduce over two processes;
#   2. an all-reduce job and an all-to-all job sharing eight ports of three processes.
#
#   split_verbs_test.sh ETWIRE SOURCE_DIR
#
# Deliveries are seen when the receiving process polls its completion queue, so on a busy 2-core
# machine a delivery may be timestamped well after its sender saw the acknowledgement (8 ms seen
# in CI while a build ran): a joined delivery must come after its posting (within the clocks'
# error) and within 200 ms of its finish; CCTs are printed, not bounded (split_run_test.sh).
set -uo pipefail
etwire=$1
source_dir=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $1"; failures=$((failures + 1)); }
traces="$source_dir/configs/traces"

# Every flow between ports of two processes carries QP numbers of both processes' RNICs.
check_exchange() {  # RESULTS_DIR PROCESS_OF_PORT (a python list)
  python3 - "$1" "$2" <<'PY' || return 1
import csv, json, sys
rows = list(csv.DictReader(open(f"{sys.argv[1]}/flows.csv")))
process_of = json.loads(sys.argv[2])
between = [r for r in rows if process_of[int(r["src_port"])] != process_of[int(r["dst_port"])]]
wrong = [r for r in between
         if int(r["qpn"]) >> 16 != process_of[int(r["src_port"])]
         or int(r["dest_qpn"]) >> 16 != process_of[int(r["dst_port"])]]
print(f"{len(between)} flows between processes, {len(wrong)} with a QP number of the wrong process")
sys.exit(0 if between and not wrong else 1)
PY
}

prefix=()
# shellcheck source=tests/cli_mpi/split_lib.sh
source "$source_dir/tests/cli_mpi/split_lib.sh"
# Args: NAME N SPLIT ONE ITERATIONS PROCESS_OF_PORT
scenario() {
  local name=$1 process_of=$6
  compare_split "$1" "$2" "$3" "$4" "$5" 200000 || return
  grep -q "exchanged over MPI" "$work/$name-split.out" ||
    fail "$name: the summary does not say the QPs were exchanged"
  check_exchange "$work/$name-split" "$process_of" ||
    fail "$name: flows between processes do not name both processes' QPs"
}

# The same configuration in one process: no emulators section, no port's emulator.
one_process() { sed -e '/^emulators:/,/^$/d' -e '/^ *emulator: /d' -e 's/emulator: [^,]*, //' "$1"; }

# 1. The shipped two-process example.
sed -e "s|trace: traces/|trace: $traces/|" "$source_dir/configs/multi-host-verbs-software.yaml" \
  >"$work/two.yaml"
one_process "$work/two.yaml" >"$work/two-one.yaml"
scenario two 2 "$work/two.yaml" "$work/two-one.yaml" 5 "[0,0,0,0,1,1,1,1]"

# 2. Two jobs, an all-reduce and an all-to-all, on eight ports of three processes.
{
  cat <<YAML
run: {name: mixed, watchdog: 20s}
YAML
  two_jobs_one_rank_per_port "$traces"
  cat <<YAML
emulators: [{name: e0}, {name: e1}, {name: e2}]

ports:
  - {name: p, count: 3, emulator: e0, backend: verbs, verbs: {device: "r0_{i}", port: 1}, ipv4: 10.9.0.1, speed: 1Gbps, mtu: 4200}
  - {name: q, count: 3, emulator: e1, backend: verbs, verbs: {device: "r1_{i}", port: 1}, ipv4: 10.9.0.4, speed: 1Gbps, mtu: 4200}
  - {name: s, count: 2, emulator: e2, backend: verbs, verbs: {device: "r2_{i}", port: 1}, ipv4: 10.9.0.7, speed: 1Gbps, mtu: 4200}
verbs: {rnic: software, max_message: 256KiB, queue_depth: 64}
collectives: {algorithms: {all_reduce: ring}, qps_per_peer: 1}
transport: {op: write-with-imm, pmtu: 4096, retransmit_timeout: 1s, retry_count: 7}
YAML
} >"$work/mixed.yaml"
one_process "$work/mixed.yaml" >"$work/mixed-one.yaml"
scenario mixed 3 "$work/mixed.yaml" "$work/mixed-one.yaml" 8 "[0,0,0,1,1,1,2,2]"

if [ "$failures" -gt 0 ]; then
  echo "$failures failed"
  exit 1
fi
echo "split verbs runs: the same flows and bytes as one process, QPs exchanged between processes"
