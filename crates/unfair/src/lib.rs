//! Unfair terms in online terms of service: LexGLUE's UNFAIR-ToS task (Lippi et al. 2019,
//! CLAUDETTE). Sentences of terms of service carry any of eight kinds of potentially unfair
//! term ([`LABELS`]), several at once, or none (about 89% of them).
//!
//! - [`data`] reads LexGLUE's CSV form (`text,labels`, labels written `[3 2 1]`), with errors
//!   that name the file and line;
//! - [`normalise`] turns ordinary text into LexGLUE's lowercased, space-tokenised form, which is
//!   what the model was trained on;
//! - [`metric`] is LexGLUE's score: micro- and macro-F1 over the eight labels plus a "none"
//!   column;
//! - [`model`] is the classifier: one-vs-rest linear SVMs over word and character n-gram TF-IDF
//!   and the sentence's all-MiniLM-L6-v2 vector, with per-label thresholds and calibration fitted
//!   on out-of-fold margins of the training rows;
//! - [`minilm`] is the fine-tuned MiniLM alternative (eight sigmoid outputs) and its ensemble
//!   with the SVM;
//! - [`cache`] trains it once from the shared data and keeps it under the project state dir.

pub mod cache;
pub mod classifiers;
pub mod data;
pub mod document;
pub mod evaluation;
pub mod features;
pub mod metric;
pub mod minilm;
pub mod model;
pub mod normalise;
pub mod svm;

pub use data::{read_csv, Example};
pub use metric::{Scores, N_COLUMNS};
pub use model::{sentence_vectors, ModelOptions, SentenceVectors, UnfairModel};
pub use normalise::normalise;

/// The eight label ids' names, in id order (LexGLUE's `unfair_tos` label names).
pub const LABELS: [&str; 8] = [
    "Limitation of liability",
    "Unilateral termination",
    "Unilateral change",
    "Content removal",
    "Contract by using",
    "Choice of law",
    "Jurisdiction",
    "Arbitration",
];

/// Number of labels ([`LABELS`]).
pub const N_LABELS: usize = LABELS.len();

/// A set of labels as a bit mask: bit `k` set when label `k` applies (eight labels fit a byte).
pub type LabelSet = u8;

/// The ids in a label set, ascending.
pub fn label_ids(set: LabelSet) -> Vec<usize> {
    (0..N_LABELS).filter(|k| set & (1 << k) != 0).collect()
}
