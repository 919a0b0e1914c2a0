//! HTML (EDGAR exhibits): block elements become paragraphs, table cells are separated by spaces,
//! `<pre>` keeps its layout, scripts/styles/head are dropped, and so are the values of the SGML
//! header EDGAR wraps each exhibit in (`<TYPE>EX-10.13`, `<SEQUENCE>3`, `<FILENAME>0001.txt`,
//! `<DESCRIPTION>`): they name the filing's parts, and read as text they would open the contract
//! ("EX-10.1330001.txtPROMOTION AGREEMENT" became its title). Page numbers and repeated
//! headers that EDGAR filings carry as ordinary paragraphs are left to segmentation, which
//! recognises them as noise in every format.

use std::path::Path;

use ego_tree::iter::Edge;
use scraper::{Html, Node};

use super::ReadError;

pub(crate) fn read(_path: &Path, bytes: &[u8]) -> Result<String, ReadError> {
    let source = decode(bytes);
    let html = Html::parse_document(&source);
    let mut out = Renderer::default();
    for edge in html.tree.root().traverse() {
        match edge {
            Edge::Open(node) => match node.value() {
                Node::Element(element) => out.open(element.name()),
                Node::Text(text) => out.text(text),
                _ => {}
            },
            Edge::Close(node) => {
                if let Node::Element(element) = node.value() {
                    out.close(element.name());
                }
            }
        }
    }
    Ok(super::tidy_rendered(&out.text))
}

/// UTF-8 when valid, else the charset a `<meta>` declares, else Windows-1252 (what old EDGAR
/// filings use in practice).
fn decode(bytes: &[u8]) -> String {
    if let Some((encoding, bom_len)) = encoding_rs::Encoding::for_bom(bytes) {
        return encoding.decode(&bytes[bom_len..]).0.into_owned();
    }
    if let Ok(text) = std::str::from_utf8(bytes) {
        return text.to_string();
    }
    let head = String::from_utf8_lossy(&bytes[..bytes.len().min(4096)]).to_ascii_lowercase();
    let declared = head.find("charset=").and_then(|at| {
        let rest = head[at + 8..].trim_start_matches(['"', '\'']);
        let label: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
            .collect();
        encoding_rs::Encoding::for_label(label.as_bytes())
    });
    declared
        .unwrap_or(encoding_rs::WINDOWS_1252)
        .decode(bytes)
        .0
        .into_owned()
}

#[derive(Default)]
struct Renderer {
    text: String,
    /// Inside script/style/head: text is not content.
    hidden: usize,
    /// Inside `<pre>`: whitespace is layout.
    pre: usize,
    /// Just after an EDGAR header tag: the next text is its value, not content.
    header_value: bool,
}

/// EDGAR's SGML header tags, which hold one value each and are seldom closed (so their element
/// spans the document: only the text right after the tag is the value).
const EDGAR_HEADER: &[&str] = &["type", "sequence", "filename", "description"];

const HIDDEN: &[&str] = &["script", "style", "head", "title", "noscript", "template"];
const BLOCKS: &[&str] = &[
    "p",
    "div",
    "tr",
    "li",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "table",
    "section",
    "article",
    "blockquote",
    "pre",
    "center",
    "ul",
    "ol",
    "dl",
    "dt",
    "dd",
    "hr",
    "body",
    "page",
];

impl Renderer {
    fn open(&mut self, name: &str) {
        self.header_value = EDGAR_HEADER.contains(&name);
        if HIDDEN.contains(&name) {
            self.hidden += 1;
        } else if name == "pre" {
            self.pre += 1;
        }
        if name == "br" {
            self.text.push('\n');
        } else if name == "td" || name == "th" {
            self.space();
        } else if BLOCKS.contains(&name) {
            self.text.push_str("\n\n");
        }
    }

    fn close(&mut self, name: &str) {
        self.header_value = false;
        if HIDDEN.contains(&name) {
            self.hidden = self.hidden.saturating_sub(1);
        } else if name == "pre" {
            self.pre = self.pre.saturating_sub(1);
        }
        if name == "td" || name == "th" {
            self.space();
        } else if BLOCKS.contains(&name) {
            self.text.push_str("\n\n");
        }
    }

    fn space(&mut self) {
        if !self.text.ends_with([' ', '\n']) && !self.text.is_empty() {
            self.text.push(' ');
        }
    }

    fn text(&mut self, text: &str) {
        if std::mem::take(&mut self.header_value) || self.hidden > 0 {
            return;
        }
        if self.pre > 0 {
            self.text.push_str(&text.replace('\u{a0}', " "));
            return;
        }
        for (i, word) in text.split(|c: char| c.is_whitespace()).enumerate() {
            if i > 0 {
                self.space();
            }
            self.text.push_str(word);
        }
    }
}
