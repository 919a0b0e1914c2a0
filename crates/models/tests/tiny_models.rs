//! Cross-encoder (and bi-encoder on the same tiny BERT) against PyTorch, using the
//! randomly initialised fixture from scripts/models/make_tiny_cross_encoder.py.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use precedent_models::{CrossEncoder, Embedder};
use serde::Deserialize;

#[derive(Deserialize)]
struct Reference {
    pairs: Vec<(String, String)>,
    logits: Vec<f32>,
    embed_texts: Vec<String>,
    mean_pooled: Vec<Vec<f32>>,
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn reference() -> Reference {
    let p = fixtures().join("tiny_cross_encoder_reference.json");
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

fn check_scores(ce: &CrossEncoder, r: &Reference) {
    let pairs: Vec<(&str, &str)> = r
        .pairs
        .iter()
        .map(|(q, d)| (q.as_str(), d.as_str()))
        .collect();
    let got = ce.score_pairs(&pairs).unwrap();
    for (i, (g, want)) in got.iter().zip(&r.logits).enumerate() {
        assert!((g - want).abs() < 1e-4, "pair {i}: got {g}, PyTorch {want}");
    }
    // `score` is the same computation grouped by query.
    let q = &r.pairs[0].0;
    let docs: Vec<&str> = r
        .pairs
        .iter()
        .filter(|p| &p.0 == q)
        .map(|p| p.1.as_str())
        .collect();
    let s = ce.score(q, &docs).unwrap();
    assert!((s[0] - r.logits[0]).abs() < 1e-4);
}

#[test]
fn cross_encoder_matches_pytorch() {
    let r = reference();
    let ce = CrossEncoder::load(fixtures().join("tiny-cross-encoder").to_str().unwrap()).unwrap();
    assert_eq!(ce.max_len(), 512);
    check_scores(&ce, &r);
    // Batch size must not matter (padding inside a batch is masked).
    check_scores(&ce.with_batch_size(3), &r);
}

#[test]
fn cross_encoder_without_bert_prefix() {
    // Some checkpoints store the encoder at the top level (no `bert.` prefix).
    let src = fixtures().join("tiny-cross-encoder");
    let tmp = tempfile::tempdir().unwrap();
    for f in ["config.json", "tokenizer.json", "tokenizer_config.json"] {
        std::fs::copy(src.join(f), tmp.path().join(f)).unwrap();
    }
    let tensors =
        candle_core::safetensors::load(src.join("model.safetensors"), &candle_core::Device::Cpu)
            .unwrap();
    let renamed: HashMap<String, candle_core::Tensor> = tensors
        .into_iter()
        .map(|(k, v)| (k.strip_prefix("bert.").unwrap_or(&k).to_string(), v))
        .collect();
    assert!(renamed.contains_key("pooler.dense.weight"));
    candle_core::safetensors::save(&renamed, tmp.path().join("model.safetensors")).unwrap();
    let ce = CrossEncoder::load(tmp.path().to_str().unwrap()).unwrap();
    check_scores(&ce, &reference());
}

#[test]
fn tiny_bert_as_bi_encoder_matches_pytorch_mean_pooling() {
    // No modules.json: mean pooling without normalisation, as sentence-transformers
    // does for a plain Hugging Face folder.
    let r = reference();
    let emb = Embedder::load(fixtures().join("tiny-cross-encoder").to_str().unwrap()).unwrap();
    assert_eq!(emb.dim(), 32);
    assert!(!emb.normalized());
    let texts: Vec<&str> = r.embed_texts.iter().map(String::as_str).collect();
    let got = emb.embed(&texts).unwrap();
    for (i, (g, want)) in got.iter().zip(&r.mean_pooled).enumerate() {
        let diff = g
            .iter()
            .zip(want)
            .map(|(a, b)| (a - b).abs())
            .fold(0f32, f32::max);
        assert!(diff < 1e-4, "text {i}: max abs diff {diff}");
    }
}
