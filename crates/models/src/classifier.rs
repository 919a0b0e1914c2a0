//! A BERT sentence classifier with one logit per label (`BertForSequenceClassification`
//! with `num_labels` outputs, such as [`crate::MultiLabelTrainer`] saves), on the fast
//! inference encoder of `bert.rs`.

use candle_core::{Device, Module};
use candle_nn::Linear;
use tokenizers::Tokenizer;

use crate::bert::{check_ids, pad_batch, Bert};
use crate::cross::ClassificationModel;
use crate::finetune::{mean_pooled, truncating};
use crate::loader;
use crate::ModelError;
use crate::Pooling;

/// Scores single sentences: per sentence, the raw logit of each label (apply a sigmoid for
/// a multi-label probability).
pub struct SequenceClassifier {
    bert: Bert,
    pooler: Linear,
    classifier: Linear,
    num_labels: usize,
    tokenizer: Tokenizer,
    max_len: usize,
    batch_size: usize,
    model_id: String,
    device: Device,
    pooling: Pooling,
}

impl SequenceClassifier {
    /// Loads a classifier from a folder path or hub id (see [`crate::locate`]).
    pub fn load(spec: &str) -> Result<Self, ModelError> {
        let head = ClassificationModel::load(loader::load(spec)?)?;
        Ok(Self {
            tokenizer: truncating(&head.tokenizer, head.max_len, &head.dir)?,
            bert: head.bert,
            pooler: head.pooler,
            classifier: head.classifier,
            num_labels: head.num_labels,
            max_len: head.max_len,
            batch_size: 32,
            model_id: head.model_id,
            device: Device::Cpu,
            pooling: head.pooling,
        })
    }

    pub fn model_id(&self) -> &str {
        &self.model_id
    }

    pub fn num_labels(&self) -> usize {
        self.num_labels
    }

    /// Sentence length limit in tokens (specials included); longer sentences are cut.
    pub fn max_len(&self) -> usize {
        self.max_len
    }

    /// Sets how many sentences go through the model at once.
    pub fn with_batch_size(mut self, batch_size: usize) -> Self {
        self.batch_size = batch_size.max(1);
        self
    }

    /// Per text, in input order, the `num_labels` logits. Texts are batched by length so
    /// that little of each batch is padding.
    pub fn logits(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, ModelError> {
        let encs = texts
            .iter()
            .map(|t| {
                self.tokenizer
                    .encode_fast(*t, true)
                    .map_err(|e| ModelError::tokenizer("encoding a sentence", e))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let mut order: Vec<usize> = (0..encs.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(encs[i].get_ids().len()));
        let mut out = vec![Vec::new(); encs.len()];
        for batch in order.chunks(self.batch_size) {
            let seqs: Vec<(&[u32], &[u32])> = batch
                .iter()
                .map(|&i| (encs[i].get_ids(), encs[i].get_type_ids()))
                .collect();
            check_ids(&seqs, self.bert.vocab_size, self.bert.type_vocab_size)?;
            let (ids, types, lens) = pad_batch(&seqs, &self.device)?;
            let hidden = self.bert.forward(&ids, &types, &lens)?; // [b, l, h]
            let pooled = match self.pooling {
                Pooling::Cls => {
                    let cls = hidden.narrow(1, 0, 1)?.squeeze(1)?;
                    self.pooler.forward(&cls)?.tanh()?
                }
                Pooling::Mean => mean_pooled(&hidden, &lens, hidden.dim(2)?)?,
            };
            let logits = self.classifier.forward(&pooled)?.to_vec2::<f32>()?;
            for (&i, row) in batch.iter().zip(logits) {
                out[i] = row;
            }
        }
        Ok(out)
    }
}
