#!/usr/bin/env python3
"""Scores a run of run_fresh_writers.sh ("The query rules and spelling correction on three
writers nobody read" and "... on three more writers", docs/experiments/ranking.md): the rule
ablation (each rule left out: ACORD's three-wording mean, the writers' mean, two-seed, and the
protocol's switch-off test), spelling on / off, and the shipped ranker on each writer.

    python3 scripts/experiments/own_words/score_fresh_writers.py scripts/experiments/own_words/runs/vwx
"""
import json
import sys
from pathlib import Path

ACORD = ["short", "medium", "long"]


def ndcg5(variant, wording):
    return 100 * variant["by_wording"][wording]["mean"]["ndcg@5"]


def means(variant):
    return (sum(ndcg5(variant, w) for w in ACORD) / 3, sum(ndcg5(variant, w) for w in WRITERS) / len(WRITERS))


def main():
    runs = Path(sys.argv[1])
    seeds = [42, 1]
    ablation = {s: json.loads((runs / f"ablation_seed{s}.json").read_text()) for s in seeds}
    global WRITERS
    WRITERS = [w for w in ablation[42]["wordings"] if w not in ACORD]
    names = [v["name"] for v in ablation[42]["variants"]]
    by = {s: {v["name"]: v for v in ablation[s]["variants"]} for s in seeds}
    shipped = "learned (all features)"
    base = [sum(means(by[s][shipped])[i] for s in seeds) / 2 for i in (0, 1)]
    print(f"| variant | ACORD mean (42 / 1) | two-seed | Δ ACORD | writers' mean (42 / 1) | two-seed | Δ writers | {' / '.join(WRITERS)} (two-seed) | switched off by the test |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name in names:
        per_seed = [means(by[s][name]) for s in seeds]
        a = sum(p[0] for p in per_seed) / 2
        w = sum(p[1] for p in per_seed) / 2
        per_writer = " / ".join(f"{sum(ndcg5(by[s][name], x) for s in seeds) / 2:.1f}" for x in WRITERS)
        rule = name.startswith("learned without")
        off = rule and (w - base[1] >= 0.3) and (a - base[0] >= -0.3)
        print(f"| {name} | {per_seed[0][0]:.2f} / {per_seed[1][0]:.2f} | {a:.2f} | {a - base[0]:+.2f} | "
              f"{per_seed[0][1]:.2f} / {per_seed[1][1]:.2f} | {w:.2f} | {w - base[1]:+.2f} | {per_writer} | "
              f"{'yes' if off else ('no' if rule else '')} |")
    spelling = {}
    for s in seeds:
        path = runs / f"no-spelling_seed{s}.json"
        if path.exists():
            d = json.loads(path.read_text())
            spelling[s] = {v["name"]: v for v in d["variants"]}[shipped]
    if len(spelling) == len(seeds):
        on = [means(by[s][shipped]) for s in seeds]
        off = [means(spelling[s]) for s in seeds]
        on_w, off_w = sum(p[1] for p in on) / 2, sum(p[1] for p in off) / 2
        on_a, off_a = sum(p[0] for p in on) / 2, sum(p[0] for p in off) / 2
        print(f"\nspelling on (shipped): ACORD {on_a:.2f}, writers {on_w:.2f} "
              f"({' / '.join(f'{sum(ndcg5(by[s][shipped], x) for s in seeds) / 2:.1f}' for x in WRITERS)})")
        print(f"--no-spelling:         ACORD {off_a:.2f}, writers {off_w:.2f} "
              f"({' / '.join(f'{sum(ndcg5(spelling[s], x) for s in seeds) / 2:.1f}' for x in WRITERS)})")
        print(f"switch spelling off by the test (off − on ≥ +0.3 on the writers): "
              f"{'yes' if off_w - on_w >= 0.3 else 'no'} ({off_w - on_w:+.2f})")
    for s in seeds:
        v = by[s][shipped]
        print(f"seed {s}: shipped NDCG@5 / NDCG@10 / 4★P@5 on the writers: "
              + ", ".join(f"{x} {100 * v['by_wording'][x]['mean']['ndcg@5']:.1f} / "
                          f"{100 * v['by_wording'][x]['mean']['ndcg@10']:.1f} / "
                          f"{100 * v['by_wording'][x]['mean']['p@5_4star']:.1f}" for x in WRITERS))
        h = by[s]["hybrid rrf alone"]
        print(f"seed {s}: hybrid alone on the writers: " + ", ".join(f"{x} {ndcg5(h, x):.1f}" for x in WRITERS))


if __name__ == "__main__":
    main()
