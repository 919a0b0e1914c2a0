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
use precedent_clause_types::clause_classifier::{
    cross_validate_gate, cross_validate_with_unannotated, dev_report, listing_report,
    unannotated_sentences, ClassifierOptions, ClauseClassifier,
};
use precedent_clause_types::legalbench::Thresholds;
use precedent_clause_types::{ClauseTyper, N_CATEGORIES};
use precedent_cuad::legalbench::{read_examples, tasks, Task};
use precedent_cuad::CATEGORIES;
use precedent_metrics::balanced_accuracy;

use crate::review::TyperArgs;
use precedent_engine::legalbench_options;

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

/// A loaded model with its per-category thresholds.
enum Scorer {
    Classifier(Box<ClauseClassifier>),
    Typer(Box<ClauseTyper>),
}

impl Scorer {
    /// Confidence in `category` of each of `texts` (the classifier embeds them in one batch).
    fn confidences(&self, texts: &[&str], category: usize) -> Result<Vec<f32>> {
        Ok(match self {
            Scorer::Classifier(m) => m.batch_scores(texts)?.iter().map(|s| s[category]).collect(),
            Scorer::Typer(t) => texts
                .iter()
                .map(|x| t.classify_scores(x)[category])
                .collect(),
        })
    }
}

fn read_thresholds(path: &PathBuf) -> Result<Thresholds> {
    serde_json::from_str(
        &std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?,
    )
    .with_context(|| format!("parsing {}", path.display()))
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

/// Balanced accuracy per task on the folders' rows.
fn row_scores(args: &EvalLegalbenchArgs, tasks: &[Task]) -> Result<BTreeMap<String, f64>> {
    let (scorer, mut thresholds) = match args.model {
        LegalbenchModel::Classifier => {
            let model = args
                .typer
                .models()
                .load_legalbench_classifier(args.words_only)?;
            let thresholds: [f32; N_CATEGORIES] = std::array::from_fn(|k| model.threshold(k));
            (Scorer::Classifier(Box::new(model)), thresholds)
        }
        LegalbenchModel::Typer => {
            let shipped = precedent_clause_types::legalbench::shipped_thresholds();
            let thresholds: [f32; N_CATEGORIES] = std::array::from_fn(|k| shipped.get(k));
            (
                Scorer::Typer(Box::new(args.typer.models().load_first_stage()?)),
                thresholds,
            )
        }
    };
    if let Some(path) = &args.thresholds {
        let given = read_thresholds(path)?;
        for (k, t) in thresholds.iter_mut().enumerate() {
            if let Some(&v) = given.thresholds.get(CATEGORIES[k]) {
                *t = v;
            }
        }
    }
    let mut scores = BTreeMap::new();
    for task in tasks {
        let test = task.dir.join("test.tsv");
        let file = if args.split == "test" && test.is_file() {
            test
        } else {
            task.dir.join("train.tsv")
        };
        let examples = read_examples(&file)?;
        let t = thresholds[task.category];
        let texts: Vec<&str> = examples.iter().map(|e| e.text.as_str()).collect();
        let confidences = scorer
            .confidences(&texts, task.category)
            .with_context(|| format!("scoring {}", file.display()))?;
        let judged = examples
            .iter()
            .zip(confidences)
            .map(|(e, c)| (e.label, c >= t));
        let Some(ba) = balanced_accuracy(judged) else {
            eprintln!("{}: no rows, skipped", file.display());
            continue;
        };
        println!(
            "{:<45} {:5.1}  ({} rows of {})",
            task.name,
            100.0 * ba,
            examples.len(),
            file.file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default()
        );
        scores.insert(task.name.clone(), ba);
    }
    Ok(scores)
}

/// Unannotated sentences per contract scored beside the annotated spans (`--dev-cuad`).
const UNANNOTATED_PER_CONTRACT: usize = 5;

/// Development balanced accuracy per task by contract-level cross-validation on `cuad`.
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
    let contracts: Vec<&_> = data
        .contracts
        .iter()
        .take(args.limit.unwrap_or(usize::MAX))
        .collect();
    let (options, embedder) = legalbench_options(args.words_only);
    if embedder.is_some() {
        eprintln!(
            "embedding the annotated spans of {} contracts with MiniLM, then {} folds",
            contracts.len(),
            args.folds
        );
    }
    let started = std::time::Instant::now();
    // A few sentences of each contract that no annotation covers: what `classify` says of
    // clauses of no CUAD type (they do not enter LegalBench's figures).
    let free = unannotated_sentences(&contracts, UNANNOTATED_PER_CONTRACT);
    let (mut spans, mut free) = cross_validate_with_unannotated(
        &contracts,
        args.folds,
        &options,
        &[],
        &free,
        embedder,
        |done, folds| {
            eprintln!(
                "fold {done}/{folds} done ({:.0} s)",
                started.elapsed().as_secs_f64()
            )
        },
    )?;
    // The gate that learnt from unmatched sentences too, nested the same way.
    cross_validate_gate(
        &contracts,
        args.folds,
        &ClassifierOptions::for_second_stage(),
        &mut spans,
        &mut free,
        |done, folds| {
            eprintln!(
                "gate fold {done}/{folds} done ({:.0} s)",
                started.elapsed().as_secs_f64()
            )
        },
    )?;
    let report = dev_report(&spans, args.folds, &options);
    // What a lawyer sees of the same held-out spans through `classify`.
    let listing = listing_report(&spans, &free);
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
    if let Some(without) = listing.likely_without_gate {
        println!(
            "without the type gate: likely precision {:.1}%, recall {:.1}%, {:.2} per clause; {:.1}% of the sentences of no type get a likely type",
            pct(without.precision),
            pct(without.recall),
            without.per_clause,
            pct(without.unannotated_with_likely)
        );
    }
    let mut scores = BTreeMap::new();
    for task in tasks {
        let category = CATEGORIES[task.category];
        let (Some(&ba), Some(&positives)) =
            (report.tasks.get(category), report.positives.get(category))
        else {
            eprintln!(
                "{}: no annotated span in {}, skipped",
                task.name,
                cuad.display()
            );
            continue;
        };
        println!(
            "{:<45} {:5.1}  ({positives} positive spans of {})",
            task.name,
            100.0 * ba,
            spans.len()
        );
        scores.insert(task.name.clone(), ba);
    }
    Ok(scores)
}
