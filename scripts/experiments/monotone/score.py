#!/usr/bin/env python3
"""Scores run.sh's runs (docs/experiments/ranking.md, "Monotone trees"): per arm, NDCG@5 on
ACORD's three wordings (mean) and on the scored writers (mean), per seed and two-seed, the
change against the shipped arm, and the protocol's test.

    python3 scripts/experiments/monotone/score.py scripts/experiments/monotone/runs/stage1 [confirm|replace]

Stage 1 test: the monotone arm's writers' mean at least +0.5 over shipped, ACORD's mean no more
than 0.3 below. Stage 2 (`confirm`): writers' mean at least shipped's, ACORD's no more than 0.3
below. `replace` ("One constrained learner for the ACORD ranker"): writers' and ACORD's means
no more than 0.5 below shipped's, ACORD's NDCG@10 and 4★P@5 no more than 1.0 below.
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
    mode = sys.argv[2] if len(sys.argv) > 2 else "stage1"
    arms = [a for a in ["shipped", "boost", "monotone"] if all((runs / f"{a}_seed{s}.json").exists() for s in SEEDS)]
    data = {a: {s: json.loads((runs / f"{a}_seed{s}.json").read_text()) for s in SEEDS} for a in arms}
    first = data[arms[0]][SEEDS[0]]
    writers = [w for w in first["wordings"] if w not in ACORD]
    learned = {a: {s: {v["name"]: v for v in data[a][s]["variants"]}[LEARNED] for s in SEEDS} for a in arms}

    def means(a, s):
        v = learned[a][s]
        return (sum(ndcg(v, w) for w in ACORD) / 3, sum(ndcg(v, w) for w in writers) / len(writers))

    def secondary(a):
        n10 = sum(ndcg(learned[a][s], w, 10) for s in SEEDS for w in ACORD) / 6
        p5 = sum(100 * learned[a][s]["by_wording"][w]["mean"]["p@5_4star"] for s in SEEDS for w in ACORD) / 6
        return n10, p5

    two = {a: tuple(sum(means(a, s)[i] for s in SEEDS) / 2 for i in (0, 1)) for a in arms}
    print(f"| arm | ACORD mean (42 / 1) | two-seed | Δ ACORD | writers' mean (42 / 1) | two-seed | Δ writers | "
          f"{' / '.join(ACORD + writers)} (two-seed) | NDCG@10 / 4★P@5 ACORD (two-seed) |")
    print("|---|---|---|---|---|---|---|---|---|")
    base = two.get("shipped")
    for a in arms:
        per = [means(a, s) for s in SEEDS]
        each = " / ".join(f"{sum(ndcg(learned[a][s], w) for s in SEEDS) / 2:.1f}" for w in ACORD + writers)
        n10, p5 = secondary(a)
        da = f"{two[a][0] - base[0]:+.2f}" if base else ""
        dw = f"{two[a][1] - base[1]:+.2f}" if base else ""
        print(f"| {a} | {per[0][0]:.2f} / {per[1][0]:.2f} | {two[a][0]:.2f} | {da} | {per[0][1]:.2f} / {per[1][1]:.2f} | "
              f"{two[a][1]:.2f} | {dw} | {each} | {n10:.1f} / {p5:.1f} |")
    hybrid = {v["name"]: v for v in data[arms[0]][SEEDS[0]]["variants"]}.get("hybrid rrf alone")
    if hybrid:
        print("hybrid alone: " + ", ".join(f"{w} {ndcg(hybrid, w):.1f}" for w in ACORD + writers))
    if base and "monotone" in two:
        da, dw = two["monotone"][0] - base[0], two["monotone"][1] - base[1]
        if mode == "replace":
            (n10, p5), (b10, bp5) = secondary("monotone"), secondary("shipped")
            ok = dw >= -0.5 and da >= -0.5 and n10 - b10 >= -1.0 and p5 - bp5 >= -1.0
            print(f"replace: writers {dw:+.2f} (needs >= -0.5), ACORD {da:+.2f} (needs >= -0.5), "
                  f"NDCG@10 {n10 - b10:+.2f} and 4★P@5 {p5 - bp5:+.2f} (need >= -1.0): {'PASS' if ok else 'FAIL'}")
            return
        need = 0.0 if mode == "confirm" else 0.5
        ok = dw >= need and da >= -0.3
        stage = "stage 2 (keep)" if mode == "confirm" else "stage 1 (go to stage 2)"
        print(f"{stage}: writers {dw:+.2f} (needs >= {need:+.1f}), ACORD {da:+.2f} (needs >= -0.3): {'PASS' if ok else 'FAIL'}")


if __name__ == "__main__":
    main()
