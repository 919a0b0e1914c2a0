#!/usr/bin/env python3
"""Reciprocal rank fusion (k = 60) of two systems' served runs, per run file present in both.

    python3 fuse_runs.py A_DIR B_DIR OUT_DIR

Writes OUT_DIR/runK_NAME.tsv (`query-id corpus-id rank score`) for every runK_NAME.tsv in
A_DIR that B_DIR also holds ("The learned and hybrid rankings fused, as served").
"""
import csv
import glob
import os
import sys
from collections import defaultdict

from runs import read_run

K = 60


def read(path):
    """query id -> clause id -> rank."""
    return {q: {c: r for r, c in ranked} for q, ranked in read_run(path).items()}


def main():
    a_dir, b_dir, out = sys.argv[1:4]
    os.makedirs(out, exist_ok=True)
    for a_path in sorted(glob.glob(f"{a_dir}/run*_*.tsv")):
        name = os.path.basename(a_path)
        b_path = f"{b_dir}/{name}"
        if not os.path.exists(b_path):
            continue
        a, b = read(a_path), read(b_path)
        with open(f"{out}/{name}", "w", newline="") as f:
            w = csv.writer(f, delimiter="\t", lineterminator="\n")
            w.writerow(["query-id", "corpus-id", "rank", "score"])
            for q in a:
                scores = defaultdict(float)
                for ranks in (a[q], b.get(q, {})):
                    for c, r in ranks.items():
                        scores[c] += 1.0 / (K + r)
                ranked = sorted(scores.items(), key=lambda x: (-x[1], x[0]))
                for i, (c, s) in enumerate(ranked, 1):
                    w.writerow([q, c, i, f"{s:.6f}"])


if __name__ == "__main__":
    main()
