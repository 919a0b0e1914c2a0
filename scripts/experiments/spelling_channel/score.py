#!/usr/bin/env python3
"""NDCG@5 of the typing-error model's runs (run.sh): ACORD's and the misspelt copies' means per
run, and the two-seed changes the keep rule reads (after minus before).

    python3 scripts/experiments/spelling_channel/score.py OUT
"""
import glob
import json
import sys

GROUPS = {"acord": ["short", "medium", "long"],
          "typo": ["typo_short", "typo_medium", "typo_long"]}
LEARNED = "learned (all features)"


def means(path):
    for v in json.load(open(path))["variants"]:
        if v["name"] == LEARNED:
            bw = v["by_wording"]
            row = {w: 100 * bw[w]["mean"]["ndcg@5"] for ws in GROUPS.values() for w in ws}
            for group, ws in GROUPS.items():
                row[group] = sum(row[w] for w in ws) / len(ws)
            return row
    raise SystemExit(f"no {LEARNED!r} in {path}")


runs = {}
for path in sorted(glob.glob(f"{sys.argv[1]}/cv_*_seed*.json")):
    arm, seed = path.rsplit("/", 1)[1][3:-5].split("_seed")
    runs[(arm, seed)] = means(path)
for (arm, seed), row in sorted(runs.items()):
    print(f"{arm:6s} seed {seed:2s} " + " ".join(f"{k} {v:.2f}" for k, v in row.items()))
for key in list(GROUPS) + [w for ws in GROUPS.values() for w in ws]:
    deltas = [runs[("after", s)][key] - runs[("before", s)][key]
              for s in ("42", "1") if ("after", s) in runs and ("before", s) in runs]
    if deltas:
        print(f"two-seed change, {key}: {sum(deltas) / len(deltas):+.2f}")
