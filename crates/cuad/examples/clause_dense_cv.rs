//! Experiment: does a MiniLM view of a clause help the single-clause classifier on LegalBench's
//! CUAD tasks? Contract-level 5-fold CV on the shared spans (as `clause_cv`); per outer fold the
//! sparse classifier and a per-category logistic regression over the span's embedding are fitted
//! on the other folds' spans, and the held-out annotations are scored by `sparse + w * dense`
//! for several `w`, plus `u *` a vote of the span's `KNN_K` nearest training spans (as in
//! `clause_classifier::neighbour_vote`) for each `u` of `KNN_WEIGHTS` (default "0"). Thresholds
//! are tuned per category on the other folds' held-out scores (the same rule for every setting,
//! so the comparison is on equal terms).
//! `cargo run --release -p precedent-cuad --example clause_dense_cv [VECTOR_CACHE]` (default
//! `/tmp/cuad-span-emb.bin`; MiniLM embeds the spans when it is missing or of another size).
//! Env: `MAX_TOKENS` (default 256; the classifier embeds with 128), `POS_WEIGHT`, `DENSE_L2`,
//! `DENSE_EPOCHS`, `DENSE_RATE`, `KNN_K`, `KNN_WEIGHTS`.

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;

use anyhow::Result;
use precedent_cuad::clause_classifier::{
    neighbour_vote, span_examples, ClassifierOptions, ClauseClassifier,
};
use precedent_cuad::dense::{DenseClassifier, DenseOptions};
use precedent_cuad::legalbench::is_task_category;
use precedent_cuad::CATEGORIES;
use precedent_cuad::N_CATEGORIES;
use precedent_models::{EmbedOptions, Embedder};

fn env<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Balanced accuracy of `pairs` (gold, score) at threshold `t`.
fn ba(pairs: &[(bool, f32)], t: f32) -> (usize, usize, usize, usize) {
    let (mut tp, mut fp, mut tn, mut fn_) = (0, 0, 0, 0);
    for &(g, s) in pairs {
        match (g, s >= t) {
            (true, true) => tp += 1,
            (true, false) => fn_ += 1,
            (false, true) => fp += 1,
            (false, false) => tn += 1,
        }
    }
    (tp, fp, tn, fn_)
}

/// The threshold maximising balanced accuracy, by one sweep over the sorted scores.
fn best_threshold(pairs: &[(bool, f32)]) -> f32 {
    let mut sorted: Vec<(f32, bool)> = pairs.iter().map(|&(g, s)| (s, g)).collect();
    sorted.sort_by(|a, b| b.0.total_cmp(&a.0));
    let pos = sorted.iter().filter(|p| p.1).count() as f64;
    let neg = sorted.len() as f64 - pos;
    if pos == 0.0 || neg == 0.0 {
        return 0.0;
    }
    let (mut tp, mut fp) = (0f64, 0f64);
    let mut best = (f64::MIN, f32::INFINITY);
    let mut i = 0;
    while i < sorted.len() {
        let s = sorted[i].0;
        while i < sorted.len() && sorted[i].0 == s {
            if sorted[i].1 {
                tp += 1.0
            } else {
                fp += 1.0
            }
            i += 1;
        }
        let b = 0.5 * (tp / pos + (neg - fp) / neg);
        let next = sorted.get(i).map_or(s - 1.0, |n| n.0);
        if b > best.0 {
            best = (b, 0.5 * (s + next));
        }
    }
    best.1
}

