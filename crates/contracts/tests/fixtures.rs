//! One real contract (CUAD's Roanoke Gas franchise) in four formats reads and segments the same
//! way. The HTML, DOCX and PDF files are made from the shared TXT by
//! `scripts/fixtures/make_contract_fixtures.sh` (pandoc, groff), the scanned PDF from the PDF by
//! `scripts/fixtures/make_scanned_pdf.py`, and committed.

use std::path::{Path, PathBuf};

use precedent_contracts::{meta, read_path, segment, Clause, Format, ReadError};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");
const TXT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/data/cuad/full_contract_txt/RgcResourcesInc_20151216_8-K_EX-10.3_9372751_EX-10.3_Franchise Agreement.txt"
);

fn fixture(name: &str) -> PathBuf {
    Path::new(FIXTURES).join(name)
}

fn by_number<'a>(clauses: &'a [Clause], number: &str) -> &'a Clause {
    clauses
        .iter()
        .find(|c| c.number.as_deref() == Some(number))
        .unwrap_or_else(|| panic!("no clause {number} in {clauses:#?}"))
}

fn words(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn the_same_contract_in_txt_html_docx_and_pdf() {
    let cases = [
        (PathBuf::from(TXT), Format::Txt),
        (fixture("franchise.html"), Format::Html),
        (fixture("franchise.docx"), Format::Docx),
        (fixture("franchise.pdf"), Format::Pdf),
        // The typeset PDF's pages as 1-bit images without a text layer, recognised by OCR.
        (fixture("franchise-scanned.pdf"), Format::Pdf),
        // Page 1 typeset, page 2 scanned: only page 2 is recognised.
        (fixture("franchise-mixed.pdf"), Format::Pdf),
    ];
    assert!(
        precedent_contracts::ocr_available(),
        "OCR needs pdftoppm and tesseract: run scripts/setup.sh (apt-get install poppler-utils tesseract-ocr)"
    );
    for (path, format) in cases {
        let doc = read_path(&path).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(doc.format, format);
        let scanned =
            path.ends_with("franchise-scanned.pdf") || path.ends_with("franchise-mixed.pdf");
        assert_eq!(doc.ocr, scanned, "{}", path.display());
        let clauses = segment(&doc);
        let numbers: Vec<&str> = clauses.iter().filter_map(|c| c.number.as_deref()).collect();
        for n in ["1", "2", "(a)", "(b)", "4", "5", "6", "7"] {
            assert!(
                numbers.contains(&n),
                "{format:?}: {n} missing in {numbers:?}"
            );
        }
        let term = by_number(&clauses, "2");
        assert_eq!(term.heading.as_deref(), Some("TERM"), "{format:?}");
        assert_eq!(
            words(&term.text),
            "2. TERM. The term of the Franchise shall be twenty (20) years, commencing on January 1, 2016.",
            "{format:?}"
        );
        // The span points at the clause in the document's own text.
        let span: String = doc
            .text
            .chars()
            .skip(term.start)
            .take(term.end - term.start)
            .collect();
        assert!(span.starts_with("2. TERM."), "{format:?}: {span:?}");
        assert_eq!(by_number(&clauses, "(b)").path, ["3", "(b)"], "{format:?}");
        // The PDF's running header and page numbers are not clause text; its hyphenation is undone.
        for c in &clauses {
            assert!(!c.text.contains("Page 2"), "{format:?}: {:?}", c.text);
        }
        assert!(
            by_number(&clauses, "(a)")
                .text
                .contains("pursuant to this Section"),
            "{format:?}"
        );

        let meta = meta::extract(&doc.text);
        assert_eq!(meta.date.as_deref(), Some("2015-11-17"), "{format:?}");
        assert_eq!(
            meta.document_type.as_deref(),
            Some("Gas Franchise Agreement"),
            "{format:?}"
        );
        assert!(
            meta.parties.iter().any(|p| p == "ROANOKE GAS COMPANY"),
            "{format:?}: {:?}",
            meta.parties
        );
    }
}

#[test]
fn a_pdf_without_a_text_layer_says_so() {
    let err = read_path(&fixture("scanned.pdf")).expect_err("no text layer");
    assert!(matches!(err, ReadError::NoTextLayer { .. }), "{err}");
    assert!(
        err.to_string().contains("no text layer (scanned?)"),
        "{err}"
    );
    // With OCR installed (CI installs it), the page is recognised and found empty: the drawing
    // holds no letters.
    if precedent_contracts::ocr_available() {
        assert!(err.to_string().contains("OCR found no text in it"), "{err}");
    }
}

#[test]
fn a_truncated_pdf_is_corrupt_not_a_crash() {
    let bytes = std::fs::read(fixture("franchise.pdf")).expect("fixture");
    let dir = tempfile::tempdir().expect("tempdir");
    for cut in [64, bytes.len() / 2] {
        let path = dir.path().join(format!("cut{cut}.pdf"));
        std::fs::write(&path, &bytes[..cut]).expect("write");
        let err = read_path(&path).expect_err("truncated");
        assert!(
            matches!(
                err,
                ReadError::Corrupt { .. } | ReadError::NoTextLayer { .. }
            ),
            "{err}"
        );
    }
}

/// A contract drafted with Word's automatic numbering: the section numbers live in
/// `numbering.xml` and the heading styles, not in the text (`numbered.docx`, made from CUAD's
/// Fuse Medical distributor agreement by `scripts/fixtures/make_numbered_docx.py`). The reader
/// renders them back, so the DOCX segments into the same numbered sections as the TXT.
#[test]
fn word_automatic_numbering_is_rendered_and_segments_like_the_txt() {
    let txt_path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/data/cuad/full_contract_txt/FuseMedicalInc_20190321_10-K_EX-10.43_11575454_EX-10.43_Distributor Agreement.txt"
    );
    let docx = read_path(&fixture("numbered.docx")).unwrap_or_else(|e| panic!("{e}"));
    let txt = read_path(Path::new(txt_path)).unwrap_or_else(|e| panic!("{e}"));
    for line in [
        "1. Definitions and interpretation",
        "1.1 The definitions and rules of interpretation",
        "2.4 The Distributor shall not:",
        "(a) represent itself as an agent of the Supplier",
        "(g) retain any monies of the Supplier",
    ] {
        assert!(
            docx.text.lines().any(|l| l.starts_with(line)),
            "no line starting {line:?} in the DOCX text"
        );
    }
    let numbers = |clauses: &[Clause]| -> Vec<Vec<String>> {
        clauses
            .iter()
            .filter(|c| c.number.is_some())
            .map(|c| c.path.clone())
            .collect()
    };
    let (from_docx, from_txt) = (segment(&docx), segment(&txt));
    let (docx_paths, txt_paths) = (numbers(&from_docx), numbers(&from_txt));
    assert!(txt_paths.len() > 100, "{}", txt_paths.len());
    // The TXT's page numbers and "Source:" lines are not list paragraphs, so compare the
    // numbered sections the list produces: every one of the TXT's is found in the DOCX.
    let missing: Vec<&Vec<String>> = txt_paths
        .iter()
        .filter(|p| !docx_paths.contains(p))
        .collect();
    assert!(
        missing.is_empty(),
        "sections missing from the DOCX: {missing:?}"
    );
    let appointment = by_number(&from_docx, "2.4");
    assert_eq!(appointment.path, ["2", "2.4"]);
    assert!(words(&by_number(&from_docx, "12.1").text).starts_with("12.1"));
}
