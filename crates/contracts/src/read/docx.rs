//! DOCX: the body of `word/document.xml`, one paragraph per `<w:p>`, tabs and line breaks kept.
//! Headers, footers and footnotes live in other parts of the package and are not contract text.
//! Word's automatic list numbering is not in the XML text and is not reconstructed.

use std::io::Read;
use std::path::Path;

use quick_xml::events::Event;

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
    let mut part = archive
        .by_name("word/document.xml")
        .map_err(|e| corrupt(format!("no word/document.xml: {e}")))?;
    let mut xml = Vec::new();
    (&mut part)
        .take(MAX_XML_BYTES)
        .read_to_end(&mut xml)
        .map_err(|e| corrupt(format!("cannot inflate word/document.xml: {e}")))?;
    drop(part);

    let mut reader = quick_xml::Reader::from_reader(xml.as_slice());
    let mut out = String::new();
    let mut in_text = false;
    let mut buf = Vec::new();
    loop {
        let event = reader.read_event_into(&mut buf).map_err(|e| {
            corrupt(format!(
                "word/document.xml at byte {}: {e}",
                reader.buffer_position()
            ))
        })?;
        match event {
            Event::Start(e) => match e.local_name().as_ref() {
                "t" => in_text = true,
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
