//! `precedent serve`: the HTTP API and web page over one or more libraries.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;
use precedent_server::{LibrarySpec, ModelOptions};

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
}

pub fn run(args: ServeArgs) -> Result<()> {
    let specs = args
        .index
        .iter()
        .map(|s| LibrarySpec::parse(s).map_err(anyhow::Error::msg))
        .collect::<Result<Vec<_>>>()?;
    let models = ModelOptions {
        model: args.model,
        rerank_model: args.rerank_model,
        rerank_top: args.rerank_top,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(precedent_server::serve(
        &specs,
        &models,
        &args.addr,
        None,
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
