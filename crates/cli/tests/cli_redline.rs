//! Redline against my draft: `precedent compare --docx` and `POST /v1/compare?format=docx` write
//! a Word document whose differences are real tracked changes, and LibreOffice (Debian's
//! `libreoffice-writer-nogui`, installed by scripts/setup.sh) opens it with them as revisions.

mod support;

use std::path::Path;

use serde_json::json;
use support::*;

/// The precedent: a limitation-of-liability clause as ingest stores one.
const PRECEDENT: &str =
    "16.B Limitation of Liability. IN NO EVENT SHALL EITHER PARTY BE LIABLE FOR \
INDIRECT OR CONSEQUENTIAL DAMAGES. The Company's total liability shall not exceed the fees paid in \
the twelve (12) months before the claim.";

/// The lawyer's draft of the same clause: a party renamed, a carve-out added, a period changed.
const DRAFT: &str = "16.B Limitation of Liability. In no event shall either party be liable for \
indirect or consequential damages, except for breach of confidentiality. The Supplier's total \
liability shall not exceed the fees paid in the six (6) months before the claim.";

fn precedent_library(dir: &Path) -> std::path::PathBuf {
    library_of_docs(
        dir,
        "redline-lib",
        &[json!({
            "_id": "deal#16",
            "title": "16.B Limitation of Liability",
            "text": PRECEDENT,
            "metadata": {
                "contract": "deal",
                "document_type": "Supply Agreement",
                "section": "B",
                "heading": "Limitation of Liability",
                "path": ["16", "B"],
            },
        })],
    )
}

#[test]
fn compare_writes_a_redline_that_libreoffice_opens_with_tracked_changes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path();
    let lib = precedent_library(p);
    let draft = p.join("my-draft.txt");
    std::fs::write(&draft, DRAFT).expect("write draft");
    let redline = p.join("redline.docx");
    let out = precedent(
        &[
            "compare",
            "--index",
            s(&lib),
            "--left",
            "deal#16",
            "--right-file",
            s(&draft),
            "--docx",
            s(&redline),
        ],
        p,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let printed = String::from_utf8_lossy(&out.stdout);
    // Capitals alone are no difference by default; the renamed party and the new carve-out are.
    assert!(
        printed.contains("[-Company's -]{+Supplier's +}"),
        "{printed}"
    );
    assert!(
        printed.contains("{+damages, except for breach of confidentiality. +}"),
        "{printed}"
    );
    assert!(
        printed.contains("[-twelve (12) -]{+six (6) +}"),
        "{printed}"
    );
    assert!(!printed.contains("[-IN NO EVENT"), "{printed}");

    let docx = std::fs::read(&redline).expect("redline written");
    let document = docx_part(&docx, "word/document.xml");
    assert!(document.contains("<w:del "), "{document}");
    assert!(document.contains("<w:ins "), "{document}");
    assert!(document.contains(">Company's </w:delText>"), "{document}");
    assert!(document.contains("Limitation of Liability"), "{document}");

    // LibreOffice reads the changes as revisions: its own format lists them as tracked changes.
    let odt = soffice_convert(&redline, "odt", p);
    let odt = std::fs::read(&odt).expect("odt");
    let content = docx_part(&odt, "content.xml");
    assert!(content.contains("<text:tracked-changes"), "{content}");
    assert!(content.contains("<text:insertion>"), "{content}");
    assert!(content.contains("<text:deletion>"), "{content}");
    assert!(content.contains("Supplier"), "{content}");
    // And renders it (the deleted words shown struck through, as Word shows them).
    let pdf = soffice_convert(&redline, "pdf", p);
    let pdf = std::fs::read(&pdf).expect("pdf");
    assert!(pdf.starts_with(b"%PDF"), "not a PDF");
}

#[test]
fn the_api_answers_a_redline_as_a_docx_attachment() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path();
    let lib = precedent_library(p);
    let key = create_key(&lib, "read");
    let server = Server::start(&[format!("deals={}", s(&lib))], p);
    let response = ureq::post(&server.url("/v1/compare?format=docx"))
        .set("Authorization", &format!("Bearer {key}"))
        .send_json(json!({"left": {"clause_id": "deal#16"}, "right": {"text": DRAFT}}))
        .expect("200");
    assert_eq!(
        response.header("content-type"),
        Some("application/vnd.openxmlformats-officedocument.wordprocessingml.document")
    );
    assert!(response
        .header("content-disposition")
        .is_some_and(|d| d.starts_with("attachment") && d.contains(".docx")));
    let mut docx = Vec::new();
    response.into_reader().read_to_end(&mut docx).expect("body");
    let document = docx_part(&docx, "word/document.xml");
    assert!(
        document.contains("<w:del ") && document.contains("<w:ins "),
        "{document}"
    );
    // The original is named by its citation, with the parent section.
    assert!(document.contains("16.B"), "{document}");
    assert!(document.contains("your text"), "{document}");
    // The JSON answer is unchanged without the format.
    let reply = call(
        "POST",
        &server.url("/v1/compare"),
        Some(&key),
        Some(&json!({"left": {"clause_id": "deal#16"}, "right": {"text": DRAFT}})),
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert!(reply.json()["ops"]
        .as_array()
        .is_some_and(|ops| ops.len() > 3));
    // An unknown format is refused, not ignored.
    let reply = call(
        "POST",
        &server.url("/v1/compare?format=pdf"),
        Some(&key),
        Some(&json!({"left": {"clause_id": "deal#16"}, "right": {"text": DRAFT}})),
    );
    assert_eq!(reply.status, 400, "{}", reply.body);
}
