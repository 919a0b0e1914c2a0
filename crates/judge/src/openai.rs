//! A judge behind any OpenAI-compatible `/chat/completions` endpoint.
//!
//! Hosted APIs rate-limit and fail transiently, so every call is retried with exponential
//! backoff on 429, 5xx and transport errors (timeouts, refused connections), honouring a
//! `Retry-After` header; other 4xx fail at once with the server's message. A batch runs on a
//! bounded pool of worker threads, and answers land in the disk cache as they arrive, so an
//! interrupted run loses nothing it paid for.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::cache::{cache_key, CachedAnswer};
use crate::prompt::{self, Message};
use crate::{Judge, JudgeError, Judgement, JudgementCache, Preference, Usage, UsageMeter};

pub const BASE_URL_ENV: &str = "PRECEDENT_LLM_BASE_URL";
pub const MODEL_ENV: &str = "PRECEDENT_LLM_MODEL";
pub const API_KEY_ENV: &str = "PRECEDENT_LLM_API_KEY";
/// USD per 1,000 prompt tokens / completion tokens, for cost accounting.
pub const PRICE_IN_ENV: &str = "PRECEDENT_LLM_PRICE_IN";
pub const PRICE_OUT_ENV: &str = "PRECEDENT_LLM_PRICE_OUT";
pub const CONCURRENCY_ENV: &str = "PRECEDENT_LLM_CONCURRENCY";
pub const TIMEOUT_ENV: &str = "PRECEDENT_LLM_TIMEOUT_SECS";

#[derive(Debug, Clone)]
pub struct OpenAiConfig {
    /// e.g. `https://api.openai.com/v1` or `http://127.0.0.1:8000/v1`; `/chat/completions` is
    /// appended.
    pub base_url: String,
    pub model: String,
    /// Sent as `Authorization: Bearer KEY`; local servers often need none.
    pub api_key: Option<String>,
    /// Per request, connect to last byte.
    pub timeout: Duration,
    /// Attempts after the first one.
    pub max_retries: u32,
    /// First backoff; doubled per retry, capped at `max_backoff`.
    pub backoff: Duration,
    pub max_backoff: Duration,
    /// Worker threads for a batch.
    pub concurrency: usize,
    pub price_in_per_1k: f64,
    pub price_out_per_1k: f64,
    /// Completion budget: the answer is one digit or letter.
    pub max_tokens: u32,
}

impl OpenAiConfig {
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> Self {
        OpenAiConfig {
            base_url: base_url.into(),
            model: model.into(),
            api_key: None,
            timeout: Duration::from_secs(60),
            max_retries: 5,
            backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(30),
            concurrency: 4,
            price_in_per_1k: 0.0,
            price_out_per_1k: 0.0,
            max_tokens: 8,
        }
    }

    /// Reads `PRECEDENT_LLM_BASE_URL`, `PRECEDENT_LLM_MODEL` (both required),
    /// `PRECEDENT_LLM_API_KEY`, `PRECEDENT_LLM_PRICE_IN`/`_OUT` (USD per 1k tokens),
    /// `PRECEDENT_LLM_CONCURRENCY` and `PRECEDENT_LLM_TIMEOUT_SECS`.
    pub fn from_env() -> Result<Self, JudgeError> {
        Self::from_lookup(|name| std::env::var(name).ok().filter(|v| !v.trim().is_empty()))
    }

