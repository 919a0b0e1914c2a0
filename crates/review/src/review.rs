//! Contract review: the CUAD clause types a contract contains, and where, for `precedent
//! review` and `POST /v1/review` alike.

use precedent_clause_types::selection::Selection;
use precedent_clause_types::ClauseTyper;
use precedent_contracts::meta::ContractMeta;
use precedent_contracts::{segment_text, Clause};
use precedent_cuad::CATEGORIES;
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
pub fn checklist(all: Vec<Finding>, min_confidence: f32, per_category: usize) -> Vec<Finding> {
    select(all, min_confidence, per_category, false)
}

/// [`checklist`]'s selection; with `distinct_text`, a span whose words (case and spacing aside)
/// repeat a kept span of its category is dropped too, as a contract that says the same thing
/// twice (a recital and its clause, a copied paragraph) has one answer, not two.
fn select(
    mut all: Vec<Finding>,
    min_confidence: f32,
    per_category: usize,
    distinct_text: bool,
) -> Vec<Finding> {
    all.retain(|f| f.confidence >= min_confidence && f.start < f.end);
    all.sort_by(|a, b| {
        b.confidence
            .total_cmp(&a.confidence)
            .then(a.start.cmp(&b.start))
    });
    let mut kept: Vec<(Finding, String)> = Vec::new();
    for f in all {
        let words = if distinct_text {
            plain_words(&f.text).to_lowercase()
        } else {
            String::new()
        };
        let same: Vec<&(Finding, String)> =
            kept.iter().filter(|k| k.0.category == f.category).collect();
        if same.len() >= per_category
            || same.iter().any(|(k, w)| {
                (f.start < k.end && k.start < f.end) || (distinct_text && *w == words)
            })
        {
            continue;
        }
        kept.push((f, words));
    }
    kept.into_iter().map(|(f, _)| f).collect()
}

/// A text's words separated by single spaces (line breaks and runs of spaces removed).
fn plain_words(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A category is present in a contract when a finding reaches this confidence: the threshold
/// under which `review`'s text output, `POST /v1/review` and the page show no finding.
pub const PRESENT_AT: f32 = 0.5;
/// The best confidence from which an absent category is still worth a look: the threshold at
/// which `ingest` stores a clause type on a clause (the best cross-validated F1).
pub const POSSIBLE_AT: f32 = 0.3;
/// Spans a checklist row (and a review's findings) show per category.
pub const SPANS_PER_CATEGORY: usize = 3;

/// How sure the review is that a category is in the contract, by its best confidence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Band {
    /// [`PRESENT_AT`] (0.5) or more: the category is present, its spans are shown.
    Likely,
    /// From [`POSSIBLE_AT`] (0.3) to below 0.5: absent, but a candidate came close.
    Possible,
    /// Below 0.3, or no candidate at all: absent.
    Unlikely,
}

impl Band {
    /// The band of a best confidence (`None`: the typer proposed no span for the category).
    pub fn of(best: Option<f32>) -> Band {
        match best {
            Some(c) if c >= PRESENT_AT => Band::Likely,
            Some(c) if c >= POSSIBLE_AT => Band::Possible,
            _ => Band::Unlikely,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Band::Likely => "likely",
            Band::Possible => "possible",
            Band::Unlikely => "unlikely",
        }
    }
}

/// A span of a checklist row: where the contract says it.
#[derive(Debug, Clone, Serialize)]
pub struct ChecklistSpan {
    /// Character offsets into the contract's extracted text.
    pub start: usize,
    pub end: usize,
    /// The innermost numbered clause containing the span, as cited ("16.B").
    pub section: Option<String>,
    pub confidence: f32,
    pub text: String,
}

/// One CUAD category of a contract's checklist: present or absent, how sure, and where.
#[derive(Debug, Clone, Serialize)]
pub struct ChecklistRow {
    /// The CUAD name, exactly as in `master_clauses.csv`.
    pub category: &'static str,
    /// A span reaches [`PRESENT_AT`]; an absent category ("no Change Of Control clause found")
    /// has no spans.
    pub present: bool,
    pub band: Band,
    /// The most confident candidate's confidence, shown or not (`None`: no candidate).
    pub best_confidence: Option<f32>,
    /// At most [`SPANS_PER_CATEGORY`], most confident first, none overlapping or repeating
    /// the words of another.
    pub spans: Vec<ChecklistSpan>,
}

