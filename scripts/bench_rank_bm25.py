#!/usr/bin/env python3
"""The peer for Precedent's BM25 benchmark: rank_bm25 (the ACORD paper's Python stack) on the same
corpus and queries, same machine. Prints build time, queries/s, latency and (condensed) NDCG so the
numbers can be put next to `precedent bench` / `precedent eval`.

    python3 scripts/bench_rank_bm25.py --corpus C --queries Q --qrels QRELS [--repeat 1]

Tokenisation mirrors Precedent's analyzer (alphanumeric runs, lowercase, Lucene stop words,
Snowball English stems via the `snowballstemmer` package when installed), so that the comparison
is about the engine, not the analyzer. rank_bm25's BM25Okapi uses k1=1.5, b=0.75 and its own idf
floor; we set k1=1.2 to match Lucene.
"""
import argparse
import csv
import json
import re
import statistics
import time

from rank_bm25 import BM25Okapi
import pytrec_eval

STOP = set("a an and are as at be but by for if in into is it no not of on or such that the their then there these they this to was will with".split())
try:
    import snowballstemmer
    _stem = snowballstemmer.stemmer("english").stemWord
except ImportError:  # still a fair speed comparison, slightly different terms
    _stem = lambda w: w
TOKEN = re.compile(r"\w+", re.UNICODE)


def analyze(text):
    return [_stem(t) for t in (m.lower() for m in TOKEN.findall(text)) if t not in STOP and len(t) <= 64]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--queries", required=True)
    ap.add_argument("--qrels", required=True)
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args()
    docs = [json.loads(l) for l in open(args.corpus, encoding="utf-8") if l.strip()]
    queries = {q["_id"]: q["text"] for q in (json.loads(l) for l in open(args.queries, encoding="utf-8") if l.strip())}
    qrels = {}
    with open(args.qrels, newline="", encoding="utf-8") as f:
        r = csv.reader(f, delimiter="\t", quotechar='"')
        next(r)
        for q, d, s in r:
            qrels.setdefault(q, {})[d] = int(s)
    t = time.perf_counter()
    bm25 = BM25Okapi([analyze(d.get("title", "") + " " + d["text"]) for d in docs], k1=1.2, b=0.75)
    build_s = time.perf_counter() - t
    ids = [d["_id"] for d in docs]
    run, lat = {}, []
    for _ in range(args.repeat):
        for qid in qrels:
            t = time.perf_counter()
            scores = bm25.get_scores(analyze(queries[qid]))
            top = sorted(range(len(ids)), key=lambda i: -scores[i])[:100]
            lat.append((time.perf_counter() - t) * 1e3)
            judged = qrels[qid]
            run[qid] = {ids[i]: float(scores[i]) for i in range(len(ids)) if ids[i] in judged and scores[i] > 0}
    res = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.5,10"}).evaluate(run)
    ndcg5 = sum(res.get(q, {}).get("ndcg_cut_5", 0) for q in qrels) / len(qrels)
    ndcg10 = sum(res.get(q, {}).get("ndcg_cut_10", 0) for q in qrels) / len(qrels)
    lat.sort()
    print(json.dumps({
        "engine": "rank_bm25 BM25Okapi",
        "stemmer": "snowball" if _stem.__name__ != "<lambda>" else "none",
        "clauses": len(docs), "build_s": build_s, "queries": len(lat),
        "qps": len(lat) / (sum(lat) / 1e3), "p50_ms": statistics.median(lat),
        "p99_ms": lat[int(round((len(lat) - 1) * 0.99))],
        "ndcg@5": ndcg5, "ndcg@10": ndcg10,
    }, indent=1))


if __name__ == "__main__":
    main()
