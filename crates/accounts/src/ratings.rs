//! Lawyers' star ratings, kept in an append-only JSONL log (`LIBRARY/ratings.jsonl`) and exported
//! as ACORD-style qrels so `precedent train` can learn from real use.
//!
//! Durability: a rating is acknowledged only after its line is written with one `write` call
//! on an `O_APPEND` file and `fdatasync`ed. A crash (kill -9, power loss) can at worst leave a
//! torn last line of a rating that was never acknowledged; opening the log cuts it off.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

pub const RATINGS_FILE: &str = "ratings.jsonl";

/// One rating as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Rating {
    /// The query the lawyer searched for (it becomes the query id of the exported qrels).
    pub query: String,
    /// The rated clause's id.
    pub clause_id: String,
    /// 1 (irrelevant) to 5 (exactly what was needed); exported as qrels score `stars - 1`.
    pub stars: u8,
    /// The API key that rated (its public id, never the token).
    pub key_id: String,
    /// Milliseconds since the Unix epoch.
    pub time_unix_ms: u64,
}

/// A rating log's errors are the exchange files' errors: they name the file and the line.
pub use precedent_formats::FormatError as RatingError;

/// The rating log of one library.
pub struct RatingLog {
    path: PathBuf,
    file: Mutex<File>,
    /// Ratings in the log (complete lines).
    count: AtomicUsize,
}

