#!/usr/bin/env python3
"""Misspelt copies of ACORD's query wordings, made by a fixed, seeded procedure.

For each query of each input file, every word of five letters or more (not all capitals) gets,
with probability 0.3, one typing error: two adjacent letters swapped, a letter dropped, a letter
doubled, or a letter replaced by a neighbour on a QWERTY keyboard (never the first letter, as
people rarely mistype it). A query with such a word and no error yet gets one in a word drawn at
random, so every query is misspelt at least once. The generator of a query is seeded by its id
and the file's wording, so the output never depends on the order of the file.

The procedure was fixed before any score (docs/experiments/ranking.md, "Misspelt words corrected
against the library's words"). Usage:

    python3 scripts/experiments/typos/make_typos.py OUT_DIR ../shared/data/acord/queries.jsonl \
        ../shared/data/acord/queries_medium.jsonl ../shared/data/acord/queries_long.jsonl

writes OUT_DIR/queries_typo_{short,medium,long}.jsonl with `metadata.format` typo_short, ...
"""
import json
import random
import re
import sys
import zlib
from pathlib import Path

RATE = 0.3
MIN_LETTERS = 5
ROWS = ["qwertyuiop", "asdfghjkl", "zxcvbnm"]


def neighbours(c):
    lower = c.lower()
    for r, row in enumerate(ROWS):
        i = row.find(lower)
        if i < 0:
            continue
        near = set()
        for rr in (r - 1, r, r + 1):
            if 0 <= rr < len(ROWS):
                for ii in (i - 1, i, i + 1):
                    if 0 <= ii < len(ROWS[rr]) and ROWS[rr][ii] != lower:
                        near.add(ROWS[rr][ii])
        near = sorted(near)
        return [n.upper() if c.isupper() else n for n in near]
    return []


def mistype(word, rng):
    kinds = ["swap", "drop", "double", "neighbour"]
    while True:
        kind = rng.choice(kinds)
        i = rng.randrange(1, len(word))
        if kind == "swap" and i + 1 < len(word) and word[i] != word[i + 1]:
            return word[:i] + word[i + 1] + word[i] + word[i + 2:]
        if kind == "drop":
            return word[:i] + word[i + 1:]
        if kind == "double":
            return word[:i] + word[i] + word[i:]
        if kind == "neighbour":
            near = neighbours(word[i])
            if near:
                return word[:i] + rng.choice(near) + word[i + 1:]


def misspell(text, rng):
    words = [m for m in re.finditer(r"[A-Za-z]+", text)
             if len(m.group()) >= MIN_LETTERS and not m.group().isupper()]
    chosen = {m.start() for m in words if rng.random() < RATE}
    if words and not chosen:
        chosen = {rng.choice(words).start()}
    out, last = [], 0
    for m in words:
        if m.start() in chosen:
            out.append(text[last:m.start()])
            out.append(mistype(m.group(), rng))
            last = m.end()
    out.append(text[last:])
    return "".join(out)


def main():
    out_dir = Path(sys.argv[1])
    out_dir.mkdir(parents=True, exist_ok=True)
    for path, wording in zip(sys.argv[2:], ["short", "medium", "long"]):
        rows = [json.loads(line) for line in open(path, encoding="utf-8") if line.strip()]
        with open(out_dir / f"queries_typo_{wording}.jsonl", "w", encoding="utf-8") as f:
            for row in rows:
                rng = random.Random(zlib.crc32(f"{wording}:{row['_id']}".encode()))
                meta = dict(row.get("metadata") or {})
                meta["format"] = f"typo_{wording}"
                out = dict(row, text=misspell(row["text"], rng), metadata=meta)
                f.write(json.dumps(out, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
