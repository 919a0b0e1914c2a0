//! An MPNet encoder (all-mpnet-base-v2 and other sentence-transformers MPNet models),
//! written against candle like [`crate::bert`] and sharing its layers and kernels.
//!
//! candle-transformers has no MPNet. MPNet's layers compute exactly what BERT's do
//! (post-LayerNorm attention and feed-forward, erf GELU); it differs in three places,
//! all reproduced here from Hugging Face's `modeling_mpnet.py`:
//! - no token type embeddings;
//! - RoBERTa-style position ids: real tokens count up from `pad_token_id + 1`, padding
//!   tokens get `pad_token_id` (so only `max_position_embeddings - pad - 1` positions
//!   are usable);
//! - a T5-style relative position bias: one learned scalar per head and distance
//!   bucket (32 buckets, bidirectional, log-spaced up to distance 128), computed once
//!   per forward pass and added to every layer's attention scores.

use candle_core::{Module, Tensor};
use candle_nn::{Embedding, LayerNorm};

use crate::bert::{parse_activation, BertConfig, EncoderShape, Layer, LayerNames, Weights};
use crate::kernels::{host, Act};
use crate::ModelError;

const MPNET_LAYER: LayerNames = LayerNames {
    q: "attention.attn.q",
    k: "attention.attn.k",
    v: "attention.attn.v",
    attn_out: "attention.attn.o",
    ln_attn: "attention.LayerNorm",
};

/// Buckets the bias uses. Hugging Face's `MPNetEncoder.compute_position_bias` calls
/// the bucketing with its default of 32 whatever the config says, so we do too.
const NUM_BUCKETS: usize = 32;
/// Distances from here on share the last bucket (HF's default `max_distance`).
const MAX_DISTANCE: f32 = 128.0;

pub(crate) struct Mpnet {
    word: Embedding,
    position: Embedding,
    ln_emb: LayerNorm,
    layers: Vec<Layer>,
    /// `relative_attention_bias.weight` on the host, `[buckets, heads]` row-major.
    rel_bias: Vec<f32>,
    pad_id: u32,
    heads: usize,
    head_dim: usize,
    hidden: usize,
    max_positions: usize,
    act: Act,
    eps: f32,
    pub vocab_size: usize,
}

impl Mpnet {
    pub fn load(w: &Weights, prefix: &str, cfg: &BertConfig) -> Result<Self, ModelError> {
        let h = cfg.hidden_size;
        let heads = cfg.num_attention_heads;
        let pad_id = cfg.pad_token_id.unwrap_or(1);
        let max_positions = cfg.max_position_embeddings;
        if (pad_id as usize) + 2 >= max_positions {
            return Err(candle_core::Error::Msg(format!(
                "pad_token_id {pad_id} leaves no positions out of {max_positions}"
            ))
            .into());
        }
        let buckets = cfg.relative_attention_num_buckets.unwrap_or(NUM_BUCKETS);
        if buckets < NUM_BUCKETS {
            return Err(candle_core::Error::Msg(format!(
                "relative_attention_num_buckets {buckets} < {NUM_BUCKETS}, which MPNet's bucketing uses"
            ))
            .into());
        }
        let emb = |name: &str, rows: usize| -> Result<Embedding, ModelError> {
            Ok(Embedding::new(
                w.get(&format!("{prefix}embeddings.{name}.weight"), &[rows, h])?,
                h,
            ))
        };
        let word = emb("word_embeddings", cfg.vocab_size)?;
        let position = emb("position_embeddings", max_positions)?;
        let eps = cfg.layer_norm_eps;
        let ln_emb = w.layer_norm(&format!("{prefix}embeddings.LayerNorm"), h, eps)?;
        let mut layers = Vec::with_capacity(cfg.num_hidden_layers);
        for i in 0..cfg.num_hidden_layers {
            let p = format!("{prefix}encoder.layer.{i}");
            layers.push(Layer::load(w, &p, &MPNET_LAYER, cfg)?);
        }
        let rel_bias = host(&w.get(
            &format!("{prefix}encoder.relative_attention_bias.weight"),
            &[buckets, heads],
        )?)?;
        let act = parse_activation(&cfg.hidden_act).map_err(candle_core::Error::Msg)?;
        Ok(Self {
            word,
            position,
            ln_emb,
            layers,
            rel_bias,
            pad_id,
            heads,
            head_dim: h / heads,
            hidden: h,
            max_positions,
            act,
            eps: eps as f32,
            vocab_size: cfg.vocab_size,
        })
    }

    pub fn hidden_size(&self) -> usize {
        self.hidden
    }

    /// Longest sequence (special tokens included) the position table can hold:
    /// positions start at `pad_id + 1`.
    pub fn max_len(&self) -> usize {
        self.max_positions - self.pad_id as usize - 1
    }

