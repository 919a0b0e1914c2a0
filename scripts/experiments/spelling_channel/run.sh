#!/usr/bin/env bash
# The typing-error model's ranking runs (docs/experiments/ranking.md, "A typing-error model for
# the corrector's choice between words"): the shipped CV command at seeds 42 and 1 with the
# binary before the model (OLD) and after it (target/release/precedent); ACORD's three wordings
# trained on and scored, the misspelt copies scored only. Run from the checkout after
# `cargo build --release`.
#   bash scripts/experiments/spelling_channel/run.sh OUT OLD_BINARY
set -euo pipefail
cd "$(dirname "$0")/../../.."
OUT=${1:?output folder}
OLD=${2:?binary built before the typing-error model}
D=../shared/data/acord
T=scripts/experiments/typos
mkdir -p "$OUT"
for seed in 42 1; do
  for arm in before after; do
    bin=target/release/precedent
    [ "$arm" = before ] && bin=$OLD
    "$bin" train --corpus $D/corpus.jsonl \
      --queries $D/queries.jsonl --queries $D/queries_medium.jsonl --queries $D/queries_long.jsonl \
      --queries $T/queries_typo_short.jsonl --queries $T/queries_typo_medium.jsonl \
      --queries $T/queries_typo_long.jsonl \
      --qrels $D/qrels/train.tsv --qrels $D/qrels/valid.tsv --cv 5 \
      --without-rule inclusion --without-rule damages-waiver \
      --cuad ../shared/data/cuad --seed $seed --train-wordings short,medium,long \
      --json-out "$OUT/cv_${arm}_seed${seed}.json" > "$OUT/cv_${arm}_seed${seed}.txt"
  done
done
python3 scripts/experiments/spelling_channel/score.py "$OUT"