/// A review as a checklist: all 41 CUAD categories in [`CATEGORIES`] order (the order of
/// `master_clauses.csv`), absent ones included. A category is present when one of its findings
/// reaches [`PRESENT_AT`] (0.5), the confidence from which findings are shown anywhere; its
/// band is [`Band::of`] its best confidence: likely (0.5 and up, present), possible (0.3 to
/// 0.5) or unlikely (below 0.3, or no candidate). The spans are chosen as the review's shown
/// findings are ([`checklist`]), and a span repeating a better one's words is left out.
pub fn checklist_rows(review: &ContractReview) -> Vec<ChecklistRow> {
    let mut best = [None::<f32>; CATEGORIES.len()];
    for f in review.findings.iter().filter(|f| f.start < f.end) {
        if let Some(c) = CATEGORIES.iter().position(|name| *name == f.category) {
            best[c] = Some(best[c].map_or(f.confidence, |b: f32| b.max(f.confidence)));
        }
    }
    let shown = select(
        review.findings.clone(),
        PRESENT_AT,
        SPANS_PER_CATEGORY,
        true,
    );
    CATEGORIES
        .iter()
        .zip(best)
        .map(|(category, best_confidence)| {
            let spans: Vec<ChecklistSpan> = shown
                .iter()
                .filter(|f| f.category == *category)
                .map(|f| ChecklistSpan {
                    start: f.start,
                    end: f.end,
                    section: f.section.clone(),
                    confidence: f.confidence,
                    text: f.text.clone(),
                })
                .collect();
            ChecklistRow {
                category,
                present: !spans.is_empty(),
                band: Band::of(best_confidence),
                best_confidence,
                spans,
            }
        })
        .collect()
}

/// The header of [`to_csv`].
pub const CHECKLIST_COLUMNS: [&str; 8] = [
    "category",
    "status",
    "band",
    "best_confidence",
    "sections",
    "offsets",
    "confidences",
    "text",
];

