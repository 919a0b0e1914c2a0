//! `precedent market`: what the market says about a clause type in a library (its common
//! formulations, each with a representative clause and how many contracts use it), and where a
//! draft stands among them ([`precedent_engine::market`]).

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;
use precedent_engine::market::{market, MarketOptions};
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
    let library = Library::open(&args.index)?;
    let draft = args
        .draft
        .as_ref()
        .map(|p| std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display())))
        .transpose()?;
    let options = MarketOptions {
        formulations: args.formulations.max(1),
        ..MarketOptions::default()
    };
    let market = market(&library, clause_type, draft.as_deref(), &options)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&market)?);
        return Ok(());
    }
    if market.clauses == 0 {
        println!(
            "No clause of {library_name} is typed {clause_type} (clause types are stored at ingest).",
            library_name = args.index.display()
        );
        return Ok(());
    }
    println!(
        "{clause_type}: {} clauses in {} contracts, {} formulations",
        market.clauses,
        market.contracts,
        market.formulations.len()
    );
    for (i, f) in market.formulations.iter().enumerate() {
        let forms: Vec<String> = f
            .forms
            .iter()
            .map(|s| format!("{} {:.0}%", s.form, s.share * 100.0))
            .collect();
        println!(
            "\n{}. {:.0}% of the clauses ({} clauses, {} contracts); {}",
            i + 1,
            f.share * 100.0,
            f.clauses,
            f.contracts,
            forms.join(", ")
        );
        println!("   typical words: {}", f.distinctive_words.join(", "));
        let cite = f.representative.citation.as_deref().unwrap_or("");
        println!("   e.g. {} [{cite}]", f.representative.id);
        println!(
            "   {}",
            precedent_engine::search_listing::preview(&f.representative.text, 300)
        );
    }
    if let Some(standing) = &market.draft {
        println!(
            "\nYour draft is closest to formulation {} ({:.0}% of the market; similarity {:.2}).",
            standing.closest + 1,
            standing.share * 100.0,
            standing.similarity
        );
        if !standing.lacks.is_empty() {
            println!(
                "Most clauses of that formulation say, and your draft does not: {}",
                standing.lacks.join(", ")
            );
        }
        println!(
            "Your draft is written {}.",
            if standing.forms.is_empty() {
                "neither mutually nor with a carve-out".to_owned()
            } else {
                standing.forms.join(" and ")
            }
        );
    }
    Ok(())
}
