#!/usr/bin/env bash
# Sets Precedent up on a fresh machine and runs the main job on the bundled ACORD data:
# build, index the 3,931 ACORD clauses, evaluate the default pipeline on the train and valid
# queries (condensed protocol), and answer one attorney query.
set -euo pipefail
cd "$(dirname "$0")/.."
DATA="${PRECEDENT_DATA:-../shared/data}/acord"
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
$BIN search --index .precedent/acord "cap on liability equals 12 months payment" -k 3 --explain
