//! `precedent eval-cuad`: contract-level cross-validation of the clause typer on CUAD, scored as
//! the CUAD paper does (AUPR, precision at 80% / 90% recall, Jaccard ≥ 0.5 word-set matching).

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result};
use clap::Args;
use precedent_clause_types::cache::find_cuad_dir;
use precedent_clause_types::novelty::NoveltyOptions;
use precedent_clause_types::selection::Selection;
use precedent_clause_types::stack::StackOptions;
use precedent_clause_types::TrainOptions;
use precedent_eval::cuad::{cross_validate, CvOptions, Scores};
use precedent_eval::legalbench::tune_on_dev;

#[derive(Args)]
pub struct EvalCuadArgs {
    /// CUAD folder (master_clauses.csv, full_contract_txt/); default $PRECEDENT_CUAD_DIR or
    /// shared/data/cuad beside the working directory or an ancestor.
    #[arg(long)]
    pub cuad: Option<PathBuf>,
    /// Number of folds (contracts are assigned round-robin in id order).
    #[arg(long, default_value_t = 5)]
    pub folds: usize,
    /// Predictions per (contract, category), most confident first (CUAD uses 20).
    #[arg(long, default_value_t = 20)]
    pub top: usize,
    /// Drop a prediction whose intersection-over-union with a more confident one exceeds this
    /// (1 keeps overlapping candidates).
    #[arg(long, default_value_t = 0.5)]
    pub max_overlap: f64,
    /// Use only the first N contracts (by id); for quick checks.
    #[arg(long)]
    pub limit: Option<usize>,
    /// Training epochs of the typer.
    #[arg(long, default_value_t = TrainOptions::default().epochs)]
    pub epochs: usize,
    /// Write the full report (per category, pooled, LegalBench development set) as JSON.
    #[arg(long)]
    pub json_out: Option<PathBuf>,
    /// Instead of the span evaluation: how well the `clause_types` that `ingest` writes match
    /// CUAD, per segmented clause, at several confidence thresholds (typer refit per fold).
    #[arg(long)]
    pub clause_types: bool,
    /// Score with the first stage alone (no second stage; 5 typer fits instead of 15).
    #[arg(long)]
    pub first_stage_only: bool,
    /// Keep the second stage's confidences: no novelty step after it (the step that scores a
    /// prediction low when more confident ones already give its answer).
    #[arg(long, conflicts_with = "first_stage_only")]
    pub no_novelty: bool,
    /// Write the second stage fitted on the out-of-fold logits of all contracts (the file
    /// shipped as models/clause-typer/second_stage.json, or with --dense second_stage_dense.json),
    /// with its novelty step.
    #[arg(long, conflicts_with = "first_stage_only")]
    pub second_stage_out: Option<PathBuf>,
    /// The second stage as `review` runs it by default: its trees also read a classifier over
    /// each candidate's MiniLM sentence vector (nested like the clause classifier). Embeds every
    /// sentence of the contracts first (15-35 min for all 398 on 2 cores), cached under
    /// .precedent/cache/cuad-sentences/.
    #[arg(long, conflicts_with = "first_stage_only")]
    pub dense: bool,
    /// With --clause-types: keep the cross-validated clause scores in FILE and reuse them when
    /// it exists (for studying threshold rules without refitting the typers).
    #[arg(long, requires = "clause_types", hide = true)]
    pub scores_cache: Option<PathBuf>,
}

fn pct(x: f64) -> String {
    format!("{:5.1}", 100.0 * x)
}

fn row(name: &str, s: &Scores, extra: &str) {
    println!(
        "{name:<36} {} {} {} {}{extra}",
        pct(s.aupr),
        pct(s.precision_at_80_recall),
        pct(s.precision_at_90_recall),
        pct(s.max_recall)
    );
}

pub fn run(args: EvalCuadArgs) -> Result<()> {
    let dir = match args.cuad {
        Some(d) => d,
        None => find_cuad_dir().context("no CUAD folder found: pass --cuad DIR")?,
    };
    let started = Instant::now();
    let mut data = precedent_cuad::load(&dir)?;
    if let Some(limit) = args.limit {
        data.contracts.truncate(limit);
    }
    if args.clause_types {
        return precedent_eval::clause_types::clause_type_cv(
            &data,
            args.folds,
            args.epochs,
            !args.first_stage_only,
            precedent_eval::clause_types::ClauseTypeOutputs {
                json: args.json_out.as_deref(),
                scores_cache: args.scores_cache.as_deref(),
            },
        );
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
        folds: args.folds,
        selection: Selection {
            top_n: args.top,
            max_overlap: (args.max_overlap < 1.0).then_some(args.max_overlap),
        },
        train: TrainOptions {
            epochs: args.epochs,
            ..TrainOptions::default()
        },
        second_stage: (!args.first_stage_only).then(StackOptions::default),
        novelty: (!args.first_stage_only && !args.no_novelty).then(NoveltyOptions::default),
        dense: if args.dense {
            Some(precedent_eval::cuad::sentence_vectors(&dir, &data)?)
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
    if let (Some(path), Some(stage)) = (&args.second_stage_out, &report.second_stage) {
        std::fs::write(path, stage.to_json())
            .with_context(|| format!("writing {}", path.display()))?;
    }
    let dev = tune_on_dev(&report.held_out_clauses);
    let stages = match (&options.second_stage, &options.novelty) {
        (Some(_), Some(_)) => "typer with its second stage and novelty step (nested CV)",
        (Some(_), None) => "typer with its second stage (nested CV)",
        _ => "first stage only",
    };
    let stages = if options.dense.is_some() {
        format!("{stages}, sentence-embedding view")
    } else {
        stages.to_owned()
    };
    println!(
        "CUAD {}-fold contract-level CV, {} contracts, top {} predictions per question, {stages}",
        report.folds, report.contracts, report.selection.top_n
    );
    println!(
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
    println!(
        "anchor: DeBERTa-xlarge (CUAD paper) 47.8 AUPR, 44.0 P@80R; candidates cover {:.1}% of spans; {} first-stage fits, {:.1}s each",
        100.0 * report.candidate_recall,
        report.first_stage_fits,
        report.train_seconds_per_fold
    );
    println!(
        "LegalBench-style development set (held-out annotations, thresholds tuned on the other half of the contracts): mean balanced accuracy {:.1}",
        100.0 * dev.mean
    );
    if let Some(path) = &args.json_out {
        let json = serde_json::json!({
            "cuad": &report,
            "placement": &data.report,
            "legalbench_dev": &dev,
        });
        std::fs::write(path, serde_json::to_string_pretty(&json)?)
            .with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}