    fn from_lookup(get: impl Fn(&str) -> Option<String>) -> Result<Self, JudgeError> {
        let required = |name: &str, example: &str| {
            get(name).ok_or_else(|| {
                JudgeError::Config(format!(
                    "set {name} (e.g. {example}); the OpenAI-compatible judge reads {BASE_URL_ENV}, {MODEL_ENV} and optionally {API_KEY_ENV}"
                ))
            })
        };
        let mut config = OpenAiConfig::new(
            required(BASE_URL_ENV, "https://api.openai.com/v1")?,
            required(MODEL_ENV, "gpt-4o-mini")?,
        );
        config.api_key = get(API_KEY_ENV);
        let number = |name: &str| -> Result<Option<f64>, JudgeError> {
            get(name)
                .map(|v| {
                    v.trim()
                        .parse::<f64>()
                        .ok()
                        .filter(|x| x.is_finite() && *x >= 0.0)
                        .ok_or_else(|| {
                            JudgeError::Config(format!("{name}={v:?} is not a non-negative number"))
                        })
                })
                .transpose()
        };
        if let Some(p) = number(PRICE_IN_ENV)? {
            config.price_in_per_1k = p;
        }
        if let Some(p) = number(PRICE_OUT_ENV)? {
            config.price_out_per_1k = p;
        }
        if let Some(c) = number(CONCURRENCY_ENV)? {
            config.concurrency = (c as usize).max(1);
        }
        if let Some(t) = number(TIMEOUT_ENV)? {
            config.timeout = Duration::from_secs_f64(t.max(0.1));
        }
        Ok(config)
    }

    fn url(&self) -> String {
        format!("{}/chat/completions", self.base_url.trim_end_matches('/'))
    }
}

pub struct OpenAiJudge {
    config: OpenAiConfig,
    agent: ureq::Agent,
    cache: Option<Arc<JudgementCache>>,
    usage: UsageMeter,
}

/// One completed chat call.
struct Completion {
    text: String,
    tokens_in: u32,
    tokens_out: u32,
}

impl OpenAiJudge {
    pub fn new(config: OpenAiConfig, cache: Option<Arc<JudgementCache>>) -> Self {
        let agent = ureq::AgentBuilder::new().timeout(config.timeout).build();
        OpenAiJudge {
            config,
            agent,
            cache,
            usage: UsageMeter::default(),
        }
    }

    pub fn config(&self) -> &OpenAiConfig {
        &self.config
    }

    /// Answers from the cache, or calls the endpoint, parses with `parse` and caches.
    fn cached_call(
        &self,
        mode: &str,
        query: &str,
        texts: &[&str],
        messages: Vec<Message>,
        parse: impl Fn(&str) -> Result<f32, JudgeError>,
    ) -> Result<(CachedAnswer, bool), JudgeError> {
        let key = cache_key("openai", &self.config.model, mode, query, texts);
        if let Some(hit) = self.cache.as_ref().and_then(|c| c.get(&key)) {
            self.usage.update(|u| u.cache_hits += 1);
            return Ok((hit, true));
        }
        let completion = self.complete(&messages)?;
        let score = parse(&completion.text)?;
        let answer = CachedAnswer {
            key,
            score,
            raw: completion.text,
            tokens_in: completion.tokens_in,
            tokens_out: completion.tokens_out,
        };
        if let Some(cache) = &self.cache {
            cache.put(answer.clone())?;
        }
        Ok((answer, false))
    }

