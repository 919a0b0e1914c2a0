#!/usr/bin/env bash
# Sets Precedent up on a fresh machine and runs the main job on the bundled ACORD data:
# build, index the 3,931 ACORD clauses, evaluate on the train and valid queries (condensed
# protocol), cross-validate the learned ranker, and answer one attorney query.
set -euo pipefail
cd "$(dirname "$0")/.."
DATA="${PRECEDENT_DATA:-../shared/data}/acord"
CUAD="${PRECEDENT_DATA:-../shared/data}/cuad"   # CUAD spans give the ranker's clause-type profiles
bash scripts/setup.sh
cargo build --release --quiet
BIN=target/release/precedent
$BIN index --corpus "$DATA/corpus.jsonl" --index .precedent/acord
for split in train valid; do
    $BIN eval --corpus "$DATA/corpus.jsonl" --queries "$DATA/queries.jsonl" \
        --qrels "$DATA/qrels/$split.tsv" --index .precedent/acord \
        --run-out ".precedent/run-$split.tsv" --json-out ".precedent/eval-$split.json"
    echo
done
# Learned ranking, in ACORD's three wordings of the same queries (short, medium, long):
# cross-validated figures over the train + valid ratings (5 folds by query id, every wording of
# a held-out query held out, every learned part refit inside each fold; per wording, mean and
# spread), then a model trained on train (all wordings, as shipped) scored on valid per wording.
WORDINGS=(--queries "$DATA/queries.jsonl" --queries "$DATA/queries_medium.jsonl"
          --queries "$DATA/queries_long.jsonl")
$BIN train --corpus "$DATA/corpus.jsonl" "${WORDINGS[@]}" --without-rule inclusion --without-rule damages-waiver \
    --qrels "$DATA/qrels/train.tsv" --qrels "$DATA/qrels/valid.tsv" --cv 5 --cuad "$CUAD"
$BIN train --corpus "$DATA/corpus.jsonl" "${WORDINGS[@]}" --without-rule inclusion --without-rule damages-waiver \
    --qrels "$DATA/qrels/train.tsv" --out .precedent/model-train --cuad "$CUAD"
$BIN eval --corpus "$DATA/corpus.jsonl" "${WORDINGS[@]}" \
    --qrels "$DATA/qrels/valid.tsv" --index .precedent/acord --model-dir .precedent/model-train
echo
# Search uses the shipped model (models/acord-ranker, trained on train + valid).
$BIN search --index .precedent/acord "liability cap is based on purchase price" -k 3 --explain
