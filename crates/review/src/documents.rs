//! Reviewing documents one after another, as `precedent review` does over files and folders:
//! whether a document is a contract (the CUAD review) or terms of service (the unfair-term
//! review), each model loaded when the first document needing it comes, and what the text
//! output shows of a review.
//!
//! Why here: which review a document gets and which models answer it are the review's
//! decisions; the CLI reads files and prints, the server reads uploads and answers.

use std::fmt::Write;
use std::path::Path;

use anyhow::{bail, Context, Result};
use precedent_clause_types::ClauseTyper;
use precedent_contracts::meta::ContractMeta;
use precedent_contracts::Document;
use precedent_cuad::CATEGORIES;
use precedent_unfair::cache::UnfairSource;
use precedent_unfair::document::{looks_like_terms_of_service, TosReview};
use precedent_unfair::UnfairModel;
use serde::{Deserialize, Serialize};

use crate::review::{review_text, ContractReview, Finding};
use crate::review_table::party_list;
use crate::ClauseModels;

/// What a document is reviewed as (`review --kind`, `POST /v1/review?kind=`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = ReviewKind))]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum DocumentKind {
    /// Terms of service when the text reads like them (names itself so, addresses "you"),
    /// else a contract.
    #[default]
    Auto,
    /// A negotiated contract: CUAD clause types.
    Contract,
    /// Online terms of service: potentially unfair terms (UNFAIR-ToS), per sentence.
    Tos,
}

impl DocumentKind {
    /// Whether a document of this kind with `text` gets the terms-of-service review: `Auto`
    /// asks [`looks_like_terms_of_service`], except for a row of a table of many contracts
    /// (`tabulated`), whose columns are the CUAD clause types.
    pub fn is_terms_of_service(self, text: &str, tabulated: bool) -> bool {
        match self {
            DocumentKind::Tos => true,
            DocumentKind::Contract => false,
            DocumentKind::Auto => !tabulated && looks_like_terms_of_service(text),
        }
    }
}

/// The files a review run is asked to write besides its listing.
///
/// Why checked here, before any model loads: the checklist and the Word report are one
/// contract's, and a run that cannot produce them should be refused before minutes of review
/// are spent, with the flag to use instead.
pub struct ReviewOutputs<'a> {
    /// How many files the run reviews.
    pub files: usize,
    pub kind: DocumentKind,
    /// One table of many contracts (`--csv`).
    pub csv: bool,
    pub checklist_csv: Option<&'a Path>,
    pub report_docx: Option<&'a Path>,
}

impl ReviewOutputs<'_> {
    /// Refuses output flags that cannot go together, before any document is read.
    pub fn check(&self) -> Result<()> {
        if self.csv && self.kind == DocumentKind::Tos {
            bail!("--csv tabulates CUAD clause types of contracts; terms of service have --json");
        }
        for (flag, out) in [
            ("--checklist-csv", self.checklist_csv),
            ("--report-docx", self.report_docx),
        ] {
            let Some(out) = out else { continue };
            if self.files != 1 {
                bail!(
                    "{flag} writes one contract's checklist, and {} files were given; \
                     review them one at a time, or use --csv for a table of many contracts",
                    self.files
                );
            }
            if self.kind == DocumentKind::Tos {
                bail!(
                    "{flag} lists the 41 CUAD clause types of a contract; terms of service \
                     are reviewed for unfair terms (--json)"
                );
            }
            if out.is_dir() {
                bail!("{flag} {}: is a folder; name a file", out.display());
            }
        }
        Ok(())
    }

    /// Refuses a checklist of a document that reads like terms of service: `auto` decided so
    /// from its words, and the lawyer may know better.
    pub fn check_document(&self, path: &Path, is_tos: bool) -> Result<()> {
        if is_tos && (self.checklist_csv.is_some() || self.report_docx.is_some()) {
            bail!(
                "{}: reads like terms of service, which have no CUAD checklist (--json lists \
                 their unfair terms); if it is a contract, add --kind contract",
                path.display()
            );
        }
        Ok(())
    }
}

/// The review of a terms-of-service document (a `review --json` line).
#[derive(Serialize)]
pub struct TosDocumentReview {
    pub contract: String,
    /// Always "tos", telling these lines from the contract reviews' in one output.
    pub kind: &'static str,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub ocr: bool,
    #[serde(flatten)]
    pub review: TosReview,
}

/// A document's review: terms of service or a contract.
pub enum Reviewed {
    Tos(TosDocumentReview),
    /// Boxed: a contract review is large next to the other.
    Contract(Box<ContractReview>),
}

/// Reviews documents one after another. Each model is loaded when the first document needing
/// it comes: a folder of terms of service never trains the CUAD typer, nor a folder of
/// contracts the UNFAIR-ToS model.
pub struct Reviewer {
    models: ClauseModels,
    fast: bool,
    unfair: UnfairSource,
    top: usize,
    typer: Option<ClauseTyper>,
    tos: Option<UnfairModel>,
}

