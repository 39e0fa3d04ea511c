#!/bin/bash
# Builds dpdk-testpmd, the reference bench_dpdk measures its transmit loop against, from the
# Debian source of the installed DPDK and against the installed libdpdk: Debian 12's dpdk package
# does not ship testpmd. Its mlx5 commands are left out (they need the mlx5 driver's own headers).
#
#   bench/build-testpmd.sh [OUT_DIR]      (default build/testpmd)
#   PATH=$PWD/build/testpmd:$PATH build/release/bench/bench_dpdk
#
# The source comes from the Debian archive ($DEBIAN_MIRROR, default http://deb.debian.org/debian)
# and is checked against the SHA-256 the archive's source index gives for it.
set -euo pipefail

out=$(realpath -m "${1:-build/testpmd}")
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
version=$(dpkg-query -W -f '${Version}' libdpdk-dev 2>/dev/null) ||
  { echo "build-testpmd: libdpdk-dev is not installed (scripts/setup.sh installs it)" >&2; exit 1; }
upstream=${version%%-*}
tarball=dpdk_${upstream}.orig.tar.xz
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "build-testpmd: DPDK $upstream (libdpdk-dev $version) from $mirror"
curl -fsS "$mirror/dists/bookworm/main/source/Sources.xz" | xz -d > "$work/Sources"
expected=$(awk -v f="$tarball" '$3 == f && length($1) == 64 { print $1; exit }' "$work/Sources")
[ -n "$expected" ] || { echo "build-testpmd: $tarball is not in the archive's source index" >&2; exit 1; }
curl -fsS -o "$work/$tarball" "$mirror/pool/main/d/dpdk/$tarball"
echo "$expected  $work/$tarball" | sha256sum -c --quiet ||
  { echo "build-testpmd: $tarball does not match the archive's SHA-256" >&2; exit 1; }
tar xJf "$work/$tarball" -C "$work"

src=$(echo "$work"/dpdk*/app/test-pmd)
# The sources testpmd's meson.build lists for Linux with the libraries Debian builds.
sources="5tswap.c bpf_cmd.c cmd_flex_item.c cmdline.c cmdline_flow.c cmdline_mtr.c cmdline_tm.c
  config.c csumonly.c flowgen.c icmpecho.c ieee1588fwd.c iofwd.c macfwd.c macswap.c noisy_vnf.c
  parameters.c rxonly.c shared_rxq_fwd.c testpmd.c txonly.c util.c"
sed -i 's/^#ifdef RTE_NET_MLX5$/#if 0 \/* mlx5 commands left out *\//' "$src/testpmd.c"
mkdir -p "$out"
(cd "$src" && gcc -O3 -DALLOW_EXPERIMENTAL_API -DALLOW_INTERNAL_API -Wno-deprecated-declarations \
  -I. -I../../lib/eal/linux/include $(pkg-config --cflags libdpdk) $sources \
  -o "$out/dpdk-testpmd" $(pkg-config --libs libdpdk) \
  -lrte_net_ixgbe -lrte_net_bnxt -lrte_net_i40e -lrte_net_bond -lrte_net_dpaa -ljansson -lm \
  -lpthread) 2> "$work/build.log" || { cat "$work/build.log" >&2; exit 1; }
echo "build-testpmd: $out/dpdk-testpmd"
