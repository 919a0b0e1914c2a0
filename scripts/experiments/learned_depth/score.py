#!/usr/bin/env python3
"""Scores the runs of run.sh over every fold's held-out queries (condensed protocol; NDCG as
pytrec_eval computes it, 4-star P@5 as scripts/score_run.py): per arm (ARM<depth>, e.g.
depth500, depth4000, nofeedback500) and seed directory, NDCG@5 per wording, the mean over
ACORD's three wordings (with NDCG@10 and 4★P@5) and over any writers' files; then each arm
against `depth500` (the shipped pipeline), averaged over the seed directories given.

    python3 scripts/experiments/learned_depth/score.py OUT [OUT ...]   (one OUT per fold seed)
"""
import collections
import csv
import glob
import os
import re
import sys

import pytrec_eval

ACORD = ("queries", "queries_medium", "queries_long")
BASE = "depth500"


def read_rows(path):
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.reader(f, delimiter="\t", quotechar='"')
        header = next(reader)
        for row in reader:
            yield dict(zip(header, row))


def score(out, arm, wording):
    """Mean NDCG@5, NDCG@10, 4★P@5 (percent) over the held-out queries of the five folds."""
    per_query = {}
    for k in range(5):
        qrels = collections.defaultdict(dict)
        for r in read_rows(f"{out}/fold{k}_test.tsv"):
            qrels[r["query-id"]][r["corpus-id"]] = int(r["score"])
        run = collections.defaultdict(dict)
        for r in read_rows(f"{out}/{arm}_fold{k}_{wording}.tsv"):
            q, d = r["query-id"], r["corpus-id"]
            if q in qrels and d in qrels[q]:
                run[q][d] = float(r["score"])
        trec = pytrec_eval.RelevanceEvaluator(dict(qrels), {"ndcg_cut.5,10"}).evaluate(dict(run))
        for q, judged in qrels.items():
            ranked = [d for d, _ in sorted(run[q].items(), key=lambda x: (x[1], x[0]), reverse=True)]
            good = sum(1 for label in judged.values() if label >= 3)  # qrels 0..4 = 1..5 stars
            p4 = None if good == 0 else sum(1 for d in ranked[:5] if judged.get(d, -1) >= 3) / min(5, good)
            m = trec.get(q, {})
            per_query[q] = (m.get("ndcg_cut_5", 0.0), m.get("ndcg_cut_10", 0.0), p4)
    columns = list(zip(*per_query.values()))
    means = []
    for c in columns:
        values = [v for v in c if v is not None]
        means.append(100 * sum(values) / len(values))
    return means


def arms_and_wordings(out):
    arms, wordings = set(), set()
    for path in glob.glob(f"{out}/*_fold0_*.tsv"):
        m = re.match(r"([a-z]+\d+)_fold0_(.+)\.tsv$", os.path.basename(path))
        if m:
            arms.add(m.group(1))
            wordings.add(m.group(2))
    return sorted(arms), sorted(wordings)


def main():
    outs = sys.argv[1:]
    table = {}
    for out in outs:
        arms, wordings = arms_and_wordings(out)
        writers = [w for w in wordings if w not in ACORD]
        for arm in arms:
            rows = {w: score(out, arm, w) for w in ACORD + tuple(writers)}
            table[(out, arm)] = rows
            acord = [rows[w] for w in ACORD]
            line = (f"{out:<20} {arm:<16} short {acord[0][0]:5.2f} medium {acord[1][0]:5.2f}"
                    f" long {acord[2][0]:5.2f}  mean@5 {sum(r[0] for r in acord) / 3:5.2f}"
                    f"  @10 {sum(r[1] for r in acord) / 3:5.2f}  4★P@5 {sum(r[2] for r in acord) / 3:5.2f}")
            if writers:
                line += f"  writers({len(writers)}) {sum(rows[w][0] for w in writers) / len(writers):5.2f}"
            print(line)
    arms = sorted({a for _, a in table} - {BASE})
    for arm in arms:
        seeds = [o for o in outs if (o, arm) in table and (o, BASE) in table]
        if not seeds:
            continue
        diff = {w: sum(table[(o, arm)][w][0] - table[(o, BASE)][w][0] for o in seeds) / len(seeds)
                for w in table[(seeds[0], arm)]}
        acord = [diff[w] for w in ACORD]
        writers = [w for w in diff if w not in ACORD]
        line = (f"{arm} against {BASE}, mean over {len(seeds)} seed(s), NDCG@5: short {acord[0]:+.2f}"
                f" medium {acord[1]:+.2f} long {acord[2]:+.2f} mean {sum(acord) / 3:+.2f}")
        if writers:
            line += f"; writers {sum(diff[w] for w in writers) / len(writers):+.2f}"
        print(line)


if __name__ == "__main__":
    main()
