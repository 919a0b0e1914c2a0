"""The rule ablation on the served line (docs/experiments/ranking.md, "The query rules as
served"): two-seed NDCG@5 of each variant over ACORD's three wordings and over the three
writers, with the protocol's test (a rule is switched off if leaving it out, as served, raises
the writers' two-seed mean by at least 0.3 and lowers ACORD's by no more than 0.3).

    python3 scripts/experiments/served_rules/score.py CV42.json CV1.json
    (the runs behind the documented figures: runs/cv42.json.gz runs/cv1.json.gz)
"""
import gzip
import json
import sys

ACORD = ["short", "medium", "long"]
WRITERS = ["own_az", "own_ba", "own_bb"]


def ndcg5(variant, wording):
    return 100 * variant["by_wording"][wording]["mean"]["ndcg@5"]


def main(paths):
    opener = lambda p: gzip.open(p, "rt") if p.endswith(".gz") else open(p)
    runs = [{v["name"]: v for v in json.load(opener(p))["variants"]} for p in paths]
    names = list(runs[0])

    def mean(name, wordings):
        return sum(ndcg5(r[name], w) for r in runs for w in wordings) / (len(runs) * len(wordings))

    for line, base in [("learned", "learned (all features)"),
                       ("as served", "learned as served (hybrid's first 500)")]:
        print(f"== {line} ==")
        print(f"{'variant':45} {'ACORD':>6} {'dA':>6} {'writers':>7} {'dW':>6}  "
              + " ".join(f"{w:>6}" for w in ACORD + WRITERS) + "  off?")
        for name in names:
            if name != base and not (name.startswith(line + " without") or
                                     (line == "learned" and name == "hybrid rrf alone")):
                continue
            a, w = mean(name, ACORD), mean(name, WRITERS)
            da, dw = a - mean(base, ACORD), w - mean(base, WRITERS)
            per = " ".join(f"{sum(ndcg5(r[name], x) for r in runs) / len(runs):6.2f}"
                           for x in ACORD + WRITERS)
            off = "yes" if name != base and dw >= 0.3 and da >= -0.3 else ""
            print(f"{name[:45]:45} {a:6.2f} {da:+6.2f} {w:7.2f} {dw:+6.2f}  {per}  {off}")


if __name__ == "__main__":
    main(sys.argv[1:])
