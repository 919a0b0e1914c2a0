//! A folder of contracts committed to a library in batches: what `precedent ingest` does
//! between parsing its flags and printing its summary.
//!
//! Files are read, segmented and described (metadata) in parallel, then committed to the
//! library in batches, each batch one new library generation. That makes ingest resumable: a
//! second run skips the contracts already in the library (a contract is the file at its path;
//! the same bytes at another path are skipped too) and continues, and an interrupted run loses
//! at most the batch in flight, never what was committed before. A file of an indexed
//! contract's name in another folder is another contract, with an id of its own. A
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

use crate::ingest::{new_contract_id, prepare, source_path, stem_id, walk, Prepared};
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
    /// Whether the caller asked for vectors (no `--no-vectors`). A library that exists keeps
    /// its own way: the new contracts are embedded as its clauses were, or not at all, and a
    /// request the other way is said, not silently dropped.
    pub wants_vectors: bool,
    /// Where the per-file report goes as JSON lines (`ingest --report`), if anywhere. It is
    /// rewritten after every committed batch, so that a run killed midway still leaves the
    /// report of what it committed (the files of the batch in flight are not in it).
    pub report_to: Option<&'a Path>,
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
}

/// The per-file reports as JSON lines (`ingest --report`), written whole or not at all.
fn write_report(path: Option<&Path>, reports: &[FileReport]) -> Result<()> {
    let Some(path) = path else {
        return Ok(());
    };
    let mut out = String::new();
    for r in reports {
        out.push_str(&serde_json::to_string(r)?);
        out.push('\n');
    }
    precedent_library::write_atomically(path, out.as_bytes())
        .with_context(|| format!("writing the ingest report {}", path.display()))
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
    // One writer per library for the whole run: a second ingest (or index) into the same
    // library is refused at once, and the contracts this run finds already indexed stay so.
    let _lock = Library::lock(plan.index)?;
    let mut library = if Library::exists(plan.index) {
        Some(Library::open(plan.index)?)
    } else {
        None
    };
    let indexed = match library.as_ref() {
        Some(lib) => IndexedContracts::of(lib)?,
        None => IndexedContracts::default(),
    };
    let settings = match library.as_ref() {
        Some(lib) => lib.vectors_info().map(library_settings).transpose()?,
        None => new_vectors()?,
    };
    if library.is_some() && settings.is_some() != plan.wants_vectors {
        report.warn(&if plan.wants_vectors {
            format!(
                "note: {} was built without vectors (--no-vectors): the new contracts are indexed for BM25 only, as its clauses are; rebuild it to embed every clause",
                plan.index.display()
            )
        } else {
            format!(
                "note: {} embeds its clauses: the new contracts are embedded as they were, --no-vectors applies to new libraries only",
                plan.index.display()
            )
        });
    }

    let mut reports: Vec<FileReport> = Vec::new();
    // (file, contract id, whether it replaces a contract already in the library)
    let mut todo: Vec<(PathBuf, String, bool)> = Vec::new();
    let mut taken: HashSet<String> = indexed.by_id.keys().cloned().collect();
    for path in files {
        let shown = path.display().to_string();
        if Format::from_path(&path).is_none() {
            reports.push(FileReport {
                path: shown,
                contract: None,
                status: "skipped",
                clauses: 0,
                reason: Some("not a contract file type (.txt, .htm, .html, .pdf, .docx)".into()),
            });
            continue;
        }
        match indexed.find(&path) {
            Known::Same { id, fingerprint } => {
                if changed_since_indexed(&path, fingerprint.as_deref(), options.max_bytes) {
                    todo.push((path, id, true));
                } else {
                    reports.push(FileReport {
                        path: shown,
                        contract: Some(id),
                        status: "already-indexed",
                        clauses: 0,
                        reason: None,
                    });
                }
            }
            Known::Copy { id, source } => reports.push(FileReport {
                path: shown,
                contract: Some(id),
                status: "already-indexed",
                clauses: 0,
                reason: Some(format!(
                    "the same bytes as the contract ingested from {source}"
                )),
            }),
            Known::New => {
                let id = new_contract_id(&path, &mut taken);
                todo.push((path, id, false));
            }
        }
    }
    write_report(plan.report_to, &reports)?;
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
        if !docs.is_empty() {
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
                    let built = Library::build(
                        plan.index,
                        &docs,
                        &BuildOptions::default(),
                        vectors,
                        report,
                    )?;
                    library = Some(built);
                }
            }
        }
        write_report(plan.report_to, &reports)?;
    }
    let after = library.as_ref().map_or(0, Library::len);
    Ok(IngestOutcome {
        reports,
        before,
        after,
    })
}

/// What the library already holds of each contract: its fingerprint and the file it was read
/// from, as ingest recorded them.
#[derive(Default)]
struct IndexedContracts {
    /// Contract id → (fingerprint, source path); `None`s for libraries ingested before these
    /// were recorded.
    by_id: HashMap<String, (Option<String>, Option<String>)>,
    /// Resolved source path → contract id.
    by_source: HashMap<PathBuf, String>,
    /// Fingerprint → (contract id, source path as recorded).
    by_fingerprint: HashMap<String, (String, String)>,
}

