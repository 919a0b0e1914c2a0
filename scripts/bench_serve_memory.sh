#!/usr/bin/env bash
# Resident memory of a server once its review, classify and clause-type models are loaded.
# Usage: bash scripts/bench_serve_memory.sh BINARY LIBRARY [PORT]
# Starts `BINARY serve --index LIBRARY --preload --fast-review --public-status`, polls /healthz until the clause
# typer, the classify model and the clause-type reader of queries are ready (builds whose
# /healthz does not report the reader: then it waits 20 s more for it), prints the resident
# set size, stops.
set -euo pipefail
BIN=$1
LIB=$2
PORT=${3:-18081}
"$BIN" serve --index "bench=$LIB" --addr "127.0.0.1:$PORT" --preload --fast-review --public-status \
    >/dev/null 2>/tmp/bench_serve_memory.err &
PID=$!
trap 'kill $PID 2>/dev/null || true' EXIT
start=$(date +%s)
for _ in $(seq 1 600); do
    sleep 1
    health=$(curl -s "127.0.0.1:$PORT/healthz" || true)
    if grep -q '"clause_typer":{"state":"ready"' <<<"$health" \
        && grep -q '"clause_classifier":{"state":"ready"' <<<"$health"; then
        if grep -q '"query_clause_types":{"state":"ready"' <<<"$health"; then
            break
        elif ! grep -q '"query_clause_types"' <<<"$health"; then
            sleep 20
            break
        fi
    fi
done
ready=$(( $(date +%s) - start ))
echo "ready after ${ready} s; resident $(( $(ps -o rss= -p $PID) / 1024 )) MB"
