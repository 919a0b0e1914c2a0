//! LegalBench's CUAD tasks scored the two ways `precedent eval-legalbench` offers: the task
//! folders' rows answered by a model at its per-category thresholds, or the development figure
//! of the single-clause classifier cross-validated on CUAD by contract.
//!
//! Why here: which rows are scored, at which thresholds, and how the development folds are
//! run and read are the measurement; [`eval_legalbench`] is the whole command, which prints
//! what it returns.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use precedent_clause_types::clause_classifier::{
    cross_validate_gate, cross_validate_with_unannotated, dev_report, listing_report,
    unannotated_sentences, ClassifierOptions, ClauseClassifier, ListingReport,
};
use precedent_clause_types::legalbench::Thresholds;
use precedent_clause_types::{ClauseTyper, N_CATEGORIES};
use precedent_cuad::legalbench::{read_examples, Task};
use precedent_cuad::CATEGORIES;
use precedent_metrics::balanced_accuracy;

/// A loaded model that answers "is this clause of category X?".
pub enum Scorer {
    /// The single-clause classifier, at its own tuned thresholds.
    Classifier(Box<ClauseClassifier>),
    /// The contract typer's first stage, at the thresholds shipped for LegalBench.
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

    /// The model's own threshold per category: the classifier's (tuned on out-of-fold scores
    /// of its training spans), or for the typer the ones `eval-cuad` tuned on CUAD's
    /// development set.
    pub fn thresholds(&self) -> [f32; N_CATEGORIES] {
        match self {
            Scorer::Classifier(m) => std::array::from_fn(|k| m.threshold(k)),
            Scorer::Typer(_) => {
                let shipped = precedent_clause_types::legalbench::shipped_thresholds();
                std::array::from_fn(|k| shipped.get(k))
            }
        }
    }
}

/// Reads per-category thresholds (JSON `{"thresholds": {"<category>": t}}`).
pub fn read_thresholds(path: &Path) -> Result<Thresholds> {
    serde_json::from_str(
        &std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?,
    )
    .with_context(|| format!("parsing {}", path.display()))
}

/// `thresholds` with the categories `given` names replaced.
pub fn override_thresholds(thresholds: &mut [f32; N_CATEGORIES], given: &Thresholds) {
    for (k, t) in thresholds.iter_mut().enumerate() {
        if let Some(&v) = given.thresholds.get(CATEGORIES[k]) {
            *t = v;
        }
    }
}

/// One task folder's figure on its rows.
pub enum TaskOutcome {
    Scored {
        name: String,
        balanced_accuracy: f64,
        rows: usize,
        /// The file scored (`test.tsv` or `train.tsv`).
        file_name: String,
    },
    /// A file without rows.
    Skipped { file: PathBuf },
}

/// Balanced accuracy per task on the folders' rows: `test.tsv` when `split` is `test` and the
/// folder has one, else `train.tsv`.
pub fn score_rows(
    scorer: &Scorer,
    thresholds: &[f32; N_CATEGORIES],
    tasks: &[Task],
    split: &str,
) -> Result<Vec<TaskOutcome>> {
    let mut out = Vec::with_capacity(tasks.len());
    for task in tasks {
        let test = task.dir.join("test.tsv");
        let file = if split == "test" && test.is_file() {
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
            out.push(TaskOutcome::Skipped { file });
            continue;
        };
        out.push(TaskOutcome::Scored {
            name: task.name.clone(),
            balanced_accuracy: ba,
            rows: examples.len(),
            file_name: file
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default()
                .to_owned(),
        });
    }
    Ok(out)
}

/// Unannotated sentences per contract scored beside the annotated spans (`--dev-cuad`).
const UNANNOTATED_PER_CONTRACT: usize = 5;

/// One task's development figure.
pub enum DevTask {
    Scored {
        name: String,
        balanced_accuracy: f64,
        /// Annotated spans of the task's category.
        positives: usize,
    },
    /// No annotated span of the task's category in the CUAD folder.
    Skipped { name: String },
}

/// The development figures: what `classify` lists of the held-out spans, and each task's
/// balanced accuracy.
pub struct DevOutcome {
    pub listing: ListingReport,
    /// Held-out annotated spans.
    pub spans: usize,
    pub tasks: Vec<DevTask>,
}

