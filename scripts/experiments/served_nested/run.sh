#!/usr/bin/env bash
# The nested estimate of the rule choice on both lines (docs/experiments/ranking.md, "The rule
# choice read as served"): one run per fold seed, ACORD's three wordings, no --without-rule.
# Usage: bash scripts/experiments/served_nested/run.sh OUT SEED [BIN]
set -euo pipefail
OUT=$1; SEED=$2; BIN=${3:-target/release/precedent}
DATA=${PRECEDENT_DATA:-../shared/data}
mkdir -p "$OUT"
"$BIN" --quiet train --corpus "$DATA/acord/corpus.jsonl" \
    --queries "$DATA/acord/queries.jsonl" --queries "$DATA/acord/queries_medium.jsonl" \
    --queries "$DATA/acord/queries_long.jsonl" \
    --qrels "$DATA/acord/qrels/train.tsv" --qrels "$DATA/acord/qrels/valid.tsv" \
    --cv 5 --nested-rules --cuad "$DATA/cuad" --seed "$SEED" \
    --json-out "$OUT/nested$SEED.json" > "$OUT/nested$SEED.txt" 2> "$OUT/nested$SEED.err"
gzip -f "$OUT/nested$SEED.json"