impl Reviewer {
    /// A reviewer with the clause models (`fast`: word features only) and the UNFAIR-ToS model
    /// of `unfair`, keeping `top` candidates per category in a contract review.
    pub fn new(models: ClauseModels, fast: bool, unfair: UnfairSource, top: usize) -> Reviewer {
        Reviewer {
            models,
            fast,
            unfair,
            top,
            typer: None,
            tos: None,
        }
    }

    /// Reviews `document`, read from `path`: for terms of service (`tos`) its unfair terms,
    /// else its CUAD clause types with its metadata.
    pub fn review(&mut self, path: &Path, document: &Document, tos: bool) -> Result<Reviewed> {
        let contract = path.display().to_string();
        if tos {
            let model = match self.tos.as_mut() {
                Some(m) => m,
                None => self.tos.insert(self.unfair.load()?),
            };
            return Ok(Reviewed::Tos(TosDocumentReview {
                contract,
                kind: "tos",
                ocr: document.ocr,
                review: precedent_unfair::document::review(model, &document.text)
                    .with_context(|| format!("reviewing {}", path.display()))?,
            }));
        }
        let typer = match self.typer.as_mut() {
            Some(t) => t,
            None => self.typer.insert(self.models.load_for_review(self.fast)?),
        };
        let mut review = review_text(typer, &contract, &document.text, self.top);
        review.ocr = document.ocr;
        review.metadata = Some(precedent_contracts::meta::extract(&document.text));
        Ok(Reviewed::Contract(Box::new(review)))
    }
}

/// What the text output shows of a review, per category in CUAD's order: the findings at or
/// above `threshold`, at most three, none overlapping a more confident one shown.
pub fn shown_findings(
    review: &ContractReview,
    threshold: f32,
) -> Vec<(&'static str, Vec<&Finding>)> {
    let mut out = Vec::new();
    for category in CATEGORIES {
        let mut shown: Vec<&Finding> = Vec::new();
        for f in review
            .findings
            .iter()
            .filter(|f| f.category == category && f.confidence >= threshold)
        {
            if shown.len() >= 3 || shown.iter().any(|s| f.start < s.end && s.start < f.end) {
                continue;
            }
            shown.push(f);
        }
        if !shown.is_empty() {
            out.push((category, shown));
        }
    }
    out
}

/// One line about the contract for the text output: "LICENSE AGREEMENT · parties: Acme Corp.;
/// Beta LLC · dated 2019-06-01 · governing law: New York" (what is found; `None` when nothing is).
pub fn describe(meta: &ContractMeta) -> Option<String> {
    let mut parts: Vec<String> = Vec::new();
    if let Some(title) = meta.title.as_ref().or(meta.document_type.as_ref()) {
        parts.push(title.clone());
    }
    if !meta.parties.is_empty() {
        parts.push(format!("parties: {}", party_list(meta)));
    }
    if let Some(date) = &meta.date {
        parts.push(format!("dated {date}"));
    }
    if let Some(law) = &meta.governing_law {
        parts.push(format!("governing law: {law}"));
    }
    (!parts.is_empty()).then(|| parts.join(" · "))
}

/// The confidence from which [`contract_text`] shows a finding when the reader names none.
pub const CONTRACT_TEXT_THRESHOLD: f32 = 0.5;

/// A contract review as `precedent review` prints it: the contract, what it says about itself,
/// then per category the findings [`shown_findings`] keeps, each with its confidence, section,
/// span and excerpt.
pub fn contract_text(review: &ContractReview, threshold: f32) -> String {
    let mut out = String::new();
    if review.ocr {
        let _ = writeln!(out, "{} (text recognised by OCR)", review.contract);
    } else {
        let _ = writeln!(out, "{}", review.contract);
    }
    if let Some(about) = review.metadata.as_ref().and_then(describe) {
        let _ = writeln!(out, "  {about}");
    }
    let shown = shown_findings(review, threshold);
    for (category, findings) in &shown {
        let _ = writeln!(out, "  {category}");
        for f in findings {
            let mut excerpt: String = f.text.split_whitespace().collect::<Vec<_>>().join(" ");
            if excerpt.chars().count() > 160 {
                excerpt = excerpt.chars().take(157).collect::<String>() + "...";
            }
            let section = f
                .section
                .as_deref()
                .map(|s| format!(" §{s}"))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "    {:.2}{section} [{}..{}] {excerpt}",
                f.confidence, f.start, f.end
            );
        }
    }
    if shown.is_empty() {
        let _ = writeln!(out, "  (no clause type at confidence >= {threshold})");
    }
    out
}

