#!/usr/bin/env bash
# The spelling corrector's ranking runs (docs/experiments/ranking.md, "A typing-error model for
# the corrector's choice between words" and the sections after it): the shipped CV command at
# seeds 42 and 1 with the binary before a change (OLD) and after it (target/release/precedent),
# the misspelt copies scored only. Run from the checkout after `cargo build --release`.
#   bash scripts/experiments/spelling_channel/run.sh OUT OLD_BINARY
set -euo pipefail
cd "$(dirname "$0")/../../.."
T=scripts/experiments/typos
bash scripts/experiments/before_after_cv.sh "${1:?output folder}" "${2:?binary before the change}" \
  --queries $T/queries_typo_short.jsonl --queries $T/queries_typo_medium.jsonl \
  --queries $T/queries_typo_long.jsonl
python3 scripts/experiments/before_after_score.py "$1"
