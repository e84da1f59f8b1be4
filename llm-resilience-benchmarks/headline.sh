#!/usr/bin/env bash
# The headline figures in one run: JMH gatewaySuccess, LoopbackLoad (both like-for-like pairs) and
# PeerComparison back to back, then one Markdown table of each figure's median and min-max over its
# passes, with the load average at the start and end of each part.
#
#   llm-resilience-benchmarks/headline.sh [path/to/benchmarks.jar]
#
# Builds nothing: the jar defaults to llm-resilience-benchmarks/target/benchmarks.jar (see
# BENCHMARKS.md for the build). A pass of JMH is a fork; a pass of LoopbackLoad and PeerComparison
# is a round, in which every side runs once, in an order that rotates from round to round.
# Settings, as environment variables (defaults in brackets): FORKS [8], JMH_WARMUPS [5],
# JMH_ITERATIONS [5], JMH_SECONDS [2] (per iteration), ROUNDS [10] (per concurrency, for both
# LoopbackLoad and PeerComparison), ROUND_MILLIS [2000] (per side and round), LOOPBACK_WARMUP_MILLIS
# [15000] and PEER_WARMUP_MILLIS [8000] (per side and concurrency), OUT
# [llm-resilience-benchmarks/target/headline] (the raw results and table.md).
set -euo pipefail

JAR=${1:-llm-resilience-benchmarks/target/benchmarks.jar}
FORKS=${FORKS:-8}
JMH_WARMUPS=${JMH_WARMUPS:-5}
JMH_ITERATIONS=${JMH_ITERATIONS:-5}
JMH_SECONDS=${JMH_SECONDS:-2}
ROUNDS=${ROUNDS:-10}
ROUND_MILLIS=${ROUND_MILLIS:-2000}
LOOPBACK_WARMUP_MILLIS=${LOOPBACK_WARMUP_MILLIS:-15000}
PEER_WARMUP_MILLIS=${PEER_WARMUP_MILLIS:-8000}
OUT=${OUT:-llm-resilience-benchmarks/target/headline}

# The like-for-like pairs (raw with gateway-json, raw-sse with gateway) and the five peers
LOOPBACK_SIDES=raw,gateway,gateway-json,raw-sse
LOOPBACK_COUNT=4
PEER_COUNT=5

if [[ ! -f "$JAR" ]]; then
  echo "No jar at $JAR: build it first (BENCHMARKS.md) or pass its path" >&2
  exit 2
fi
for value in "$FORKS" "$JMH_WARMUPS" "$JMH_ITERATIONS" "$JMH_SECONDS" "$ROUNDS" "$ROUND_MILLIS" \
    "$LOOPBACK_WARMUP_MILLIS" "$PEER_WARMUP_MILLIS"; do
  if [[ ! "$value" =~ ^[0-9]+$ ]]; then
    echo "Settings must be whole numbers, got '$value'" >&2
    exit 2
  fi
done
if (( FORKS < 5 || ROUNDS < 5 )); then
  echo "note: FORKS=$FORKS, ROUNDS=$ROUNDS: fewer than 5 passes, a trial run, not a headline figure" >&2
fi
mkdir -p "$OUT"

# Expected duration: JMH about 4 s per fork to start and set up; the mains about 10 s to start
jmh_s=$(( FORKS * (4 + (JMH_WARMUPS + JMH_ITERATIONS) * JMH_SECONDS) ))
loop_s=$(( 10 + (2 * LOOPBACK_COUNT * LOOPBACK_WARMUP_MILLIS + 2 * ROUNDS * LOOPBACK_COUNT * ROUND_MILLIS) / 1000 ))
peer_s=$(( 10 + (2 * PEER_COUNT * PEER_WARMUP_MILLIS + 2 * ROUNDS * PEER_COUNT * ROUND_MILLIS) / 1000 ))
total_s=$(( jmh_s + loop_s + peer_s ))
printf 'headline: expected %d min %02d s (JMH %d s, LoopbackLoad %d s, PeerComparison %d s), jar %s\n' \
  $(( total_s / 60 )) $(( total_s % 60 )) "$jmh_s" "$loop_s" "$peer_s" "$JAR"
echo "headline: started $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg), results in $OUT"

LOADS="$OUT/loads.tsv"
: > "$LOADS"
load() { printf '%s\t%s\t%s\n' "$1" "$2" "$(cut -d' ' -f1 /proc/loadavg)" >> "$LOADS"; }
began=$(date +%s)

load jmh start
java -jar "$JAR" 'GatewayOverheadBenchmark.gatewaySuccess$' -f "$FORKS" -wi "$JMH_WARMUPS" -i "$JMH_ITERATIONS" \
  -w "${JMH_SECONDS}s" -r "${JMH_SECONDS}s" -prof gc -rf json -rff "$OUT/jmh.json" > "$OUT/jmh.log"
load jmh end
echo "headline: JMH done after $(( $(date +%s) - began )) s"

load loopback start
java -Drounds="$ROUNDS" -DroundMillis="$ROUND_MILLIS" -DwarmupMillis="$LOOPBACK_WARMUP_MILLIS" \
  -Dsides="$LOOPBACK_SIDES" -Dsummary="$OUT/loopback.tsv" \
  -cp "$JAR" dev.llmresilience.benchmarks.LoopbackLoad > "$OUT/loopback.log"
load loopback end
echo "headline: LoopbackLoad done after $(( $(date +%s) - began )) s"

load peers start
java -Drounds="$ROUNDS" -DroundMillis="$ROUND_MILLIS" -DwarmupMillis="$PEER_WARMUP_MILLIS" \
  -Dsummary="$OUT/peers.tsv" \
  -cp "$JAR" dev.llmresilience.benchmarks.PeerComparison > "$OUT/peers.log"
load peers end
echo "headline: PeerComparison done after $(( $(date +%s) - began )) s"
echo

echo "Headline run $(date -u +%FT%TZ), $(( $(date +%s) - began )) s, jar $JAR; JMH: $FORKS forks of" \
  "$JMH_WARMUPS+$JMH_ITERATIONS iterations of $JMH_SECONDS s; LoopbackLoad and PeerComparison: $ROUNDS rounds" \
  "of $ROUND_MILLIS ms per side and concurrency. A pass: a JMH fork, or a round in which every side ran once," \
  "the order rotated round by round; ratios and added p50 are taken within a round." | tee "$OUT/table.md.head"
echo
java -cp "$JAR" dev.llmresilience.benchmarks.HeadlineTable "$OUT/jmh.json" "$OUT/loopback.tsv" "$OUT/peers.tsv" \
  "$LOADS" "$OUT/table.body.md"
{ cat "$OUT/table.md.head"; echo; cat "$OUT/table.body.md"; } > "$OUT/table.md"
rm -f "$OUT/table.md.head" "$OUT/table.body.md"
echo
echo "headline: table in $OUT/table.md"
