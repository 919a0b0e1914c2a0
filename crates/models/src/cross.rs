//! BERT cross-encoder (sentence-transformers `CrossEncoder`) for re-ranking.

use candle_core::{Device, Module};
use candle_nn::Linear;
use sha2::Digest;
use tokenizers::{Encoding, Tokenizer, TruncationParams, TruncationStrategy};

use crate::bert::{check_ids, pad_batch, Bert, Weights};
use crate::loader::{self, Loaded};
use crate::ModelError;

/// A `BertForSequenceClassification` checkpoint scoring (query, clause) pairs.
///
/// Scores are the raw logits; no sigmoid is applied. sentence-transformers'
/// `CrossEncoder.predict` applies a sigmoid by default for one-label models, but it
/// is monotone, so rankings are identical and raw logits keep resolution where the
/// sigmoid saturates. Apply `1 / (1 + exp(-s))` if a probability is needed.
pub struct CrossEncoder {
    bert: Bert,
    pooler: Linear,
    classifier: Linear,
    num_labels: usize,
    pairs: PairTokenizer,
    max_len: usize,
    batch_size: usize,
    model_id: String,
    device: Device,
}

impl CrossEncoder {
    /// Loads a cross-encoder from a folder path or hub id (see [`crate::locate`]).
    pub fn load(spec: &str) -> Result<Self, ModelError> {
        Self::from_loaded(loader::load(spec)?)
    }

    fn from_loaded(l: Loaded) -> Result<Self, ModelError> {
        let head = ClassificationModel::load(l)?;
        if head.pooling != crate::Pooling::Cls {
            return Err(ModelError::config(
                head.dir.join("config.json"),
                "a cross-encoder pools its [CLS] token; this folder is a mean-pooled sentence classifier",
            ));
        }
        if !(1..=2).contains(&head.num_labels) {
            return Err(ModelError::config(
                head.dir.join("config.json"),
                format!("cross-encoder with {} labels: only 1 (relevance logit) or 2 (not/relevant) are supported", head.num_labels),
            ));
        }
        Ok(Self {
            pairs: PairTokenizer::new(&head.tokenizer, head.max_len, &head.dir)?,
            bert: head.bert,
            pooler: head.pooler,
            classifier: head.classifier,
            num_labels: head.num_labels,
            max_len: head.max_len,
            batch_size: 32,
            model_id: head.model_id,
            device: Device::Cpu,
        })
    }

    pub fn model_id(&self) -> &str {
        &self.model_id
    }

    /// Pair length limit in tokens (specials included).
    pub fn max_len(&self) -> usize {
        self.max_len
    }

    /// Sets how many pairs go through the model at once.
    pub fn with_batch_size(mut self, batch_size: usize) -> Self {
        self.batch_size = batch_size.max(1);
        self
    }

    /// Scores each doc against `query`; higher means more relevant. For two-label
    /// models the score is `logit[1] - logit[0]`, the log-odds of the second label.
    pub fn score(&self, query: &str, docs: &[&str]) -> Result<Vec<f32>, ModelError> {
        let pairs: Vec<(&str, &str)> = docs.iter().map(|d| (query, *d)).collect();
        self.score_pairs(&pairs)
    }

    /// Scores arbitrary (query, doc) pairs, in input order.
    pub fn score_pairs(&self, pairs: &[(&str, &str)]) -> Result<Vec<f32>, ModelError> {
        let encs = pairs
            .iter()
            .map(|&(q, d)| self.pairs.encode(q, d))
            .collect::<Result<Vec<_>, _>>()?;
        let mut order: Vec<usize> = (0..encs.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(encs[i].get_ids().len()));
        let mut scores = vec![0f32; encs.len()];
        for batch in order.chunks(self.batch_size) {
            let seqs: Vec<(&[u32], &[u32])> = batch
                .iter()
                .map(|&i| (encs[i].get_ids(), encs[i].get_type_ids()))
                .collect();
            check_ids(&seqs, self.bert.vocab_size, self.bert.type_vocab_size)?;
            let (ids, types, lens) = pad_batch(&seqs, &self.device)?;
            let hidden = self.bert.forward(&ids, &types, &lens)?; // [b, l, h]
            let cls = hidden.narrow(1, 0, 1)?.squeeze(1)?;
            let pooled = self.pooler.forward(&cls)?.tanh()?;
            let logits = self.classifier.forward(&pooled)?.to_vec2::<f32>()?;
            for (&i, row) in batch.iter().zip(logits) {
                scores[i] = match self.num_labels {
                    1 => row[0],
                    _ => row[1] - row[0],
                };
            }
        }
        Ok(scores)
    }
}

