//! Reading CUAD v1 as shared: `master_clauses.csv` (one row per contract, two columns per
//! category: the spans as a Python list, and the answer) and `full_contract_txt/*.txt`.
//!
//! Traps handled here: the CSV names files `*.pdf` (sometimes `.PDF`) while the texts are `*.txt`,
//! and names differ in case, punctuation, spacing and Unicode normalisation (`LECLANCHÉ` is
//! decomposed in one and composed in the other), so both sides are reduced to NFKD lowercase
//! alphanumerics before matching; spans are Python literals with escapes; ~5% of spans are not
//! verbatim (see [`crate::place`]).

use std::collections::{BTreeMap, HashMap};
use std::ops::Range;
use std::path::{Path, PathBuf};

use serde::Serialize;
use unicode_normalization::UnicodeNormalization;

use crate::categories::{category_index, CATEGORIES};
use crate::place::{cover, place_pieces, Placement};
use crate::pylist::parse_string_list;

#[derive(Debug, thiserror::Error)]
pub enum CuadError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}:{line}: {message}")]
    Format {
        path: PathBuf,
        line: u64,
        message: String,
    },
}

/// One annotated span.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Annotation {
    /// Index into [`CATEGORIES`].
    pub category: usize,
    /// The span as written in `master_clauses.csv`.
    pub text: String,
    /// Byte range in the contract text, if placed: for a span of pieces joined by `<omitted>`,
    /// from the first piece to the last.
    pub span: Option<Range<usize>>,
    /// Each placed piece's byte range (one for a contiguous span; empty if unplaced). What a
    /// position-bound use needs: the range of a span of pieces can cover most of the contract
    /// (a date in the preamble joined to a sentence near the end).
    pub pieces: Vec<Range<usize>>,
    pub placement: Placement,
}

impl Annotation {
    /// The text a prediction is compared with: pieces joined by `<omitted>` become one text
    /// (so the separator does not glue two words into one).
    pub fn match_text(&self) -> String {
        self.text.replace(crate::place::OMITTED, " ")
    }
}

/// A CUAD contract with its annotations.
#[derive(Debug, Clone)]
pub struct CuadContract {
    /// The text file's stem (the contract id used everywhere else).
    pub id: String,
    pub path: PathBuf,
    pub text: String,
    pub annotations: Vec<Annotation>,
    /// The answer column per category (`Yes`/`No`, a date, ...), as in the CSV.
    pub answers: Vec<String>,
}

impl CuadContract {
    /// Annotations of one category.
    pub fn spans_of(&self, category: usize) -> impl Iterator<Item = &Annotation> {
        self.annotations
            .iter()
            .filter(move |a| a.category == category)
    }
}

/// How many spans were placed, and how.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct PlacementReport {
    pub spans: usize,
    pub exact: usize,
    pub whitespace: usize,
    pub fuzzy: usize,
    pub unplaced: usize,
    /// Spans made of pieces joined with `<omitted>` (the reason ~5% are not verbatim).
    pub discontiguous: usize,
    /// CSV file names that matched no text file.
    pub missing_texts: Vec<String>,
}

impl PlacementReport {
    pub fn placed(&self) -> usize {
        self.exact + self.whitespace + self.fuzzy
    }
}

#[derive(Debug, Clone)]
pub struct CuadDataset {
    pub contracts: Vec<CuadContract>,
    pub report: PlacementReport,
}

