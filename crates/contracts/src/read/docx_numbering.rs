//! Word's automatic list numbering, rendered back into the text.
//!
//! Most contracts drafted in Word number their sections with list numbering ("1.", "1.1",
//! "(a)", "ARTICLE IV") that lives in `word/numbering.xml`, not in the paragraph text. Without it
//! a DOCX contract reads as unnumbered paragraphs: segmentation cannot find its sections and
//! cross-references ("as set forth in Section 9.2") point nowhere. So the reader renders each
//! numbered paragraph's label as Word would and puts it in front of the paragraph's text.
//!
//! What is modelled (ECMA-376 Part 1, §17.9): paragraph numbering (`w:numPr`) given directly or
//! through the paragraph's style and the styles it is based on; levels' `w:start`, `w:numFmt`,
//! `w:lvlText` (`%1.%2`), `w:isLgl`, `w:lvlRestart`, `w:suff`; numbering instances (`w:num`) with
//! `w:lvlOverride`/`w:startOverride`; `w:numStyleLink` to a numbering style. Counters belong to
//! the abstract definition, so instances sharing one continue each other's count unless an
//! override restarts them, as Word does. Bullets are dropped: they carry no section number.
//! A numbering part Word could not open either is ignored rather than failing the contract: the
//! text is what matters, the labels only help segmentation.

use std::collections::HashMap;

use quick_xml::events::{BytesStart, Event};

/// Deepest list level Word supports (`w:ilvl` 0..=8).
const LEVELS: usize = 9;

#[derive(Clone, Debug, Default)]
struct Level {
    start: u32,
    format: String,
    text: Option<String>,
    legal: bool,
    /// `w:lvlRestart`: restart after a use of this (1-based) level or a higher one; 0: never.
    restart: Option<u32>,
    suffix: String,
    /// The paragraph style this level is bound to (`w:pStyle` inside `w:lvl`).
    style: Option<String>,
}

#[derive(Clone, Debug, Default)]
struct Abstract {
    levels: [Option<Level>; LEVELS],
    /// `w:numStyleLink`: the levels live in the numbering style of this id.
    style_link: Option<String>,
}

#[derive(Clone, Debug, Default)]
struct Instance {
    abstract_id: String,
    start_overrides: [Option<u32>; LEVELS],
    level_overrides: [Option<Level>; LEVELS],
}

#[derive(Clone, Debug, Default)]
struct Style {
    based_on: Option<String>,
    num_id: Option<String>,
    ilvl: Option<usize>,
}

/// The paragraph properties that decide numbering, as read from one `w:pPr`.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct ParagraphNumbering {
    pub style: Option<String>,
    pub num_id: Option<String>,
    pub ilvl: Option<usize>,
}

/// Numbering definitions and styles of one document, and the running counters.
#[derive(Debug, Default)]
pub(crate) struct Numbering {
    abstracts: HashMap<String, Abstract>,
    instances: HashMap<String, Instance>,
    styles: HashMap<String, Style>,
    counters: HashMap<String, [Option<u32>; LEVELS]>,
    /// Instances already used: their start overrides apply at first use only.
    started: std::collections::HashSet<String>,
}

/// The value of attribute `name` (any namespace prefix), unescaped.
pub(crate) fn attr(e: &BytesStart, name: &str) -> Option<String> {
    e.attributes()
        .flatten()
        .find(|a| a.key.local_name().as_ref() == name)
        .and_then(|a| {
            a.normalized_value(quick_xml::XmlVersion::Implicit1_0)
                .ok()
                .map(|v| v.into_owned())
        })
}

fn number(e: &BytesStart) -> Option<u32> {
    attr(e, "val").and_then(|v| v.trim().parse().ok())
}

fn truthy(e: &BytesStart) -> bool {
    attr(e, "val").is_none_or(|v| !matches!(v.as_str(), "0" | "false" | "off"))
}

impl Numbering {
    /// Reads `word/numbering.xml` and `word/styles.xml` (either may be absent: `None`). A part
    /// that does not parse contributes what was read before the error.
    pub(crate) fn new(numbering_xml: Option<&[u8]>, styles_xml: Option<&[u8]>) -> Numbering {
        let mut numbering = Numbering::default();
        if let Some(xml) = styles_xml {
            numbering.read_styles(xml);
        }
        if let Some(xml) = numbering_xml {
            numbering.read_numbering(xml);
        }
        numbering
    }

