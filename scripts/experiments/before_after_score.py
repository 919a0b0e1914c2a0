#!/usr/bin/env python3
"""NDCG@5 of before/after CV runs (before_after_cv.sh): per run the means over ACORD's three
wordings, the misspelt copies and the writers (whichever were scored), each writer, and the
two-seed changes (after minus before) that the keep rules read.

    python3 scripts/experiments/before_after_score.py OUT
"""
import glob
import json
import sys

ACORD = ["short", "medium", "long"]
TYPO = ["typo_short", "typo_medium", "typo_long"]
LEARNED = "learned (all features)"


def means(path):
    for v in json.load(open(path))["variants"]:
        if v["name"] != LEARNED:
            continue
        row = {w: 100 * m["mean"]["ndcg@5"] for w, m in v["by_wording"].items()}
        writers = sorted(w for w in row if w.startswith("own_"))
        for group, wordings in (("acord", ACORD), ("typo", TYPO), ("writers", writers)):
            if wordings and all(w in row for w in wordings):
                row[group] = sum(row[w] for w in wordings) / len(wordings)
        return row
    raise SystemExit(f"no {LEARNED!r} in {path}")


def main():
    runs = {}
    for path in sorted(glob.glob(f"{sys.argv[1]}/cv_*_seed*.json")):
        arm, seed = path.rsplit("/", 1)[1][3:-5].split("_seed")
        runs[(arm, seed)] = means(path)
    for (arm, seed), row in sorted(runs.items()):
        print(f"{arm:6s} seed {seed:2s} " + " ".join(f"{k} {v:.2f}" for k, v in row.items()))
    keys = next(iter(runs.values()), {})
    groups = [k for k in ("acord", "typo", "writers") if k in keys]
    for key in groups + [k for k in keys if k not in groups]:
        deltas = [runs[("after", s)][key] - runs[("before", s)][key]
                  for s in ("42", "1") if ("after", s) in runs and ("before", s) in runs]
        if deltas:
            print(f"two-seed change, {key}: {sum(deltas) / len(deltas):+.2f}")


if __name__ == "__main__":
    main()