/// The checklist as CSV, one row per category after the header ([`CHECKLIST_COLUMNS`]):
/// `status` is `present` or `absent`, `band` likely / possible / unlikely, `best_confidence`
/// three decimals (empty without a candidate). The spans' columns list the spans in order,
/// best first: `sections` ("7.2; 9.1", `-` for a span outside any numbered clause), `offsets`
/// ("21961-22748; ..." in characters of the extracted text), `confidences` ("0.998; 0.612"),
/// and `text`, one span per line with its spacing collapsed. An absent category's span
/// columns are empty.
pub fn to_csv(rows: &[ChecklistRow]) -> String {
    let mut writer = csv::Writer::from_writer(Vec::new());
    let mut records = vec![CHECKLIST_COLUMNS.iter().map(|c| c.to_string()).collect()];
    for row in rows {
        let joined = |each: &dyn Fn(&ChecklistSpan) -> String, sep: &str| {
            row.spans.iter().map(each).collect::<Vec<_>>().join(sep)
        };
        let record: Vec<String> = vec![
            row.category.to_owned(),
            if row.present { "present" } else { "absent" }.to_owned(),
            row.band.as_str().to_owned(),
            row.best_confidence
                .map(|c| format!("{c:.3}"))
                .unwrap_or_default(),
            joined(
                &|s| s.section.clone().unwrap_or_else(|| "-".to_owned()),
                "; ",
            ),
            joined(&|s| format!("{}-{}", s.start, s.end), "; "),
            joined(&|s| format!("{:.3}", s.confidence), "; "),
            joined(&|s| plain_words(&s.text), "\n"),
        ];
        records.push(record);
    }
    for record in records {
        // Writing to memory cannot fail; a failure would only drop the row.
        let _ = writer.write_record(&record);
    }
    writer
        .into_inner()
        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
        .unwrap_or_default()
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

    fn text_finding(category: &'static str, confidence: f32, start: usize, text: &str) -> Finding {
        Finding {
            text: text.to_owned(),
            section: Some("7.2".to_owned()),
            ..finding(category, confidence, start, start + text.len())
        }
    }

    fn review(findings: Vec<Finding>) -> ContractReview {
        ContractReview {
            contract: "c.txt".to_owned(),
            metadata: None,
            ocr: false,
            findings,
        }
    }

    #[test]
    fn bands_follow_the_shown_threshold() {
        assert_eq!(Band::of(Some(0.5)), Band::Likely);
        assert_eq!(Band::of(Some(0.49)), Band::Possible);
        assert_eq!(Band::of(Some(0.3)), Band::Possible);
        assert_eq!(Band::of(Some(0.29)), Band::Unlikely);
        assert_eq!(Band::of(None), Band::Unlikely);
    }

    #[test]
    fn the_checklist_has_every_category_present_or_absent() {
        let rows = checklist_rows(&review(vec![
            text_finding(
                "Governing Law",
                0.6,
                500,
                "governed by the laws of New York",
            ),
            text_finding(
                "Governing Law",
                0.9,
                100,
                "Governed by the laws of  New York.",
            ),
            // The same words again, and a span overlapping the best: neither is shown.
            text_finding(
                "Governing Law",
                0.8,
                900,
                "governed by the\nlaws of New York.",
            ),
            text_finding("Governing Law", 0.7, 110, "the laws of New York"),
            text_finding("Governing Law", 0.2, 2000, "New York"),
            text_finding("Insurance", 0.4, 50, "insurance"),
            text_finding("Audit Rights", 0.1, 60, "audit"),
        ]));
        assert_eq!(rows.len(), 41);
        let names: Vec<&str> = rows.iter().map(|r| r.category).collect();
        assert_eq!(names, CATEGORIES.to_vec());
        let row = |name: &str| rows.iter().find(|r| r.category == name).unwrap();
        let law = row("Governing Law");
        assert!(law.present);
        assert_eq!(law.band, Band::Likely);
        assert_eq!(law.best_confidence, Some(0.9));
        let starts: Vec<usize> = law.spans.iter().map(|s| s.start).collect();
        assert_eq!(starts, vec![100, 500]);
        let insurance = row("Insurance");
        assert!(!insurance.present);
        assert_eq!(insurance.band, Band::Possible);
        assert!(insurance.spans.is_empty());
        assert_eq!(row("Audit Rights").band, Band::Unlikely);
        let change = row("Change of Control");
        assert!(!change.present);
        assert_eq!(change.best_confidence, None);
        assert_eq!(change.band, Band::Unlikely);
        assert_eq!(rows.iter().filter(|r| r.present).count(), 1);
    }

    #[test]
    fn the_checklist_csv_has_a_header_and_a_row_per_category() {
        let rows = checklist_rows(&review(vec![
            text_finding(
                "Governing Law",
                0.9,
                100,
                "Governed by the laws of\nNew York.",
            ),
            Finding {
                section: None,
                ..text_finding("Governing Law", 0.6, 500, "Delaware law, \"with\" quotes")
            },
        ]));
        let csv = to_csv(&rows);
        let mut reader = csv::Reader::from_reader(csv.as_bytes());
        let header: Vec<String> = reader
            .headers()
            .unwrap()
            .iter()
            .map(str::to_owned)
            .collect();
        assert_eq!(header, CHECKLIST_COLUMNS.to_vec());
        let records: Vec<csv::StringRecord> = reader.records().map(|r| r.unwrap()).collect();
        assert_eq!(records.len(), 41);
        let law = records.iter().find(|r| &r[0] == "Governing Law").unwrap();
        assert_eq!(&law[1], "present");
        assert_eq!(&law[2], "likely");
        assert_eq!(&law[3], "0.900");
        assert_eq!(&law[4], "7.2; -");
        assert_eq!(&law[5], "100-133; 500-527");
        assert_eq!(&law[6], "0.900; 0.600");
        assert_eq!(
            &law[7],
            "Governed by the laws of New York.\nDelaware law, \"with\" quotes"
        );
        let parties = records.iter().find(|r| &r[0] == "Parties").unwrap();
        assert_eq!(
            parties.iter().collect::<Vec<_>>(),
            vec!["Parties", "absent", "unlikely", "", "", "", "", ""]
        );
    }
}

