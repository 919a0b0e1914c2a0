#!/usr/bin/env bash
# BM25 benchmark: Precedent (tantivy) vs rank_bm25 (the ACORD paper's Python stack), same corpus,
# same queries, same machine, same run. Quality (condensed NDCG on train), index build time,
# single-thread query throughput and latency.
set -euo pipefail
cd "$(dirname "$0")/.."
D="${PRECEDENT_DATA:-../shared/data}/acord"
cargo build --release --quiet
B=target/release/precedent
LIB=$(mktemp -d)/lib
echo "## machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores; $(date -u +%F)"
/usr/bin/time -f "precedent index: %e s wall, peak RSS %M KB" $B --quiet index --corpus "$D/corpus.jsonl" --index "$LIB"
$B bench --index "$LIB" --queries "$D/queries.jsonl" -k 100 --repeat 5
$B bench --index "$LIB" --queries "$D/queries.jsonl" -k 3931 --repeat 2
for split in train valid; do
  $B --quiet eval --corpus "$D/corpus.jsonl" --queries "$D/queries.jsonl" --qrels "$D/qrels/$split.tsv" --index "$LIB" --pipeline bm25 | tail -1 | sed "s/^Overall/bm25 $split/"
done
.venv/bin/python -m pip install --quiet rank_bm25==0.2.2 snowballstemmer
.venv/bin/python scripts/bench_rank_bm25.py --corpus "$D/corpus.jsonl" --queries "$D/queries.jsonl" --qrels "$D/qrels/train.tsv"
