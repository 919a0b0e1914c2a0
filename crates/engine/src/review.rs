//! Contract review: the CUAD clause types a contract contains, and where, for `precedent
//! review` and `POST /v1/review` alike.

use precedent_contracts::meta::ContractMeta;
use precedent_contracts::{segment_text, Clause};
use precedent_cuad::eval::Selection;
use precedent_cuad::{ClauseTyper, CATEGORIES};
use serde::Serialize;

/// A clause type found in a contract: a character span of the contract's text.
#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    pub category: &'static str,
    pub text: String,
    pub start: usize,
    pub end: usize,
    pub section: Option<String>,
    pub confidence: f32,
}

/// A contract's review: its findings, per category most confident first.
#[derive(Debug, Clone, Serialize)]
pub struct ContractReview {
    pub contract: String,
    /// What the contract says about itself (title, document type, parties, date, governing
    /// law; [`precedent_contracts::meta`]); filled by the caller, which read the document.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<ContractMeta>,
    /// Present (and true) only when the text was recognised by OCR from a scanned PDF.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub ocr: bool,
    pub findings: Vec<Finding>,
}

/// The section a clause sits in, as a lawyer cites it (the one rule of citations,
/// [`precedent_contracts::library_docs::section_reference`]): `["16", "B"]` → `16.B`.
fn section_of(clause: &Clause) -> Option<String> {
    precedent_contracts::library_docs::section_reference(&clause.path, clause.number.as_deref())
}

/// For a character offset, the section of the innermost clause containing it.
struct Sections {
    clauses: Vec<(usize, usize, Option<String>)>,
}

impl Sections {
    fn new(text: &str) -> Self {
        Sections {
            clauses: segment_text(text)
                .iter()
                .map(|c| (c.start, c.end, section_of(c)))
                .collect(),
        }
    }

    fn at(&self, offset: usize) -> Option<String> {
        self.clauses
            .iter()
            .filter(|(s, e, _)| *s <= offset && offset < *e)
            .min_by_key(|(s, e, _)| e - s)
            .and_then(|(_, _, section)| section.clone())
    }
}

/// Reviews one contract text: per category, the `top` most confident findings (0 = all), as
/// CUAD's evaluation selects them ([`ClauseTyper::findings`]: near-duplicate spans dropped, and a
/// finding that repeats what a more confident one already says scored low).
pub fn review_text(typer: &ClauseTyper, contract: &str, text: &str, top: usize) -> ContractReview {
    let selection = Selection {
        top_n: if top == 0 { usize::MAX } else { top },
        ..Selection::default()
    };
    let (candidates, chosen) = typer.findings(text, &selection);
    let chars = precedent_text::char_offsets(text);
    let sections = Sections::new(text);
    let mut findings = Vec::new();
    for (category, chosen) in CATEGORIES.iter().zip(chosen) {
        let mut ranked: Vec<(usize, f32)> = chosen
            .candidates
            .into_iter()
            .zip(chosen.confidence)
            .collect();
        ranked.sort_by(|a, b| {
            b.1.total_cmp(&a.1)
                .then(candidates[a.0].span.start.cmp(&candidates[b.0].span.start))
        });
        for (i, confidence) in ranked {
            let span = candidates[i].span.clone();
            findings.push(Finding {
                category,
                text: text[span.clone()].to_owned(),
                start: chars[span.start],
                end: chars[span.end],
                section: sections.at(chars[span.start]),
                confidence,
            });
        }
    }
    ContractReview {
        contract: contract.to_owned(),
        metadata: None,
        ocr: false,
        findings,
    }
}

/// The findings a checklist shows: confidence at least `min_confidence`, per category at most
/// `per_category` spans, best first, none overlapping another of its category.
pub fn checklist(mut all: Vec<Finding>, min_confidence: f32, per_category: usize) -> Vec<Finding> {
    all.retain(|f| f.confidence >= min_confidence && f.start < f.end);
    all.sort_by(|a, b| {
        b.confidence
            .total_cmp(&a.confidence)
            .then(a.start.cmp(&b.start))
    });
    let mut kept: Vec<Finding> = Vec::new();
    for f in all {
        let same: Vec<&Finding> = kept.iter().filter(|k| k.category == f.category).collect();
        if same.len() >= per_category || same.iter().any(|k| f.start < k.end && k.start < f.end) {
            continue;
        }
        kept.push(f);
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(category: &'static str, confidence: f32, start: usize, end: usize) -> Finding {
        Finding {
            category,
            text: String::new(),
            start,
            end,
            section: None,
            confidence,
        }
    }

    #[test]
    fn the_checklist_keeps_confident_non_overlapping_spans() {
        let kept = checklist(
            vec![
                finding("Governing Law", 0.9, 100, 200),
                finding("Governing Law", 0.8, 150, 250),
                finding("Governing Law", 0.4, 300, 400),
                finding("Cap On Liability", 0.7, 150, 250),
                finding("Insurance", 0.6, 0, 10),
                finding("Insurance", 0.6, 10, 20),
                finding("Insurance", 0.6, 20, 30),
                finding("Insurance", 0.6, 30, 40),
            ],
            0.5,
            3,
        );
        let summary: Vec<(&str, usize)> = kept.iter().map(|f| (f.category, f.start)).collect();
        assert_eq!(
            summary,
            vec![
                ("Governing Law", 100),
                ("Cap On Liability", 150),
                ("Insurance", 0),
                ("Insurance", 10),
                ("Insurance", 20),
            ]
        );
    }
}
