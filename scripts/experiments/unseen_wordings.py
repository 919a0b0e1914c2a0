#!/usr/bin/env python3
"""Writes ACORD's train + valid queries in four phrasings that no ranker trains on, to measure
how the shipped configuration holds on wordings outside ACORD's three (issue #40).

Each template is applied to a query's short form (queries.jsonl); ids stay the same, so the same
ratings apply. The templates were fixed before any score (docs/experiments/ranking.md, "Wordings
nobody trained on"); a change made after reading their figures must be checked on new templates.

    python3 scripts/experiments/unseen_wordings.py ../shared/data/acord/queries.jsonl OUT_DIR
    # then: precedent train ... --queries OUT_DIR/queries_typed.jsonl ... --train-wordings short,medium,long
"""
import json
import re
import sys
from pathlib import Path

TEMPLATES = {
    # Typed fast: lowercase, no punctuation.
    "typed": lambda s: " ".join(re.sub(r"[^0-9a-z ]", " ", s.lower()).split()),
    # A question to a colleague.
    "question": lambda s: f"do we have precedent for {s}?",
    # A request to a search tool.
    "request": lambda s: f"find me language on {s}",
    # The deal it is for, which the ratings do not depend on.
    "deal": lambda s: f"{s} in a supply agreement",
}


def main():
    source, out = Path(sys.argv[1]), Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    queries = [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines() if line.strip()]
    for name, template in TEMPLATES.items():
        with open(out / f"queries_{name}.jsonl", "w", encoding="utf-8") as f:
            for q in queries:
                metadata = dict(q.get("metadata") or {}, format=name, short_form=q["text"])
                row = {"_id": q["_id"], "text": template(q["text"]), "metadata": metadata}
                f.write(json.dumps(row, ensure_ascii=False) + "\n")
        print(f"{out / f'queries_{name}.jsonl'}: {len(queries)} queries")


if __name__ == "__main__":
    main()
