#!/usr/bin/env python3
"""NDCG@5 of the English word list's runs (run.sh): per wording, the ACORD, misspelt-copy and
writer means, and the two-seed changes the decision rule reads (after minus before).

    python3 scripts/experiments/english_words/score.py OUT
"""
import glob
import json
import sys

ACORD = ["short", "medium", "long"]
TYPO = ["typo_short", "typo_medium", "typo_long"]
WRITERS = [f"own_{w}" for w in "a d i k l m o p r ab ac ae af ag".split()]
LEARNED = "learned (all features)"


def means(path):
    for v in json.load(open(path))["variants"]:
        if v["name"] != LEARNED:
            continue
        bw = v["by_wording"]
        row = {w: 100 * bw[w]["mean"]["ndcg@5"] for w in ACORD + TYPO + WRITERS}
        row["acord"] = sum(row[w] for w in ACORD) / 3
        row["typo"] = sum(row[w] for w in TYPO) / 3
        row["writers"] = sum(row[w] for w in WRITERS) / len(WRITERS)
        return row
    raise SystemExit(f"no {LEARNED!r} in {path}")


def main():
    folder = sys.argv[1]
    runs = {}
    for path in sorted(glob.glob(f"{folder}/cv_*_seed*.json")):
        arm, seed = path.rsplit("/", 1)[1][3:-5].split("_seed")
        runs[(arm, seed)] = means(path)
    for (arm, seed), row in sorted(runs.items()):
        print(f"{arm:6s} seed {seed:2s} ACORD {row['acord']:.2f} typo {row['typo']:.2f} "
              f"writers {row['writers']:.2f} | "
              + " ".join(f"{w} {row[w]:.1f}" for w in WRITERS))
    for group in ["acord", "typo", "writers"] + ACORD + TYPO + WRITERS:
        deltas = [runs[("after", s)][group] - runs[("before", s)][group]
                  for s in ("42", "1") if ("after", s) in runs and ("before", s) in runs]
        if deltas:
            print(f"two-seed change, {group}: {sum(deltas) / len(deltas):+.2f}")


if __name__ == "__main__":
    main()
