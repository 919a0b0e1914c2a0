#!/usr/bin/env bash
# The shipped ACORD CV command (first row of BENCHMARKS.md) once per arm and fold seed (42, 1),
# with writers' rewordings scored and never trained on (`--train-wordings` keeps training on
# ACORD's wordings). The experiments that compare learned-ranker variants on the writers call it:
#   shipped   the shipped ranker (gbdt trees)
#   boost     --learner boost                          ("Monotone trees")
#   monotone  --learner boost --monotone               ("Monotone trees")
#   blend     --learner blend --monotone               ("Two learners blended")
#   sentence_coverage  the shipped flags, run with sentence_coverage/feature.patch applied ("Query
#             terms within one sentence")
#   vote_cosine  the shipped flags, run with vote_cosine/feature.patch applied ("The clause's cosine
#             to the query's vote vector")
#   vote_confidence  the shipped flags, run with vote_confidence/feature.patch applied ("How close
#             the nearest remembered query is")
#   helpers_rated  also trains the trees on 24 requests written and rated by helper sessions,
#             run with rated_by_helpers/feature.patch applied (--extra-training-queries)
#             (scripts/experiments/rated_by_helpers/; "More rated queries")
#   helpers_rated_round2  the same with the second round's writers too (88 requests; "More
#             rated queries, second round")
#   helpers_answerable  the same over the answerable requests of both rounds only (60 of 88: a
#             pool holding a clause rated 4 stars or more; helpers_answerable/answerable.py)
#   vote_other_wordings  the shipped flags with PRECEDENT_EXPERIMENT_VOTE_OTHER_WORDINGS=1, run
#             with vote_other_wordings/feature.patch applied: a training text's own wording
#             (other queries' entries in it) does not vote for it ("The vote as a new register
#             meets it")
#   overlap_vote  the shipped flags, run with overlap_vote/feature.patch applied (a 25th feature:
#             the clause's expected label when remembered queries are weighed by how many of
#             their 3-star-or-better clauses the request's first 20 hybrid candidates hold;
#             "The overlap vote")
#   specific_terms  the shipped flags, run with specific_terms/feature.patch applied (a 25th
#             feature: the share of the request's terms that its three most-voted remembered
#             queries' texts lack which the clause holds; "What sets a request apart")
#   sibling_contrast  the shipped flags, run with sibling_contrast/feature.patch applied (a 25th
#             feature: the clause's cosine to the request's vote vector minus its cosine to the
#             most-voted remembered query's; "The clause nearer the request than its nearest
#             sibling")
#   soft_coverage  the shipped flags, run with soft_coverage/feature.patch applied (a 25th
#             feature: the mean over the request's content words of the largest cosine of the
#             word's bi-encoder vector to a clause word's; "Request words matched by meaning")
#   requester_pronouns  the shipped flags, run with requester_pronouns/feature.patch applied (the
#             requester's pronouns dropped from a request's search words; "i" added to the list
#             for the first configuration; "The requester's pronouns are not search words")
#   glossary2  the shipped flags, run with the glossary's second round of plain-word triggers
#             ("Plain words in the glossary, second round")
#   glossary3  the same with its third round ("Plain words in the glossary, third round")
#   served_unrated  --served-negatives 500 with PRECEDENT_EXPERIMENT_SERVED_UNRATED_ONLY=1, run
#             with served_unrated/feature.patch applied: each training list also holds its first
#             500 hybrid candidates that nobody judged for it and no remembered query rated, at
#             label 0 ("Unrated is not relevant over the whole library")
#   null_noise_N  the shipped flags with PRECEDENT_EXPERIMENT_NOISE_SEED=N, run with
#             null_noise/feature.patch applied (a 25th feature of seeded noise: "How far a 25th
#             feature moves the figures when it carries nothing")
#   dropout   also trains on word-dropout copies of ACORD's wordings ("Word dropout on the
#             training queries"; scripts/experiments/dropout/)
#   exclusion_scan  the shipped flags, run with the exclusion reader's fix ("A second trigger
#             inside an excluded phrase, and \"never\"")
#   exclusion_participles  the same with the second fix ("Carve-out participles and \"not a
#             single\"")
#
# PRECEDENT_BIN names the binary (default target/release/precedent), so that two builds can be
# compared without rebuilding between arms.
#
#   learned_arms.sh OUT "ARM..." WRITER...   e.g. learned_arms.sh runs/x "shipped blend" own_ah own_ai
#
# A report already in OUT is kept (the run is skipped). Run after `cargo build --release`; OUT is
# relative to the repository root.
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:?usage: learned_arms.sh OUT "ARM..." WRITER...}
ARMS=${2:?usage: learned_arms.sh OUT "ARM..." WRITER...}
shift 2
D=../shared/data/acord
X=scripts/experiments/dropout
mkdir -p "$OUT"
source scripts/experiments/own_words/writers.sh
writer_queries "$@"
for seed in 42 1; do
  for arm in $ARMS; do
    train=short,medium,long
    env_arm=()
    case $arm in
      # the feature arms run the shipped flags: their change (a 25th feature, or the vote's
      # training rule, switched on by the arm's env_arm) is in the binary they are run with
      # (branch lexical-vote, or the arm's feature.patch applied)
      shipped|lexical_vote|sentence_coverage|vote_cosine|vote_confidence|overlap_vote|specific_terms|sibling_contrast|exclusion_scan|exclusion_participles|soft_coverage|requester_pronouns|glossary2|glossary3)
        extra=() ;;
      vote_other_wordings) extra=() env_arm=(PRECEDENT_EXPERIMENT_VOTE_OTHER_WORDINGS=1) ;;
      served_unrated) extra=(--served-negatives 500) env_arm=(PRECEDENT_EXPERIMENT_SERVED_UNRATED_ONLY=1) ;;
      null_noise_[0-9]*) extra=() env_arm=(PRECEDENT_EXPERIMENT_NOISE_SEED=${arm#null_noise_}) ;;
      boost) extra=(--learner boost) ;;
      monotone) extra=(--learner boost --monotone) ;;
      blend) extra=(--learner blend --monotone) ;;
      helpers_rated|helpers_rated_round2)
        # round one: raters h1-h8's 24 requests; round two: every rater's (88)
        raters='h[1-8]'
        [ $arm = helpers_rated_round2 ] && raters='h*'
        extra=()
        for h in scripts/experiments/rated_by_helpers/${raters}_queries.jsonl; do
          extra+=(--extra-training-queries "$h" --extra-training-qrels "${h%_queries.jsonl}_ratings.tsv")
        done ;;
      helpers_answerable)
        A=scripts/experiments/helpers_answerable
        extra=(--extra-training-queries $A/answerable_queries.jsonl
               --extra-training-qrels $A/answerable_ratings.tsv) ;;
      dropout)
        extra=(--queries $X/queries_dropout_short.jsonl --queries $X/queries_dropout_medium.jsonl
               --queries $X/queries_dropout_long.jsonl)
        train=$train,dropout_short,dropout_medium,dropout_long ;;
      *) echo "unknown arm $arm" >&2; exit 2 ;;
    esac
    [ -s "$OUT/${arm}_seed${seed}.json" ] && continue
    env "${env_arm[@]}" /usr/bin/time -f "%e s wall, %U s user" "${PRECEDENT_BIN:-target/release/precedent}" train --corpus $D/corpus.jsonl \
      --queries $D/queries.jsonl --queries $D/queries_medium.jsonl --queries $D/queries_long.jsonl \
      "${writers[@]}" \
      --qrels $D/qrels/train.tsv --qrels $D/qrels/valid.tsv --cv 5 \
      --without-rule inclusion --without-rule damages-waiver \
      --cuad ../shared/data/cuad --seed $seed --train-wordings $train "${extra[@]}" \
      --json-out "$OUT/${arm}_seed${seed}.json" > "$OUT/${arm}_seed${seed}.txt" 2> "$OUT/${arm}_seed${seed}.log"
  done
done
