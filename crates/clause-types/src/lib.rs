//! Clause typing: which of CUAD's 41 categories a contract's clauses belong to, and where.
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
//! A contract is cut into candidate spans ([`candidates`]); the first stage ([`typer`]) scores
//! every candidate for every category from word features; a second stage ([`stack`], a linear
//! stage and `precedent_ml::boost` trees) re-scores them with the candidate's neighbourhood, the
//! single-clause classifier ([`clause_classifier`]) and, optionally, the sentence-embedding view
//! ([`dense`]); the novelty step ([`novelty`]) re-ranks a category's answers so that one clause
//! is not answered twice; [`selection`] turns the scores into each category's answers. The
//! models train on the CUAD contracts (`precedent_cuad`) with the primitives of `precedent_ml`
//! and ship as model files under `models/clause-typer/`; [`cache`] trains and caches them when a
//! model file is missing. The cross-validated evaluations of all this, and the sweeps that chose
//! its settings, are `precedent_eval`'s `cuad`, `clause_types` and `legalbench` harnesses (the
//! single-clause classifier's development CV still sits in [`clause_classifier`], where the
//! CLI's `eval-legalbench` imports it from).

pub mod cache;
pub mod candidates;
pub mod clause_classifier;
pub mod dense;
pub mod features;
pub mod labels;
pub mod legalbench;
pub mod model_file;
pub mod novelty;
pub mod sections;
pub mod selection;
pub mod stack;
pub mod type_thresholds;
pub mod typer;

pub use typer::{ClauseTyper, ScoredCandidate, TrainOptions, N_CATEGORIES};