/// The text output of a terms-of-service review: the checklist of the eight types, then each
/// flagged sentence with its types, confidence, sentence number and character span. With
/// `min_confidence`, only the flags of that confidence or more ([`TosReview::at_confidence`]);
/// without, every type the model flags.
pub fn tos_text(review: &TosDocumentReview, min_confidence: Option<f32>) -> String {
    let mut out = String::new();
    let ocr = if review.ocr {
        " (text recognised by OCR)"
    } else {
        ""
    };
    let kept;
    let r = match min_confidence {
        Some(bar) => {
            kept = review.review.at_confidence(bar);
            &kept
        }
        None => &review.review,
    };
    let _ = writeln!(
        out,
        "{}{ocr}: terms of service, {} of {} sentences flagged as potentially unfair",
        review.contract,
        r.flagged.len(),
        r.sentences
    );
    for item in &r.checklist {
        if item.present {
            let _ = writeln!(
                out,
                "  [x] {:<24} {} sentence{}, best {:.2}",
                item.name,
                item.sentences,
                if item.sentences == 1 { "" } else { "s" },
                item.best_confidence
            );
        } else {
            let _ = writeln!(out, "  [ ] {}", item.name);
        }
    }
    for f in &r.flagged {
        let types: Vec<String> = f
            .types
            .iter()
            .map(|t| format!("{} {:.2}", t.name, t.confidence))
            .collect();
        let mut excerpt: String = f.text.split_whitespace().collect::<Vec<_>>().join(" ");
        if excerpt.chars().count() > 200 {
            excerpt = excerpt.chars().take(197).collect::<String>() + "...";
        }
        let _ = writeln!(
            out,
            "  sentence {} [{}..{}] {}\n      {excerpt}",
            f.sentence + 1,
            f.start,
            f.end,
            types.join("; ")
        );
        for t in f.types.iter().filter(|t| !t.evidence.is_empty()) {
            let quoted: Vec<String> = t.evidence.iter().map(|e| format!("\"{e}\"")).collect();
            let _ = writeln!(out, "      why {}: {}", t.name, quoted.join(", "));
        }
    }
    out
}

/// The paragraphs of `text` (runs of non-blank lines), each trimmed: the clauses of a file
/// `classify --paragraphs` reads.
pub fn paragraphs(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current: Vec<&str> = Vec::new();
    for line in text.lines().chain(std::iter::once("")) {
        if line.trim().is_empty() {
            if !current.is_empty() {
                out.push(current.join("\n").trim().to_owned());
                current.clear();
            }
        } else {
            current.push(line);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::{paragraphs, DocumentKind, ReviewOutputs};

    fn outputs<'a>(
        files: usize,
        kind: DocumentKind,
        checklist: Option<&'a Path>,
    ) -> ReviewOutputs<'a> {
        ReviewOutputs {
            files,
            kind,
            csv: false,
            checklist_csv: checklist,
            report_docx: None,
        }
    }

    #[test]
    fn a_checklist_is_one_contracts() {
        let out = Some(Path::new("checklist.csv"));
        assert!(outputs(1, DocumentKind::Auto, out).check().is_ok());
        let many = outputs(2, DocumentKind::Auto, out).check().unwrap_err();
        assert!(many.to_string().contains("2 files were given"), "{many}");
        let tos = outputs(1, DocumentKind::Tos, out).check().unwrap_err();
        assert!(
            tos.to_string().starts_with("--checklist-csv lists"),
            "{tos}"
        );
        let folder = outputs(1, DocumentKind::Contract, Some(Path::new("."))).check();
        assert!(folder.unwrap_err().to_string().contains("is a folder"));
        // Several files are fine when nothing is written per contract.
        assert!(outputs(3, DocumentKind::Tos, None).check().is_ok());
    }

    #[test]
    fn a_table_is_of_contracts() {
        let mut table = outputs(3, DocumentKind::Tos, None);
        table.csv = true;
        assert!(table.check().is_err());
        table.kind = DocumentKind::Auto;
        assert!(table.check().is_ok());
    }

    #[test]
    fn terms_of_service_have_no_checklist() {
        let path = Path::new("terms.txt");
        let with = outputs(1, DocumentKind::Auto, Some(Path::new("c.csv")));
        let refused = with.check_document(path, true).unwrap_err().to_string();
        assert!(refused.contains("--kind contract"), "{refused}");
        assert!(with.check_document(path, false).is_ok());
        assert!(outputs(1, DocumentKind::Auto, None)
            .check_document(path, true)
            .is_ok());
    }

    #[test]
    fn paragraphs_are_runs_of_non_blank_lines() {
        let text = "\n  Governing law: New York.\nNo conflict rules.\n\n \t\nNeither party may assign.\n\n";
        assert_eq!(
            paragraphs(text),
            vec![
                "Governing law: New York.\nNo conflict rules.",
                "Neither party may assign."
            ]
        );
        assert!(paragraphs(" \n\n").is_empty());
    }
}
