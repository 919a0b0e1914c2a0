#!/usr/bin/env python3
"""Median ratio of the spread of tree scores to the spread of exemplar cosines, per list kind
(docs/experiments/ranking.md, "The feedback weight, derived on the list it is applied to").

    python3 spreads.py runs/spreads42.fold*
"""
import statistics as st
import sys

rows = []
for path in sys.argv[1:]:
    for line in open(path):
        f = line.rstrip("\n").split("\t")
        rows.append((f[0], f[1], int(f[2]), *map(float, f[3:])))
print(f"{len(rows)} held-out entries; judged list size median {st.median(r[2] for r in rows)}")
for name, (ri, ci) in {"judged, std": (3, 4), "judged, IQR": (5, 6),
                       "served, std": (7, 8), "served, IQR": (9, 10)}.items():
    ratios = [r[ri] / r[ci] for r in rows if r[ci] > 0]
    by_wording = {w: st.median(r[ri] / r[ci] for r in rows if r[1] == w and r[ci] > 0)
                  for w in ("short", "medium", "long")}
    print(f"{name:<12} median ratio {st.median(ratios):6.2f}  (half {st.median(ratios) / 2:5.2f}); "
          + ", ".join(f"{w} {v:.2f}" for w, v in by_wording.items())
          + f"; median spreads: scores {st.median(r[ri] for r in rows):.3f}, cosines {st.median(r[ci] for r in rows):.4f}")
