#!/usr/bin/env bash
# Runs tests with every core busy, as on a lab host doing other work: one spinner (a busy loop at
# the tests' own priority) pinned to each CPU this shell may use, for as long as the tests run.
# Every test must pass so (docs/reliability.md, "A busy machine"): what a wall-clock test asserts
# holds on a loaded machine, and its timing bounds come from the machine, not constants.
#
#   scripts/test-under-load.sh [--spinners N] [--spinner-command CMD]... [--runs K] [--wall-clock]
#                              [--readme] [-- CTEST ARGS]
#
#   --spinners N  N spinners (default: one per CPU), placed on the CPUs in turn
#   --spinner-command CMD
#                 the next spinner does work: it runs CMD (a shell command, pinned to its CPU,
#                 at the tests' priority, e.g. a fuzz campaign) and busy-loops once CMD ends,
#                 so its CPU stays busy however long the tests run; CMD's output goes to its
#                 own log (printed at the start). Repeat for more spinners
#   --runs K      run the tests K times in a row (default 1); stops at the first failing run
#   --wall-clock  only the tests on the wall clock (labels dpdk, dpdk_port, dataplane_dpdk,
#                 dataplane_mpi, dataplane_verbs, cli_mpi, dut, capture, telemetry, verbs,
#                 testing)
#   --readme      the README's whole test command (scripts/test.sh) instead of ctest on
#                 build/release
#
# Builds build/release first (scripts/setup.sh --tests). Prints the load average and the time of
# each run; exits with the first failing run's code.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
spinners=""
spinner_commands=()
runs=1
wall_clock=0
readme=0
ctest_args=()
while (($#)); do
  case "$1" in
    --spinners) spinners=${2:-}; shift ;;
    --spinner-command) spinner_commands+=("${2:?--spinner-command needs a command}"); shift ;;
    --runs) runs=${2:-}; shift ;;
    --wall-clock) wall_clock=1 ;;
    --readme) readme=1 ;;
    --) shift; ctest_args=("$@"); break ;;
    -h|--help) sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "test-under-load.sh: unknown option $1 (try --help)" >&2; exit 2 ;;
  esac
  shift
done
cpus=()
while read -r cpu; do cpus+=("$cpu"); done < <(python3 -c \
  'import os; print("\n".join(str(c) for c in sorted(os.sched_getaffinity(0))))')
[[ -z $spinners ]] && spinners=${#cpus[@]}
[[ $spinners =~ ^[0-9]+$ ]] || { echo "test-under-load.sh: --spinners needs a whole number" >&2; exit 2; }
if ((${#spinner_commands[@]} > spinners)); then
  echo "test-under-load.sh: ${#spinner_commands[@]} spinner commands for $spinners spinner(s)" >&2
  exit 2
fi
[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "test-under-load.sh: --runs needs a positive whole number" >&2; exit 2; }
if ((readme && wall_clock)); then
  echo "test-under-load.sh: --readme runs every test; leave out --wall-clock" >&2
  exit 2
fi

spinner_pids=()
stop_spinners() {
  # Each spinner leads its own process group (setsid): a command's children go with it.
  local pid
  for pid in "${spinner_pids[@]}"; do kill -- "-$pid" 2>/dev/null; done
  # A spinner killed reports 143; under `set -e` that would become the script's exit code.
  ((${#spinner_pids[@]})) && { wait "${spinner_pids[@]}" 2>/dev/null || true; }
  spinner_pids=()
}
trap stop_spinners EXIT INT TERM

if ((!readme)); then
  echo "== Release build (scripts/setup.sh --tests)"
  "$root/scripts/setup.sh" --tests
fi
for ((i = 0; i < spinners; i++)); do
  cpu=${cpus[i % ${#cpus[@]}]}
  work=${spinner_commands[i]:-:}
  log=/dev/null
  if [[ $work != : ]]; then
    log=$(mktemp "${TMPDIR:-/tmp}/etwire-spinner-$i.XXXXXX.log")
    echo "== spinner $i on CPU $cpu runs: $work (log $log)"
  fi
  setsid taskset -c "$cpu" bash -c "cd '$root' && { $work; } >'$log' 2>&1; while :; do :; done" &
  spinner_pids+=($!)
done
echo "== $spinners spinner(s) on CPUs ${cpus[*]}; load average $(cut -d' ' -f1-3 /proc/loadavg)"

selection=()
((wall_clock)) &&
  selection=(-L '^(dpdk|dpdk_port|dataplane_dpdk|dataplane_mpi|dataplane_verbs|cli_mpi|dut|capture|telemetry|verbs|testing)$')
for ((run = 1; run <= runs; run++)); do
  start=$(date +%s)
  code=0
  if ((readme)); then
    "$root/scripts/test.sh" "${ctest_args[@]+--}" "${ctest_args[@]}" || code=$?
  else
    ctest --test-dir "$root/build/release" --output-on-failure -j "${#cpus[@]}" \
      "${selection[@]}" "${ctest_args[@]}" || code=$?
  fi
  echo "== run $run of $runs: exit $code after $(($(date +%s) - start)) s under $spinners spinner(s);" \
    "load average $(cut -d' ' -f1-3 /proc/loadavg)"
  ((code == 0)) || exit "$code"
done
