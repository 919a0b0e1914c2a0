#!/usr/bin/env python3
"""Scores the runs of run.sh: per depth, NDCG@5 / NDCG@10 / 4-star P@5 per wording over every
fold's held-out queries (condensed protocol, pytrec_eval as scripts/score_run.py computes them),
and the mean over wordings; then each depth against the first.

    python3 scripts/experiments/learned_depth/score.py OUT [OUT ...]   (one OUT per fold seed)
"""
import collections
import csv
import glob
import os
import re
import sys

import pytrec_eval

WORDINGS = ("queries", "queries_medium", "queries_long")


def read_rows(path):
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.reader(f, delimiter="\t", quotechar='"')
        header = next(reader)
        for row in reader:
            yield dict(zip(header, row))


def score(out, depth, wording):
    per_query = {}
    for k in range(5):
        qrels = collections.defaultdict(dict)
        for r in read_rows(f"{out}/fold{k}_test.tsv"):
            qrels[r["query-id"]][r["corpus-id"]] = int(r["score"])
        run = collections.defaultdict(dict)
        for r in read_rows(f"{out}/depth{depth}_fold{k}_{wording}.tsv"):
            q, d = r["query-id"], r["corpus-id"]
            if q in qrels and d in qrels[q]:
                run[q][d] = float(r["score"])
        trec = pytrec_eval.RelevanceEvaluator(dict(qrels), {"ndcg_cut.5,10"}).evaluate(dict(run))
        for q, judged in qrels.items():
            ranked = [d for d, _ in sorted(run[q].items(), key=lambda x: (x[1], x[0]), reverse=True)]
            good = sum(1 for l in judged.values() if l >= 3)
            p4 = None if good == 0 else sum(1 for d in ranked[:5] if judged.get(d, -1) >= 3) / min(5, good)
            m = trec.get(q, {})
            per_query[q] = (m.get("ndcg_cut_5", 0.0), m.get("ndcg_cut_10", 0.0), p4)
    cols = list(zip(*per_query.values()))
    return len(per_query), [100 * sum(v for v in c if v is not None) / len([v for v in c if v is not None]) for c in cols]


def main():
    outs = sys.argv[1:]
    depths = sorted({int(m.group(1)) for o in outs for p in glob.glob(f"{o}/depth*_fold0_queries.tsv")
                     if (m := re.search(r"depth(\d+)_", os.path.basename(p)))})
    table = {}
    for out in outs:
        for depth in depths:
            rows = {w: score(out, depth, w) for w in WORDINGS}
            table[(out, depth)] = rows
    print(f"{'seed dir':<28} {'depth':>5} {'n':>3}  short  medium  long   mean@5  mean@10  mean4P@5")
    for (out, depth), rows in table.items():
        n = rows["queries"][0]
        at5 = [rows[w][1][0] for w in WORDINGS]
        print(f"{out:<28} {depth:>5} {n:>3}  {at5[0]:5.2f}  {at5[1]:6.2f}  {at5[2]:5.2f}  {sum(at5)/3:6.2f}"
              f"  {sum(rows[w][1][1] for w in WORDINGS)/3:7.2f}  {sum(rows[w][1][2] for w in WORDINGS)/3:8.2f}")
    if len(depths) > 1:
        base = depths[0]
        for depth in depths[1:]:
            diffs = [[table[(o, depth)][w][1][0] - table[(o, base)][w][1][0] for w in WORDINGS] for o in outs]
            per_w = [sum(d[i] for d in diffs) / len(outs) for i in range(3)]
            print(f"depth {depth} against {base}, mean over {len(outs)} seed(s): NDCG@5 short {per_w[0]:+.2f}"
                  f" medium {per_w[1]:+.2f} long {per_w[2]:+.2f} mean {sum(per_w)/3:+.2f}")


if __name__ == "__main__":
    main()
