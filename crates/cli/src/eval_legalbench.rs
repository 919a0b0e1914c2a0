//! `precedent eval-legalbench DIR`: balanced accuracy on LegalBench's CUAD classification tasks
//! (`CUAD_<Category>/test.tsv`, or `train.tsv` where no test file exists), by default with the
//! single-clause classifier (`precedent_clause_types::clause_classifier`, words plus a MiniLM view of
//! the clause, `ClassifierOptions::for_legalbench`), or with the contract typer's first stage for
//! comparison. `--dev-cuad` instead cross-validates the classifier on the CUAD
//! development set (every annotated span of the shared contracts, held out by contract).

use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::{Args, ValueEnum};
use precedent_cuad::legalbench::{tasks, Task};
use precedent_eval::legalbench_run::{
    self, override_thresholds, read_thresholds, score_rows, DevTask, Scorer, TaskOutcome,
};

use crate::review::TyperArgs;

/// Which model answers "is this clause of category X?".
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum LegalbenchModel {
    /// Logistic regressions trained on the annotated CUAD spans themselves (default).
    Classifier,
    /// The contract typer's first stage with the thresholds shipped in
    /// `models/legalbench/thresholds.json` (the earlier method, kept for comparison).
    Typer,
}

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
    let tasks = tasks(&args.dir)?;
    let scores = match &args.dev_cuad {
        Some(cuad) => dev_scores(&args, cuad, &tasks)?,
        None => row_scores(&args, &tasks)?,
    };
    let mean = scores.values().sum::<f64>() / scores.len().max(1) as f64;
    println!("{:<45} {:5.1}", "mean", 100.0 * mean);
    if let Some(path) = &args.json_out {
        let json = serde_json::json!({ "tasks": scores, "mean": mean });
        std::fs::write(path, serde_json::to_string_pretty(&json)?)
            .with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}

/// Balanced accuracy per task on the folders' rows ([`score_rows`]).
fn row_scores(args: &EvalLegalbenchArgs, tasks: &[Task]) -> Result<BTreeMap<String, f64>> {
    let scorer = match args.model {
        LegalbenchModel::Classifier => Scorer::Classifier(Box::new(
            args.typer
                .models()
                .load_legalbench_classifier(args.words_only)?,
        )),
        LegalbenchModel::Typer => Scorer::Typer(Box::new(args.typer.models().load_first_stage()?)),
    };
    let mut thresholds = scorer.thresholds();
    if let Some(path) = &args.thresholds {
        override_thresholds(&mut thresholds, &read_thresholds(path)?);
    }
    let mut scores = BTreeMap::new();
    for outcome in score_rows(&scorer, &thresholds, tasks, &args.split)? {
        match outcome {
            TaskOutcome::Scored {
                name,
                balanced_accuracy: ba,
                rows,
                file_name,
            } => {
                println!(
                    "{name:<45} {:5.1}  ({rows} rows of {file_name})",
                    100.0 * ba
                );
                scores.insert(name, ba);
            }
            TaskOutcome::Skipped { file } => eprintln!("{}: no rows, skipped", file.display()),
        }
    }
    Ok(scores)
}

/// Development balanced accuracy per task by contract-level cross-validation on `cuad`
/// ([`precedent_eval::legalbench_run::dev_scores`]).
fn dev_scores(
    args: &EvalLegalbenchArgs,
    cuad: &std::path::Path,
    tasks: &[Task],
) -> Result<BTreeMap<String, f64>> {
    if args.model != LegalbenchModel::Classifier {
        bail!("--dev-cuad cross-validates the classifier; the typer's figure is `eval-cuad`'s legalbench_dev");
    }
    if args.thresholds.is_some() || args.typer.classifier.is_some() {
        bail!("--dev-cuad trains its own classifiers and thresholds per fold; drop --thresholds/--classifier");
    }
    let data = precedent_cuad::load(cuad)?;
    let dev = legalbench_run::dev_scores(
        &data,
        tasks,
        args.folds,
        args.limit,
        args.words_only,
        &|line| eprintln!("{line}"),
    )?;
    let listing = &dev.listing;
    let pct = |x: f64| 100.0 * x;
    println!(
        "as classify lists them ({} distinct held-out clauses): top type right {:.1}%; likely (0.5 and up, the type gate agreeing) precision {:.1}%, recall {:.1}%, {:.2} per clause; listed (own thresholds) precision {:.1}%, recall {:.1}%, {:.2} per clause",
        listing.clauses,
        pct(listing.top_type_right),
        pct(listing.likely.precision),
        pct(listing.likely.recall),
        listing.likely.per_clause,
        pct(listing.listed_precision),
        pct(listing.listed_recall),
        listing.listed_per_clause
    );
    println!(
        "and of {} held-out sentences no annotation covers: {:.1}% get a likely type, {:.1}% a listed one",
        listing.unannotated,
        pct(listing.likely.unannotated_with_likely),
        pct(listing.unannotated_with_listed)
    );
    if let Some(without) = &listing.likely_without_gate {
        println!(
            "without the type gate: likely precision {:.1}%, recall {:.1}%, {:.2} per clause; {:.1}% of the sentences of no type get a likely type",
            pct(without.precision),
            pct(without.recall),
            without.per_clause,
            pct(without.unannotated_with_likely)
        );
    }
    let mut scores = BTreeMap::new();
    for task in dev.tasks {
        match task {
            DevTask::Scored {
                name,
                balanced_accuracy: ba,
                positives,
            } => {
                println!(
                    "{name:<45} {:5.1}  ({positives} positive spans of {})",
                    100.0 * ba,
                    dev.spans
                );
                scores.insert(name, ba);
            }
            DevTask::Skipped { name } => {
                eprintln!("{name}: no annotated span in {}, skipped", cuad.display())
            }
        }
    }
    Ok(scores)
}
