#!/usr/bin/env bash
# Two learners blended (docs/experiments/ranking.md, "Two learners blended"): the shipped CV
# command with a set of writers scored (never trained on), seeds 42 and 1, one run per arm:
#   shipped   the shipped ranker (gbdt trees)
#   blend     --learner blend --monotone (gbdt and the constrained histogram trees, margins averaged)
#
#   run.sh OUT "ARM..." WRITER...     e.g. run.sh runs/stage2 "shipped blend" own_ah own_ai own_aj
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
      blend) extra=(--learner blend --monotone) ;;
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