/// Development balanced accuracy per task by contract-level cross-validation of the classifier
/// on `data` (its first `limit` contracts): refit per fold, thresholds tuned inside the
/// training folds, the type gate nested the same way. Progress lines go to `log`.
pub fn dev_scores(
    data: &precedent_cuad::CuadDataset,
    tasks: &[Task],
    folds: usize,
    limit: Option<usize>,
    words_only: bool,
    log: &dyn Fn(&str),
) -> Result<DevOutcome> {
    let contracts: Vec<&_> = data
        .contracts
        .iter()
        .take(limit.unwrap_or(usize::MAX))
        .collect();
    let (options, embedder) = precedent_engine::legalbench_options(words_only);
    if embedder.is_some() {
        log(&format!(
            "embedding the annotated spans of {} contracts with MiniLM, then {} folds",
            contracts.len(),
            folds
        ));
    }
    let started = std::time::Instant::now();
    // A few sentences of each contract that no annotation covers: what `classify` says of
    // clauses of no CUAD type (they do not enter LegalBench's figures).
    let free = unannotated_sentences(&contracts, UNANNOTATED_PER_CONTRACT);
    let (mut spans, mut free) = cross_validate_with_unannotated(
        &contracts,
        folds,
        &options,
        &[],
        &free,
        embedder,
        |done, folds| {
            log(&format!(
                "fold {done}/{folds} done ({:.0} s)",
                started.elapsed().as_secs_f64()
            ))
        },
    )?;
    // The gate that learnt from unmatched sentences too, nested the same way.
    cross_validate_gate(
        &contracts,
        folds,
        &ClassifierOptions::for_second_stage(),
        &mut spans,
        &mut free,
        |done, folds| {
            log(&format!(
                "gate fold {done}/{folds} done ({:.0} s)",
                started.elapsed().as_secs_f64()
            ))
        },
    )?;
    let report = dev_report(&spans, folds, &options);
    // What a lawyer sees of the same held-out spans through `classify`.
    let listing = listing_report(&spans, &free);
    let mut scored = Vec::with_capacity(tasks.len());
    for task in tasks {
        let category = CATEGORIES[task.category];
        let (Some(&ba), Some(&positives)) =
            (report.tasks.get(category), report.positives.get(category))
        else {
            scored.push(DevTask::Skipped {
                name: task.name.clone(),
            });
            continue;
        };
        scored.push(DevTask::Scored {
            name: task.name.clone(),
            balanced_accuracy: ba,
            positives,
        });
    }
    Ok(DevOutcome {
        listing,
        spans: spans.len(),
        tasks: scored,
    })
}

/// Which model answers "is this clause of category X?".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum LegalbenchModel {
    /// Logistic regressions trained on the annotated CUAD spans themselves (default).
    Classifier,
    /// The contract typer's first stage with the thresholds shipped in
    /// `models/legalbench/thresholds.json` (the earlier method, kept for comparison).
    Typer,
}

/// What `precedent eval-legalbench` is asked to run (its flags).
pub struct LegalbenchPlan<'a> {
    /// The folder of `CUAD_<Category>/` task folders.
    pub dir: &'a Path,
    /// Which rows to score: test (train where a folder has no test file) or train.
    pub split: &'a str,
    /// The model that answers each task.
    pub model: LegalbenchModel,
    /// Thresholds replacing the model's.
    pub thresholds: Option<&'a Path>,
    /// Cross-validate the classifier on this CUAD folder instead of scoring the rows.
    pub dev_cuad: Option<&'a Path>,
    pub folds: usize,
    pub limit: Option<usize>,
    pub words_only: bool,
    /// The clause models the scorer is loaded from.
    pub models: &'a precedent_engine::ClauseModels,
}

/// Balanced accuracy per task of `plan` (rows scored, or development CV), with the text the
/// command prints (one line per task, the mean last); skipped tasks are said on stderr.
pub fn eval_legalbench(plan: &LegalbenchPlan<'_>) -> Result<(BTreeMap<String, f64>, String)> {
    let tasks = precedent_cuad::legalbench::tasks(plan.dir)?;
    let mut out = String::new();
    let (scores, few_shot) = match plan.dev_cuad {
        Some(cuad) => (dev_command(plan, cuad, &tasks, &mut out)?, 0),
        None => rows_command(plan, &tasks, &mut out)?,
    };
    let mean = scores.values().sum::<f64>() / scores.len().max(1) as f64;
    let _ = writeln!(out, "{:<45} {:5.1}", "mean", 100.0 * mean);
    if few_shot > 0 {
        // The mean alone would read as a benchmark figure; these rows are LegalBench's few-shot
        // examples, cut from CUAD contracts the classifier learns from.
        let _ = writeln!(
            out,
            "note: {few_shot} of {} tasks were scored on train.tsv (LegalBench's few-shot examples: a handful of rows, from CUAD contracts the classifier was trained on), so this mean is no benchmark figure; the development estimate is --dev-cuad's, the test figure comes from test.tsv",
            scores.len()
        );
    }
    Ok((scores, out))
}

