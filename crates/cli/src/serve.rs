//! `precedent serve`: the HTTP API and web page over one or more libraries.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;
use precedent_engine::lazy::{classify_loader, review_loader, tos_loader};
use precedent_server::{LibrarySpec, ModelOptions, OnDemandModels, ServedModelOptions};

use crate::eval_unfair_tos::UnfairArgs;
use crate::review::TyperArgs;

#[derive(Args)]
pub struct ServeArgs {
    /// Library to serve, as DIR or NAME=DIR; repeat to serve several (each has its own keys).
    #[arg(long, required = true)]
    index: Vec<String>,
    /// Address to listen on; port 0 picks a free port. Keep it on loopback unless a TLS proxy
    /// fronts the server: keys travel in clear over plain HTTP.
    #[arg(long, default_value = "127.0.0.1:8080")]
    addr: String,
    /// Query bi-encoder; by default each library's own model.
    #[arg(long)]
    model: Option<String>,
    /// Cross-encoder directory; lets search requests ask for `rerank: true`.
    #[arg(long)]
    rerank_model: Option<PathBuf>,
    /// Candidates the cross-encoder rescores.
    #[arg(long, default_value_t = 50)]
    rerank_top: usize,
    /// Learned ranker directory (`precedent train --out`) for the `learned` pipeline of every
    /// library; by default each library gets the shipped ranker that fits it (docs/cli.md).
    #[arg(long = "model-dir")]
    ranker_dir: Option<PathBuf>,
    /// How many hybrid candidates the learned ranker reorders.
    #[arg(long, default_value_t = precedent_learn::LEARNED_TOP)]
    learned_top: usize,
    /// Seconds between checks for a new generation of the served libraries (what `ingest` or
    /// `index --add` commits is served without a restart); 0: never check.
    #[arg(long, default_value_t = 2.0)]
    watch_secs: f64,
    /// The clause typer behind `POST /v1/review`, loaded on the first review (trained from the
    /// CUAD data and cached if needed, about 90 s once).
    #[command(flatten)]
    typer: TyperArgs,
    #[command(flatten)]
    unfair: UnfairArgs,
    /// `POST /v1/review` with word features only, as `review --fast` (no MiniLM pass over the
    /// contract's sentences), and `POST /v1/classify` as `classify --words-only`.
    #[arg(long)]
    fast_review: bool,
    /// The single-clause classifier behind `POST /v1/classify` (a model file, as `classify
    /// --classifier` takes); by default `classify`'s cached one, trained on first use if missing.
    #[arg(long)]
    clause_classifier: Option<PathBuf>,
    /// Load (or train) the review, classify and query clause-type models at start, in the
    /// background, while searches are served; `/healthz` reports their state.
    #[arg(long)]
    preload: bool,
    /// Serve the detailed `/healthz` and `/metrics` without a key, for a monitor on a private
    /// network; by default they need an admin key.
    #[arg(long)]
    public_status: bool,
    /// How many `/v1/compare` diffs run at once, more refused with 503 (default: one fewer than
    /// the cores, at least 1).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    compare_limit: Option<u64>,
}

pub fn run(args: ServeArgs) -> Result<()> {
    let specs = args
        .index
        .iter()
        .map(|s| LibrarySpec::parse(s).map_err(anyhow::Error::msg))
        .collect::<Result<Vec<_>>>()?;
    // The reader `search` uses (ACORD's classifier, which the shipped ranker was trained with),
    // not the review typer's second-stage classifier: a query ranks as from the command line.
    let clause_types = precedent_engine::lazy_clause_type_reader(
        args.typer.cuad.clone(),
        args.typer.classifier_cache(),
    );
    if args.preload {
        let lazy = clause_types.clone();
        std::thread::spawn(move || lazy.load());
    }
    let models = ModelOptions {
        models: ServedModelOptions {
            model: args.model,
            rerank_model: args.rerank_model,
            rerank_top: args.rerank_top,
            ranker_dir: args.ranker_dir,
            learned_top: args.learned_top,
            clause_types: Some(clause_types),
        },
        watch_every: (args.watch_secs > 0.0)
            .then(|| std::time::Duration::from_secs_f64(args.watch_secs)),
        public_status: args.public_status,
        compare_limit: args.compare_limit.map(|n| n as usize),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    // One set of clause models: review's typer and classify's type gate share the second
    // stage's classifier, loaded once.
    let clause_models = args.typer.models();
    runtime.block_on(precedent_server::serve(
        &specs,
        &models,
        &args.addr,
        OnDemandModels {
            reviewer: Some(review_loader(clause_models.clone(), args.fast_review)),
            tos: Some(tos_loader(args.unfair.source())),
            classifier: Some(classify_loader(
                clause_models,
                args.clause_classifier,
                args.fast_review,
            )),
            preload: args.preload,
        },
        |addr, libraries| {
            for lib in libraries {
                eprintln!(
                    "serving library {:?} ({} clauses, default pipeline {})",
                    lib.name,
                    lib.library.len(),
                    lib.default_pipeline
                );
            }
            // The one line on stdout: scripts and tests read the address from it.
            println!("listening on http://{addr}");
        },
    ))?;
    Ok(())
}