    /// Runs the encoder on a right-padded batch: `ids` is `[batch, len]` u32 and
    /// `lens` each row's real length. Returns the last hidden state
    /// `[batch, len, hidden]`; padded positions hold garbage that pooling ignores.
    pub fn forward(&self, ids: &Tensor, lens: &[usize]) -> candle_core::Result<Tensor> {
        let (b, l) = ids.dims2()?;
        if l == 0 {
            // No positions, so no bias table (its span is 2*len - 1).
            candle_core::bail!("MPNet forward on an empty batch row");
        }
        if l > self.max_len() {
            candle_core::bail!(
                "sequence of {l} tokens is longer than MPNet's {} positions",
                self.max_len()
            );
        }
        let host_ids = ids.flatten_all()?.to_vec1::<u32>()?;
        let positions = self.position_ids(&host_ids, lens, l);
        let positions = Tensor::from_vec(positions, (b, l), ids.device())?;
        let x = self
            .word
            .forward(ids)?
            .add(&self.position.forward(&positions)?)?;
        let mut x = self.ln_emb.forward(&x)?.reshape((b * l, self.hidden))?;
        let bias = self.position_bias(l);
        let shape = EncoderShape {
            lens,
            len: l,
            heads: self.heads,
            head_dim: self.head_dim,
            act: self.act,
            eps: self.eps,
        };
        for layer in &self.layers {
            x = layer.forward(&x, &shape, Some(&bias))?;
        }
        x.reshape((b, l, self.hidden))
    }

    /// HF's `create_position_ids_from_input_ids`: a running count of non-padding
    /// tokens offset by `pad_id`, and `pad_id` itself for padding. Rows are padded by
    /// us (past `lens`), so those positions get `pad_id` whatever id fills them.
    fn position_ids(&self, ids: &[u32], lens: &[usize], l: usize) -> Vec<u32> {
        let mut out = vec![self.pad_id; ids.len()];
        for ((row, pos), &n) in ids.chunks_exact(l).zip(out.chunks_exact_mut(l)).zip(lens) {
            let mut count = 0u32;
            for (&id, p) in row.iter().zip(pos.iter_mut()).take(n) {
                if id != self.pad_id {
                    count += 1;
                    *p = self.pad_id + count;
                }
            }
        }
        out
    }

    /// The relative position bias for sequences padded to `len`, in the layout
    /// [`crate::kernels::FusedAttention::position_bias`] takes: `[heads, 2*len-1]`,
    /// indexed by key offset `j - i` shifted by `len - 1`. It depends only on the
    /// offset (HF computes positions as `arange`, padding included, and padded keys
    /// are never attended to), so one table serves every row and every layer.
    fn position_bias(&self, len: usize) -> Vec<f32> {
        let span = 2 * len - 1;
        let mut out = vec![0f32; self.heads * span];
        for k in 0..span {
            let offset = k as i64 - (len as i64 - 1);
            let bucket = relative_position_bucket(offset);
            for head in 0..self.heads {
                out[head * span + k] = self.rel_bias[bucket * self.heads + head];
            }
        }
        out
    }
}

/// HF's `MPNetEncoder.relative_position_bucket` for one `memory - context` offset:
/// half the buckets for keys before the query and half for keys after; within a half,
/// distances below 8 get their own bucket and larger ones log-spaced buckets up to
/// `MAX_DISTANCE`. The log is taken in f32, as PyTorch does, so that bucket edges
/// fall where the trained weights expect them.
fn relative_position_bucket(relative_position: i64) -> usize {
    let half = NUM_BUCKETS / 2;
    let n = -relative_position;
    let mut ret = if n < 0 { half } else { 0 };
    let n = n.unsigned_abs() as usize;
    let max_exact = half / 2;
    if n < max_exact {
        ret += n;
    } else {
        let scale = (MAX_DISTANCE / max_exact as f32).ln();
        let large = max_exact
            + ((n as f32 / max_exact as f32).ln() / scale * (half - max_exact) as f32) as usize;
        ret += large.min(half - 1);
    }
    ret
}

#[cfg(test)]
mod tests {
    use super::relative_position_bucket;

    #[test]
    fn buckets_match_hugging_face() {
        // From transformers' MPNetEncoder.relative_position_bucket on
        // torch.arange(-200, 201) (memory - context), num_buckets=32, max_distance=128.
        let cases: [(i64, usize); 16] = [
            (0, 0),
            (-1, 1),
            (-7, 7),
            (-8, 8),
            (-15, 9),
            (-16, 10),
            (-31, 11),
            (-32, 12),
            (-64, 14),
            (-127, 15),
            (-500, 15),
            (1, 17),
            (7, 23),
            (8, 24),
            (16, 26),
            (200, 31),
        ];
        for (offset, want) in cases {
            assert_eq!(relative_position_bucket(offset), want, "offset {offset}");
        }
    }
}
