#!/usr/bin/env bash
# `etwire run` split between emulator processes under mpirun, each driving its own DPDK ports
# cabled to the other processes' by net_memif pairs, against the same run in one process on ring
# cables (compare_runs.py: the same flows and bytes collective by collective, every iteration,
# every flow joined with its delivery, ports with their host; CCTs printed):
#   1. configs/multi-host-memif.yaml, two processes, against configs/dpdk-ring.yaml;
#   2. an all-reduce job and an all-to-all job sharing the two processes' ports;
#   3. three processes: four hosts of two ranks in a ring of cables, process 0 driving two hosts.
#
#   split_run_test.sh ETWIRE SOURCE_DIR
#
# The processes busy-poll, and this test may run on a busy 2-core machine where each process gets
# a fraction of a core and loses it for tens of milliseconds at a time. What must hold there is
# asserted: the same flows and bytes, every delivery joined on one time base. How much slower the
# split run is depends on that load, so its CCTs are printed beside the single process's, not
# bounded. Connections are given 1 s per retransmission (adaptive: 7 s without progress before
# one fails), so that a process held off its core does not fail its peers' connections
# (docs/lab-multi-host.md).
set -uo pipefail
etwire=$1
source_dir=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $1"; failures=$((failures + 1)); }
traces="$source_dir/configs/traces"

prefix=()
# DPDK's runtime directories (/var/run/dpdk/etwire-PID, one per emulator process) there before.
runtime_dirs_before=$(ls -d /var/run/dpdk/etwire-* 2>/dev/null | sort)
# shellcheck source=tests/cli_mpi/split_lib.sh
source "$source_dir/tests/cli_mpi/split_lib.sh"
# Args: NAME N SPLIT_CONFIG ONE_CONFIG ITERATIONS [--set ... for the single process]
scenario() {
  local name=$1 np=$2 split_config=$3 one_config=$4 iterations=$5
  shift 5
  compare_split "$name" "$np" "$split_config" "$one_config" "$iterations" 50 "$@"
}

# 1. The shipped two-process example, on its own cable, against the shipped ring example.
sed -e "s|socket=/tmp/etwire-multi-host-memif.sock|socket=$work/two.sock|" \
  -e "s|retransmit_timeout: 100ms|retransmit_timeout: 1s|" \
  "$source_dir/configs/multi-host-memif.yaml" >"$work/two.yaml"
sed -i -e "s|trace: traces/|trace: $traces/|" "$work/two.yaml"
grep -q "retransmit_timeout: 1s" "$work/two.yaml" || fail "two.yaml: the retransmit timeout was not set"
scenario two 2 "$work/two.yaml" "$source_dir/configs/dpdk-ring.yaml" 5 \
  --set ports[0].speed=10Gbps --set ports[1].speed=10Gbps --set transport.retransmit_timeout=1s

# Ports: NAME EMULATOR VDEV PEER, one per line, written as the ports section.
ports_section() {
  echo "ports:"
  while read -r name emulator vdev peer; do
    local owner=""
    [ "$emulator" != - ] && owner="emulator: $emulator, "
    echo "  - {name: $name, backend: dpdk, ${owner}speed: 10Gbps, mtu: 4200, dpdk: {vdev: \"$vdev\", peer: $peer}}"
  done
}
# channels: 0 runs one ring in group order: back-to-back cables (scenario 3) carry nothing else.
common() {  # RUN_NAME EAL_ARGS
  cat <<YAML
run: {name: $1, watchdog: 20s}
dpdk:
  eal_args: $2
  mbufs: 2047
collectives: {algorithms: {all_reduce: ring}, qps_per_peer: 2, channels: 0}
transport: {op: write-with-imm, pmtu: 4096, retransmit_timeout: 1s, retry_count: 7}
YAML
}
split_eal='[--no-pci, --no-huge, -m, "512"]'
one_eal='[--no-pci, --no-huge, --no-shconf, -m, "768", -l, "0"]'
m() { echo "net_memif$1,role=$2,id=0,socket=$work/$3.sock,rsize=14,bsize=8192"; }

# 2. Two jobs, an all-reduce and an all-to-all, sharing the two processes' ports.
mixed_workload() {
  cat <<YAML
workload:
  iterations: 3
  warmup_iterations: 1
  jobs:
    - {name: allreduce, trace: $traces/allreduce_8r/allreduce}
    - {name: alltoall, trace: $traces/alltoall_8r/alltoall}
mapping:
  jobs:
    - {job: allreduce, placement: block, ranks_per_port: 4, hosts: {ranks_per_host: 4, bandwidth: 100GBps}}
    - {job: alltoall, placement: block, ranks_per_port: 4, hosts: {ranks_per_host: 4, bandwidth: 100GBps}}
YAML
}
{
  common mixed "$split_eal"
  mixed_workload
  echo "emulators: [{name: left}, {name: right}]"
  ports_section <<PORTS
a left $(m 0 server mixed) b
b right $(m 1 client mixed) a
PORTS
} >"$work/mixed.yaml"
{
  common mixed "$one_eal"
  mixed_workload
  ports_section <<PORTS
a - net_ring0 b
b - net_ring1 a
PORTS
} >"$work/mixed-one.yaml"
scenario mixed 2 "$work/mixed.yaml" "$work/mixed-one.yaml" 8

# 3. Three processes. Four hosts of two ranks (a port each) in a ring of cables, each host's
# second port to the next host's first: the ring all-reduce crosses every cable. Process 0 drives
# hosts 0 and 2, process 1 host 1, process 2 host 3: every cable joins process 0 (net_memif
# servers) to another (clients).
ring_workload() {
  cat <<YAML
workload:
  iterations: 3
  warmup_iterations: 1
  jobs:
    - {name: allreduce, trace: $traces/allreduce_8r/allreduce}
mapping:
  jobs:
    - {job: allreduce, placement: block, ranks_per_port: 1, hosts: {ranks_per_host: 2, bandwidth: 100GBps}}
YAML
}
{
  common three "$split_eal"
  ring_workload
  echo "emulators: [{name: e0}, {name: e1}, {name: e2}]"
  ports_section <<PORTS
p0 e0 $(m 0 server c70) p7
p1 e0 $(m 1 server c12) p2
p2 e1 $(m 2 client c12) p1
p3 e1 $(m 3 client c34) p4
p4 e0 $(m 4 server c34) p3
p5 e0 $(m 5 server c56) p6
p6 e2 $(m 6 client c56) p5
p7 e2 $(m 7 client c70) p0
PORTS
} >"$work/three.yaml"
{
  common three "$one_eal"
  ring_workload
  ports_section <<PORTS
p0 - net_ring0 p7
p1 - net_ring1 p2
p2 - net_ring2 p1
p3 - net_ring3 p4
p4 - net_ring4 p3
p5 - net_ring5 p6
p6 - net_ring6 p5
p7 - net_ring7 p0
PORTS
} >"$work/three-one.yaml"
scenario three 3 "$work/three.yaml" "$work/three-one.yaml" 4

# Each emulator process removes its own runtime directory when it ends.
for dir in $(comm -13 <(echo "$runtime_dirs_before") <(ls -d /var/run/dpdk/etwire-* 2>/dev/null | sort)); do
  pid=${dir##*-}
  [ -d "/proc/$pid" ] || fail "$dir: an emulator process left its DPDK runtime directory behind"
done

if [ "$failures" -gt 0 ]; then
  echo "$failures failed"
  exit 1
fi
echo "split runs: the same flows and bytes as one process"
