//! A clause type's market ([`crate::market`]) as the API answers it: each formulation with its
//! representative clause flattened in, and the draft's standing; and as `precedent market`
//! prints it ([`market_text`]).
//!
//! Why here: the shape of the answer is the engine's, as [`crate::hits`] is for search; the
//! server only checks the request and maps errors. The shapes derive their OpenAPI schemas with
//! the `openapi` feature.

use serde::Serialize;

use crate::market::Market;

/// A drafting form's share of a formulation's clauses.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct FormShareView {
    /// "mutual" or "carve-out".
    pub form: String,
    /// Share of the formulation's clauses written in that form (0..1).
    pub share: f32,
}

/// A common formulation of a clause type, with its representative clause flattened in.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct FormulationView {
    pub clauses: usize,
    pub contracts: usize,
    /// Share of the type's clauses (0..1).
    pub share: f32,
    /// The clause closest to the formulation's centre: id, citation and own text.
    pub representative_id: String,
    pub representative_citation: Option<String>,
    pub representative_text: String,
    /// Words most of these clauses use and the type's other clauses use less.
    pub distinctive_words: Vec<String>,
    pub forms: Vec<FormShareView>,
}

/// Where a draft stands among the formulations.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DraftStandingView {
    /// Index into `formulations` of the closest formulation.
    pub closest: usize,
    pub similarity: f32,
    /// How common that formulation is (0..1).
    pub share: f32,
    /// Words most clauses of that formulation use that the draft does not.
    pub lacks: Vec<String>,
    /// Drafting forms the draft is written in ("mutual", "carve-out").
    pub forms: Vec<String>,
}

/// What `POST /v1/market` answers: the type's formulations in a library, and the draft's standing.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct MarketResponse {
    pub library: String,
    pub clause_type: String,
    pub clauses: usize,
    pub contracts: usize,
    /// Most common first.
    pub formulations: Vec<FormulationView>,
    pub draft: Option<DraftStandingView>,
}

impl MarketResponse {
    /// The market `found` in the library named `library`, as the API answers it.
    pub fn new(library: String, found: Market) -> MarketResponse {
        MarketResponse {
            library,
            clause_type: found.clause_type,
            clauses: found.clauses,
            contracts: found.contracts,
            formulations: found
                .formulations
                .into_iter()
                .map(|f| FormulationView {
                    clauses: f.clauses,
                    contracts: f.contracts,
                    share: f.share,
                    representative_id: f.representative.id,
                    representative_citation: f.representative.citation,
                    representative_text: f.representative.text,
                    distinctive_words: f.distinctive_words,
                    forms: f
                        .forms
                        .into_iter()
                        .map(|s| FormShareView {
                            form: s.form.to_owned(),
                            share: s.share,
                        })
                        .collect(),
                })
                .collect(),
            draft: found.draft.map(|d| DraftStandingView {
                closest: d.closest,
                similarity: d.similarity,
                share: d.share,
                lacks: d.lacks,
                forms: d.forms.into_iter().map(str::to_owned).collect(),
            }),
        }
    }
}

/// The market as `precedent market` prints it: the formulations, most common first, each with
/// its share, forms, typical words and representative clause, then where the draft stands.
/// `library_name` names the library when no clause has the type.
pub fn market_text(market: &Market, library_name: &str) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    if market.clauses == 0 {
        let _ = writeln!(
            out,
            "No clause of {library_name} is typed {clause_type} (clause types are stored at ingest).",
            clause_type = market.clause_type
        );
        return out;
    }
    let _ = writeln!(
        out,
        "{}: {} clauses in {} contracts, {} formulations",
        market.clause_type,
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
        let _ = writeln!(
            out,
            "\n{}. {:.0}% of the clauses ({} clauses, {} contracts); {}",
            i + 1,
            f.share * 100.0,
            f.clauses,
            f.contracts,
            forms.join(", ")
        );
        let _ = writeln!(out, "   typical words: {}", f.distinctive_words.join(", "));
        let cite = f.representative.citation.as_deref().unwrap_or("");
        let _ = writeln!(out, "   e.g. {} [{cite}]", f.representative.id);
        let _ = writeln!(
            out,
            "   {}",
            crate::search_listing::preview(&f.representative.text, 300)
        );
    }
    if let Some(standing) = &market.draft {
        let _ = writeln!(
            out,
            "\nYour draft is closest to formulation {} ({:.0}% of the market; similarity {:.2}).",
            standing.closest + 1,
            standing.share * 100.0,
            standing.similarity
        );
        if !standing.lacks.is_empty() {
            let _ = writeln!(
                out,
                "Most clauses of that formulation say, and your draft does not: {}",
                standing.lacks.join(", ")
            );
        }
        let _ = writeln!(
            out,
            "Your draft is written {}.",
            if standing.forms.is_empty() {
                "neither mutually nor with a carve-out".to_owned()
            } else {
                standing.forms.join(" and ")
            }
        );
    }
    out
}
