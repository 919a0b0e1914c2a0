//! `precedent cv-bi-encoder`: cross-validate fine-tuning the bi-encoder on rating files
//! ([`precedent_eval::bi_encoder_cv`]): the tuned encoder's cosine against the shipped one's,
//! per wording, on the folds `train --cv` uses.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;
use precedent_eval::bi_encoder_cv::{cross_validate_bi_encoder, BiEncoderCvPlan};
use precedent_learn::bi_encoder::ListwisePlan;
use precedent_models::FineTuneOptions;

use crate::Bars;

#[derive(Args)]
pub struct CvBiEncoderArgs {
    /// Clause corpus (BEIR corpus.jsonl) the ratings refer to.
    #[arg(long)]
    corpus: PathBuf,
    /// Query files, each one wording of the same queries (repeat: short, medium, long).
    #[arg(long, required = true)]
    queries: Vec<PathBuf>,
    /// Rating files (TSV `query-id corpus-id score`, 0..4 = 1..5 stars); repeat to combine.
    #[arg(long, required = true)]
    qrels: Vec<PathBuf>,
    /// Encoder every fold starts from (and the baseline).
    #[arg(long, default_value = precedent_models::DEFAULT_MODEL)]
    base_model: String,
    #[arg(long, default_value_t = 5)]
    folds: usize,
    /// Seeds the folds (as `train --cv --seed`).
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Bottom encoder layers kept as loaded (their states are computed once).
    #[arg(long, default_value_t = 5)]
    frozen_layers: usize,
    /// Peak learning rate.
    #[arg(long, default_value_t = 1e-4)]
    learning_rate: f64,
    #[arg(long, default_value_t = ListwisePlan::default().epochs)]
    epochs: usize,
    /// Clauses rated above one star per list.
    #[arg(long, default_value_t = ListwisePlan::default().positives)]
    positives: usize,
    /// One-star clauses per list.
    #[arg(long, default_value_t = ListwisePlan::default().negatives)]
    negatives: usize,
    #[arg(long, default_value_t = ListwisePlan::default().temperature)]
    temperature: f32,
    /// Clause tokens read while training (scoring reads the model's whole window).
    #[arg(long, default_value_t = ListwisePlan::default().train_tokens)]
    train_tokens: usize,
    /// Write the figures and the fold log as JSON.
    #[arg(long)]
    json_out: Option<PathBuf>,
}

pub fn run(args: CvBiEncoderArgs, bars: &Bars) -> Result<()> {
    precedent_models::keep_freed_memory();
    let plan = BiEncoderCvPlan {
        corpus: &args.corpus,
        queries: &args.queries,
        qrels: &args.qrels,
        base_model: &args.base_model,
        folds: args.folds,
        fold_seed: args.seed,
        options: FineTuneOptions {
            learning_rate: args.learning_rate,
            // all-MiniLM-L6-v2's window, as the library embeds clauses.
            max_len: 256,
            batch_size: 32,
            frozen_layers: args.frozen_layers,
            seed: args.seed,
            ..FineTuneOptions::default()
        },
        listwise: ListwisePlan {
            epochs: args.epochs,
            positives: args.positives,
            negatives: args.negatives,
            temperature: args.temperature,
            train_tokens: args.train_tokens,
            seed: args.seed,
        },
    };
    let outcome = cross_validate_bi_encoder(&plan, bars)?;
    print!("{}", outcome.table());
    if let Some(path) = &args.json_out {
        std::fs::write(path, serde_json::to_string_pretty(&outcome)?)
            .with_context(|| format!("writing {}", path.display()))?;
        eprintln!("report written to {}", path.display());
    }
    Ok(())
}
