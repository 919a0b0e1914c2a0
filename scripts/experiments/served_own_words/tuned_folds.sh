#!/usr/bin/env bash
# Per fold of folds.py (DIR must hold its foldK_train.tsv / foldK_test.tsv): a bi-encoder tuned
# on the fold's training ratings, the whole ACORD library embedded with it, and hybrid's served
# runs for the held-out queries in each query file given ("A tuned dense retriever for what is
# served", docs/experiments/ranking.md). `eval` is given the encoder too (builds before the
# library's own model became the default rebuilt it with MiniLM without `--model`).
#   tuned_folds.sh DIR QUERY_FILE...
set -euo pipefail
cd "$(dirname "$0")/../../.."
DIR=${1:?usage: tuned_folds.sh DIR QUERY_FILE...}
shift
B=${PRECEDENT_BIN:-target/release/precedent}
D=../shared/data/acord
for k in 0 1 2 3 4; do
  [ -d "$DIR/encoder$k" ] || "$B" train-bi-encoder --corpus $D/corpus.jsonl --queries $D/queries.jsonl \
    --queries $D/queries_medium.jsonl --queries $D/queries_long.jsonl \
    --qrels "$DIR/fold${k}_train.tsv" --out "$DIR/encoder$k" --quiet
  [ -d "$DIR/library$k" ] || "$B" index --corpus $D/corpus.jsonl --index "$DIR/library$k" \
    --model "$DIR/encoder$k" --cache "$DIR/cache" --quiet
  for qf in "$@"; do
    name=$(basename "$qf" .jsonl)
    "$B" eval --corpus $D/corpus.jsonl --index "$DIR/library$k" --queries "$qf" \
      --qrels "$DIR/fold${k}_test.tsv" --protocol full --pipeline hybrid \
      --model "$DIR/encoder$k" --cache "$DIR/cache" \
      --run-out "$DIR/run${k}_${name}.tsv" --quiet
  done
done
