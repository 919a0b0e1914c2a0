//! Readers: every supported file becomes one [`Document`] whose `text` is what segmentation,
//! metadata and offsets refer to.
//!
//! Plain text is kept verbatim except for line endings (`\r\n` and `\r` become `\n`), so spans
//! located in a `.txt` file (CUAD's annotations) keep their character offsets. Formats without a
//! canonical text (HTML, PDF, DOCX) are rendered to paragraphs separated by blank lines, and for
//! PDF the repeated page headers/footers and page numbers are removed at read time.

mod docx;
mod docx_numbering;
mod html;
mod ocr;
mod pdf;
mod text;

use std::path::{Path, PathBuf};

pub use ocr::ocr_available;

/// Files above this size are refused rather than read: a real contract is a few megabytes at most,
/// and a 100 MB "contract" is almost always a mistake (a dump, a video) that would stall a batch.
pub const DEFAULT_MAX_BYTES: u64 = 32 * 1024 * 1024;

/// Which reader produced a document.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    Txt,
    Html,
    Pdf,
    Docx,
}

impl Format {
    /// The format implied by a file extension (case-insensitive), if it is one we read.
    pub fn from_path(path: &Path) -> Option<Format> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "txt" | "text" => Some(Format::Txt),
            "htm" | "html" | "xhtml" => Some(Format::Html),
            "pdf" => Some(Format::Pdf),
            "docx" => Some(Format::Docx),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Format::Txt => "txt",
            Format::Html => "html",
            Format::Pdf => "pdf",
            Format::Docx => "docx",
        }
    }
}

/// A contract as text. Every offset elsewhere in this crate (clause spans, metadata) is a
/// character offset (Unicode scalar values, not bytes) into `text`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Document {
    pub path: PathBuf,
    pub format: Format,
    pub text: String,
    /// The text was recognised from page images (a scanned PDF), so it may hold OCR errors and
    /// its offsets refer to this text only, not to anything in the file.
    pub ocr: bool,
}

impl Document {
    /// A document from text already in memory (tests, pasted contracts, the server).
    pub fn from_text(path: impl Into<PathBuf>, text: &str) -> Document {
        Document {
            path: path.into(),
            format: Format::Txt,
            text: normalize_newlines(text),
            ocr: false,
        }
    }

    /// The file stem, which is how ingested clauses name their contract.
    pub fn stem(&self) -> String {
        self.path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default()
    }
}

/// Why a file could not be read. The message is meant for a per-file report line.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("{path}: cannot read: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: unsupported file type (expected .txt, .htm/.html, .pdf or .docx)")]
    Unsupported { path: PathBuf },
    #[error("{path}: file too large ({size} bytes; the limit is {limit} bytes)")]
    TooLarge {
        path: PathBuf,
        size: u64,
        limit: u64,
    },
    /// A compressed document (DOCX) whose `part` inflates past `limit` bytes: a zip bomb, or a
    /// document far larger than any contract.
    #[error("{path}: too large: {part} inflates to more than {} MiB, the limit for a document's text", limit / (1024 * 1024))]
    InflatesTooLarge {
        path: PathBuf,
        part: &'static str,
        limit: u64,
    },
    #[error("{path}: empty file")]
    Empty { path: PathBuf },
    #[error("{path}: binary data, not text ({reason})")]
    Binary { path: PathBuf, reason: String },
    #[error("{path}: no text layer (scanned?) and {reason}")]
    NoTextLayer { path: PathBuf, reason: String },
    #[error("{path}: not a readable {format} file: {reason}")]
    Corrupt {
        path: PathBuf,
        format: &'static str,
        reason: String,
    },
    #[error("{path}: no text in the document")]
    NoText { path: PathBuf },
}

impl ReadError {
    pub fn path(&self) -> &Path {
        match self {
            ReadError::Io { path, .. }
            | ReadError::Unsupported { path }
            | ReadError::TooLarge { path, .. }
            | ReadError::InflatesTooLarge { path, .. }
            | ReadError::Empty { path }
            | ReadError::Binary { path, .. }
            | ReadError::NoTextLayer { path, .. }
            | ReadError::Corrupt { path, .. }
            | ReadError::NoText { path } => path,
        }
    }
}

/// Options of [`read_path_with`].
#[derive(Clone, Copy, Debug)]
pub struct ReadOptions {
    pub max_bytes: u64,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            max_bytes: DEFAULT_MAX_BYTES,
        }
    }
}

/// Reads a contract file, choosing the reader by extension, with the default size limit.
pub fn read_path(path: &Path) -> Result<Document, ReadError> {
    read_path_with(path, &ReadOptions::default())
}

