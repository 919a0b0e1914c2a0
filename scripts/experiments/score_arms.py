#!/usr/bin/env python3
"""Scores a two-stage protocol of learned_arms.sh's runs: an arm against the shipped ranker
(docs/experiments/ranking.md: "Two learners blended", "Word dropout on the training queries").

    score_arms.py ARM stage1   ARM's runs in scripts/experiments/ARM/runs/stage1 against the
                               shipped arm's reports in monotone/runs/stage1 and monotone/runs/reserve
                               (the same command; merged by wording), on the six used writers
    score_arms.py ARM stage2   scripts/experiments/ARM/runs/stage2, both arms, own_ah–own_aj
    score_arms.py ARM fresh    scripts/experiments/ARM/runs/fresh, both arms, own_ak–own_am (a
                               reading fix: writers −0.1 at most, ACORD −0.1 at most)
    score_arms.py ARM fresh2   the same on own_an–own_ap
    score_arms.py ARM stage1p  stage 1 of "The requester's pronouns": both arms in
                               scripts/experiments/ARM/runs/stage1 on the six read writers with the
                               most pronouns (+0.3 on them, ACORD -0.1 at most)
    score_arms.py ARM new3     its second configuration (without "i"): both arms in
                               scripts/experiments/ARM/runs/new on own_aq–own_as (+0.3 on them,
                               ACORD equal)
    score_arms.py ARM glossary2  "Plain words in the glossary, second round": both arms in
                               scripts/experiments/ARM/runs/new on own_at–own_av (+0.3 on them,
                               ACORD unchanged)
    score_arms.py ARM glossary3  its third round: both arms in scripts/experiments/ARM/runs/new
                               on own_aw–own_ay (+0.3 on them, ACORD unchanged)
    score_arms.py ARM record6  that configuration on stage 1's six writers, for the record: the
                               arm in runs/stage1_noi against stage 1's shipped arm
    score_arms.py null_noise_N null  a null feature's run (scripts/experiments/null_noise/runs/stage1)
                               against the shipped arm of soft_coverage/runs/stage1, as stage 1b
                               computes it (the +0.3 test printed is what stage 1 would say)
    score_arms.py ARM stage1b  stage 1 with the shipped arm rerun beside ARM in
                               scripts/experiments/ARM/runs/stage1 (today's readers, which changed
                               some used writers' readings after the monotone runs)

Per arm: NDCG@5 on ACORD's three wordings (mean) and on the scored writers (mean), per seed and
two-seed, the change against shipped, and the protocol's test (stage 1: writers +0.3 at least,
stage 2: writers at least level; ACORD −0.3 at most in both). Only the writers the stage names
are read: stage 1 never opens a report that holds own_ah–own_aj.
"""
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
MONOTONE = HERE / "monotone" / "runs"
ACORD = ["short", "medium", "long"]
SEEDS = [42, 1]
LEARNED = "learned (all features)"
# The six used writers stage 1 scores, and the six read writers with the most first- and
# second-person pronouns ("The requester's pronouns are not search words").
USED_SIX = ["own_ab", "own_ac", "own_ad", "own_ae", "own_af", "own_ag"]
PRONOUN_SIX = ["own_l", "own_m", "own_h", "own_i", "own_ap", "own_an"]
RESERVE = ["own_ah", "own_ai", "own_aj"]


