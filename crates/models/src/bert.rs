//! A BERT encoder written directly against candle-core/candle-nn.
//!
//! candle-transformers' `bert` works, but it computes Q, K and V with three separate
//! matmuls, runs attention as hundreds of tiny batched GEMMs over padded sequences
//! with an additive mask, uses candle's single-threaded GELU/softmax, does not expose
//! the pooler that cross-encoders need, and pulls in a large crate (every model
//! candle supports) that would dominate CI compile time. Here the big projections
//! stay candle matmuls (multithreaded GEMM), and everything between them is one of
//! the fused kernels in `kernels.rs`. Weights load with or without the `bert.` prefix.

use std::collections::HashMap;
use std::path::Path;

use candle_core::{DType, Device, Module, Tensor};
use candle_nn::{Embedding, LayerNorm};

use crate::kernels::{host, Act, BiasAct, BiasResidualNorm, FusedAttention};
use serde::Deserialize;

use crate::ModelError;

/// The subset of a Hugging Face `config.json` that inference needs.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct BertConfig {
    pub vocab_size: usize,
    pub hidden_size: usize,
    pub num_hidden_layers: usize,
    pub num_attention_heads: usize,
    pub intermediate_size: usize,
    #[serde(default = "default_act")]
    pub hidden_act: String,
    pub max_position_embeddings: usize,
    #[serde(default = "default_type_vocab")]
    pub type_vocab_size: usize,
    #[serde(default = "default_eps")]
    pub layer_norm_eps: f64,
    #[serde(default)]
    pub position_embedding_type: Option<String>,
    #[serde(default)]
    pub model_type: Option<String>,
    /// MPNet only: the padding id, which also offsets its RoBERTa-style position ids.
    #[serde(default)]
    pub pad_token_id: Option<u32>,
    /// MPNet only: buckets of the relative position bias.
    #[serde(default)]
    pub relative_attention_num_buckets: Option<usize>,
    #[serde(default)]
    pub num_labels: Option<usize>,
    #[serde(default)]
    pub id2label: Option<HashMap<String, String>>,
    /// How a sequence classifier saved by this project pools token states for its head
    /// (absent in Hugging Face folders: theirs pool the [CLS] token through the pooler).
    #[serde(default, rename = "precedent_pooling")]
    pub pooling: crate::Pooling,
}

fn default_act() -> String {
    "gelu".into()
}
fn default_type_vocab() -> usize {
    2
}
fn default_eps() -> f64 {
    1e-12
}

impl BertConfig {
    pub fn from_file(path: &Path) -> Result<Self, ModelError> {
        let text = std::fs::read_to_string(path).map_err(|e| ModelError::io(path, e))?;
        let cfg: BertConfig =
            serde_json::from_str(&text).map_err(|e| ModelError::config(path, e))?;
        cfg.validate(path)?;
        Ok(cfg)
    }

    fn validate(&self, path: &Path) -> Result<(), ModelError> {
        if let Some(mt) = &self.model_type {
            if mt != "bert" && mt != "mpnet" {
                return Err(ModelError::config(
                    path,
                    format!(
                        "model_type `{mt}` is not supported (only BERT and MPNet encoders are)"
                    ),
                ));
            }
        }
        if self.num_attention_heads == 0
            || self.hidden_size == 0
            || !self.hidden_size.is_multiple_of(self.num_attention_heads)
        {
            return Err(ModelError::config(
                path,
                format!(
                    "hidden_size {} is not a multiple of num_attention_heads {}",
                    self.hidden_size, self.num_attention_heads
                ),
            ));
        }
        if let Some(p) = &self.position_embedding_type {
            if p != "absolute" {
                return Err(ModelError::config(
                    path,
                    format!("position_embedding_type `{p}` is not supported"),
                ));
            }
        }
        parse_activation(&self.hidden_act).map_err(|r| ModelError::config(path, r))?;
        if self.max_position_embeddings < 3 {
            return Err(ModelError::config(path, "max_position_embeddings < 3"));
        }
        Ok(())
    }

    /// Whether config.json declares an MPNet encoder (`model_type: "mpnet"`).
    pub fn is_mpnet(&self) -> bool {
        self.model_type.as_deref() == Some("mpnet")
    }

    /// Refuses an MPNet config where only the BERT encoder is implemented (the
    /// cross-encoder and fine-tuning), naming the folder instead of failing later on a
    /// missing `token_type_embeddings` tensor.
    pub fn require_bert(&self, dir: &Path) -> Result<(), ModelError> {
        if self.is_mpnet() {
            return Err(ModelError::config(
                dir.join("config.json"),
                "MPNet is supported as a bi-encoder (embedder) only, not here",
            ));
        }
        Ok(())
    }

