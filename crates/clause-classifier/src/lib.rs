//! What one span of contract text is: the per-span half of clause typing.
//!
//! This crate exists so that the models that look at one span on its own (a clause pasted into
//! `precedent classify`, a LegalBench sentence, one candidate of a contract) stand apart from the
//! contract-level pipeline that combines them (`precedent-clause-types`: the first-stage typer
//! over every candidate of a contract, the second stage, the novelty step and the choice of each
//! category's answers). Dependencies point one way: `precedent-clause-types` builds on this
//! crate; nothing here knows about whole-contract typing.
//!
//! - [`candidates`]: the spans of a contract that may be a clause (sentences, pieces, windows,
//!   paragraphs, dates, titles), and [`labels`]: which CUAD categories a span matches.
//! - [`features`]: the hashed word features of a span.
//! - [`dense`]: the sentence-embedding view of spans and the dense per-category classifier over
//!   it ([`dense::SentenceEmbedder`] is implemented outside, over MiniLM).
//! - [`clause_classifier`]: the single-clause classifier (`scores` / `types_of` of one clause),
//!   with its development cross-validation, and [`legalbench`]: its shipped per-task thresholds.
//! - [`model_file`]: the binary model-file format the typer and the classifier ship in.

pub mod candidates;
pub mod clause_classifier;
pub mod dense;
pub mod features;
pub mod labels;
pub mod legalbench;
pub mod model_file;

/// CUAD's clause categories, one score per category in every model.
pub const N_CATEGORIES: usize = precedent_cuad::categories::CATEGORIES.len();
