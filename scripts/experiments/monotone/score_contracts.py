#!/usr/bin/env python3
"""Scores run_contracts.sh's runs (docs/experiments/ranking.md, "The contracts ranker under the
same constraint"): per arm and seed, NDCG@5 on the ingested library (each wording and their
mean) and on the hand-cut clauses (mean over wordings), the change against shipped, and the
protocol's test (stage 1 with one seed, stage 2 with both).

    python3 scripts/experiments/monotone/score_contracts.py scripts/experiments/monotone/runs/contracts
"""
import re
import sys
from pathlib import Path


def read(path):
    text = path.read_text()
    hand = re.search(r"^learned \(without rating-memory\)\s+([\d.]+)", text, re.M)
    lib = {}
    for w in ["short", "medium", "long", "mean of wordings"]:
        m = re.search(rf"^learned without rating-memory, 5-fold CV by query, {w}\s+([\d.]+)", text, re.M)
        if m:
            lib[w] = float(m.group(1))
    if not hand or "mean of wordings" not in lib:
        return None
    return float(hand.group(1)), lib


def main():
    runs = Path(sys.argv[1])
    got = {}
    for arm in ["shipped", "monotone"]:
        for seed in [42, 1]:
            path = runs / f"{arm}_seed{seed}.txt"
            if path.exists() and (r := read(path)):
                got[(arm, seed)] = r
    seeds = [s for s in [42, 1] if ("shipped", s) in got and ("monotone", s) in got]
    print("| arm | seed | ingested short / medium / long | ingested mean | hand-cut mean |")
    print("|---|---|---|---|---|")
    for s in seeds:
        for arm in ["shipped", "monotone"]:
            hand, lib = got[(arm, s)]
            print(f"| {arm} | {s} | {lib['short']:.1f} / {lib['medium']:.1f} / {lib['long']:.1f} | "
                  f"{lib['mean of wordings']:.1f} | {hand:.1f} |")
    if not seeds:
        return
    d_lib = sum(got[("monotone", s)][1]["mean of wordings"] - got[("shipped", s)][1]["mean of wordings"] for s in seeds) / len(seeds)
    d_hand = sum(got[("monotone", s)][0] - got[("shipped", s)][0] for s in seeds) / len(seeds)
    stage = "stage 2 (retrain the contracts ranker)" if len(seeds) == 2 else "stage 1 (go on to seed 1)"
    ok = d_lib >= 0.5 and d_hand >= -0.5
    print(f"{stage} over seeds {seeds}: ingested {d_lib:+.2f} (needs >= +0.5), hand-cut {d_hand:+.2f} "
          f"(needs >= -0.5): {'PASS' if ok else 'FAIL'}")


if __name__ == "__main__":
    main()