    /// HF configs state the label count either directly or through `id2label`.
    pub fn labels(&self) -> usize {
        self.num_labels
            .or_else(|| self.id2label.as_ref().map(|m| m.len()))
            .unwrap_or(1)
    }
}

pub(crate) fn parse_activation(s: &str) -> Result<Act, String> {
    match s {
        "gelu" => Ok(Act::GeluErf),
        "gelu_new" | "gelu_pytorch_tanh" | "gelu_fast" => Ok(Act::GeluTanh),
        "relu" => Ok(Act::Relu),
        other => Err(format!("hidden_act `{other}` is not supported")),
    }
}

/// Named tensors from a safetensors file, with the checks that turn a bad file into
/// an error instead of a panic deep inside a matmul.
pub(crate) struct Weights {
    tensors: HashMap<String, Tensor>,
    path: std::path::PathBuf,
}

impl Weights {
    /// Parses an in-memory safetensors buffer. Reading the file into memory instead of
    /// mmapping it means a file truncated or rewritten later cannot crash the process
    /// with SIGBUS; the cost (one copy of ~90 MB) is paid once at startup.
    pub fn from_buffer(data: &[u8], path: &Path, device: &Device) -> Result<Self, ModelError> {
        let tensors = candle_core::safetensors::load_buffer(data, device).map_err(|e| {
            ModelError::Weights {
                path: path.to_path_buf(),
                reason: e.to_string(),
            }
        })?;
        Ok(Self {
            tensors,
            path: path.to_path_buf(),
        })
    }

    pub fn contains(&self, name: &str) -> bool {
        self.tensors.contains_key(name)
    }

    /// Fetches a tensor as f32 and checks its shape.
    pub fn get(&self, name: &str, shape: &[usize]) -> Result<Tensor, ModelError> {
        let t = self.tensors.get(name).ok_or_else(|| ModelError::Weights {
            path: self.path.clone(),
            reason: format!("missing tensor `{name}`"),
        })?;
        if t.dims() != shape {
            return Err(ModelError::Weights {
                path: self.path.clone(),
                reason: format!(
                    "tensor `{name}` has shape {:?}, config implies {:?}",
                    t.dims(),
                    shape
                ),
            });
        }
        Ok(t.to_dtype(DType::F32)?)
    }

    pub(crate) fn layer_norm(
        &self,
        prefix: &str,
        dim: usize,
        eps: f64,
    ) -> Result<LayerNorm, ModelError> {
        // Old TF-converted checkpoints name LayerNorm parameters gamma/beta.
        let (w, b) = if self.contains(&format!("{prefix}.weight")) {
            ("weight", "bias")
        } else {
            ("gamma", "beta")
        };
        Ok(LayerNorm::new(
            self.get(&format!("{prefix}.{w}"), &[dim])?,
            self.get(&format!("{prefix}.{b}"), &[dim])?,
            eps,
        ))
    }

    /// The prefix under which the encoder lives: `bert.` for
    /// `BertForSequenceClassification` checkpoints, nothing for bare `BertModel`s.
    pub fn encoder_prefix(&self) -> Result<&'static str, ModelError> {
        for p in ["", "bert.", "model.", "mpnet."] {
            if self.contains(&format!("{p}embeddings.word_embeddings.weight")) {
                return Ok(p);
            }
        }
        let mut names: Vec<&String> = self.tensors.keys().collect();
        names.sort();
        names.truncate(5);
        Err(ModelError::Weights {
            path: self.path.clone(),
            reason: format!(
                "no encoder embeddings found (looked for [bert.|model.|mpnet.]embeddings.word_embeddings.weight; file starts with {names:?})"
            ),
        })
    }
}

/// Where one encoder layer's tensors live under `encoder.layer.{i}.`: BERT and MPNet
/// layers compute the same thing but name their attention parts differently.
pub(crate) struct LayerNames {
    pub q: &'static str,
    pub k: &'static str,
    pub v: &'static str,
    pub attn_out: &'static str,
    pub ln_attn: &'static str,
}

pub(crate) const BERT_LAYER: LayerNames = LayerNames {
    q: "attention.self.query",
    k: "attention.self.key",
    v: "attention.self.value",
    attn_out: "attention.output.dense",
    ln_attn: "attention.output.LayerNorm",
};

/// One post-LayerNorm transformer layer (attention, then the feed-forward block), as
/// BERT and MPNet both have it.
pub(crate) struct Layer {
    /// Q, K and V stacked into one [3H, H] projection so one matmul serves all three;
    /// the Q rows are pre-multiplied by 1/sqrt(head_dim) so scores need no scaling.
    qkv_w: Tensor,
    qkv_b: Vec<f32>,
    attn_out_w: Tensor,
    attn_out_b: Vec<f32>,
    ln_attn: (Vec<f32>, Vec<f32>),
    inter_w: Tensor,
    inter_b: Vec<f32>,
    out_w: Tensor,
    out_b: Vec<f32>,
    ln_out: (Vec<f32>, Vec<f32>),
}

