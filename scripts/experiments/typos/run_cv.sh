#!/usr/bin/env bash
# The spelling decision's four CV runs (docs/experiments/ranking.md, "Misspelt words corrected
# against the library's words"): seeds 42 and 1, correction off (--no-spelling) and on, ACORD's
# three wordings trained on and scored, the misspelt copies and two writers scored only.
# Run from the checkout after `cargo build --release`; reports go to OUT (default runs/).
set -euo pipefail
cd "$(dirname "$0")/../../.."
OUT=${1:-scripts/experiments/typos/runs}
D=../shared/data/acord
T=scripts/experiments/typos
W=scripts/experiments/own_words
mkdir -p "$OUT"
for seed in 42 1; do
  for arm in off on; do
    extra=()
    [ "$arm" = off ] && extra=(--no-spelling)
    target/release/precedent train --corpus $D/corpus.jsonl \
      --queries $D/queries.jsonl --queries $D/queries_medium.jsonl --queries $D/queries_long.jsonl \
      --queries $T/queries_typo_short.jsonl --queries $T/queries_typo_medium.jsonl \
      --queries $T/queries_typo_long.jsonl \
      --queries $W/queries_own_u.jsonl --queries $W/queries_own_r.jsonl \
      --qrels $D/qrels/train.tsv --qrels $D/qrels/valid.tsv --cv 5 --without-rule inclusion \
      --cuad ../shared/data/cuad --seed $seed --train-wordings short,medium,long "${extra[@]}" \
      --json-out "$OUT/cv_${arm}_seed${seed}.json" > "$OUT/cv_${arm}_seed${seed}.txt"
  done
done
python3 scripts/experiments/typos/score.py "$OUT"
