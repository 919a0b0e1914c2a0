//! Clauses classified on their own as the API answers (`POST /v1/classify`): each clause's CUAD
//! types with their confidence, threshold, gate and whether they read as likely.
//!
//! [`classified_text`] is the same reading as `precedent classify` prints it.
//!
//! Why here: what a classification answers is the engine's, the same as `precedent classify
//! --json` reads; the server checks the request, loads the model lazily and maps errors. The
//! shapes derive their OpenAPI schemas with the `openapi` feature.

use precedent_clause_types::clause_classifier::{
    ClauseClassifier, TypeScore as ClassifierTypeScore,
};
use serde::Serialize;

/// One CUAD category's reading of a clause.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TypeScore {
    /// CUAD category, as in CUAD's master_clauses.csv, e.g. "Non-Compete".
    pub category: String,
    /// 0..1.
    pub confidence: f32,
    /// The cut the confidence is read against: the category's own (tuned for LegalBench's
    /// balanced accuracy, so it errs towards listing), or the request's `threshold`.
    pub threshold: f32,
    /// The type reads as likely rather than only possible: a confidence of 0.5 or more that a
    /// second model, which also learnt from clauses of no CUAD type, agrees with enough.
    pub likely: bool,
    /// That second model's confidence for the category, when the server has it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gate: Option<f32>,
}

/// A clause's CUAD types.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ClassifiedClause {
    /// The categories reaching their threshold (every category with `all`), most confident
    /// first; empty when none does.
    pub types: Vec<TypeScore>,
}

/// What `POST /v1/classify` answers: each clause's types, in the request's order.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ClassifyResponse {
    /// One entry per request text, in the request's order.
    pub clauses: Vec<ClassifiedClause>,
}

/// Classifies `texts` with `classifier` at `threshold` (else each category's own), listing every
/// category when `all`.
pub fn classify(
    classifier: &ClauseClassifier,
    texts: &[&str],
    threshold: Option<f32>,
    all: bool,
) -> anyhow::Result<ClassifyResponse> {
    let clauses = classifier.types_of(texts, threshold, all)?;
    Ok(ClassifyResponse {
        clauses: clauses
            .into_iter()
            .map(|types| ClassifiedClause {
                types: types
                    .into_iter()
                    .map(|t| TypeScore {
                        category: t.category.to_owned(),
                        confidence: t.confidence,
                        threshold: t.threshold,
                        likely: t.likely,
                        gate: t.gate,
                    })
                    .collect(),
            })
            .collect(),
    })
}

/// A clause's types as `precedent classify` prints them: the clause's first 100 characters,
/// then each type with its confidence, threshold and mark ([`ClassifierTypeScore::mark`]), and a note when
/// types are listed but none is likely.
pub fn classified_text(text: &str, types: &[ClassifierTypeScore]) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let preview: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let preview: String = preview.chars().take(100).collect();
    let _ = writeln!(out, "{preview}");
    if types.is_empty() {
        let _ = writeln!(out, "  (no CUAD clause type reaches its threshold)");
    }
    for t in types {
        // As the web page splits them: likely (85% of those are right on the development
        // CV), else, at its threshold, only possible.
        let _ = writeln!(
            out,
            "  {:<36} {:.3}  (threshold {:.3})  {}",
            t.category,
            t.confidence,
            t.threshold,
            t.mark()
        );
    }
    if types.iter().any(|t| t.reached()) && !types.iter().any(|t| t.likely) {
        // The thresholds favour listing; with no likely type, say what that usually means
        // (the classifier learnt from typed clauses only: it names a type for almost any text).
        let _ = writeln!(
            out,
            "  (no type is likely: the clause may be of none of the 41 CUAD types)"
        );
    }
    out
}
