#!/usr/bin/env bash
# The English word list's decision runs (docs/experiments/ranking.md, "Real words the spelling
# corrector turned into others"): the shipped CV command at seeds 42 and 1, with the binary before
# the word list (OLD) and after it (target/release/precedent), ACORD's three wordings trained on
# and scored, the misspelt copies and the fourteen read writers whose texts the list changes
# scored only. Run from the checkout after `cargo build --release`.
#   bash scripts/experiments/english_words/run.sh OUT OLD_BINARY
set -euo pipefail
cd "$(dirname "$0")/../../.."
T=scripts/experiments/typos
source scripts/experiments/own_words/writers.sh
writer_queries own_a own_d own_i own_k own_l own_m own_o own_p own_r own_ab own_ac own_ae own_af own_ag
bash scripts/experiments/before_after_cv.sh "${1:?output folder}" "${2:?binary built before the word list}" \
  --queries $T/queries_typo_short.jsonl --queries $T/queries_typo_medium.jsonl \
  --queries $T/queries_typo_long.jsonl "${writers[@]}"
python3 scripts/experiments/before_after_score.py "$1"
