#!/usr/bin/env bash
# Lists the spelling corrections `eval` makes on every query file read so far (ACORD's three
# wordings, the misspelt copies, the read writers; the unread own_ah–own_aj are left out), with a
# binary before the typing-error model and one after it, and prints the texts whose correction
# differs. Run from the checkout after `cargo build --release`.
#   bash scripts/experiments/spelling_channel/corrections.sh OUT OLD_BINARY
set -euo pipefail
cd "$(dirname "$0")/../../.."
OUT=${1:?output folder}
OLD=${2:?binary built before the typing-error model}
D=../shared/data/acord
files=($D/queries.jsonl $D/queries_medium.jsonl $D/queries_long.jsonl scripts/experiments/typos/queries_typo_*.jsonl)
for f in scripts/experiments/own_words/queries_own_*.jsonl; do
  case "$f" in *own_ah.jsonl|*own_ai.jsonl|*own_aj.jsonl) continue ;; esac
  files+=("$f")
done
mkdir -p "$OUT"
for arm in before after; do
  bin=target/release/precedent
  [ "$arm" = before ] && bin=$OLD
  : > "$OUT/corrections_$arm.log"
  for f in "${files[@]}"; do
    RUST_LOG=precedent_engine=debug "$bin" eval --corpus $D/corpus.jsonl --queries "$f" \
      --qrels $D/qrels/train.tsv --pipeline hybrid \
      2>&1 | sed 's/\x1b\[[0-9;]*m//g' | grep 'query corrected' | sed "s|^|$(basename "$f") |" >> "$OUT/corrections_$arm.log" || true
  done
done
echo "files: ${#files[@]}; corrected texts before $(wc -l < "$OUT/corrections_before.log"), after $(wc -l < "$OUT/corrections_after.log")"
diff <(sort "$OUT/corrections_before.log") <(sort "$OUT/corrections_after.log") || true
