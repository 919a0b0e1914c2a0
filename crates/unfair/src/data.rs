//! LexGLUE's UNFAIR-ToS CSV: a header `text,labels`, then one sentence per record; `labels` is
//! a bracketed, space-separated list of ids (`[]`, `[1]`, `[3 2 1]`). Records may span lines
//! (the texts end with a newline inside the quotes), so errors give the line where the record
//! starts, as an editor shows it.

use std::path::Path;

use crate::{LabelSet, N_LABELS};

/// One sentence and its labels ([`LabelSet`]; 0 for none).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Example {
    pub text: String,
    pub labels: LabelSet,
}

/// Why a CSV could not be read. Every variant names the file, and the line where one applies,
/// so a user can open the file at the bad row.
#[derive(Debug, thiserror::Error)]
pub enum DataError {
    /// The I/O error is part of the message, not a `source`: an error chain printed with its
    /// causes would otherwise say it twice.
    #[error("{file}: cannot read: {error}")]
    Io { file: String, error: std::io::Error },
    #[error("{file}: empty file (expected a header `text,labels` and rows)")]
    Empty { file: String },
    #[error("{file}: a header and no rows (expected one sentence per line after `text,labels`)")]
    NoRows { file: String },
    #[error("{file}, line 1: no `{column}` column in the header (found: {found})")]
    MissingColumn {
        file: String,
        column: &'static str,
        found: String,
    },
    #[error("{file}, line {line}: malformed CSV: {message}")]
    Csv {
        file: String,
        line: u64,
        message: String,
    },
    #[error("{file}, line {line}: malformed label cell {cell:?}: {why} (expected e.g. [], [1] or [3 2 1], ids 0..7)")]
    Labels {
        file: String,
        line: u64,
        cell: String,
        why: String,
    },
}

/// Parses a label cell: `[]`, `[1]`, `[3 2 1]` (commas between ids are accepted too, as a
/// spreadsheet may write them). `Err` says what is wrong.
pub fn parse_labels(cell: &str) -> Result<LabelSet, String> {
    let inner = cell
        .trim()
        .strip_prefix('[')
        .and_then(|s| s.strip_suffix(']'))
        .ok_or_else(|| "not enclosed in [ ]".to_owned())?;
    let mut set: LabelSet = 0;
    for id in inner
        .split(|c: char| c.is_whitespace() || c == ',')
        .filter(|s| !s.is_empty())
    {
        let k: usize = id
            .parse()
            .map_err(|_| format!("{id:?} is not a label id"))?;
        if k >= N_LABELS {
            return Err(format!("label id {k} out of range"));
        }
        set |= 1 << k;
    }
    Ok(set)
}

/// Reads a UNFAIR-ToS CSV. With `labelled` false the `labels` column may be absent (a file of
/// sentences to classify); present, it is still checked.
pub fn read_csv_with(path: &Path, labelled: bool) -> Result<Vec<Example>, DataError> {
    let file = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|error| DataError::Io {
        file: file.clone(),
        error,
    })?;
    if bytes.iter().all(|b| b.is_ascii_whitespace()) {
        return Err(DataError::Empty { file });
    }
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .from_reader(bytes.as_slice());
    let csv_error = |e: csv::Error, file: &str| DataError::Csv {
        file: file.to_owned(),
        line: e.position().map_or(1, |p| p.line()),
        message: e.to_string(),
    };
    let headers = reader.headers().map_err(|e| csv_error(e, &file))?.clone();
    let column = |name: &'static str| {
        headers
            .iter()
            .position(|h| h.trim().trim_start_matches('\u{feff}') == name)
    };
    let found = headers.iter().collect::<Vec<_>>().join(",");
    let text_col = column("text").ok_or_else(|| DataError::MissingColumn {
        file: file.clone(),
        column: "text",
        found: found.clone(),
    })?;
    let label_col = column("labels");
    if labelled && label_col.is_none() {
        return Err(DataError::MissingColumn {
            file,
            column: "labels",
            found,
        });
    }
    let mut examples = Vec::new();
    for record in reader.records() {
        let record = record.map_err(|e| csv_error(e, &file))?;
        let line = record.position().map_or(0, |p| p.line());
        let text = record.get(text_col).ok_or_else(|| DataError::Csv {
            file: file.clone(),
            line,
            message: "no text cell".to_owned(),
        })?;
        let labels = match label_col {
            None => 0,
            Some(c) => {
                let cell = record.get(c).ok_or_else(|| DataError::Csv {
                    file: file.clone(),
                    line,
                    message: "no labels cell".to_owned(),
                })?;
                parse_labels(cell).map_err(|why| DataError::Labels {
                    file: file.clone(),
                    line,
                    cell: cell.to_owned(),
                    why,
                })?
            }
        };
        examples.push(Example {
            text: text.trim().to_owned(),
            labels,
        });
    }
    if examples.is_empty() {
        return Err(DataError::NoRows { file });
    }
    Ok(examples)
}

