//! A minimal Word document (DOCX) writer: the package parts Word and LibreOffice need, and a
//! body built from paragraphs, headings, tables and raw runs. The redline ([`crate::redline`])
//! and the engine's review report (`precedent_engine::review::report_docx`) are written with it.

use std::io::{Cursor, Write};

/// The media type of a DOCX.
pub const DOCX_MEDIA_TYPE: &str =
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document";

/// Who made the document (core properties) and whom revisions are attributed to.
pub const AUTHOR: &str = "Precedent";

/// The body of a document under construction (`w:body`'s children).
#[derive(Debug, Default, Clone)]
pub struct Body {
    xml: String,
}

impl Body {
    pub fn new() -> Self {
        Body::default()
    }

    /// A heading: level 0 is the title, 1 and 2 section headings (bold, larger).
    pub fn heading(&mut self, text: &str, level: u8) -> &mut Self {
        let size = match level {
            0 => 32,
            1 => 26,
            _ => 22,
        };
        self.xml.push_str(&format!(
            "<w:p><w:pPr><w:keepNext/><w:spacing w:before=\"240\" w:after=\"120\"/></w:pPr><w:r><w:rPr><w:b/><w:sz w:val=\"{size}\"/></w:rPr>"
        ));
        push_text(&mut self.xml, "w:t", text);
        self.xml.push_str("</w:r></w:p>");
        self
    }

    /// A paragraph of plain text (line breaks kept).
    pub fn paragraph(&mut self, text: &str) -> &mut Self {
        self.xml.push_str("<w:p><w:r>");
        push_text(&mut self.xml, "w:t", text);
        self.xml.push_str("</w:r></w:p>");
        self
    }

    /// A paragraph in italics (notes, provenance).
    pub fn note(&mut self, text: &str) -> &mut Self {
        self.xml.push_str("<w:p><w:r><w:rPr><w:i/></w:rPr>");
        push_text(&mut self.xml, "w:t", text);
        self.xml.push_str("</w:r></w:p>");
        self
    }

    /// A table with a bold header row and bordered cells.
    pub fn table(&mut self, header: &[&str], rows: &[Vec<String>]) -> &mut Self {
        self.xml.push_str("<w:tbl><w:tblPr><w:tblStyle w:val=\"TableGrid\"/><w:tblW w:w=\"5000\" w:type=\"pct\"/><w:tblBorders>");
        for side in ["top", "left", "bottom", "right", "insideH", "insideV"] {
            self.xml.push_str(&format!(
                "<w:{side} w:val=\"single\" w:sz=\"4\" w:space=\"0\" w:color=\"999999\"/>"
            ));
        }
        self.xml.push_str("</w:tblBorders></w:tblPr>");
        let mut row = |cells: &mut dyn Iterator<Item = &str>, bold: bool| {
            self.xml.push_str("<w:tr>");
            for cell in cells {
                self.xml.push_str("<w:tc><w:p><w:r>");
                if bold {
                    self.xml.push_str("<w:rPr><w:b/></w:rPr>");
                }
                push_text(&mut self.xml, "w:t", cell);
                self.xml.push_str("</w:r></w:p></w:tc>");
            }
            self.xml.push_str("</w:tr>");
        };
        row(&mut header.iter().copied(), true);
        for cells in rows {
            row(&mut cells.iter().map(String::as_str), false);
        }
        self.xml.push_str("</w:tbl><w:p/>");
        self
    }

    /// Raw WordprocessingML appended as is (the caller escapes text with [`push_text`]).
    pub fn raw(&mut self, xml: &str) -> &mut Self {
        self.xml.push_str(xml);
        self
    }

    /// The package: `title` in the core properties, change tracking on when `track_changes`.
    pub fn into_docx(self, title: &str, track_changes: bool) -> std::io::Result<Vec<u8>> {
        let document = format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n<w:document xmlns:w=\"http://schemas.openxmlformats.org/wordprocessingml/2006/main\"><w:body>{}<w:sectPr/></w:body></w:document>",
            self.xml
        );
        let settings = format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n<w:settings xmlns:w=\"http://schemas.openxmlformats.org/wordprocessingml/2006/main\">{}</w:settings>",
            if track_changes { "<w:trackRevisions/>" } else { "" }
        );
        let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated);
        let parts: [(&str, String); 6] = [
            ("[Content_Types].xml", CONTENT_TYPES.to_owned()),
            ("_rels/.rels", PACKAGE_RELS.to_owned()),
            ("word/_rels/document.xml.rels", DOCUMENT_RELS.to_owned()),
            ("word/settings.xml", settings),
            ("docProps/core.xml", core_properties(title)),
            ("word/document.xml", document),
        ];
        for (name, content) in parts {
            zip.start_file(name, options)
                .map_err(std::io::Error::other)?;
            zip.write_all(content.as_bytes())?;
        }
        Ok(zip.finish().map_err(std::io::Error::other)?.into_inner())
    }
}

/// Appends `text` as `<tag>` elements of a run: single line breaks become `w:br`, tabs `w:tab`,
/// XML's special characters are escaped, and characters XML cannot carry (other control
/// characters) are dropped.
pub fn push_text(out: &mut String, tag: &str, text: &str) {
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
