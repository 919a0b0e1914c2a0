//! Readers and writers for the files Precedent exchanges with the outside world.
//!
//! The clause-retrieval benchmarks of the field (ACORD, and BEIR-style corpora in general) come as
//! three files: `corpus.jsonl`, `queries.jsonl` and a qrels TSV. Runs are written back in the same
//! TSV dialect so any TREC tool can score them.
//!
//! Two traps shaped this crate:
//! - ACORD's qrels are TSV **with CSV quoting**: the query id `"as is" clause with carveouts` is
//!   written as `"""as is"" clause with carveouts"`. Splitting lines on tabs silently corrupts
//!   such ids, so every TSV here goes through the `csv` crate (tab delimiter, `"` quote), and
//!   runs are written the same way so they round-trip.
//! - Qrels zeros are explicit judgements (irrelevant), not missing rows; an absent pair is
//!   *unjudged*. [`Qrels`] therefore keeps every row, zeros included.
//!
//! Every error names the file and, where there is one, the 1-based line.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// An error reading or writing one of the exchange files; always says which file and line.
#[derive(Debug, thiserror::Error)]
pub enum FormatError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}:{line}: {message}")]
    Malformed {
        path: PathBuf,
        line: u64,
        message: String,
    },
    #[error("{path}: {message}")]
    Invalid { path: PathBuf, message: String },
}

impl FormatError {
    fn io(path: &Path, source: std::io::Error) -> Self {
        FormatError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
    fn malformed(path: &Path, line: u64, message: impl Into<String>) -> Self {
        FormatError::Malformed {
            path: path.to_path_buf(),
            line,
            message: message.into(),
        }
    }
}

pub type Result<T, E = FormatError> = std::result::Result<T, E>;

/// One clause (BEIR "document") of a corpus.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CorpusDoc {
    #[serde(rename = "_id")]
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    pub text: String,
    #[serde(default, skip_serializing_if = "serde_json::Value::is_null")]
    pub metadata: serde_json::Value,
}

impl CorpusDoc {
    /// A clause with an id and a text only (no title, no metadata).
    pub fn new(id: impl Into<String>, text: impl Into<String>) -> Self {
        CorpusDoc {
            id: id.into(),
            title: None,
            text: text.into(),
            metadata: serde_json::Value::Null,
        }
    }
}

/// One attorney query. `category` and `split` come from ACORD's `metadata` when present.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Query {
    pub id: String,
    pub text: String,
    pub category: Option<String>,
    pub split: Option<String>,
    pub metadata: serde_json::Value,
}

#[derive(Deserialize)]
struct RawQuery {
    #[serde(rename = "_id")]
    id: String,
    text: String,
    #[serde(default)]
    metadata: serde_json::Value,
}

fn open(path: &Path) -> Result<BufReader<File>> {
    File::open(path)
        .map(BufReader::new)
        .map_err(|e| FormatError::io(path, e))
}

/// Calls `f` with each non-blank line of a JSONL file, parsed, with its 1-based line number.
fn for_each_jsonl<T: for<'de> Deserialize<'de>>(
    path: &Path,
    mut f: impl FnMut(u64, T) -> Result<()>,
) -> Result<()> {
    let reader = open(path)?;
    for (index, line) in reader.lines().enumerate() {
        let line_no = index as u64 + 1;
        let line = line.map_err(|e| FormatError::io(path, e))?;
        let trimmed = line.trim();
        if trimmed.is_empty() {
            continue;
        }
        let value: T = serde_json::from_str(trimmed)
            .map_err(|e| FormatError::malformed(path, line_no, format!("invalid JSON: {e}")))?;
        f(line_no, value)?;
    }
    Ok(())
}

/// Reads a BEIR `corpus.jsonl`. Rejects duplicate ids and empty ids: both would make judgements
/// ambiguous.
pub fn read_corpus(path: &Path) -> Result<Vec<CorpusDoc>> {
    let mut docs = Vec::new();
    let mut seen = HashSet::new();
    for_each_jsonl(path, |line, doc: CorpusDoc| {
        if doc.id.trim().is_empty() {
            return Err(FormatError::malformed(path, line, "empty `_id`"));
        }
        if !seen.insert(doc.id.clone()) {
            return Err(FormatError::malformed(
                path,
                line,
                format!("duplicate `_id` {:?}", doc.id),
            ));
        }
        docs.push(doc);
        Ok(())
    })?;
    Ok(docs)
}

