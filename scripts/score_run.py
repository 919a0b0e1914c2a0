#!/usr/bin/env python3
"""Independent scorer for Precedent runs: pytrec_eval (trec_eval) for NDCG, plain Python for the
ACORD-specific metrics. Used by the golden tests and to check `precedent eval --json-out`.

    python3 scripts/score_run.py --qrels QRELS --run RUN [--queries QUERIES.jsonl]
        [--protocol condensed|full] [--per-query-out FILE] [--compare SUMMARY.json]

Files are read with Python's csv module (tab delimiter, '"' quote), independently of the Rust
readers. Queries of the qrels that the run does not mention get 0 for every metric (trec_eval -c).
"""
import argparse
import csv
import json
import sys

import pytrec_eval


def read_tsv(path, cols):
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.reader(f, delimiter="\t", quotechar='"')
        header = next(reader)
        idx = [header.index(c) for c in cols]
        for row in reader:
            yield [row[i] for i in idx]


def kstar(ranked, judged, stars):
    threshold = stars - 1
    available = sum(1 for l in judged.values() if l >= threshold)
    if available == 0:
        return None
    hits = sum(1 for d in ranked[:5] if judged.get(d, -1) >= threshold)
    return hits / min(5, available)


def recall(ranked, judged, k=100, min_label=2):
    relevant = sum(1 for l in judged.values() if l >= min_label)
    if relevant == 0:
        return None
    return sum(1 for d in ranked[:k] if judged.get(d, -1) >= min_label) / relevant


def mean(values):
    values = [v for v in values if v is not None]
    return sum(values) / len(values) if values else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--qrels", required=True)
    ap.add_argument("--run", required=True)
    ap.add_argument("--queries")
    ap.add_argument("--protocol", default="condensed", choices=["condensed", "full"])
    ap.add_argument("--per-query-out")
    ap.add_argument("--compare")
    ap.add_argument("--tolerance", type=float, default=1e-9)
    args = ap.parse_args()

    qrels = {}
    for q, d, s in read_tsv(args.qrels, ["query-id", "corpus-id", "score"]):
        qrels.setdefault(q, {})[d] = int(s)
    run = {}
    for q, d, s in read_tsv(args.run, ["query-id", "corpus-id", "score"]):
        if q not in qrels:
            continue
        if args.protocol == "condensed" and d not in qrels[q]:
            continue
        run.setdefault(q, {})[d] = float(s)

    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.5,10"})
    trec = evaluator.evaluate(run)
    per_query = {}
    for q, judged in qrels.items():
        docs = run.get(q, {})
        # trec_eval order: score descending, then docno descending.
        ranked = [d for d, _ in sorted(docs.items(), key=lambda x: (x[1], x[0]), reverse=True)]
        m = trec.get(q, {})
        per_query[q] = {
            "ndcg@5": m.get("ndcg_cut_5", 0.0),
            "ndcg@10": m.get("ndcg_cut_10", 0.0),
            "p@5_3star": kstar(ranked, judged, 3),
            "p@5_4star": kstar(ranked, judged, 4),
            "p@5_5star": kstar(ranked, judged, 5),
            "recall@100": recall(ranked, judged),
        }
    names = ["ndcg@5", "ndcg@10", "p@5_3star", "p@5_4star", "p@5_5star", "recall@100"]
    overall = {n: mean(m[n] for m in per_query.values()) for n in names}
    result = {"overall": overall, "queries": len(per_query), "per_query": per_query}
    if args.queries:
        category = {}
        with open(args.queries, encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    obj = json.loads(line)
                    category[obj["_id"]] = (obj.get("metadata") or {}).get("category") or "(none)"
        groups = {}
        for q, m in per_query.items():
            groups.setdefault(category.get(q, "(none)"), []).append(m)
        result["per_category"] = {
            c: {n: mean(m[n] for m in ms) for n in names} for c, ms in groups.items()
        }
    if args.per_query_out:
        with open(args.per_query_out, "w") as f:
            json.dump(result, f, indent=1)
    print(json.dumps({"queries": result["queries"], "overall": overall}, indent=1))
    if args.compare:
        with open(args.compare) as f:
            ours = json.load(f)
        bad = []
        def check(where, a, b):
            if (a is None) != (b is None) or (a is not None and abs(a - b) > args.tolerance):
                bad.append(f"{where}: precedent {a} vs reference {b}")
        for n in names:
            check(f"overall {n}", ours["overall"][n], overall[n])
        for c, m in result.get("per_category", {}).items():
            for n in names:
                check(f"{c} {n}", ours["per_category"][c][n], m[n])
        for q, m in per_query.items():
            for n in names:
                check(f"query {q!r} {n}", ours["per_query"][q]["metrics"][n], m[n])
        if ours["queries"] != result["queries"]:
            bad.append(f"queries: {ours['queries']} vs {result['queries']}")
        if bad:
            print("MISMATCH:\n" + "\n".join(bad[:50]), file=sys.stderr)
            sys.exit(1)
        print(f"summary agrees with the reference scorer on {len(per_query)} queries")


if __name__ == "__main__":
    main()
