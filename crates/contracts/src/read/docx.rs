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

/// Bound on the uncompressed size of each XML part read (`document.xml`, numbering, styles): a
/// zip bomb must not exhaust memory. A part that inflates past it is refused as too large
/// ([`ReadError::InflatesTooLarge`]), never read cut short.
pub const MAX_XML_BYTES: u64 = 256 * 1024 * 1024;

pub(crate) fn read(path: &Path, bytes: &[u8]) -> Result<String, ReadError> {
    read_limited(path, bytes, MAX_XML_BYTES)
}

fn read_limited(path: &Path, bytes: &[u8], max_part_bytes: u64) -> Result<String, ReadError> {
    let corrupt = |reason: String| ReadError::Corrupt {
        path: path.to_path_buf(),
        format: "DOCX",
        reason,
    };
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(bytes))
        .map_err(|e| corrupt(format!("not a zip archive: {e}")))?;
    let xml = part_bytes(&mut archive, "word/document.xml", max_part_bytes)
        .map_err(|e| match e {
            PartError::TooLarge => ReadError::InflatesTooLarge {
                path: path.to_path_buf(),
                part: "word/document.xml",
                limit: max_part_bytes,
            },
            PartError::Broken(reason) => corrupt(format!("word/document.xml: {reason}")),
        })?
        .ok_or_else(|| corrupt("no word/document.xml".to_owned()))?;
    // Numbering and styles only add section labels: a damaged one costs the labels, not the
    // contract.
    let optional = |archive: &mut zip::ZipArchive<_>, name| {
        part_bytes(archive, name, max_part_bytes).ok().flatten()
    };
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

/// Why a part of the package could not be had.
enum PartError {
    /// It inflates to more than the limit.
    TooLarge,
    Broken(String),
}

/// A part of the package, inflated; `Ok(None)` when it is absent, [`PartError::TooLarge`] when
/// it inflates past `max_part_bytes` (read one byte further to tell "exactly at the limit"
/// from "over it", and no further).
fn part_bytes<R: std::io::Read + std::io::Seek>(
    archive: &mut zip::ZipArchive<R>,
    name: &str,
    max_part_bytes: u64,
) -> Result<Option<Vec<u8>>, PartError> {
    let mut part = match archive.by_name(name) {
        Ok(part) => part,
        Err(zip::result::ZipError::FileNotFound) => return Ok(None),
        Err(e) => return Err(PartError::Broken(e.to_string())),
    };
    let mut bytes = Vec::new();
    (&mut part)
        .take(max_part_bytes.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| PartError::Broken(format!("cannot inflate: {e}")))?;
    if bytes.len() as u64 > max_part_bytes {
        return Err(PartError::TooLarge);
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// A DOCX whose `word/document.xml` holds one paragraph of `chars` letters: a few KiB
    /// compressed however large it inflates, as in a zip bomb.
    fn docx_of(chars: usize) -> Vec<u8> {
        let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated);
        zip.start_file("word/document.xml", options).expect("start");
        zip.write_all(b"<w:document><w:body><w:p><w:r><w:t>")
            .expect("write");
        zip.write_all(&vec![b'a'; chars]).expect("write");
        zip.write_all(b"</w:t></w:r></w:p></w:body></w:document>")
            .expect("write");
        zip.finish().expect("finish").into_inner()
    }

    #[test]
    fn a_part_inflating_past_the_limit_is_too_large_not_broken() {
        let path = Path::new("bomb.docx");
        let bytes = docx_of(3 << 20);
        assert!(bytes.len() < 64 * 1024, "{} bytes", bytes.len());
        // Not a truncated text nor an XML error at the cut: an error that says why.
        let Err(err) = read_limited(path, &bytes, 1 << 20) else {
            panic!("a part over the limit was read");
        };
        assert!(matches!(err, ReadError::InflatesTooLarge { .. }), "{err:?}");
        let message = err.to_string();
        assert!(message.contains("too large"), "{message}");
        assert!(message.contains("1 MiB"), "{message}");
        assert!(message.contains("word/document.xml"), "{message}");
        // Under the limit the same document reads.
        let text = read_limited(path, &docx_of(1000), 1 << 20).expect("small enough");
        assert_eq!(text.trim().len(), 1000);
    }
}
