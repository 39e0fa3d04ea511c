#!/usr/bin/env bash
# Runs the case study of docs/case-study-moe-mix.md: configs/case-study-moe-mix.yaml with each job
# alone, both jobs together, and together without DCQCN, without ECN marking and with NVIDIA's
# 100G guide thresholds; then prints the table of that page from the runs' result files.
#
#   scripts/case-study-moe-mix.sh [OUT_DIR] [etwire run options for every run, e.g. --set run.seed=2]
#
# ETWIRE names the binary (default build/release/etwire). Each run takes a few seconds.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
etwire=${ETWIRE:-$root/build/release/etwire}
out=${1:-results/case-study-moe-mix}
shift || true
config="$root/configs/case-study-moe-mix.yaml"

variants=(
  "ar-alone|workload.jobs[1].filter.node_types=[COMP_NODE]"
  "a2a-alone|workload.jobs[0].filter.node_types=[COMP_NODE]"
  "mixed|"
  "mixed-dcqcn-off|transport.dcqcn.enabled=false"
  "mixed-ecn-off|fabric.ecn.enabled=false"
  "mixed-ecn-150k-1500k|fabric.ecn.kmin=150KB fabric.ecn.kmax=1500KB"
)
for variant in "${variants[@]}"; do
  name=${variant%%|*}
  sets=()
  for assignment in ${variant#*|}; do sets+=(--set "$assignment"); done
  echo "running $name" >&2
  "$etwire" run "$config" --out "$out/$name" --no-progress --no-metrics "${sets[@]}" "$@" \
    >"$out.$name.log" 2>&1 || {
    echo "$name failed, see $out.$name.log" >&2
    exit 1
  }
  mv "$out.$name.log" "$out/$name/report.txt"
done

python3 - "$out" "${variants[@]%%|*}" <<'EOF'
import csv, json, statistics, sys

out, names = sys.argv[1], sys.argv[2:]
print("| run | all-reduce busbw per iteration, GB/s: mean | CV | min | max "
      "| all-to-all FCT, us: p50 | p99 | p99.9 | max | ECN marks | CNPs | PFC pauses | drops "
      "| last all-reduce / all-to-all end, ms |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for name in names:
    d = f"{out}/{name}"
    summary = json.load(open(f"{d}/summary.json"))
    rows = [r for r in csv.DictReader(open(f"{d}/collectives.csv")) if r["warmup"] == "false"]
    cells = [name]
    busbw = [float(r["busbw_GBps"]) for r in rows if r["type"] == "all_reduce"]
    if busbw:
        mean = statistics.mean(busbw)
        cells += [f"{mean:.2f}", f"{100 * statistics.pstdev(busbw) / mean:.1f} %",
                  f"{min(busbw):.2f}", f"{max(busbw):.2f}"]
    else:
        cells += ["-"] * 4
    fct = {f["type"]: f for f in summary["fct"]}.get("all_to_all")
    if fct:
        cells += [f"{fct[k] / 1e3:.1f}" for k in ("p50_ns", "p99_ns", "p999_ns", "max_ns")]
    else:
        cells += ["-"] * 4
    ports = summary["ports"]
    for key in ("ecn_marked_received", "cnps_received", "pfc_pauses_sent", "drops"):
        cells.append(str(sum(p[key] or 0 for p in ports)))
    ends = []
    for kind in ("all_reduce", "all_to_all"):
        times = [int(r["end_ns"]) for r in rows if r["type"] == kind]
        ends.append(f"{max(times) / 1e6:.2f}" if times else "-")
    cells.append(" / ".join(ends))
    print("| " + " | ".join(cells) + " |")
EOF
