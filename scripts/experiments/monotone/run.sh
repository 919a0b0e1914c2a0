#!/usr/bin/env bash
# Monotone trees (docs/experiments/ranking.md, "Monotone trees"): the shipped CV command with a
# set of writers scored (never trained on), seeds 42 and 1, one run per arm:
#   shipped   the shipped ranker (gbdt trees)
#   boost     --learner boost
#   monotone  --learner boost --monotone
#
#   run.sh OUT "ARM..." WRITER...     e.g. run.sh runs/stage1 "shipped boost monotone" own_ab own_ac own_ad
#
# Run from anywhere after `cargo build --release`; OUT is relative to the repository root.
set -euo pipefail
cd "$(dirname "$0")/../../.."
OUT=${1:?usage: run.sh OUT "ARM..." WRITER...}
ARMS=${2:?usage: run.sh OUT "ARM..." WRITER...}
shift 2
D=../shared/data/acord
mkdir -p "$OUT"
source scripts/experiments/own_words/writers.sh
writer_queries "$@"
for seed in 42 1; do
  for arm in $ARMS; do
    case $arm in
      shipped) extra=() ;;
      boost) extra=(--learner boost) ;;
      monotone) extra=(--learner boost --monotone) ;;
      *) echo "unknown arm $arm" >&2; exit 2 ;;
    esac
    [ -s "$OUT/${arm}_seed${seed}.json" ] && continue
    /usr/bin/time -f "%e s wall, %U s user" target/release/precedent train --corpus $D/corpus.jsonl \
      --queries $D/queries.jsonl --queries $D/queries_medium.jsonl --queries $D/queries_long.jsonl \
      "${writers[@]}" \
      --qrels $D/qrels/train.tsv --qrels $D/qrels/valid.tsv --cv 5 \
      --without-rule inclusion --without-rule damages-waiver \
      --cuad ../shared/data/cuad --seed $seed --train-wordings short,medium,long "${extra[@]}" \
      --json-out "$OUT/${arm}_seed${seed}.json" > "$OUT/${arm}_seed${seed}.txt" 2> "$OUT/${arm}_seed${seed}.log"
  done
done
