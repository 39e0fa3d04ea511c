#!/usr/bin/env bash
# A run split between three emulator processes whose DPDK ports all meet in one switch, as a
# lab's servers meet in the fabric under test: the switch is a Linux bridge in a network
# namespace this test creates (and removes), each port a net_af_packet device on a veth whose
# other end is a bridge port. Every port reaches every other, so an all-reduce job and an
# all-to-all job share eight ports of three processes; the run is compared with the same run in
# one process through the same bridge (compare_runs.py: the same flows and bytes collective by
# collective, every flow joined with its delivery; CCTs printed, as in split_run_test.sh).
#
#   split_switch_test.sh ETWIRE SOURCE_DIR
#
# The bridge's forwarding table is written up front (each port's MAC on its veth), so no frame is
# flooded to ports it is not for. veths carry frames of at most 1518 bytes to af_packet
# (../shared/spec/platform-notes.md): PMTU 1024. Exit 77 (skipped) without root.
set -uo pipefail
etwire=$1
source_dir=$2
if [ "$(id -u)" -ne 0 ]; then
  echo "skipped: creating a network namespace, a bridge and veths needs root"
  exit 77
fi
ns="etwire-switch-$$"
work=$(mktemp -d)
cleanup() {
  ip netns del "$ns" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
failures=0
fail() { echo "FAIL: $1"; failures=$((failures + 1)); }
traces="$source_dir/configs/traces"
in_ns() { ip netns exec "$ns" "$@"; }
prefix=(ip netns exec "$ns")
# shellcheck source=tests/cli_mpi/split_lib.sh
source "$source_dir/tests/cli_mpi/split_lib.sh"

ip netns add "$ns" || { echo "FAIL: cannot create a network namespace"; exit 1; }
ip -n "$ns" link set lo up
ip -n "$ns" link add sw type bridge stp_state 0
ip -n "$ns" link set sw up
owners=(e0 e0 e0 e1 e1 e1 e2 e2)
# DPDK's af_packet port joins a fanout group numbered by its process id XOR its interface's index;
# with nearby process ids and consecutive indexes two processes' ports could draw the same group
# and the second fails to start. Indexes that differ only above bit 12 keep the groups apart.
for i in 0 1 2 3 4 5 6 7; do
  ip -n "$ns" link add "d$i" index $(((i + 1) * 4096)) mtu 1500 type veth peer name "s$i" mtu 1500
  ip -n "$ns" link set "s$i" master sw
  ip -n "$ns" link set "s$i" up
  ip -n "$ns" link set "d$i" up
  in_ns bridge fdb add "02:00:0a:08:00:0$((i + 1))" dev "s$i" master static
done

# The configuration; with "split" each port belongs to an emulator.
config() {  # split|one
  local eal='[--no-pci, --no-huge, -m, "512"]'
  [ "$1" = one ] && eal='[--no-pci, --no-huge, --no-shconf, -m, "1024", -l, "0"]'
  cat <<YAML
run: {name: switch, watchdog: 20s}
dpdk: {eal_args: $eal, mbufs: 4095}
collectives: {algorithms: {all_reduce: ring}, qps_per_peer: 1}
transport: {op: write-with-imm, pmtu: 1024, retransmit_timeout: 1s, retry_count: 7}
YAML
  two_jobs_one_rank_per_port "$traces"
  [ "$1" = split ] && echo "emulators: [{name: e0}, {name: e1}, {name: e2}]"
  echo "ports:"
  for i in 0 1 2 3 4 5 6 7; do
    local owner=""
    [ "$1" = split ] && owner="emulator: ${owners[$i]}, "
    echo "  - {name: p$i, ${owner}backend: dpdk, dpdk: {vdev: \"net_af_packet$i,iface=d$i,framecnt=4096\"}," \
      "mac: \"02:00:0a:08:00:0$((i + 1))\", ipv4: 10.8.0.$((i + 1)), speed: 100Mbps, mtu: 1500}"
  done
}
config split >"$work/split.yaml"
config one >"$work/one.yaml"

compare_split switch 3 "$work/split.yaml" "$work/one.yaml" 8 50

if [ "$failures" -gt 0 ]; then
  echo "$failures failed"
  exit 1
fi
echo "three processes through one switch: the same flows and bytes as one process"
