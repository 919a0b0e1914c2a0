//! Learning from lawyers' ratings.
//!
//! ACORD's ratings say two things a retriever cannot see in one query alone: which clauses belong
//! to the query's *category* (two stars and up) and which of those the experts found responsive
//! and exemplary (three to five stars). Both transfer between queries: a clause that lawyers
//! rated five stars for "liability cap is based on purchase price" is a well-drafted liability
//! cap for the next liability-cap query too. So the learned stage has three parts:
//!
//! - [`RatingMemory`]: the training queries (text, embedding, category) and their ratings, plus
//!   one embedding centroid per clause category. At query time the most similar training queries
//!   vote on the query's category and lend their ratings of each candidate clause.
//! - [`features`]: per query-clause pair, lexical (BM25, expanded BM25, coverage, phrases),
//!   dense (cosine), fused and rating-memory evidence.
//! - [`Ranker`]: LambdaMART, boosted regression trees (grown by the `gbdt` crate, or by
//!   `precedent_ml::boost` with `--learner boost`) trained on LambdaRank gradients per query.
//! - [`feedback`]: after the trees, candidates resembling the ranking's own top three move up.
//! - [`LibraryJudgements`]: the same queries' ratings carried to a library of ingested
//!   contracts, learnt from alongside the hand-cut clauses' (the contracts ranker does).
//!
//! Honesty rule: anything fitted from ratings is refit inside each cross-validation fold
//! ([`cv`]), and while training, a query's own ratings never feed its own features
//! (leave-one-query-out), or the ranker would learn to trust a feature that is never that good
//! on new queries.

pub mod bi_encoder;
pub mod category;
pub mod clause_types;
pub mod cv;
pub mod features;
pub mod feedback;
mod judgements;
mod memory;
mod model;
mod reranker;
#[cfg(test)]
mod test_support;

use std::path::PathBuf;

pub use category::{CategoryClassifier, CuadTypeProfiles};
pub use clause_types::{types_asked_for, ClauseTypeReader};
pub use features::{FeatureExtractor, FEATURE_NAMES};
pub use judgements::LibraryJudgements;
pub use memory::{RatedQuery, RatingMemory};
pub use model::{
    default_contracts_model_dir, default_model_dir, train, LearnedModel, Learner, ModelManifest,
    RankObjective, Ranker, TrainOptions, TrainingData, MIN_LIBRARY_FIT, MODEL_FORMAT,
    MODEL_FORMAT_VERSION, SHIPPED_CONTRACTS_MODEL_DIR, SHIPPED_MODEL_DIR,
};
pub use reranker::{learned_pipeline, LearnedReranker, LEARNED_TOP};

#[derive(Debug, thiserror::Error)]
pub enum LearnError {
    #[error(transparent)]
    Library(#[from] precedent_library::LibraryError),
    #[error(transparent)]
    Format(#[from] precedent_formats::FormatError),
    #[error(transparent)]
    Model(#[from] precedent_models::ModelError),
    #[error(transparent)]
    Rank(#[from] precedent_rank::RankError),
    #[error(transparent)]
    Vector(#[from] precedent_vectors::VectorError),
    #[error("{0}")]
    Invalid(String),
    #[error("{path}: {message}")]
    ModelDir { path: PathBuf, message: String },
    #[error("training the ranker: {0}")]
    Booster(String),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}
