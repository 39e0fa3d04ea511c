#!/usr/bin/env bash
# What the machine gives the tests, and what earlier runs left on it. The tests on the wall clock
# (DPDK, split runs, OVS) depend on CPU time more than on anything installed: a busy-polling
# process held off its core for longer than its peers' connections wait fails them
# (docs/reliability.md, "A busy machine"). A load average shows other runnable work, but not the
# time the hypervisor gives to other machines (steal), which starves a process just the same.
#
#   scripts/machine-state.sh            print CPUs, load, steal and busy time over 2 s, and what
#                                       earlier runs left (processes, DPDK runtime directories,
#                                       network namespaces)
#   scripts/machine-state.sh --clean    also end what earlier test runs left: etwire, ovsdb-server
#                                       and ovs-vswitchd processes, DPDK runtime directories of
#                                       processes gone, etwire's network namespaces
#
# .ci/run calls it with --clean before the tests, so a CI run on a machine used before starts as
# on a fresh one, and again after them, so a failure can be held against what the machine gave.
set -uo pipefail
clean=0
case "${1:-}" in
  --clean) clean=1 ;;
  "") ;;
  -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "machine-state.sh: unknown option $1 (try --help)" >&2; exit 2 ;;
esac

# cpu  user nice system idle iowait irq softirq steal ...
cpu_times() { awk '/^cpu /{print $2+$3+$4+$7+$8, $5+$6, $9}' /proc/stat; }
read -r busy0 idle0 steal0 < <(cpu_times)
sleep 2
read -r busy1 idle1 steal1 < <(cpu_times)
total=$(((busy1 - busy0) + (idle1 - idle0) + (steal1 - steal0)))
((total > 0)) || total=1
echo "machine: $(nproc) CPUs; load average $(cut -d' ' -f1-3 /proc/loadavg);" \
  "over 2 s busy $((100 * (busy1 - busy0) / total)) %, stolen by the hypervisor" \
  "$((100 * (steal1 - steal0) / total)) %"

leftover=$(pgrep -a -x 'etwire|ovsdb-server|ovs-vswitchd|ovs-vswitchd-dpdk|orted' 2>/dev/null)
[[ -n $leftover ]] && echo "machine: processes earlier runs left:" && echo "$leftover" | sed 's/^/  /'
stale_dirs=()
for dir in /var/run/dpdk/etwire-*; do
  [[ -d $dir ]] || continue
  [[ -d /proc/${dir##*-} ]] || stale_dirs+=("$dir")
done
((${#stale_dirs[@]})) && echo "machine: ${#stale_dirs[@]} DPDK runtime directories of processes gone"
namespaces=$(ip netns list 2>/dev/null | awk '$1 ~ /^etwire/ {print $1}')
[[ -n $namespaces ]] && echo "machine: network namespaces earlier runs left: $(echo $namespaces)"

if ((clean)); then
  [[ -n $leftover ]] && pkill -KILL -x 'etwire|ovsdb-server|ovs-vswitchd|ovs-vswitchd-dpdk' 2>/dev/null
  ((${#stale_dirs[@]})) && rm -rf "${stale_dirs[@]}"
  for ns in $namespaces; do ip netns del "$ns" 2>/dev/null; done
  [[ -n $leftover || ${#stale_dirs[@]} -gt 0 || -n $namespaces ]] && echo "machine: cleaned"
fi
exit 0
