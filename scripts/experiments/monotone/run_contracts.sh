#!/usr/bin/env bash
# The contracts ranker under monotone trees (docs/experiments/ranking.md, "The contracts ranker
# under the same constraint"): the shipped contracts recipe's CV over an ingested CUAD library,
# one seed, arms shipped (gbdt) and monotone (--learner boost --monotone).
#
#   run_contracts.sh OUT LIB QRELS SEED      e.g. run_contracts.sh runs/contracts cuad/ cuad-qrels.tsv 42
#
# LIB: `precedent ingest ../shared/data/cuad/full_contract_txt --index LIB`; QRELS: `precedent
# map-qrels … --index LIB --out QRELS` (docs/ranking.md). LIB and QRELS are read relative to
# the current directory; OUT is relative to the repository root.
set -euo pipefail
OUT=${1:?usage: run_contracts.sh OUT LIB QRELS SEED}
LIB=$(realpath "${2:?}")
QRELS=$(realpath "${3:?}")
SEED=${4:?}
cd "$(dirname "$0")/../../.."
D=../shared/data/acord
mkdir -p "$OUT"
for arm in shipped monotone; do
  extra=()
  [ "$arm" = monotone ] && extra=(--learner boost --monotone)
  [ -s "$OUT/${arm}_seed${SEED}.json" ] && continue
  /usr/bin/time -f "%e s wall, %U s user" target/release/precedent train --corpus $D/corpus.jsonl \
    --queries $D/queries.jsonl --queries $D/queries_medium.jsonl --queries $D/queries_long.jsonl \
    --qrels $D/qrels/train.tsv --qrels $D/qrels/valid.tsv --cv 5 --without-rule inclusion \
    --cuad ../shared/data/cuad --without rating-memory \
    --cv-library "$LIB" --cv-library-qrels "$QRELS" \
    --also-learn-from "$LIB" --also-learn-from-qrels "$QRELS" \
    --seed "$SEED" "${extra[@]}" \
    --json-out "$OUT/${arm}_seed${SEED}.json" > "$OUT/${arm}_seed${SEED}.txt" 2> "$OUT/${arm}_seed${SEED}.log"
done
