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
use precedent_contracts::library_docs::{
    clause_docs, contract_of, set_clause_types, IngestedContract,
};
use precedent_contracts::{meta, read_bytes, read_file, segment, Format, ReadOptions};
use precedent_cuad::type_thresholds::STORED_TYPE_THRESHOLD;
use precedent_cuad::{ClauseTyper, CATEGORIES, N_CATEGORIES};
use precedent_formats::CorpusDoc;
use precedent_library::{BuildOptions, Library, Progress};
use precedent_rank::EmbedSettings;
use rayon::prelude::*;

use crate::progress::Bars;
use crate::review::TyperArgs;
use crate::{embed_docs, policy_from_tag, VectorArgs};
use precedent_text::char_offsets;

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

/// Every file under `dir`, sorted, hidden entries skipped; symlinked directories are not
/// followed (no cycles).
pub(crate) fn walk(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(d) = pending.pop() {
        let entries =
            std::fs::read_dir(&d).with_context(|| format!("reading folder {}", d.display()))?;
        for entry in entries {
            let entry = entry.with_context(|| format!("reading folder {}", d.display()))?;
            if entry.file_name().to_string_lossy().starts_with('.') {
                continue;
            }
            let file_type = entry
                .file_type()
                .with_context(|| format!("inspecting {}", entry.path().display()))?;
            if file_type.is_dir() {
                pending.push(entry.path());
            } else {
                out.push(entry.path());
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Contract ids: the file stem, with `~2`, `~3`… for later files with the same stem (the
/// order is the sorted path order, so a resumed run assigns the same ids).
fn contract_ids(files: &[PathBuf]) -> Vec<String> {
    let mut used: HashMap<String, usize> = HashMap::new();
    files
        .iter()
        .map(|p| {
            let stem = p
                .file_stem()
                .map(|s| s.to_string_lossy().trim().replace('#', "_"))
                .unwrap_or_default();
            let n = used.entry(stem.clone()).or_default();
            *n += 1;
            if *n == 1 {
                stem
            } else {
                format!("{stem}~{n}")
            }
        })
        .collect()
}

struct Prepared {
    docs: Vec<CorpusDoc>,
}

/// Reads, segments, describes and (with a typer) types one contract; any failure is a
/// per-file reason.
fn prepare(
    path: &Path,
    contract: &str,
    options: &ReadOptions,
    typer: Option<&ClauseTyper>,
) -> Result<Prepared, String> {
    let (format, bytes) = read_file(path, options).map_err(|e| e.to_string())?;
    let fingerprint = crate::fingerprint_bytes(&bytes);
    let document = read_bytes(path, format, &bytes).map_err(|e| e.to_string())?;
    let clauses = segment(&document);
    if clauses.is_empty() {
        return Err(format!("{}: no clauses found", path.display()));
    }
    let meta = meta::extract(&document.text);
    let source_path = path.display().to_string();
    let contract = IngestedContract {
        contract,
        source_path: &source_path,
        source_fingerprint: Some(&fingerprint),
        ocr: document.ocr,
        meta: &meta,
        clauses: &clauses,
    };
    let mut docs = clause_docs(&contract);
    if let Some(typer) = typer {
        for (doc, types) in docs
            .iter_mut()
            .zip(clause_types(typer, &document.text, &clauses))
        {
            set_clause_types(doc, &types);
        }
    }
    Ok(Prepared { docs })
}

/// The CUAD categories of each clause, most confident first, named as in
/// `master_clauses.csv`: those whose confidence reaches [`STORED_TYPE_THRESHOLD`] (chosen by
/// F1 on cross-validated clause scores, `eval-cuad --clause-types`).
fn clause_types(
    typer: &ClauseTyper,
    text: &str,
    clauses: &[precedent_contracts::Clause],
) -> Vec<Vec<(&'static str, f32)>> {
    clause_scores(typer, text, clauses)
        .into_iter()
        .map(|scores| {
            let mut types: Vec<(&'static str, f32)> = CATEGORIES
                .iter()
                .copied()
                .zip(scores)
                .filter(|&(category, confidence)| {
                    precedent_cuad::is_clause_type(category) && confidence >= STORED_TYPE_THRESHOLD
                })
                .collect();
            types.sort_by(|a, b| b.1.total_cmp(&a.1));
            types
        })
        .collect()
}

/// Each clause's confidence per CUAD category (in [`CATEGORIES`] order).
///
/// The typer scores candidate spans of the whole contract (sentences, pieces, windows,
/// paragraphs, as `precedent review` does, with their place in the contract as features); a
/// clause gets, per category, the best score of the candidates inside it. Typing each clause's
/// text on its own misses provisions inside long clauses: a "10. Miscellaneous" paragraph whose
/// first sentence is the governing-law provision scores under 0.5 as a whole.
pub fn clause_scores(
    typer: &ClauseTyper,
    text: &str,
    clauses: &[precedent_contracts::Clause],
) -> Vec<[f32; N_CATEGORIES]> {
    let scored = typer.review(text);
    clause_scores_of(
        text,
        clauses,
        scored.iter().map(|s| (&s.candidate, &s.scores)),
        |clause| typer.classify_scores(&clauses[clause].text),
    )
}

/// [`clause_scores`] from already scored candidates; `uncovered(i)` types clause `i` when no
/// candidate lies inside it (shared with the cross-validation of stored clause types, which
/// scores candidates without a `ClauseTyper::review`).
pub fn clause_scores_of<'a>(
    text: &str,
    clauses: &[precedent_contracts::Clause],
    scored: impl IntoIterator<
        Item = (
            &'a precedent_cuad::candidates::Candidate,
            &'a [f32; N_CATEGORIES],
        ),
    >,
    uncovered: impl Fn(usize) -> [f32; N_CATEGORIES],
) -> Vec<[f32; N_CATEGORIES]> {
    let chars = char_offsets(text);
    let mut best = vec![[0f32; N_CATEGORIES]; clauses.len()];
    let mut covered = vec![false; clauses.len()];
    for (candidate, scores) in scored {
        let (start, end) = (chars[candidate.span.start], chars[candidate.span.end]);
        for (i, clause) in clauses.iter().enumerate() {
            if clause.start <= start && end <= clause.end {
                covered[i] = true;
                for (b, s) in best[i].iter_mut().zip(scores) {
                    *b = b.max(*s);
                }
            }
        }
    }
    for (i, (scores, covered)) in best.iter_mut().zip(covered).enumerate() {
        if !covered {
            // Too short to hold a candidate (a heading-only clause): type its text.
            *scores = uncovered(i);
        }
    }
    best
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
