# shellcheck shell=bash
# Shared by the tests of runs split between emulator processes (sourced). The caller sets
# $etwire, $source_dir and $work, and defines fail(); `prefix` (an array, may be empty) runs both
# runs under a command such as `ip netns exec NS`.
# shellcheck disable=SC2154  # etwire, source_dir, work and prefix are the caller's

# Calls fail() when DPDK's heap reported an error in the stderr FILE: it says so when memory is
# freed twice (memif torn down on two threads at once). Args: LABEL FILE
fail_on_eal_error() {
  if grep -q "EAL: Error" "$2"; then
    fail "$1: DPDK reported an error: $(grep "EAL: Error" "$2" | head -3)"
  fi
}

# The bundled all-reduce and all-to-all jobs on the same ports, one rank per port: the workload
# and mapping sections. Args: TRACES_DIR
two_jobs_one_rank_per_port() {
  cat <<YAML
workload:
  iterations: 3
  warmup_iterations: 1
  jobs:
    - {name: allreduce, trace: $1/allreduce_8r/allreduce}
    - {name: alltoall, trace: $1/alltoall_8r/alltoall}
mapping:
  jobs:
    - {job: allreduce, placement: block, ranks_per_port: 1}
    - {job: alltoall, placement: block, ranks_per_port: 1}
YAML
}

# Runs SPLIT under mpirun -np NP and ONE in one process (results in $work/NAME-split and
# $work/NAME-one), then compares them (compare_runs.py). Returns 1 after fail() when a run fails
# or they differ. Args: NAME NP SPLIT ONE ITERATIONS DELIVERY_SLACK_US [ONE'S ARGS...]
compare_split() {
  local name=$1 np=$2 split_config=$3 one_config=$4 iterations=$5 slack=$6
  shift 6
  timeout 300 "${prefix[@]}" mpirun --allow-run-as-root --oversubscribe -np "$np" "$etwire" run \
    "$split_config" --no-metrics --no-progress --out "$work/$name-split" \
    >"$work/$name-split.out" 2>"$work/$name-split.err"
  local code=$?
  if [ "$code" -ne 0 ]; then
    fail "$name: the split run exited $code"
    tail -20 "$work/$name-split.err"
    grep -E "^Status|failed" "$work/$name-split.out" | tail -5
    return 1
  fi
  fail_on_eal_error "$name" "$work/$name-split.err"
  timeout 300 "${prefix[@]}" "$etwire" run "$one_config" --no-metrics --no-progress \
    --out "$work/$name-one" "$@" >"$work/$name-one.out" 2>"$work/$name-one.err"
  code=$?
  if [ "$code" -ne 0 ]; then
    fail "$name: the single-process run exited $code"
    tail -20 "$work/$name-one.err"
    # A run whose flows failed says so only in its report, on stdout.
    grep -E "^Status|failed" "$work/$name-one.out" | tail -5
    return 1
  fi
  echo "== $name"
  python3 "$source_dir/tests/cli_mpi/compare_runs.py" "$work/$name-split" "$work/$name-one" \
    "$iterations" "$slack" || {
    fail "$name: the split run differs from the single process's"
    return 1
  }
}
