//! Carries a sentence-vector cache (the `embed_sentences` example's) over to changed candidates
//! whose *sentence* candidates did not change:
//! `cargo run -p precedent-cuad --example rebase_sentence_vectors OLD_CACHE NEW_CACHE`.
//!
//! Why: a cache records each contract's candidate count, and the dense view refuses vectors made
//! for other candidates. New kinds of short candidates (dates, names, lead-ins) are pushed after
//! every paragraph-level candidate, so the sentences keep their indices and their vectors stay
//! right; re-embedding 94,195 sentences would take 18-50 min on 2 cores, this takes seconds. It
//! refuses (naming the contract) when a contract's sentence candidates did change.
use std::path::PathBuf;

use anyhow::{ensure, Context};
use precedent_cuad::candidates::candidates;
use precedent_cuad::dense::{sentence_indices, SentenceCache};

fn main() -> anyhow::Result<()> {
    let args: Vec<PathBuf> = std::env::args_os().skip(1).map(PathBuf::from).collect();
    let [old, new] = args.as_slice() else {
        anyhow::bail!("usage: rebase_sentence_vectors OLD_CACHE NEW_CACHE");
    };
    let mut cache = SentenceCache::load(old)?;
    let dir = precedent_cuad::cache::find_cuad_dir()
        .context("no CUAD folder (set PRECEDENT_CUAD_DIR)")?;
    let data = precedent_cuad::load(&dir)?;
    ensure!(
        data.contracts.len() == cache.contracts.len(),
        "{} holds {} contracts, {} has {}",
        old.display(),
        cache.contracts.len(),
        dir.display(),
        data.contracts.len()
    );
    for (contract, vectors) in data.contracts.iter().zip(&mut cache.contracts) {
        let now = candidates(&contract.text);
        ensure!(
            sentence_indices(&now) == vectors.indices,
            "{}: its sentence candidates changed; re-embed with the embed_sentences example",
            contract.id
        );
        vectors.candidates = now.len();
    }
    cache.save(new)?;
    eprintln!(
        "{} contracts rebased into {}",
        cache.contracts.len(),
        new.display()
    );
    Ok(())
}
