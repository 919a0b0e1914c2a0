//! `precedent eval-legalbench DIR`: balanced accuracy on LegalBench's CUAD classification tasks
//! (`CUAD_<Category>/test.tsv`, or `train.tsv` where no test file exists), by default with the
//! single-clause classifier (`precedent_clause_types::clause_classifier`, words plus a MiniLM view of
//! the clause, `ClassifierOptions::for_legalbench`), or with the contract typer's first stage for
//! comparison. `--dev-cuad` instead cross-validates the classifier on the CUAD
//! development set (every annotated span of the shared contracts, held out by contract).

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
    /// Per-category thresholds (JSON {"thresholds": {"<category>": t}}) replacing the model's:
    /// by default the classifier's own (tuned on out-of-fold scores of its training spans) or,
    /// for the typer, the ones `eval-cuad` tuned on the CUAD development set.
    #[arg(long)]
    pub thresholds: Option<PathBuf>,
    /// Instead of scoring DIR's rows, cross-validate the classifier on this CUAD folder by
    /// contract (refit per fold, thresholds tuned inside the training folds) and report the
    /// development balanced accuracy of DIR's tasks.
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
