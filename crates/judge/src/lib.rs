//! LLM relevance judges for ACORD reranking, as in the ACORD paper: a language model reads the
//! attorney's query and one candidate clause and rates it on the paper's 1–5 star rubric
//! (pointwise), or reads two clauses and says which serves the query better (pairwise).
//!
//! Two backends implement [`Judge`]:
//! - [`OpenAiJudge`]: any OpenAI-compatible `/chat/completions` endpoint (hosted or a local
//!   server such as llama.cpp or vLLM), with a worker pool, retries with backoff, timeouts,
//!   token and cost accounting.
//! - [`LocalJudge`]: a GGUF llama-architecture model run in-process on candle. Instead of
//!   sampling text it reads the next-token logits of the digits `1`..`5` after the prompt, so one
//!   forward pass gives a deterministic, continuous expected-star score.
//!
//! Both share one prompt ([`prompt`]) and one disk cache of judgements ([`JudgementCache`]), so a
//! rerun of an evaluation costs nothing. [`JudgeReranker`] plugs a judge into a
//! `precedent_rank::Pipeline` as a last stage over the top N of a base pipeline, and [`pipelines`]
//! names the pipelines that end with a judge and builds them from their settings.

pub mod cache;
pub mod local;
pub mod openai;
pub mod pipelines;
pub mod prompt;
pub mod rerank;
mod tokenizer;

use std::sync::Mutex;

use serde::{Deserialize, Serialize};

pub use cache::JudgementCache;
pub use local::{LocalJudge, LocalOptions, JUDGE_MODEL_ENV, SMOLLM2_WHEEL_FILE};
pub use openai::{OpenAiConfig, OpenAiJudge};
pub use rerank::{combine, JudgeMode, JudgeReranker, DEFAULT_JUDGE_TOP};

/// What a judge said about one clause for one query.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Judgement {
    /// Stars on the rubric's 1..=5 scale. Text judges give a whole number; logit judges give the
    /// expected value under their distribution over the five digits, which breaks ties.
    pub stars: f32,
    /// What the model said: its text answer, or the digit probabilities of a logit judge.
    pub raw: String,
    pub tokens_in: u32,
    pub tokens_out: u32,
    /// Answered from the disk cache (no model call, no cost).
    #[serde(default)]
    pub cached: bool,
}

/// Which of two clauses a judge prefers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Preference {
    /// Probability that the first clause (shown as "A") is the better one: 1 or 0 for text
    /// judges, the softmax over the `A`/`B` logits for logit judges.
    pub first_better: f32,
    pub raw: String,
    pub tokens_in: u32,
    pub tokens_out: u32,
    #[serde(default)]
    pub cached: bool,
}

/// Running totals of what a judge cost.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Usage {
    /// Model calls made (cache hits excluded; retries of one call count once).
    pub calls: u64,
    pub cache_hits: u64,
    pub retries: u64,
    pub tokens_in: u64,
    pub tokens_out: u64,
    /// From the configured per-1k-token prices (0 for local models).
    pub cost_usd: f64,
    /// Wall time spent in model calls (summed over workers).
    pub seconds: f64,
}

impl Usage {
    pub(crate) fn add_call(&mut self, tokens_in: u32, tokens_out: u32, cost: f64, seconds: f64) {
        self.calls += 1;
        self.tokens_in += u64::from(tokens_in);
        self.tokens_out += u64::from(tokens_out);
        self.cost_usd += cost;
        self.seconds += seconds;
    }
}

#[derive(Debug, thiserror::Error)]
pub enum JudgeError {
    #[error("judge configuration: {0}")]
    Config(String),
    #[error("{url}: HTTP {status}: {body}")]
    Http {
        url: String,
        status: u16,
        body: String,
    },
    #[error("{url}: {message} (gave up after {attempts} attempts)")]
    Transport {
        url: String,
        message: String,
        attempts: u32,
    },
    #[error("{url}: the response is not an OpenAI chat completion ({reason}): {body}")]
    BadResponse {
        url: String,
        reason: String,
        body: String,
    },
    #[error("the judge's answer has no {expected}: {raw:?}")]
    Unparseable { expected: String, raw: String },
    #[error("judge model: {0}")]
    Model(String),
    #[error("judgement cache {path}: {message}")]
    Cache { path: String, message: String },
}

/// A relevance judge. Implementations are shared across threads by the reranker.
pub trait Judge: Send + Sync {
    /// `backend:model`, shown in reports and part of cache keys.
    fn name(&self) -> String;

    /// Rates `clause` for `query` on the 1–5 rubric.
    fn judge(&self, query: &str, clause: &str) -> Result<Judgement, JudgeError>;

    /// Rates several clauses for one query (in order). Backends override this to share work
    /// (the local model reuses the prompt prefix; the HTTP client runs a worker pool).
    fn judge_all(&self, query: &str, clauses: &[&str]) -> Result<Vec<Judgement>, JudgeError> {
        clauses.iter().map(|c| self.judge(query, c)).collect()
    }

    /// Says which of `a` (shown first, as "A") and `b` serves `query` better.
    fn prefer(&self, query: &str, a: &str, b: &str) -> Result<Preference, JudgeError>;

    /// Totals since the judge was created.
    fn usage(&self) -> Usage;
}

/// Usage totals behind a lock, shared by the backends.
#[derive(Debug, Default)]
pub(crate) struct UsageMeter(Mutex<Usage>);

impl UsageMeter {
    pub(crate) fn update(&self, f: impl FnOnce(&mut Usage)) {
        let mut usage = self.0.lock().unwrap_or_else(|p| p.into_inner());
        f(&mut usage);
    }

    pub(crate) fn snapshot(&self) -> Usage {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}
