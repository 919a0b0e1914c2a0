#!/usr/bin/env python3
"""Keeps the helper-rated requests that ACORD's library can answer: a request stays only if its
pool (40 `hybrid` clauses, rated by the helper who wrote it) holds a clause rated 4 stars or more
(label 3 or 4; labels are stars - 1). The rule was fixed before any score of the filtered set
(docs/experiments/ranking.md, "More rated queries, answerable requests only").

    answerable.py OUT_DIR    writes OUT_DIR/answerable_queries.jsonl and answerable_ratings.tsv
                             from every h*_queries.jsonl / h*_ratings.tsv of rated_by_helpers/
"""
import csv
import json
import sys
from pathlib import Path

HELPERS = Path(__file__).resolve().parent.parent / "rated_by_helpers"
ANSWERABLE = 3  # label of a 4-star clause


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: answerable.py OUT_DIR")
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    queries, ratings = {}, {}
    for path in sorted(HELPERS.glob("h*_queries.jsonl")):
        for line in path.read_text().splitlines():
            if line.strip():
                q = json.loads(line)
                if q["_id"] in queries:
                    # Two helpers' requests with one text would merge their pools' ratings.
                    sys.exit(f"{path}: request written twice: {q['_id']!r}")
                queries[q["_id"]] = line
        with open(str(path).replace("_queries.jsonl", "_ratings.tsv"), newline="") as f:
            for row in csv.DictReader(f, delimiter="\t"):
                ratings.setdefault(row["query-id"], []).append((row["corpus-id"], int(row["score"])))
    kept = [q for q in queries if max((s for _, s in ratings.get(q, [])), default=-1) >= ANSWERABLE]
    with open(out / "answerable_queries.jsonl", "w") as f:
        for q in kept:
            f.write(queries[q] + "\n")
    with open(out / "answerable_ratings.tsv", "w") as f:
        f.write("query-id\tcorpus-id\tscore\n")
        for q in kept:
            for doc, score in ratings[q]:
                f.write(f"{q}\t{doc}\t{score}\n")
    labels = [s for q in kept for _, s in ratings[q]]
    share = " / ".join(f"{100 * labels.count(s) / len(labels):.1f}" for s in range(5))
    print(f"{len(kept)} of {len(queries)} requests kept, {len(labels)} ratings; 1-5 stars % {share}")


if __name__ == "__main__":
    main()