    fn read_styles(&mut self, xml: &[u8]) {
        let mut reader = quick_xml::Reader::from_reader(xml);
        let mut buf = Vec::new();
        let mut current: Option<(String, Style)> = None;
        while let Ok(event) = reader.read_event_into(&mut buf) {
            match event {
                Event::Start(e) | Event::Empty(e) => match e.local_name().as_ref() {
                    "style" => {
                        if let Some((id, style)) = current.take() {
                            self.styles.insert(id, style);
                        }
                        current = attr(&e, "styleId").map(|id| (id, Style::default()));
                    }
                    "basedOn" => {
                        if let Some((_, style)) = current.as_mut() {
                            style.based_on = attr(&e, "val");
                        }
                    }
                    "numId" => {
                        if let Some((_, style)) = current.as_mut() {
                            style.num_id = attr(&e, "val");
                        }
                    }
                    "ilvl" => {
                        if let Some((_, style)) = current.as_mut() {
                            style.ilvl = number(&e).map(|l| l as usize);
                        }
                    }
                    _ => {}
                },
                Event::End(e) if e.local_name().as_ref() == "style" => {
                    if let Some((id, style)) = current.take() {
                        self.styles.insert(id, style);
                    }
                }
                Event::Eof => break,
                _ => {}
            }
            buf.clear();
        }
    }

    fn read_numbering(&mut self, xml: &[u8]) {
        let mut reader = quick_xml::Reader::from_reader(xml);
        let mut buf = Vec::new();
        let mut abstract_: Option<(String, Abstract)> = None;
        let mut instance: Option<(String, Instance)> = None;
        // The level being read, and where it goes: its index and whether it is an override.
        let mut level: Option<(usize, Level)> = None;
        let mut override_level: Option<usize> = None;
        while let Ok(event) = reader.read_event_into(&mut buf) {
            let (e, is_start) = match &event {
                Event::Start(e) => (Some(e.clone()), true),
                Event::Empty(e) => (Some(e.clone()), false),
                Event::End(end) => {
                    match end.local_name().as_ref() {
                        "abstractNum" => {
                            if let Some((id, a)) = abstract_.take() {
                                self.abstracts.insert(id, a);
                            }
                        }
                        "num" => {
                            if let Some((id, n)) = instance.take() {
                                self.instances.insert(id, n);
                            }
                        }
                        "lvl" => {
                            if let Some((ilvl, l)) = level.take() {
                                if let Some((_, n)) = instance.as_mut() {
                                    n.level_overrides[ilvl] = Some(l);
                                } else if let Some((_, a)) = abstract_.as_mut() {
                                    a.levels[ilvl] = Some(l);
                                }
                            }
                        }
                        "lvlOverride" => override_level = None,
                        _ => {}
                    }
                    (None, false)
                }
                Event::Eof => break,
                _ => (None, false),
            };
            let Some(e) = e else {
                buf.clear();
                continue;
            };
            match e.local_name().as_ref() {
                "abstractNum" if is_start => {
                    abstract_ = attr(&e, "abstractNumId").map(|id| (id, Abstract::default()));
                }
                "num" if is_start => {
                    instance = attr(&e, "numId").map(|id| (id, Instance::default()));
                }
                "abstractNumId" => {
                    if let (Some((_, n)), Some(id)) = (instance.as_mut(), attr(&e, "val")) {
                        n.abstract_id = id;
                    }
                }
                "lvlOverride" if is_start => {
                    override_level = number_attr(&e, "ilvl")
                        .map(|l| l as usize)
                        .filter(|&l| l < LEVELS);
                }
                "startOverride" => {
                    if let (Some((_, n)), Some(l)) = (instance.as_mut(), override_level) {
                        n.start_overrides[l] = number(&e);
                    }
                }
                "lvl" if is_start => {
                    level = number_attr(&e, "ilvl")
                        .map(|l| l as usize)
                        .filter(|&l| l < LEVELS)
                        .map(|l| {
                            (
                                l,
                                Level {
                                    start: 1,
                                    format: "decimal".into(),
                                    suffix: "tab".into(),
                                    ..Level::default()
                                },
                            )
                        });
                }
                "numStyleLink" => {
                    if let Some((_, a)) = abstract_.as_mut() {
                        a.style_link = attr(&e, "val");
                    }
                }
                name => {
                    if let Some((_, l)) = level.as_mut() {
                        match name {
                            "start" => l.start = number(&e).unwrap_or(1),
                            "numFmt" => l.format = attr(&e, "val").unwrap_or_default(),
                            "lvlText" => l.text = attr(&e, "val"),
                            "isLgl" => l.legal = truthy(&e),
                            "lvlRestart" => l.restart = number(&e),
                            "suff" => l.suffix = attr(&e, "val").unwrap_or_default(),
                            "pStyle" => l.style = attr(&e, "val"),
                            _ => {}
                        }
                    }
                }
            }
            buf.clear();
        }
    }

