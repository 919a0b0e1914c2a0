//! Search hits as the API shows them, and as any face may: the clause view with its citation
//! and clause types, the highlighted query terms, why each hit matched, folded copies, and the
//! facets of the top candidates.
//!
//! Why here: which metadata a hit shows, how a clause is cited and which metadata stay private
//! (the server's path to a contract file) are decisions about clauses, not about HTTP; the
//! server only maps the errors and times the answer. The shapes derive their OpenAPI schemas
//! with the `openapi` feature.

use std::collections::BTreeMap;

use precedent_library::{Library, LibraryError};
use precedent_rank::Pipeline;
use precedent_text::Analyzer;
use serde::{Deserialize, Serialize};

use crate::explain::Explainer;
use crate::EngineError;

/// A clause type found by the CUAD typer, with its confidence.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ClauseType {
    pub category: String,
    #[serde(default)]
    pub confidence: Option<f64>,
}

/// The contract metadata an ingested clause carries (see the README's metadata keys). Every
/// field is optional; a clause whose metadata does not parse is treated as having none.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct ClauseMeta {
    #[serde(default)]
    pub contract: Option<String>,
    #[serde(default)]
    pub source_path: Option<String>,
    /// The source file's fingerprint when it was ingested: the context view checks it.
    #[serde(default)]
    pub source_fingerprint: Option<String>,
    #[serde(default)]
    pub document_type: Option<String>,
    #[serde(default)]
    pub parties: Vec<String>,
    #[serde(default)]
    pub date: Option<String>,
    #[serde(default)]
    pub governing_law: Option<String>,
    #[serde(default)]
    pub section: Option<String>,
    #[serde(default)]
    pub heading: Option<String>,
    #[serde(default)]
    pub path: Vec<String>,
    #[serde(default)]
    pub start: Option<usize>,
    #[serde(default)]
    pub end: Option<usize>,
    #[serde(default)]
    pub clause_types: Vec<ClauseType>,
}

impl ClauseMeta {
    /// The metadata of a clause, or none when it does not parse (never an error: a clause
    /// with odd metadata is still a clause to show).
    pub fn from_value(value: &serde_json::Value) -> Self {
        if value.is_object() {
            serde_json::from_value(value.clone()).unwrap_or_default()
        } else {
            ClauseMeta::default()
        }
    }
}

/// Where a clause comes from, for citing it.
#[derive(Debug, Clone, Default, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Citation {
    /// Human-readable citation, e.g. "Pelican Delivers License Agreement, § 9.1 Limitation of
    /// Liability" or "ACORD clause a5a68dbd19".
    pub text: String,
    pub contract: Option<String>,
    pub document_type: Option<String>,
    pub parties: Vec<String>,
    pub date: Option<String>,
    pub governing_law: Option<String>,
    /// The section as cited, with its parents: "16.B", "9.1(a)(ii)".
    pub reference: Option<String>,
    /// The clause's own number as written ("B" in section 16).
    pub section: Option<String>,
    pub heading: Option<String>,
    pub path: Vec<String>,
    /// The contract's file name ("NETGEAR_INGRAM_distributor.txt"), never the server's path to
    /// it ([`contract_file_name`]).
    pub source: Option<String>,
    /// Character span of the clause in the source contract's text.
    pub start: Option<usize>,
    pub end: Option<usize>,
}

/// The citation of a clause: the CLI's words for it, and the metadata a lawyer cites it by.
pub fn citation(
    id: &str,
    title: Option<&str>,
    metadata: &serde_json::Value,
    meta: &ClauseMeta,
) -> Citation {
    // The CLI's citation ([`precedent_contracts::library_docs::citation`]); a clause without
    // contract metadata (ACORD's) is named by its title or id.
    let text = precedent_contracts::library_docs::citation(metadata).unwrap_or_else(|| match title
        .map(str::trim)
        .filter(|t| !t.is_empty())
    {
        Some(t) => t.to_owned(),
        None => format!("Clause {id}"),
    });
    Citation {
        text,
        contract: meta.contract.clone(),
        document_type: meta.document_type.clone(),
        parties: meta.parties.clone(),
        date: meta.date.clone(),
        governing_law: meta.governing_law.clone(),
        reference: precedent_contracts::library_docs::section_reference(
            &meta.path,
            meta.section.as_deref(),
        ),
        section: meta.section.clone(),
        heading: meta.heading.clone(),
        path: meta.path.clone(),
        source: meta.source_path.as_deref().and_then(contract_file_name),
        start: meta.start,
        end: meta.end,
    }
}

/// The file name of a contract ingested from `source_path`: what the API shows of where a
/// clause comes from. The server's own path to the file says how its disks are laid out, which
/// is nobody's business but the operator's, so no response carries it.
pub fn contract_file_name(source_path: &str) -> Option<String> {
    std::path::Path::new(source_path)
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
}

