#!/usr/bin/env python3
"""Scores "A lawyer's marks on the first page" (docs/experiments/ranking.md) from the reports of
run_marks.sh: residual NDCG@5 / NDCG@10 / 4-star P@5 per arm, ACORD's three wordings and the 27
development writers, per seed and two-seed, and the protocol's keep decisions.

    python3 scripts/experiments/own_words/score_marks.py scripts/experiments/own_words/runs/marks
"""
import json
import sys
from pathlib import Path

ACORD = ["short", "medium", "long"]
ARMS = [
    ("no marks", "learned, after the first page (no marks)"),
    ("liked", "learned + liked marks, after the first page"),
    ("liked + unliked", "learned + liked and unliked marks, after the first page"),
]
SEEDS = [42, 1]


def metric(variant, wording, key):
    value = variant["by_wording"][wording]["mean"][key]
    return 100 * (value or 0.0)


def main():
    runs = Path(sys.argv[1])
    reports = {s: json.loads((runs / f"seed{s}.json").read_text()) for s in SEEDS}
    writers = [w for w in reports[42]["wordings"] if w.startswith("own_")]
    by = {s: {v["name"]: v for v in reports[s]["variants"]} for s in SEEDS}

    def mean(seed, arm, wordings, key="ndcg@5"):
        return sum(metric(by[seed][arm], w, key) for w in wordings) / len(wordings)

    print("| arm | seed | short | medium | long | ACORD mean | NDCG@10 | 4★P@5 | writers' mean (27) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for label, arm in ARMS:
        for s in SEEDS:
            cells = [f"{metric(by[s][arm], w, 'ndcg@5'):.2f}" for w in ACORD]
            print(f"| {label} | {s} | " + " | ".join(cells)
                  + f" | {mean(s, arm, ACORD):.2f} | {mean(s, arm, ACORD, 'ndcg@10'):.2f}"
                  + f" | {mean(s, arm, ACORD, 'p@5_4star'):.2f} | {mean(s, arm, writers):.2f} |")
    full = "learned (all features)"
    print()
    print("Full ranking (not residual), for reference: ACORD mean "
          + " / ".join(f"{mean(s, full, ACORD):.2f}" for s in SEEDS)
          + ", writers " + " / ".join(f"{mean(s, full, writers):.2f}" for s in SEEDS))
    base, liked, both = (a for _, a in ARMS)
    gains = [mean(s, liked, ACORD) - mean(s, base, ACORD) for s in SEEDS]
    per_wording = {w: sum(metric(by[s][liked], w, "ndcg@5") - metric(by[s][base], w, "ndcg@5")
                          for s in SEEDS) / 2 for w in ACORD}
    keep_like = all(g >= 1.0 for g in gains) and all(d >= 0 for d in per_wording.values())
    print(f"liked vs no marks, ACORD mean: {gains[0]:+.2f} (seed 42), {gains[1]:+.2f} (seed 1); "
          + "per wording two-seed " + ", ".join(f"{w} {d:+.2f}" for w, d in per_wording.items()))
    print(f"  --like ships: {keep_like}")
    extra = sum(mean(s, both, ACORD) - mean(s, liked, ACORD) for s in SEEDS) / 2
    writers_extra = sum(mean(s, both, writers) - mean(s, liked, writers) for s in SEEDS) / 2
    writers_gain = sum(mean(s, liked, writers) - mean(s, base, writers) for s in SEEDS) / 2
    print(f"writers' mean, liked vs no marks (two-seed): {writers_gain:+.2f}")
    print(f"liked + unliked vs liked: ACORD {extra:+.2f}, writers {writers_extra:+.2f} (two-seed)")
    print(f"  --unlike ships: {keep_like and extra >= 0.3 and writers_extra >= 0}")


if __name__ == "__main__":
    main()