/// The review as a Word report (DOCX): the contract's own description, the checklist of the 41
/// CUAD clause types (found or not, band, best confidence, sections), then each type found with
/// its clauses' text and sections, then the types not found, each said in words ("No
/// Change of Control clause found"), since what a contract lacks is often what a lawyer must
/// raise.
pub fn report_docx(review: &ContractReview, rows: &[ChecklistRow]) -> std::io::Result<Vec<u8>> {
    use precedent_redline::docx::Body;
    let mut body = Body::new();
    let title = format!("Contract review: {}", review.contract);
    body.heading(&title, 0);
    if let Some(meta) = &review.metadata {
        let mut about = Vec::new();
        if let Some(t) = meta.title.as_deref().or(meta.document_type.as_deref()) {
            about.push(t.to_owned());
        }
        if !meta.parties.is_empty() {
            about.push(format!("parties: {}", meta.parties.join("; ")));
        }
        if let Some(date) = &meta.date {
            about.push(format!("dated {date}"));
        }
        if let Some(law) = &meta.governing_law {
            about.push(format!("governing law: {law}"));
        }
        if !about.is_empty() {
            body.note(&about.join(" · "));
        }
    }
    if review.ocr {
        body.note(
            "The text was recognised by OCR from scanned pages: check wording against the scan.",
        );
    }
    let found = rows.iter().filter(|r| r.present).count();
    body.note(&format!(
        "Reviewed by Precedent for the 41 CUAD clause types: {found} found, {} not found. Bands: likely, possible, unlikely (the typer's best confidence for the type).",
        rows.len() - found
    ));
    body.heading("Checklist", 1);
    let table: Vec<Vec<String>> = rows
        .iter()
        .map(|row| {
            let mut sections: Vec<String> = row
                .spans
                .iter()
                .filter_map(|s| s.section.as_ref().map(|x| format!("§ {x}")))
                .collect();
            sections.dedup();
            vec![
                row.category.to_owned(),
                if row.present { "found" } else { "not found" }.to_owned(),
                row.band.as_str().to_owned(),
                row.best_confidence
                    .map(|c| format!("{:.0}%", c * 100.0))
                    .unwrap_or_default(),
                sections.join(", "),
            ]
        })
        .collect();
    body.table(
        &[
            "Clause type",
            "Status",
            "Band",
            "Best confidence",
            "Sections",
        ],
        &table,
    );
    body.heading("Clause types found", 1);
    for row in rows.iter().filter(|r| r.present) {
        body.heading(
            &format!(
                "{} ({}, {:.0}%)",
                row.category,
                row.band.as_str(),
                row.best_confidence.unwrap_or(0.0) * 100.0
            ),
            2,
        );
        for span in &row.spans {
            let at = match &span.section {
                Some(section) => format!("§ {section}, "),
                None => String::new(),
            };
            body.note(&format!(
                "{at}characters {}–{}, confidence {:.0}%",
                span.start,
                span.end,
                span.confidence * 100.0
            ));
            body.paragraph(span.text.trim());
        }
    }
    body.heading("Clause types not found", 1);
    for row in rows.iter().filter(|r| !r.present) {
        body.paragraph(&format!("No {} clause found.", row.category));
    }
    body.into_docx(&title, false)
}

#[cfg(test)]
mod report_tests {
    use std::io::{Cursor, Read};

    use super::*;

    #[test]
    fn the_report_lists_every_type_found_or_not() {
        let review = ContractReview {
            contract: "Supply & Services.pdf".into(),
            metadata: None,
            ocr: false,
            findings: vec![Finding {
                category: "Cap on Liability",
                text: "Liability shall not exceed the fees paid.".into(),
                start: 10,
                end: 51,
                section: Some("9.1".into()),
                confidence: 0.93,
            }],
        };
        let rows = checklist_rows(&review);
        let docx = report_docx(&review, &rows).expect("written");
        let mut zip = zip::ZipArchive::new(Cursor::new(docx)).expect("zip");
        let mut doc = String::new();
        zip.by_name("word/document.xml")
            .expect("document")
            .read_to_string(&mut doc)
            .expect("utf-8");
        assert!(
            doc.contains("Contract review: Supply &amp; Services.pdf"),
            "{doc}"
        );
        assert!(doc.contains("<w:tbl>"), "{doc}");
        // A row per CUAD category in the table, plus the header.
        assert_eq!(doc.matches("<w:tr>").count(), CATEGORIES.len() + 1);
        assert!(doc.contains("Cap on Liability (likely, 93%)"), "{doc}");
        assert!(doc.contains("§ 9.1, characters 10–51"), "{doc}");
        assert!(doc.contains("No Change of Control clause found."), "{doc}");
        assert!(!doc.contains("No Cap on Liability clause found."), "{doc}");
    }
}
