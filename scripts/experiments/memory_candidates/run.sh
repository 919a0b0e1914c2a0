#!/usr/bin/env bash
# The 4- and 5-star clauses of the queries a request votes for, as served candidates
# (docs/experiments/ranking.md): the
# shipped CV command, shipped and memory arms (PRECEDENT_EXPERIMENT_MEMORY_CANDIDATES=1),
# seeds 42 and 1; score with score.py OUT.
#
#   PRECEDENT_BIN=BIN bash scripts/experiments/memory_candidates/run.sh OUT "own_at own_au ..."
set -euo pipefail
OUT=$1; WRITERS=$2
BIN=${PRECEDENT_BIN:-target/release/precedent}; A=../shared/data/acord; W=scripts/experiments/own_words; mkdir -p $OUT
Q=(); for w in $WRITERS; do Q+=(--queries $W/queries_$w.jsonl); done
for seed in 42 1; do
  for arm in shipped memory; do
    if [ $arm = memory ]; then export PRECEDENT_EXPERIMENT_MEMORY_CANDIDATES=1; else unset PRECEDENT_EXPERIMENT_MEMORY_CANDIDATES; fi
    $BIN train --corpus $A/corpus.jsonl --queries $A/queries.jsonl --queries $A/queries_medium.jsonl --queries $A/queries_long.jsonl \
      "${Q[@]}" --train-wordings short,medium,long \
      --qrels $A/qrels/train.tsv --qrels $A/qrels/valid.tsv --cv 5 --without-rule inclusion --without-rule damages-waiver \
      --cuad ../shared/data/cuad --seed $seed --json-out $OUT/${arm}_seed$seed.json --quiet > $OUT/${arm}_seed$seed.txt 2> $OUT/${arm}_seed$seed.err
    echo "$arm seed $seed done $(date +%T)"
  done
done
