#!/usr/bin/env bash
# The learned stage's depth (docs/experiments/ranking.md, "The learned stage's depth"): fold
# models of the shipped configuration on the folds `train --cv 5 --seed SEED` draws
# (served_own_words/folds.py --as-cv), each fold's
# held-out queries ranked by the default pipeline in ACORD's three wordings at each
# `--learned-top` given, condensed runs written for score.py.
#
#   bash scripts/experiments/learned_depth/run.sh OUT SEED [DEPTH ...]   (default depths 500 4000)
#
# ARM names the runs (files ARM<depth>_fold<k>_<wording>.tsv; default "depth"), so that a
# variant switched by an environment variable is run into the same OUT, e.g.
# `ARM=nofeedback PRECEDENT_EXPERIMENT_NO_FEEDBACK=1 bash run.sh OUT 42 500`. WRITERS adds
# query files of scripts/experiments/own_words by name (e.g. WRITERS="own_ab own_ac").
#
# OUT may already hold the fold models of `folds.py --as-cv` at the same seed (model0..model4): they are
# reused. Run from the checkout; PRECEDENT_BIN defaults to target/release/precedent.
set -euo pipefail
OUT=$1
SEED=$2
shift 2
[ $# -gt 0 ] && DEPTHS=("$@") || DEPTHS=(500 4000)
BIN=${PRECEDENT_BIN:-target/release/precedent}
ACORD=../shared/data/acord
mkdir -p "$OUT"
# Writes fold{k}_{train,test}.tsv; the printed commands are not needed here.
python3 scripts/experiments/served_own_words/folds.py "$OUT" --seed "$SEED" --bin "$BIN" --as-cv \
    "$ACORD/queries.jsonl" > /dev/null
ARM=${ARM:-depth}
FILES=("$ACORD/queries.jsonl" "$ACORD/queries_medium.jsonl" "$ACORD/queries_long.jsonl")
for w in ${WRITERS:-}; do FILES+=("scripts/experiments/own_words/queries_$w.jsonl"); done
for k in 0 1 2 3 4; do
    if [ ! -f "$OUT/model$k/manifest.json" ]; then
        "$BIN" train --corpus "$ACORD/corpus.jsonl" --queries "$ACORD/queries.jsonl" \
            --queries "$ACORD/queries_medium.jsonl" --queries "$ACORD/queries_long.jsonl" \
            --qrels "$OUT/fold${k}_train.tsv" --without-rule inclusion --without-rule damages-waiver \
            --cuad ../shared/data/cuad --out "$OUT/model$k" --quiet
    fi
    for depth in "${DEPTHS[@]}"; do
        for file in "${FILES[@]}"; do
            wording=$(basename "$file" .jsonl)
            "$BIN" eval --corpus "$ACORD/corpus.jsonl" --index .precedent/acord \
                --queries "$file" --qrels "$OUT/fold${k}_test.tsv" \
                --protocol condensed --model-dir "$OUT/model$k" --learned-top "$depth" \
                --run-out "$OUT/${ARM}${depth}_fold${k}_${wording}.tsv" --quiet > /dev/null
        done
    done
done
echo "runs in $OUT"