/// Reduces a file name to what both spellings share: NFKD, lowercase, alphanumerics only, without
/// the `.pdf` / `.txt` extension.
pub fn file_key(name: &str) -> String {
    // One CSV name ends in `.PDF'` (a stray quote), so trailing punctuation goes first.
    let lower = name
        .to_lowercase()
        .trim_end_matches(|c: char| !c.is_alphanumeric())
        .to_owned();
    let stem = lower
        .strip_suffix(".pdf")
        .or_else(|| lower.strip_suffix(".txt"))
        .unwrap_or(&lower);
    stem.nfkd().filter(|c| c.is_alphanumeric()).collect()
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> CuadError + '_ {
    move |source| CuadError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Loads `dir/master_clauses.csv` and `dir/full_contract_txt/`, placing every span. Contracts are
/// returned sorted by id so that folds are reproducible.
pub fn load(dir: &Path) -> Result<CuadDataset, CuadError> {
    let csv_path = dir.join("master_clauses.csv");
    let txt_dir = dir.join("full_contract_txt");
    let mut texts: HashMap<String, PathBuf> = HashMap::new();
    for entry in std::fs::read_dir(&txt_dir).map_err(io_err(&txt_dir))? {
        let path = entry.map_err(io_err(&txt_dir))?.path();
        if let Some(name) = path.file_name().and_then(|n| n.to_str()) {
            if name.to_lowercase().ends_with(".txt") {
                texts.insert(file_key(name), path.clone());
            }
        }
    }
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .flexible(false)
        .from_path(&csv_path)
        .map_err(|e| CuadError::Format {
            path: csv_path.clone(),
            line: 1,
            message: e.to_string(),
        })?;
    let headers = reader
        .headers()
        .map_err(|e| CuadError::Format {
            path: csv_path.clone(),
            line: 1,
            message: e.to_string(),
        })?
        .clone();
    // Column of each category's span list; the answer column follows it.
    let mut columns = vec![usize::MAX; CATEGORIES.len()];
    for (i, h) in headers.iter().enumerate() {
        let h = h.trim_start_matches('\u{feff}');
        if h.ends_with("-Answer") {
            continue;
        }
        if let Some(c) = category_index(h).filter(|&c| CATEGORIES[c] == h) {
            columns[c] = i;
        }
    }
    if let Some(c) = columns.iter().position(|&i| i == usize::MAX) {
        return Err(CuadError::Format {
            path: csv_path,
            line: 1,
            message: format!("no column for category {:?}", CATEGORIES[c]),
        });
    }
    let mut report = PlacementReport::default();
    let mut contracts = BTreeMap::new();
    for record in reader.records() {
        let record = record.map_err(|e| CuadError::Format {
            path: csv_path.clone(),
            line: e.position().map_or(0, |p| p.line()),
            message: e.to_string(),
        })?;
        let line = record.position().map_or(0, |p| p.line());
        let format_err = |message: String| CuadError::Format {
            path: csv_path.clone(),
            line,
            message,
        };
        let file = record.get(0).unwrap_or_default();
        let Some(path) = texts.get(&file_key(file)) else {
            report.missing_texts.push(file.to_owned());
            continue;
        };
        let text = std::fs::read_to_string(path).map_err(io_err(path))?;
        let mut annotations = Vec::new();
        let mut answers = Vec::new();
        for (category, &column) in columns.iter().enumerate() {
            let cell = record.get(column).unwrap_or_default();
            answers.push(record.get(column + 1).unwrap_or_default().to_owned());
            let spans = parse_string_list(cell)
                .map_err(|m| format_err(format!("column {:?}: {m}", CATEGORIES[category])))?;
            let mut from = 0;
            for span in spans {
                let (pieces, placement) = place_pieces(&text, &span, from);
                let pieces = pieces.unwrap_or_default();
                let range = cover(&pieces);
                if let Some(r) = &range {
                    from = r.end;
                }
                report.spans += 1;
                report.discontiguous += usize::from(span.contains(crate::place::OMITTED));
                match placement {
                    Placement::Exact => report.exact += 1,
                    Placement::Whitespace => report.whitespace += 1,
                    Placement::Fuzzy => report.fuzzy += 1,
                    Placement::Unplaced => report.unplaced += 1,
                }
                annotations.push(Annotation {
                    category,
                    text: span,
                    span: range,
                    pieces,
                    placement,
                });
            }
        }
        let id = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default()
            .to_owned();
        contracts.insert(
            id.clone(),
            CuadContract {
                id,
                path: path.clone(),
                text,
                annotations,
                answers,
            },
        );
    }
    Ok(CuadDataset {
        contracts: contracts.into_values().collect(),
        report,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_keys_ignore_case_punctuation_and_normalisation() {
        let composed = "LECLANCH\u{c9} S.A. - JOINT DEVELOPMENT.PDF";
        let decomposed = "LECLANCHE\u{301} S.A. - JOINT  DEVELOPMENT.txt";
        assert_eq!(file_key(composed), file_key(decomposed));
        assert_eq!(file_key(composed), "leclanchesajointdevelopment");
        assert_eq!(
            file_key("KALLO_EX-10.1-AGREEMENT.PDF'"),
            "kalloex101agreement"
        );
    }
}
