#!/usr/bin/env python3
"""Builds the blind judge's packets: each system's served first five for each request.

Usage: make_packets.py BIN LIBRARY OUT_DIR
(e.g. target/release/precedent .precedent/acord /tmp/judge), run from the checkout.

Reads queries.txt beside this script (one request per line), runs `search -k 5 --json` on
LIBRARY with each system's ranker (models/acord-ranker, models/contracts-ranker), and writes
OUT_DIR/key.json (each system's ids, best first) and OUT_DIR/packet_0.json, packet_1.json:
alternate requests, each with CUAD's description of the category and the union of the systems'
clauses shuffled (seed 7), no system named. Judges write {"query", "id", "stars"} lists that
score.py reads.
"""
import csv
import json
import random
import subprocess
import sys
from pathlib import Path

SYSTEMS = {"acord-ranker": "models/acord-ranker", "contracts-ranker": "models/contracts-ranker"}


def main():
    binary, library, out = sys.argv[1], sys.argv[2], Path(sys.argv[3])
    out.mkdir(parents=True, exist_ok=True)
    here = Path(__file__).parent
    requests = [l.strip() for l in open(here / "queries.txt") if l.strip()]
    descriptions = {}
    with open("../shared/data/cuad/category_descriptions.csv", encoding="utf-8-sig") as f:
        for row in csv.DictReader(f):
            name = row["Category (incl. context and answer)"].replace("Category: ", "").strip()
            descriptions[name] = row["Description"].replace("Description: ", "").strip()
    random.seed(7)
    key, packets = {}, [[], []]
    for i, request in enumerate(requests):
        texts = {}
        for system, model in SYSTEMS.items():
            found = subprocess.run(
                [binary, "search", "--index", library, request, "-k", "5", "--model-dir", model, "--json"],
                check=True, capture_output=True, text=True,
            )
            hits = json.loads(found.stdout)["hits"]
            key.setdefault(request, {})[system] = [h["id"] for h in hits]
            for h in hits:
                texts.setdefault(h["id"], h["text"])
        clauses = list(texts.items())
        random.shuffle(clauses)
        packets[i % 2].append({
            "query": request,
            "definition": descriptions.get(request, ""),
            "clauses": [{"id": c, "text": t} for c, t in clauses],
        })
    json.dump(key, open(out / "key.json", "w"))
    for j, packet in enumerate(packets):
        json.dump(packet, open(out / f"packet_{j}.json", "w"), indent=1)


if __name__ == "__main__":
    main()
