#!/usr/bin/env python3
"""Word-dropout copies of ACORD's query wordings, for training only (docs/experiments/ranking.md,
"Word dropout on the training queries").

For each query of each input file, every whitespace-separated word is dropped with probability
0.3; a copy left with fewer than two words (or with every word) gets dropped words back, drawn at
random, until it has two (or loses one). The generator of a query is seeded by its id and the
file's wording, so the output never depends on the order of the file. Fixed before any score.

    python3 scripts/experiments/dropout/make_dropout.py OUT_DIR ../shared/data/acord/queries.jsonl \
        ../shared/data/acord/queries_medium.jsonl ../shared/data/acord/queries_long.jsonl

writes OUT_DIR/queries_dropout_{short,medium,long}.jsonl with `metadata.format` dropout_short, ...
"""
import json
import random
import sys
import zlib
from pathlib import Path

RATE = 0.3
MIN_WORDS = 2


def drop(text, rng):
    words = text.split()
    keep = [rng.random() >= RATE for _ in words]
    if all(keep) and len(words) > MIN_WORDS:
        keep[rng.randrange(len(words))] = False
    while sum(keep) < min(MIN_WORDS, len(words)):
        keep[rng.choice([i for i, k in enumerate(keep) if not k])] = True
    return " ".join(w for w, k in zip(words, keep) if k)


def main():
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    for path in sys.argv[2:]:
        rows = [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]
        wording = rows[0].get("metadata", {}).get("format", "short")
        lines = []
        for row in rows:
            rng = random.Random(zlib.crc32(f"{row['_id']}\t{wording}".encode()))
            meta = dict(row.get("metadata", {}))
            meta["format"] = f"dropout_{wording}"
            lines.append(json.dumps({"_id": row["_id"], "text": drop(row["text"], rng), "metadata": meta}))
        (out / f"queries_dropout_{wording}.jsonl").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
