//! Clause typing: which of CUAD's 41 categories a contract's clauses belong to, and where.
//!
//! A contract is cut into candidate spans ([`candidates`]); the first stage ([`typer`]) scores
//! every candidate for every category from word features; a second stage ([`stack`], boosted
//! trees) re-scores them with the candidate's neighbourhood, the single-clause classifier
//! ([`clause_classifier`]) and, optionally, the sentence-embedding view ([`dense`]); the
//! novelty step ([`novelty`]) re-ranks a category's answers so that one clause is not answered
//! twice; [`selection`] turns the scores into each category's answers. The models train on the
//! CUAD contracts (`precedent_cuad`) and ship as model files under `models/clause-typer/`;
//! [`cache`] trains and caches them when a model file is missing. The cross-validated
//! evaluations of all this are `precedent_eval`'s `cuad` and `legalbench` harnesses.

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
