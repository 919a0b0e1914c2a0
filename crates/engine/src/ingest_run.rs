//! A folder of contracts committed to a library in batches: what `precedent ingest` does
//! between parsing its flags and printing its summary.
//!
//! Files are read, segmented and described (metadata) in parallel, then committed to the
//! library in batches, each batch one new library generation. That makes ingest resumable: a
//! second run skips the contracts already in the library (by contract id) and continues, and an
//! interrupted run loses at most the batch in flight, never what was committed before. A
//! contract whose file changed since it was indexed (its bytes' fingerprint differs) is read
//! again and its clauses replaced in the same commit. A file that cannot be read is reported
//! with its reason and the rest of the folder goes on (a changed contract that no longer reads
//! keeps its old clauses).
//!
//! Why here: which files are new, changed or already indexed, and how each batch reaches the
//! library (embedded as the library's clauses were), decide what a library holds.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use precedent_clause_types::ClauseTyper;
use precedent_contracts::library_docs::contract_of;
use precedent_contracts::{Format, ReadOptions};
use precedent_formats::CorpusDoc;
use precedent_library::{BuildOptions, Library};
use precedent_rank::EmbedSettings;
use rayon::prelude::*;

use crate::ingest::{contract_ids, prepare, walk, Prepared};
use crate::library_setup::{embed_docs, fingerprint_file, library_settings};
use crate::Report;

/// What happened to one file.
#[derive(Debug, Clone, serde::Serialize)]
pub struct FileReport {
    pub path: String,
    pub contract: Option<String>,
    /// `ingested`, `re-ingested` (changed since it was indexed: its clauses were replaced),
    /// `already-indexed`, `failed` or `skipped` (not a contract file type).
    pub status: &'static str,
    pub clauses: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// How a folder is ingested.
pub struct IngestPlan<'a> {
    /// Folder of contracts, searched recursively.
    pub dir: &'a Path,
    /// Library directory: created if missing, otherwise the new contracts are added to it.
    pub index: &'a Path,
    /// Contracts committed per library generation.
    pub batch: usize,
    /// Read limits (files larger are skipped with a reason).
    pub read: ReadOptions,
    /// Embedding cache directory.
    pub cache: &'a Path,
}

/// What an ingest did: a report per file, and the library's clause count before and after.
pub struct IngestOutcome {
    pub reports: Vec<FileReport>,
    pub before: usize,
    pub after: usize,
}

impl IngestOutcome {
    /// Files of a status (`ingested`, `re-ingested`, `already-indexed`, `failed`, `skipped`).
    pub fn count(&self, status: &str) -> usize {
        self.reports.iter().filter(|r| r.status == status).count()
    }

    /// The line `precedent ingest` ends with: what was ingested into `index` in `seconds`, the
    /// library's size before and after, and what was already there, failed or skipped.
    pub fn summary(&self, index: &Path, seconds: f64) -> String {
        let count = |status: &str| self.count(status);
        let (ingested, failed) = (count("ingested"), count("failed"));
        let reingested = count("re-ingested");
        let clauses: usize = self.reports.iter().map(|r| r.clauses).sum();
        let (before, after) = (self.before, self.after);
        format!(
            "ingested {ingested} new and {reingested} changed contracts ({clauses} clauses) into {} in {seconds:.1}s; library {before} → {after} clauses; {} already indexed, {failed} failed, {} skipped (not contracts)",
            index.display(),
            count("already-indexed"),
            count("skipped"),
        )
    }

    /// The per-file reports as JSON lines (`ingest --report`).
    pub fn report_lines(&self) -> serde_json::Result<String> {
        let mut out = String::new();
        for r in &self.reports {
            out.push_str(&serde_json::to_string(r)?);
            out.push('\n');
        }
        Ok(out)
    }
}

