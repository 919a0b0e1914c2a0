//! `precedent map-qrels`: carries judgements made on a clause corpus (ACORD's hand-cut clauses)
//! over to a library `ingest` cut from the contracts those clauses came from, so that `eval`
//! can score retrieval from contracts with the experts' ratings (`precedent_eval::transfer`).

use std::collections::HashMap;
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::Args;
use precedent_eval::transfer::{transfer_judgements, SourceClause};
use precedent_library::Library;

#[derive(Args)]
pub struct MapQrelsArgs {
    /// The clause corpus the judgements are about (BEIR corpus.jsonl, e.g. ACORD's).
    #[arg(long)]
    pub corpus: PathBuf,
    /// Judgements over the corpus's clause ids (TSV `query-id corpus-id score`); repeat to merge
    /// several files, as `train --qrels` does (each query rated in one file only).
    #[arg(long, required = true)]
    pub qrels: Vec<PathBuf>,
    /// A library built by `precedent ingest` (its clauses know their contract file and span).
    #[arg(long)]
    pub index: PathBuf,
    /// Where to write the judgements over the library's clause ids.
    #[arg(long)]
    pub out: PathBuf,
    /// Also write which library clauses each corpus clause was carried to (JSON).
    #[arg(long)]
    pub mapping_out: Option<PathBuf>,
}

pub fn run(args: MapQrelsArgs) -> Result<()> {
    let corpus = precedent_formats::read_corpus(&args.corpus)?;
    let qrels = crate::train::read_all_qrels(&args.qrels)?;
    let library = Library::open(&args.index)?;
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
            args.index.display(),
            args.index.display()
        );
    }

    // Each contract's text as ingest read it (the spans are offsets into it).
    let mut texts: Vec<String> = Vec::with_capacity(files.len());
    let mut unreadable = 0usize;
    for (path, fingerprint) in &files {
        let text = (|| -> Result<String> {
            let bytes = std::fs::read(path).with_context(|| format!("reading {path}"))?;
            if let Some(expected) = fingerprint {
                if &crate::fingerprint_bytes(&bytes) != expected {
                    bail!("{path} changed since it was ingested; its spans no longer fit");
                }
            }
            let path = std::path::Path::new(path);
            let format = precedent_contracts::Format::from_path(path)
                .with_context(|| format!("{}: not a contract format", path.display()))?;
            Ok(precedent_contracts::read_bytes(path, format, &bytes)?.text)
        })();
        match text {
            Ok(text) => texts.push(text),
            Err(e) => {
                eprintln!("warning: {e:#}; its clauses get no judgements");
                unreadable += 1;
                texts.push(String::new());
            }
        }
    }
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let transferred = transfer_judgements(&corpus, &qrels, &refs, &clauses)
        .context("placing the corpus's clauses in the contracts")?;
    precedent_formats::write_qrels(&args.out, &transferred.qrels)?;
    if let Some(path) = &args.mapping_out {
        let mut mapping: Vec<(&String, &Vec<String>)> = transferred.mapping.iter().collect();
        mapping.sort();
        let json = serde_json::json!({
            "stats": transferred.stats,
            "mapping": mapping.into_iter().collect::<std::collections::BTreeMap<_, _>>(),
        });
        std::fs::write(path, serde_json::to_string_pretty(&json)?)
            .with_context(|| format!("writing {}", path.display()))?;
    }
    let s = &transferred.stats;
    let pct = |a: usize, b: usize| 100.0 * a as f64 / b.max(1) as f64;
    println!(
        "{} judged corpus clauses: {} placed in the {} contracts' text ({:.1}%), {} carried to library clauses ({:.1}%)",
        s.judged_clauses,
        s.placed_clauses,
        files.len() - unreadable,
        pct(s.placed_clauses, s.judged_clauses),
        s.mapped_clauses,
        pct(s.mapped_clauses, s.judged_clauses),
    );
    println!(
        "relevant judgements (3 stars and up) carried: {} of {} ({:.1}%); {} of {} queries keep a relevant clause",
        s.relevant_mapped,
        s.relevant_judged,
        pct(s.relevant_mapped, s.relevant_judged),
        s.queries_with_relevant,
        s.queries
    );
    println!(
        "{} library clauses judged, {} judgements written to {}",
        s.library_clauses_judged,
        transferred.qrels.num_judgements(),
        args.out.display()
    );
    Ok(())
}
