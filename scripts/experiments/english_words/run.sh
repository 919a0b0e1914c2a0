#!/usr/bin/env bash
# The English word list's decision runs (docs/experiments/ranking.md, "Real words the spelling
# corrector turned into others"): the shipped CV command at seeds 42 and 1, with the binary before
# the word list (OLD) and after it (target/release/precedent), ACORD's three wordings trained on
# and scored, the misspelt copies and the fourteen read writers whose texts the list changes
# scored only. Run from the checkout after `cargo build --release`.
#   bash scripts/experiments/english_words/run.sh OUT OLD_BINARY
set -euo pipefail
cd "$(dirname "$0")/../../.."
OUT=${1:?output folder}
OLD=${2:?binary built before the word list}
D=../shared/data/acord
T=scripts/experiments/typos
W=scripts/experiments/own_words
mkdir -p "$OUT"
source $W/writers.sh
writer_queries own_a own_d own_i own_k own_l own_m own_o own_p own_r own_ab own_ac own_ae own_af own_ag
for seed in 42 1; do
  for arm in before after; do
    bin=target/release/precedent
    [ "$arm" = before ] && bin=$OLD
    "$bin" train --corpus $D/corpus.jsonl \
      --queries $D/queries.jsonl --queries $D/queries_medium.jsonl --queries $D/queries_long.jsonl \
      --queries $T/queries_typo_short.jsonl --queries $T/queries_typo_medium.jsonl \
      --queries $T/queries_typo_long.jsonl "${writers[@]}" \
      --qrels $D/qrels/train.tsv --qrels $D/qrels/valid.tsv --cv 5 \
      --without-rule inclusion --without-rule damages-waiver \
      --cuad ../shared/data/cuad --seed $seed --train-wordings short,medium,long \
      --json-out "$OUT/cv_${arm}_seed${seed}.json" > "$OUT/cv_${arm}_seed${seed}.txt"
  done
done
python3 scripts/experiments/english_words/score.py "$OUT"
