//! `precedent search` filter flags, turned into the library's [`Filter`].

use anyhow::Result;
use clap::Args;
use precedent_library::Filter;

/// Filters over ingested contracts' metadata (see `precedent ingest`). Clauses without the
/// metadata asked about, such as ACORD's, never match a filter.
#[derive(Args, Clone, Default)]
pub struct FilterArgs {
    /// Only clauses of this CUAD clause type ("Cap on Liability"; case, spaces and punctuation
    /// are ignored), as ingest stored it (at confidence 0.3 or more).
    #[arg(long = "type")]
    clause_type: Option<String>,
    /// With --type: only clauses whose confidence for the type is at least this (fewer, surer
    /// clauses than the stored threshold gives).
    #[arg(long, requires = "clause_type")]
    type_min_confidence: Option<f32>,
    /// Only contracts with a party whose name contains this (case-insensitive).
    #[arg(long)]
    party: Option<String>,
    /// Only contracts dated on or after this (YYYY, YYYY-MM or YYYY-MM-DD).
    #[arg(long)]
    from: Option<String>,
    /// Only contracts dated on or before this (inclusive: --to 2018 includes all of 2018).
    #[arg(long)]
    to: Option<String>,
    /// Only contracts governed by this law (substring, case-insensitive: "delaware").
    #[arg(long)]
    law: Option<String>,
    /// Only contracts of this document type (substring, case-insensitive: "license").
    #[arg(long)]
    doc_type: Option<String>,
    /// Only clauses of this ACORD category ("Limitation of Liability"), as the learned model's
    /// category classifier says (--model-dir, or the shipped model).
    #[arg(long)]
    pub category: Option<String>,
}

impl FilterArgs {
    pub fn filter(&self) -> Result<Filter> {
        // The one check of clause-type names, shared with the API's `filters.clause_type`.
        let clause_type = match &self.clause_type {
            None => None,
            Some(name) => Some(checked_clause_type(name)?.to_owned()),
        };
        let filter = Filter {
            clause_type,
            min_type_confidence: self.type_min_confidence,
            party: self.party.clone(),
            date_from: self.from.clone(),
            date_to: self.to.clone(),
            governing_law: self.law.clone(),
            document_type: self.doc_type.clone(),
        };
        filter.validate()?;
        Ok(filter)
    }
}

/// The canonical CUAD name of a `--type` value, or an error listing the valid names (and the
/// CUAD names of a common alias): [`precedent_engine::search::checked_clause_type`].
pub fn checked_clause_type(name: &str) -> Result<&'static str> {
    precedent_engine::search::checked_clause_type("--type", name, " (--party NAME)")
        .map_err(|e| anyhow::anyhow!(e.message))
}
