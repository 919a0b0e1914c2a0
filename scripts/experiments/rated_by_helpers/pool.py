#!/usr/bin/env python3
"""Writes the pool a helper rates for one new request: the first 40 clauses of the `hybrid`
pipeline over ACORD's library (BM25 and MiniLM fused, no rating read), with each clause's
word-for-word copies, so that a rating carries to them.

    pool.py BINARY "REQUEST" OUT.txt

Run from the repository root with the ACORD library indexed at .precedent/acord.
"""
import json
import subprocess
import sys

binary, request, out = sys.argv[1], sys.argv[2], sys.argv[3]
reply = subprocess.run(
    [binary, "search", "--index", ".precedent/acord", "--pipeline", "hybrid", "-k", "40",
     "--json", "--full", "--quiet", request],
    check=True, capture_output=True, text=True,
)
hits = json.loads(reply.stdout)["hits"]
with open(out, "w") as f:
    f.write(f"REQUEST: {request}\n{len(hits)} clauses\n\n")
    for hit in hits:
        copies = ",".join(c["id"] for c in hit.get("copies") or [])
        f.write(f"=== CLAUSE {hit['id']}" + (f" (copies: {copies})" if copies else "") + " ===\n")
        f.write(hit["text"].strip() + "\n\n")
print(f"{len(hits)} clauses written to {out}")
