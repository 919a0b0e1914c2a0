"""The 4- and 5-star clauses of the queries a request votes for, as served candidates
(docs/experiments/ranking.md): two-seed NDCG@5 of the CV's served line ("learned as served"),
shipped against memory, over ACORD's three wordings and the writers in the runs.

    python3 scripts/experiments/memory_candidates/score.py RUNS_DIR
    (RUNS_DIR holds {shipped,memory}_seed{42,1}.json (or .json.gz) and .txt, as run.sh
    writes them; the documented runs are in runs/dev)
"""
import gzip
import json
import os
import sys

ACORD = ["short", "medium", "long"]
SERVED = "learned as served (hybrid's first 500)"


def load(runs, arm, seed):
    path = f"{runs}/{arm}_seed{seed}.json"
    report = json.load(open(path) if os.path.exists(path) else gzip.open(path + ".gz", "rt"))
    served = next(v for v in report["variants"] if v["name"] == SERVED)
    return {w: 100 * r["mean"]["ndcg@5"] for w, r in served["by_wording"].items()}


def main(runs):
    arms = {arm: [load(runs, arm, s) for s in (42, 1)] for arm in ("shipped", "memory")}
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
    d = {w: two_seed["memory"][w] - two_seed["shipped"][w] for w in wordings}
    print(f"change     ACORD {sum(d[w] for w in ACORD) / 3:+.2f} "
          f"writers {sum(d[w] for w in writers) / len(writers):+.2f} | "
          + " ".join(f"{w} {d[w]:+.2f}" for w in ACORD + writers))


if __name__ == "__main__":
    main(sys.argv[1])