    /// The numbering properties a style gives, following `w:basedOn` (bounded: style chains
    /// can be circular in damaged files).
    fn style_numbering(&self, style: &str) -> (Option<String>, Option<usize>) {
        let mut id = Some(style.to_owned());
        let (mut num_id, mut ilvl) = (None, None);
        for _ in 0..16 {
            let Some(s) = id.as_deref().and_then(|i| self.styles.get(i)) else {
                break;
            };
            num_id = num_id.or_else(|| s.num_id.clone());
            ilvl = ilvl.or(s.ilvl);
            id = s.based_on.clone();
        }
        (num_id, ilvl)
    }

    /// The abstract definition behind an instance, through a numbering-style link if any.
    fn abstract_of(&self, instance: &Instance) -> Option<(String, &Abstract)> {
        let mut id = instance.abstract_id.clone();
        for _ in 0..4 {
            let a = self.abstracts.get(&id)?;
            let Some(link) = &a.style_link else {
                return Some((id, a));
            };
            let (num_id, _) = self.style_numbering(link);
            let linked = self.instances.get(&num_id?)?;
            if linked.abstract_id == id {
                return Some((id, a));
            }
            id = linked.abstract_id.clone();
        }
        None
    }

    /// The label of the next paragraph with these properties ("1.1", "(a)", "ARTICLE IV"), or
    /// `None` when it is not numbered (or is a bullet). Advances the counters.
    pub(crate) fn label(&mut self, paragraph: &ParagraphNumbering) -> Option<String> {
        let (style_num, style_ilvl) = match &paragraph.style {
            Some(s) => self.style_numbering(s),
            None => (None, None),
        };
        let num_id = paragraph.num_id.clone().or(style_num)?;
        if num_id == "0" {
            return None;
        }
        let instance = self.instances.get(&num_id)?.clone();
        let (abstract_id, definition) = self.abstract_of(&instance)?;
        let levels: [Option<Level>; LEVELS] = std::array::from_fn(|l| {
            instance.level_overrides[l]
                .clone()
                .or_else(|| definition.levels[l].clone())
        });
        // A heading style bound to a level names it; otherwise the style's or paragraph's ilvl.
        let bound = paragraph.style.as_ref().and_then(|s| {
            levels
                .iter()
                .position(|l| l.as_ref().and_then(|l| l.style.as_ref()) == Some(s))
        });
        let ilvl = paragraph
            .ilvl
            .or(style_ilvl)
            .or(bound)
            .unwrap_or(0)
            .min(LEVELS - 1);
        let level = levels[ilvl].clone()?;

        let counters = self.counters.entry(abstract_id).or_insert([None; LEVELS]);
        if self.started.insert(num_id) {
            for (l, start) in instance.start_overrides.iter().enumerate() {
                if let Some(start) = start {
                    counters[l] = Some(start.saturating_sub(1));
                    for deeper in counters.iter_mut().skip(l + 1) {
                        *deeper = None;
                    }
                }
            }
        }
        let next = counters[ilvl].map_or(level.start, |c| c.saturating_add(1));
        counters[ilvl] = Some(next);
        for (deeper, counter) in counters.iter_mut().enumerate().skip(ilvl + 1) {
            // Deeper levels restart after a higher one, unless lvlRestart says otherwise.
            let restarts = match levels[deeper].as_ref().and_then(|l| l.restart) {
                Some(0) => false,
                Some(r) => ilvl < r as usize,
                None => true,
            };
            if restarts {
                *counter = None;
            }
        }
        if level.format == "bullet" {
            return None;
        }
        let template = level.text.clone().unwrap_or_default();
        let mut label = String::new();
        let mut chars = template.chars().peekable();
        while let Some(c) = chars.next() {
            let digit = chars.peek().and_then(|d| d.to_digit(10));
            match (c, digit) {
                ('%', Some(d)) if (1..=LEVELS as u32).contains(&d) => {
                    chars.next();
                    let l = d as usize - 1;
                    let value = counters[l]
                        .or_else(|| levels[l].as_ref().map(|x| x.start))
                        .unwrap_or(1);
                    let format = if level.legal {
                        "decimal"
                    } else {
                        levels[l].as_ref().map_or("decimal", |x| x.format.as_str())
                    };
                    label.push_str(&format_number(value, format));
                }
                _ => label.push(c),
            }
        }
        let label = label.trim().to_owned();
        if label.is_empty() {
            return None;
        }
        Some(match level.suffix.as_str() {
            "nothing" => label,
            _ => label + " ",
        })
    }
}

