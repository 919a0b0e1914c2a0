#!/usr/bin/env python3
"""Two-seed table of the nested rule-choice runs (docs/experiments/ranking.md, "The rule choice
read as served"): NDCG@5 per line, per wording and the three-wording mean, and the protocol's
decision (served-line choice as served against the judged-line choice as served).

    python3 scripts/experiments/served_nested/score.py runs/nested42.json.gz runs/nested1.json.gz
"""
import gzip
import json
import sys

WORDINGS = ["short", "medium", "long"]
JUDGED_AS_SERVED = "as served, rules chosen by inner CV on the judged line (nested)"
SERVED_AS_SERVED = "as served, rules chosen by inner CV as served (nested)"


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def main(paths):
    runs = [load(p) for p in paths]
    names = [v["name"] for v in runs[0]["variants"]]
    table = {}
    for name in names:
        per_seed = []
        for run in runs:
            v = next(x for x in run["variants"] if x["name"] == name)
            per_seed.append({w: 100 * v["by_wording"][w]["mean"]["ndcg@5"] for w in WORDINGS})
        table[name] = per_seed
    print(f"{'line':<66} " + " ".join(f"{w:>7}" for w in WORDINGS + ["mean"]) + "   per seed")
    for name, per_seed in table.items():
        avg = {w: sum(s[w] for s in per_seed) / len(per_seed) for w in WORDINGS}
        mean = sum(avg.values()) / 3
        seeds = " / ".join(f"{sum(s.values()) / 3:.2f}" for s in per_seed)
        print(f"{name:<66} " + " ".join(f"{avg[w]:7.2f}" for w in WORDINGS) + f" {mean:7.2f}   {seeds}")
    j, s = table[JUDGED_AS_SERVED], table[SERVED_AS_SERVED]
    diff = {w: sum(b[w] - a[w] for a, b in zip(j, s)) / len(j) for w in WORDINGS}
    mean = sum(diff.values()) / 3
    print("served-line choice minus judged-line choice, both as served: "
          + ", ".join(f"{w} {diff[w]:+.2f}" for w in WORDINGS) + f", mean {mean:+.2f}")
    passes = mean >= 0.0 and all(d >= -0.3 for d in diff.values())
    print("protocol: the served line " + ("becomes" if passes else "does not become") + " the protocol's line")


if __name__ == "__main__":
    main(sys.argv[1:])
