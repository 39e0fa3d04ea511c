#!/usr/bin/env bash
# scripts/check-layers.sh passes a tree whose code points down the layer order, and fails (naming
# the file and line) an include or a link that points up, and a code folder that is not a layer;
# one level down, the same between a layer's sub-layers. The real tree must pass too.
set -uo pipefail
source_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
check="$source_dir/scripts/check-layers.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0

fail() { echo "FAIL: $1"; failures=$((failures + 1)); }

# A two-layer tree: low/ below high/, high including and linking low.
make_tree() {
  rm -rf "$work/tree" && mkdir -p "$work/tree/low" "$work/tree/high" "$work/tree/tests"
  cd "$work/tree" || exit 1
  printf 'add_subdirectory(low)\nadd_subdirectory(high)\nif(ETWIRE_BUILD_TESTS)\nendif()\n' \
    >CMakeLists.txt
  printf 'add_library(etwire_low STATIC a.cc)\n' >low/CMakeLists.txt
  printf 'add_library(etwire_high STATIC b.cc)\ntarget_link_libraries(etwire_high PUBLIC etwire_low)\n' \
    >high/CMakeLists.txt
  printf '#pragma once\n' >low/a.h
  printf '#include "low/a.h"\n' >low/a.cc
  printf '#pragma once\n#include "low/a.h"\n' >high/b.h
  printf '#include "high/b.h"\n' >high/b.cc
  printf '#include "high/b.h"\n' >tests/t.cc  # tests sit above every layer
}

expect_pass() {
  local what=$1 out
  if ! out=$("$check" --root "$work/tree" 2>&1); then fail "$what: expected a pass, got: $out"; fi
}

expect_fail() {
  local what=$1 wanted=$2 out
  if out=$("$check" --root "$work/tree" 2>&1); then
    fail "$what: expected a failure, got a pass: $out"
  elif ! grep -qF -- "$wanted" <<<"$out"; then
    fail "$what: the message does not say \"$wanted\": $out"
  fi
}

make_tree
expect_pass "downward include and link"

make_tree
printf '#pragma once\n\n#include "high/b.h"\n' >low/a.h
expect_fail "upward include" 'low/a.h:3: includes high/ (layer high) from layer low'

make_tree
printf 'add_library(etwire_low STATIC a.cc)\ntarget_link_libraries(etwire_low PRIVATE etwire_high)\n' \
  >low/CMakeLists.txt
expect_fail "upward link" 'etwire_low (layer low) links etwire_high (layer high)'

make_tree
mkdir stray && printf 'int x;\n' >stray/x.cc
expect_fail "a code folder that is not a layer" 'stray/: holds C++ code but is not a layer'

# Sub-layers of high/: its root (where its first add_library stands), then mid/, then top/.
make_sub_tree() {
  make_tree
  mkdir -p high/mid high/top
  printf 'add_library(etwire_high STATIC b.cc)\nadd_subdirectory(mid)\nadd_subdirectory(top)\n' \
    >high/CMakeLists.txt
  printf 'target_sources(etwire_high PRIVATE m.cc)\n' >high/mid/CMakeLists.txt
  printf 'target_sources(etwire_high PRIVATE t.cc)\n' >high/top/CMakeLists.txt
  printf '#pragma once\n#include "high/b.h"\n' >high/mid/m.h
  printf '#include "high/mid/m.h"\n' >high/mid/m.cc
  printf '#pragma once\n#include "high/mid/m.h"\n#include "low/a.h"\n' >high/top/t.h
  printf '#include "high/top/t.h"\n' >high/top/t.cc
}

make_sub_tree
expect_pass "sub-layers including downward"

make_sub_tree
printf '#pragma once\n#include "high/top/t.h"\n' >high/mid/m.h
expect_fail "a sub-layer including one after it" \
  'high/mid/m.h:2: includes high/top/ from sub-layer high/mid/, which comes before it'

make_sub_tree
printf '#pragma once\n#include "high/mid/m.h"\n' >high/b.h
expect_fail "the root including a sub-layer after it" \
  'high/b.h:2: includes high/mid/ from sub-layer high/, which comes before it'

make_sub_tree
printf 'add_subdirectory(mid)\nadd_library(etwire_high STATIC b.cc)\nadd_subdirectory(top)\n' \
  >high/CMakeLists.txt
printf '#pragma once\n#include "high/mid/m.h"\n' >high/b.h
printf '#pragma once\n' >high/mid/m.h
expect_pass "a root placed after a sub-layer by its add_library"

make_sub_tree
mkdir high/stray && printf 'int y;\n' >high/stray/y.cc
expect_fail "a code subfolder the layer does not add" \
  'high/stray/: holds C++ code but is not a sub-layer of high/CMakeLists.txt'

if ! out=$("$check" --root "$source_dir" 2>&1); then fail "the source tree: $out"; fi

if ((failures)); then
  echo "$failures failed"
  exit 1
fi
echo "check-layers: every case behaves"
