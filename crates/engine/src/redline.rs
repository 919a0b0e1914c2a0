//! A comparison as a Word redline: a DOCX whose differences are real tracked changes
//! (`w:ins` / `w:del`), so Word and LibreOffice open them as revisions the lawyer accepts or
//! rejects one by one, as they would a colleague's mark-up.
//!
//! The left side is the original (the precedent clause), the right side the revision (the
//! lawyer's draft). Accepting every change gives the right text exactly; rejecting every change
//! gives the left text (with the right side's capitals and spacing where the comparison ignored
//! them: those runs are written as the draft writes them). The document turns on change tracking
//! (`w:trackRevisions`), so what the lawyer edits next is tracked too.

use std::io::{Cursor, Write};

use crate::compare::{Change, DiffRun};

/// Who the revisions are attributed to in Word's review pane.
pub const AUTHOR: &str = "Precedent";

/// The media type of what [`redline_docx`] writes.
pub const DOCX_MEDIA_TYPE: &str =
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document";

/// What the redline says above the marked-up text.
#[derive(Debug, Clone, Default)]
pub struct RedlineHeading {
    /// A title, e.g. "Limitation of liability: precedent against my draft".
    pub title: String,
    /// Lines under the title: where each side comes from (a citation, "your draft").
    pub notes: Vec<String>,
}

/// Writes `runs` (from [`crate::compare::word_diff`]) as a DOCX with tracked changes.
pub fn redline_docx(runs: &[DiffRun], heading: &RedlineHeading) -> std::io::Result<Vec<u8>> {
    let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    let parts: [(&str, String); 6] = [
        ("[Content_Types].xml", CONTENT_TYPES.to_owned()),
        ("_rels/.rels", PACKAGE_RELS.to_owned()),
        ("word/_rels/document.xml.rels", DOCUMENT_RELS.to_owned()),
        ("word/settings.xml", SETTINGS.to_owned()),
        ("docProps/core.xml", core_properties(&heading.title)),
        ("word/document.xml", document_xml(runs, heading)),
    ];
    for (name, content) in parts {
        zip.start_file(name, options)
            .map_err(std::io::Error::other)?;
        zip.write_all(content.as_bytes())?;
    }
    Ok(zip.finish().map_err(std::io::Error::other)?.into_inner())
}

/// The body: the heading's paragraphs, then the compared text, one paragraph per blank-line
/// separated block of the texts. A change that spans paragraphs is split at each break, each
/// piece its own revision, so every paragraph stays well formed.
fn document_xml(runs: &[DiffRun], heading: &RedlineHeading) -> String {
    let mut body = String::new();
    if !heading.title.is_empty() {
        body.push_str("<w:p><w:pPr><w:pStyle w:val=\"Title\"/></w:pPr><w:r><w:rPr><w:b/><w:sz w:val=\"28\"/></w:rPr>");
        push_text(&mut body, "w:t", &heading.title);
        body.push_str("</w:r></w:p>");
    }
    for note in &heading.notes {
        body.push_str("<w:p><w:r><w:rPr><w:i/></w:rPr>");
        push_text(&mut body, "w:t", note);
        body.push_str("</w:r></w:p>");
    }
    let mut revision = 0u32;
    body.push_str("<w:p>");
    for run in runs {
        let text = match (run.change, &run.right_text) {
            (Change::Equal, Some(right)) => right.as_str(),
            _ => run.text.as_str(),
        };
        for (i, piece) in text.split("\n\n").enumerate() {
            if i > 0 {
                body.push_str("</w:p><w:p>");
            }
            if piece.is_empty() {
                continue;
            }
            match run.change {
                Change::Equal => {
                    body.push_str("<w:r>");
                    push_text(&mut body, "w:t", piece);
                    body.push_str("</w:r>");
                }
                Change::Delete | Change::Insert => {
                    revision += 1;
                    let (tag, text_tag) = if run.change == Change::Delete {
                        ("w:del", "w:delText")
                    } else {
                        ("w:ins", "w:t")
                    };
                    body.push_str(&format!(
                        "<{tag} w:id=\"{revision}\" w:author=\"{AUTHOR}\"><w:r>"
                    ));
                    push_text(&mut body, text_tag, piece);
                    body.push_str(&format!("</w:r></{tag}>"));
                }
            }
        }
    }
    body.push_str("</w:p>");
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n<w:document xmlns:w=\"http://schemas.openxmlformats.org/wordprocessingml/2006/main\"><w:body>{body}<w:sectPr/></w:body></w:document>"
    )
}

/// Appends `text` as `<tag>` elements of a run: single line breaks become `w:br`, tabs `w:tab`,
/// XML's special characters are escaped, and characters XML cannot carry (other control
/// characters) are dropped.
fn push_text(out: &mut String, tag: &str, text: &str) {
    let mut open = false;
    let start = |out: &mut String, open: &mut bool| {
        if !*open {
            out.push_str(&format!("<{tag} xml:space=\"preserve\">"));
            *open = true;
        }
    };
    let close = |out: &mut String, open: &mut bool| {
        if *open {
            out.push_str(&format!("</{tag}>"));
            *open = false;
        }
    };
    for c in text.chars() {
        match c {
            '\n' => {
                close(out, &mut open);
                out.push_str("<w:br/>");
            }
            '\t' => {
                close(out, &mut open);
                out.push_str("<w:tab/>");
            }
            '\r' => {}
            c if c.is_control() => {}
            '&' => {
                start(out, &mut open);
                out.push_str("&amp;");
            }
            '<' => {
                start(out, &mut open);
                out.push_str("&lt;");
            }
            '>' => {
                start(out, &mut open);
                out.push_str("&gt;");
            }
            '"' => {
                start(out, &mut open);
                out.push_str("&quot;");
            }
            c => {
                start(out, &mut open);
                out.push(c);
            }
        }
    }
    close(out, &mut open);
}

