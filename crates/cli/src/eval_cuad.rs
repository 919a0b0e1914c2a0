//! `precedent eval-cuad`: contract-level cross-validation of the clause typer on CUAD, scored as
//! the CUAD paper does (AUPR, precision at 80% / 90% recall, Jaccard ≥ 0.5 word-set matching).

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use precedent_clause_types::TrainOptions;
use precedent_eval::cuad_run::{eval_cuad, EvalCuadPlan};

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
    /// Write the second stage (with its novelty step) fitted on the out-of-fold logits of all
    /// contracts: the file shipped under models/clause-typer/.
    #[arg(long, conflicts_with = "first_stage_only")]
    pub second_stage_out: Option<PathBuf>,
    /// The second stage as `review` runs it by default, also reading each candidate's MiniLM
    /// sentence vector (embeds every sentence first, 15-35 min on 2 cores, then cached).
    #[arg(long, conflicts_with = "first_stage_only")]
    pub dense: bool,
    /// With --clause-types: keep the cross-validated clause scores in FILE and reuse them when
    /// it exists (for studying threshold rules without refitting the typers).
    #[arg(long, requires = "clause_types", hide = true)]
    pub scores_cache: Option<PathBuf>,
}

pub fn run(args: EvalCuadArgs) -> Result<()> {
    let plan = EvalCuadPlan {
        cuad: args.cuad.as_deref(),
        folds: args.folds,
        top: args.top,
        max_overlap: args.max_overlap,
        limit: args.limit,
        epochs: args.epochs,
        json_out: args.json_out.as_deref(),
        clause_types: args.clause_types,
        first_stage_only: args.first_stage_only,
        no_novelty: args.no_novelty,
        second_stage_out: args.second_stage_out.as_deref(),
        dense: args.dense,
        scores_cache: args.scores_cache.as_deref(),
    };
    print!("{}", eval_cuad(&plan)?);
    Ok(())
}
