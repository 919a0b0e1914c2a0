#!/usr/bin/env bash
# "The query rules and spelling correction on three writers nobody read"
# (docs/experiments/ranking.md): the shipped CV command with own_v, own_w and own_x scored
# (never trained on), seeds 42 and 1, with --rule-ablation, then with --no-spelling.
# Run from anywhere after `cargo build --release`; reports go to OUT (default runs/vwx).
set -euo pipefail
cd "$(dirname "$0")/../../.."
OUT=${1:-scripts/experiments/own_words/runs/vwx}
D=../shared/data/acord
W=scripts/experiments/own_words
mkdir -p "$OUT"
for arm in ablation no-spelling; do
  for seed in 42 1; do
    extra=(--rule-ablation)
    [ "$arm" = no-spelling ] && extra=(--no-spelling)
    target/release/precedent train --corpus $D/corpus.jsonl \
      --queries $D/queries.jsonl --queries $D/queries_medium.jsonl --queries $D/queries_long.jsonl \
      --queries $W/queries_own_v.jsonl --queries $W/queries_own_w.jsonl --queries $W/queries_own_x.jsonl \
      --qrels $D/qrels/train.tsv --qrels $D/qrels/valid.tsv --cv 5 --without-rule inclusion \
      --cuad ../shared/data/cuad --seed $seed --train-wordings short,medium,long "${extra[@]}" \
      --json-out "$OUT/${arm}_seed${seed}.json" > "$OUT/${arm}_seed${seed}.txt"
  done
done