pub fn read_path_with(path: &Path, options: &ReadOptions) -> Result<Document, ReadError> {
    let (format, bytes) = read_file(path, options)?;
    read_bytes(path, format, &bytes)
}

/// Reads a draft a lawyer hands over (a clause to compare, a draft to place in the market):
/// any format [`read_path`] reads, and a file with no such extension as plain text, with the
/// same encodings (UTF-8, UTF-16 with a BOM, else Windows-1252) and the same checks.
///
/// Why not `read_to_string`: drafts saved from Word on Windows are Windows-1252, and `review`
/// and `ingest` already read them; a comparison of the same file must not refuse it.
pub fn read_draft(path: &Path) -> Result<Document, ReadError> {
    if Format::from_path(path).is_some() {
        return read_path(path);
    }
    let bytes = read_within(path, ReadOptions::default().max_bytes)?;
    read_bytes(path, Format::Txt, &bytes)
}

/// A contract file's format and bytes, for callers that need the bytes too (ingest fingerprints
/// them); [`read_bytes`] then reads the contract. Refuses unsupported and oversized files.
pub fn read_file(path: &Path, options: &ReadOptions) -> Result<(Format, Vec<u8>), ReadError> {
    let format = Format::from_path(path).ok_or_else(|| ReadError::Unsupported {
        path: path.to_path_buf(),
    })?;
    Ok((format, read_within(path, options.max_bytes)?))
}

/// A file's bytes, refused past `limit`; the size check comes before reading so that a huge
/// file costs nothing.
fn read_within(path: &Path, limit: u64) -> Result<Vec<u8>, ReadError> {
    let io = |source| ReadError::Io {
        path: path.to_path_buf(),
        source,
    };
    let size = std::fs::metadata(path).map_err(io)?.len();
    if size > limit {
        return Err(ReadError::TooLarge {
            path: path.to_path_buf(),
            size,
            limit,
        });
    }
    std::fs::read(path).map_err(io)
}

/// Reads a contract already in memory; `path` is only used to name it.
pub fn read_bytes(path: &Path, format: Format, bytes: &[u8]) -> Result<Document, ReadError> {
    if bytes.iter().all(|b| b.is_ascii_whitespace()) {
        return Err(ReadError::Empty {
            path: path.to_path_buf(),
        });
    }
    let (text, ocr) = match format {
        Format::Txt => (text::read(path, bytes)?, false),
        Format::Html => (html::read(path, bytes)?, false),
        Format::Pdf => pdf::read(path, bytes)?,
        Format::Docx => (docx::read(path, bytes)?, false),
    };
    let text = normalize_newlines(&text);
    if !text.chars().any(char::is_alphanumeric) {
        return Err(ReadError::NoText {
            path: path.to_path_buf(),
        });
    }
    Ok(Document {
        path: path.to_path_buf(),
        format,
        text,
        ocr,
    })
}

fn normalize_newlines(text: &str) -> String {
    if !text.contains('\r') {
        return text.to_string();
    }
    text.replace("\r\n", "\n").replace('\r', "\n")
}

/// Collapses runs of 3+ newlines to a blank line and trims trailing spaces on each line: the
/// rendered formats produce such runs from nested block elements.
pub(crate) fn tidy_rendered(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut blank_run = 0usize;
    for line in text.split('\n') {
        let line = line.trim_end();
        if line.trim().is_empty() {
            blank_run += 1;
            if blank_run == 1 && !out.is_empty() {
                out.push('\n');
            }
            continue;
        }
        blank_run = 0;
        out.push_str(line);
        out.push('\n');
    }
    out.trim_end().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_draft_saved_as_windows_1252_reads_with_or_without_an_extension() {
        let dir = tempfile::tempdir().expect("tempdir");
        // "Licensee’s liability shall not exceed €100." as Word on Windows saves it.
        let mut bytes = b"Licensee".to_vec();
        bytes.push(0x92);
        bytes.extend_from_slice(b"s liability shall not exceed ");
        bytes.push(0x80);
        bytes.extend_from_slice(b"100.");
        for name in ["draft.txt", "draft"] {
            let path = dir.path().join(name);
            std::fs::write(&path, &bytes).expect("write");
            let draft = read_draft(&path).expect("a Windows-1252 draft reads");
            assert_eq!(
                draft.text,
                "Licensee\u{2019}s liability shall not exceed \u{20ac}100."
            );
        }
        let empty = dir.path().join("empty");
        std::fs::write(&empty, "  \n").expect("write");
        assert!(matches!(read_draft(&empty), Err(ReadError::Empty { .. })));
    }
}
