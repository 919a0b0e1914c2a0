//! A word-level comparison ([`crate::compare`]) as the faces show it: the runs as the API's
//! `ops` (and `precedent compare --json`'s), and as the marked-up text `precedent compare`
//! prints.
//!
//! Why here: both faces show the same comparison; the shapes derive their OpenAPI schemas with
//! the `openapi` feature. What a side of `precedent compare` reads ([`read_side`]) is here too,
//! so the command line only names the sides.

use std::path::Path;

use anyhow::{bail, Context, Result};
use precedent_contracts::library_docs::{citation, split_references};
use precedent_library::Library;
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

/// One side's text and the name the redline and the printed heading give it.
#[derive(Debug, Clone, PartialEq)]
pub struct NamedText {
    pub text: String,
    pub name: String,
}

/// One side of `precedent compare`: the clause `id` of `library`, or the text `file`, for the
/// flag `--{which}` (`--{which}-file`).
///
/// Why the clause's own words: a lawyer compares what the clause says, not the sections it
/// refers to, which search shows after it. The name is the clause's citation (its id when it
/// has none) or the file's name. The API names pasted text "your text" and reads a clause
/// through its view, so it keeps its own reader: sharing this one would rename its sides.
pub fn read_side(
    library: Option<&Library>,
    id: Option<&str>,
    file: Option<&Path>,
    which: &str,
) -> Result<NamedText> {
    match (id, file) {
        (Some(id), None) => {
            let library = library.with_context(|| {
                format!("--{which} names a clause: say which library with --index")
            })?;
            let row = library
                .store()
                .row(id)
                .with_context(|| format!("--{which}: no clause {id:?} in this library"))?;
            let clause = library.store().clause(row)?;
            let (own, _) = split_references(&clause.text, &clause.metadata);
            let name = citation(&clause.metadata).unwrap_or_else(|| format!("clause {id}"));
            Ok(NamedText {
                text: own.to_owned(),
                name,
            })
        }
        (None, Some(path)) => {
            let text = precedent_contracts::read_draft(path)?.text;
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| "your text".to_owned());
            Ok(NamedText { text, name })
        }
        _ => bail!("give exactly one of --{which} or --{which}-file"),
    }
}

/// The comparison as `precedent compare` prints it: which side became which, how much they
/// share, then the marked-up text ([`marked`]).
pub fn comparison_text(left: &str, right: &str, similarity: f32, runs: &[DiffRun]) -> String {
    format!(
        "{left} → {right}: {:.0}% of words in common\n{}\n",
        similarity * 100.0,
        marked(runs)
    )
}

#[cfg(test)]
mod tests {
    use precedent_formats::CorpusDoc;
    use precedent_library::{BuildOptions, NoProgress};
    use serde_json::json;

    use super::*;

    #[test]
    fn a_clause_side_is_its_own_words_under_its_citation() {
        let dir = tempfile::tempdir().expect("tempdir");
        let doc = |id: &str, metadata: serde_json::Value| CorpusDoc {
            id: id.to_owned(),
            title: None,
            text: "The Supplier shall indemnify the Customer.".to_owned(),
            metadata,
        };
        let docs = [doc("a#1", json!({})), doc("b#1", json!({"contract": "b"}))];
        let library = Library::build(
            dir.path(),
            &docs,
            &BuildOptions::default(),
            None,
            &NoProgress,
        )
        .expect("build");
        let side = read_side(Some(&library), Some("a#1"), None, "left").expect("side");
        assert_eq!(side.text, "The Supplier shall indemnify the Customer.");
        assert_eq!(side.name, "clause a#1");
        let cited = read_side(Some(&library), Some("b#1"), None, "left").expect("side");
        assert_eq!(cited.name, "b");
        let unknown = read_side(Some(&library), Some("zz"), None, "right").unwrap_err();
        assert_eq!(
            unknown.to_string(),
            "--right: no clause \"zz\" in this library"
        );
        let no_library = read_side(None, Some("a#1"), None, "left").unwrap_err();
        assert!(
            no_library.to_string().contains("with --index"),
            "{no_library}"
        );
    }

    #[test]
    fn a_file_side_is_named_by_its_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let draft = dir.path().join("draft.txt");
        std::fs::write(&draft, "Either party may terminate.").expect("write");
        let side = read_side(None, None, Some(&draft), "right").expect("side");
        assert_eq!(side.name, "draft.txt");
        assert_eq!(side.text, "Either party may terminate.");
        let empty = dir.path().join("empty.txt");
        std::fs::write(&empty, " \n").expect("write");
        assert!(read_side(None, None, Some(&empty), "right").is_err());
        let neither = read_side(None, None, None, "left").unwrap_err();
        assert_eq!(
            neither.to_string(),
            "give exactly one of --left or --left-file"
        );
    }
}
