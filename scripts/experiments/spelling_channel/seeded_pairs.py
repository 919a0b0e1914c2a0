#!/usr/bin/env python3
"""The misspelt words of the seeded typo copies, with the words they were made from.

The generator (scripts/experiments/typos/make_typos.py) changes letters inside words and never
adds or removes a word, so each copy aligns with its source wording word by word. Prints one
`typo<TAB>intended` line per differing lowercase word pair.

    python3 scripts/experiments/spelling_channel/seeded_pairs.py > seeded.tsv
"""
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
ACORD = ROOT.parent / "shared" / "data" / "acord"
COPIES = ROOT / "scripts" / "experiments" / "typos"
WORDING = {"short": "queries.jsonl", "medium": "queries_medium.jsonl", "long": "queries_long.jsonl"}


def texts(path):
    with open(path) as f:
        return {q["_id"]: q["text"] for q in map(json.loads, filter(str.strip, f))}


for wording, source in WORDING.items():
    original = texts(ACORD / source)
    for qid, typed in texts(COPIES / f"queries_typo_{wording}.jsonl").items():
        a, b = re.findall(r"[A-Za-z]+", typed), re.findall(r"[A-Za-z]+", original[qid])
        if len(a) != len(b):
            raise SystemExit(f"{wording} {qid!r}: the copy does not align word by word")
        for t, o in zip(a, b):
            if t != o:
                print(f"{t.lower()}\t{o.lower()}")