def stages(arm):
    runs = HERE / arm / "runs"

    def paired(writers, folder, need, acord_floor=-0.3):
        """Both arms' reports in one folder of ARM's runs."""
        return {
            "writers": writers,
            "arms": {"shipped": [runs / folder], arm: [runs / folder]},
            "need": need,
            "acord_floor": acord_floor,
        }

    return {
        "stage1": {
            "writers": USED_SIX,
            "arms": {"shipped": [MONOTONE / "stage1", MONOTONE / "reserve"], arm: [runs / "stage1"]},
            "need": 0.3,
        },
        "stage1b": paired(USED_SIX, "stage1", 0.3),
        "stage1p": paired(PRONOUN_SIX, "stage1", 0.3, acord_floor=-0.1),
        "new3": paired(["own_aq", "own_ar", "own_as"], "new", 0.3, acord_floor=0.0),
        # "Plain words in the glossary, second round": three writers written for it.
        "glossary2": paired(["own_at", "own_au", "own_av"], "new", 0.3, acord_floor=0.0),
        "glossary3": paired(["own_aw", "own_ax", "own_ay"], "new", 0.3, acord_floor=0.0),
        "record6": {
            "writers": PRONOUN_SIX,
            "arms": {"shipped": [runs / "stage1"], arm: [runs / "stage1_noi"]},
            "need": 0.3,
            "acord_floor": 0.0,
        },
        "null": {
            "writers": USED_SIX,
            "arms": {
                "shipped": [HERE / "soft_coverage" / "runs" / "stage1"],
                arm: [HERE / "null_noise" / "runs" / "stage1"],
            },
            "need": 0.3,
        },
        "stage2": paired(RESERVE, "stage2", 0.0),
        # A reading fix on three writers written for it, non-inferiority: "fresh" for "A second
        # trigger inside an excluded phrase", "fresh2" for "Carve-out participles".
        "fresh": paired(["own_ak", "own_al", "own_am"], "fresh", -0.1, acord_floor=-0.1),
        "fresh2": paired(["own_an", "own_ao", "own_ap"], "fresh", -0.1, acord_floor=-0.1),
    }


def by_wording(arm, dirs, seed):
    """The learned variant's per-wording means, merged over the arm's reports at one seed."""
    merged = {}
    for d in dirs:
        report = json.loads((d / f"{arm}_seed{seed}.json").read_text())
        variant = {v["name"]: v for v in report["variants"]}[LEARNED]
        for wording, figures in variant["by_wording"].items():
            mean = figures["mean"]
            if wording in merged and wording in ACORD and abs(merged[wording]["ndcg@5"] - mean["ndcg@5"]) > 1e-9:
                sys.exit(f"{arm} seed {seed}: {wording} differs across {dirs}")
            merged[wording] = mean
    return merged


def main():
    if len(sys.argv) != 3:
        sys.exit(f"usage: score_arms.py ARM {'|'.join(stages('ARM'))}")
    arm = sys.argv[1]
    stage = stages(arm)[sys.argv[2]]
    writers = stage["writers"]
    figures = {a: {s: by_wording(a, dirs, s) for s in SEEDS} for a, dirs in stage["arms"].items()}

    def mean(a, s, words, metric="ndcg@5"):
        return 100 * sum(figures[a][s][w][metric] for w in words) / len(words)

    def two(a, words, metric="ndcg@5"):
        return sum(mean(a, s, words, metric) for s in SEEDS) / len(SEEDS)

    print(f"| arm | ACORD mean (42 / 1) | two-seed | writers' mean (42 / 1) | two-seed | "
          f"{' / '.join(ACORD + writers)} (two-seed) | ACORD NDCG@10 / 4★P@5 |")
    print("|---|---|---|---|---|---|---|")
    for a in figures:
        each = " / ".join(f"{two(a, [w]):.1f}" for w in ACORD + writers)
        print(f"| {a} | {mean(a, 42, ACORD):.2f} / {mean(a, 1, ACORD):.2f} | {two(a, ACORD):.2f} | "
              f"{mean(a, 42, writers):.2f} / {mean(a, 1, writers):.2f} | {two(a, writers):.2f} | {each} | "
              f"{two(a, ACORD, 'ndcg@10'):.1f} / {two(a, ACORD, 'p@5_4star'):.1f} |")
    da = two(arm, ACORD) - two("shipped", ACORD)
    dw = two(arm, writers) - two("shipped", writers)
    floor = stage.get("acord_floor", -0.3)
    ok = dw >= stage["need"] and da >= floor
    print(f"test: writers {dw:+.2f} (needs >= {stage['need']:+.1f}), ACORD {da:+.2f} (needs >= {floor:+.1f}): "
          f"{'PASS' if ok else 'FAIL'}")


if __name__ == "__main__":
    main()