/// Reads a BEIR `queries.jsonl`. An empty query text is an error: it cannot be ranked.
pub fn read_queries(path: &Path) -> Result<Vec<Query>> {
    let mut queries = Vec::new();
    let mut seen = HashSet::new();
    for_each_jsonl(path, |line, raw: RawQuery| {
        if raw.text.trim().is_empty() {
            return Err(FormatError::malformed(
                path,
                line,
                format!("query {:?} has empty text", raw.id),
            ));
        }
        if !seen.insert(raw.id.clone()) {
            return Err(FormatError::malformed(
                path,
                line,
                format!("duplicate query `_id` {:?}", raw.id),
            ));
        }
        let field = |name: &str| {
            raw.metadata
                .get(name)
                .and_then(|v| v.as_str())
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
        };
        queries.push(Query {
            category: field("category"),
            split: field("split"),
            id: raw.id,
            text: raw.text,
            metadata: raw.metadata,
        });
        Ok(())
    })?;
    Ok(queries)
}

/// The name of the wording a query file holds, for reports that score several wordings of
/// the same queries: the queries' common `metadata.format` (ACORD's `queries_medium.jsonl`
/// says "medium"), else the file name without `queries_` and `.jsonl` (ACORD's plain
/// `queries.jsonl`, whose short forms carry no format, is "short").
pub fn wording_of(path: &Path, queries: &[Query]) -> String {
    let format = |q: &Query| {
        q.metadata
            .get("format")
            .and_then(|v| v.as_str())
            .map(str::to_owned)
    };
    if let Some(first) = queries.first().and_then(format) {
        if queries
            .iter()
            .all(|q| format(q).as_deref() == Some(first.as_str()))
        {
            return first;
        }
    }
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    match stem.strip_prefix("queries_") {
        Some(rest) if !rest.is_empty() => rest.to_owned(),
        _ if stem == "queries" => "short".to_owned(),
        _ => stem,
    }
}

/// Relevance judgements: query id → clause id → graded label (ACORD: 0..4 = 1..5 stars).
///
/// A pair that is absent is *unjudged*, which is different from a judged 0.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Qrels {
    by_query: BTreeMap<String, HashMap<String, i32>>,
    /// Where each query's first judgement was read, for messages about that query.
    first_line: HashMap<String, u64>,
    source: Option<PathBuf>,
}

impl Qrels {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn insert(&mut self, query: &str, doc: &str, label: i32) -> Option<i32> {
        self.by_query
            .entry(query.to_owned())
            .or_default()
            .insert(doc.to_owned(), label)
    }

    /// `file:line` of the first judgement of `query`, when the qrels were read from a file.
    pub fn location(&self, query: &str) -> Option<String> {
        let path = self.source.as_ref()?;
        let line = self.first_line.get(query)?;
        Some(format!("{}:{line}", path.display()))
    }

    /// The file the qrels were read from, if any.
    pub fn source(&self) -> Option<&Path> {
        self.source.as_deref()
    }

    /// Judgements of one query, if it has any.
    pub fn judged(&self, query: &str) -> Option<&HashMap<String, i32>> {
        self.by_query.get(query)
    }

    /// Query ids in sorted order.
    pub fn query_ids(&self) -> impl Iterator<Item = &str> {
        self.by_query.keys().map(String::as_str)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &HashMap<String, i32>)> {
        self.by_query.iter().map(|(q, d)| (q.as_str(), d))
    }

    pub fn num_queries(&self) -> usize {
        self.by_query.len()
    }

    pub fn num_judgements(&self) -> usize {
        self.by_query.values().map(HashMap::len).sum()
    }
}

fn tsv_reader(path: &Path) -> Result<csv::Reader<BufReader<File>>> {
    Ok(csv::ReaderBuilder::new()
        .delimiter(b'\t')
        .quote(b'"')
        .has_headers(true)
        .flexible(false)
        .from_reader(open(path)?))
}

fn csv_error(path: &Path, err: csv::Error) -> FormatError {
    let line = err.position().map(|p| p.line()).unwrap_or(0);
    match err.into_kind() {
        csv::ErrorKind::Io(e) => FormatError::io(path, e),
        csv::ErrorKind::UnequalLengths {
            expected_len, len, ..
        } => FormatError::malformed(
            path,
            line,
            format!("expected {expected_len} tab-separated fields, found {len}"),
        ),
        csv::ErrorKind::Utf8 { err, .. } => {
            FormatError::malformed(path, line, format!("invalid UTF-8: {err}"))
        }
        other => FormatError::malformed(path, line, format!("{other:?}")),
    }
}

