//! A word-level comparison ([`crate::compare`]) as the faces show it: the runs as the API's
//! `ops` (and `precedent compare --json`'s), and as the marked-up text `precedent compare`
//! prints.
//!
//! Why here: both faces show the same comparison; the shapes derive their OpenAPI schemas with
//! the `openapi` feature.

use precedent_redline::compare::{Change, DiffRun};
use serde::Serialize;

/// A run of words that is equal on both sides, only on the left (`delete`) or only on the
/// right (`insert`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DiffOp {
    /// equal, delete or insert
    pub op: String,
    /// The words as the left side writes them (the right side's, for `insert`).
    pub text: String,
    /// For an `equal` run whose right side is written differently (other capitals or spacing,
    /// when the request ignores them): the right side's words. Absent when both read the same.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub right_text: Option<String>,
}

impl From<DiffRun> for DiffOp {
    fn from(run: DiffRun) -> Self {
        DiffOp {
            op: run.change.as_str().to_owned(),
            text: run.text,
            right_text: run.right_text,
        }
    }
}

/// What `POST /v1/compare` answers: both texts, their word-level differences and similarity.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CompareResponse {
    pub left_text: String,
    pub right_text: String,
    /// Word-level differences, in order; the `text` of equal and delete runs spells the left
    /// text, the `right_text` (else `text`) of equal runs and the `text` of insert runs the right.
    pub ops: Vec<DiffOp>,
    /// Share of words in common (0..1): twice the matching tokens over both sides' tokens
    /// (words, plus runs of spacing when spacing counts).
    pub similarity: f32,
}

/// The runs as the API's `ops`.
pub fn ops(runs: Vec<DiffRun>) -> Vec<DiffOp> {
    runs.into_iter().map(DiffOp::from).collect()
}

/// The comparison as text: the right side's words, deletions marked `[-...-]` and insertions
/// `{+...+}`.
pub fn marked(runs: &[DiffRun]) -> String {
    let mut marked = String::new();
    for run in runs {
        match run.change {
            Change::Equal => marked.push_str(run.right_text.as_deref().unwrap_or(&run.text)),
            Change::Delete => {
                marked.push_str("[-");
                marked.push_str(&run.text);
                marked.push_str("-]");
            }
            Change::Insert => {
                marked.push_str("{+");
                marked.push_str(&run.text);
                marked.push_str("+}");
            }
        }
    }
    marked
}