impl Layer {
    /// Loads layer `p` (e.g. `encoder.layer.3`) of a model with `cfg`'s sizes.
    pub fn load(
        w: &Weights,
        p: &str,
        names: &LayerNames,
        cfg: &BertConfig,
    ) -> Result<Self, ModelError> {
        let h = cfg.hidden_size;
        let eps = cfg.layer_norm_eps;
        let head_dim = h / cfg.num_attention_heads;
        let scale = 1.0 / (head_dim as f64).sqrt();
        let part =
            |name: &str, kind: &str, shape: &[usize]| w.get(&format!("{p}.{name}.{kind}"), shape);
        let qkv_w = Tensor::cat(
            &[
                (part(names.q, "weight", &[h, h])? * scale)?,
                part(names.k, "weight", &[h, h])?,
                part(names.v, "weight", &[h, h])?,
            ],
            0,
        )?;
        let qkv_b = Tensor::cat(
            &[
                (part(names.q, "bias", &[h])? * scale)?,
                part(names.k, "bias", &[h])?,
                part(names.v, "bias", &[h])?,
            ],
            0,
        )?;
        let vec = |name: String, n: usize| -> Result<Vec<f32>, ModelError> {
            Ok(host(&w.get(&name, &[n])?)?)
        };
        let ln = |name: String| -> Result<(Vec<f32>, Vec<f32>), ModelError> {
            let l = w.layer_norm(&name, h, eps)?;
            let bias = l
                .bias()
                .ok_or_else(|| candle_core::Error::Msg("layer norm bias".into()))?;
            Ok((host(l.weight())?, host(bias)?))
        };
        let inter = cfg.intermediate_size;
        Ok(Layer {
            qkv_w,
            qkv_b: host(&qkv_b)?,
            attn_out_w: w.get(&format!("{p}.{}.weight", names.attn_out), &[h, h])?,
            attn_out_b: vec(format!("{p}.{}.bias", names.attn_out), h)?,
            ln_attn: ln(format!("{p}.{}", names.ln_attn))?,
            inter_w: w.get(&format!("{p}.intermediate.dense.weight"), &[inter, h])?,
            inter_b: vec(format!("{p}.intermediate.dense.bias"), inter)?,
            out_w: w.get(&format!("{p}.output.dense.weight"), &[h, inter])?,
            out_b: vec(format!("{p}.output.dense.bias"), h)?,
            ln_out: ln(format!("{p}.output.LayerNorm"))?,
        })
    }

    /// Runs the layer on `x` (`[batch*len, hidden]`, rows right-padded to `len`).
    /// `position_bias`, when given, is added to every head's attention scores (see
    /// [`FusedAttention::position_bias`]).
    pub fn forward(
        &self,
        x: &Tensor,
        shape: &EncoderShape<'_>,
        position_bias: Option<&[f32]>,
    ) -> candle_core::Result<Tensor> {
        let qkv = x.matmul(&self.qkv_w.t()?)?; // [b*l, 3h]
        let ctx = qkv.apply_op1_no_bwd(&FusedAttention {
            bias: &self.qkv_b,
            lens: shape.lens,
            len: shape.len,
            heads: shape.heads,
            head_dim: shape.head_dim,
            position_bias,
        })?; // [b*l, h]
        let attn = ctx.matmul(&self.attn_out_w.t()?)?.apply_op2_no_bwd(
            x,
            &BiasResidualNorm {
                bias: &self.attn_out_b,
                gamma: &self.ln_attn.0,
                beta: &self.ln_attn.1,
                eps: shape.eps,
            },
        )?;
        let inter = attn
            .matmul(&self.inter_w.t()?)?
            .apply_op1_no_bwd(&BiasAct {
                bias: &self.inter_b,
                act: shape.act,
            })?;
        inter.matmul(&self.out_w.t()?)?.apply_op2_no_bwd(
            &attn,
            &BiasResidualNorm {
                bias: &self.out_b,
                gamma: &self.ln_out.0,
                beta: &self.ln_out.1,
                eps: shape.eps,
            },
        )
    }
}

/// What every layer of one forward pass shares: the batch layout and the model's
/// head split, activation and LayerNorm epsilon.
pub(crate) struct EncoderShape<'a> {
    pub lens: &'a [usize],
    pub len: usize,
    pub heads: usize,
    pub head_dim: usize,
    pub act: Act,
    pub eps: f32,
}

pub(crate) struct Bert {
    word: Embedding,
    position: Embedding,
    token_type: Embedding,
    ln_emb: LayerNorm,
    layers: Vec<Layer>,
    heads: usize,
    head_dim: usize,
    hidden: usize,
    act: Act,
    eps: f32,
    pub type_vocab_size: usize,
    pub vocab_size: usize,
}