/// Encodes (query, clause) pairs into one window of at most `max_len` tokens, cutting
/// the clause first: the query is short and carries the intent. Shared by scoring and
/// fine-tuning, so a model is trained on exactly the windows it will be scored on.
pub(crate) struct PairTokenizer {
    /// Truncates only the clause.
    only_second: Tokenizer,
    /// Fallback for a query that alone exceeds the window.
    longest_first: Tokenizer,
}

impl PairTokenizer {
    pub(crate) fn new(
        tokenizer: &Tokenizer,
        max_len: usize,
        dir: &std::path::Path,
    ) -> Result<Self, ModelError> {
        let tok = |strategy| -> Result<Tokenizer, ModelError> {
            let mut t = tokenizer.clone();
            t.with_truncation(Some(TruncationParams {
                max_length: max_len,
                strategy,
                ..Default::default()
            }))
            .map_err(|e| ModelError::tokenizer(dir.display(), e))?;
            Ok(t)
        };
        Ok(Self {
            only_second: tok(TruncationStrategy::OnlySecond)?,
            longest_first: tok(TruncationStrategy::LongestFirst)?,
        })
    }

    pub(crate) fn encode(&self, q: &str, d: &str) -> Result<Encoding, ModelError> {
        match self.only_second.encode_fast((q, d), true) {
            Ok(e) => Ok(e),
            // OnlySecond refuses when the query alone overflows the window.
            Err(_) => self
                .longest_first
                .encode_fast((q, d), true)
                .map_err(|e| ModelError::tokenizer("encoding (query, clause) pair", e)),
        }
    }
}

/// A BERT with a sequence-classification head (`BertForSequenceClassification`: encoder,
/// pooler, one logit per label), as the cross-encoder and [`crate::SequenceClassifier`] load it;
/// each then wraps the tokenizer its way.
pub(crate) struct ClassificationModel {
    pub bert: Bert,
    pub pooler: Linear,
    pub classifier: Linear,
    pub num_labels: usize,
    pub max_len: usize,
    pub model_id: String,
    pub tokenizer: Tokenizer,
    pub dir: std::path::PathBuf,
    pub pooling: crate::Pooling,
}

impl ClassificationModel {
    pub fn load(l: Loaded) -> Result<Self, ModelError> {
        let Loaded {
            name,
            dir,
            cfg,
            weights,
            tokenizer,
            hasher,
            model_max_length,
        } = l;
        cfg.require_bert(&dir)?;
        let prefix = weights.encoder_prefix()?;
        let bert = Bert::load(&weights, prefix, &cfg)?;
        let h = cfg.hidden_size;
        let num_labels = cfg.labels();
        let pooling = cfg.pooling;
        let pooler = linear(&weights, &format!("{prefix}pooler.dense"), h, h)?;
        let classifier = linear(&weights, "classifier", num_labels, h)?;
        drop(weights);
        let max_len = model_max_length
            .unwrap_or(512)
            .min(cfg.max_position_embeddings);
        let fingerprint = loader::hex(&hasher.finalize()[..8]);
        Ok(ClassificationModel {
            bert,
            pooler,
            classifier,
            num_labels,
            max_len,
            model_id: format!("{name}@{fingerprint}"),
            tokenizer,
            dir,
            pooling,
        })
    }
}

fn linear(w: &Weights, prefix: &str, out_dim: usize, in_dim: usize) -> Result<Linear, ModelError> {
    let weight = w.get(&format!("{prefix}.weight"), &[out_dim, in_dim])?;
    let bias = w.get(&format!("{prefix}.bias"), &[out_dim])?;
    Ok(Linear::new(weight, Some(bias)))
}