/// Metadata keys that stay inside the server: `source_path` is the server's path to the
/// contract file (see [`contract_file_name`]).
pub const PRIVATE_METADATA: [&str; 1] = ["source_path"];

/// A clause's raw metadata as responses carry it, without [`PRIVATE_METADATA`].
pub fn public_metadata(mut metadata: serde_json::Value) -> serde_json::Value {
    if let serde_json::Value::Object(m) = &mut metadata {
        for key in PRIVATE_METADATA {
            m.remove(key);
        }
    }
    metadata
}

/// A character span (Unicode scalar offsets) in a clause's text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Span {
    pub start: usize,
    pub end: usize,
}

/// Why a hit matched, in plain words ([`precedent_engine::explain`]).
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Explanation {
    /// The passage of the clause's text that answers the query (its best sentence), as
    /// character offsets; absent when no query word occurs in the clause.
    pub passage: Option<Span>,
    /// Plain-language reasons, most telling first: the clause type asked for, the search words
    /// it mentions, a rating by reviewers for a similar request.
    pub reasons: Vec<String>,
}

impl From<crate::explain::Explanation> for Explanation {
    fn from(why: crate::explain::Explanation) -> Self {
        Explanation {
            passage: why.passage.map(|p| Span {
                start: p.start,
                end: p.end,
            }),
            reasons: why.reasons,
        }
    }
}

/// A clause's own text and the sections it refers to, which ingest attached to it for search:
/// every face shows the references apart, as context, under their numbers.
pub fn own_text_and_references<'a>(
    text: &'a str,
    metadata: &serde_json::Value,
) -> (&'a str, Vec<ReferencedSection>) {
    let (own, references) = precedent_contracts::library_docs::split_references(text, metadata);
    let references = references
        .into_iter()
        .map(|(section, text)| ReferencedSection {
            section,
            text: text.to_owned(),
        })
        .collect();
    (own, references)
}

/// One stage's view of a hit (which retriever found it, at which rank, with which score).
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct StageScoreView {
    pub stage: String,
    pub rank: usize,
    pub score: f32,
}

/// A clause as the API shows it.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ClauseView {
    pub id: String,
    pub title: Option<String>,
    /// The clause's own text: what is copied and cited.
    pub text: String,
    /// Sections the clause refers to ("except as set forth in Section 14.A"), whose text ingest
    /// attached to it for search: context, shown apart under their numbers.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub references: Vec<ReferencedSection>,
    pub citation: Citation,
    /// CUAD clause types (empty for clauses without typing, such as ACORD's).
    pub clause_types: Vec<ClauseType>,
    /// The clause's raw metadata object, without the server's path to the contract file.
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub metadata: serde_json::Value,
}

/// A section a clause refers to, with the text ingest attached.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ReferencedSection {
    /// The section's number as the clause cites it, e.g. "14.A".
    pub section: String,
    pub text: String,
}

/// A ranked clause.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SearchHit {
    pub rank: usize,
    pub score: f32,
    /// Per-stage provenance (bm25 / dense ranks and scores).
    pub stages: Vec<StageScoreView>,
    /// Where the query's terms occur in `clause.text`.
    pub highlights: Vec<Span>,
    /// Why it matched: the answering passage and plain reasons (the raw scores are `stages`).
    pub why: Explanation,
    pub clause: ClauseView,
    /// Ids of lower-ranked clauses with the same words (case, punctuation and spacing aside),
    /// folded into this hit instead of shown as hits of their own: the same boilerplate in
    /// other contracts. Empty with `keep_duplicates`.
    pub copies: Vec<String>,
}

/// How often a value occurs among the top candidates.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct FacetValue {
    pub value: String,
    pub count: usize,
}

/// Value counts among the top candidates (before filters), for narrowing a search.
#[derive(Debug, Clone, Default, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Facets {
    /// How many candidates the counts cover.
    pub candidates: usize,
    pub clause_type: Vec<FacetValue>,
    pub governing_law: Vec<FacetValue>,
    pub document_type: Vec<FacetValue>,
    pub party: Vec<FacetValue>,
}

/// The text around a clause in its source contract.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ClauseContext {
    /// The contract's file name (not the server's path to it).
    pub source: String,
    pub before: String,
    pub clause: String,
    pub after: String,
    /// Character span of `clause` in the contract's text.
    pub start: usize,
    pub end: usize,
}

/// Reads a clause by row and shapes it as the API shows it, with its parsed metadata.
pub fn clause_view(library: &Library, row: u32) -> Result<(ClauseView, ClauseMeta), LibraryError> {
    let doc = library.store().clause(row)?;
    let meta = ClauseMeta::from_value(&doc.metadata);
    let (own, references) = own_text_and_references(&doc.text, &doc.metadata);
    let view = ClauseView {
        citation: citation(&doc.id, doc.title.as_deref(), &doc.metadata, &meta),
        clause_types: meta.clause_types.clone(),
        text: own.to_owned(),
        references,
        id: doc.id,
        title: doc.title,
        metadata: public_metadata(doc.metadata),
    };
    Ok((view, meta))
}