/// Whether a file is a contract the library holds.
enum Known {
    /// The file a contract was ingested from (or, for a library that recorded no source paths,
    /// the contract of the same id).
    Same {
        id: String,
        fingerprint: Option<String>,
    },
    /// Another path to the very bytes of a contract already ingested (a moved or copied folder,
    /// or the library built from another working directory).
    Copy { id: String, source: String },
    /// A contract the library does not hold, even when another file of the same name is in it.
    New,
}

impl IndexedContracts {
    fn of(library: &Library) -> Result<Self> {
        let store = library.store();
        let mut out = IndexedContracts::default();
        for (row, id) in store.ids().iter().enumerate() {
            let contract = contract_of(id);
            if out.by_id.contains_key(contract) {
                continue;
            }
            let clause = store.clause(row as u32)?;
            let text = |key: &str| clause.metadata[key].as_str().map(str::to_owned);
            let (fingerprint, source) = (text("source_fingerprint"), text("source_path"));
            if let Some(source) = &source {
                out.by_source
                    .insert(source_path(Path::new(source)), contract.to_owned());
                if let Some(fingerprint) = &fingerprint {
                    out.by_fingerprint
                        .insert(fingerprint.clone(), (contract.to_owned(), source.clone()));
                }
            }
            out.by_id.insert(contract.to_owned(), (fingerprint, source));
        }
        Ok(out)
    }

    /// A contract is the file at its path: a file of the same name elsewhere is another
    /// contract (two deal folders that each hold `nda.pdf`), never a new version of this one.
    fn find(&self, path: &Path) -> Known {
        let same = |id: &String| Known::Same {
            id: id.clone(),
            fingerprint: self.by_id.get(id).and_then(|(f, _)| f.clone()),
        };
        if let Some(id) = self.by_source.get(&source_path(path)) {
            return same(id);
        }
        // Reading the file to fingerprint it is worth it only when there is a print to match
        // (not on a fresh library).
        if !self.by_fingerprint.is_empty() {
            if let Some((id, source)) = fingerprint_file(path)
                .ok()
                .and_then(|f| self.by_fingerprint.get(&f))
            {
                return Known::Copy {
                    id: id.clone(),
                    source: source.clone(),
                };
            }
        }
        // A library from before source paths were recorded knows its contracts by id only.
        let id = stem_id(path);
        match self.by_id.get(&id) {
            Some((_, None)) => same(&id),
            _ => Known::New,
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Silent;
    use precedent_library::Progress;

    /// Says nothing, and crashes when the second batch starts: an ingest killed midway.
    struct CrashOnSecondBatch;

    impl Progress for CrashOnSecondBatch {
        fn start(&self, stage: &str, _total: u64) {
            assert!(!stage.starts_with("reading contracts 2/"), "killed");
        }
    }

    impl Report for CrashOnSecondBatch {
        fn warn(&self, _message: &str) {}
        fn note(&self, _message: &str) {}
    }

    fn contract(name: &str) -> String {
        format!(
            "SUPPLY AGREEMENT\n\nThis Supply Agreement is made between {name} Inc. and Buyer LLC.\n\n\
             1. Term. This Agreement runs for two years from the Effective Date.\n\n\
             2. Termination. Either party may terminate this Agreement on thirty days' notice.\n\n\
             3. Governing Law. This Agreement is governed by the laws of Delaware.\n"
        )
    }

    #[test]
    fn a_crash_midway_leaves_the_report_of_what_was_committed() -> Result<()> {
        let dir = tempfile::tempdir()?;
        let folder = dir.path().join("contracts");
        std::fs::create_dir(&folder)?;
        std::fs::write(folder.join("a_supply.txt"), contract("Acme"))?;
        std::fs::write(folder.join("b_supply.txt"), contract("Bolt"))?;
        std::fs::write(folder.join("notes.csv"), "not,a,contract\n")?;
        let (index, report_path) = (dir.path().join("lib"), dir.path().join("report.jsonl"));
        let plan = IngestPlan {
            dir: &folder,
            index: &index,
            batch: 1,
            read: ReadOptions::default(),
            cache: &dir.path().join("cache"),
            wants_vectors: false,
            report_to: Some(&report_path),
        };
        let no_vectors = || Ok(None);
        let crashed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            ingest_folder(&plan, None, &no_vectors, &CrashOnSecondBatch)
        }));
        assert!(crashed.is_err(), "the second batch should have crashed");
        let lines: Vec<serde_json::Value> = std::fs::read_to_string(&report_path)?
            .lines()
            .map(serde_json::from_str)
            .collect::<serde_json::Result<_>>()?;
        let statuses: Vec<(&str, &str)> = lines
            .iter()
            .map(|l| {
                let path = l["path"].as_str().unwrap_or_default();
                let file = path.rsplit('/').next().unwrap_or_default();
                (file, l["status"].as_str().unwrap_or_default())
            })
            .collect();
        assert_eq!(
            statuses,
            [("notes.csv", "skipped"), ("a_supply.txt", "ingested")]
        );
        assert!(!Library::open(&index)?.is_empty());

        // The rerun resumes: the committed contract is already indexed, the other is ingested,
        // and the report now covers every file.
        ingest_folder(&plan, None, &no_vectors, &Silent)?;
        let report = std::fs::read_to_string(&report_path)?;
        assert_eq!(report.lines().count(), 3);
        assert!(report.contains("already-indexed") && report.contains("b_supply"));
        Ok(())
    }
}
