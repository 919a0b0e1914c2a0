//! `precedent map-qrels`: judgements on a clause corpus carried over to a library `ingest` cut
//! from the same contracts ([`precedent_eval::library_qrels`]).

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
    precedent_formats::write_qrels(&args.out, &mapped.transferred.qrels)?;
    if let Some(path) = &args.mapping_out {
        let json = mapped.mapping_json();
        std::fs::write(path, serde_json::to_string_pretty(&json)?)
            .with_context(|| format!("writing {}", path.display()))?;
    }
    print!("{}", mapped.summary(&args.out));
    Ok(())
}
