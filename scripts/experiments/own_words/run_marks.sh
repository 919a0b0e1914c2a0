#!/usr/bin/env bash
# "A lawyer's marks on the first page" (docs/experiments/ranking.md): the shipped CV command with
# --marks-study, ACORD's three wordings trained on and the 27 development writers (own_a-own_aa)
# scored, seeds 42 and 1. Run from anywhere after `cargo build --release`; reports go to OUT
# (default scripts/experiments/own_words/runs/marks).
set -euo pipefail
cd "$(dirname "$0")/../../.."
OUT=${1:-scripts/experiments/own_words/runs/marks}
D=../shared/data/acord
W=scripts/experiments/own_words
mkdir -p "$OUT"
writers=()
for x in a b c d e f g h i j k l m n o p q r s t u v w x y z aa; do
  writers+=(--queries "$W/queries_own_$x.jsonl")
done
for seed in 42 1; do
  target/release/precedent train --corpus $D/corpus.jsonl \
    --queries $D/queries.jsonl --queries $D/queries_medium.jsonl --queries $D/queries_long.jsonl \
    "${writers[@]}" \
    --qrels $D/qrels/train.tsv --qrels $D/qrels/valid.tsv --cv 5 \
    --without-rule inclusion --without-rule damages-waiver \
    --cuad ../shared/data/cuad --seed $seed --train-wordings short,medium,long --marks-study \
    --json-out "$OUT/seed${seed}.json" > "$OUT/seed${seed}.txt"
done