fn main() -> Result<()> {
    let cache = std::env::args()
        .nth(1)
        .unwrap_or("/tmp/cuad-span-emb.bin".into());
    let max_tokens: usize = env("MAX_TOKENS", 256);
    let dir = precedent_cuad::cache::find_cuad_dir()
        .ok_or_else(|| anyhow::anyhow!("no CUAD folder (set PRECEDENT_CUAD_DIR)"))?;
    let data = precedent_cuad::load(&dir)?;
    let contracts: Vec<&_> = data.contracts.iter().collect();
    let examples = span_examples(&contracts);
    let held: Vec<(usize, usize, String)> = contracts
        .iter()
        .enumerate()
        .flat_map(|(ci, c)| {
            c.annotations
                .iter()
                .map(move |a| (ci, a.category, a.match_text()))
        })
        .collect();
    // Distinct texts, in a fixed order, and their vectors (cached).
    let mut slot: HashMap<&str, usize> = HashMap::new();
    let mut texts: Vec<&str> = Vec::new();
    for t in examples
        .iter()
        .map(|e| e.text.as_str())
        .chain(held.iter().map(|h| h.2.as_str()))
    {
        slot.entry(t).or_insert_with(|| {
            texts.push(t);
            texts.len() - 1
        });
    }
    let dim = 384;
    let vectors: Vec<f32> = match std::fs::read(&cache) {
        Ok(bytes) if bytes.len() == texts.len() * dim * 4 => bytes
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect(),
        _ => {
            let emb = Embedder::load_default()?;
            let options = EmbedOptions {
                max_tokens: Some(max_tokens),
                ..EmbedOptions::default()
            };
            let t = std::time::Instant::now();
            let n = texts.len();
            let v = emb.embed_with(&texts, &options, &|d| {
                if d % 500 < 32 {
                    eprintln!("embedded {d}/{n} {:?}", t.elapsed())
                }
            })?;
            eprintln!("{} texts embedded in {:?}", n, t.elapsed());
            let flat: Vec<f32> = v.into_iter().flatten().collect();
            let mut f = std::fs::File::create(&cache)?;
            for x in &flat {
                f.write_all(&x.to_le_bytes())?;
            }
            flat
        }
    };
    let vec_of = |t: &str| &vectors[slot[t] * dim..(slot[t] + 1) * dim];

    let folds = 5;
    let weights = [0.0f32, 0.25, 0.5, 1.0, 2.0, 1e6];
    let options = ClassifierOptions {
        threshold_folds: 2,
        ..ClassifierOptions::default()
    };
    let dense_options = DenseOptions {
        epochs: env("DENSE_EPOCHS", 8),
        learning_rate: env("DENSE_RATE", 0.1),
        l2: env("DENSE_L2", 1e-5),
        positive_weight: env("POS_WEIGHT", 5.0),
        seed: 42,
    };
    eprintln!("{dense_options:?}");
    // Per held-out annotation: its fold, category, sparse and dense logits.
    let mut sparse = vec![[0f32; N_CATEGORIES]; held.len()];
    let mut dense = vec![[0f32; N_CATEGORIES]; held.len()];
    // Per held-out annotation: a vote of its K nearest training spans (cosine), as a logit.
    let mut knn = vec![[0f32; N_CATEGORIES]; held.len()];
    let k_neighbours: usize = env("KNN_K", 10);
    let started = std::time::Instant::now();
    // The word classifier's held-out logits do not depend on the vectors: cached beside them.
    let sparse_cache = format!("{}.sparse", cache.trim_end_matches(".bin"));
    let sparse_cache = Path::new(&sparse_cache);
    let sparse_cached = std::fs::read(sparse_cache)
        .ok()
        .filter(|b| b.len() == held.len() * N_CATEGORIES * 4);
    for f in 0..folds {
        let train: Vec<_> = examples
            .iter()
            .filter(|e| e.group % folds != f)
            .cloned()
            .collect();
        let bits: Vec<u64> = train.iter().map(|e| e.positive).collect();
        let tv: Vec<f32> = train
            .iter()
            .flat_map(|e| vec_of(&e.text).iter().copied())
            .collect();
        let d = DenseClassifier::train(&[(&tv, &bits)], dim, &dense_options);
        let idx: Vec<usize> = (0..held.len())
            .filter(|&i| held[i].0 % folds == f)
            .collect();
        let hv: Vec<f32> = idx
            .iter()
            .flat_map(|&i| vec_of(&held[i].2).iter().copied())
            .collect();
        for (&i, l) in idx.iter().zip(d.logits(&hv)) {
            dense[i] = l;
        }
        {
            use rayon::prelude::*;
            let votes: Vec<[f32; N_CATEGORIES]> = idx
                .par_iter()
                .map(|&i| neighbour_vote(&tv, &bits, vec_of(&held[i].2), k_neighbours))
                .collect();
            for (&i, v) in idx.iter().zip(votes) {
                knn[i] = v;
            }
        }
        if sparse_cached.is_none() {
            let model = ClauseClassifier::train(&train, &options, "cv")?;
            for &i in &idx {
                sparse[i] = model.logits(&held[i].2);
            }
        }
        eprintln!("fold {f} {:?}", started.elapsed());
    }
    match &sparse_cached {
        Some(b) => {
            let flat: Vec<f32> = b
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect();
            for (s, c) in sparse.iter_mut().zip(flat.chunks_exact(N_CATEGORIES)) {
                s.copy_from_slice(c);
            }
        }
        None => {
            let mut f = std::fs::File::create(sparse_cache)?;
            for s in &sparse {
                for x in s {
                    f.write_all(&x.to_le_bytes())?;
                }
            }
        }
    }
    let knn_weights: Vec<f32> = std::env::var("KNN_WEIGHTS")
        .unwrap_or("0".into())
        .split(',')
        .filter_map(|v| v.parse().ok())
        .collect();
    let grid: Vec<(f32, f32)> = weights
        .iter()
        .flat_map(|&w| knn_weights.iter().map(move |&u| (w, u)))
        .collect();
    for &(w, u) in &grid {
        let mut per_task = Vec::new();
        let mut line = String::new();
        for (k, name) in CATEGORIES.iter().enumerate() {
            if !is_task_category(k) {
                continue;
            }
            let score = |i: usize| {
                if w >= 1e5 {
                    dense[i][k]
                } else {
                    sparse[i][k] + w * dense[i][k] + u * knn[i][k]
                }
            };
            let (mut tp, mut fp, mut tn, mut fn_) = (0, 0, 0, 0);
            for f in 0..folds {
                let pairs = |in_fold: bool| -> Vec<(bool, f32)> {
                    (0..held.len())
                        .filter(|&i| (held[i].0 % folds == f) == in_fold)
                        .map(|i| (held[i].1 == k, score(i)))
                        .collect()
                };
                // This fold judged with the threshold tuned on the other folds.
                let c = ba(&pairs(true), best_threshold(&pairs(false)));
                (tp, fp, tn, fn_) = (tp + c.0, fp + c.1, tn + c.2, fn_ + c.3);
            }
            let b =
                0.5 * (tp as f64 / (tp + fn_).max(1) as f64 + tn as f64 / (tn + fp).max(1) as f64);
            per_task.push(b);
            line.push_str(&format!(
                "{}={:.1} ",
                &name[..name.len().min(12)],
                100.0 * b
            ));
        }
        println!(
            "w {w} knn {u}: mean of {} tasks {:.2}\n  {line}",
            per_task.len(),
            100.0 * per_task.iter().sum::<f64>() / per_task.len() as f64
        );
    }
    Ok(())
}
