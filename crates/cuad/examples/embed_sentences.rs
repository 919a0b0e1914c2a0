//! Embeds the sentence candidates of the CUAD contracts with MiniLM for the second stage's dense
//! view (`precedent_cuad::dense`), and caches them:
//! `cargo run --release -p precedent-cuad --example embed_sentences [CACHE_FILE]`
//! (default `/tmp/cuad-sentence-emb.bin`, keyed by contract index in CUAD's order and candidate
//! index). `MAX_TOKENS=n` (default 128) is the window, special tokens included. `SAMPLE=n` only
//! counts the distinct sentences and times the embedding of `n` of them; `SERVE=1` times what a
//! review would pay: embedding the sentences of the median contract (by sentence count) alone.
use std::collections::HashMap;
use std::time::Instant;

use precedent_cuad::candidates::candidates;
use precedent_cuad::dense::{candidate_vectors, sentence_indices, SentenceCache, SentenceVectors};
use precedent_models::{EmbedOptions, Embedder};

fn main() -> anyhow::Result<()> {
    let cache = std::env::args()
        .nth(1)
        .unwrap_or("/tmp/cuad-sentence-emb.bin".into());
    let max_tokens: usize = std::env::var("MAX_TOKENS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(128);
    let dir = precedent_cuad::cache::find_cuad_dir()
        .ok_or_else(|| anyhow::anyhow!("no CUAD folder (set PRECEDENT_CUAD_DIR)"))?;
    let d = precedent_cuad::load(&dir)?;
    let t = Instant::now();
    let cands: Vec<_> = d.contracts.iter().map(|c| candidates(&c.text)).collect();
    let sentences: Vec<Vec<u32>> = cands.iter().map(|c| sentence_indices(c)).collect();
    // Distinct texts across the corpus: boilerplate repeats between contracts.
    let mut distinct: HashMap<&str, usize> = HashMap::new();
    let mut texts: Vec<&str> = Vec::new();
    let mut slot: Vec<Vec<usize>> = Vec::new();
    for ((c, cs), idx) in d.contracts.iter().zip(&cands).zip(&sentences) {
        slot.push(
            idx.iter()
                .map(|&i| {
                    let s = &c.text[cs[i as usize].span.clone()];
                    *distinct.entry(s).or_insert_with(|| {
                        texts.push(s);
                        texts.len() - 1
                    })
                })
                .collect(),
        );
    }
    let n_sent: usize = sentences.iter().map(Vec::len).sum();
    let n_cand: usize = cands.iter().map(Vec::len).sum();
    eprintln!(
        "{} contracts, {n_cand} candidates, {n_sent} sentence candidates, {} distinct texts ({:?})",
        d.contracts.len(),
        texts.len(),
        t.elapsed()
    );
    let t = Instant::now();
    let emb = Embedder::load_default()?;
    eprintln!("model {} loaded in {:?}", emb.model_id(), t.elapsed());
    let options = EmbedOptions {
        max_tokens: Some(max_tokens),
        ..EmbedOptions::default()
    };
    let counts = emb.token_counts(&texts)?;
    let clipped: usize = counts.iter().map(|&n| n.min(max_tokens)).sum();
    let over = counts.iter().filter(|&&n| n > max_tokens).count();
    eprintln!(
        "tokens: {} in all, {clipped} within the {max_tokens}-token window; {over} texts cut ({:.1}%)",
        counts.iter().sum::<usize>(),
        100.0 * over as f64 / texts.len().max(1) as f64
    );
    if let Ok(n) = std::env::var("SAMPLE") {
        // An even stride over the distinct texts: their length mix is the corpus's.
        let n: usize = n.parse()?;
        let step = (texts.len() / n.max(1)).max(1);
        let sample: Vec<&str> = texts.iter().step_by(step).take(n).copied().collect();
        let tokens: usize = sample
            .iter()
            .map(|s| distinct[s])
            .map(|i| counts[i].min(max_tokens))
            .sum();
        let t = Instant::now();
        emb.embed_with(&sample, &options, &|_| {})?;
        let s = t.elapsed().as_secs_f64();
        eprintln!(
            "sample: {} texts, {tokens} tokens in {s:.1} s ({:.1} texts/s); all {} distinct: ~{:.0} s",
            sample.len(),
            sample.len() as f64 / s,
            texts.len(),
            s * clipped as f64 / tokens.max(1) as f64
        );
        return Ok(());
    }
    if std::env::var("SERVE").is_ok() {
        // One contract on its own, as `review` would see it: its distinct sentences, embedded
        // from scratch, then every candidate's vector.
        let mut by_size: Vec<usize> = (0..d.contracts.len()).collect();
        by_size.sort_by_key(|&i| sentences[i].len());
        let median = by_size[by_size.len() / 2];
        let c = &d.contracts[median];
        let t = Instant::now();
        let cs = candidates(&c.text);
        let idx = sentence_indices(&cs);
        let mut own: Vec<&str> = idx
            .iter()
            .map(|&i| &c.text[cs[i as usize].span.clone()])
            .collect();
        own.sort_unstable();
        own.dedup();
        let vectors = emb.embed_with(&own, &options, &|_| {})?;
        let embedded = t.elapsed();
        let row: HashMap<&str, usize> = own.iter().enumerate().map(|(i, s)| (*s, i)).collect();
        let sv = SentenceVectors {
            candidates: cs.len(),
            vectors: idx
                .iter()
                .flat_map(|&i| vectors[row[&c.text[cs[i as usize].span.clone()]]].clone())
                .collect(),
            indices: idx,
        };
        let all = candidate_vectors(&cs, &sv, emb.dim());
        eprintln!(
            "median contract {} ({} bytes, {} candidates, {} sentences, {} distinct): embedded in {:?}, all {} candidate vectors in {:?}",
            c.id,
            c.text.len(),
            cs.len(),
            sv.indices.len(),
            own.len(),
            embedded,
            all.len() / emb.dim(),
            t.elapsed()
        );
        return Ok(());
    }
    let t = Instant::now();
    let last = std::sync::atomic::AtomicUsize::new(0);
    let total = texts.len();
    let vectors = emb.embed_with(&texts, &options, &|done| {
        // A line every ~5% so a background run shows its pace.
        let before = last.load(std::sync::atomic::Ordering::Relaxed);
        if done * 20 / total > before * 20 / total {
            last.store(done, std::sync::atomic::Ordering::Relaxed);
            eprintln!("{done}/{total} in {:?}", t.elapsed());
        }
    })?;
    eprintln!("embedded {} texts in {:?}", total, t.elapsed());
    let dim = emb.dim();
    let contracts = sentences
        .into_iter()
        .zip(&slot)
        .zip(&cands)
        .map(|((indices, slots), cs)| SentenceVectors {
            candidates: cs.len(),
            vectors: slots.iter().flat_map(|&s| vectors[s].clone()).collect(),
            indices,
        })
        .collect();
    SentenceCache {
        dim,
        max_tokens,
        contracts,
    }
    .save(std::path::Path::new(&cache))?;
    eprintln!("wrote {cache}");
    Ok(())
}
