//! Fine-tuning a BERT cross-encoder on rating files, and refusing to score a model on the
//! queries it learnt from.
//!
//! ACORD's recipe for its fine-tuned MiniLM cross-encoder: pairs drawn with every rating
//! equally likely, target rating / 4, binary cross-entropy, AdamW with weight decay 0.01,
//! batch 64, the learning rate and step count chosen on validation ratings. The folder it
//! writes is what `--rerank cross-encoder --rerank-model DIR` reads, so the validation score is
//! `precedent eval ... --rerank cross-encoder --rerank-model DIR` on ratings the training never
//! saw.
//!
//! Why here: which ratings become training pairs, how they are drawn, and what a fine-tuned
//! folder records about its training are the model's making; `precedent train-cross-encoder`
//! only parses its flags and prints.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use precedent_formats::{CorpusDoc, Qrels, Query};
use precedent_models::{BalancedSampler, CrossEncoderTrainer, FineTuneOptions, TrainingPair};
use serde::{Deserialize, Serialize};

use crate::Report;

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

/// The queries of `qrels` among `trained` (those a model learnt from), for the refusals of
/// `eval`: a model scored on its own training queries reports what it memorised.
pub fn seen_queries<'q, 't>(
    trained: impl IntoIterator<Item = &'t str>,
    qrels: &'q Qrels,
) -> Vec<&'q str> {
    let trained: HashSet<&str> = trained.into_iter().collect();
    qrels.query_ids().filter(|q| trained.contains(q)).collect()
}

/// Refuses to score queries a fine-tuned model in `dir` (a cross-encoder, or a bi-encoder
/// from `train-bi-encoder`) was trained on. Folders without a training record (downloaded
/// models) are taken as they are.
pub fn check_no_overlap(dir: &Path, qrels: &Qrels) -> Result<()> {
    let path = dir.join(TRAINING_RECORD);
    let Ok(text) = std::fs::read_to_string(&path) else {
        return Ok(());
    };
    let record: TrainingRecord = serde_json::from_str(&text)
        .with_context(|| format!("{}: unreadable training record", path.display()))?;
    let overlap = seen_queries(record.trained_on.iter().map(String::as_str), qrels);
    if let Some(first) = overlap.first() {
        bail!(
            "the fine-tuned model in {} was trained on {} of the queries being evaluated (e.g. {first:?}; trained on {}): fine-tune it without them, e.g. `precedent train-cross-encoder --qrels train.tsv --out DIR` (or `train-bi-encoder`), then score it on `--qrels valid.tsv`",
            dir.display(),
            overlap.len(),
            record.rating_files.join(", ")
        );
    }
    Ok(())
}

/// A fine-tuning run: the base encoder, the rating files (recorded in the folder), where to
/// write, the options, and how often the mean loss is reported.
pub struct FineTunePlan<'a> {
    pub base_model: &'a str,
    pub rating_files: &'a [PathBuf],
    pub out: &'a Path,
    pub options: FineTuneOptions,
    /// Report the mean loss every this many steps (and at the last).
    pub report_every: usize,
}

/// What a fine-tuning run did.
pub struct FineTuned {
    pub seconds: f64,
}

/// Fine-tunes `plan.base_model` on the rated pairs of `qrels` whose query is in `queries` and
/// clause in `corpus`, drawn with every rating equally likely, and saves it with its training
/// record. The pair counts and the loss every `report_every` steps go to `report` (the loss
/// whether or not bars are drawn: a long run's log is how one tells a learning rate that
/// diverges from one that learns).
pub fn fine_tune(
    corpus: &[CorpusDoc],
    queries: &[Query],
    qrels: &Qrels,
    sources: (&Path, &Path),
    plan: &FineTunePlan<'_>,
    report: &dyn Report,
) -> Result<FineTuned> {
    let (queries_path, corpus_path) = sources;
    let texts: HashMap<&str, String> = corpus
        .iter()
        .map(|d| (d.id.as_str(), precedent_library::indexed_text(d)))
        .collect();
    let query_text: HashMap<&str, &str> = queries
        .iter()
        .map(|q| (q.id.as_str(), q.text.as_str()))
        .collect();
    // Rating files are read into hash maps; sort so that the seed alone fixes the batches.
    let mut judged_pairs: Vec<(&str, &str, i32)> = qrels
        .iter()
        .flat_map(|(q, judged)| judged.iter().map(move |(d, &l)| (q, d.as_str(), l)))
        .collect();
    judged_pairs.sort_unstable();
    let mut pairs = Vec::new();
    let mut query_ids: BTreeSet<&str> = Default::default();
    let mut unknown_queries: HashSet<&str> = Default::default();
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
        report.warn(&format!(
            "warning: {} rated queries are not in {} and {unknown_clauses} rated clauses are not in {}; their ratings are skipped",
            unknown_queries.len(),
            queries_path.display(),
            corpus_path.display()
        ));
    }
    let rated_pairs = pairs.len();
    let options = plan.options.clone();
    let Some(mut sampler) = BalancedSampler::new(pairs, options.seed) else {
        bail!("no rating refers to a known query and clause: nothing to train on");
    };
    let levels: Vec<String> = sampler
        .level_sizes()
        .iter()
        .map(|(t, n)| format!("{}★ {n}", (t * 4.0).round() as u32 + 1))
        .collect();
    report.warn(&format!(
        "{rated_pairs} rated pairs ({}), drawn with every rating equally likely",
        levels.join(", ")
    ));

    let mut trainer = CrossEncoderTrainer::from_encoder(plan.base_model, options.clone())
        .with_context(|| format!("loading the encoder {}", plan.base_model))?;
    let started = Instant::now();
    let steps = options.steps;
    report.start("fine-tuning", steps as u64);
    let mut recent = Vec::new();
    for step in 0..steps {
        let batch = sampler.batch(options.batch_size);
        let loss = trainer.train_step(&batch)?;
        recent.push(loss);
        report.advance(1);
        if (step + 1) % plan.report_every == 0 || step + 1 == steps {
            let mean = recent.iter().sum::<f32>() / recent.len() as f32;
            report.warn(&format!(
                "step {}/{}: mean loss {mean:.4} over the last {} steps, learning rate {:.2e}, {:.0} s",
                step + 1,
                steps,
                recent.len(),
                trainer.learning_rate_at(step),
                started.elapsed().as_secs_f64()
            ));
            recent.clear();
        }
    }
    report.finish();
    let seconds = started.elapsed().as_secs_f64();
    let record = TrainingRecord {
        base_model: plan.base_model.to_owned(),
        rating_files: plan
            .rating_files
            .iter()
            .map(|p| p.display().to_string())
            .collect(),
        trained_on: query_ids.into_iter().map(str::to_owned).collect(),
        options,
        seconds,
    };
    let record = serde_json::to_vec_pretty(&record)?;
    trainer
        .save(plan.out, &[(TRAINING_RECORD, &record)])
        .with_context(|| format!("saving the cross-encoder to {}", plan.out.display()))?;
    Ok(FineTuned { seconds })
}
