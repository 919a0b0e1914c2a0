//! `precedent`: the command-line face of the engine. Thin by design: parsing, progress bars and
//! printing live here; everything else is in the library crates.

mod progress;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use clap::{Args, Parser, Subcommand};
use precedent_eval::{EvalOptions, Protocol};
use precedent_library::{BuildOptions, Library};
use precedent_rank::{build_pipeline, DEFAULT_PIPELINE, PIPELINES};

use crate::progress::Bars;

#[derive(Parser)]
#[command(
    name = "precedent",
    version,
    about = "Find the best precedent clauses for a contract; measure the engine on ACORD."
)]
struct Cli {
    /// Hide progress bars (they are hidden anyway when stderr is not a terminal).
    #[arg(long, global = true)]
    quiet: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Build a clause library (BM25 index + clause store) from a BEIR corpus.jsonl.
    Index(IndexArgs),
    /// Rank the clauses of a library for an attorney's query.
    Search(SearchArgs),
    /// Run a pipeline over a benchmark's queries and score it (ACORD protocol).
    Eval(EvalArgs),
    /// Measure query latency and throughput of a pipeline over a library.
    Bench(BenchArgs),
}

#[derive(Args)]
struct BenchArgs {
    /// Library directory built by `precedent index`.
    #[arg(long)]
    index: PathBuf,
    /// Queries to run (BEIR queries.jsonl); each is run `--repeat` times.
    #[arg(long)]
    queries: PathBuf,
    #[arg(long, default_value = DEFAULT_PIPELINE)]
    pipeline: String,
    /// Clauses retrieved per query.
    #[arg(short, default_value_t = 100)]
    k: usize,
    #[arg(long, default_value_t = 5)]
    repeat: usize,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
struct IndexArgs {
    /// Clause corpus (BEIR corpus.jsonl: `_id`, `text`, optional `title`, `metadata`).
    #[arg(long)]
    corpus: PathBuf,
    /// Library directory; an existing library there is replaced atomically.
    #[arg(long)]
    index: PathBuf,
    /// Add the corpus's clauses to the existing library instead of rebuilding it.
    #[arg(long)]
    add: bool,
}

#[derive(Args)]
struct SearchArgs {
    /// Library directory built by `precedent index`.
    #[arg(long)]
    index: PathBuf,
    /// The query, e.g. "cap on liability equals 12 months payment".
    query: String,
    /// Number of clauses to show.
    #[arg(short, default_value_t = 10)]
    k: usize,
    /// Retrieval pipeline.
    #[arg(long, default_value = DEFAULT_PIPELINE)]
    pipeline: String,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
    /// Show each clause's full text instead of the first lines.
    #[arg(long)]
    full: bool,
    /// Show which stage found each hit and the per-stage scores.
    #[arg(long)]
    explain: bool,
}

#[derive(Args)]
struct EvalArgs {
    #[arg(long)]
    corpus: PathBuf,
    #[arg(long)]
    queries: PathBuf,
    /// Judgements (TSV `query-id corpus-id score`, CSV quoting); only these queries are run.
    #[arg(long)]
    qrels: PathBuf,
    /// Pipeline to evaluate; defaults to the best offline pipeline.
    #[arg(long)]
    pipeline: Option<String>,
    /// condensed (ACORD: drop unjudged clauses) or full (unjudged = irrelevant).
    #[arg(long, default_value = "condensed")]
    protocol: Protocol,
    /// Library to use; by default one is built (or reused) under `.precedent/eval/`.
    #[arg(long)]
    index: Option<PathBuf>,
    /// Write the run (TSV `query-id corpus-id rank score`, full depth).
    #[arg(long)]
    run_out: Option<PathBuf>,
    /// Write the JSON summary (metrics as fractions 0..1).
    #[arg(long)]
    json_out: Option<PathBuf>,
    /// Also print one line per query.
    #[arg(long)]
    per_query: bool,
    /// Rank only the top N clauses per query (default: the whole library, as the protocol wants).
    #[arg(long)]
    depth: Option<usize>,
}

fn main() {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .with_target(false)
        .without_time()
        .init();
    let cli = Cli::parse();
    let bars = Bars::new(cli.quiet);
    let result = match cli.command {
        Command::Index(args) => index(args, &bars),
        Command::Search(args) => search(args),
        Command::Eval(args) => eval(args, &bars),
        Command::Bench(args) => bench(args),
    };
    if let Err(err) = result {
        eprintln!("error: {err:#}");
        std::process::exit(1);
    }
}

fn index(args: IndexArgs, bars: &Bars) -> Result<()> {
    let started = std::time::Instant::now();
    let docs = precedent_formats::read_corpus(&args.corpus)?;
    if args.add {
        let mut library = Library::open(&args.index)?;
        let before = library.len();
        library.add(&docs, bars)?;
        eprintln!(
            "added {} clauses to {} ({} → {}) in {:.1}s",
            docs.len(),
            args.index.display(),
            before,
            library.len(),
            started.elapsed().as_secs_f64()
        );
    } else {
        let options = BuildOptions {
            source_fingerprint: Some(fingerprint_file(&args.corpus)?),
            ..BuildOptions::default()
        };
        let library = Library::build(&args.index, &docs, &options, bars)?;
        eprintln!(
            "indexed {} clauses into {} in {:.1}s",
            library.len(),
            args.index.display(),
            started.elapsed().as_secs_f64()
        );
    }
    Ok(())
}

fn search(args: SearchArgs) -> Result<()> {
    if args.query.trim().is_empty() {
        bail!("the query is empty: say what clause you are looking for");
    }
    let library = Arc::new(Library::open(&args.index)?);
    let pipeline = build_pipeline(&args.pipeline, library.clone())?;
    let hits = pipeline.search(&args.query, args.k)?;
    let mut results = Vec::with_capacity(hits.len());
    for (i, hit) in hits.iter().enumerate() {
        let clause = library.store().clause(hit.row)?;
        results.push(serde_json::json!({
            "rank": i + 1,
            "id": clause.id,
            "score": hit.score,
            "title": clause.title,
            "text": clause.text,
            "metadata": clause.metadata,
            "stages": hit.stages,
        }));
    }
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "query": args.query,
                "pipeline": pipeline.name(),
                "hits": results,
            }))?
        );
        return Ok(());
    }
    if results.is_empty() {
        let terms = library.lexical().query_terms(&args.query);
        if terms.is_empty() {
            println!("No clause matches: every word of the query is a stop word.");
        } else {
            println!("No clause matches the terms {terms:?}.");
        }
        return Ok(());
    }
    for (result, hit) in results.iter().zip(&hits) {
        let text = result["text"].as_str().unwrap_or_default();
        let shown = if args.full {
            text.to_owned()
        } else {
            preview(text, 400)
        };
        println!(
            "{:>3}. {}  score {:.4}",
            result["rank"],
            result["id"].as_str().unwrap_or_default(),
            hit.score
        );
        if args.explain {
            let found_by: Vec<String> = hit
                .stages
                .iter()
                .map(|s| format!("{} #{} ({:.4})", s.stage, s.rank, s.score))
                .collect();
            println!("     found by: {}", found_by.join(", "));
        }
        for line in wrap(&shown, 96) {
            println!("     {line}");
        }
        println!();
    }
    Ok(())
}

