#!/usr/bin/env bash
# Faults in a run split between two emulator processes (configs/multi-host-memif.yaml under
# mpirun, its cable a veth pair in a network namespace this test creates): a process killed
# mid-run ends the other within seconds, which keeps its part of the results; SIGINT to mpirun
# ends both, each keeping its part; a process that loaded other inputs stops both before anything
# starts.
#
# Not net_memif, the example's own cable: DPDK 22.11's memif driver unmaps a departed peer's rings
# on its interrupt thread while the data path may be reading them, so a process whose peer was
# killed could die of SIGSEGV itself (seen once in a CI run; docs/lab-multi-host.md).
#
#   split_run_faults_test.sh ETWIRE SOURCE_DIR
#
# Exit 77 (skipped) without root.
set -uo pipefail
etwire=$1
source_dir=$2
if [ "$(id -u)" -ne 0 ]; then
  echo "skipped: creating a network namespace and veths needs root"
  exit 77
fi
ns="etwire-faults-$$"
work=$(mktemp -d)
failures=0
fail() { echo "FAIL: $1"; failures=$((failures + 1)); }
# shellcheck source=tests/cli_mpi/split_lib.sh
source "$source_dir/tests/cli_mpi/split_lib.sh"
cleanup() {
  pkill -KILL -f "$work" 2>/dev/null
  ip netns del "$ns" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
ip netns add "$ns" || { echo "FAIL: cannot create a network namespace"; exit 1; }
ip -n "$ns" link set lo up
# One cable per case: a veth pair. DPDK's af_packet port joins a fanout group numbered by its
# process id XOR its interface's index; indexes that differ only above bit 12 keep two
# processes' groups apart (as in split_switch_test.sh).
for c in 1 2 3; do
  ip -n "$ns" link add "a$c" index $((c * 8192)) mtu 1500 type veth peer name "b$c" \
    index $((c * 8192 + 4096)) mtu 1500
  ip -n "$ns" link set "a$c" up
  ip -n "$ns" link set "b$c" up
done

config="$source_dir/configs/multi-host-memif.yaml"
# A long run (50000 iterations of the all-reduce, minutes: it is ended long before) on cable
# CABLE. veths carry frames of at most 1518 bytes to af_packet (platform-notes.md): PMTU 1024.
long_run() {  # OUT CABLE
  local p
  echo run "$config" --no-metrics --no-progress --out "$work/$1" --set workload.iterations=50000 \
    --set transport.pmtu=1024
  for p in 0 1; do
    echo --set "ports[$p].dpdk.vdev=net_af_packet$p,iface=$([ $p = 0 ] && echo a || echo b)$2,framecnt=4096" \
      --set "ports[$p].mtu=1500" --set "ports[$p].speed=1Gbps"
  done
}
# The pid of the etwire process of MPI rank RANK whose command line names OUT.
pid_of_rank() {  # OUT RANK
  local p
  for p in $(pgrep -f "etwire run .*--out $work/$1 "); do
    if tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$2"; then
      echo "$p"
      return
    fi
  done
}
# Waits (at most 120 s) until the run's flows.csv has flows in it: the traffic has started.
wait_for_traffic() {  # OUT
  local _
  for _ in $(seq 1200); do
    [ "$(wc -l 2>/dev/null <"$work/$1/flows.csv" || echo 0)" -gt 20 ] && return 0
    sleep 0.1
  done
  return 1
}
# What etwire printed last: the stderr of the run, without mpirun's own notices.
errors_of() {  # FILE
  grep -v -e '^-----' -e 'mpirun' -e 'Per user-direction' -e 'non-zero' -e '^ *Process name' \
    -e '^ *Exit code' -e 'Primary job' "$1" | tail -12
}
# The diagnosis in a summary.json, whole, and what failed there.
diagnosis_of() {  # SUMMARY
  python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))
print(s.get("diagnosis"), "failed flows:", s.get("failed_flows"),
      s.get("failed_by_status"))' "$1" 2>&1
}
# Process 0's own part of a split run's diagnosis: every member arrived and no flow was in flight.
nothing_in_flight_here() {  # SUMMARY
  python3 -c 'import json, sys
d = json.load(open(sys.argv[1])).get("diagnosis") or ""
own = d.split("emulator \"server-b\" on ")[0]
sys.exit(0 if "every member here arrived; ranks 0-3 still running, 0 flows in progress" in own
         else 1)' "$1"
}
status_of() {  # SUMMARY
  python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["status"])' "$1" 2>/dev/null
}

# 1. Process 1 killed mid-run: process 0 ends within seconds and keeps its part.
# shellcheck disable=SC2046
timeout 300 ip netns exec "$ns" mpirun --allow-run-as-root --oversubscribe -np 2 "$etwire" $(long_run killed 1) \
  >"$work/killed.out" 2>"$work/killed.err" &
launcher=$!
if wait_for_traffic killed; then
  victim=$(pid_of_rank killed 1)
  [ -n "$victim" ] || fail "no process of rank 1 found"
  kill -KILL "$victim"
  killed_at=$(date +%s)
  wait "$launcher"
  code=$?
  took=$(($(date +%s) - killed_at))
  [ "$code" -ne 0 ] || fail "mpirun exited 0 after a process was killed"
  [ "$took" -le 15 ] || fail "the surviving process took ${took} s to end"
  [ "$(status_of "$work/killed/summary.json")" = interrupted ] ||
    fail "process 0 kept no interrupted summary.json: $(errors_of "$work/killed.err")"
  grep -q "this is emulator \\\\\"server-a\\\\\"'s part only" "$work/killed/summary.json" ||
    fail "process 0's summary does not say whose part it is"
  [ "$(wc -l <"$work/killed/flows.csv")" -gt 20 ] || fail "process 0's flows.csv lost its flows"