/// Finds the column named `name` (case-insensitive, `-`/`_`/space equivalent) in a header.
fn column(headers: &csv::StringRecord, names: &[&str]) -> Option<usize> {
    let norm = |s: &str| s.trim().to_ascii_lowercase().replace(['_', ' '], "-");
    headers
        .iter()
        .position(|h| names.iter().any(|n| norm(h) == norm(n)))
}

/// Reads a qrels TSV with header `query-id corpus-id score` (CSV quoting, tab separated).
///
/// A pair judged twice with different labels is an error; an identical repeat is accepted.
pub fn read_qrels(path: &Path) -> Result<Qrels> {
    let mut reader = tsv_reader(path)?;
    let headers = reader.headers().map_err(|e| csv_error(path, e))?.clone();
    let missing = |what: &str| {
        FormatError::malformed(
            path,
            1,
            format!("header has no `{what}` column (expected `query-id<TAB>corpus-id<TAB>score`)"),
        )
    };
    let q_col = column(&headers, &["query-id", "qid"]).ok_or_else(|| missing("query-id"))?;
    let d_col =
        column(&headers, &["corpus-id", "doc-id", "docid"]).ok_or_else(|| missing("corpus-id"))?;
    let s_col =
        column(&headers, &["score", "label", "relevance"]).ok_or_else(|| missing("score"))?;
    let mut qrels = Qrels::new();
    qrels.source = Some(path.to_path_buf());
    for record in reader.records() {
        let record = record.map_err(|e| csv_error(path, e))?;
        let line = record.position().map(|p| p.line()).unwrap_or(0);
        let get = |i: usize| record.get(i).unwrap_or("");
        let (query, doc, score) = (get(q_col), get(d_col), get(s_col).trim());
        if query.is_empty() || doc.is_empty() {
            return Err(FormatError::malformed(
                path,
                line,
                "empty query id or corpus id",
            ));
        }
        let label: i32 = score.parse().map_err(|_| {
            FormatError::malformed(path, line, format!("score {score:?} is not an integer"))
        })?;
        qrels.first_line.entry(query.to_owned()).or_insert(line);
        if let Some(previous) = qrels.insert(query, doc, label) {
            if previous != label {
                return Err(FormatError::malformed(
                    path,
                    line,
                    format!("pair ({query:?}, {doc:?}) judged twice: {previous} then {label}"),
                ));
            }
        }
    }
    Ok(qrels)
}

/// One line of a run: a ranked clause for a query.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunEntry {
    pub query_id: String,
    pub doc_id: String,
    pub rank: usize,
    pub score: f64,
}

/// Writes a run as TSV with header `query-id corpus-id rank score`, CSV-quoted like the qrels.
///
/// Scores are written in Rust's shortest round-trip form so that a reader recovers the exact
/// value, and ties stay ties for any tool that re-sorts by score.
pub fn write_run(path: &Path, entries: &[RunEntry]) -> Result<()> {
    write_tsv(
        path,
        ["query-id", "corpus-id", "rank", "score"],
        entries.iter().map(|e| {
            [
                e.query_id.clone(),
                e.doc_id.clone(),
                e.rank.to_string(),
                e.score.to_string(),
            ]
        }),
    )
}

/// Writes qrels as [`read_qrels`] reads them (`query-id corpus-id score`, CSV quoting), queries
/// in sorted order and each query's clauses sorted by id, so the same judgements give the same
/// file.
pub fn write_qrels(path: &Path, qrels: &Qrels) -> Result<()> {
    let rows = qrels.iter().flat_map(|(query, judged)| {
        let mut docs: Vec<(&String, &i32)> = judged.iter().collect();
        docs.sort();
        docs.into_iter()
            .map(move |(doc, label)| [query.to_owned(), doc.clone(), label.to_string()])
    });
    write_tsv(path, ["query-id", "corpus-id", "score"], rows)
}

/// A tab-separated file with a header row, CSV-quoted where a field needs it (query ids hold
/// quotes and spaces).
fn write_tsv<const N: usize>(
    path: &Path,
    header: [&str; N],
    rows: impl IntoIterator<Item = [String; N]>,
) -> Result<()> {
    let file = File::create(path).map_err(|e| FormatError::io(path, e))?;
    let mut writer = csv::WriterBuilder::new()
        .delimiter(b'\t')
        .quote_style(csv::QuoteStyle::Necessary)
        .from_writer(BufWriter::new(file));
    let wrap = |e: csv::Error| csv_error(path, e);
    writer.write_record(header).map_err(wrap)?;
    for row in rows {
        writer.write_record(&row).map_err(wrap)?;
    }
    let mut inner = writer
        .into_inner()
        .map_err(|e| FormatError::io(path, e.into_error()))?;
    inner.flush().map_err(|e| FormatError::io(path, e))
}

