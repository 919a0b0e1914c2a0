#!/usr/bin/env python3
"""NDCG@5 per wording of the spelling decision's CV reports (run_cv.sh), the ACORD and typo
means, NDCG@10 and 4-star P@5 means, and the two-seed changes the decision rule reads.

    python3 scripts/experiments/typos/score.py scripts/experiments/typos/runs
"""
import glob
import json
import sys

ORDER = ["short", "medium", "long", "typo_short", "typo_medium", "typo_long", "own_u", "own_r"]


def means(path):
    out = {}
    for v in json.load(open(path))["variants"]:
        bw = v["by_wording"]
        row = {w: 100 * bw[w]["mean"]["ndcg@5"] for w in ORDER if w in bw}
        for metric, tag in (("ndcg@5", ""), ("ndcg@10", "10"), ("p@5_4star", "p4")):
            for group, ws in (("acord", ORDER[:3]), ("typo", ORDER[3:6])):
                row[group + tag] = sum(100 * bw[w]["mean"][metric] for w in ws) / 3
        out[v["name"]] = row
    return out


def main():
    folder = sys.argv[1]
    runs = {}
    for path in sorted(glob.glob(f"{folder}/cv_*_seed*.json")):
        arm, seed = path.rsplit("/", 1)[1][3:-5].split("_seed")
        runs[(arm, seed)] = means(path)
        for name, row in runs[(arm, seed)].items():
            cells = " ".join(f"{w} {row[w]:.2f}" for w in ORDER if w in row)
            print(f"{arm:3s} seed {seed:2s} {name[:24]:24s} {cells} | ACORD {row['acord']:.2f} "
                  f"typo {row['typo']:.2f} | NDCG@10 {row['acord10']:.2f} / {row['typo10']:.2f} "
                  f"| 4*P@5 {row['acordp4']:.2f} / {row['typop4']:.2f}")
    learned = "learned (all features)"
    for group in ("acord", "typo", "own_u", "own_r"):
        deltas = [runs[("on", s)][learned][group] - runs[("off", s)][learned][group]
                  for s in ("42", "1") if ("on", s) in runs and ("off", s) in runs]
        if deltas:
            print(f"two-seed change, {group}: {sum(deltas) / len(deltas):+.2f}")


if __name__ == "__main__":
    main()