/// Ingests `plan.dir` into `plan.index`. `load_typer` is called only when there is something
/// to type (`None` ingests without clause types); `new_vectors` says how a library created
/// here embeds its clauses (an existing library's clauses are embedded as its own were).
pub fn ingest_folder(
    plan: &IngestPlan<'_>,
    load_typer: Option<&dyn Fn() -> Result<ClauseTyper>>,
    new_vectors: &dyn Fn() -> Result<Option<EmbedSettings>>,
    report: &dyn Report,
) -> Result<IngestOutcome> {
    if !plan.dir.is_dir() {
        bail!("{} is not a folder of contracts", plan.dir.display());
    }
    if plan.batch == 0 {
        bail!("--batch must be at least 1");
    }
    let options = &plan.read;
    let files = walk(plan.dir)?;
    let ids = contract_ids(&files);
    // One writer per library for the whole run: a second ingest (or index) into the same
    // library is refused at once, and the contracts this run finds already indexed stay so.
    let _lock = Library::lock(plan.index)?;
    let mut library = if Library::exists(plan.index) {
        Some(Library::open(plan.index)?)
    } else {
        None
    };
    let indexed = match library.as_ref() {
        Some(lib) => indexed_fingerprints(lib)?,
        None => HashMap::new(),
    };
    let settings = match library.as_ref() {
        Some(lib) => lib.vectors_info().map(library_settings).transpose()?,
        None => new_vectors()?,
    };

    let mut reports: Vec<FileReport> = Vec::new();
    // (file, contract id, whether it replaces a contract already in the library)
    let mut todo: Vec<(PathBuf, String, bool)> = Vec::new();
    for (path, id) in files.into_iter().zip(ids) {
        let shown = path.display().to_string();
        if Format::from_path(&path).is_none() {
            reports.push(FileReport {
                path: shown,
                contract: None,
                status: "skipped",
                clauses: 0,
                reason: Some("not a contract file type (.txt, .htm, .html, .pdf, .docx)".into()),
            });
        } else if let Some(stored) = indexed.get(&id) {
            if changed_since_indexed(&path, stored.as_deref(), options.max_bytes) {
                todo.push((path, id, true));
                continue;
            }
            reports.push(FileReport {
                path: shown,
                contract: Some(id),
                status: "already-indexed",
                clauses: 0,
                reason: None,
            });
        } else {
            todo.push((path, id, false));
        }
    }
    let before = library.as_ref().map_or(0, Library::len);
    // Loaded only when there is something to type (trained from CUAD the first time, ~90 s).
    let typer = match load_typer {
        Some(load) if !todo.is_empty() => Some(load().context(
            "the clause typer writes CUAD clause types into the library (pass --no-types to ingest without them)",
        )?),
        _ => None,
    };
    let batches = todo.len().div_ceil(plan.batch);
    for (b, batch) in todo.chunks(plan.batch).enumerate() {
        report.start(
            &format!("reading contracts {}/{batches}", b + 1),
            batch.len() as u64,
        );
        let prepared: Vec<Result<Prepared, String>> = batch
            .par_iter()
            .map(|(path, id, _)| {
                let result = prepare(path, id, options, typer.as_ref());
                report.advance(1);
                result
            })
            .collect();
        report.finish();
        let mut docs: Vec<CorpusDoc> = Vec::new();
        let mut replaced: HashSet<String> = HashSet::new();
        for ((path, id, replaces), result) in batch.iter().zip(prepared) {
            let shown = path.display().to_string();
            match result {
                Ok(p) => {
                    if *replaces {
                        replaced.insert(id.clone());
                    }
                    reports.push(FileReport {
                        path: shown,
                        contract: Some(id.clone()),
                        status: if *replaces { "re-ingested" } else { "ingested" },
                        clauses: p.docs.len(),
                        reason: None,
                    });
                    docs.extend(p.docs);
                }
                Err(reason) => {
                    report.warn(&format!("skipped {reason}"));
                    reports.push(FileReport {
                        path: shown,
                        contract: Some(id.clone()),
                        status: "failed",
                        clauses: 0,
                        reason: Some(reason),
                    });
                }
            }
        }
        if docs.is_empty() {
            continue;
        }
        let vectors = match &settings {
            Some(s) => Some(embed_docs(&docs, s, plan.cache, report)?),
            None => None,
        };
        match library.as_mut() {
            Some(lib) if !replaced.is_empty() => lib.replace(
                &|clause| replaced.contains(contract_of(clause)),
                &docs,
                vectors,
                report,
            )?,
            Some(lib) => lib.add(&docs, vectors, report)?,
            None => {
                let built =
                    Library::build(plan.index, &docs, &BuildOptions::default(), vectors, report)?;
                library = Some(built);
            }
        }
    }
    let after = library.as_ref().map_or(0, Library::len);
    Ok(IngestOutcome {
        reports,
        before,
        after,
    })
}

