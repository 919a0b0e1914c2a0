//! Ingest: contract files become library documents, one per clause, with the contract's
//! metadata and each clause's CUAD types. `precedent ingest` drives it in batches (each batch
//! one library generation) and reports per file; the pieces that decide what a contract becomes
//! are here.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use precedent_clause_types::type_thresholds::STORED_TYPE_THRESHOLD;
use precedent_clause_types::{ClauseTyper, N_CATEGORIES};
use precedent_contracts::library_docs::{clause_docs, set_clause_types, IngestedContract};
use precedent_contracts::{meta, read_bytes, read_file, segment, ReadOptions};
use precedent_cuad::CATEGORIES;
use precedent_formats::CorpusDoc;
use precedent_text::char_offsets;

/// A fingerprint of a file's bytes (FNV-1a and the length): what tells ingest that a contract
/// changed since it was indexed.
pub fn fingerprint(bytes: &[u8]) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        hash ^= u64::from(*b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{hash:016x}-{}", bytes.len())
}

/// Every file under a folder ([`precedent_review::review_table::walk`]).
pub use precedent_review::review_table::walk;

/// The id a new contract file takes: its file stem, or with `~2`, `~3`… when a contract
/// already in the library, or another file of this run, has that id (`taken`, which the id
/// joins). Files are visited in sorted path order, so a run over a fresh library names them
/// alike every time; a contract already indexed keeps the id it was given.
pub fn new_contract_id(path: &Path, taken: &mut HashSet<String>) -> String {
    let stem = stem_id(path);
    let id = if taken.contains(&stem) {
        (2..)
            .map(|n| format!("{stem}~{n}"))
            .find(|candidate| !taken.contains(candidate))
            .unwrap_or_default()
    } else {
        stem
    };
    taken.insert(id.clone());
    id
}

/// A contract file's id before any clash is settled: its file stem, trimmed, without `#` (which
/// separates a clause's number in its id).
pub fn stem_id(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().trim().replace('#', "_"))
        .unwrap_or_default()
}

/// The path a contract is known by: the file's canonical absolute path, so that the same file
/// reached from another working directory, or through a link, is the same contract, and the
/// context view can reopen it from anywhere. The path as given when it cannot be resolved.
pub fn source_path(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned())
}

/// The text of an ingested contract as ingest read it (clause spans are char offsets into it),
/// or an error when the file cannot be read or, given the fingerprint ingest recorded, its bytes
/// changed since: the spans would then point at other words.
pub fn ingested_text(path: &Path, fingerprint: Option<&str>) -> Result<String> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    if let Some(expected) = fingerprint {
        if self::fingerprint(&bytes) != expected {
            bail!(
                "{} changed since it was ingested; its spans no longer fit",
                path.display()
            );
        }
    }
    let format = precedent_contracts::Format::from_path(path)
        .with_context(|| format!("{}: not a contract format", path.display()))?;
    Ok(read_bytes(path, format, &bytes)?.text)
}

/// A contract ready to commit: one library document per clause.
pub struct Prepared {
    pub docs: Vec<CorpusDoc>,
}

/// Reads, segments, describes and (with a typer) types one contract; any failure is a
/// per-file reason.
pub fn prepare(
    path: &Path,
    contract: &str,
    options: &ReadOptions,
    typer: Option<&ClauseTyper>,
) -> Result<Prepared, String> {
    let (format, bytes) = read_file(path, options).map_err(|e| e.to_string())?;
    let fingerprint = fingerprint(&bytes);
    let document = read_bytes(path, format, &bytes).map_err(|e| e.to_string())?;
    let clauses = segment(&document);
    if clauses.is_empty() {
        return Err(format!("{}: no clauses found", path.display()));
    }
    let meta = meta::extract(&document.text);
    let source_path = source_path(path).display().to_string();
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
pub fn clause_types(
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
            &'a precedent_clause_types::candidates::Candidate,
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