impl RatingLog {
    /// Opens (creating) the log in `library_dir`, cutting off a torn last line left by a crash.
    pub fn open(library_dir: &Path) -> Result<Self, RatingError> {
        let path = library_dir.join(RATINGS_FILE);
        let io = |source| RatingError::Io {
            path: path.clone(),
            source,
        };
        let mut file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(&path)
            .map_err(io)?;
        let len = file.metadata().map_err(io)?.len();
        let mut count = 0;
        if len > 0 {
            let mut bytes = Vec::with_capacity(len as usize);
            file.seek(SeekFrom::Start(0)).map_err(io)?;
            file.read_to_end(&mut bytes).map_err(io)?;
            if bytes.last() != Some(&b'\n') {
                let keep = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
                tracing::warn!(
                    "{}: dropping a torn last line ({} bytes) left by a crash",
                    path.display(),
                    bytes.len() - keep
                );
                file.set_len(keep as u64).map_err(io)?;
                file.sync_all().map_err(io)?;
                bytes.truncate(keep);
            }
            count = bytes.iter().filter(|&&b| b == b'\n').count();
        }
        Ok(RatingLog {
            path,
            file: Mutex::new(file),
            count: AtomicUsize::new(count),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends `rating` and returns once it is on disk.
    pub fn append(&self, rating: &Rating) -> Result<(), RatingError> {
        let mut line = serde_json::to_vec(rating).map_err(|e| RatingError::Malformed {
            path: self.path.clone(),
            line: 0,
            message: e.to_string(),
        })?;
        line.push(b'\n');
        let io = |source| RatingError::Io {
            path: self.path.clone(),
            source,
        };
        let mut file = self.file.lock().unwrap_or_else(|p| p.into_inner());
        file.write_all(&line).map_err(io)?;
        file.sync_data().map_err(io)?;
        self.count.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    /// Ratings stored so far.
    pub fn len(&self) -> usize {
        self.count.load(Ordering::Relaxed)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every rating in the log, oldest first.
    pub fn read_all(&self) -> Result<Vec<Rating>, RatingError> {
        read_ratings(&self.path)
    }
}

/// Reads a rating log; a malformed line is an error naming the file and line.
pub fn read_ratings(path: &Path) -> Result<Vec<Rating>, RatingError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => {
            return Err(RatingError::Io {
                path: path.to_path_buf(),
                source,
            })
        }
    };
    let complete = match text.rfind('\n') {
        Some(i) => &text[..=i],
        None => "",
    };
    let mut ratings = Vec::new();
    for (index, line) in complete.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let rating: Rating = serde_json::from_str(line).map_err(|e| RatingError::Malformed {
            path: path.to_path_buf(),
            line: index as u64 + 1,
            message: e.to_string(),
        })?;
        ratings.push(rating);
    }
    Ok(ratings)
}

/// A query as a rating stores it and the exports name it: every run of whitespace (tabs and
/// line breaks included) one space, none at the ends. A query id with a tab or a line break
/// would split its qrels row; collapsing keeps one line per rating, and the ranking reads the
/// same words.
pub fn one_line(query: &str) -> String {
    query.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The latest rating of each (query, clause) pair, as qrels scores (`stars - 1`, ACORD's 0..4).
/// Queries are read through [`one_line`], so ratings stored before it was applied export on one
/// line too, and group with the same words typed with other spacing.
pub fn latest_judgements(ratings: &[Rating]) -> BTreeMap<(String, String), i32> {
    let mut latest: BTreeMap<(String, String), (u64, usize, i32)> = BTreeMap::new();
    for (order, r) in ratings.iter().enumerate() {
        let key = (one_line(&r.query), r.clause_id.clone());
        let entry = (r.time_unix_ms, order, i32::from(r.stars) - 1);
        match latest.get(&key) {
            Some(old) if (old.0, old.1) > (entry.0, entry.1) => {}
            _ => {
                latest.insert(key, entry);
            }
        }
    }
    latest.into_iter().map(|(k, v)| (k, v.2)).collect()
}

/// Ratings as a qrels TSV (`query-id corpus-id score`, CSV quoting as ACORD's files), readable
/// by `precedent_formats::read_qrels`. The query id is the query text.
pub fn qrels_tsv(ratings: &[Rating]) -> Result<String, csv::Error> {
    let mut writer = csv::WriterBuilder::new()
        .delimiter(b'\t')
        .quote_style(csv::QuoteStyle::Necessary)
        .from_writer(Vec::new());
    writer.write_record(["query-id", "corpus-id", "score"])?;
    for ((query, clause), score) in latest_judgements(ratings) {
        writer.write_record([query.as_str(), clause.as_str(), &score.to_string()])?;
    }
    let bytes = writer.into_inner().map_err(|e| e.into_error())?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// The rated queries as a BEIR `queries.jsonl` whose ids match [`qrels_tsv`].
pub fn queries_jsonl(ratings: &[Rating]) -> String {
    let mut seen = std::collections::BTreeSet::new();
    let mut out = String::new();
    for r in ratings {
        let query = one_line(&r.query);
        if seen.insert(query.clone()) {
            let line = serde_json::json!({"_id": query, "text": query});
            out.push_str(&line.to_string());
            out.push('\n');
        }
    }
    out
}

/// A lawyer's rating of a clause for a query, as it is stored: the query on one line
/// ([`one_line`]), rated now by the key `key_id`. Refused unless 1 to 5 stars.
pub fn new_rating(
    query: &str,
    clause_id: String,
    stars: u8,
    key_id: String,
) -> Result<Rating, String> {
    if !(1..=5).contains(&stars) {
        return Err(format!("stars must be 1 to 5, got {stars}"));
    }
    let time_unix_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0);
    Ok(Rating {
        query: one_line(query),
        clause_id,
        stars,
        key_id,
        time_unix_ms,
    })
}

/// Why ratings could not be exported.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// The format asked for is none of the known ones (the caller's mistake).
    #[error("unknown format {0:?} (qrels, queries or jsonl)")]
    UnknownFormat(String),
    #[error("{0}")]
    Writing(String),
}

/// The ratings in an export format, with its media type: `qrels` (TSV, the latest rating per
/// pair, [`qrels_tsv`]), `queries` (BEIR queries.jsonl, [`queries_jsonl`]) or `jsonl` (the raw
/// log).
pub fn export(ratings: &[Rating], format: &str) -> Result<(&'static str, String), ExportError> {
    let writing = |e: &dyn std::fmt::Display| ExportError::Writing(e.to_string());
    Ok(match format {
        "qrels" => (
            "text/tab-separated-values; charset=utf-8",
            qrels_tsv(ratings).map_err(|e| writing(&e))?,
        ),
        "queries" => ("application/x-ndjson", queries_jsonl(ratings)),
        "jsonl" => {
            let mut out = String::new();
            for r in ratings {
                out.push_str(&serde_json::to_string(r).map_err(|e| writing(&e))?);
                out.push('\n');
            }
            ("application/x-ndjson", out)
        }
        other => return Err(ExportError::UnknownFormat(other.to_owned())),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rating(query: &str, clause: &str, stars: u8, t: u64) -> Rating {
        Rating {
            query: query.into(),
            clause_id: clause.into(),
            stars,
            key_id: "k1".into(),
            time_unix_ms: t,
        }
    }

    #[test]
    fn torn_last_line_is_cut_and_appends_continue() {
        let dir = tempfile::tempdir().expect("tempdir");
        let log = RatingLog::open(dir.path()).expect("open");
        log.append(&rating("cap", "a", 5, 1)).expect("append");
        drop(log);
        let path = dir.path().join(RATINGS_FILE);
        let mut f = OpenOptions::new().append(true).open(&path).expect("open");
        f.write_all(b"{\"query\":\"ca").expect("torn write");
        drop(f);
        assert_eq!(
            read_ratings(&path).expect("reader skips torn tail").len(),
            1
        );
        let log = RatingLog::open(dir.path()).expect("reopen");
        log.append(&rating("cap", "b", 2, 2)).expect("append");
        let all = log.read_all().expect("read");
        assert_eq!(all.len(), 2);
        assert_eq!(all[1].clause_id, "b");
    }

    #[test]
    fn a_malformed_line_names_file_and_line() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join(RATINGS_FILE);
        std::fs::write(&path, "{\"query\":1}\n").expect("write");
        let err = read_ratings(&path).expect_err("malformed");
        assert!(err.to_string().contains("ratings.jsonl:1"), "{err}");
    }

    #[test]
    fn queries_with_tabs_and_newlines_export_one_line_per_rating() {
        // As an older log may hold them: the API collapses whitespace before storing.
        let ratings = vec![
            rating("cap on\tliability\r\nfor  fees", "a", 5, 1),
            rating("cap on liability for fees", "b", 3, 2),
            rating("indemnity\n", "c", 1, 3),
        ];
        let tsv = qrels_tsv(&ratings).expect("tsv");
        let lines: Vec<&str> = tsv.lines().collect();
        assert_eq!(
            lines.len(),
            1 + 3,
            "a header and one line per rating: {tsv:?}"
        );
        for line in &lines {
            assert_eq!(
                line.split('\t').count(),
                3,
                "query-id, corpus-id, score: {line:?}"
            );
        }
        assert!(
            lines[1].starts_with("cap on liability for fees\ta\t4"),
            "{tsv:?}"
        );
        // The queries file names the same ids, one line each.
        let queries = queries_jsonl(&ratings);
        assert_eq!(queries.lines().count(), 2, "{queries}");
        assert!(
            queries.contains("\"_id\":\"cap on liability for fees\""),
            "{queries}"
        );
        assert_eq!(one_line("  a\tb\n\nc "), "a b c");
    }

    #[test]
    fn qrels_keep_the_latest_rating_and_round_trip_through_the_reader() {
        let dir = tempfile::tempdir().expect("tempdir");
        let ratings = vec![
            rating("unqualified \"as is\" clause", "a", 5, 1),
            rating("unqualified \"as is\" clause", "a", 2, 3),
            rating("unqualified \"as is\" clause", "b", 1, 2),
            rating("cap on liability", "c", 4, 2),
        ];
        let path = dir.path().join("qrels.tsv");
        std::fs::write(&path, qrels_tsv(&ratings).expect("tsv")).expect("write");
        let qrels = precedent_formats::read_qrels(&path).expect("read back");
        let judged = qrels.judged("unqualified \"as is\" clause").expect("query");
        assert_eq!(judged.get("a"), Some(&1), "latest rating (2 stars) wins");
        assert_eq!(judged.get("b"), Some(&0), "1 star is an explicit zero");
        assert_eq!(
            qrels.judged("cap on liability").and_then(|j| j.get("c")),
            Some(&3)
        );
        let queries = dir.path().join("queries.jsonl");
        std::fs::write(&queries, queries_jsonl(&ratings)).expect("write");
        let read = precedent_formats::read_queries(&queries).expect("queries");
        assert_eq!(read.len(), 2);
    }
}
