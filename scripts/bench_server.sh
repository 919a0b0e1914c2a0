#!/usr/bin/env bash
# Load benchmark of `precedent serve`: 50 concurrent clients for 60 s against POST /v1/search on
# loopback, cycling through the 114 ACORD queries (wrk, Debian package `wrk`).
# Usage: bash scripts/bench_server.sh [PIPELINE=hybrid] [K=10] [DURATION=60s] [CONNECTIONS=50]
# PIPELINE: bm25, dense, hybrid, hybrid-norm, learned, `default` (no pipeline in the request:
# the server's default for the library), or `rank_bm25`: the peer, rank_bm25 behind a minimal
# Python HTTP server (scripts/bench_peer_server.py) answering the same requests.
# Prints wrk's report and one JSON line (throughput, p50/p90/p99 latency, non-2xx and socket
# errors). Results go to bench-out/server/.
set -euo pipefail
cd "$(dirname "$0")/.."
PIPELINE=${1:-hybrid}
K=${2:-10}
DURATION=${3:-60s}
CONNECTIONS=${4:-50}
OUT=bench-out/server
mkdir -p "$OUT"
command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq --no-install-recommends wrk; }
# PRECEDENT_BIN picks another build (e.g. the debug one, whose dependencies are optimised too).
if [ -z "${PRECEDENT_BIN:-}" ]; then
    cargo build --release -q -p precedent
    PRECEDENT_BIN="${CARGO_TARGET_DIR:-target}/release/precedent"
fi
B=$PRECEDENT_BIN
D=../shared/data/acord
LIB=$OUT/acord-lib
[ -f "$LIB/CURRENT" ] || $B --quiet index --corpus $D/corpus.jsonl --index "$LIB"
KEY=$($B keys create --index "$LIB" --role read --label bench)
python3 - "$D/queries.jsonl" "$KEY" "$PIPELINE" "$K" > "$OUT/search.lua" <<'PY'
import json, sys
queries = [json.loads(l)["text"] for l in open(sys.argv[1]) if l.strip()]
key, pipeline, k = sys.argv[2], sys.argv[3], int(sys.argv[4])
named = pipeline not in ("default", "rank_bm25")
bodies = [json.dumps({"query": q, "k": k, **({"pipeline": pipeline} if named else {})}) for q in queries]
print('wrk.method = "POST"')
print('wrk.headers["Content-Type"] = "application/json"')
print(f'wrk.headers["Authorization"] = "Bearer {key}"')
print("local bodies = {" + ",".join(json.dumps(b) for b in bodies) + "}")
print("local i = 0")
print("request = function() i = i + 1; return wrk.format(nil, nil, nil, bodies[(i % #bodies) + 1]) end")
print('''done = function(s, latency, requests)
  local e = s.errors
  io.write(string.format('{"requests": %d, "seconds": %.2f, "rps": %.1f, "p50_ms": %.2f, "p90_ms": %.2f, "p99_ms": %.2f, "max_ms": %.2f, "non_2xx": %d, "socket_errors": %d}\\n',
    s.requests, s.duration / 1e6, s.requests / (s.duration / 1e6), latency:percentile(50) / 1e3,
    latency:percentile(90) / 1e3, latency:percentile(99) / 1e3, latency.max / 1e3, e.status,
    e.connect + e.read + e.write + e.timeout))
end''')
PY
if [ "$PIPELINE" = rank_bm25 ]; then
    .venv/bin/python scripts/bench_peer_server.py --corpus $D/corpus.jsonl > "$OUT/serve.out" 2> "$OUT/serve.err" &
else
    $B serve --index "acord=$LIB" --addr 127.0.0.1:0 --public-status > "$OUT/serve.out" 2> "$OUT/serve.err" &
fi
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true' EXIT
for _ in $(seq 1 600); do grep -q "listening on" "$OUT/serve.out" 2>/dev/null && break; sleep 0.1; done
URL=$(sed -n 's/^listening on //p' "$OUT/serve.out")
# Warm-up (model, page cache), then the measured run.
wrk -t2 -c4 -d3s -s "$OUT/search.lua" "$URL/v1/search" > /dev/null
wrk -t2 -c"$CONNECTIONS" -d"$DURATION" --timeout 10s --latency -s "$OUT/search.lua" "$URL/v1/search" | tee "$OUT/wrk-$PIPELINE.txt"
curl -s "$URL/metrics" | grep -E 'route="/v1/search"' | grep -v bucket > "$OUT/metrics-$PIPELINE.txt" || true
