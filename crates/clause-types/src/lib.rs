//! Clause typing of a whole contract: which of CUAD's 41 categories its clauses belong to, and
//! where.
//!
//! This crate is the contract-level pipeline; the models of one span on its own (candidate spans,
//! their features and labels, the sentence-embedding view, the single-clause classifier) are
//! `precedent_clause_classifier`'s, re-exported here under their old paths. Dependencies point
//! one way: this crate reads the per-span models, they know nothing of it.
//!
//! # What the product calls
//!
//! - [`cache::load_or_train`] (and `load_or_train_classifier*`): the typer and the single-clause
//!   classifier, loaded from the cache or trained from CUAD once.
//! - [`ClauseTyper::findings`] (review: each category's answers in a contract, chosen by a
//!   [`selection::Selection`]), [`ClauseTyper::review`] (every candidate's scores) and
//!   [`ClauseTyper::classify_scores`] (one clause's confidence per category, what ingest stores
//!   at [`type_thresholds::STORED_TYPE_THRESHOLD`]).
//! - [`clause_classifier::ClauseClassifier`]: `scores` / `types_of` of one clause (classify).
//! - [`ClauseTyper::set_sentence_embedder`]: the sentence view, for a typer whose second stage
//!   reads it ([`dense::SentenceEmbedder`] is implemented outside, over MiniLM).
//!
//! # How it works
//!
//! A contract is cut into candidate spans ([`candidates`]) and prepared ([`contract`]: features,
//! labels, section headings); the first stage ([`typer`]) scores every candidate for every
//! category from word features; a second stage ([`stack`], a linear stage and
//! `precedent_ml::boost` trees) re-scores them with the candidate's neighbourhood, the
//! single-clause classifier ([`clause_classifier`]) and, optionally, the sentence-embedding view
//! ([`dense`]); the novelty step ([`novelty`]) re-ranks a category's answers so that one clause
//! is not answered twice; [`selection`] turns the scores into each category's answers. The
//! models train on the CUAD contracts (`precedent_cuad`) with the primitives of `precedent_ml`
//! and ship as model files under `models/clause-typer/`; [`cache`] trains and caches them when a
//! model file is missing. The cross-validated evaluations of all this, and the sweeps that chose
//! its settings, are `precedent_eval`'s `cuad`, `clause_types` and `legalbench` harnesses.
//!
//! The modules depend on each other one way: `contract` → `sections`; `novelty` → `stack` →
//! `selection` → `typer` → `cache`, each reading only those before it.

pub mod cache;
pub mod contract;
pub mod novelty;
pub mod sections;
pub mod selection;
pub mod stack;
pub mod type_thresholds;
pub mod typer;

pub use precedent_clause_classifier::{
    candidates, clause_classifier, dense, features, labels, legalbench, model_file, N_CATEGORIES,
};
pub use typer::{ClauseTyper, ScoredCandidate, TrainOptions};
