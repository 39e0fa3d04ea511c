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
