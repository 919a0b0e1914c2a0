//! The pipelines that end with a judge, for every face that ranks (`search`, `eval`, `bench`):
//! `learned+judge` (the local GGUF judge) and `learned+llm` (an OpenAI-compatible endpoint), each
//! the learned pipeline followed by the judge over its top N. Which names exist, which backend
//! each uses, how a judge is loaded from its settings and plugged in are decided here once.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use precedent_library::Library;
use precedent_rank::Pipeline;

use crate::{
    Judge, JudgeMode, JudgeReranker, JudgementCache, LocalJudge, LocalOptions, OpenAiConfig,
    OpenAiJudge,
};

/// Pipelines that end with a judge, and the judge backend each uses.
pub const JUDGE_PIPELINES: &[(&str, &str)] = &[("learned+judge", "judge"), ("learned+llm", "llm")];

/// The pipeline a judge pipeline starts from.
pub const BASE_PIPELINE: &str = "learned";

/// Judge weight used when none is given. 0 keeps the learned order: the 5-fold cross-validation
/// of `eval-judge` over ACORD train + valid found no weight at which the local SmolLM2-135M judge
/// helps; pass a weight to use a stronger judge.
pub const DEFAULT_JUDGE_WEIGHT: f32 = 0.0;

/// The judge backend of a pipeline name, if it ends with a judge.
pub fn judge_backend(name: &str) -> Option<&'static str> {
    JUDGE_PIPELINES
        .iter()
        .find(|(p, _)| *p == name)
        .map(|(_, b)| *b)
}

/// How a judge is loaded and how its stage ranks.
#[derive(Debug, Clone)]
pub struct JudgeSettings {
    /// How many of the base pipeline's top clauses the judge reads.
    pub top: usize,
    pub mode: JudgeMode,
    /// Weight of the judge's stars against the base order.
    pub weight: f32,
    /// GGUF model of the local judge (default: found by [`crate::local::locate`]).
    pub model: Option<PathBuf>,
    /// Local judge: clauses are cut to this many tokens.
    pub max_clause_tokens: usize,
    /// Disk cache of judgements; `None` reads and writes none.
    pub cache: Option<PathBuf>,
}

impl JudgeSettings {
    /// Refuses settings no judge stage can run with.
    pub fn check(&self) -> Result<()> {
        if !self.weight.is_finite() || self.weight < 0.0 {
            bail!("--judge-weight must be a non-negative number");
        }
        if self.top == 0 {
            bail!("--judge-top must be at least 1");
        }
        Ok(())
    }

    /// Loads the judge of a backend: `judge` (local GGUF) or `llm` (OpenAI-compatible, from the
    /// environment).
    pub fn load(&self, backend: &str) -> Result<Arc<dyn Judge>> {
        let cache = match &self.cache {
            Some(dir) => Some(Arc::new(JudgementCache::open(dir)?)),
            None => None,
        };
        Ok(match backend {
            "judge" => {
                let path = crate::local::locate(self.model.as_deref())?;
                let options = LocalOptions {
                    max_clause_tokens: self.max_clause_tokens,
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

    /// `base` followed by the judge of `backend` over its top [`JudgeSettings::top`]; returns
    /// the pipeline and the judge (for its usage report).
    pub fn then_judge(
        &self,
        base: Pipeline,
        library: Arc<Library>,
        backend: &'static str,
    ) -> Result<(Pipeline, Arc<dyn Judge>)> {
        self.check()?;
        let judge = self.load(backend)?;
        let stage = JudgeReranker::new(backend, library, judge.clone(), self.mode, self.weight);
        Ok((base.then(Box::new(stage), self.top), judge))
    }
}

/// One line: what the judge did and cost.
pub fn usage_line(judge: &dyn Judge) -> String {
    let u = judge.usage();
    format!(
        "judge {}: {} calls, {} cache hits, {} retries, {} tokens in, {} out, ${:.4}, {:.1} s in calls",
        judge.name(),
        u.calls,
        u.cache_hits,
        u.retries,
        u.tokens_in,
        u.tokens_out,
        u.cost_usd,
        u.seconds
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn judge_pipelines_name_their_backend() {
        assert_eq!(judge_backend("learned+judge"), Some("judge"));
        assert_eq!(judge_backend("learned+llm"), Some("llm"));
        assert_eq!(judge_backend("learned"), None);
    }

    #[test]
    fn settings_refuse_negative_weights_and_no_clauses() {
        let settings = JudgeSettings {
            top: 10,
            mode: JudgeMode::Pointwise,
            weight: 0.5,
            model: None,
            max_clause_tokens: 384,
            cache: None,
        };
        assert!(settings.check().is_ok());
        assert!(JudgeSettings {
            weight: -1.0,
            ..settings.clone()
        }
        .check()
        .is_err());
        assert!(JudgeSettings { top: 0, ..settings }.check().is_err());
    }
}