/// Reads a run written by [`write_run`].
pub fn read_run(path: &Path) -> Result<Vec<RunEntry>> {
    let mut reader = tsv_reader(path)?;
    let headers = reader.headers().map_err(|e| csv_error(path, e))?.clone();
    let missing = |what: &str| FormatError::malformed(path, 1, format!("no `{what}` column"));
    let q_col = column(&headers, &["query-id"]).ok_or_else(|| missing("query-id"))?;
    let d_col = column(&headers, &["corpus-id"]).ok_or_else(|| missing("corpus-id"))?;
    let r_col = column(&headers, &["rank"]).ok_or_else(|| missing("rank"))?;
    let s_col = column(&headers, &["score"]).ok_or_else(|| missing("score"))?;
    let mut entries = Vec::new();
    for record in reader.records() {
        let record = record.map_err(|e| csv_error(path, e))?;
        let line = record.position().map(|p| p.line()).unwrap_or(0);
        let get = |i: usize| record.get(i).unwrap_or("");
        let rank = get(r_col)
            .trim()
            .parse()
            .map_err(|_| FormatError::malformed(path, line, "rank is not an integer"))?;
        let score = get(s_col)
            .trim()
            .parse()
            .map_err(|_| FormatError::malformed(path, line, "score is not a number"))?;
        entries.push(RunEntry {
            query_id: get(q_col).to_owned(),
            doc_id: get(d_col).to_owned(),
            rank,
            score,
        });
    }
    Ok(entries)
}

/// Writes a JSONL corpus (used by tests and by tools that derive corpora).
pub fn write_corpus(path: &Path, docs: &[CorpusDoc]) -> Result<()> {
    let file = File::create(path).map_err(|e| FormatError::io(path, e))?;
    let mut out = BufWriter::new(file);
    for doc in docs {
        let line = serde_json::to_string(doc).map_err(|e| FormatError::Invalid {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        writeln!(out, "{line}").map_err(|e| FormatError::io(path, e))?;
    }
    out.flush().map_err(|e| FormatError::io(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &tempfile::TempDir, name: &str, content: &str) -> PathBuf {
        let path = dir.path().join(name);
        std::fs::write(&path, content).expect("write fixture");
        path
    }

    #[test]
    fn qrels_unquote_csv_style_ids_and_keep_zeros() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = write(
            &dir,
            "q.tsv",
            "query-id\tcorpus-id\tscore\n\"\"\"as is\"\" clause with carveouts\"\td1\t3\n\"\"\"as is\"\" clause with carveouts\"\td2\t0\nplain\td1\t1\n",
        );
        let qrels = read_qrels(&path).expect("parse");
        let judged = qrels
            .judged("\"as is\" clause with carveouts")
            .expect("query present");
        assert_eq!(judged.get("d1"), Some(&3));
        assert_eq!(judged.get("d2"), Some(&0));
        assert_eq!(qrels.num_queries(), 2);
        assert_eq!(qrels.num_judgements(), 3);
    }

    #[test]
    fn qrels_errors_name_file_and_line() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = write(
            &dir,
            "bad.tsv",
            "query-id\tcorpus-id\tscore\nq\td\t1\nq\td2\tthree\n",
        );
        let err = read_qrels(&path).expect_err("must fail").to_string();
        assert!(err.contains("bad.tsv:3"), "{err}");
        assert!(err.contains("three"), "{err}");

        let path = write(&dir, "short.tsv", "query-id\tcorpus-id\tscore\nq\td\n");
        let err = read_qrels(&path).expect_err("must fail").to_string();
        assert!(err.contains("short.tsv:2"), "{err}");

        let path = write(
            &dir,
            "conflict.tsv",
            "query-id\tcorpus-id\tscore\nq\td\t1\nq\td\t2\n",
        );
        let err = read_qrels(&path).expect_err("must fail").to_string();
        assert!(
            err.contains("conflict.tsv:3") && err.contains("judged twice"),
            "{err}"
        );
    }

    #[test]
    fn corpus_errors_name_file_and_line() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = write(
            &dir,
            "c.jsonl",
            "{\"_id\": \"a\", \"text\": \"x\"}\n\n{\"_id\": \"b\", \"text\": \n",
        );
        let err = read_corpus(&path).expect_err("must fail").to_string();
        assert!(err.contains("c.jsonl:3"), "{err}");

        let path = write(
            &dir,
            "dup.jsonl",
            "{\"_id\": \"a\", \"text\": \"x\"}\n{\"_id\": \"a\", \"text\": \"y\"}\n",
        );
        let err = read_corpus(&path).expect_err("must fail").to_string();
        assert!(
            err.contains("dup.jsonl:2") && err.contains("duplicate"),
            "{err}"
        );

        let err = read_corpus(&dir.path().join("missing.jsonl"))
            .expect_err("must fail")
            .to_string();
        assert!(err.contains("missing.jsonl"), "{err}");
    }

    #[test]
    fn empty_query_is_an_error() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = write(
            &dir,
            "q.jsonl",
            "{\"_id\": \"q1\", \"text\": \"indemnity\"}\n{\"_id\": \"q2\", \"text\": \"  \"}\n",
        );
        let err = read_queries(&path).expect_err("must fail").to_string();
        assert!(err.contains("q.jsonl:2") && err.contains("empty"), "{err}");
    }

    #[test]
    fn run_roundtrips_quoted_ids_and_exact_scores() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("run.tsv");
        let entries = vec![
            RunEntry {
                query_id: "\"as is\" clause with carveouts".into(),
                doc_id: "d\t1".into(),
                rank: 1,
                score: f64::from(0.1f32),
            },
            RunEntry {
                query_id: "q".into(),
                doc_id: "d2".into(),
                rank: 2,
                score: 1e-7,
            },
        ];
        write_run(&path, &entries).expect("write");
        let text = std::fs::read_to_string(&path).expect("read");
        assert!(text.starts_with("query-id\tcorpus-id\trank\tscore\n"));
        assert_eq!(read_run(&path).expect("read back"), entries);
    }

    #[test]
    fn qrels_roundtrip_quoted_ids_and_explicit_zeros() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("qrels.tsv");
        let mut qrels = Qrels::new();
        qrels.insert("\"as is\" clause with carveouts", "c#2", 4);
        qrels.insert("\"as is\" clause with carveouts", "c#10", 0);
        qrels.insert("cap on liability", "d\t1", 2);
        write_qrels(&path, &qrels).expect("write");
        let text = std::fs::read_to_string(&path).expect("read");
        assert!(text.starts_with("query-id\tcorpus-id\tscore\n"), "{text}");
        let back = read_qrels(&path).expect("read back");
        assert_eq!(
            back.iter().collect::<Vec<_>>(),
            qrels.iter().collect::<Vec<_>>()
        );
        assert_eq!(
            back.judged("\"as is\" clause with carveouts")
                .and_then(|j| j.get("c#10")),
            Some(&0)
        );
    }
}

