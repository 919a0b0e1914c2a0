//! A reviewed document as the API answers it: the contract's text, its sections, its CUAD
//! findings (confident, non-overlapping, each with its section) and checklist, or, for terms of
//! service, the unfair-term findings per sentence.
//!
//! Why here: which findings a review shows and which section each belongs to is the review's
//! decision, the same for every face; the server only reads the upload and maps errors. The
//! shapes derive their OpenAPI schemas with the `openapi` feature.

use precedent_clause_types::ClauseTyper;
use precedent_contracts::Document;
use precedent_unfair::document::TosReview;
use precedent_unfair::UnfairModel;
use serde::Serialize;

use crate::review::{
    checklist, checklist_rows, review_text, ChecklistRow, PRESENT_AT, SPANS_PER_CATEGORY,
};

/// A clause type found in a contract.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Finding {
    /// CUAD category, e.g. "Governing Law".
    pub category: String,
    pub confidence: f32,
    /// Character span in the contract text of the review.
    pub start: usize,
    pub end: usize,
    pub text: String,
    /// Number of the segmented clause the finding starts in, e.g. "9.1".
    pub section: Option<String>,
    /// Terms of service only: the sentence's words that weigh most for the type, strongest
    /// first (LexGLUE's lowercase form), e.g. ["by binding individual arbitration"].
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub evidence: Vec<String>,
}

/// A segmented clause of the reviewed contract.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SectionView {
    pub number: Option<String>,
    pub heading: Option<String>,
    pub start: usize,
    pub end: usize,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ReviewResponse {
    /// The uploaded file's name.
    pub contract: String,
    /// What the contract says about itself (title, document type, parties, date, governing
    /// law), read by pattern; a field not found is null.
    pub metadata: precedent_contracts::meta::ContractMeta,
    /// txt, html, pdf or docx.
    pub format: String,
    /// The text was recognised by OCR (a PDF without a text layer): it may differ from the scan.
    pub ocr: bool,
    /// The contract's text as read; finding and section spans are char offsets into it.
    pub text: String,
    pub sections: Vec<SectionView>,
    /// Clause types found, most confident first; at most 3 non-overlapping spans per type,
    /// confidence 0.5 and up. For terms of service: one finding per flagged sentence and
    /// unfair-term type (category = the type's name), in document order.
    pub findings: Vec<Finding>,
    /// Contracts only: all 41 CUAD categories in `master_clauses.csv` order, each
    /// {"category", "present", "band" (likely >= 0.5, possible >= 0.3, else unlikely),
    /// "best_confidence" (null without a candidate), "spans": [{"start", "end", "section",
    /// "confidence", "text"}]}, spans best first, no repeats; an absent category has none.
    /// Empty for terms of service (see `unfair_terms.checklist`).
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<Object>))]
    pub checklist: Vec<ChecklistRow>,
    /// "contract" or "tos": which review was made.
    pub kind: &'static str,
    /// Terms of service only: {"sentences", "flagged": [{"sentence", "start", "end", "text",
    /// "types": [{"id", "name", "confidence", "evidence"}]}], "checklist": [{"id", "name",
    /// "present", "sentences", "best_confidence"}]} (all eight types, present or absent).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    pub unfair_terms: Option<TosReview>,
}

/// Findings below this confidence are not shown; a category is present in the checklist from
/// the same confidence.
pub const MIN_CONFIDENCE: f32 = PRESENT_AT;
/// Candidates per category the typer proposes, from which the checklist keeps the confident,
/// non-overlapping ones.
pub const CANDIDATES_PER_CATEGORY: usize = 20;

