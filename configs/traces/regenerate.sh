#!/bin/sh
# Regenerates the traces bundled with etwire (the README's default run uses them). A test checks
# that the bundled files are byte-identical to what this script writes.
#   ETWIRE=build/release/etwire OUT=configs/traces sh configs/traces/regenerate.sh
set -e
ETWIRE=${ETWIRE:-build/release/etwire}
OUT=${OUT:-$(dirname "$0")}

# 8 ranks, 4 iterations of: 200 us of compute, then a 1 MiB all-reduce on all ranks.
"$ETWIRE" synth microbench --collective all_reduce --bytes 1MiB --ranks 8 --iterations 4 \
  --compute-us 200 --out "$OUT/allreduce_8r/allreduce"

# The mixed run (configs/mixed-allreduce-alltoall.yaml, configs/alltoall-alone.yaml): a data-
# parallel job's large all-reduces sharing the fabric with an expert-parallel job's all-to-alls.
"$ETWIRE" synth microbench --collective all_reduce --bytes 32MiB --ranks 8 --iterations 4 \
  --compute-us 100 --out "$OUT/allreduce_32m_8r/allreduce"
"$ETWIRE" synth microbench --collective all_to_all --bytes 8MiB --ranks 8 --iterations 4 \
  --compute-us 100 --out "$OUT/alltoall_8r/alltoall"

# The case study (configs/case-study-moe-mix.yaml): both jobs on sixteen ranks, one collective per
# trace iteration, so that the configuration's iteration counts set how long each job runs.
"$ETWIRE" synth microbench --collective all_reduce --bytes 16MiB --ranks 16 --iterations 1 \
  --compute-us 100 --out "$OUT/allreduce_16m_16r/allreduce"
"$ETWIRE" synth microbench --collective all_to_all --bytes 4MiB --ranks 16 --iterations 1 \
  --compute-us 100 --out "$OUT/alltoall_4m_16r/alltoall"

# The load-balancing case study (configs/case-study-load-balancing.yaml): a 64-rank all-to-all,
# 64 KiB to each peer, one per trace iteration.
"$ETWIRE" synth microbench --collective all_to_all --bytes 4MiB --ranks 64 --iterations 1 \
  --compute-us 100 --out "$OUT/alltoall_4m_64r/alltoall"
