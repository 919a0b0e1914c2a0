#!/usr/bin/env python3
"""Fold models for measuring what is *served* over the whole ACORD library for held-out queries.

`train --cv` ranks only the clauses judged for a query (ACORD's condensed protocol). A lawyer's
search ranks the whole library. This script splits the 57 train + valid queries into five folds
by query id (a seeded shuffle), writes each fold's training and held-out ratings, and prints
the commands that train each fold's ranker exactly as shipped on the other four folds and serve
the held-out queries over the whole library (`eval --protocol full --run-out`), in every query
file given. `score.py` reads the runs.

    python3 folds.py OUT [--seed 42] [--train-args ARGS] QUERY_FILE...  > commands.sh
"""
import argparse
import csv
import os
import random

ACORD = "../shared/data/acord"


def read_qrels(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f, delimiter="\t"))
    return rows[0], rows[1:]


MASK = (1 << 64) - 1


def splitmix_shuffle(items, seed):
    """`precedent_ml::SplitMix(seed).shuffle`: Fisher-Yates from the end, SplitMix64 draws."""
    state = seed & MASK
    for i in range(len(items) - 1, 0, -1):
        state = (state + 0x9E3779B97F4A7C15) & MASK
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        z ^= z >> 31
        j = z % (i + 1)
        items[i], items[j] = items[j], items[i]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("queries", nargs="+")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--bin", default="target/release/precedent")
    ap.add_argument("--as-cv", action="store_true",
                    help="the folds `train --cv 5 --seed SEED` draws (precedent_learn::cv::assign_folds)")
    ap.add_argument("--train-args", default="", help="more `train` arguments, e.g. '--served-negatives 500'")
    args = ap.parse_args()
    header, rows = read_qrels(f"{ACORD}/qrels/train.tsv")
    rows += read_qrels(f"{ACORD}/qrels/valid.tsv")[1]
    ids = sorted({r[0] for r in rows}, key=lambda q: q.encode("utf-8"))
    if args.as_cv:
        splitmix_shuffle(ids, args.seed)
    else:
        random.Random(args.seed).shuffle(ids)
    fold_of = {q: i % 5 for i, q in enumerate(ids)}
    os.makedirs(args.out, exist_ok=True)
    for k in range(5):
        for part, keep in (("train", lambda q: fold_of[q] != k), ("test", lambda q: fold_of[q] == k)):
            with open(f"{args.out}/fold{k}_{part}.tsv", "w", newline="") as f:
                w = csv.writer(f, delimiter="\t", lineterminator="\n")
                w.writerow(header)
                w.writerows(r for r in rows if keep(r[0]))
    wordings = " ".join(f"--queries {ACORD}/queries{s}.jsonl" for s in ("", "_medium", "_long"))
    for k in range(5):
        print(
            f"{args.bin} train --corpus {ACORD}/corpus.jsonl {wordings} --qrels {args.out}/fold{k}_train.tsv"
            f" --without-rule inclusion --without-rule damages-waiver --cuad ../shared/data/cuad"
            f" --out {args.out}/model{k} --quiet {args.train_args}".rstrip()
        )
        for qf in args.queries:
            name = os.path.basename(qf).removesuffix(".jsonl")
            print(
                f"{args.bin} eval --corpus {ACORD}/corpus.jsonl --index .precedent/acord --queries {qf}"
                f" --qrels {args.out}/fold{k}_test.tsv --protocol full --model-dir {args.out}/model{k}"
                f" --run-out {args.out}/run{k}_{name}.tsv --quiet"
            )


if __name__ == "__main__":
    main()