fn eval(args: EvalArgs, bars: &Bars) -> Result<()> {
    let pipeline_name = args.pipeline.as_deref().unwrap_or(DEFAULT_PIPELINE);
    if !PIPELINES.contains(&pipeline_name) {
        bail!(
            "unknown pipeline {pipeline_name:?}; known pipelines: {}",
            PIPELINES.join(", ")
        );
    }
    let queries = precedent_formats::read_queries(&args.queries)?;
    let qrels = precedent_formats::read_qrels(&args.qrels)?;
    let fingerprint = fingerprint_file(&args.corpus)?;
    let index_dir = match &args.index {
        Some(dir) => dir.clone(),
        None => PathBuf::from(".precedent/eval").join(&fingerprint),
    };
    let library = open_or_build(&index_dir, &args.corpus, &fingerprint, bars)?;
    let library = Arc::new(library);
    let pipeline = build_pipeline(pipeline_name, library.clone())?;
    let options = EvalOptions {
        protocol: args.protocol,
        depth: args.depth,
    };
    let evaluation =
        precedent_eval::evaluate(&pipeline, &library, &queries, &qrels, &options, bars)?;
    for warning in &evaluation.warnings {
        eprintln!("warning: {warning}");
    }
    print!("{}", evaluation.table(args.per_query));
    if let Some(path) = &args.run_out {
        precedent_formats::write_run(path, &evaluation.run)?;
        eprintln!("run written to {}", path.display());
    }
    if let Some(path) = &args.json_out {
        let json = serde_json::to_string_pretty(&evaluation.summary_json())?;
        std::fs::write(path, json).with_context(|| format!("writing {}", path.display()))?;
        eprintln!("summary written to {}", path.display());
    }
    Ok(())
}

