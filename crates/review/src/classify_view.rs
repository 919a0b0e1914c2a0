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

/// A clause and its types as one line of `precedent classify --json`.
#[derive(Serialize)]
pub struct ClassifiedLine<'a> {
    pub text: &'a str,
    pub types: &'a [ClassifierTypeScore],
}

/// The clauses `precedent classify` is asked about: the arguments in order, stdin's text
/// (`read_stdin`, read once) standing for the first "-", or for the only clause when there is no
/// argument; with `paragraphs`, each paragraph of stdin is a clause of its own
/// ([`crate::documents::paragraphs`]).
///
/// Why refused here: an empty clause would be answered "no type", which reads as a finding.
pub fn clauses_to_classify(
    texts: &[String],
    paragraphs: bool,
    read_stdin: &mut dyn FnMut() -> anyhow::Result<String>,
) -> anyhow::Result<Vec<String>> {
    let mut stdin = |out: &mut Vec<String>| -> anyhow::Result<()> {
        let text = read_stdin()?;
        if paragraphs {
            let found = crate::documents::paragraphs(&text);
            if found.is_empty() {
                anyhow::bail!(
                    "stdin has no clause: --paragraphs reads clauses separated by blank lines"
                );
            }
            out.extend(found);
        } else {
            out.push(text);
        }
        Ok(())
    };
    let mut out = Vec::new();
    if texts.is_empty() {
        stdin(&mut out)?;
    }
    let mut stdin_used = false;
    for t in texts {
        if t != "-" {
            out.push(t.clone());
        } else if !stdin_used {
            stdin_used = true;
            stdin(&mut out)?;
        }
    }
    if let Some(i) = out.iter().position(|t| t.trim().is_empty()) {
        anyhow::bail!(
            "clause {} is empty: give the clause's text as an argument or on stdin",
            i + 1
        );
    }
    // Punctuation alone would still get types (the classifier reads any text), and a type
    // given to "!!!" reads as a finding.
    if let Some(i) = out.iter().position(|t| !precedent_text::has_words(t)) {
        anyhow::bail!(
            "clause {} has no words (only punctuation or symbols): give the clause's text",
            i + 1
        );
    }
    Ok(out)
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

#[cfg(test)]
mod clause_tests {
    use super::clauses_to_classify;

    fn args(texts: &[&str]) -> Vec<String> {
        texts.iter().map(|t| t.to_string()).collect()
    }

    #[test]
    fn stdin_stands_for_the_first_dash_or_the_only_clause() {
        let mut reads = 0;
        let mut stdin = || {
            reads += 1;
            Ok("From stdin.".to_owned())
        };
        let got = clauses_to_classify(&args(&["A.", "-", "B.", "-"]), false, &mut stdin);
        assert_eq!(got.expect("clauses"), ["A.", "From stdin.", "B."]);
        let got = clauses_to_classify(&[], false, &mut stdin).expect("clauses");
        assert_eq!(got, ["From stdin."]);
        assert_eq!(reads, 2);
    }

    #[test]
    fn paragraphs_are_clauses_and_empty_ones_are_refused() {
        let mut stdin = || Ok("First clause.\n\nSecond clause.\n".to_owned());
        let got = clauses_to_classify(&[], true, &mut stdin).expect("clauses");
        assert_eq!(got, ["First clause.", "Second clause."]);
        let mut blank = || Ok("  \n".to_owned());
        let err = clauses_to_classify(&[], true, &mut blank).unwrap_err();
        assert!(err.to_string().starts_with("stdin has no clause"), "{err}");
        let err = clauses_to_classify(&args(&["A.", " "]), false, &mut blank).unwrap_err();
        assert!(err.to_string().starts_with("clause 2 is empty"), "{err}");
    }
}