fn number_attr(e: &BytesStart, name: &str) -> Option<u32> {
    attr(e, name).and_then(|v| v.trim().parse().ok())
}

/// A counter in a `w:numFmt` format; unknown formats fall back to decimal.
fn format_number(n: u32, format: &str) -> String {
    match format {
        "lowerLetter" => letters(n).to_lowercase(),
        "upperLetter" => letters(n),
        "lowerRoman" => roman(n).to_lowercase(),
        "upperRoman" => roman(n),
        "decimalZero" if n < 10 => format!("0{n}"),
        "none" => String::new(),
        _ => n.to_string(),
    }
}

/// Word's letters: A..Z, then AA..ZZ, AAA.. (the letter repeated, not base 26).
fn letters(n: u32) -> String {
    if n == 0 {
        return "0".into();
    }
    let letter = char::from(b'A' + ((n - 1) % 26) as u8);
    std::iter::repeat_n(letter, ((n - 1) / 26 + 1).min(64) as usize).collect()
}

fn roman(n: u32) -> String {
    if n == 0 || n >= 4000 {
        return n.to_string();
    }
    const TABLE: [(u32, &str); 13] = [
        (1000, "M"),
        (900, "CM"),
        (500, "D"),
        (400, "CD"),
        (100, "C"),
        (90, "XC"),
        (50, "L"),
        (40, "XL"),
        (10, "X"),
        (9, "IX"),
        (5, "V"),
        (4, "IV"),
        (1, "I"),
    ];
    let mut n = n;
    let mut out = String::new();
    for (value, digits) in TABLE {
        while n >= value {
            out.push_str(digits);
            n -= value;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const NUMBERING: &str = r#"<?xml version="1.0"?>
<w:numbering xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">
  <w:abstractNum w:abstractNumId="0">
    <w:lvl w:ilvl="0"><w:start w:val="1"/><w:numFmt w:val="upperRoman"/><w:lvlText w:val="ARTICLE %1"/><w:pStyle w:val="Heading1"/><w:suff w:val="space"/></w:lvl>
    <w:lvl w:ilvl="1"><w:start w:val="1"/><w:numFmt w:val="decimal"/><w:lvlText w:val="Section %1.%2"/><w:isLgl/><w:pStyle w:val="Heading2"/></w:lvl>
    <w:lvl w:ilvl="2"><w:start w:val="1"/><w:numFmt w:val="lowerLetter"/><w:lvlText w:val="(%3)"/></w:lvl>
    <w:lvl w:ilvl="3"><w:start w:val="1"/><w:numFmt w:val="lowerRoman"/><w:lvlText w:val="(%4)"/></w:lvl>
  </w:abstractNum>
  <w:abstractNum w:abstractNumId="1">
    <w:lvl w:ilvl="0"><w:start w:val="1"/><w:numFmt w:val="bullet"/><w:lvlText w:val="&#61623;"/></w:lvl>
  </w:abstractNum>
  <w:abstractNum w:abstractNumId="2">
    <w:lvl w:ilvl="0"><w:start w:val="1"/><w:numFmt w:val="decimal"/><w:lvlText w:val="%1."/></w:lvl>
  </w:abstractNum>
  <w:num w:numId="1"><w:abstractNumId w:val="0"/></w:num>
  <w:num w:numId="2"><w:abstractNumId w:val="1"/></w:num>
  <w:num w:numId="3"><w:abstractNumId w:val="2"/></w:num>
  <w:num w:numId="4"><w:abstractNumId w:val="2"/><w:lvlOverride w:ilvl="0"><w:startOverride w:val="1"/></w:lvlOverride></w:num>
</w:numbering>"#;

    const STYLES: &str = r#"<?xml version="1.0"?>
<w:styles xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">
  <w:style w:type="paragraph" w:styleId="Heading1"><w:pPr><w:numPr><w:numId w:val="1"/></w:numPr></w:pPr></w:style>
  <w:style w:type="paragraph" w:styleId="Heading2"><w:basedOn w:val="Heading1"/><w:pPr><w:numPr><w:ilvl w:val="1"/><w:numId w:val="1"/></w:numPr></w:pPr></w:style>
  <w:style w:type="paragraph" w:styleId="MyHeading"><w:basedOn w:val="Heading2"/></w:style>
</w:styles>"#;

    fn styled(style: &str) -> ParagraphNumbering {
        ParagraphNumbering {
            style: Some(style.into()),
            ..ParagraphNumbering::default()
        }
    }

    fn direct(num_id: &str, ilvl: usize) -> ParagraphNumbering {
        ParagraphNumbering {
            style: None,
            num_id: Some(num_id.into()),
            ilvl: Some(ilvl),
        }
    }

    #[test]
    fn heading_styles_and_direct_levels_number_like_word() {
        let mut n = Numbering::new(Some(NUMBERING.as_bytes()), Some(STYLES.as_bytes()));
        let mut label = |p: ParagraphNumbering| n.label(&p);
        assert_eq!(label(styled("Heading1")).as_deref(), Some("ARTICLE I "));
        assert_eq!(label(styled("Heading2")).as_deref(), Some("Section 1.1 "));
        assert_eq!(label(direct("1", 2)).as_deref(), Some("(a) "));
        assert_eq!(label(direct("1", 2)).as_deref(), Some("(b) "));
        assert_eq!(label(direct("1", 3)).as_deref(), Some("(i) "));
        assert_eq!(label(direct("1", 3)).as_deref(), Some("(ii) "));
        // Inherited through basedOn; isLgl renders the article number in decimal.
        assert_eq!(label(styled("MyHeading")).as_deref(), Some("Section 1.2 "));
        // A deeper level restarts after a higher one.
        assert_eq!(label(direct("1", 2)).as_deref(), Some("(a) "));
        assert_eq!(label(styled("Heading1")).as_deref(), Some("ARTICLE II "));
        assert_eq!(label(styled("Heading2")).as_deref(), Some("Section 2.1 "));
        // Bullets carry no number; numId 0 switches a style's numbering off.
        assert_eq!(label(direct("2", 0)), None);
        assert_eq!(
            label(ParagraphNumbering {
                style: Some("Heading1".into()),
                num_id: Some("0".into()),
                ilvl: None
            }),
            None
        );
        assert_eq!(label(styled("Heading1")).as_deref(), Some("ARTICLE III "));
    }

    #[test]
    fn instances_share_the_count_unless_an_override_restarts_it() {
        let mut n = Numbering::new(Some(NUMBERING.as_bytes()), None);
        assert_eq!(n.label(&direct("3", 0)).as_deref(), Some("1. "));
        assert_eq!(n.label(&direct("3", 0)).as_deref(), Some("2. "));
        // Instance 4 restarts at 1 on first use, then counts on.
        assert_eq!(n.label(&direct("4", 0)).as_deref(), Some("1. "));
        assert_eq!(n.label(&direct("4", 0)).as_deref(), Some("2. "));
        // Unknown instances and styles number nothing.
        assert_eq!(n.label(&direct("99", 0)), None);
        assert_eq!(n.label(&styled("Normal")), None);
    }

    #[test]
    fn damaged_parts_number_what_they_can() {
        let mut n = Numbering::new(Some(b"<w:numbering><w:abstractNum"), Some(b"\x00\xff"));
        assert_eq!(n.label(&direct("1", 0)), None);
    }

    #[test]
    fn number_formats() {
        assert_eq!(format_number(4, "lowerRoman"), "iv");
        assert_eq!(format_number(1994, "upperRoman"), "MCMXCIV");
        assert_eq!(format_number(27, "lowerLetter"), "aa");
        assert_eq!(format_number(3, "upperLetter"), "C");
        assert_eq!(format_number(7, "decimalZero"), "07");
        assert_eq!(format_number(12, "ordinal"), "12");
    }
}