fn core_properties(title: &str) -> String {
    let mut escaped = String::new();
    push_text(&mut escaped, "dc:title", title);
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n<cp:coreProperties xmlns:cp=\"http://schemas.openxmlformats.org/package/2006/metadata/core-properties\" xmlns:dc=\"http://purl.org/dc/elements/1.1/\">{escaped}<dc:creator>{AUTHOR}</dc:creator></cp:coreProperties>"
    )
}

const CONTENT_TYPES: &str = "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n<Types xmlns=\"http://schemas.openxmlformats.org/package/2006/content-types\"><Default Extension=\"rels\" ContentType=\"application/vnd.openxmlformats-package.relationships+xml\"/><Default Extension=\"xml\" ContentType=\"application/xml\"/><Override PartName=\"/word/document.xml\" ContentType=\"application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml\"/><Override PartName=\"/word/settings.xml\" ContentType=\"application/vnd.openxmlformats-officedocument.wordprocessingml.settings+xml\"/><Override PartName=\"/docProps/core.xml\" ContentType=\"application/vnd.openxmlformats-package.core-properties+xml\"/></Types>";

const PACKAGE_RELS: &str = "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n<Relationships xmlns=\"http://schemas.openxmlformats.org/package/2006/relationships\"><Relationship Id=\"rId1\" Type=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument\" Target=\"word/document.xml\"/><Relationship Id=\"rId2\" Type=\"http://schemas.openxmlformats.org/package/2006/relationships/metadata/core-properties\" Target=\"docProps/core.xml\"/></Relationships>";

const DOCUMENT_RELS: &str = "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n<Relationships xmlns=\"http://schemas.openxmlformats.org/package/2006/relationships\"><Relationship Id=\"rId1\" Type=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships/settings\" Target=\"settings.xml\"/></Relationships>";

const SETTINGS: &str = "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n<w:settings xmlns:w=\"http://schemas.openxmlformats.org/wordprocessingml/2006/main\"><w:trackRevisions/></w:settings>";

#[cfg(test)]
mod tests {
    use std::io::Read;

    use super::*;
    use crate::compare::{word_diff, DiffOptions};

    fn part(docx: &[u8], name: &str) -> String {
        let mut zip = zip::ZipArchive::new(Cursor::new(docx)).expect("a zip");
        let mut out = String::new();
        zip.by_name(name)
            .expect("part present")
            .read_to_string(&mut out)
            .expect("utf-8");
        out
    }

    #[test]
    fn differences_become_tracked_insertions_and_deletions() {
        let left = "The Company shall not be liable for indirect damages.\n\nThis cap applies to R&D <fees>.";
        let right = "The Supplier shall not be liable for any indirect damages.\n\nThis cap applies to R&D <fees>.";
        let (runs, _) = word_diff(
            left,
            right,
            DiffOptions {
                ignore_case: true,
                ignore_whitespace: true,
            },
        );
        let heading = RedlineHeading {
            title: "Cap on liability: precedent & draft".into(),
            notes: vec!["Left: § 16.B of a contract".into()],
        };
        let docx = redline_docx(&runs, &heading).expect("written");
        let doc = part(&docx, "word/document.xml");
        assert!(doc.contains("w:author=\"Precedent\""), "{doc}");
        assert!(
            doc.contains("<w:del w:id=\"1\" w:author=\"Precedent\"><w:r><w:delText xml:space=\"preserve\">Company "),
            "{doc}"
        );
        assert!(doc.contains("<w:ins w:id=\"2\""), "{doc}");
        assert!(doc.contains(">Supplier </w:t>"), "{doc}");
        // Escaped, and the blank line is a new paragraph.
        assert!(doc.contains("R&amp;D &lt;fees&gt;."), "{doc}");
        assert!(doc.contains("precedent &amp; draft"), "{doc}");
        assert_eq!(doc.matches("<w:p>").count(), 4, "{doc}");
        assert!(part(&docx, "word/settings.xml").contains("<w:trackRevisions/>"));
        assert!(part(&docx, "[Content_Types].xml").contains("/word/document.xml"));
        // Accepting every change spells the draft: the text outside w:del.
        let accepted: String = doc
            .split("<w:del ")
            .enumerate()
            .map(|(i, piece)| {
                if i == 0 {
                    piece
                } else {
                    piece.split_once("</w:del>").map_or("", |(_, rest)| rest)
                }
            })
            .collect::<String>()
            .split("<w:t xml:space=\"preserve\">")
            .skip(1)
            .map(|s| s.split("</w:t>").next().unwrap_or(""))
            .collect();
        assert!(
            accepted.ends_with("The Supplier shall not be liable for any indirect damages.This cap applies to R&amp;D &lt;fees&gt;."),
            "{accepted}"
        );
    }

    #[test]
    fn control_characters_cannot_break_the_xml() {
        let runs = vec![DiffRun {
            change: Change::Insert,
            text: "a\u{0}b\u{1b}c\td\re\nf".into(),
            right_text: None,
        }];
        let docx = redline_docx(&runs, &RedlineHeading::default()).expect("written");
        let doc = part(&docx, "word/document.xml");
        assert!(doc.contains(">abc</w:t><w:tab/><w:t xml:space=\"preserve\">de</w:t><w:br/><w:t xml:space=\"preserve\">f</w:t>"), "{doc}");
        assert!(!doc.contains('\u{0}') && !doc.contains('\u{1b}'));
    }
}
