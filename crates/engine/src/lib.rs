//! Precedent's engine: the one place where a library, its models and its pipelines meet.
//!
//! The CLI and the server are faces on top of it. Both used to decide for themselves which
//! pipelines exist, how each is built and which one a library gets by default, and the two
//! copies drifted apart (the same query ranked differently by `precedent search` and by
//! `POST /v1/search`). Here those decisions are made once:
//!
//! - [`pipelines`]: the pipeline names and their grammar (`bm25`, `dense`, `hybrid`,
//!   `hybrid-norm`, `learned`, `NAME+types`), how each is built from a [`PipelineContext`],
//!   and which one a library gets by default ([`default_pipeline`]).
//! - [`Rankers`]: the learned rankers a process loads once and shares, and which of them serves
//!   a given library.
//! - [`search`]: one search for every face: filters, deepening, a left-out source clause,
//!   folded copies, and the candidates facets describe.
//! - [`ClauseModels`]: the clause typer and classifiers review, ingest and classify read,
//!   loaded (or trained and cached) once and shared.
//! - [`review`]: a contract's CUAD clause types and where they are, and the checklist view.
//! - [`ingest`]: what a contract file becomes in a library (clauses, metadata, CUAD types).
//! - [`explain`]: why a clause matched a query, as a passage and plain reasons.
//! - [`market`]: a clause type's common formulations in a library, and where a draft stands.
//! - [`compare`]: word-level differences between a clause and a draft, and [`redline`], the
//!   same as a Word document with tracked changes.
//! - [`lazy_clause_type_reader`]: the CUAD clause-type reader the `+types` stage and the
//!   learned ranker's clause-type rule use, trained (or read from its cache) on first use.

mod clause_models;
pub mod compare;
pub mod docx;
pub mod explain;
pub mod ingest;
pub mod market;
pub mod pipelines;
mod rankers;
pub mod redline;
pub mod review;
pub mod search;

pub use clause_models::{legalbench_options, ClauseModels, MiniLmSentences};
pub use pipelines::{
    build, default_pipeline, is_known, known_pipelines, needs_embedder, PipelineContext,
    HYBRID_WITH_TYPES, LEARNED,
};
pub use rankers::{lazy_clause_type_reader, Rankers};

/// What the engine refuses, in words a user can act on.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Rank(#[from] precedent_rank::RankError),
    #[error(transparent)]
    Learn(#[from] precedent_learn::LearnError),
    #[error(transparent)]
    Library(#[from] precedent_library::LibraryError),
    #[error("{0}")]
    Unavailable(String),
}