/// Spans of `text` (in characters) whose analysed term is one of `terms`.
pub fn highlight_spans(analyzer: &Analyzer, text: &str, terms: &[String]) -> Vec<Span> {
    if terms.is_empty() {
        return Vec::new();
    }
    let mut byte_spans = Vec::new();
    analyzer.for_each_term(text, |t| {
        if terms.contains(&t.text) {
            byte_spans.push((t.start, t.end));
        }
    });
    // Byte offsets -> character offsets in one pass.
    let mut spans = Vec::with_capacity(byte_spans.len());
    let mut chars_before = 0;
    let mut last_byte = 0;
    for (start, end) in byte_spans {
        let (Some(head), Some(body)) = (text.get(last_byte..start), text.get(start..end)) else {
            continue;
        };
        chars_before += head.chars().count();
        let len = body.chars().count();
        spans.push(Span {
            start: chars_before,
            end: chars_before + len,
        });
        chars_before += len;
        last_byte = end;
    }
    spans
}

fn count_facet(counts: &mut BTreeMap<String, usize>, value: &str) {
    let value = value.trim();
    if !value.is_empty() {
        *counts.entry(value.to_owned()).or_default() += 1;
    }
}

fn facet_list(counts: BTreeMap<String, usize>) -> Vec<FacetValue> {
    let mut list: Vec<FacetValue> = counts
        .into_iter()
        .map(|(value, count)| FacetValue { value, count })
        .collect();
    list.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.value.cmp(&b.value)));
    list.truncate(25);
    list
}

/// Ranks with the engine's one search ([`crate::search::search`]: filters, deepening, the
/// left-out `similar` source, folded copies), then renders the page as the API shows it and
/// counts facets over the top candidates; with the query as ranked when its spelling was
/// corrected. The server maps the errors to its answers.
pub fn ranked_hits(
    library: &Library,
    analyzer: &Analyzer,
    explainer: &Explainer,
    pipeline: &Pipeline,
    request: &crate::search::Request<'_>,
) -> Result<(Vec<SearchHit>, Facets, Option<crate::spelling::Correction>), EngineError> {
    let page = crate::search::search(library, pipeline, request)?;
    let query = page.ranked_query(request.query).to_owned();
    let corrected = page.corrected.clone();
    let mut facet_counts: [BTreeMap<String, usize>; 4] = Default::default();
    for &row in &page.facet_rows {
        // Facets read the metadata alone; only the page's hits are rendered as views.
        let doc = library.store().clause(row)?;
        let meta = ClauseMeta::from_value(&doc.metadata);
        for t in &meta.clause_types {
            count_facet(&mut facet_counts[0], &t.category);
        }
        count_facet(
            &mut facet_counts[1],
            meta.governing_law.as_deref().unwrap_or(""),
        );
        count_facet(
            &mut facet_counts[2],
            meta.document_type.as_deref().unwrap_or(""),
        );
        for p in &meta.parties {
            count_facet(&mut facet_counts[3], p);
        }
    }
    let terms = library.lexical().query_terms(&query);
    let mut views = Vec::with_capacity(page.hits.len());
    for found in &page.hits {
        views.push(clause_view(library, found.hit.row)?.0);
    }
    let clauses: Vec<(&str, &str, &serde_json::Value)> = views
        .iter()
        .map(|v| (v.id.as_str(), v.text.as_str(), &v.metadata))
        .collect();
    let explanations = explainer.explain_hits(library, &query, &clauses);
    let mut hits = Vec::with_capacity(page.hits.len());
    for (i, ((found, view), why)) in page
        .hits
        .into_iter()
        .zip(views)
        .zip(explanations)
        .enumerate()
    {
        let copies = found
            .copies
            .iter()
            .filter_map(|&row| library.store().id(row).map(str::to_owned))
            .collect();
        hits.push(SearchHit {
            rank: i + 1,
            score: found.hit.score,
            stages: found
                .hit
                .stages
                .iter()
                .map(|s| StageScoreView {
                    stage: s.stage.clone(),
                    rank: s.rank,
                    score: s.score,
                })
                .collect(),
            highlights: highlight_spans(analyzer, &view.text, &terms),
            why: why.into(),
            clause: view,
            copies,
        });
    }
    let [clause_type, governing_law, document_type, party] = facet_counts;
    let facets = Facets {
        candidates: page.facet_rows.len(),
        clause_type: facet_list(clause_type),
        governing_law: facet_list(governing_law),
        document_type: facet_list(document_type),
        party: facet_list(party),
    };
    Ok((hits, facets, corrected))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_of_the_wrong_shape_is_ignored_not_fatal() {
        let value = serde_json::json!({"parties": "not a list"});
        let meta = ClauseMeta::from_value(&value);
        assert!(meta.parties.is_empty());
        let c = citation("a1", None, &value, &meta);
        assert_eq!(c.text, "Clause a1");
    }
}
