"""Two arms of served_arms.sh read on the CV's served line ("learned as served"): two-seed
NDCG@5 of `shipped` and ARM over ACORD's three wordings and the writers in the runs, the
change, and how many held-out texts per wording the clause-type rule read a type in (seed 42).

    python3 scripts/experiments/served_arms.py RUNS_DIR ARM
    (RUNS_DIR holds {shipped,ARM}_seed{42,1}.json (or .json.gz) and .txt; e.g.
    scripts/experiments/inherited_types/runs/dev inherited,
    scripts/experiments/memory_candidates/runs/dev memory,
    scripts/experiments/served_demotion_all/runs all)
"""
import gzip
import json
import os
import re
import sys

ACORD = ["short", "medium", "long"]
SERVED = "learned as served (hybrid's first 500)"


def load(runs, arm, seed):
    path = f"{runs}/{arm}_seed{seed}.json"
    report = json.load(open(path) if os.path.exists(path) else gzip.open(path + ".gz", "rt"))
    served = next(v for v in report["variants"] if v["name"] == SERVED)
    return {w: 100 * r["mean"]["ndcg@5"] for w, r in served["by_wording"].items()}


def firings(runs, arm):
    text = open(f"{runs}/{arm}_seed42.txt").read()
    line = re.search(r"^\s+clause-types\s+(.*)$", text, re.M)
    return line.group(1) if line else "(none)"


def main(runs, other):
    arms = {arm: [load(runs, arm, s) for s in (42, 1)] for arm in ("shipped", other)}
    wordings = list(arms["shipped"][0])
    writers = [w for w in wordings if w not in ACORD]
    two_seed = {arm: {w: sum(r[w] for r in rs) / len(rs) for w in wordings} for arm, rs in arms.items()}
    for arm in arms:
        t = two_seed[arm]
        acord = sum(t[w] for w in ACORD) / 3
        wr = sum(t[w] for w in writers) / len(writers)
        per = " ".join(f"{w} {t[w]:.2f}" for w in ACORD + writers)
        print(f"{arm:10} ACORD {acord:.2f} writers {wr:.2f} | {per}")
        for i, seed in enumerate((42, 1)):
            r = arms[arm][i]
            print(f"{'':10} seed {seed}: ACORD {sum(r[w] for w in ACORD) / 3:.2f} "
                  f"writers {sum(r[w] for w in writers) / len(writers):.2f}")
    d = {w: two_seed[other][w] - two_seed["shipped"][w] for w in wordings}
    print(f"change     ACORD {sum(d[w] for w in ACORD) / 3:+.2f} "
          f"writers {sum(d[w] for w in writers) / len(writers):+.2f} | "
          + " ".join(f"{w} {d[w]:+.2f}" for w in ACORD + writers))
    for arm in arms:
        print(f"clause-types reads a type ({arm}, held-out texts per wording): {firings(runs, arm)}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