impl Bert {
    pub fn load(w: &Weights, prefix: &str, cfg: &BertConfig) -> Result<Self, ModelError> {
        let h = cfg.hidden_size;
        let emb = |name: &str, rows: usize| -> Result<Embedding, ModelError> {
            Ok(Embedding::new(
                w.get(&format!("{prefix}embeddings.{name}.weight"), &[rows, h])?,
                h,
            ))
        };
        let word = emb("word_embeddings", cfg.vocab_size)?;
        let position = emb("position_embeddings", cfg.max_position_embeddings)?;
        let token_type = emb("token_type_embeddings", cfg.type_vocab_size)?;
        let eps = cfg.layer_norm_eps;
        let ln_emb = w.layer_norm(&format!("{prefix}embeddings.LayerNorm"), h, eps)?;
        let mut layers = Vec::with_capacity(cfg.num_hidden_layers);
        for i in 0..cfg.num_hidden_layers {
            let p = format!("{prefix}encoder.layer.{i}");
            layers.push(Layer::load(w, &p, &BERT_LAYER, cfg)?);
        }
        let act = parse_activation(&cfg.hidden_act).map_err(candle_core::Error::Msg)?;
        Ok(Self {
            word,
            position,
            token_type,
            ln_emb,
            layers,
            heads: cfg.num_attention_heads,
            head_dim: h / cfg.num_attention_heads,
            hidden: h,
            act,
            eps: eps as f32,
            type_vocab_size: cfg.type_vocab_size,
            vocab_size: cfg.vocab_size,
        })
    }

    pub fn hidden_size(&self) -> usize {
        self.hidden
    }

    /// Runs the encoder on a right-padded batch.
    ///
    /// `ids`/`type_ids` are `[batch, len]` u32; `lens` gives each row's real length.
    /// Returns the last hidden state `[batch, len, hidden]`; rows' padded positions
    /// hold garbage that pooling must ignore.
    pub fn forward(
        &self,
        ids: &Tensor,
        type_ids: &Tensor,
        lens: &[usize],
    ) -> candle_core::Result<Tensor> {
        let (b, l) = ids.dims2()?;
        let dev = ids.device();
        let positions = Tensor::arange(0u32, l as u32, dev)?;
        let x = self
            .word
            .forward(ids)?
            .add(&self.token_type.forward(type_ids)?)?
            .broadcast_add(&self.position.forward(&positions)?)?;
        let mut x = self.ln_emb.forward(&x)?.reshape((b * l, self.hidden))?;
        let shape = EncoderShape {
            lens,
            len: l,
            heads: self.heads,
            head_dim: self.head_dim,
            act: self.act,
            eps: self.eps,
        };
        for layer in &self.layers {
            x = layer.forward(&x, &shape, None)?;
        }
        x.reshape((b, l, self.hidden))
    }
}

/// Builds `[batch, len]` id and type-id tensors from unpadded sequences, padding on
/// the right with id 0 (BERT's [PAD]; its value never matters because it is masked).
pub(crate) fn pad_batch(
    seqs: &[(&[u32], &[u32])],
    device: &Device,
) -> candle_core::Result<(Tensor, Tensor, Vec<usize>)> {
    let l = seqs.iter().map(|(ids, _)| ids.len()).max().unwrap_or(0);
    let b = seqs.len();
    let mut ids = vec![0u32; b * l];
    let mut types = vec![0u32; b * l];
    let mut lens = Vec::with_capacity(b);
    for (row, (i, t)) in seqs.iter().enumerate() {
        ids[row * l..row * l + i.len()].copy_from_slice(i);
        types[row * l..row * l + t.len()].copy_from_slice(t);
        lens.push(i.len());
    }
    Ok((
        Tensor::from_vec(ids, (b, l), device)?,
        Tensor::from_vec(types, (b, l), device)?,
        lens,
    ))
}

/// Refuses token or type ids outside the embedding tables (a tokenizer that does not
/// belong to the weights) with an error, instead of an index panic inside candle.
pub(crate) fn check_ids(
    seqs: &[(&[u32], &[u32])],
    vocab_size: usize,
    type_vocab_size: usize,
) -> Result<(), ModelError> {
    for (ids, types) in seqs {
        if ids.iter().any(|&id| id as usize >= vocab_size)
            || types.iter().any(|&t| t as usize >= type_vocab_size)
        {
            return Err(ModelError::tokenizer(
                "encoding pairs",
                "token or type id outside the model's embedding tables",
            ));
        }
    }
    Ok(())
}

/// Copies a `[batch, len, hidden]` tensor out as one flat vector for pooling in
/// plain Rust (cheaper than a chain of masked tensor ops for these sizes).
pub(crate) fn to_host(x: &Tensor) -> candle_core::Result<Vec<f32>> {
    x.flatten_all()?.to_vec1::<f32>()
}
