#!/usr/bin/env bash
# all-mpnet-base-v2 against all-MiniLM-L6-v2 on ACORD (issue #40): cost per clause, dense and
# hybrid retrieval per wording, and the learned ranker's 5-fold CV with MPNet vectors.
# Results: docs/experiments/ranking.md, section "A larger embedder: all-mpnet-base-v2".
#
# Wall time on 2 idle cores, estimated from the clause throughput (MPNet is about 7.5x
# MiniLM's cost per clause): ~30 min to embed the 3,931-clause corpus with MPNet, ~10 min for
# the two throughput runs, ~10 min more for the CUAD spans that the CV's type profiles embed, plus
# the CV itself (~6 min). Every MPNet vector goes to the embedding cache
# (.precedent/cache/embeddings, a segment per 2,048 texts), so a stopped run resumes.
#
# MPNet's library lives in .precedent/eval-mpnet (the default .precedent/eval/<corpus hash>
# keeps MiniLM's, so the two never replace each other). Logs: bench-out/mpnet/.
#
# Environment: STEPS (space-separated subset of: throughput dense hybrid cv cv-minilm; default
# all but cv-minilm), LIMIT (throughput clauses, default 1000).
set -euo pipefail
cd "$(dirname "$0")/../.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
DATA="${PRECEDENT_DATA:-../shared/data}"
D="$DATA/acord"
STEPS="${STEPS:-throughput dense hybrid cv}"
LIMIT="${LIMIT:-1000}"
OUT=bench-out/mpnet
mkdir -p "$OUT"

scripts/models/fetch_mpnet.sh
MPNET="$PWD/models/cache/all-mpnet-base-v2"
nice -n 5 cargo build --release --quiet -p precedent -p precedent-tools --bin precedent --bin embed_throughput
BIN=target/release
WORDINGS=(--queries "$D/queries.jsonl" --queries "$D/queries_medium.jsonl" --queries "$D/queries_long.jsonl")

has() { [[ " $STEPS " == *" $1 "* ]]; }
timed() { nice -n 5 /usr/bin/time -f "wall=%e s maxrss=%M KB" "$@"; }

if has throughput; then
    for m in minilm mpnet; do
        model=()
        [ "$m" = mpnet ] && model=(--model "$MPNET")
        timed "$BIN/embed_throughput" --corpus "$D/corpus.jsonl" --limit "$LIMIT" --batch-size 32 \
            "${model[@]}" 2>&1 | tee "$OUT/throughput_${m}_${LIMIT}.log"
    done
fi

for pipeline in dense hybrid; do
    has "$pipeline" || continue
    for split in train valid; do
        timed "$BIN/precedent" eval --quiet --corpus "$D/corpus.jsonl" "${WORDINGS[@]}" \
            --qrels "$D/qrels/$split.tsv" --pipeline "$pipeline" --model "$MPNET" \
            --index .precedent/eval-mpnet 2>&1 | tee "$OUT/eval_${pipeline}_mpnet_${split}.log"
        timed "$BIN/precedent" eval --quiet --corpus "$D/corpus.jsonl" "${WORDINGS[@]}" \
            --qrels "$D/qrels/$split.tsv" --pipeline "$pipeline" \
            2>&1 | tee "$OUT/eval_${pipeline}_minilm_${split}.log"
    done
done

cv() {
    local tag=$1
    shift
    timed "$BIN/precedent" train --quiet --corpus "$D/corpus.jsonl" "${WORDINGS[@]}" \
        --qrels "$D/qrels/train.tsv" --qrels "$D/qrels/valid.tsv" --cv 5 \
        --without-rule inclusion --cuad "$DATA/cuad" "$@" 2>&1 | tee "$OUT/cv_${tag}.log"
}
if has cv; then
    cv mpnet --model "$MPNET" --index .precedent/eval-mpnet
fi
if has cv-minilm; then
    cv minilm
fi
