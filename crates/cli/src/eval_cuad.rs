//! `precedent eval-cuad`: contract-level cross-validation of the clause typer on CUAD, scored as
//! the CUAD paper does (AUPR, precision at 80% / 90% recall, Jaccard ≥ 0.5 word-set matching).

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result};
use clap::Args;
use precedent_cuad::cache::find_cuad_dir;
use precedent_cuad::eval::{cross_validate, CvOptions, Scores, Selection};
use precedent_cuad::legalbench::tune_on_dev;
use precedent_cuad::TrainOptions;

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
    /// Drop a prediction overlapping a more confident one by more than this share of the
    /// shorter span (1 keeps overlapping candidates).
    #[arg(long, default_value_t = 0.9)]
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
    };
    let folds = options.folds;
    let report = cross_validate(&data, &options, |f| {
        eprintln!(
            "fold {f}/{folds} done ({:.0}s)",
            started.elapsed().as_secs_f64()
        )
    });
    let dev = tune_on_dev(&report.held_out_clauses);
    println!(
        "CUAD {}-fold contract-level CV, {} contracts, top {} predictions per question",
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
        "anchor: DeBERTa-xlarge (CUAD paper) 47.8 AUPR, 44.0 P@80R; candidates cover {:.1}% of spans; typer fit {:.1}s per fold",
        100.0 * report.candidate_recall,
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
