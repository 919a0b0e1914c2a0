#!/usr/bin/env python3
"""Checks that the server answers as the command line does, over every benchmark query.

`precedent search --json` against `POST /v1/search` for each query of a queries.jsonl (the ids of
the first k hits, in order), and `precedent classify --json` against `POST /v1/classify` for the
first clauses of a corpus (categories, confidences, gate, likely). The server is started here
(`serve --index cmp=LIBRARY`) with a read key created for the run (written to LIBRARY/keys.json,
revoked at the end), and stopped at the end.

Why: in session 36 the server read another clause classifier than `search` for queries naming a
CUAD type, and 3 of ACORD's 48 such queries ranked differently; the one query the tests compared
happened to agree.

    python3 scripts/compare_cli_server.py --bin target/release/precedent --index LIBRARY \
        --queries ../shared/data/acord/queries.jsonl --corpus ../shared/data/acord/corpus.jsonl

Exit status 1 when anything differs.
"""
import argparse
import json
import re
import subprocess
import sys
import time
import urllib.request


def post(url, key, body):
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=300) as reply:
        return json.loads(reply.read())


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin", required=True, help="the precedent executable")
    parser.add_argument("--index", required=True, help="library directory")
    parser.add_argument("--queries", required=True, help="queries.jsonl (BEIR)")
    parser.add_argument("--corpus", help="corpus.jsonl whose first clauses are classified")
    parser.add_argument("--clauses", type=int, default=30, help="clauses to classify")
    parser.add_argument("-k", type=int, default=10)
    parser.add_argument("--port", type=int, default=18090)
    args = parser.parse_args()

    created = subprocess.run(
        [args.bin, "keys", "create", "--index", args.index, "--role", "read", "--label", "compare"],
        capture_output=True, text=True, check=True,
    )
    key = re.search(r"prec_[A-Za-z0-9_-]+", created.stdout + created.stderr).group(0)
    server = subprocess.Popen(
        [args.bin, "serve", "--index", f"cmp={args.index}", "--addr", f"127.0.0.1:{args.port}"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )
    base = f"http://127.0.0.1:{args.port}"
    differ = 0
    try:
        server.stdout.readline()  # "listening on ..."
        queries = [json.loads(line)["text"] for line in open(args.queries) if line.strip()]
        for query in queries:
            cli = json.loads(subprocess.run(
                [args.bin, "search", "--index", args.index, "--json", "-k", str(args.k), query],
                capture_output=True, text=True, check=True,
            ).stdout)
            served = post(f"{base}/v1/search", key, {"query": query, "k": args.k})
            a = [h["id"] for h in cli["hits"]]
            b = [h["clause"]["id"] for h in served["hits"]]
            if a != b:
                differ += 1
                shared = sum(x in b for x in a)
                print(f"search differs: {query!r} ({shared}/{len(a)} shared, "
                      f"first five {'same' if a[:5] == b[:5] else 'differ'})")
        print(f"search: {len(queries)} queries, {differ} differ")
        if args.corpus:
            texts = [json.loads(line)["text"] for line in open(args.corpus) if line.strip()]
            texts = texts[: args.clauses]
            lines = subprocess.run(
                [args.bin, "classify", "--json", "--quiet", *texts],
                capture_output=True, text=True, check=True,
            ).stdout.splitlines()
            served = post(f"{base}/v1/classify", key, {"texts": texts})["clauses"]

            def types(clause):
                return [(t["category"], round(t["confidence"], 5), t.get("likely"),
                         None if t.get("gate") is None else round(t["gate"], 5))
                        for t in clause["types"]]

            wrong = sum(types(json.loads(c)) != types(s) for c, s in zip(lines, served))
            print(f"classify: {len(texts)} clauses, {wrong} differ")
            differ += wrong
    finally:
        server.terminate()
        server.wait()
        key_id = re.search(r"created key ([0-9a-f]+)", created.stdout + created.stderr)
        if key_id:
            subprocess.run([args.bin, "keys", "revoke", "--index", args.index, key_id.group(1)],
                           capture_output=True)
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
