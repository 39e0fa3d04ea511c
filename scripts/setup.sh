#!/usr/bin/env bash
# Installs etwire's build dependencies from Debian 12 packages (only what is missing) and builds
# etwire. Safe to run again: it installs nothing that is already there and rebuilds incrementally.
#
#   scripts/setup.sh               Release build in build/release (binary: build/release/etwire)
#   scripts/setup.sh --sanitize    ASan+UBSan build in build/asan
#   scripts/setup.sh --no-build    install packages only
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mode=release
build=1
for arg in "$@"; do
  case "$arg" in
    --sanitize) mode=asan ;;
    --no-build) build=0 ;;
    -h|--help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "setup.sh: unknown option $arg (try --help)" >&2; exit 2 ;;
  esac
done

packages=(
  build-essential cmake ninja-build pkg-config git python3
  # Rebuilds (the ASan pass, a second CI run on the same machine) reuse compiled objects.
  ccache
  libprotobuf-dev protobuf-compiler zlib1g-dev
  libcli11-dev libspdlog-dev libfmt-dev nlohmann-json3-dev libyaml-cpp-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  prometheus-cpp-dev
  # The Pushgateway client (outputs/telemetry/pushgateway.h: prometheus-cpp's has no timeout).
  libcurl4-openssl-dev
  # The telemetry tests scrape a run with a real Prometheus and push to a real Pushgateway.
  prometheus prometheus-pushgateway
  # The DPDK backend (libdpdk's pkg-config file requires libpcap's); its tests decode frames with
  # tshark and check ICRCs with scapy, and make a veth pair in a network namespace.
  dpdk dpdk-dev libdpdk-dev libpcap-dev tshark python3-scapy iproute2
  # Capture files are pcapng, which only Wireshark's libwiretap writes on Debian 12 (libpcap 1.10
  # writes pcap); its headers include glib's.
  libwiretap-dev libwsutil-dev libglib2.0-dev
  # A device under test with RED/ECN (tests/dut/ns3/red_router.cc): an ns-3 router between two
  # veths, whose checksum offload ethtool turns off.
  libns3-dev ethtool
  # RDMA NICs through libibverbs (rdma-core).
  libibverbs-dev
  # One run across several emulator processes, started by mpirun (Open MPI).
  openmpi-bin libopenmpi-dev
  # `etwire report` embeds Chart.js in the binary; its test renders the report in headless Chromium.
  libjs-chart.js chromium
  # scripts/fuzz.sh builds the fuzz targets with clang's libFuzzer (-fsanitize=fuzzer), whose
  # runtime is in compiler-rt.
  clang libclang-rt-14-dev
  # A device under test for tests/dut: Open vSwitch with its DPDK datapath
  # (/usr/lib/openvswitch-switch-dpdk/ovs-vswitchd-dpdk), started by the test in a directory of
  # its own, never as the system's service.
  openvswitch-switch-dpdk
)

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
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}"
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
if [[ $mode == asan ]]; then
  cmake -S "$root" -B "$root/build/asan" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DETWIRE_SANITIZE=ON -DETWIRE_BUILD_BENCH=OFF "${launcher[@]}" >/dev/null
  cmake --build "$root/build/asan" -j "$jobs"
else
  cmake -S "$root" -B "$root/build/release" -G Ninja -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" >/dev/null
  cmake --build "$root/build/release" -j "$jobs"
fi
