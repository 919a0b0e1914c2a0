#!/usr/bin/env python3
"""Blind-judge packets of what two (or more) systems serve first over the whole ACORD library
for requests in writers' own words.

    python3 make_packets.py OUT [--judged ROUND_DIR] SYSTEM=RUN_DIR...

With `--judged`, a packet holds only the clauses that ROUND_DIR's judgements lack (a later
round adding a system judges only what is new).

Each RUN_DIR holds `runK_queries_own_X.tsv` runs (`folds.py`'s commands, or the same with
`--pipeline hybrid`). The requests: ACORD's 57 train + valid query ids sorted, shuffled with
seed 7; `own_e` gets the first 12, `own_at` the next 12, `own_ax` the next 12 (36 distinct
queries, each in one writer's words). For each request the union of every system's first five
is shuffled (seed 7) with no system named and split into three packets of 12 requests
(`packet_0.json` … `packet_2.json`); `key.json` keeps each system's ids, best first, and
`requests.json` each request's query id and writer. Judges
return `[{"query": REQUEST_TEXT, "id": CLAUSE_ID, "stars": 1-5}, ...]`; `score.py` in
`../served_judge/` reads the key and the judgements.
"""
import glob
import json
import random
import sys
from pathlib import Path

from runs import ACORD, read_run

WRITERS = ("own_e", "own_at", "own_ax")
PER_WRITER = 12


def first_five(run_dir, writer):
    ranked = {}
    for path in glob.glob(f"{run_dir}/run*_queries_{writer}.tsv"):
        ranked.update(read_run(path))
    return {q: [c for _, c in sorted(r)[:5]] for q, r in ranked.items()}


def main():
    out = Path(sys.argv[1])
    args = sys.argv[2:]
    judged = set()
    if args and args[0] == "--judged":
        for path in glob.glob(f"{args[1]}/judged_*.json"):
            judged.update((j["query"], j["id"]) for j in json.load(open(path)))
        args = args[2:]
    systems = dict(arg.split("=", 1) for arg in args)
    out.mkdir(parents=True, exist_ok=True)
    texts = {}
    with open(f"{ACORD}/corpus.jsonl") as f:
        for line in f:
            c = json.loads(line)
            texts[c["_id"]] = c["text"]
    ids = sorted(json.loads(l)["_id"] for l in open(f"{ACORD}/queries.jsonl") if l.strip())
    random.Random(7).shuffle(ids)
    rng = random.Random(7)
    key, meta, packets = {}, {}, [[], [], []]
    n = 0
    for w, writer in enumerate(WRITERS):
        words = {}
        for line in open(f"scripts/experiments/own_words/queries_{writer}.jsonl"):
            if line.strip():
                q = json.loads(line)
                words[q["_id"]] = q["text"]
        served = {s: first_five(d, writer) for s, d in systems.items()}
        for qid in ids[w * PER_WRITER:(w + 1) * PER_WRITER]:
            request = words[qid]
            key[request] = {s: served[s][qid] for s in systems}
            meta[request] = {"query_id": qid, "writer": writer}
            union = sorted({c for s in systems for c in served[s][qid]} - {c for q, c in judged if q == request})
            rng.shuffle(union)
            packets[n % 3].append({"query": request, "clauses": [{"id": c, "text": texts[c]} for c in union]})
            n += 1
    json.dump(key, open(out / "key.json", "w"), indent=1)
    json.dump(meta, open(out / "requests.json", "w"), indent=1)
    for j, packet in enumerate(packets):
        json.dump(packet, open(out / f"packet_{j}.json", "w"), indent=1)
        print(f"packet_{j}.json: {len(packet)} requests, {sum(len(p['clauses']) for p in packet)} clauses")


if __name__ == "__main__":
    main()
