//! `precedent market`: a clause type's common formulations in a library, and where a draft
//! stands among them ([`precedent_engine::market`]).

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use precedent_engine::market::{market, MarketOptions};
use precedent_engine::market_view::market_text;
use precedent_library::Library;

#[derive(Args)]
pub struct MarketArgs {
    /// Library directory (of ingested contracts, whose clauses carry CUAD types).
    #[arg(long)]
    index: PathBuf,
    /// CUAD clause type, e.g. "Cap on Liability" (common aliases are suggested).
    #[arg(long = "type")]
    clause_type: String,
    /// Your draft of the clause (a text file): which formulation it is closest to, how common
    /// that one is, and what it has that the draft lacks.
    #[arg(long)]
    draft: Option<PathBuf>,
    /// Formulations at most.
    #[arg(long, default_value_t = 5)]
    formulations: usize,
    #[arg(long)]
    json: bool,
}

pub fn run(args: MarketArgs) -> Result<()> {
    let clause_type = crate::filters::checked_clause_type(&args.clause_type)?;
    let options = MarketOptions::asking(args.formulations).map_err(anyhow::Error::msg)?;
    let library = Library::open(&args.index)?;
    let draft = args
        .draft
        .as_ref()
        .map(|p| precedent_contracts::read_draft(p).map(|draft| draft.text))
        .transpose()?;
    let market = market(&library, clause_type, draft.as_deref(), &options)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&market)?);
        return Ok(());
    }
    print!(
        "{}",
        market_text(&market, &args.index.display().to_string())
    );
    Ok(())
}