/// The review of terms of service: one finding per flagged sentence and unfair-term type, in
/// document order, and the eight types' checklist (`unfair_terms`). Fails only when the model's
/// sentence vectors cannot be computed.
pub fn tos_review(
    model: &UnfairModel,
    contract: String,
    format: &str,
    document: Document,
) -> anyhow::Result<ReviewResponse> {
    let review = precedent_unfair::document::review(model, &document.text)?;
    let findings = review
        .flagged
        .iter()
        .flat_map(|f| {
            f.types.iter().map(|t| Finding {
                category: t.name.to_owned(),
                confidence: t.confidence,
                start: f.start,
                end: f.end,
                text: f.text.clone(),
                section: None,
                evidence: t.evidence.clone(),
            })
        })
        .collect();
    Ok(ReviewResponse {
        contract,
        metadata: precedent_contracts::meta::extract(&document.text),
        format: format.to_owned(),
        ocr: document.ocr,
        sections: Vec::new(),
        text: document.text,
        findings,
        checklist: Vec::new(),
        kind: "tos",
        unfair_terms: Some(review),
    })
}

/// The review of a contract: its segmented sections, the confident non-overlapping findings of
/// each CUAD type (each with the number of the smallest section it starts in, where the typer
/// gave none), and the checklist rows (`rows`, from [`checklist_rows`] of the same review).
pub fn contract_review(
    review: crate::review::ContractReview,
    rows: Vec<ChecklistRow>,
    contract: String,
    format: &str,
    document: Document,
) -> ReviewResponse {
    let clauses = precedent_contracts::segment(&document);
    let mut findings: Vec<Finding> = checklist(review.findings, MIN_CONFIDENCE, SPANS_PER_CATEGORY)
        .into_iter()
        .map(|f| Finding {
            category: f.category.to_owned(),
            confidence: f.confidence,
            start: f.start,
            end: f.end,
            text: f.text,
            section: f.section,
            evidence: Vec::new(),
        })
        .collect();
    for f in &mut findings {
        if f.section.is_none() {
            f.section = clauses
                .iter()
                .filter(|c| c.start <= f.start && f.start < c.end)
                .min_by_key(|c| c.end - c.start)
                .and_then(|c| {
                    precedent_contracts::library_docs::section_reference(
                        &c.path,
                        c.number.as_deref(),
                    )
                });
        }
    }
    ReviewResponse {
        contract,
        metadata: precedent_contracts::meta::extract(&document.text),
        format: format.to_owned(),
        ocr: document.ocr,
        sections: clauses
            .iter()
            .map(|c| SectionView {
                number: c.number.clone(),
                heading: c.heading.clone(),
                start: c.start,
                end: c.end,
            })
            .collect(),
        text: document.text,
        findings,
        checklist: rows,
        kind: "contract",
        unfair_terms: None,
    }
}

/// A contract's review by `typer` with the candidates the checklist picks from, and its
/// checklist rows.
pub fn typed_review(
    typer: &ClauseTyper,
    contract: &str,
    text: &str,
) -> (crate::review::ContractReview, Vec<ChecklistRow>) {
    let review = review_text(typer, contract, text, CANDIDATES_PER_CATEGORY);
    let rows = checklist_rows(&review);
    (review, rows)
}

/// A contract review as a Word report ([`crate::review::report_docx`]), with what the
/// document says about itself and whether its text was recognised by OCR.
pub fn report(
    mut review: crate::review::ContractReview,
    rows: &[ChecklistRow],
    document: &Document,
) -> std::io::Result<Vec<u8>> {
    review.metadata = Some(precedent_contracts::meta::extract(&document.text));
    review.ocr = document.ocr;
    crate::review::report_docx(&review, rows)
}

/// The name of a download made from an uploaded contract: `franchise.pdf` and `review.docx`
/// give `franchise-review.docx`, with only safe characters (the name goes into a header).
pub fn attachment_name(contract: &str, suffix: &str) -> String {
    let stem = std::path::Path::new(contract)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let safe: String = stem
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let name = if safe.is_empty() {
        "contract".to_owned()
    } else {
        safe
    };
    format!("{name}-{suffix}")
}
