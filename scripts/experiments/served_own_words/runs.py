"""What the scripts beside this one share: ACORD's train + valid ratings and the served runs.

ACORD's qrels score 0..4 for 1..5 stars (a score of 1 is two stars); a run is `eval
--run-out`'s TSV (`query-id corpus-id rank score`, CSV quoting: query ids hold quotes).
"""
import csv
from collections import defaultdict

ACORD = "../shared/data/acord"


def acord_ratings():
    """query id -> clause id -> ACORD score (0..4), over train and valid."""
    ratings = defaultdict(dict)
    for split in ("train", "valid"):
        with open(f"{ACORD}/qrels/{split}.tsv", newline="") as f:
            for q, c, s in list(csv.reader(f, delimiter="\t"))[1:]:
                ratings[q][c] = int(s)
    return ratings


def read_run(path):
    """query id -> [(rank, clause id)] of one run file."""
    ranked = defaultdict(list)
    with open(path, newline="") as f:
        for q, c, rank, _ in list(csv.reader(f, delimiter="\t"))[1:]:
            ranked[q].append((int(rank), c))
    return ranked
