#!/usr/bin/env python3
"""The blind judge's stars of what each system served, overall (as `../served_judge/score.py`
prints it), per writer, and split by whether any train or valid query rated the clause.

    python3 score_judged.py ROUND_DIR [JUDGED.json ...]

ROUND_DIR holds `key.json` and `requests.json` from `make_packets.py`; the judgements default
to ROUND_DIR/judged_*.json (more files may be given, e.g. a later round's).
"""
import glob
import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent / "served_judge"))
from score import ndcg5  # noqa: E402

from runs import acord_ratings  # noqa: E402


def main():
    round_dir = Path(sys.argv[1])
    judged = sys.argv[2:] or sorted(glob.glob(str(round_dir / "judged_*.json")))
    key = json.load(open(round_dir / "key.json"))
    meta = json.load(open(round_dir / "requests.json"))
    subprocess.run([sys.executable, str(HERE.parent / "served_judge" / "score.py"), str(round_dir / "key.json"), *judged], check=True)
    stars = {}
    for path in judged:
        for j in json.load(open(path)):
            stars.setdefault(j["query"], {})[j["id"]] = int(j["stars"])
    rated = {c for r in acord_ratings().values() for c in r}
    systems = sorted({s for lists in key.values() for s in lists})
    writers = sorted({m["writer"] for m in meta.values()})
    print(f"\n{'writer':<8} {'system':<16} {'mean stars':>10} {'>=4 stars':>9} {'NDCG@5':>7}")
    for w in writers:
        qs = [q for q in key if meta[q]["writer"] == w]
        for s in systems:
            mean = sum(sum(stars[q][c] for c in key[q][s]) / 5 for q in qs) / len(qs)
            good = sum(sum(stars[q][c] >= 4 for c in key[q][s]) / 5 for q in qs) / len(qs)
            nd = [n for n in (ndcg5(key[q][s], stars[q]) for q in qs) if n is not None]
            print(f"{w:<8} {s:<16} {mean:>10.2f} {100 * good:>8.1f}% {100 * sum(nd) / len(nd):>7.1f}")
    print(f"\n{'system':<16} {'unrated places':>14} {'their stars':>11} {'rated places':>12} {'their stars':>11}")
    for s in systems:
        u = [stars[q][c] for q in key for c in key[q][s] if c not in rated]
        r = [stars[q][c] for q in key for c in key[q][s] if c in rated]
        print(f"{s:<16} {len(u):>14} {sum(u) / max(1, len(u)):>11.2f} {len(r):>12} {sum(r) / max(1, len(r)):>11.2f}")
    for a in systems:
        for b in systems:
            if a < b:
                sa = [sum(stars[q][c] for c in key[q][a]) for q in key]
                sb = [sum(stars[q][c] for c in key[q][b]) for q in key]
                print(f"\n{a} better than {b} on {sum(x > y for x, y in zip(sa, sb))} requests, "
                      f"worse on {sum(x < y for x, y in zip(sa, sb))}, level on {sum(x == y for x, y in zip(sa, sb))}")


if __name__ == "__main__":
    main()
