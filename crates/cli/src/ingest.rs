//! `precedent ingest DIR --index LIB`: a folder of contracts becomes a clause library.
//!
//! Files are read, segmented and described (metadata) in parallel, then committed to the
//! library in batches, each batch one new library generation. That makes ingest resumable: a
//! second run skips the contracts already in the library (by contract id) and continues, and an
//! interrupted run loses at most the batch in flight, never what was committed before. A
//! contract whose file changed since it was indexed (its bytes' fingerprint differs) is read
//! again and its clauses replaced in the same commit. A file that cannot be read is reported
//! with its reason and the rest of the folder goes on (a changed contract that no longer reads
//! keeps its old clauses).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::Args;
use precedent_contracts::library_docs::contract_of;
use precedent_contracts::{Format, ReadOptions};
use precedent_engine::ingest::{contract_ids, prepare, walk, Prepared};
use precedent_formats::CorpusDoc;
use precedent_library::{BuildOptions, Library, Progress};
use precedent_rank::EmbedSettings;
use rayon::prelude::*;

use crate::progress::Bars;
use crate::review::TyperArgs;
use crate::{embed_docs, policy_from_tag, VectorArgs};

#[derive(Args)]
pub struct IngestArgs {
    /// Folder of contracts, searched recursively: .txt, .htm/.html, .pdf (text layer), .docx.
    dir: PathBuf,
    /// Library directory: created if missing, otherwise the new contracts are added to it.
    #[arg(long)]
    index: PathBuf,
    /// Contracts committed per library generation (an interruption loses at most one batch).
    #[arg(long, default_value_t = 100)]
    batch: usize,
    /// Files larger than this many MiB are skipped with a reason.
    #[arg(long, default_value_t = 32)]
    max_file_mb: u64,
    /// Also write the per-file report as JSON lines (`path`, `contract`, `status`, `clauses`,
    /// `reason`).
    #[arg(long)]
    report: Option<PathBuf>,
    /// Do not run the CUAD clause typer: clauses get no `clause_types`, so `--type` filters
    /// match none of them.
    #[arg(long)]
    no_types: bool,
    #[command(flatten)]
    typer: TyperArgs,
    #[command(flatten)]
    vectors: VectorArgs,
}

/// What happened to one file.
#[derive(serde::Serialize)]
struct FileReport {
    path: String,
    contract: Option<String>,
    /// `ingested`, `re-ingested` (changed since it was indexed: its clauses were replaced),
    /// `already-indexed`, `failed` or `skipped` (not a contract file type).
    status: &'static str,
    clauses: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
}

pub fn run(args: IngestArgs, bars: &Bars) -> Result<()> {
    let started = Instant::now();
    if !args.dir.is_dir() {
        bail!("{} is not a folder of contracts", args.dir.display());
    }
    if args.batch == 0 {
        bail!("--batch must be at least 1");
    }
    let options = ReadOptions {
        max_bytes: args.max_file_mb.saturating_mul(1024 * 1024),
    };
    let files = walk(&args.dir)?;
    let ids = contract_ids(&files);
    // One writer per library for the whole run: a second ingest (or index) into the same
    // library is refused at once, and the contracts this run finds already indexed stay so.
    let _lock = Library::lock(&args.index)?;
    let mut library = if Library::exists(&args.index) {
        Some(Library::open(&args.index)?)
    } else {
        None
    };
    let indexed = match library.as_ref() {
        Some(lib) => indexed_fingerprints(lib)?,
        None => HashMap::new(),
    };
    let settings = vector_settings(library.as_ref(), &args.vectors)?;

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
    let typer = if args.no_types || todo.is_empty() {
        None
    } else {
        Some(args.typer.models().load().context(
            "the clause typer writes CUAD clause types into the library (pass --no-types to ingest without them)",
        )?)
    };
    let batches = todo.len().div_ceil(args.batch);
    for (b, batch) in todo.chunks(args.batch).enumerate() {
        bars.start(
            &format!("reading contracts {}/{batches}", b + 1),
            batch.len() as u64,
        );
        let prepared: Vec<Result<Prepared, String>> = batch
            .par_iter()
            .map(|(path, id, _)| {
                let result = prepare(path, id, &options, typer.as_ref());
                bars.advance(1);
                result
            })
            .collect();
        bars.finish();
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
                    eprintln!("skipped {reason}");
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
            Some(s) => Some(embed_docs(&docs, s, &args.vectors.cache, bars)?),
            None => None,
        };
        match library.as_mut() {
            Some(lib) if !replaced.is_empty() => lib.replace(
                &|clause| replaced.contains(contract_of(clause)),
                &docs,
                vectors,
                bars,
            )?,
            Some(lib) => lib.add(&docs, vectors, bars)?,
            None => {
                let built =
                    Library::build(&args.index, &docs, &BuildOptions::default(), vectors, bars)?;
                library = Some(built);
            }
        }
    }
    if let Some(path) = &args.report {
        let mut out = String::new();
        for r in &reports {
            out.push_str(&serde_json::to_string(r)?);
            out.push('\n');
        }
        std::fs::write(path, out).with_context(|| format!("writing {}", path.display()))?;
    }
    let count = |status: &str| reports.iter().filter(|r| r.status == status).count();
    let (ingested, failed) = (count("ingested"), count("failed"));
    let reingested = count("re-ingested");
    let clauses: usize = reports.iter().map(|r| r.clauses).sum();
    let after = library.as_ref().map_or(0, Library::len);
    eprintln!(
        "ingested {ingested} new and {reingested} changed contracts ({clauses} clauses) into {} in {:.1}s; library {before} → {after} clauses; {} already indexed, {failed} failed, {} skipped (not contracts)",
        args.index.display(),
        started.elapsed().as_secs_f64(),
        count("already-indexed"),
        count("skipped"),
    );
    if failed > 0 {
        bail!(
            "{failed} file(s) could not be ingested (reasons above); everything else was committed"
        );
    }
    Ok(())
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
        Ok(m) if m.len() <= max_bytes => {
            crate::fingerprint_file(path).map_or(true, |now| now != indexed)
        }
        _ => true,
    }
}

/// New clauses are embedded as the library's existing clauses were; a new library follows the
/// command's vector options.
fn vector_settings(library: Option<&Library>, args: &VectorArgs) -> Result<Option<EmbedSettings>> {
    match library {
        Some(lib) => match lib.vectors_info() {
            Some(info) => Ok(Some(EmbedSettings {
                policy: policy_from_tag(&info.long_text)?,
                kind: info.kind,
                model_source: info.model_source.clone(),
            })),
            None => Ok(None),
        },
        None if args.no_vectors => Ok(None),
        None => Ok(Some(args.settings()?)),
    }
}
