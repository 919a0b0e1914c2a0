//! Measures embedding throughput (clauses/s) on a JSONL corpus, for comparison with
//! `scripts/models/bench_sentence_transformers.py` on the same texts.
//!
//! cargo run --release -p precedent-tools --bin embed_throughput -- \
//!     --corpus ../shared/data/acord/corpus.jsonl --limit 1000 [--model SPEC]
//!     [--batch-size 64] [--max-batch-tokens 4096] [--policy truncate|chunk] [--overlap 32]

use std::io::BufRead;
use std::time::Instant;

use precedent_models::{EmbedOptions, Embedder, LongTextPolicy};

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let mut corpus = String::from("../shared/data/acord/corpus.jsonl");
    let mut limit = 1000usize;
    let mut model = precedent_models::DEFAULT_MODEL.to_string();
    let mut opts = EmbedOptions::default();
    let mut chunk = false;
    let mut overlap = 32usize;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut val = || args.next().ok_or(format!("{a} needs a value"));
        match a.as_str() {
            "--corpus" => corpus = val()?,
            "--limit" => limit = val()?.parse()?,
            "--model" => model = val()?,
            "--batch-size" => opts.batch_size = val()?.parse()?,
            "--max-batch-tokens" => opts.max_batch_tokens = val()?.parse()?,
            "--policy" => chunk = val()? == "chunk",
            "--overlap" => overlap = val()?.parse()?,
            other => return Err(format!("unknown argument {other}").into()),
        }
    }
    if chunk {
        opts.policy = LongTextPolicy::ChunkMean {
            overlap_tokens: overlap,
        };
    }
    let mut texts = Vec::new();
    for line in std::io::BufReader::new(std::fs::File::open(&corpus)?).lines() {
        if texts.len() >= limit {
            break;
        }
        let v: serde_json::Value = serde_json::from_str(&line?)?;
        if let Some(t) = v.get("text").and_then(|t| t.as_str()) {
            texts.push(t.to_string());
        }
    }
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();

    let t0 = Instant::now();
    let emb = Embedder::load(&model)?;
    eprintln!(
        "loaded {} in {:.2}s",
        emb.model_id(),
        t0.elapsed().as_secs_f64()
    );
    let counts = emb.token_counts(&refs)?;
    let windowed: usize = counts.iter().map(|&c| c.min(emb.max_tokens())).sum();

    // Warm-up so that allocator and thread-pool start-up are not measured.
    emb.embed_with(&refs[..refs.len().min(16)], &opts, &|_| {})?;
    let t = Instant::now();
    let vecs = emb.embed_with(&refs, &opts, &|_| {})?;
    let secs = t.elapsed().as_secs_f64();
    assert_eq!(vecs.len(), refs.len());
    println!(
        "texts={} policy={:?} batch_size={} max_batch_tokens={} tokens(windowed)={} time={:.2}s clauses/s={:.1} tokens/s={:.0}",
        refs.len(),
        opts.policy,
        opts.batch_size,
        opts.max_batch_tokens,
        windowed,
        secs,
        refs.len() as f64 / secs,
        windowed as f64 / secs
    );
    Ok(())
}
