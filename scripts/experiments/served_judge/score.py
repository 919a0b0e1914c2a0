#!/usr/bin/env python3
"""Scores the served first five of several rankers with a blind judge's stars.

Usage: score.py KEY.json JUDGED.json [JUDGED.json ...]

KEY.json maps each request to each system's first five clause ids, best first
({"request": {"system": [id, ...]}}); the JUDGED files are lists of
{"query", "id", "stars"} (1..5) over the union of the systems' lists, judged blind.
Prints, per system, the mean stars of the first five, the share at 4 stars or more, and
NDCG@5 with gain stars - 1 (linear, log2(rank + 1) discount), the ideal ranking built from
every judged clause of the request.
"""
import json
import math
import sys


def ndcg5(ranked, stars):
    gains = [stars[c] - 1 for c in ranked[:5]]
    dcg = sum(g / math.log2(i + 2) for i, g in enumerate(gains))
    ideal = sorted((s - 1 for s in stars.values()), reverse=True)[:5]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg > 0 else None


def main():
    key = json.load(open(sys.argv[1]))
    stars = {}
    for path in sys.argv[2:]:
        for j in json.load(open(path)):
            stars.setdefault(j["query"], {})[j["id"]] = int(j["stars"])
    systems = sorted({s for lists in key.values() for s in lists})
    print(f"{'system':<20} {'requests':>8} {'mean stars':>10} {'>=4 stars':>9} {'NDCG@5':>7}")
    for system in systems:
        means, good, ndcgs = [], [], []
        for query, lists in key.items():
            judged = stars.get(query)
            if judged is None:
                sys.exit(f"request {query!r} has no judgements")
            ranked = lists[system]
            missing = [c for c in ranked if c not in judged]
            if missing:
                sys.exit(f"request {query!r}: clauses {missing} were not judged")
            means.append(sum(judged[c] for c in ranked) / len(ranked))
            good.append(sum(judged[c] >= 4 for c in ranked) / len(ranked))
            n = ndcg5(ranked, judged)
            if n is not None:
                ndcgs.append(n)
        print(
            f"{system:<20} {len(means):>8} {sum(means) / len(means):>10.2f} "
            f"{100 * sum(good) / len(good):>8.1f}% {100 * sum(ndcgs) / max(1, len(ndcgs)):>7.1f}"
        )


if __name__ == "__main__":
    main()
