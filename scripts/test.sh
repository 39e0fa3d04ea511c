#!/usr/bin/env bash
# Builds etwire and runs the whole test suite twice: a Release build, then an ASan+UBSan build;
# then runs every fuzz target for 20 s (scripts/fuzz.sh, in build/fuzz).
# Installs missing Debian packages first, the test tools included (setup.sh --tests).
#
#   scripts/test.sh            both builds and the fuzz targets
#   scripts/test.sh --quick    Release build only, no fuzzing
#   extra arguments after -- go to ctest (e.g. -- -R Feeder)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
quick=0
ctest_args=()
while (($#)); do
  case "$1" in
    --quick) quick=1 ;;
    --) shift; ctest_args=("$@"); break ;;
    -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "test.sh: unknown option $1 (try --help)" >&2; exit 2 ;;
  esac
  shift
done

jobs=$(nproc 2>/dev/null || echo 2)

echo "== Release build and tests"
"$root/scripts/setup.sh" --tests
ctest --test-dir "$root/build/release" --output-on-failure -j "$jobs" "${ctest_args[@]}"

if ((quick)); then exit 0; fi

echo "== ASan+UBSan build and tests"
"$root/scripts/setup.sh" --sanitize
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1} \
UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
  ctest --test-dir "$root/build/asan" --output-on-failure -j "$jobs" "${ctest_args[@]}"

# A short pass of every fuzz target from its seeds and regression inputs: about 3 minutes, enough
# to catch a parser change that crashes on what the seeds lead to (docs/reliability.md).
echo "== Fuzz targets, 20 s each"
"$root/scripts/fuzz.sh" 20
