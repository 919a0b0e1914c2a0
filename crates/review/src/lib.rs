//! Contract review, for every face: what a contract is found to hold, and the models that find it.
//!
//! The engine re-exports these modules under its own paths (`precedent_engine::review`, ...), so
//! the CLI and the server reach them through the engine; they live in a crate of their own
//! because review is a whole concept (the typer's choices turned into findings, the checklist,
//! the Word report, terms-of-service review) that needs no library, ranker or pipeline.
//!
//! - [`review`]: a contract's CUAD clause types and where they are, the checklist view, and
//!   the Word report.
//! - [`review_table`]: the files a review covers, and the table of many contracts' reviews.
//! - [`review_view`]: a reviewed document as the API answers it (sections, findings with
//!   their sections, checklist; or a terms-of-service review).
//! - [`documents`]: documents reviewed one after another (contract or terms of service, each
//!   model loaded on first need), what the text output shows, and a file's paragraphs.
//! - [`classify_view`]: clauses classified on their own, as the API answers and as `classify`
//!   prints them.
//! - [`ClauseModels`]: the clause typer and classifiers review, ingest and classify read,
//!   loaded (or trained and cached) once and shared.

pub mod classify_view;
mod clause_models;
pub mod documents;
pub mod review;
pub mod review_table;
pub mod review_view;

pub use clause_models::{legalbench_options, ClauseModels, MiniLmSentences};
