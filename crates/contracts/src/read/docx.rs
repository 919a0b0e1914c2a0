//! DOCX: the body of `word/document.xml`, one paragraph per `<w:p>`, tabs and line breaks kept.
//! Headers, footers and footnotes live in other parts of the package and are not contract text.
//! Word's automatic list numbering ("1.1", "(a)", "ARTICLE IV" from `numbering.xml` and the
//! paragraph styles) is not in the paragraph text; it is rendered back in front of each numbered
//! paragraph (`docx_numbering`), so that segmentation finds the sections.

use std::io::Read;
use std::path::Path;

use quick_xml::events::Event;

use super::docx_numbering::{attr, Numbering, ParagraphNumbering};
use super::ReadError;

/// Bound on the uncompressed size of `document.xml`: a zip bomb must not exhaust memory.
const MAX_XML_BYTES: u64 = 256 * 1024 * 1024;

pub(crate) fn read(path: &Path, bytes: &[u8]) -> Result<String, ReadError> {
    let corrupt = |reason: String| ReadError::Corrupt {
        path: path.to_path_buf(),
        format: "DOCX",
        reason,
    };
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(bytes))
        .map_err(|e| corrupt(format!("not a zip archive: {e}")))?;
    let xml = part_bytes(&mut archive, "word/document.xml")
        .map_err(|e| corrupt(format!("word/document.xml: {e}")))?
        .ok_or_else(|| corrupt("no word/document.xml".to_owned()))?;
    // Numbering and styles only add section labels: a damaged one costs the labels, not the
    // contract.
    let optional =
        |archive: &mut zip::ZipArchive<_>, name| part_bytes(archive, name).ok().flatten();
    let numbering_xml = optional(&mut archive, "word/numbering.xml");
    let styles_xml = optional(&mut archive, "word/styles.xml");
    let mut numbering = Numbering::new(numbering_xml.as_deref(), styles_xml.as_deref());

    let mut reader = quick_xml::Reader::from_reader(xml.as_slice());
    let mut out = String::new();
    let mut in_text = false;
    // The paragraph's numbering properties (read from its `w:pPr`, ignoring the previous
    // formatting a tracked change keeps in `w:pPrChange`) and the label they give, written
    // before the paragraph's first text so that an empty numbered paragraph leaves no stray
    // number.
    let mut paragraph = ParagraphNumbering::default();
    let (mut in_properties, mut in_change) = (false, false);
    let mut label: Option<String> = None;
    let mut buf = Vec::new();
    loop {
        let event = reader.read_event_into(&mut buf).map_err(|e| {
            corrupt(format!(
                "word/document.xml at byte {}: {e}",
                reader.buffer_position()
            ))
        })?;
        if let Event::Start(e) | Event::Empty(e) = &event {
            let name = e.local_name();
            match name.as_ref() {
                "p" => {
                    paragraph = ParagraphNumbering::default();
                    label = None;
                }
                "pPr" if !in_change => in_properties = matches!(event, Event::Start(_)),
                "pPrChange" => in_change = matches!(event, Event::Start(_)),
                "pStyle" | "numId" | "ilvl" if in_properties && !in_change => {
                    let value = attr(e, "val");
                    match name.as_ref() {
                        "pStyle" => paragraph.style = value,
                        "numId" => paragraph.num_id = value,
                        _ => paragraph.ilvl = value.and_then(|v| v.trim().parse().ok()),
                    }
                }
                _ => {}
            }
        }
        if let Event::End(e) = &event {
            match e.local_name().as_ref() {
                "pPr" if !in_change && in_properties => {
                    in_properties = false;
                    label = numbering.label(&paragraph);
                }
                "pPrChange" => in_change = false,
                _ => {}
            }
        }
        match event {
            Event::Start(e) => match e.local_name().as_ref() {
                "t" => {
                    in_text = true;
                    out.push_str(&label.take().unwrap_or_default());
                }
                "tab" => out.push('\t'),
                "br" | "cr" => out.push('\n'),
                _ => {}
            },
            Event::Empty(e) => match e.local_name().as_ref() {
                "tab" => out.push('\t'),
                "br" | "cr" => out.push('\n'),
                "p" => out.push_str("\n\n"),
                _ => {}
            },
            Event::End(e) => match e.local_name().as_ref() {
                "t" => in_text = false,
                "p" => out.push_str("\n\n"),
                "tc" => out.push(' '),
                _ => {}
            },
            Event::Text(t) if in_text => {
                out.push_str(&t.xml10_content());
            }
            Event::GeneralRef(r) if in_text => match r.resolve_char_ref() {
                Ok(Some(c)) => out.push(c),
                _ => {
                    out.push_str(resolve_entity(&r.xml10_content()));
                }
            },
            Event::Eof => break,
            _ => {}
        }
        buf.clear();
    }
    Ok(super::tidy_rendered(&out))
}

/// A part of the package, inflated up to [`MAX_XML_BYTES`]; `Ok(None)` when it is absent.
fn part_bytes<R: std::io::Read + std::io::Seek>(
    archive: &mut zip::ZipArchive<R>,
    name: &str,
) -> Result<Option<Vec<u8>>, String> {
    let mut part = match archive.by_name(name) {
        Ok(part) => part,
        Err(zip::result::ZipError::FileNotFound) => return Ok(None),
        Err(e) => return Err(e.to_string()),
    };
    let mut bytes = Vec::new();
    (&mut part)
        .take(MAX_XML_BYTES)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot inflate: {e}"))?;
    Ok(Some(bytes))
}

fn resolve_entity(name: &str) -> &str {
    match name {
        "amp" => "&",
        "lt" => "<",
        "gt" => ">",
        "quot" => "\"",
        "apos" => "'",
        _ => "",
    }
}