else
  fail "the run to kill never started: $(errors_of "$work/killed.err")"
  kill -KILL "$launcher" 2>/dev/null
fi

# 2. SIGINT to mpirun: both processes end, each keeping its part. `timeout --foreground` passes
# the signal to mpirun alone: without it, timeout also signals its process group, and mpirun,
# given a second SIGINT while it ends the job, kills the processes at once (measured: 2 runs in
# 12 ended so, with nothing written).
# shellcheck disable=SC2046
timeout --foreground 300 ip netns exec "$ns" mpirun --allow-run-as-root --oversubscribe -np 2 \
  "$etwire" $(long_run interrupted 2) \
  >"$work/interrupted.out" 2>"$work/interrupted.err" &
launcher=$!
if wait_for_traffic interrupted; then
  kill -INT "$launcher"
  wait "$launcher"
  code=$?
  [ "$code" -ne 0 ] || fail "mpirun exited 0 after SIGINT"
  [ "$(status_of "$work/interrupted/summary.json")" = interrupted ] ||
    fail "no interrupted summary.json from process 0: $(errors_of "$work/interrupted.err")"
  [ "$(status_of "$work/interrupted/emulator-server-b/summary.json")" = interrupted ] ||
    fail "no interrupted summary.json from process 1: $(errors_of "$work/interrupted.err")"
  [ "$(wc -l <"$work/interrupted/emulator-server-b/flows.csv")" -gt 1 ] ||
    fail "process 1 kept no flows"
else
  fail "the run to interrupt never started: $(errors_of "$work/interrupted.err")"
  kill -KILL "$launcher" 2>/dev/null
fi

# 3. Process 1 held off its core for longer than the watchdog: process 0 finds its collective
# stuck and names the ranks missing with their emulator and host; process 1, let go, finds its
# own stuck; process 0 reports both, and the run exits 3.
# shellcheck disable=SC2046
timeout 300 ip netns exec "$ns" mpirun --allow-run-as-root --oversubscribe -np 2 "$etwire" $(long_run stuck 3) \
  --set run.watchdog=3s >"$work/stuck.out" 2>"$work/stuck.err" &
launcher=$!
if wait_for_traffic stuck; then
  held=$(pid_of_rank stuck 1)
  kill -STOP "$held"
  sleep 6
  kill -CONT "$held"
  wait "$launcher"
  code=$?
  [ "$code" -eq 3 ] || fail "a stuck split run exited $code, not 3: $(errors_of "$work/stuck.err")"
  [ "$(status_of "$work/stuck/summary.json")" = stuck ] || fail "the summary is not stuck"
  fail_on_eal_error stuck "$work/stuck.err"
  grep -q '4 of 4 arrived here; ranks 4-7 are replayed by emulator \\"server-b\\" (process 1 on host' \
    "$work/stuck/summary.json" ||
    fail "the diagnosis does not name the missing ranks' emulator: \
$(diagnosis_of "$work/stuck/summary.json")"
  grep -q 'emulator \\"server-b\\" on ' "$work/stuck/summary.json" ||
    fail "process 1's own diagnosis is missing"
  # Held for 6 s, longer than its peers' connections wait without progress (100 ms x 7): the
  # connections process 0 had in flight failed, and its diagnosis says so rather than reading as
  # a deadlock. A hold that caught process 0 with nothing in flight (its members waiting for
  # process 1's data, whose senders alone time out) left it nothing to fail: its diagnosis then
  # says 0 flows were in progress here.
  if ! grep -q 'flows failed here (retry-exceeded [0-9]*' "$work/stuck/summary.json" &&
    ! nothing_in_flight_here "$work/stuck/summary.json"; then
    fail "the diagnosis says neither that flows failed nor that none was in flight: \
$(diagnosis_of "$work/stuck/summary.json")
process 1's summary: $(diagnosis_of "$work/stuck/emulator-server-b/summary.json")"
  fi
else
  fail "the run to hold never started: $(errors_of "$work/stuck.err")"
  kill -KILL "$launcher" 2>/dev/null
fi

# 4. One process with other inputs: both stop before anything starts.
timeout 120 mpirun --allow-run-as-root --oversubscribe \
  -np 1 "$etwire" run "$config" --no-metrics --out "$work/differ" : \
  -np 1 "$etwire" run "$config" --no-metrics --out "$work/differ" --set run.seed=9 \
  >"$work/differ.out" 2>&1
code=$?
[ "$code" -ne 0 ] || fail "processes with different inputs ran"
grep -q "the emulator processes loaded different configurations or traces; nothing was started" \
  "$work/differ.out" || fail "no clear message for different inputs: $(errors_of "$work/differ.out")"
grep -q "process 1 on host" "$work/differ.out" || fail "the differing process is not named"
[ ! -e "$work/differ" ] || fail "a results directory was made for a run that never started"

if [ "$failures" -gt 0 ]; then
  echo "$failures failed"
  exit 1
fi
echo "split run faults: a killed process, SIGINT and different inputs end every process cleanly"
