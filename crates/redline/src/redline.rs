//! A comparison as a Word redline: a DOCX whose differences are real tracked changes
//! (`w:ins` / `w:del`), so Word and LibreOffice open them as revisions the lawyer accepts or
//! rejects one by one, as they would a colleague's mark-up.
//!
//! The left side is the original (the precedent clause), the right side the revision (the
//! lawyer's draft). Accepting every change gives the right text exactly; rejecting every change
//! gives the left text (with the right side's capitals and spacing where the comparison ignored
//! them: those runs are written as the draft writes them). The document turns on change tracking
//! (`w:trackRevisions`), so what the lawyer edits next is tracked too.

use crate::compare::{Change, DiffRun};
use crate::docx::{push_text, Body, AUTHOR};

pub use crate::docx::DOCX_MEDIA_TYPE;

/// What the redline says above the marked-up text.
#[derive(Debug, Clone, Default)]
pub struct RedlineHeading {
    /// A title, e.g. "Limitation of liability: precedent against my draft".
    pub title: String,
    /// Lines under the title: where each side comes from (a citation, "your draft").
    pub notes: Vec<String>,
}

impl RedlineHeading {
    /// The heading every face gives a comparison: the revision against the original, both
    /// named, and the share of words in common.
    pub fn for_sides(original: &str, revision: &str, similarity: f32) -> Self {
        RedlineHeading {
            title: format!("Redline: {revision} against {original}"),
            notes: vec![
                format!("Original: {original}"),
                format!("Revision: {revision}"),
                format!("Words in common: {:.0}%", similarity * 100.0),
            ],
        }
    }
}

/// Writes `runs` (from [`crate::compare::word_diff`]) as a DOCX with tracked changes.
pub fn redline_docx(runs: &[DiffRun], heading: &RedlineHeading) -> std::io::Result<Vec<u8>> {
    let mut body = Body::new();
    if !heading.title.is_empty() {
        body.heading(&heading.title, 0);
    }
    for note in &heading.notes {
        body.note(note);
    }
    body.raw(&compared_paragraphs(runs));
    body.into_docx(&heading.title, true)
}

/// The compared text, one paragraph per blank-line separated block of the texts. A change that spans paragraphs is split at each break, each
/// piece its own revision, so every paragraph stays well formed.
fn compared_paragraphs(runs: &[DiffRun]) -> String {
    let mut body = String::new();
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
    body
}

#[cfg(test)]
mod tests {
    use std::io::{Cursor, Read};

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