/// Each indexed contract's file fingerprint, as ingest recorded it (`None` for libraries ingested
/// before fingerprints were recorded: those contracts are never taken for changed).
fn indexed_fingerprints(library: &Library) -> Result<HashMap<String, Option<String>>> {
    let store = library.store();
    let mut out: HashMap<String, Option<String>> = HashMap::new();
    for (row, id) in store.ids().iter().enumerate() {
        let contract = contract_of(id);
        if out.contains_key(contract) {
            continue;
        }
        let clause = store.clause(row as u32)?;
        let fingerprint = clause.metadata["source_fingerprint"]
            .as_str()
            .map(str::to_owned);
        out.insert(contract.to_owned(), fingerprint);
    }
    Ok(out)
}

/// Whether the file's bytes differ from those indexed. A file that cannot be read, or has grown
/// past the size limit, counts as changed, so that the attempt to read it again reports why.
fn changed_since_indexed(path: &Path, indexed: Option<&str>, max_bytes: u64) -> bool {
    let Some(indexed) = indexed else {
        return false;
    };
    match std::fs::metadata(path) {
        Ok(m) if m.len() <= max_bytes => fingerprint_file(path).map_or(true, |now| now != indexed),
        _ => true,
    }
}

/// What a removal did: clauses removed, and the library's clause count before and after.
pub struct Removal {
    pub removed: usize,
    pub before: usize,
    pub after: usize,
}

/// Takes the contracts (every clause whose contract id is given) and the clauses named by
/// `ids` out of the library at `index`, as one new generation under its write lock. Every id
/// must name something (a typo must not pass for a removal), and removing every clause is
/// refused: nothing is removed then.
pub fn remove_ids(index: &Path, ids: &[String], report: &dyn Report) -> Result<Removal> {
    let mut library = Library::open(index)?;
    let _lock = Library::lock(index)?;
    let wanted: HashSet<&str> = ids.iter().map(String::as_str).collect();
    let selected = |id: &str| wanted.contains(id) || wanted.contains(contract_of(id));
    // Every id must name something: a typo must not pass for a removal.
    let mut found: HashSet<&str> = HashSet::new();
    let mut removed = 0usize;
    for id in library.store().ids() {
        if wanted.contains(id.as_str()) {
            found.insert(id.as_str());
        }
        if wanted.contains(contract_of(id)) {
            found.insert(contract_of(id));
        }
        removed += usize::from(selected(id));
    }
    let missing: Vec<&str> = ids
        .iter()
        .map(String::as_str)
        .filter(|id| !found.contains(id))
        .collect();
    if !missing.is_empty() {
        bail!(
            "{}: no contract or clause with id {} (nothing removed)",
            index.display(),
            missing
                .iter()
                .map(|m| format!("{m:?}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let before = library.len();
    if removed == before {
        bail!(
            "{}: that would remove all {before} clauses (nothing removed); delete the directory instead",
            index.display()
        );
    }
    library.replace(&|id: &str| selected(id), &[], None, report)?;
    Ok(Removal {
        removed,
        before,
        after: library.len(),
    })
}
