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
//! - [`pipeline_choice`]: which pipeline and learned ranker a command ranks with, and the
//!   pipeline built from that choice with the models it loads (judges included).
//! - [`served_pipelines`]: the pipelines a served library offers, and its default one;
//!   [`served_library`], a library as a server serves it (its models loaded once and shared).
//! - [`Rankers`]: the learned rankers a process loads once and shares, and which of them serves
//!   a given library.
//! - [`search`]: one search for every face: filters and their checks, deepening, a left-out
//!   source clause, folded copies, and the candidates facets describe.
//! - [`search_listing`]: the hits of a search as `precedent search` lists and prints them.
//! - [`ClauseModels`], [`review`], [`review_table`], [`review_view`], [`documents`],
//!   [`classify_view`]: contract review, classification and the clause models they read, from
//!   `precedent-review`, re-exported so the faces reach them here.
//! - [`ingest`]: what a contract file becomes in a library (clauses, metadata, CUAD types), and
//!   [`ingest_run`], a folder committed to a library in resumable batches.
//! - [`hits`]: search hits as the API shows them (clause views, citations, highlights, why,
//!   facets), and [`context`], a clause's surroundings in its source contract.
//! - [`explain`]: why a clause matched a query, as a passage and plain reasons.
//! - [`market`]: a clause type's common formulations in a library, and where a draft stands;
//!   [`market_view`], the same as the API answers it.
//! - [`compare`]: word-level differences between a clause and a draft, [`compare_view`], the
//!   same as the faces show it, and [`redline`], as a Word document with tracked changes.
//! - [`library_setup`]: libraries built (or reused) from a clause corpus, clause vectors
//!   embedded as a library's own, and the models a pipeline loads.
//! - [`Report`]: how long work gives its progress and remarks to the face that runs it.
//! - [`cross_encoder_training`]: fine-tuning a cross-encoder on ratings, and the refusal to
//!   score a model on the queries it learnt from.
//! - [`lazy`]: models loaded on their first use (review, classify), and where each one is.
//! - [`keys`]: the API keys of a library (hashed tokens and roles), which `precedent keys`
//!   writes and the server checks.
//! - [`ratings`]: lawyers' star ratings, a durable log per library, and its export as qrels.
//! - [`lazy_clause_type_reader`]: the CUAD clause-type reader the `+types` stage and the
//!   learned ranker's clause-type rule use, trained (or read from its cache) on first use.

pub mod bi_encoder_training;
pub mod compare_view;
pub mod context;
pub mod cross_encoder_training;
pub mod explain;
pub mod hits;
pub mod ingest;
pub mod ingest_run;
pub mod lazy;
pub mod library_setup;
pub mod market;
pub mod market_view;
pub mod pipeline_choice;
pub mod pipelines;
mod rankers;
mod report;
pub mod search;
pub mod search_listing;
pub mod served_library;
pub mod served_pipelines;
pub mod spelling;

pub use pipelines::{
    build, default_pipeline, is_known, known_pipelines, needs_embedder, PipelineContext,
    HYBRID_WITH_TYPES, LEARNED,
};
pub use precedent_accounts::{keys, ratings};
pub use precedent_redline::{compare, docx, redline};
pub use precedent_review::{
    classify_view, documents, legalbench_options, review, review_table, review_view, ClauseModels,
    MiniLmSentences,
};
pub use rankers::{lazy_clause_type_reader, Rankers};
pub use report::{Report, Silent};

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

impl EngineError {
    /// When the error is the caller's query (empty, or of no words), what to tell them; `None`
    /// for the engine's own failures. `from_clause`: the query is a clause's text (a search
    /// for similar clauses), not typed by the caller.
    pub fn refused_query(&self, from_clause: bool) -> Option<String> {
        match self {
            EngineError::Rank(precedent_rank::RankError::EmptyQuery) => {
                Some("the query is empty".to_owned())
            }
            EngineError::Rank(precedent_rank::RankError::NoWords) => Some(format!(
                "{} has no words (only punctuation or symbols); type the words to look for",
                if from_clause {
                    "the clause"
                } else {
                    "the query"
                }
            )),
            _ => None,
        }
    }
}
