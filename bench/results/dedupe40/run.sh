#!/bin/sh
# Issue 40 (kafka40): the three de-duplication lookups against the Kafka engine, interleaved rounds.
# Usage: sh bench/results/dedupe40/run.sh ROUNDS, at commit fb76b47 (INGEST_DEDUPE_LOOKUP was removed by 58f39d0;
# on later code every variant runs the in-turn lookup).
cd "$(dirname "$0")/../../.."
rounds=${1:-5}
variants="in-turn beside-insert in-turn-literal"
for r in $(seq 1 "$rounds"); do
  # Each round starts with a different variant, so none always runs first (or last) in the machine's drift.
  set -- $variants
  case $((r % 3)) in 1) order="$1 $2 $3";; 2) order="$2 $3 $1";; 0) order="$3 $1 $2";; esac
  for v in $order; do
    echo "=== round $r $v $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
    INGEST_DEDUPE_LOOKUP=$v npx tsx bench/kafka-ingest.ts --count 100000 --rate 10000 --seconds 5 --tag d40-$v-r$r 2>&1 | grep -v '"level"'
  done
done
