//! `precedent remove --index LIB CONTRACT...`: takes contracts (or single clauses) out of a
//! library, as one new generation, under the library's write lock.

use std::collections::HashSet;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Result};
use clap::Args;
use precedent_contracts::library_docs::contract_of;
use precedent_library::Library;

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
    let mut library = Library::open(&args.index)?;
    let _lock = Library::lock(&args.index)?;
    let wanted: HashSet<&str> = args.ids.iter().map(String::as_str).collect();
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
    let missing: Vec<&str> = args
        .ids
        .iter()
        .map(String::as_str)
        .filter(|id| !found.contains(id))
        .collect();
    if !missing.is_empty() {
        bail!(
            "{}: no contract or clause with id {} (nothing removed)",
            args.index.display(),
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
            args.index.display()
        );
    }
    library.replace(&|id: &str| selected(id), &[], None, bars)?;
    eprintln!(
        "removed {removed} clauses from {} ({before} → {}) in {:.1}s",
        args.index.display(),
        library.len(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
