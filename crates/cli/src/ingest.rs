//! `precedent ingest DIR --index LIB`: a folder of contracts becomes a clause library, in
//! batches, resumably ([`precedent_engine::ingest_run`]).

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Result};
use clap::Args;
use precedent_clause_types::ClauseTyper;
use precedent_contracts::ReadOptions;
use precedent_engine::ingest_run::{ingest_folder, IngestPlan};

use crate::progress::Bars;
use crate::review::TyperArgs;
use crate::VectorArgs;

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
    /// `reason`), rewritten after every committed batch.
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

pub fn run(args: IngestArgs, bars: &Bars) -> Result<()> {
    let started = Instant::now();
    let plan = IngestPlan {
        dir: &args.dir,
        index: &args.index,
        batch: args.batch,
        read: ReadOptions {
            max_bytes: args.max_file_mb.saturating_mul(1024 * 1024),
        },
        cache: &args.vectors.cache,
        wants_vectors: !args.vectors.no_vectors,
        report_to: args.report.as_deref(),
    };
    let load_typer = || args.typer.models().load();
    let new_vectors = || args.vectors.new_vectors();
    let typer: Option<&dyn Fn() -> Result<ClauseTyper>> =
        (!args.no_types).then_some(&load_typer as &dyn Fn() -> Result<ClauseTyper>);
    let outcome = ingest_folder(&plan, typer, &new_vectors, bars)?;
    let seconds = started.elapsed().as_secs_f64();
    eprintln!("{}", outcome.summary(&args.index, seconds));
    let failed = outcome.count("failed");
    if failed > 0 {
        bail!(
            "{failed} file(s) could not be ingested (reasons above); everything else was committed"
        );
    }
    Ok(())
}