/// What `eval-legalbench --json-out` writes: each task's balanced accuracy and their mean, as
/// fractions.
pub fn scores_json(scores: &BTreeMap<String, f64>) -> serde_json::Value {
    let mean = scores.values().sum::<f64>() / scores.len().max(1) as f64;
    serde_json::json!({ "tasks": scores, "mean": mean })
}

/// Balanced accuracy per task on the folders' rows ([`score_rows`]), and how many tasks were
/// scored on their few-shot `train.tsv`.
fn rows_command(
    plan: &LegalbenchPlan<'_>,
    tasks: &[Task],
    out: &mut String,
) -> Result<(BTreeMap<String, f64>, usize)> {
    let scorer = if plan.model == LegalbenchModel::Typer {
        Scorer::Typer(Box::new(plan.models.load_first_stage()?))
    } else {
        Scorer::Classifier(Box::new(
            plan.models.load_legalbench_classifier(plan.words_only)?,
        ))
    };
    let mut thresholds = scorer.thresholds();
    if let Some(path) = plan.thresholds {
        override_thresholds(&mut thresholds, &read_thresholds(path)?);
    }
    let mut scores = BTreeMap::new();
    // Tasks scored on LegalBench's few-shot examples (`train.tsv`), which the mean must say.
    let mut few_shot = 0;
    for outcome in score_rows(&scorer, &thresholds, tasks, plan.split)? {
        match outcome {
            TaskOutcome::Scored {
                name,
                balanced_accuracy: ba,
                rows,
                file_name,
            } => {
                let _ = writeln!(
                    out,
                    "{name:<45} {:5.1}  ({rows} rows of {file_name})",
                    100.0 * ba
                );
                if file_name == "train.tsv" {
                    few_shot += 1;
                }
                scores.insert(name, ba);
            }
            TaskOutcome::Skipped { file } => eprintln!("{}: no rows, skipped", file.display()),
        }
    }
    Ok((scores, few_shot))
}

/// Development balanced accuracy per task by contract-level cross-validation on `cuad`
/// ([`dev_scores`]), after the listing figures of `classify`.
fn dev_command(
    plan: &LegalbenchPlan<'_>,
    cuad: &Path,
    tasks: &[Task],
    out: &mut String,
) -> Result<BTreeMap<String, f64>> {
    if plan.model == LegalbenchModel::Typer {
        bail!("--dev-cuad cross-validates the classifier; the typer's figure is `eval-cuad`'s legalbench_dev");
    }
    if plan.thresholds.is_some() || plan.models.classifier.is_some() {
        bail!("--dev-cuad trains its own classifiers and thresholds per fold; drop --thresholds/--classifier");
    }
    let data = precedent_cuad::load(cuad)?;
    let dev = dev_scores(
        &data,
        tasks,
        plan.folds,
        plan.limit,
        plan.words_only,
        &|line| eprintln!("{line}"),
    )?;
    let listing = &dev.listing;
    let pct = |x: f64| 100.0 * x;
    let _ = writeln!(
        out,
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
    let _ = writeln!(
        out,
        "and of {} held-out sentences no annotation covers: {:.1}% get a likely type, {:.1}% a listed one",
        listing.unannotated,
        pct(listing.likely.unannotated_with_likely),
        pct(listing.unannotated_with_listed)
    );
    if let Some(without) = &listing.likely_without_gate {
        let _ = writeln!(
            out,
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
                let _ = writeln!(
                    out,
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

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::scores_json;

    #[test]
    fn the_json_holds_each_task_and_their_mean() {
        let scores = BTreeMap::from([("CUAD_a".to_owned(), 0.5), ("CUAD_b".to_owned(), 1.0)]);
        let json = scores_json(&scores);
        assert_eq!(json["tasks"]["CUAD_b"], 1.0);
        assert_eq!(json["mean"], 0.75);
        assert_eq!(scores_json(&BTreeMap::new())["mean"], 0.0);
    }
}
