//! Judgements made on a clause corpus (ACORD's hand-cut clauses) carried over to a library
//! `ingest` cut from the contracts those clauses came from ([`crate::transfer`]), reading the
//! library's clauses and their contracts as ingest read them: what `precedent map-qrels`
//! computes before it writes and prints.

use std::collections::HashMap;
use std::path::Path;

use anyhow::{bail, Context, Result};
use precedent_formats::{CorpusDoc, Qrels};
use precedent_library::Library;

use crate::transfer::{transfer_judgements, SourceClause, Transferred};

/// The judgements carried to a library, and how many of its contract files were read.
pub struct LibraryJudgements {
    pub transferred: Transferred,
    /// Contract files the library's clauses were cut from.
    pub contracts: usize,
    /// Of those, the files that could not be read (changed or gone): their clauses get none.
    pub unreadable: usize,
}

impl LibraryJudgements {
    /// Which library clauses each corpus clause was carried to, with the statistics, as
    /// `map-qrels --mapping-out` writes it (sorted by corpus clause id).
    pub fn mapping_json(&self) -> serde_json::Value {
        let mut mapping: Vec<(&String, &Vec<String>)> = self.transferred.mapping.iter().collect();
        mapping.sort();
        serde_json::json!({
            "stats": self.transferred.stats,
            "mapping": mapping.into_iter().collect::<std::collections::BTreeMap<_, _>>(),
        })
    }

    /// What `map-qrels` prints: clauses placed and carried, relevant judgements kept, and the
    /// judgements written to `out_path`.
    pub fn summary(&self, out_path: &Path) -> String {
        use std::fmt::Write;
        let mut out = String::new();
        let transferred = &self.transferred;
        let s = &transferred.stats;
        let pct = |a: usize, b: usize| 100.0 * a as f64 / b.max(1) as f64;
        let _ = writeln!(
            out,
            "{} judged corpus clauses: {} placed in the {} contracts' text ({:.1}%), {} carried to library clauses ({:.1}%)",
            s.judged_clauses,
            s.placed_clauses,
            self.contracts - self.unreadable,
            pct(s.placed_clauses, s.judged_clauses),
            s.mapped_clauses,
            pct(s.mapped_clauses, s.judged_clauses),
        );
        let _ = writeln!(
            out,
            "relevant judgements (3 stars and up) carried: {} of {} ({:.1}%); {} of {} queries keep a relevant clause",
            s.relevant_mapped,
            s.relevant_judged,
            pct(s.relevant_mapped, s.relevant_judged),
            s.queries_with_relevant,
            s.queries
        );
        let _ = writeln!(
            out,
            "{} library clauses judged, {} judgements written to {}",
            s.library_clauses_judged,
            transferred.qrels.num_judgements(),
            out_path.display()
        );
        out
    }
}

/// Carries `qrels` (over `corpus`'s clause ids) to the clauses of the library at `index`,
/// placing each judged corpus clause in the contracts' text. A contract that cannot be read
/// (gone, or changed since it was ingested) is reported to `warn` and gets no judgements.
pub fn map_to_library(
    corpus: &[CorpusDoc],
    qrels: &Qrels,
    index: &Path,
    warn: &dyn Fn(&str),
) -> Result<LibraryJudgements> {
    let library = Library::open(index)?;
    let store = library.store();

    // The library's clauses by contract file, with their spans.
    let mut files: Vec<(String, Option<String>)> = Vec::new();
    let mut file_index: HashMap<String, usize> = HashMap::new();
    let mut clauses: Vec<SourceClause> = Vec::with_capacity(store.len());
    for row in 0..store.len() as u32 {
        let clause = store.clause(row)?;
        let meta = &clause.metadata;
        let (Some(path), Some(start), Some(end)) = (
            meta.get("source_path").and_then(|v| v.as_str()),
            meta.get("start").and_then(|v| v.as_u64()),
            meta.get("end").and_then(|v| v.as_u64()),
        ) else {
            continue;
        };
        let contract = *file_index.entry(path.to_owned()).or_insert_with(|| {
            let fingerprint = meta
                .get("source_fingerprint")
                .and_then(|v| v.as_str())
                .map(str::to_owned);
            files.push((path.to_owned(), fingerprint));
            files.len() - 1
        });
        clauses.push(SourceClause {
            id: clause.id,
            contract,
            start: start as usize,
            end: end as usize,
        });
    }
    if clauses.is_empty() {
        bail!(
            "{} has no clause cut from a contract file (no source_path/start/end): build it with `precedent ingest DIR --index {}`",
            index.display(),
            index.display()
        );
    }

    // Each contract's text as ingest read it (the spans are offsets into it).
    let mut texts: Vec<String> = Vec::with_capacity(files.len());
    let mut unreadable = 0usize;
    for (path, fingerprint) in &files {
        match precedent_engine::ingest::ingested_text(Path::new(path), fingerprint.as_deref()) {
            Ok(text) => texts.push(text),
            Err(e) => {
                warn(&format!("warning: {e:#}; its clauses get no judgements"));
                unreadable += 1;
                texts.push(String::new());
            }
        }
    }
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let transferred = transfer_judgements(corpus, qrels, &refs, &clauses)
        .context("placing the corpus's clauses in the contracts")?;
    Ok(LibraryJudgements {
        transferred,
        contracts: files.len(),
        unreadable,
    })
}
