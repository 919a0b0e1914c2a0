//! `precedent eval-legalbench DIR`: balanced accuracy on LegalBench's CUAD classification tasks,
//! or with `--dev-cuad` the classifier cross-validated on CUAD's development set
//! ([`precedent_eval::legalbench_run`]).

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;
use precedent_eval::legalbench_run::{
    eval_legalbench, scores_json, LegalbenchModel, LegalbenchPlan,
};

use crate::review::TyperArgs;

#[derive(Args)]
pub struct EvalLegalbenchArgs {
    /// Folder holding the `CUAD_<Category>/` task folders.
    pub dir: PathBuf,
    /// Write {"tasks": {"<folder>": x}, "mean": x} (balanced accuracy as fractions).
    #[arg(long)]
    pub json_out: Option<PathBuf>,
    /// Which rows to score: test (falls back to train.tsv where a folder has no test.tsv) or train.
    #[arg(long, default_value = "test")]
    pub split: String,
    /// The model that answers each task.
    #[arg(long, value_enum, default_value_t = LegalbenchModel::Classifier)]
    pub model: LegalbenchModel,
    /// Per-category thresholds (JSON {"thresholds": {"<category>": t}}) replacing the model's
    /// own (the classifier's, or for the typer those `eval-cuad` tuned).
    #[arg(long)]
    pub thresholds: Option<PathBuf>,
    /// Instead of scoring DIR's rows, cross-validate the classifier on this CUAD folder by
    /// contract and report the development balanced accuracy of DIR's tasks.
    #[arg(long)]
    pub dev_cuad: Option<PathBuf>,
    /// Folds of --dev-cuad (contracts assigned round-robin, as `eval-cuad` does).
    #[arg(long, default_value_t = 5)]
    pub folds: usize,
    /// --dev-cuad on the first N contracts only (quick runs).
    #[arg(long)]
    pub limit: Option<usize>,
    /// The classifier without its MiniLM readings (words only: the earlier default, and what
    /// answers when MiniLM is not installed).
    #[arg(long)]
    pub words_only: bool,
    #[command(flatten)]
    pub typer: TyperArgs,
}

pub fn run(args: EvalLegalbenchArgs) -> Result<()> {
    let models = args.typer.models();
    let plan = LegalbenchPlan {
        dir: &args.dir,
        split: &args.split,
        model: args.model,
        thresholds: args.thresholds.as_deref(),
        dev_cuad: args.dev_cuad.as_deref(),
        folds: args.folds,
        limit: args.limit,
        words_only: args.words_only,
        models: &models,
    };
    let (scores, text) = eval_legalbench(&plan)?;
    print!("{text}");
    if let Some(path) = &args.json_out {
        std::fs::write(path, serde_json::to_string_pretty(&scores_json(&scores))?)
            .with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}
