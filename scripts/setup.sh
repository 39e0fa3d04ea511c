#!/usr/bin/env bash
# Installs what etwire needs from Debian 12 packages (only what is missing) and builds it. Two
# levels: by default what building and running etwire needs, and the etwire binary alone; with
# --tests also the tools the test suite drives (a real Prometheus, tshark, ns-3, Open vSwitch,
# headless Chromium, clang's libFuzzer) and every target, tests and benchmarks included. Safe to
# run again: it installs nothing that is already there and rebuilds incrementally.
#
#   scripts/setup.sh               packages to build and run; the binary (build/release/etwire)
#   scripts/setup.sh --tests       and the test tools; everything in build/release
#   scripts/setup.sh --sanitize    as --tests, an ASan+UBSan build in build/asan
#   scripts/setup.sh --no-build    install packages only (with --tests: the test tools too)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mode=release
build=1
tests=0
for arg in "$@"; do
  case "$arg" in
    --tests) tests=1 ;;
    --sanitize) mode=asan; tests=1 ;;
    --no-build) build=0 ;;
    -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "setup.sh: unknown option $arg (try --help)" >&2; exit 2 ;;
  esac
done

# What building and running etwire needs (each a build dependency; its libraries are what the
# binary links).
packages=(
  build-essential cmake ninja-build pkg-config
  # Rebuilds (the ASan pass, a second CI run on the same machine) reuse compiled objects.
  ccache
  libprotobuf-dev protobuf-compiler zlib1g-dev
  libcli11-dev libspdlog-dev libfmt-dev nlohmann-json3-dev libyaml-cpp-dev libpugixml-dev
  prometheus-cpp-dev
  # The Pushgateway client (outputs/telemetry/pushgateway.h: prometheus-cpp's has no timeout).
  libcurl4-openssl-dev
  # The DPDK backend, its drivers (ring, null, af_packet, memif, pcap ...) with it; libdpdk's
  # pkg-config file requires libpcap's.
  libdpdk-dev libpcap-dev
  # Capture files are pcapng, which only Wireshark's libwiretap writes on Debian 12 (libpcap 1.10
  # writes pcap); its headers include glib's.
  libwiretap-dev libwsutil-dev libglib2.0-dev
  # RDMA NICs through libibverbs (rdma-core).
  libibverbs-dev
  # One run across several emulator processes, started by mpirun (Open MPI; the -dev package
  # brings mpirun).
  libopenmpi-dev
  # `etwire report` embeds Chart.js in the binary.
  libjs-chart.js
)
# What the test suite drives besides etwire.
test_packages=(
  python3 libgtest-dev libgmock-dev
  # The telemetry tests scrape a run with a real Prometheus and push to a real Pushgateway.
  prometheus prometheus-pushgateway
  # The DPDK tests decode frames with tshark, check ICRCs with scapy, and make veth pairs in
  # network namespaces.
  tshark python3-scapy iproute2
  # A device under test with RED/ECN (tests/dut/ns3/red_router.cc): an ns-3 router between two
  # veths, whose checksum offload ethtool turns off.
  libns3-dev ethtool
  # The configuration schema's test validates configurations against it.
  python3-jsonschema python3-yaml
  # The report's test renders it in headless Chromium.
  chromium
  # scripts/fuzz.sh builds the fuzz targets with clang's libFuzzer (-fsanitize=fuzzer), whose
  # runtime is in compiler-rt.
  clang libclang-rt-14-dev
  # A device under test for tests/dut: Open vSwitch with its DPDK datapath
  # (/usr/lib/openvswitch-switch-dpdk/ovs-vswitchd-dpdk), started by the test in a directory of
  # its own, never as the system's service.
  openvswitch-switch-dpdk
)
((tests)) && packages+=("${test_packages[@]}")
# The services these packages bring: the tests start their own, on ports and in directories of
# their own; a lab host should not gain listeners on :9090 and :9091 or an Open vSwitch at boot.
services=(prometheus prometheus-pushgateway openvswitch-switch ovs-vswitchd ovsdb-server dpdk)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} > 0)); then
  if [[ $(id -u) -ne 0 ]]; then
    echo "setup.sh: missing packages: ${missing[*]}; run as root or install them first" >&2
    exit 1
  fi
  echo "setup.sh: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  # tshark's package asks whether non-root users may capture; they may not.
  echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections
  # Services whose packages this installs are neither started now (policy-rc.d: 101, "not
  # allowed") nor enabled at boot; one that was already there is left as it was.
  was_there=()
  for s in "${services[@]}"; do
    [[ -e /lib/systemd/system/$s.service || -e /etc/init.d/$s ]] && was_there+=("$s")
  done
  policy=/usr/sbin/policy-rc.d
  own_policy=0
  if [[ ! -e $policy ]]; then
    printf '#!/bin/sh\n# scripts/setup.sh of etwire, while it installs packages\nexit 101\n' >"$policy"
    chmod 755 "$policy"
    own_policy=1
    trap '((own_policy)) && rm -f "$policy"' EXIT
  fi
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}"
  for s in "${services[@]}"; do
    [[ " ${was_there[*]} " == *" $s "* ]] && continue
    [[ -e /lib/systemd/system/$s.service ]] && command -v systemctl >/dev/null || continue
    # --now fails where systemd is not running (a container): the links are removed all the same.
    systemctl disable --now "$s" >/dev/null 2>&1 || systemctl disable "$s" >/dev/null 2>&1 || continue
    echo "setup.sh: $s's service left disabled and stopped (etwire's tests start their own)"
  done
  if ((own_policy)); then
    rm -f "$policy"
    trap - EXIT
  fi
fi

((build)) || exit 0

jobs=$(nproc 2>/dev/null || echo 2)
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  # Paths relative to the checkout, and the build directory left out of debug builds' hashes, so
  # a fresh clone of the same sources (as CI makes) reuses what another checkout compiled.
  export CCACHE_BASEDIR="$root" CCACHE_NOHASHDIR=1
fi
# The Release build compiles etwire's sources in batches (ETWIRE_UNITY_BUILD, CMakeLists.txt), the
# ASan build a file at a time, so that CI builds both ways (a file missing an include compiles in
# a batch whose earlier file has it).
if [[ $mode == asan ]]; then
  cmake -S "$root" -B "$root/build/asan" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DETWIRE_SANITIZE=ON -DETWIRE_BUILD_BENCH=OFF -DETWIRE_UNITY_BUILD=OFF "${launcher[@]}" >/dev/null
  cmake --build "$root/build/asan" -j "$jobs"
elif ((tests)); then
  cmake -S "$root" -B "$root/build/release" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DETWIRE_BUILD_TESTS=ON -DETWIRE_BUILD_BENCH=ON "${launcher[@]}" >/dev/null
  cmake --build "$root/build/release" -j "$jobs"
else
  # The binary alone. A first configuration leaves the tests' targets (and GoogleTest) out until
  # --tests; one that has them already keeps them.
  options=(-DCMAKE_BUILD_TYPE=Release)
  [[ -e $root/build/release/CMakeCache.txt ]] ||
    options+=(-DETWIRE_BUILD_TESTS=OFF -DETWIRE_BUILD_BENCH=OFF)
  cmake -S "$root" -B "$root/build/release" -G Ninja "${options[@]}" "${launcher[@]}" >/dev/null
  cmake --build "$root/build/release" -j "$jobs" --target etwire
fi
