//! The hits of a search as `precedent search` lists them (and prints them with `--json`): the
//! clause's own text apart from the sections it refers to, its full metadata, the stages that
//! found it, the copies folded into it with their citations, and why it matched.
//!
//! Why here: the same reading of a hit (references split off, copies cited, the explanation
//! the API gives) serves every face; the CLI only prints it.

use precedent_library::Library;
use precedent_rank::StageScore;
use serde::Serialize;

use crate::explain::Explainer;
use crate::hits::{own_text_and_references, Explanation, ReferencedSection};
use crate::search::PageHit;
use crate::EngineError;

/// A listed hit. Its fields serialize in the order `search --json` has always printed them.
#[derive(Debug, Clone, Serialize)]
pub struct ListedHit {
    pub rank: usize,
    pub id: String,
    pub score: f32,
    pub title: Option<String>,
    /// The clause's own text: what is copied and cited.
    pub text: String,
    /// The sections it refers to, attached by ingest for search: context, listed apart.
    pub references: Vec<ReferencedSection>,
    /// The clause's full metadata.
    pub metadata: serde_json::Value,
    pub stages: Vec<StageScore>,
    /// Lower-ranked clauses with the same words, folded into this hit.
    pub copies: Vec<ListedCopy>,
    /// Why it matched, as the API says it.
    pub why: Explanation,
}

/// A copy folded into a hit, with its citation when its metadata gives one.
#[derive(Debug, Clone, Serialize)]
pub struct ListedCopy {
    pub id: String,
    pub citation: Option<String>,
}

/// Reads the clauses of `hits` (and their copies) and explains each, as the API does.
pub fn list_hits(
    library: &Library,
    explainer: &Explainer,
    query: &str,
    hits: &[PageHit],
) -> Result<Vec<ListedHit>, EngineError> {
    let mut listed = Vec::with_capacity(hits.len());
    for (i, found) in hits.iter().enumerate() {
        let hit = &found.hit;
        let clause = library.store().clause(hit.row)?;
        let mut copies = Vec::with_capacity(found.copies.len());
        for &row in &found.copies {
            let copy = library.store().clause(row)?;
            copies.push(ListedCopy {
                citation: precedent_contracts::library_docs::citation(&copy.metadata),
                id: copy.id,
            });
        }
        let (own, references) = own_text_and_references(&clause.text, &clause.metadata);
        listed.push(ListedHit {
            rank: i + 1,
            text: own.to_owned(),
            id: clause.id,
            score: hit.score,
            title: clause.title,
            references,
            metadata: clause.metadata,
            stages: hit.stages.clone(),
            copies,
            why: Explanation {
                passage: None,
                reasons: Vec::new(),
            },
        });
    }
    // Why each hit matched, as the API says it.
    let clauses: Vec<(&str, &str, &serde_json::Value)> = listed
        .iter()
        .map(|h| (h.id.as_str(), h.text.as_str(), &h.metadata))
        .collect();
    let explanations = explainer.explain_hits(library, query, &clauses);
    for (hit, why) in listed.iter_mut().zip(explanations) {
        hit.why = why.into();
    }
    Ok(listed)
}
