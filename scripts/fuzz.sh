#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz in build/fuzz (clang, ASan+UBSan), writes their seed
# corpora and runs every target for SECONDS (default 60). Prints per target the executions run,
# the coverage (cov and ft from libFuzzer's last status line) and any input it found (crash, leak,
# timeout, out of memory). Exits 1 when any target found something. docs/reliability.md.
#
#   scripts/fuzz.sh [SECONDS]        all targets
#   scripts/fuzz.sh SECONDS TARGET   one target (trace, trace_binary, config, frame, ...)
#   scripts/fuzz.sh --runs N [TARGET]  a campaign: N executions per target, however long it takes
#
# ASan records no allocation stacks here (malloc_context_size=0, a fifth of the time of the
# allocation-heavy targets); replaying a finding (build/fuzz/tests/fuzz/fuzz_TARGET FILE) prints
# them in full. Set ASAN_OPTIONS to change that.
#
# Seeds go to build/fuzz/corpus/TARGET (what libFuzzer finds is added there too); inputs that
# made a target fail go to build/fuzz/findings/TARGET. Synthetic traces come from `etwire synth`
# of build/release (run scripts/setup.sh first, or set ETWIRE=path/to/etwire); upstream traces
# from ../shared/traces/upstream when it is there.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
runs=""
if [[ ${1:-} == --runs ]]; then
  runs=${2:-}
  [[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "fuzz.sh: --runs needs a positive whole number" >&2; exit 2; }
  seconds=0
  only=${3:-}
else
  seconds=${1:-60}
  only=${2:-}
  [[ $seconds =~ ^[0-9]+$ ]] || { echo "fuzz.sh: SECONDS must be a whole number" >&2; exit 2; }
fi
export ASAN_OPTIONS=${ASAN_OPTIONS:-malloc_context_size=0}
build="$root/build/fuzz"
targets=(trace trace_binary trace_gzip trace_feeder_json trace_jsonizer_json comm_groups config
         infragraph infragraph_import frame quantities summary_json faults nccl_graph capture
         device_profile)
if [[ -n $only ]]; then
  [[ " ${targets[*]} " == *" $only "* ]] || { echo "fuzz.sh: no target $only" >&2; exit 2; }
  targets=("$only")
fi

# Longest input per target: a little above the largest seed worth keeping whole, since longer
# inputs make every execution slower without reaching new code.
declare -A max_len=(
  [trace]=65536 [trace_binary]=65536 [trace_gzip]=65536 [trace_feeder_json]=65536
  [trace_jsonizer_json]=65536 [comm_groups]=8192 [config]=32768 [infragraph]=16384
  [infragraph_import]=16384 [frame]=9216 [quantities]=64 [summary_json]=65536 [faults]=8192
  [nccl_graph]=16384 [capture]=16384 [device_profile]=4096)

if ! command -v clang++ >/dev/null; then
  echo "fuzz.sh: clang++ is missing (Debian packages clang and libclang-rt-14-dev; scripts/setup.sh --tests installs them)" >&2
  exit 1
fi

echo "== Fuzz build (build/fuzz)"
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  export CCACHE_BASEDIR="$root" CCACHE_NOHASHDIR=1
fi
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
  -DETWIRE_FUZZ=ON -DETWIRE_BUILD_TESTS=OFF -DETWIRE_BUILD_BENCH=OFF "${launcher[@]}" >/dev/null
cmake --build "$build" -j "$(nproc 2>/dev/null || echo 2)" --target etwire_fuzz_all

echo "== Seed corpora (build/fuzz/corpus)"
corpus="$build/corpus"
for t in "${targets[@]}"; do mkdir -p "$corpus/$t"; done
seed() {  # seed TARGET FILE [NAME]: one seed, unless the target is not being run
  # cat, not cp: upstream files are read-only, and a copy keeping that could not be replaced.
  [[ -d $corpus/$1 ]] && cat "$2" >"$corpus/$1/${3:-$(basename "$2")}"
  return 0
}
for f in "$root"/configs/*.yaml; do seed config "$f"; done
# The InfraGraph files the tests import (configs/ has none of its own).
for f in "$root"/tests/cli/data/*.xml; do seed nccl_graph "$f"; done
for f in "$root"/tests/control/configs/infragraph/*; do
  seed infragraph "$f"
  seed infragraph_import "$f"
done
"$build/tests/fuzz/make_frame_seeds" "$corpus/frame" >/dev/null 2>&1 || [[ ! -d $corpus/frame ]]
# Only when the quantities target runs: the shell reports a redirection to a missing folder
# itself, whatever the command's own stderr.
if [[ -d $corpus/quantities ]]; then
  for q in 0 1.5us 250ns "2 ms" 3s 4KiB 1.5GiB 9000 64KB 100Gbps 25Gb/s "400 Mbps"; do
    printf '%s' "$q" > "$corpus/quantities/$(printf '%s' "$q" | tr -c 'A-Za-z0-9.' _)"
  done
fi

etwire=${ETWIRE:-$root/build/release/etwire}
synth="$build/synth"
if [[ -x $etwire ]]; then
  rm -rf "$synth" && mkdir -p "$synth"
  for fmt in et et.gz json; do
    "$etwire" synth microbench -c allreduce -b 64KiB -n 2 -i 2 --format "$fmt" \
      -o "$synth/micro_${fmt//./_}" >/dev/null
  done
  "$etwire" synth graph -N 40 -n 2 --format et -o "$synth/graph" >/dev/null
  for f in "$synth"/*; do
    case "$f" in
      *.et.gz) seed trace_gzip "$f"; seed trace "$f" ;;
      *.et) seed trace_binary "$f"; seed trace "$f" ;;
      *.json) seed trace_feeder_json "$f"; seed trace "$f" ;;
    esac
  done
else
  echo "fuzz.sh: no etwire at $etwire (scripts/setup.sh builds it); no synthetic trace seeds"
fi

upstream="$root/../shared/traces/upstream"
if [[ -d $upstream ]]; then
  # A few small files of each kind: seeds need to show the formats, not be many.
  while IFS= read -r f; do
    name=$(printf '%s' "${f#"$upstream"/}" | tr / _)
    case "$f" in
      *comm_group*.json) seed comm_groups "$f" "$name" ;;
      *.json) seed trace_feeder_json "$f" "$name"; seed trace "$f" "$name" ;;
      *.et) seed trace_binary "$f" "$name"; seed trace "$f" "$name" ;;
    esac
  done < <(for pattern in '*.et' '*comm_group*.json' '*.json'; do
             find "$upstream" -type f -name "$pattern" -size -64k | sort | head -12
           done | sort -u)
fi
for t in "${targets[@]}"; do
  printf '%-20s %5d inputs (seeds and earlier runs)\n' "$t" \
    "$(find "$corpus/$t" -mindepth 1 -maxdepth 1 | wc -l)"
done

if [[ -n $runs ]]; then
  budget=(-runs="$runs")
  echo "== Fuzzing, $runs executions per target"
else
  budget=(-max_total_time="$seconds")
  echo "== Fuzzing, ${seconds} s per target"
fi
status=0
summary=()
for t in "${targets[@]}"; do
  findings="$build/findings/$t"
  log="$build/logs/$t.log"
  mkdir -p "$findings" "$(dirname "$log")"
  rm -f "$findings"/*
  started=$SECONDS
  set +e
  # The checked-in regression inputs seed too: libFuzzer reads the second folder, never writes it.
  "$build/tests/fuzz/fuzz_$t" "${budget[@]}" -max_len="${max_len[$t]}" \
    -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 -artifact_prefix="$findings/" \
    "$corpus/$t" "$root/tests/fuzz_regressions/$t" >"$log" 2>&1
  rc=$?
  set -e
  took=$((SECONDS - started))
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  cov=$(grep -Eo 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -1)
  found=$(find "$findings" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)
  line=$(printf '%-20s %6ss  execs %10s  %-22s findings %d' "$t" "$took" "${execs:-?}" \
    "${cov:-cov: ? ft: ?}" "$found")
  echo "$line"
  summary+=("$line")
  if ((rc != 0 || found > 0)); then
    status=1
    echo "   exit $rc; log: $log" >&2
    for f in "$findings"/*; do [[ -e $f ]] && echo "   found: $f" >&2; done
    grep -m1 -E 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error' "$log" >&2 || true
  fi
done

echo "== Summary"
printf '%s\n' "${summary[@]}"
exit $status
