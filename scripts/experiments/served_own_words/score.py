#!/usr/bin/env python3
"""What the fold models serve first over the whole ACORD library, per query file.

For each run written by `folds.py`'s commands (`runK_NAME.tsv`), over the first five clauses
served for each held-out query:
- topical@5: the share that some train or valid query of the request's ACORD category rated two
  stars or more (two stars is ACORD's "same category, not responsive": the clause is at least
  about the request's subject);
- unrated@5: the share that no train or valid query rated at all (ACORD pooled every clause for
  some query, so these were pooled only for test queries);
- judged NDCG@5: trec_eval's NDCG@5 with the request's own ratings as gains (ACORD's scores,
  0..4 for 1..5 stars), unjudged clauses counting 0.

    python3 score.py DIR
"""
import glob
import json
import math
import os
import re
import sys
from collections import defaultdict

from runs import ACORD, acord_ratings, read_run


def main():
    out = sys.argv[1]
    category = {}
    with open(f"{ACORD}/queries.jsonl") as f:
        for line in f:
            q = json.loads(line)
            category[q["_id"]] = q["metadata"]["category"]
    ratings = acord_ratings()
    rated = {c for r in ratings.values() for c in r}
    topical = defaultdict(set)  # category -> clauses rated >= 2 by a query of it
    for q, r in ratings.items():
        topical[category[q]].update(c for c, s in r.items() if s >= 1)
    runs = defaultdict(dict)  # name -> query -> [(rank, clause)]
    for path in sorted(glob.glob(f"{out}/run*_*.tsv")):
        name = re.sub(r"^run\d+_", "", os.path.basename(path)).removesuffix(".tsv")
        runs[name].update(read_run(path))
    print(f"{'query file':<22} {'queries':>7} {'topical@5':>9} {'unrated@5':>9} {'NDCG@5':>7}")
    for name, per_query in runs.items():
        tops, unr, nd = [], [], []
        for q, ranked in per_query.items():
            first = [c for _, c in sorted(ranked)[:5]]
            tops.append(sum(c in topical[category[q]] for c in first) / 5)
            unr.append(sum(c not in rated for c in first) / 5)
            gains = [ratings[q].get(c, 0) for c in first]
            dcg = sum(g / math.log2(i + 2) for i, g in enumerate(gains))
            ideal = sorted(ratings[q].values(), reverse=True)[:5]
            idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
            nd.append(dcg / idcg if idcg else 0.0)
        n = len(tops)
        print(f"{name:<22} {n:>7} {100*sum(tops)/n:>9.1f} {100*sum(unr)/n:>9.1f} {100*sum(nd)/n:>7.1f}")


if __name__ == "__main__":
    main()
