//! `precedent map-qrels`: carries judgements made on a clause corpus (ACORD's hand-cut clauses)
//! over to a library `ingest` cut from the contracts those clauses came from, so that `eval`
//! can score retrieval from contracts with the experts' ratings (`precedent_eval::library_qrels`).

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;
use precedent_eval::library_qrels::map_to_library;

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
    let mapped = map_to_library(&corpus, &qrels, &args.index, &|w| eprintln!("{w}"))?;
    let transferred = mapped.transferred;
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
        mapped.contracts - mapped.unreadable,
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