#[cfg(test)]
mod real_data {
    use super::*;

    fn acord() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/acord")
    }

    #[test]
    fn reads_acord_as_shipped() {
        let corpus = read_corpus(&acord().join("corpus.jsonl")).expect("corpus");
        assert_eq!(corpus.len(), 3931);
        // The 57 train and valid queries; the test split's are held out in every wording.
        let queries = read_queries(&acord().join("queries.jsonl")).expect("queries");
        assert_eq!(queries.len(), 57);
        assert!(queries
            .iter()
            .all(|q| q.category.is_some() && q.split.is_some()));
        assert!(queries
            .iter()
            .all(|q| matches!(q.split.as_deref(), Some("train" | "valid"))));
        assert_eq!(
            wording_of(&acord().join("queries.jsonl"), &queries),
            "short"
        );
        // The medium and long wordings: same ids (so the same qrels), other texts.
        for (wording, name) in [
            ("queries_medium.jsonl", "medium"),
            ("queries_long.jsonl", "long"),
        ] {
            let other = read_queries(&acord().join(wording)).expect(wording);
            assert_eq!(wording_of(&acord().join(wording), &other), name);
            let other_ids: HashSet<&str> = other.iter().map(|q| q.id.as_str()).collect();
            let short_ids: HashSet<&str> = queries.iter().map(|q| q.id.as_str()).collect();
            assert_eq!(other_ids, short_ids, "{wording}");
            assert!(other.iter().any(|q| q.text != q.id), "{wording}");
        }
        let qrels = read_qrels(&acord().join("qrels/train.tsv")).expect("qrels");
        // The quoted query id must come out unquoted and match queries.jsonl.
        let ids: HashSet<&str> = queries.iter().map(|q| q.id.as_str()).collect();
        assert!(qrels.query_ids().all(|q| ids.contains(q)));
        assert!(qrels.query_ids().any(|q| q.starts_with('"')));
        let zeros = qrels
            .iter()
            .flat_map(|(_, d)| d.values())
            .filter(|&&l| l == 0)
            .count();
        assert!(zeros > 0, "explicit zero judgements must be kept");
    }
}