fn bench(args: BenchArgs) -> Result<()> {
    let queries = precedent_formats::read_queries(&args.queries)?;
    if queries.is_empty() {
        bail!("{}: no queries", args.queries.display());
    }
    let open_started = std::time::Instant::now();
    let library = Arc::new(Library::open(&args.index)?);
    let open_ms = open_started.elapsed().as_secs_f64() * 1e3;
    let pipeline = build_pipeline(&args.pipeline, library.clone())?;
    // One warm-up pass so page cache and lazy loads do not count.
    for q in &queries {
        pipeline.search(&q.text, args.k)?;
    }
    let mut latencies = Vec::with_capacity(queries.len() * args.repeat);
    let started = std::time::Instant::now();
    for _ in 0..args.repeat.max(1) {
        for q in &queries {
            let t = std::time::Instant::now();
            pipeline.search(&q.text, args.k)?;
            latencies.push(t.elapsed().as_secs_f64() * 1e3);
        }
    }
    let total = started.elapsed().as_secs_f64();
    latencies.sort_by(|a, b| a.total_cmp(b));
    let pct = |p: f64| latencies[((latencies.len() - 1) as f64 * p).round() as usize];
    let report = serde_json::json!({
        "pipeline": pipeline.name(),
        "clauses": library.len(),
        "queries": latencies.len(),
        "k": args.k,
        "open_ms": open_ms,
        "qps": latencies.len() as f64 / total,
        "p50_ms": pct(0.50),
        "p99_ms": pct(0.99),
        "max_ms": pct(1.0),
    });
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!(
            "{} over {} clauses, top {}: {} queries, {:.1} q/s (1 thread), p50 {:.3} ms, p99 {:.3} ms, open {:.0} ms",
            pipeline.name(),
            library.len(),
            args.k,
            latencies.len(),
            latencies.len() as f64 / total,
            pct(0.50),
            pct(0.99),
            open_ms
        );
    }
    Ok(())
}

/// Reuses the library at `dir` if it was built from the same corpus content; rebuilds otherwise.
fn open_or_build(dir: &Path, corpus: &Path, fingerprint: &str, bars: &Bars) -> Result<Library> {
    if Library::exists(dir) {
        match Library::open(dir) {
            Ok(library)
                if library.manifest().source_fingerprint.as_deref() == Some(fingerprint) =>
            {
                return Ok(library)
            }
            Ok(_) => eprintln!(
                "library {} was built from another corpus; rebuilding",
                dir.display()
            ),
            Err(e) => eprintln!("library {} unusable ({e}); rebuilding", dir.display()),
        }
    }
    let docs = precedent_formats::read_corpus(corpus)?;
    let options = BuildOptions {
        source_fingerprint: Some(fingerprint.to_owned()),
        ..BuildOptions::default()
    };
    Ok(Library::build(dir, &docs, &options, bars)?)
}

/// FNV-1a of the file's bytes: a stable, dependency-free content fingerprint for cache keys.
fn fingerprint_file(path: &Path) -> Result<String> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in &bytes {
        hash ^= u64::from(*b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    Ok(format!("{hash:016x}-{}", bytes.len()))
}

fn preview(text: &str, max_chars: usize) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max_chars {
        flat
    } else {
        let cut: String = flat.chars().take(max_chars).collect();
        format!("{cut}…")
    }
}

fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    for paragraph in text.split('\n') {
        let mut line = String::new();
        for word in paragraph.split_whitespace() {
            if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
                lines.push(std::mem::take(&mut line));
            }
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
        }
        lines.push(line);
    }
    lines
}
