#!/usr/bin/env bash
# The shipped CV command (BENCHMARKS.md's first row: ACORD's three wordings trained on and scored,
# 5 folds, `--without-rule inclusion --without-rule damages-waiver`) at fold seeds 42 and 1, with
# a binary built before a change (OLD, arm "before") and the checkout's release binary (arm
# "after"). Extra options (more `--queries` files: misspelt copies, writers) are scored, never
# trained on. Writes OUT/cv_{before,after}_seed{42,1}.{json,txt}; score them with
# `before_after_score.py OUT`. Run from anywhere after `cargo build --release`.
#   bash scripts/experiments/before_after_cv.sh OUT OLD_BINARY [--queries FILE ...]
set -euo pipefail
OUT=$(realpath -m "${1:?output folder}")
OLD=$(realpath "${2:?binary built before the change}")
shift 2
cd "$(dirname "$0")/../.."
D=../shared/data/acord
mkdir -p "$OUT"
for seed in 42 1; do
  for arm in before after; do
    bin=target/release/precedent
    [ "$arm" = before ] && bin=$OLD
    "$bin" train --corpus $D/corpus.jsonl \
      --queries $D/queries.jsonl --queries $D/queries_medium.jsonl --queries $D/queries_long.jsonl \
      "$@" \
      --qrels $D/qrels/train.tsv --qrels $D/qrels/valid.tsv --cv 5 \
      --without-rule inclusion --without-rule damages-waiver \
      --cuad ../shared/data/cuad --seed $seed --train-wordings short,medium,long \
      --json-out "$OUT/cv_${arm}_seed${seed}.json" > "$OUT/cv_${arm}_seed${seed}.txt"
  done
done
