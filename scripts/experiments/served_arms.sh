#!/usr/bin/env bash
# The shipped ACORD CV command (first row of BENCHMARKS.md) for two arms at fold seeds 42 and 1,
# read on its served line ("learned as served") by served_arms.py: `shipped`, and ARM, the same
# binary with the experiment switch VAR=1 (a variable its feature.patch reads). Writers'
# rewordings are scored and never trained on.
#
#   PRECEDENT_BIN=BIN bash scripts/experiments/served_arms.sh OUT ARM VAR "own_at own_au ..."
#
# Used by "Clause types a request asks for, read from the queries it votes for" (ARM inherited,
# VAR PRECEDENT_EXPERIMENT_INHERITED_TYPES) and "The 4- and 5-star clauses of the queries a
# request votes for, as served candidates" (ARM memory, VAR
# PRECEDENT_EXPERIMENT_MEMORY_CANDIDATES) and "The served demotion as far as the list goes" (ARM
# all, VAR PRECEDENT_EXPERIMENT_SERVED_DEMOTION_ALL) in docs/experiments/ranking.md.
set -euo pipefail
OUT=$1; ARM=$2; VAR=$3; WRITERS=$4
BIN=${PRECEDENT_BIN:-target/release/precedent}; A=../shared/data/acord; W=scripts/experiments/own_words
mkdir -p "$OUT"
Q=(); for w in $WRITERS; do Q+=(--queries "$W/queries_$w.jsonl"); done
for seed in 42 1; do
  for arm in shipped "$ARM"; do
    if [ "$arm" = "$ARM" ]; then export "$VAR=1"; else unset "$VAR"; fi
    "$BIN" train --corpus $A/corpus.jsonl --queries $A/queries.jsonl --queries $A/queries_medium.jsonl \
      --queries $A/queries_long.jsonl "${Q[@]}" --train-wordings short,medium,long \
      --qrels $A/qrels/train.tsv --qrels $A/qrels/valid.tsv --cv 5 --without-rule inclusion \
      --without-rule damages-waiver --cuad ../shared/data/cuad --seed $seed \
      --json-out "$OUT/${arm}_seed$seed.json" --quiet > "$OUT/${arm}_seed$seed.txt" 2> "$OUT/${arm}_seed$seed.err"
    echo "$arm seed $seed done $(date +%T)"
  done
  unset "$VAR"
done