    /// One chat completion with retries; accounts tokens and cost.
    fn complete(&self, messages: &[Message]) -> Result<Completion, JudgeError> {
        let url = self.config.url();
        let body = json!({
            "model": self.config.model,
            "messages": messages,
            "temperature": 0,
            "max_tokens": self.config.max_tokens,
        });
        let started = Instant::now();
        let mut attempt: u32 = 0;
        loop {
            let mut request = self
                .agent
                .post(&url)
                .set("Content-Type", "application/json");
            if let Some(key) = &self.config.api_key {
                request = request.set("Authorization", &format!("Bearer {key}"));
            }
            let wait = match request.send_string(&body.to_string()) {
                Ok(response) => {
                    let text = response.into_string().map_err(|e| JudgeError::Transport {
                        url: url.clone(),
                        message: format!("reading the response: {e}"),
                        attempts: attempt + 1,
                    })?;
                    let completion = parse_completion(&url, &text)?;
                    let cost = f64::from(completion.tokens_in) / 1000.0
                        * self.config.price_in_per_1k
                        + f64::from(completion.tokens_out) / 1000.0 * self.config.price_out_per_1k;
                    let seconds = started.elapsed().as_secs_f64();
                    self.usage.update(|u| {
                        u.add_call(completion.tokens_in, completion.tokens_out, cost, seconds)
                    });
                    return Ok(completion);
                }
                Err(ureq::Error::Status(status, response)) => {
                    let retry_after = response
                        .header("Retry-After")
                        .and_then(|v| v.trim().parse::<f64>().ok())
                        .filter(|s| s.is_finite() && *s >= 0.0)
                        .map(Duration::from_secs_f64);
                    let body = response.into_string().unwrap_or_default();
                    let retryable = status == 429 || (500..600).contains(&status);
                    if !retryable || attempt >= self.config.max_retries {
                        return Err(JudgeError::Http {
                            url,
                            status,
                            body: snippet(&body),
                        });
                    }
                    retry_after.unwrap_or_else(|| self.backoff(attempt))
                }
                Err(ureq::Error::Transport(t)) => {
                    if attempt >= self.config.max_retries {
                        return Err(JudgeError::Transport {
                            url,
                            message: t.to_string(),
                            attempts: attempt + 1,
                        });
                    }
                    self.backoff(attempt)
                }
            };
            attempt += 1;
            self.usage.update(|u| u.retries += 1);
            tracing::debug!("retrying {url} in {wait:?} (attempt {attempt})");
            std::thread::sleep(wait.min(self.config.max_backoff));
        }
    }

    fn backoff(&self, attempt: u32) -> Duration {
        self.config
            .backoff
            .saturating_mul(1u32 << attempt.min(16))
            .min(self.config.max_backoff)
    }
}

fn snippet(body: &str) -> String {
    let flat = body.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() > 300 {
        format!("{}…", flat.chars().take(300).collect::<String>())
    } else {
        flat
    }
}

fn parse_completion(url: &str, body: &str) -> Result<Completion, JudgeError> {
    let bad = |reason: &str| JudgeError::BadResponse {
        url: url.to_owned(),
        reason: reason.to_owned(),
        body: snippet(body),
    };
    let value: Value = serde_json::from_str(body).map_err(|_| bad("not JSON"))?;
    let text = value
        .pointer("/choices/0/message/content")
        .and_then(Value::as_str)
        .ok_or_else(|| bad("no choices[0].message.content"))?;
    let tokens = |field: &str| {
        value
            .pointer(&format!("/usage/{field}"))
            .and_then(Value::as_u64)
            .map_or(0, |n| u32::try_from(n).unwrap_or(u32::MAX))
    };
    Ok(Completion {
        text: text.to_owned(),
        tokens_in: tokens("prompt_tokens"),
        tokens_out: tokens("completion_tokens"),
    })
}

fn stars_of(raw: &str) -> Result<f32, JudgeError> {
    prompt::parse_stars(raw)
        .map(f32::from)
        .ok_or_else(|| JudgeError::Unparseable {
            expected: "star rating 1-5".into(),
            raw: raw.to_owned(),
        })
}

fn preference_of(raw: &str) -> Result<f32, JudgeError> {
    prompt::parse_preference(raw)
        .map(|a| if a { 1.0 } else { 0.0 })
        .ok_or_else(|| JudgeError::Unparseable {
            expected: "choice of clause A or B".into(),
            raw: raw.to_owned(),
        })
}

impl Judge for OpenAiJudge {
    fn name(&self) -> String {
        format!("openai:{}", self.config.model)
    }

    fn judge(&self, query: &str, clause: &str) -> Result<Judgement, JudgeError> {
        let messages = prompt::pointwise_messages(query, clause);
        let (answer, cached) =
            self.cached_call("pointwise", query, &[clause], messages, stars_of)?;
        Ok(Judgement {
            stars: answer.score,
            raw: answer.raw,
            tokens_in: answer.tokens_in,
            tokens_out: answer.tokens_out,
            cached,
        })
    }

