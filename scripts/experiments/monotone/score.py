#!/usr/bin/env python3
"""Scores run.sh's runs (docs/experiments/ranking.md, "Monotone trees"): per arm, NDCG@5 on
ACORD's three wordings (mean) and on the scored writers (mean), per seed and two-seed, the
change against the shipped arm, and the protocol's test.

    python3 scripts/experiments/monotone/score.py scripts/experiments/monotone/runs/stage1 [confirm]

Stage 1 test: the monotone arm's writers' mean at least +0.5 over shipped, ACORD's mean no more
than 0.3 below. Stage 2 (`confirm`): writers' mean at least shipped's, ACORD's no more than 0.3
below.
"""
import json
import sys
from pathlib import Path

ACORD = ["short", "medium", "long"]
SEEDS = [42, 1]
LEARNED = "learned (all features)"


def ndcg(variant, wording, at=5):
    return 100 * variant["by_wording"][wording]["mean"][f"ndcg@{at}"]


def main():
    runs = Path(sys.argv[1])
    confirm = len(sys.argv) > 2 and sys.argv[2] == "confirm"
    arms = [a for a in ["shipped", "boost", "monotone"] if all((runs / f"{a}_seed{s}.json").exists() for s in SEEDS)]
    data = {a: {s: json.loads((runs / f"{a}_seed{s}.json").read_text()) for s in SEEDS} for a in arms}
    first = data[arms[0]][SEEDS[0]]
    writers = [w for w in first["wordings"] if w not in ACORD]
    learned = {a: {s: {v["name"]: v for v in data[a][s]["variants"]}[LEARNED] for s in SEEDS} for a in arms}

    def means(a, s):
        v = learned[a][s]
        return (sum(ndcg(v, w) for w in ACORD) / 3, sum(ndcg(v, w) for w in writers) / len(writers))

    two = {a: tuple(sum(means(a, s)[i] for s in SEEDS) / 2 for i in (0, 1)) for a in arms}
    print(f"| arm | ACORD mean (42 / 1) | two-seed | Δ ACORD | writers' mean (42 / 1) | two-seed | Δ writers | "
          f"{' / '.join(ACORD + writers)} (two-seed) | NDCG@10 / 4★P@5 ACORD (two-seed) |")
    print("|---|---|---|---|---|---|---|---|---|")
    base = two.get("shipped")
    for a in arms:
        per = [means(a, s) for s in SEEDS]
        each = " / ".join(f"{sum(ndcg(learned[a][s], w) for s in SEEDS) / 2:.1f}" for w in ACORD + writers)
        n10 = sum(ndcg(learned[a][s], w, 10) for s in SEEDS for w in ACORD) / 6
        p5 = sum(100 * learned[a][s]["by_wording"][w]["mean"]["p@5_4star"] for s in SEEDS for w in ACORD) / 6
        da = f"{two[a][0] - base[0]:+.2f}" if base else ""
        dw = f"{two[a][1] - base[1]:+.2f}" if base else ""
        print(f"| {a} | {per[0][0]:.2f} / {per[1][0]:.2f} | {two[a][0]:.2f} | {da} | {per[0][1]:.2f} / {per[1][1]:.2f} | "
              f"{two[a][1]:.2f} | {dw} | {each} | {n10:.1f} / {p5:.1f} |")
    hybrid = {v["name"]: v for v in data[arms[0]][SEEDS[0]]["variants"]}.get("hybrid rrf alone")
    if hybrid:
        print("hybrid alone: " + ", ".join(f"{w} {ndcg(hybrid, w):.1f}" for w in ACORD + writers))
    if base and "monotone" in two:
        da, dw = two["monotone"][0] - base[0], two["monotone"][1] - base[1]
        need = 0.0 if confirm else 0.5
        ok = dw >= need and da >= -0.3
        stage = "stage 2 (keep)" if confirm else "stage 1 (go to stage 2)"
        print(f"{stage}: writers {dw:+.2f} (needs >= {need:+.1f}), ACORD {da:+.2f} (needs >= -0.3): {'PASS' if ok else 'FAIL'}")


if __name__ == "__main__":
    main()
