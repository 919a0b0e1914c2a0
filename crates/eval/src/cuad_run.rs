//! `precedent eval-cuad` as one call: the CUAD folder found, the cross-validation options its
//! flags ask for, the run, the shipped second stage written when asked, the LegalBench-style
//! development figure, the table it prints and the JSON it writes (or, with `clause_types`,
//! the clause types ingest stores, cross-validated: [`crate::clause_types::clause_type_cv`]).
//!
//! Why here: which stages are cross-validated and what the report says are the harness's
//! decisions; the command parses its flags and prints the table.

use std::path::Path;
use std::time::Instant;

use anyhow::{Context, Result};
use precedent_clause_types::cache::find_cuad_dir;
use precedent_clause_types::novelty::NoveltyOptions;
use precedent_clause_types::selection::Selection;
use precedent_clause_types::stack::StackOptions;
use precedent_clause_types::TrainOptions;

use crate::cuad::{cross_validate, CuadReport, CvOptions, Scores};
use crate::legalbench::{tune_on_dev, DevReport};

/// What `eval-cuad` is asked to run (its flags).
pub struct EvalCuadPlan<'a> {
    /// CUAD folder; by default the one found from the checkout.
    pub cuad: Option<&'a Path>,
    pub folds: usize,
    /// Predictions per (contract, category).
    pub top: usize,
    /// Drop a prediction overlapping a more confident one past this (1 keeps them).
    pub max_overlap: f64,
    /// The first N contracts only.
    pub limit: Option<usize>,
    pub epochs: usize,
    pub json_out: Option<&'a Path>,
    /// Score the clause types ingest stores instead of the spans.
    pub clause_types: bool,
    pub first_stage_only: bool,
    pub no_novelty: bool,
    /// Where to write the second stage fitted on all contracts' out-of-fold logits.
    pub second_stage_out: Option<&'a Path>,
    /// The second stage also reads the sentence-embedding view.
    pub dense: bool,
    /// With `clause_types`: the cross-validated clause scores kept in this file.
    pub scores_cache: Option<&'a Path>,
}

/// Runs `plan`; returns the table to print (empty for `clause_types`, which prints its own).
pub fn eval_cuad(plan: &EvalCuadPlan<'_>) -> Result<String> {
    let dir = match plan.cuad {
        Some(d) => d.to_path_buf(),
        None => find_cuad_dir().context("no CUAD folder found: pass --cuad DIR")?,
    };
    let started = Instant::now();
    let mut data = precedent_cuad::load(&dir)?;
    if let Some(limit) = plan.limit {
        data.contracts.truncate(limit);
    }
    if plan.clause_types {
        crate::clause_types::clause_type_cv(
            &data,
            plan.folds,
            plan.epochs,
            !plan.first_stage_only,
            crate::clause_types::ClauseTypeOutputs {
                json: plan.json_out,
                scores_cache: plan.scores_cache,
            },
        )?;
        return Ok(String::new());
    }
    let r = &data.report;
    eprintln!(
        "{} contracts; {} of {} spans placed ({} by exact search, {} whitespace-collapsed, {} by word window; {} made of pieces joined with <omitted>); {} unplaced",
        data.contracts.len(),
        r.placed(),
        r.spans,
        r.exact,
        r.whitespace,
        r.fuzzy,
        r.discontiguous,
        r.unplaced
    );
    let options = CvOptions {
        folds: plan.folds,
        selection: Selection {
            top_n: plan.top,
            max_overlap: (plan.max_overlap < 1.0).then_some(plan.max_overlap),
        },
        train: TrainOptions {
            epochs: plan.epochs,
            ..TrainOptions::default()
        },
        second_stage: (!plan.first_stage_only).then(StackOptions::default),
        novelty: (!plan.first_stage_only && !plan.no_novelty).then(NoveltyOptions::default),
        dense: if plan.dense {
            Some(crate::cuad::sentence_vectors(&dir, &data)?)
        } else {
            None
        },
    };
    let report = cross_validate(&data, &options, |done, total| {
        eprintln!(
            "model fit {done}/{total} done ({:.0}s)",
            started.elapsed().as_secs_f64()
        )
    })?;
    if let (Some(path), Some(stage)) = (plan.second_stage_out, &report.second_stage) {
        std::fs::write(path, stage.to_json())
            .with_context(|| format!("writing {}", path.display()))?;
    }
    let dev = tune_on_dev(&report.held_out_clauses);
    if let Some(path) = plan.json_out {
        let json = serde_json::json!({
            "cuad": &report,
            "placement": &data.report,
            "legalbench_dev": &dev,
        });
        std::fs::write(path, serde_json::to_string_pretty(&json)?)
            .with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(table(&options, &report, &dev))
}

/// Which stages a run cross-validated, as its table's title says.
fn stages(options: &CvOptions) -> String {
    let stages = match (&options.second_stage, &options.novelty) {
        (Some(_), Some(_)) => "typer with its second stage and novelty step (nested CV)",
        (Some(_), None) => "typer with its second stage (nested CV)",
        _ => "first stage only",
    };
    if options.dense.is_some() {
        format!("{stages}, sentence-embedding view")
    } else {
        stages.to_owned()
    }
}

/// The table `eval-cuad` prints: per category, the means, the anchor and the development figure.
fn table(options: &CvOptions, report: &CuadReport, dev: &DevReport) -> String {
    use std::fmt::Write;
    let pct = |x: f64| format!("{:5.1}", 100.0 * x);
    let mut out = String::new();
    let mut row = |name: &str, s: &Scores, extra: &str| {
        let _ = writeln!(
            out,
            "{name:<36} {} {} {} {}{extra}",
            pct(s.aupr),
            pct(s.precision_at_80_recall),
            pct(s.precision_at_90_recall),
            pct(s.max_recall)
        );
    };
    let mut head = String::new();
    let _ = writeln!(
        head,
        "CUAD {}-fold contract-level CV, {} contracts, top {} predictions per question, {}",
        report.folds,
        report.contracts,
        report.selection.top_n,
        stages(options)
    );
    let _ = writeln!(
        head,
        "{:<36} {:>5} {:>5} {:>5} {:>5}",
        "category", "AUPR", "P@80R", "P@90R", "maxR"
    );
    for c in &report.per_category {
        row(
            c.category,
            &c.scores,
            &format!("  ({} spans)", c.annotations),
        );
    }
    row("mean over categories", &report.category_mean, "");
    row("pooled (CUAD evaluate.py)", &report.pooled, "");
    row(
        "pooled, one prediction per span",
        &report.pooled_one_to_one,
        "",
    );
    let _ = writeln!(
        out,
        "anchor: DeBERTa-xlarge (CUAD paper) 47.8 AUPR, 44.0 P@80R; candidates cover {:.1}% of spans; {} first-stage fits, {:.1}s each",
        100.0 * report.candidate_recall,
        report.first_stage_fits,
        report.train_seconds_per_fold
    );
    let _ = writeln!(
        out,
        "LegalBench-style development set (held-out annotations, thresholds tuned on the other half of the contracts): mean balanced accuracy {:.1}",
        100.0 * dev.mean
    );
    head + &out
}
