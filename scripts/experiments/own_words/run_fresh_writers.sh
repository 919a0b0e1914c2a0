#!/usr/bin/env bash
# The shipped CV command with fresh writers' sets scored (never trained on), seeds 42 and 1,
# with --rule-ablation, then with --no-spelling: the rule test, the spelling test and the
# shipped ranker's figure on writers nobody read (docs/experiments/ranking.md, "The query rules
# and spelling correction on three writers nobody read" and "... on three more writers").
#
#   run_fresh_writers.sh OUT WRITER...      e.g. run_fresh_writers.sh runs/abcd own_ab own_ac own_ad
#
# WITHOUT_RULES lists the rules the shipped ranker ranks without (default: today's, "inclusion
# damages-waiver"; the own_v/own_w/own_x runs were made with "inclusion"). Run from anywhere
# after `cargo build --release`; OUT is relative to the repository root.
set -euo pipefail
cd "$(dirname "$0")/../../.."
OUT=${1:?usage: run_fresh_writers.sh OUT WRITER...}
shift
D=../shared/data/acord
mkdir -p "$OUT"
source scripts/experiments/own_words/writers.sh
writer_queries "$@"
rules=()
for r in ${WITHOUT_RULES:-inclusion damages-waiver}; do
  rules+=(--without-rule "$r")
done
for arm in ablation no-spelling; do
  for seed in 42 1; do
    extra=(--rule-ablation)
    [ "$arm" = no-spelling ] && extra=(--no-spelling)
    target/release/precedent train --corpus $D/corpus.jsonl \
      --queries $D/queries.jsonl --queries $D/queries_medium.jsonl --queries $D/queries_long.jsonl \
      "${writers[@]}" \
      --qrels $D/qrels/train.tsv --qrels $D/qrels/valid.tsv --cv 5 "${rules[@]}" \
      --cuad ../shared/data/cuad --seed $seed --train-wordings short,medium,long "${extra[@]}" \
      --json-out "$OUT/${arm}_seed${seed}.json" > "$OUT/${arm}_seed${seed}.txt"
  done
done
