//! `precedent eval-unfair-tos --test FILE.csv`: LexGLUE's UNFAIR-ToS task, predicted and scored
//! ([`precedent_unfair::evaluation`]).

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use precedent_unfair::cache::{default_cache, TrainSplit, UnfairSource};
use precedent_unfair::classifiers::ClassifierKind;
use precedent_unfair::evaluation::{evaluate_csv, UnfairTosPlan};
use precedent_unfair::minilm::MiniLmOptions;

/// Where the UNFAIR-ToS model comes from (shared by eval-unfair-tos, review and serve).
#[derive(Args, Clone)]
pub struct UnfairArgs {
    /// UNFAIR-ToS folder (unfair_tos_train.csv, unfair_tos_validation.csv); default
    /// $PRECEDENT_UNFAIR_TOS_DIR or shared/data/unfair_tos found from here or the executable.
    #[arg(long)]
    pub unfair_data: Option<PathBuf>,
    /// Which shared rows the terms-of-service model learns from.
    #[arg(long, value_enum, default_value_t = TrainSplit::TrainAndValidation)]
    pub fit_on: TrainSplit,
    /// Cache directory of trained UNFAIR-ToS models (default: .precedent/cache/unfair-tos).
    #[arg(long, default_value_os_t = default_cache())]
    pub unfair_cache: PathBuf,
}

impl UnfairArgs {
    /// The model source these arguments name ([`UnfairSource`]).
    pub fn source(&self) -> UnfairSource {
        UnfairSource {
            data: self.unfair_data.clone(),
            split: self.fit_on,
            cache: self.unfair_cache.clone(),
        }
    }
}

#[derive(Args)]
pub struct EvalUnfairTosArgs {
    /// CSV to predict (column `text`; with a `labels` column it is scored).
    #[arg(long)]
    pub test: PathBuf,
    /// Write one {"row": i, "labels": [ids]} per input row, in input order.
    #[arg(long)]
    pub predictions_out: Option<PathBuf>,
    /// Write the figures as JSON (micro_f1, macro_f1, per-column F1 and counts; fractions).
    #[arg(long)]
    pub json_out: Option<PathBuf>,
    /// UNFAIR-ToS folder to train from (the same as --unfair-data).
    #[arg(long, conflicts_with = "unfair_data")]
    pub data: Option<PathBuf>,
    /// The classifier to score with.
    #[arg(long = "model", value_enum, default_value_t = ClassifierKind::Svm)]
    pub kind: ClassifierKind,
    /// Fine-tuning epochs of the MiniLM classifier (--model minilm or ensemble).
    #[arg(long, default_value_t = MiniLmOptions::default().epochs)]
    pub epochs: usize,
    /// Bottom encoder layers (and the embeddings) the MiniLM classifier keeps frozen.
    #[arg(long, default_value_t = MiniLmOptions::default().frozen_layers)]
    pub frozen_layers: usize,
    /// Peak learning rate of the MiniLM classifier's fine-tuning.
    #[arg(long, default_value_t = MiniLmOptions::default().learning_rate)]
    pub learning_rate: f64,
    /// Unlabelled sentences per labelled one in each fine-tuning epoch (new ones each
    /// epoch; default: every one).
    #[arg(long)]
    pub negatives_per_positive: Option<f64>,
    #[command(flatten)]
    pub model: UnfairArgs,
}

pub fn run(mut args: EvalUnfairTosArgs) -> Result<()> {
    if args.kind != ClassifierKind::Svm {
        // A one-shot process that may fine-tune: keeping freed blocks in the heap saves a
        // third of each step (precedent_models::keep_freed_memory).
        precedent_models::keep_freed_memory();
    }
    if let Some(dir) = args.data.take() {
        args.model.unfair_data = Some(dir);
    }
    let plan = UnfairTosPlan {
        test: &args.test,
        kind: args.kind,
        source: &args.model.source(),
        minilm: &MiniLmOptions {
            epochs: args.epochs,
            frozen_layers: args.frozen_layers,
            learning_rate: args.learning_rate,
            negatives_per_positive: args.negatives_per_positive,
            ..MiniLmOptions::default()
        },
        predictions_out: args.predictions_out.as_deref(),
        json_out: args.json_out.as_deref(),
    };
    print!("{}", evaluate_csv(&plan)?);
    Ok(())
}
