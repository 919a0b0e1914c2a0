//! `precedent remove --index LIB CONTRACT...`: takes contracts (or single clauses) out of a
//! library ([`precedent_engine::ingest_run::remove_ids`]).

use std::path::PathBuf;
use std::time::Instant;

use anyhow::Result;
use clap::Args;
use precedent_engine::ingest_run::remove_ids;

use crate::progress::Bars;

#[derive(Args)]
pub struct RemoveArgs {
    /// Library directory.
    #[arg(long)]
    index: PathBuf,
    /// Contract ids (the file stem `ingest` used, as in search results' `contract`) or clause
    /// ids (`CONTRACT#N`, or any id of a library built by `index`) to remove.
    #[arg(required = true)]
    ids: Vec<String>,
}

pub fn run(args: RemoveArgs, bars: &Bars) -> Result<()> {
    let started = Instant::now();
    let removal = remove_ids(&args.index, &args.ids, bars)?;
    eprintln!(
        "removed {} clauses from {} ({} → {}) in {:.1}s",
        removal.removed,
        args.index.display(),
        removal.before,
        removal.after,
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
