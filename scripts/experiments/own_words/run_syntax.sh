#!/usr/bin/env bash
# "Queries in a research service's search syntax" (docs/experiments/ranking.md): the shipped CV
# command with own_y, own_z and own_aa scored (never trained on), seeds 42 and 1, for a baseline
# binary (BASE, default /tmp/precedent-base: main before the change) and the checkout's release
# binary. Reports go to OUT (default runs/syntax).
set -euo pipefail
cd "$(dirname "$0")/../../.."
BASE=${BASE:-/tmp/precedent-base}
OUT=${1:-scripts/experiments/own_words/runs/syntax}
D=../shared/data/acord
W=scripts/experiments/own_words
mkdir -p "$OUT"
for seed in 42 1; do
  for arm in base syntax; do
    bin=target/release/precedent
    [ "$arm" = base ] && bin=$BASE
    "$bin" train --corpus $D/corpus.jsonl \
      --queries $D/queries.jsonl --queries $D/queries_medium.jsonl --queries $D/queries_long.jsonl \
      --queries $W/queries_own_y.jsonl --queries $W/queries_own_z.jsonl --queries $W/queries_own_aa.jsonl \
      --qrels $D/qrels/train.tsv --qrels $D/qrels/valid.tsv --cv 5 --without-rule inclusion --without-rule damages-waiver \
      --cuad ../shared/data/cuad --seed $seed --train-wordings short,medium,long \
      --json-out "$OUT/${arm}_seed${seed}.json" > "$OUT/${arm}_seed${seed}.txt"
  done
done
