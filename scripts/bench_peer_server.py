#!/usr/bin/env python3
"""The peer for the HTTP load benchmark (scripts/bench_server.sh): rank_bm25 (the ACORD paper's
Python BM25) behind a minimal HTTP server, answering the same `POST /v1/search` bodies
(`{"query", "k"}`; other fields ignored, no key checked) with the top-k clauses as JSON.

    .venv/bin/python scripts/bench_peer_server.py --corpus C [--port 0]

Prints `listening on http://ADDR` once ready. Standard library `ThreadingHTTPServer` with
keep-alive (HTTP/1.1), one thread per connection; tokenisation is the one of
scripts/bench_rank_bm25.py (Precedent's analyzer mirrored), so the engines see the same terms.
"""
import argparse
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
from rank_bm25 import BM25Okapi

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_rank_bm25 import analyze  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--port", type=int, default=0)
    args = ap.parse_args()
    docs = [json.loads(l) for l in open(args.corpus, encoding="utf-8") if l.strip()]
    bm25 = BM25Okapi([analyze(d.get("title", "") + " " + d["text"]) for d in docs], k1=1.2, b=0.75)
    ids = [d["_id"] for d in docs]
    texts = [d["text"] for d in docs]

    class Search(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *_):
            pass

        def reply(self, status, body):
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self):
            try:
                length = int(self.headers.get("Content-Length", "0"))
                request = json.loads(self.rfile.read(length))
                query, k = request["query"], int(request.get("k", 10))
            except (ValueError, KeyError, TypeError) as e:
                return self.reply(400, {"detail": str(e)})
            scores = bm25.get_scores(analyze(query))
            top = np.argpartition(-scores, k)[:k]
            top = top[np.argsort(-scores[top], kind="stable")]
            hits = [{"rank": r + 1, "id": ids[i], "score": float(scores[i]), "text": texts[i]}
                    for r, i in enumerate(top)]
            self.reply(200, {"query": query, "pipeline": "rank_bm25", "hits": hits})

    server = ThreadingHTTPServer(("127.0.0.1", args.port), Search)
    server.daemon_threads = True
    host, port = server.server_address[:2]
    print(f"listening on http://{host}:{port}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