/// Reads a labelled UNFAIR-ToS CSV ([`read_csv_with`]).
pub fn read_csv(path: &Path) -> Result<Vec<Example>, DataError> {
    read_csv_with(path, true)
}

/// Whether a CSV's header has a `labels` column (so `eval-unfair-tos` can score it).
pub fn has_labels_column(path: &Path) -> Result<bool, DataError> {
    let file = path.display().to_string();
    let opened = std::fs::File::open(path).map_err(|error| DataError::Io {
        file: file.clone(),
        error,
    })?;
    let mut reader = csv::Reader::from_reader(opened);
    let headers = reader.headers().map_err(|e| DataError::Csv {
        file,
        line: 1,
        message: e.to_string(),
    })?;
    Ok(headers
        .iter()
        .any(|h| h.trim().trim_start_matches('\u{feff}') == "labels"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn file(content: &str) -> tempfile::NamedTempFile {
        let mut f = tempfile::NamedTempFile::new().expect("temp file");
        f.write_all(content.as_bytes()).expect("write");
        f
    }

    fn error(content: &str) -> String {
        let f = file(content);
        let e = read_csv(f.path()).expect_err("should fail");
        let message = e.to_string();
        assert!(
            message.contains(&f.path().display().to_string()),
            "{message}"
        );
        message
    }

    #[test]
    fn a_missing_file_is_a_read_error_not_a_malformed_csv() {
        let dir = tempfile::tempdir().expect("tempdir");
        let missing = dir.path().join("missing.csv");
        for message in [
            has_labels_column(&missing)
                .expect_err("missing file")
                .to_string(),
            read_csv(&missing).expect_err("missing file").to_string(),
        ] {
            assert!(message.contains("missing.csv: cannot read"), "{message}");
            assert!(!message.contains("malformed"), "{message}");
        }
    }

    #[test]
    fn parses_label_cells() {
        assert_eq!(parse_labels("[]"), Ok(0));
        assert_eq!(parse_labels("[1]"), Ok(0b10));
        assert_eq!(parse_labels("[3 2 1]"), Ok(0b1110));
        assert_eq!(parse_labels(" [7, 0] "), Ok(0b1000_0001));
        assert!(parse_labels("1").is_err());
        assert!(parse_labels("[8]").is_err());
        assert!(parse_labels("[a]").is_err());
        assert!(parse_labels("[1").is_err());
    }

    #[test]
    fn reads_multiline_records() {
        let f = file("text,labels\n\"you agree . \n\",[4]\n\"hello , world . \n\",[]\n");
        let rows = read_csv(f.path()).expect("read");
        assert_eq!(
            rows,
            vec![
                Example {
                    text: "you agree .".into(),
                    labels: 0b1_0000
                },
                Example {
                    text: "hello , world .".into(),
                    labels: 0
                },
            ]
        );
    }

    #[test]
    fn empty_file_is_an_error() {
        assert!(error("").contains("empty file"));
        assert!(error("  \n").contains("empty file"));
        assert!(error("text,labels\n").contains("a header and no rows"));
    }

    #[test]
    fn missing_columns_are_named() {
        let m = error("sentence,labels\n\"a .\",[]\n");
        assert!(m.contains("line 1") && m.contains("`text`"), "{m}");
        let m = error("text,label\n\"a .\",[]\n");
        assert!(m.contains("`labels`") && m.contains("text,label"), "{m}");
        // Without labels required, a text-only file reads.
        let f = file("text\n\"a .\"\n");
        assert_eq!(read_csv_with(f.path(), false).expect("read").len(), 1);
        assert!(!has_labels_column(f.path()).expect("header"));
    }

    #[test]
    fn malformed_label_cells_name_their_line() {
        let m = error("text,labels\n\"a .\n\",[]\n\"b .\",[9]\n");
        assert!(m.contains("line 4") && m.contains("out of range"), "{m}");
        let m = error("text,labels\n\"a .\",1 2\n");
        assert!(m.contains("line 2") && m.contains("\"1 2\""), "{m}");
    }

    #[test]
    fn ragged_rows_are_csv_errors_with_a_line() {
        let m = error("text,labels\n\"a .\",[],extra\n");
        assert!(m.contains("line 2") && m.contains("malformed CSV"), "{m}");
    }
}