    /// Runs the clauses on `concurrency` worker threads; the first error (after retries) fails
    /// the batch, but every answer received before it is already cached.
    fn judge_all(&self, query: &str, clauses: &[&str]) -> Result<Vec<Judgement>, JudgeError> {
        let next = AtomicUsize::new(0);
        let workers = self.config.concurrency.clamp(1, clauses.len().max(1));
        let mut results: Vec<Option<Result<Judgement, JudgeError>>> =
            (0..clauses.len()).map(|_| None).collect();
        let done: Vec<Vec<(usize, Result<Judgement, JudgeError>)>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..workers)
                .map(|_| {
                    s.spawn(|| {
                        let mut mine = Vec::new();
                        loop {
                            let i = next.fetch_add(1, Ordering::Relaxed);
                            let Some(clause) = clauses.get(i) else {
                                break;
                            };
                            let result = self.judge(query, clause);
                            let failed = result.is_err();
                            mine.push((i, result));
                            if failed {
                                // Stop handing out work: the batch fails anyway.
                                next.store(clauses.len(), Ordering::Relaxed);
                                break;
                            }
                        }
                        mine
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_default())
                .collect()
        });
        for (i, r) in done.into_iter().flatten() {
            results[i] = Some(r);
        }
        let mut out = Vec::with_capacity(clauses.len());
        for r in results {
            match r {
                Some(Ok(j)) => out.push(j),
                Some(Err(e)) => return Err(e),
                None => {
                    return Err(JudgeError::Model(
                        "a judge worker stopped before answering (another call failed first)"
                            .into(),
                    ))
                }
            }
        }
        Ok(out)
    }

    fn prefer(&self, query: &str, a: &str, b: &str) -> Result<Preference, JudgeError> {
        let messages = prompt::pairwise_messages(query, a, b);
        let (answer, cached) =
            self.cached_call("pairwise", query, &[a, b], messages, preference_of)?;
        Ok(Preference {
            first_better: answer.score,
            raw: answer.raw,
            tokens_in: answer.tokens_in,
            tokens_out: answer.tokens_out,
            cached,
        })
    }

    fn usage(&self) -> Usage {
        self.usage.snapshot()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_from_environment_names_what_is_missing() {
        let err = OpenAiConfig::from_lookup(|_| None).unwrap_err().to_string();
        assert!(err.contains(BASE_URL_ENV), "{err}");
        let vars = [
            (BASE_URL_ENV, "http://127.0.0.1:9/v1/"),
            (MODEL_ENV, "m"),
            (PRICE_IN_ENV, "0.15"),
            (CONCURRENCY_ENV, "8"),
        ];
        let get = |n: &str| {
            vars.iter()
                .find(|(k, _)| *k == n)
                .map(|(_, v)| v.to_string())
        };
        let config = OpenAiConfig::from_lookup(get).unwrap();
        assert_eq!(config.url(), "http://127.0.0.1:9/v1/chat/completions");
        assert_eq!(config.price_in_per_1k, 0.15);
        assert_eq!(config.concurrency, 8);
        assert!(config.api_key.is_none());
        let bad = [
            (BASE_URL_ENV, "u"),
            (MODEL_ENV, "m"),
            (PRICE_OUT_ENV, "cheap"),
        ];
        let get = |n: &str| {
            bad.iter()
                .find(|(k, _)| *k == n)
                .map(|(_, v)| v.to_string())
        };
        let err = OpenAiConfig::from_lookup(get).unwrap_err().to_string();
        assert!(err.contains("PRECEDENT_LLM_PRICE_OUT=\"cheap\""), "{err}");
    }

    #[test]
    fn completions_are_parsed_with_usage() {
        let body = r#"{"choices":[{"message":{"role":"assistant","content":"4"}}],"usage":{"prompt_tokens":210,"completion_tokens":1}}"#;
        let c = parse_completion("u", body).unwrap();
        assert_eq!((c.text.as_str(), c.tokens_in, c.tokens_out), ("4", 210, 1));
        let err = parse_completion("u", "<html>oops</html>")
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("not JSON") && err.contains("oops"), "{err}");
        let err = parse_completion("u", r#"{"choices":[]}"#)
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("choices[0].message.content"), "{err}");
    }
}
