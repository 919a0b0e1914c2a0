#!/usr/bin/env python3
"""First pages of ACORD queries, and what a change does to them.

Rules that fire on no training query (or only on queries they were read from) cannot be judged
by the cross-validation; they are checked by eye on the first pages of the queries they touch
(docs/learned-ranking.md, "Limits"). This script makes that check repeatable:

    # pages of the test queries (texts only; the test ratings are held out) with a binary
    python3 scripts/first_pages.py pages --bin target/debug/precedent \
        --index .precedent/eval/<id> --split test --out before.json
    # ... rebuild with the change, copy the binary, run again into after.json ...
    python3 scripts/first_pages.py diff before.json after.json

`pages` ranks the whole library (`precedent search`), while the ACORD protocol ranks only the
clauses judged for each query: a clause that enters or leaves a page may be one the benchmark
never shows.
"""
import argparse
import json
import subprocess
import sys
from pathlib import Path


def queries(path: Path, split: str, grep: str | None):
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        q = json.loads(line)
        if split != "all" and q.get("metadata", {}).get("split") != split:
            continue
        if grep and grep.lower() not in q["text"].lower():
            continue
        yield q["text"]


def pages(args) -> int:
    out = {}
    for text in queries(Path(args.queries), args.split, args.grep):
        run = subprocess.run(
            [args.bin, "search", "--quiet", "--json", "--index", args.index, "-k", str(args.k), text],
            capture_output=True,
            text=True,
        )
        if run.returncode != 0:
            print(f"search failed for {text!r}: {run.stderr.strip()}", file=sys.stderr)
            return 1
        hits = json.loads(run.stdout)["hits"]
        out[text] = [{"id": h["id"], "text": h["text"][:300]} for h in hits]
        print(f"{len(out):3d} {text}", file=sys.stderr)
    Path(args.out).write_text(json.dumps(out, indent=1, ensure_ascii=False))
    return 0


def diff(args) -> int:
    before = json.loads(Path(args.before).read_text())
    after = json.loads(Path(args.after).read_text())
    changed = 0
    for query, old in before.items():
        new = after.get(query, [])
        old_ids = [h["id"] for h in old]
        new_ids = [h["id"] for h in new]
        if old_ids == new_ids:
            continue
        changed += 1
        print(f"=== {query}")
        for rank, hit in enumerate(new, 1):
            if hit["id"] not in old_ids:
                print(f"  IN  {rank:2d} {hit['text'][:160]!r}")
        for rank, hit in enumerate(old, 1):
            if hit["id"] not in new_ids:
                print(f"  OUT {rank:2d} {hit['text'][:160]!r}")
    print(f"{changed} of {len(before)} pages changed")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("pages", help="write the first pages of the queries of a split")
    p.add_argument("--bin", default="target/debug/precedent")
    p.add_argument("--index", required=True, help="ACORD library directory (e.g. .precedent/eval/<id>)")
    p.add_argument("--queries", default="../shared/data/acord/queries.jsonl")
    p.add_argument("--split", default="test", help="train, valid, test or all")
    p.add_argument("--grep", help="only queries containing this text")
    p.add_argument("-k", type=int, default=10)
    p.add_argument("--out", required=True)
    d = sub.add_parser("diff", help="clauses that enter and leave each page")
    d.add_argument("before")
    d.add_argument("after")
    args = parser.parse_args()
    return pages(args) if args.command == "pages" else diff(args)


if __name__ == "__main__":
    sys.exit(main())
