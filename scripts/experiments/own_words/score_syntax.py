#!/usr/bin/env python3
"""Scores "Queries in a research service's search syntax" (docs/experiments/ranking.md) from
the reports of run_syntax.sh: NDCG@5 per wording, base against syntax, per seed and two-seed,
and the protocol's rule.

    python3 scripts/experiments/own_words/score_syntax.py scripts/experiments/own_words/runs/syntax
"""
import json
import sys
from pathlib import Path

ACORD = ["short", "medium", "long"]
WRITERS = ["own_y", "own_z", "own_aa"]
SHIPPED = "learned (all features)"


def scores(path):
    d = json.loads(path.read_text())
    v = {x["name"]: x for x in d["variants"]}[SHIPPED]
    return {w: 100 * v["by_wording"][w]["mean"]["ndcg@5"] for w in ACORD + WRITERS}


def main():
    runs = Path(sys.argv[1])
    seeds = [s for s in (42, 1) if (runs / f"syntax_seed{s}.json").exists()]
    got = {(arm, s): scores(runs / f"{arm}_seed{s}.json") for arm in ("base", "syntax") for s in seeds}
    cols = ACORD + ["ACORD mean"] + WRITERS
    print("| arm | seed | " + " | ".join(cols) + " |")
    print("|---|---|" + "---|" * len(cols))
    two = {}
    for arm in ("base", "syntax"):
        for s in seeds:
            r = dict(got[(arm, s)])
            r["ACORD mean"] = sum(r[w] for w in ACORD) / 3
            print(f"| {arm} | {s} | " + " | ".join(f"{r[c]:.2f}" for c in cols) + " |")
            for c in cols:
                two.setdefault((arm, c), []).append(r[c])
    print()
    d = {c: sum(two[("syntax", c)]) / len(seeds) - sum(two[("base", c)]) / len(seeds) for c in cols}
    print("mean over seeds, syntax − base: " + ", ".join(f"{c} {d[c]:+.2f}" for c in cols))
    kept = d["own_z"] >= 1.0 and d["own_y"] >= -0.3 and d["own_aa"] >= -0.3 and d["ACORD mean"] >= -0.1
    print(f"rule (own_z ≥ +1.0, own_y and own_aa ≥ −0.3, ACORD ≥ −0.1) over {len(seeds)} seed(s): "
          f"{'kept' if kept else 'not kept'}")


if __name__ == "__main__":
    main()
