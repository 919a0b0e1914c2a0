//! Segmentation of a contract into clauses the way ACORD's annotators cut them: numbered
//! sections and subsections (`ARTICLE IV`, `Section 9`, `9.1`, `(a)`, `(i)`, `A.`), unnumbered
//! all-caps or title-case headings, definitions kept whole, each clause with its number, heading,
//! parent path and character span in the document.
//!
//! The text is read line by line. Lines that are not content — page numbers, EDGAR `Source:`
//! footers, `<PAGE>` tags, table-of-contents lines, short lines repeated on many pages — are
//! noise: they never start a clause and are left out of clause texts, and a sentence broken by
//! a page break is joined again. Subsections such as `(a)` and `(i)` are clauses of their own
//! (CUAD annotates single sub-clauses), and a short lead-in of their parent ("Neither party
//! shall:") is prepended to their text so that the clause reads whole, joined with `<omitted>`
//! when sibling text is skipped, as ACORD does.

use std::collections::HashMap;
use std::sync::LazyLock;

use regex::Regex;

use crate::read::Document;

/// One clause of a contract.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Clause {
    /// The clause's own number as written: `"9.1"`, `"(a)"`, `"ARTICLE IV"`, `"A."` is `"A"`.
    pub number: Option<String>,
    pub heading: Option<String>,
    /// Numbers (or headings, for unnumbered headed parts) from the outermost enclosing part down
    /// to this clause itself: `["ARTICLE IX", "9.1", "(a)"]`.
    pub path: Vec<String>,
    /// Character span `[start, end)` of the clause in [`Document::text`].
    pub start: usize,
    pub end: usize,
    /// The clause's text without page noise; it may start with the parent's lead-in and end
    /// with cross-referenced sections, each joined with `<omitted>`.
    pub text: String,
    /// Numbers of the clauses this clause refers to and whose text was attached.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub refs: Vec<String>,
}

/// Splits a document into clauses, in document order, with cross-references attached.
pub fn segment(document: &Document) -> Vec<Clause> {
    let mut clauses = segment_text(&document.text);
    crate::xref::attach_references(&document.text, &mut clauses);
    clauses
}

/// Segmentation without cross-reference attachment.
pub fn segment_text(text: &str) -> Vec<Clause> {
    let lines = classify_lines(text);
    let paragraphs = paragraphs(&lines);
    let mut builder = Builder::default();
    for paragraph in &paragraphs {
        builder.paragraph(paragraph);
    }
    let raw = builder.finish();
    with_lead_ins(raw)
}

// ---------------------------------------------------------------------------------------------
// Lines

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum LineKind {
    Blank,
    Noise,
    Content,
}

#[derive(Clone, Debug)]
struct Line<'a> {
    /// Char offsets of the trimmed line.
    start: usize,
    end: usize,
    text: &'a str,
    kind: LineKind,
}

static PAGE_NUMBER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^(?:page\s*)?[-–—]?\s*(?:\d{1,4}|[ivxlc]{1,6})\s*[-–—]?(?:\s*of\s+\d{1,4})?$")
        .expect("valid regex")
});
static EDGAR_NOISE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"^(?:Source:\s.*\d{4}|</?PAGE>\s*\d*|<\w+>.*|-{3,}|_{3,}|={3,}|\f)$",
        r"|\.{5,}\s*\d+$|\t\s*\d{1,3}$"
    ))
    .expect("valid regex")
});

/// A bare page number line: `7`, `- 7 -`, `Page 7`, `Page 7 of 12`, `vii`.
pub fn is_page_number(line: &str) -> bool {
    let line = line.trim();
    !line.is_empty() && line.len() <= 20 && PAGE_NUMBER.is_match(line)
}

fn classify_lines(text: &str) -> Vec<Line<'_>> {
    let mut lines = Vec::new();
    let mut offset = 0usize;
    // The last decimal section number seen, for run-in numbers (`split_inline`).
    let mut last_section: Option<Vec<u32>> = None;
    for raw in text.split_inclusive('\n') {
        let raw_chars = raw.chars().count();
        let body = raw.trim_end_matches('\n');
        let leading = body.chars().take_while(|c| c.is_whitespace()).count();
        let trimmed = body.trim();
        let start = offset + leading;
        let end = start + trimmed.chars().count();
        let kind = if trimmed.is_empty() {
            LineKind::Blank
        } else if is_page_number(trimmed) || EDGAR_NOISE.is_match(trimmed) {
            LineKind::Noise
        } else {
            LineKind::Content
        };
        if kind == LineKind::Content {
            split_inline(trimmed, start, &mut last_section, &mut lines);
        } else {
            lines.push(Line {
                start,
                end,
                text: trimmed,
                kind,
            });
        }
        offset += raw_chars;
    }
    mark_running_lines(&mut lines);
    lines
}

static INLINE_MARKER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r#"[.:;]["”)]?\s+((?:\d{1,3}\.\d{1,3}(?:\.\d{1,3})*\.?\s+[A-Z"“(]|\d{1,3}\.\s+[A-Z][A-Za-z]"#,
        r"|ARTICLE\s+[IVXLC\d]+\b|(?:SECTION|Section)\s+\d{1,3}(?:\.\d{1,3})*\.?\s+[A-Z]))",
        // Where paragraphs were flattened into one line they are still set apart by a run of
        // spaces: "…of the project:   I. Party A supports…", "…Agreement.   (b) The…".
        r#"|[.:;]["”)]?\s{2,}((?:[IVX]{1,5}|[A-Z])\.\s+[A-Z]|\((?:[a-z]|[ivx]{1,4}|\d{1,2})\)\s+\S)"#
    ))
    .expect("valid regex")
});

/// Lines at least this long are searched for items set apart by a run of spaces.
const INLINE_SPLIT_MIN_CHARS: usize = 200;

/// A decimal section number with at least two parts inside a line, before a capital: a
/// run-in section when it continues the numbering (`follows`).
static RUN_IN_NUMBER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\s(\d{1,3}(?:\.\d{1,3})+)\.?\s+[A-Z]").expect("valid regex"));

/// "9.03" → [9, 3]; `None` for anything but dot-separated numbers.
fn section_components(number: &str) -> Option<Vec<u32>> {
    number.split('.').map(|part| part.parse().ok()).collect()
}

/// Whether section `next` is the one after `previous` at its own depth or above: 9.2 → 9.3,
/// 9.2.4 → 9.3; not 9.2 → 9.4, 9.2 → 10.1 or 9.2 → 9.2.1 (a subsection is not run in).
fn follows(previous: &[u32], next: &[u32]) -> bool {
    let Some((&last, prefix)) = next.split_last() else {
        return false;
    };
    next.len() >= 2
        && next.len() <= previous.len()
        && previous[..prefix.len()] == *prefix
        && previous[prefix.len()].checked_add(1) == Some(last)
}

/// Some filings lost their line breaks: a whole page is one line ("…agree as follows: 1.
/// DEFINITIONS. 1.1 "Affiliate" means…"). Lines are cut before each section number that
/// follows the end of a sentence, so that sections still start paragraphs. Only decimal
/// numbers, ARTICLE and Section are trusted inline; "(a)" inside a sentence is an enumeration.
/// They are trusted in lines of any length, because the same flattened text reaches us
/// wrapped too (a PDF made from it), and it must give the same clauses whatever the line
/// width. Items set apart only by a run of spaces are cut in long lines alone: in a short
/// line, a space run is layout.
///
/// A decimal number that follows no sentence end ("… Attention: President 9.03 Governing Law.
/// This Agreement …", after an address) is cut only when it is the next number after the last
/// section seen (`last_section`, carried from line to line): 9.02 then 9.03, or 9.2.1 then 9.3.
fn split_inline<'a>(
    text: &'a str,
    start: usize,
    last_section: &mut Option<Vec<u32>>,
    lines: &mut Vec<Line<'a>>,
) {
    let long = text.len() >= INLINE_SPLIT_MIN_CHARS;
    // (byte offset, trusted)
    let mut candidates: Vec<(usize, bool)> = vec![(0, true)];
    for c in INLINE_MARKER.captures_iter(text) {
        let m = match (c.get(1), c.get(2)) {
            (Some(m), _) => m,
            (None, Some(m)) if long => m,
            _ => continue,
        };
        candidates.push((m.start(), true));
    }
    for c in RUN_IN_NUMBER.captures_iter(text) {
        if let Some(m) = c.get(1) {
            let before = text[..m.start()]
                .split_whitespace()
                .next_back()
                .unwrap_or("");
            let lowered = before.to_ascii_lowercase();
            let in_a_sentence = before.starts_with(char::is_lowercase)
                || lowered.starts_with("section")
                || lowered.starts_with("article");
            if !in_a_sentence {
                candidates.push((m.start(), false));
            }
        }
    }
    // A trusted reading of a position wins over a run-in one.
    candidates.sort_unstable_by_key(|&(at, trusted)| (at, !trusted));
    candidates.dedup_by_key(|&mut (at, _)| at);
    let mut cuts = Vec::new();
    for (at, trusted) in candidates {
        let marker = parse_marker_text(&text[at..]);
        let section = marker
            .as_ref()
            .filter(|m| m.kind == Kind::Decimal)
            .and_then(|m| section_components(&m.number));
        // The line's own start is never cut, but its number counts as seen.
        let take = at > 0
            && if trusted {
                marker.is_some()
            } else {
                matches!((last_section.as_deref(), section.as_deref()),
                    (Some(previous), Some(next)) if follows(previous, next))
            };
        if take {
            cuts.push(at);
        }
        if take || at == 0 {
            // `section` is `Some` only for a decimal marker.
            if let Some(section) = section {
                *last_section = Some(section);
            }
        }
    }
    let mut from = 0usize;
    let mut char_at = start;
    cuts.push(text.len());
    for cut in cuts {
        let piece = &text[from..cut];
        let trimmed = piece.trim_end();
        let chars = piece.chars().count();
        lines.push(Line {
            start: char_at,
            end: char_at + trimmed.chars().count(),
            text: trimmed,
            kind: LineKind::Content,
        });
        char_at += chars;
        from = cut;
    }
}

/// Short lines that recur three or more times (running headers such as "Confidential
/// Treatment Requested" or a company name on each page) are noise. Lines that are clause
/// markers, redaction marks or sentences are not.
fn mark_running_lines(lines: &mut [Line<'_>]) {
    // Digits are ignored so that "Consulting Agreement Page 5 of 7" recurs on every page.
    let shape = |text: &str| -> String {
        text.chars()
            .map(|c| if c.is_ascii_digit() { '#' } else { c })
            .collect()
    };
    let mut counts: HashMap<String, usize> = HashMap::new();
    for line in lines.iter().filter(|l| l.kind == LineKind::Content) {
        if line.text.len() <= 80 {
            *counts.entry(shape(line.text)).or_default() += 1;
        }
    }
    for line in lines.iter_mut() {
        if line.kind != LineKind::Content
            || line.text.len() > 80
            || counts.get(&shape(line.text)).copied().unwrap_or(0) < 3
        {
            continue;
        }
        let letters = line.text.chars().filter(|c| c.is_alphabetic()).count();
        let sentence = line.text.ends_with(['.', ';', ',', ':']);
        if letters >= 4 && !sentence && parse_marker_text(line.text).is_none() {
            line.kind = LineKind::Noise;
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Paragraphs

#[derive(Clone, Debug)]
struct Paragraph {
    start: usize,
    end: usize,
    /// Lines joined with single spaces.
    text: String,
}

static TERMINAL: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#"[.:;!?](?:["”’)\]]*)$"#).expect("valid regex"));

fn ends_sentence(text: &str) -> bool {
    TERMINAL.is_match(text.trim_end())
}

fn paragraphs(lines: &[Line<'_>]) -> Vec<Paragraph> {
    let mut out: Vec<Paragraph> = Vec::new();
    let mut gap_blank = true;
    let mut gap_noise = false;
    let mut previous_line_text = "";
    for line in lines {
        match line.kind {
            LineKind::Blank => {
                gap_blank = true;
                continue;
            }
            LineKind::Noise => {
                gap_noise = true;
                continue;
            }
            LineKind::Content => {}
        }
        let marker = parse_marker_text(line.text).is_some();
        let starts_lower = line.text.chars().next().is_some_and(char::is_lowercase);
        let new_paragraph = match out.last() {
            None => true,
            Some(last) => {
                let unfinished = !ends_sentence(&last.text);
                let continuation = !marker
                    && ((unfinished && gap_noise) || (starts_lower && (gap_noise || gap_blank)));
                if continuation {
                    false
                } else if gap_blank || gap_noise {
                    true
                } else if marker {
                    // A marker at the start of a wrapped line is a new item only after a line
                    // that could end one ("...; and", "...:"), or when it is capitalised.
                    let prev = previous_line_text.trim_end();
                    ends_sentence(prev)
                        || prev.ends_with(" and")
                        || prev.ends_with(" or")
                        || marker_then_capital(line.text)
                } else {
                    false
                }
            }
        };
        if new_paragraph {
            out.push(Paragraph {
                start: line.start,
                end: line.end,
                text: line.text.to_string(),
            });
        } else if let Some(last) = out.last_mut() {
            last.end = line.end;
            last.text.push(' ');
            last.text.push_str(line.text);
        }
        gap_blank = false;
        gap_noise = false;
        previous_line_text = line.text;
    }
    out
}

fn marker_then_capital(text: &str) -> bool {
    parse_marker_text(text).is_some_and(|m| {
        text[m.byte_len..]
            .chars()
            .next()
            .is_some_and(|c| c.is_uppercase() || c == '"' || c == '“')
    })
}

// ---------------------------------------------------------------------------------------------
// Markers

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Style {
    LowerAlpha,
    UpperAlpha,
    LowerRoman,
    UpperRoman,
    Digit,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// ARTICLE IV, EXHIBIT A, SCHEDULE 1: top-level parts; numbering restarts inside them.
    Article,
    /// 9., 9.1, 9.1.2, Section 9.1 — depth = number of components. Self-describing, so the
    /// parent is found by prefix, not by position.
    Decimal,
    /// (a), (i), (A), (1), a), 1)
    Paren(Style),
    /// A., i., IV.
    Dotted(Style),
    /// An unnumbered heading that starts a part.
    Heading,
}

#[derive(Clone, Debug)]
struct Marker {
    kind: Kind,
    /// Displayed number: "ARTICLE IV", "9.1", "(a)", "A".
    number: String,
    /// Raw label used for alpha/roman disambiguation: "i", "v".
    label: String,
    /// Bytes of the paragraph text taken by the marker and following whitespace.
    byte_len: usize,
    /// Whether the letter could be either alphabetic or roman ("i", "v", "x").
    ambiguous: bool,
}

static ARTICLE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?i:(article|exhibit|schedule|annex|appendix|attachment|part))\s+([IVXLCDM]+|\d{1,3}(?:\.\d{1,2})?|[A-Z](?:-\d{1,2})?)\b[.:]?(?:\s+|$)")
        .expect("valid regex")
});
static SECTION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:SECTION|Section|Sec\.|§)\s*(\d{1,3}(?:\.\d{1,3})*)\.?:?(?:\s+|$)")
        .expect("valid regex")
});
static DECIMAL: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(\d{1,3})((?:\.\d{1,3})*)(\.?)(?:\s+|$)").expect("valid regex"));
static PAREN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\(([a-z]{1,4}|[A-Z]{1,4}|\d{1,3})\)(?:\s+|$)").expect("valid regex")
});
static CLOSE_PAREN: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^([a-z]|[ivx]{2,4}|\d{1,2})\)(?:\s+|$)").expect("valid regex"));
static DOTTED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^([A-Z]|[a-z]|[ivx]{2,5}|[IVX]{2,5})\.(?:\s+|$)").expect("valid regex")
});

fn is_roman(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| matches!(c.to_ascii_lowercase(), 'i' | 'v' | 'x' | 'l' | 'c'))
}

fn letter_style(label: &str) -> (Style, bool) {
    let upper = label.chars().all(|c| c.is_ascii_uppercase());
    let digits = label.chars().all(|c| c.is_ascii_digit());
    if digits {
        return (Style::Digit, false);
    }
    let single = label.chars().count() == 1;
    let roman = is_roman(label);
    let (alpha, rom) = if upper {
        (Style::UpperAlpha, Style::UpperRoman)
    } else {
        (Style::LowerAlpha, Style::LowerRoman)
    };
    if roman && single {
        // "i", "v", "x", "c", "l": decided by context in the builder; default roman for i/v/x.
        let default = if matches!(label.to_ascii_lowercase().as_str(), "i" | "v" | "x") {
            rom
        } else {
            alpha
        };
        (default, true)
    } else if roman {
        (rom, false)
    } else {
        (alpha, false)
    }
}

/// Recognises a clause marker at the start of a paragraph, without context.
fn parse_marker_text(text: &str) -> Option<Marker> {
    let rest_ok = |end: usize| {
        // After a number: a capital, a quote, a bracket, a redaction or nothing. A lowercase word
        // means the number is inside a sentence that was wrapped ("Section\n9.1 of the ...").
        text[end..]
            .chars()
            .next()
            .is_none_or(|c| c.is_uppercase() || "\"“'‘([*".contains(c) || c.is_ascii_digit())
    };
    if let Some(c) = ARTICLE.captures(text) {
        let whole = c.get(0)?;
        let word = c.get(1)?.as_str().to_uppercase();
        let number = c.get(2)?.as_str();
        // "Exhibit A attached hereto..." is a sentence, not a part heading; "EXHIBIT 10.3" is
        // the SEC filing's exhibit label, not a part of the contract.
        let filing_label = word != "ARTICLE" && number.contains('.');
        if (word == "ARTICLE" || text.len() <= 100) && !filing_label && rest_ok(whole.end()) {
            return Some(Marker {
                kind: Kind::Article,
                number: format!("{word} {}", number.to_uppercase()),
                label: String::new(),
                byte_len: whole.end(),
                ambiguous: false,
            });
        }
    }
    if let Some(c) = SECTION.captures(text) {
        let whole = c.get(0)?;
        if rest_ok(whole.end()) {
            return Some(Marker {
                kind: Kind::Decimal,
                number: c.get(1)?.as_str().to_string(),
                label: String::new(),
                byte_len: whole.end(),
                ambiguous: false,
            });
        }
    }
    if let Some(c) = DECIMAL.captures(text) {
        let whole = c.get(0)?;
        let first: u32 = c.get(1)?.as_str().parse().ok()?;
        let more = c.get(2)?.as_str();
        let dot = !c.get(3)?.as_str().is_empty();
        if (1..=300).contains(&first) && (dot || !more.is_empty()) && rest_ok(whole.end()) {
            return Some(Marker {
                kind: Kind::Decimal,
                number: format!("{}{}", c.get(1)?.as_str(), more),
                label: String::new(),
                byte_len: whole.end(),
                ambiguous: false,
            });
        }
    }
    let lettered = |c: regex::Captures<'_>, wrap: fn(Style) -> Kind, display: String| {
        let whole = c.get(0)?;
        let label = c.get(1)?.as_str().to_string();
        if label.chars().count() > 1 && !is_roman(&label) {
            // "(aa)" is a legitimate continuation of the alphabet; other letter runs are words.
            let mut chars = label.chars();
            let first = chars.next()?;
            if !chars.all(|c| c == first) {
                return None;
            }
        }
        let (style, ambiguous) = letter_style(&label);
        Some(Marker {
            kind: wrap(style),
            number: display,
            label,
            byte_len: whole.end(),
            ambiguous,
        })
    };
    if let Some(c) = PAREN.captures(text) {
        let display = c.get(0)?.as_str().trim().to_string();
        return lettered(c, Kind::Paren, display);
    }
    if let Some(c) = CLOSE_PAREN.captures(text) {
        let display = format!("({})", c.get(1)?.as_str());
        return lettered(c, Kind::Paren, display);
    }
    if let Some(c) = DOTTED.captures(text) {
        let whole = c.get(0)?;
        if rest_ok(whole.end()) && whole.end() < text.len() {
            let display = c.get(1)?.as_str().to_string();
            return lettered(c, Kind::Dotted, display);
        }
    }
    None
}

// ---------------------------------------------------------------------------------------------
// Headings and definitions

static CAPS_HEADING: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^([A-Z][A-Z0-9 ,;&'’/\-]{2,90}?)[.:](?:\s+|$)").expect("valid regex")
});
static TITLE_HEADING: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"^([A-Z][\w'’\-]*(?:\s+(?:[A-Z][\w'’\-]*|of|and|or|the|to|for|in|on|by|a|an|with",
        r"|upon|from|as|at|no|not|its|under)){0,7})[.:](?:\s+|$)"
    ))
    .expect("valid regex")
});
static DEFINITION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r#"^(?:\(?[a-zA-Z0-9]{1,4}[.)]\s*|\d+(?:\.\d+)*\.?\s*)?["“][^"”]{1,80}["”]"#,
        r"\s*(?:\([^)]{0,60}\)\s*)?,?\s*(?:shall\s+)?(?:means?|has\s+the\s+meaning|have\s+the\s+meaning",
        r"|shall\s+have\s+the\s+meaning|includes?|refers?\s+to|is\s+defined)\b"
    ))
    .expect("valid regex")
});

fn letters(text: &str) -> (usize, usize) {
    let mut all = 0;
    let mut upper = 0;
    for c in text.chars().filter(|c| c.is_alphabetic()) {
        all += 1;
        if c.is_uppercase() {
            upper += 1;
        }
    }
    (all, upper)
}

fn is_caps(text: &str) -> bool {
    let (all, upper) = letters(text);
    all >= 3 && upper * 10 >= all * 9
}

/// A paragraph that is only a heading: short, no sentence inside, all caps or title case.
fn is_heading_like(text: &str) -> bool {
    let text = text.trim();
    let words = text.split_whitespace().count();
    if text.chars().count() > 100 || words > 12 || words == 0 || text.ends_with([',', ';']) {
        return false;
    }
    let body = text.trim_end_matches(['.', ':']);
    if body.contains(". ") || body.contains("; ") {
        return false;
    }
    if is_caps(body) {
        return true;
    }
    const SMALL: &[&str] = &[
        "of", "and", "or", "the", "to", "for", "in", "on", "by", "a", "an", "with", "upon", "from",
        "as", "at", "its",
    ];
    let (all, _) = letters(body);
    all >= 3
        && !text.ends_with('.')
        && body.split_whitespace().all(|w| {
            SMALL.contains(&w)
                || w.chars()
                    .next()
                    .is_some_and(|c| c.is_uppercase() || !c.is_alphabetic())
        })
}

fn collapse_whitespace(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A heading paragraph as a heading: whitespace collapsed, trailing "." or ":" dropped.
fn heading_of(text: &str) -> String {
    collapse_whitespace(text.trim().trim_end_matches(['.', ':']))
}

fn is_definition(text: &str) -> bool {
    DEFINITION.is_match(text)
}

/// Splits a heading off the start of a clause body: "LIMITATION OF LIABILITY. In no event…",
/// "Term. This Agreement…", or a body that is only a heading. Returns the heading and the byte
/// offset where the rest starts.
fn split_heading(body: &str) -> Option<(String, usize)> {
    if let Some(c) = CAPS_HEADING.captures(body) {
        let heading = c.get(1)?.as_str().trim();
        let rest_start = c.get(0)?.end();
        let (all, _) = letters(heading);
        let lower_next = body[rest_start..]
            .chars()
            .next()
            .is_some_and(char::is_lowercase);
        if all >= 3 && !lower_next && heading.split_whitespace().count() <= 12 {
            return Some((collapse_whitespace(heading), rest_start));
        }
    }
    if let Some(c) = TITLE_HEADING.captures(body) {
        let heading = c.get(1)?.as_str().trim();
        let rest_start = c.get(0)?.end();
        // A one-word "heading" of two letters is an abbreviation ("Mr.", "No.").
        let (all, _) = letters(heading);
        let abbreviation = matches!(heading, "Mr" | "Mrs" | "Ms" | "Dr" | "No" | "Inc" | "Co");
        if all >= 3 && !abbreviation {
            return Some((collapse_whitespace(heading), rest_start));
        }
    }
    if is_heading_like(body) {
        return Some((heading_of(body), body.len()));
    }
    None
}

// ---------------------------------------------------------------------------------------------
// Building clauses

/// An unnumbered paragraph joins the clause before it, unless that clause is already this long:
/// then it starts a clause of its own with the same path, so huge sections do not become one
/// unreadable (and unrankable) clause.
const MAX_ABSORBED_CHARS: usize = 2000;

const MAX_PATH_LABEL_CHARS: usize = 60;

#[derive(Clone, Debug)]
struct Open {
    kind: Kind,
    number: String,
    label: String,
}

#[derive(Clone, Debug)]
struct Building {
    number: Option<String>,
    heading: Option<String>,
    path: Vec<String>,
    kind: Option<Kind>,
    start: usize,
    end: usize,
    texts: Vec<String>,
    /// Whether anything beyond the number and heading was seen.
    has_body: bool,
    definition: bool,
    chars: usize,
}

#[derive(Default)]
struct Builder {
    stack: Vec<Open>,
    current: Option<Building>,
    pending_heading: Option<Paragraph>,
    done: Vec<Building>,
}

fn truncate_label(label: &str) -> String {
    let label = label.trim();
    if label.chars().count() <= MAX_PATH_LABEL_CHARS {
        return label.to_string();
    }
    let cut: String = label.chars().take(MAX_PATH_LABEL_CHARS).collect();
    format!("{}…", cut.trim_end())
}

impl Builder {
    fn paragraph(&mut self, p: &Paragraph) {
        let marker = parse_marker_text(&p.text).map(|m| self.disambiguate(m));
        match marker {
            None => self.unnumbered(p),
            Some(m) => self.numbered(p, m),
        }
    }

    /// "(i)" after "(h)" is the ninth letter; otherwise it is the first roman numeral.
    fn disambiguate(&self, mut m: Marker) -> Marker {
        if !m.ambiguous {
            return m;
        }
        let Some(c) = m.label.chars().next() else {
            return m;
        };
        let upper = c.is_uppercase();
        let (alpha, roman) = if upper {
            (Style::UpperAlpha, Style::UpperRoman)
        } else {
            (Style::LowerAlpha, Style::LowerRoman)
        };
        let wrap = |s| match m.kind {
            Kind::Dotted(_) => Kind::Dotted(s),
            _ => Kind::Paren(s),
        };
        let predecessor = char::from_u32(c as u32 - 1).map(|p| p.to_string());
        let alpha_sibling = self.stack.iter().any(|o| {
            o.kind == wrap(alpha)
                && Some(o.number.trim_matches(['(', ')']).to_string()) == predecessor
        });
        let roman_open = self.stack.iter().any(|o| o.kind == wrap(roman));
        m.kind = if alpha_sibling {
            wrap(alpha)
        } else if roman_open || matches!(c.to_ascii_lowercase(), 'i' | 'v' | 'x') {
            wrap(roman)
        } else {
            wrap(alpha)
        };
        m
    }

    fn unnumbered(&mut self, p: &Paragraph) {
        let heading_like = is_heading_like(&p.text);
        if heading_like {
            // "ARTICLE IV" on one line and "INDEMNIFICATION" on the next.
            if let Some(cur) = self.current.as_mut() {
                if !cur.has_body && cur.heading.is_none() && cur.number.is_some() {
                    cur.heading = Some(heading_of(&p.text));
                    cur.end = p.end;
                    cur.texts.push(p.text.clone());
                    return;
                }
            }
            if let Some(previous) = self.pending_heading.take() {
                // Two headings in a row (a title and a subtitle): the first stands alone.
                self.start_heading_part(&previous, false);
            }
            self.pending_heading = Some(p.clone());
            return;
        }
        if let Some(heading) = self.pending_heading.take() {
            self.start_heading_part(&heading, true);
            self.absorb(p);
            return;
        }
        // Redaction marks, rules and signature lines never start a clause.
        let substantive = p.text.chars().any(char::is_alphanumeric);
        let start_new = match &self.current {
            None => substantive,
            Some(_) if !substantive => false,
            Some(cur) => {
                cur.has_body
                    && (!self.inside_numbered_part()
                        || is_definition(&p.text)
                        || cur.chars >= MAX_ABSORBED_CHARS)
            }
        };
        if start_new {
            self.finish_current();
            let path = self.path();
            self.current = Some(Building {
                number: None,
                heading: None,
                path,
                kind: None,
                start: p.start,
                end: p.end,
                texts: vec![p.text.clone()],
                has_body: true,
                definition: is_definition(&p.text),
                chars: p.text.chars().count(),
            });
        } else {
            self.absorb(p);
        }
    }

    /// An unnumbered heading opens a part of its own (RECITALS, an exhibit's title).
    fn start_heading_part(&mut self, heading: &Paragraph, has_following_body: bool) {
        self.finish_current();
        let title = heading_of(&heading.text);
        let keep = self
            .stack
            .iter()
            .rposition(|o| o.kind == Kind::Article)
            .map_or(0, |i| i + 1);
        self.stack.truncate(keep);
        self.stack.push(Open {
            kind: Kind::Heading,
            number: String::new(),
            label: truncate_label(&title),
        });
        self.current = Some(Building {
            number: None,
            heading: Some(title),
            path: self.path(),
            kind: Some(Kind::Heading),
            start: heading.start,
            end: heading.end,
            texts: vec![heading.text.clone()],
            has_body: false,
            definition: false,
            chars: heading.text.chars().count(),
        });
        if !has_following_body {
            self.finish_current();
        }
    }

    fn absorb(&mut self, p: &Paragraph) {
        if let Some(cur) = self.current.as_mut() {
            cur.end = p.end;
            cur.texts.push(p.text.clone());
            cur.chars += p.text.chars().count();
            if p.text.chars().any(char::is_alphanumeric) {
                cur.has_body = true;
            }
            if !cur.definition && cur.texts.len() == 2 && is_definition(&p.text) {
                cur.definition = true;
            }
        }
    }

    fn numbered(&mut self, p: &Paragraph, m: Marker) {
        // A definition's own sub-items belong to the definition ("'Affiliate' means (a)…").
        if let Some(cur) = &self.current {
            let opens_new_level = !self.stack.iter().any(|o| o.kind == m.kind);
            if cur.definition
                && cur.kind != Some(m.kind)
                && opens_new_level
                && matches!(m.kind, Kind::Paren(_) | Kind::Dotted(_))
            {
                self.absorb(p);
                return;
            }
        }
        self.finish_current();
        let pending = self.pending_heading.take();
        self.open(&m);
        let body = &p.text[m.byte_len..];
        let (heading, rest) = match split_heading(body) {
            Some((h, rest)) if !matches!(m.kind, Kind::Paren(_)) || is_caps(&h) => {
                (Some(h), &body[rest..])
            }
            _ => (None, body),
        };
        let (start, heading, mut texts) = match (pending, heading) {
            (Some(pending), None) => {
                let title = heading_of(&pending.text);
                (pending.start, Some(title), vec![pending.text.clone()])
            }
            (Some(pending), Some(h)) => {
                // A heading line above a numbered heading ("PAYMENT" over "4. Fees."): keep
                // the number's own heading; the line above stays in the text.
                (pending.start, Some(h), vec![pending.text.clone()])
            }
            (None, h) => (p.start, h, Vec::new()),
        };
        texts.push(p.text.clone());
        let has_body = rest.chars().any(char::is_alphanumeric);
        self.current = Some(Building {
            number: Some(m.number.clone()),
            heading,
            path: self.path(),
            kind: Some(m.kind),
            start,
            end: p.end,
            texts,
            has_body,
            definition: is_definition(&p.text),
            chars: p.text.chars().count(),
        });
    }

    fn open(&mut self, m: &Marker) {
        match m.kind {
            Kind::Article => {
                self.stack.clear();
            }
            Kind::Decimal => {
                let parts: Vec<&str> = m.number.split('.').collect();
                while let Some(top) = self.stack.last() {
                    let keep = match top.kind {
                        Kind::Article => true,
                        Kind::Decimal => {
                            let top_parts: Vec<&str> = top.number.split('.').collect();
                            top_parts.len() < parts.len() && parts.starts_with(&top_parts)
                        }
                        _ => false,
                    };
                    if keep {
                        break;
                    }
                    self.stack.pop();
                }
            }
            Kind::Heading => {}
            Kind::Paren(_) | Kind::Dotted(_) => {
                if let Some(at) = self.stack.iter().rposition(|o| o.kind == m.kind) {
                    self.stack.truncate(at);
                }
            }
        }
        self.stack.push(Open {
            kind: m.kind,
            number: m.number.clone(),
            label: m.number.clone(),
        });
    }

    /// Inside a numbered section, unnumbered paragraphs continue it; under only an article or
    /// a heading (a preamble, recitals, an exhibit without numbering) each paragraph is a clause.
    fn inside_numbered_part(&self) -> bool {
        self.stack
            .iter()
            .any(|o| !matches!(o.kind, Kind::Article | Kind::Heading))
    }

    fn path(&self) -> Vec<String> {
        self.stack.iter().map(|o| o.label.clone()).collect()
    }

    fn finish_current(&mut self) {
        if let Some(cur) = self.current.take() {
            if cur.has_body {
                self.done.push(cur);
            }
        }
    }

    fn finish(mut self) -> Vec<Building> {
        if let Some(heading) = self.pending_heading.take() {
            self.start_heading_part(&heading, false);
        }
        self.finish_current();
        self.done
    }
}

/// Lead-ins longer than this are sections in their own right, not the start of a sentence.
const MAX_LEAD_IN_CHARS: usize = 600;

/// Turns built clauses into [`Clause`]s, prefixing a subsection with its parent's lead-in when
/// the parent is short and its text runs on into the subsections ("…neither party shall:").
fn with_lead_ins(built: Vec<Building>) -> Vec<Clause> {
    let texts: Vec<String> = built.iter().map(|b| b.texts.join("\n")).collect();
    let mut last_by_path: HashMap<Vec<String>, usize> = HashMap::new();
    let mut children_seen: HashMap<usize, usize> = HashMap::new();
    let mut clauses = Vec::with_capacity(built.len());
    for (i, b) in built.iter().enumerate() {
        let mut text = texts[i].clone();
        if b.path.len() >= 2 && matches!(b.kind, Some(Kind::Paren(_)) | Some(Kind::Dotted(_))) {
            let parent_path = &b.path[..b.path.len() - 1];
            if let Some(&parent) = last_by_path.get(parent_path) {
                let lead = texts[parent].trim_end();
                let leads_in = lead.chars().count() <= MAX_LEAD_IN_CHARS
                    && (lead.ends_with([':', '—', '-', '–']) || !ends_sentence(lead));
                if leads_in {
                    let seen = children_seen.entry(parent).or_default();
                    let joiner = if *seen == 0 { " " } else { "<omitted>" };
                    *seen += 1;
                    text = format!("{lead}{joiner}{text}");
                }
            }
        }
        if b.number.is_some() {
            last_by_path.insert(b.path.clone(), i);
        }
        clauses.push(Clause {
            number: b.number.clone(),
            heading: b.heading.clone(),
            path: b.path.clone(),
            start: b.start,
            end: b.end,
            text,
            refs: Vec::new(),
        });
    }
    clauses
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(text: &str, c: &Clause) -> String {
        text.chars().skip(c.start).take(c.end - c.start).collect()
    }

    const NESTED: &str = "\
MASTER SERVICES AGREEMENT

This Master Services Agreement is made between Alpha Corp. and Beta LLC.

ARTICLE IV
INDEMNIFICATION

4.1 Indemnity by Supplier. Supplier shall indemnify Customer against all claims arising from:
(a) breach of this Agreement;
(b) negligence of Supplier, including:
(i) acts of its employees; and
(ii) acts of its subcontractors; and
(c) infringement.

4.2 LIMITATION OF LIABILITY. Except as set forth in Section 4.1, neither party shall be liable for indirect damages.

ARTICLE V
MISCELLANEOUS

5.1 Notices. All notices shall be in writing.
";

    #[test]
    fn numbers_headings_and_paths_follow_the_outline() {
        let clauses = segment_text(NESTED);
        let outline: Vec<(Option<&str>, Option<&str>, Vec<&str>)> = clauses
            .iter()
            .map(|c| {
                (
                    c.number.as_deref(),
                    c.heading.as_deref(),
                    c.path.iter().map(String::as_str).collect(),
                )
            })
            .collect();
        let title = "MASTER SERVICES AGREEMENT";
        assert_eq!(
            outline,
            vec![
                (None, Some(title), vec![title]),
                (
                    Some("4.1"),
                    Some("Indemnity by Supplier"),
                    vec!["ARTICLE IV", "4.1"]
                ),
                (Some("(a)"), None, vec!["ARTICLE IV", "4.1", "(a)"]),
                (Some("(b)"), None, vec!["ARTICLE IV", "4.1", "(b)"]),
                (Some("(i)"), None, vec!["ARTICLE IV", "4.1", "(b)", "(i)"]),
                (Some("(ii)"), None, vec!["ARTICLE IV", "4.1", "(b)", "(ii)"]),
                (Some("(c)"), None, vec!["ARTICLE IV", "4.1", "(c)"]),
                (
                    Some("4.2"),
                    Some("LIMITATION OF LIABILITY"),
                    vec!["ARTICLE IV", "4.2"]
                ),
                (Some("5.1"), Some("Notices"), vec!["ARTICLE V", "5.1"]),
            ]
        );
        for c in &clauses {
            let own = span(NESTED, c);
            if let Some(number) = &c.number {
                assert!(own.starts_with(number.as_str()), "{own:?} vs {number}");
            }
        }
        // A subsection reads whole: the parent's lead-in, then the item; later siblings are
        // joined with <omitted> as in ACORD.
        assert!(clauses[2].text.starts_with("4.1 Indemnity by Supplier."));
        assert!(clauses[2].text.ends_with(" (a) breach of this Agreement;"));
        assert!(clauses[3]
            .text
            .contains("arising from:<omitted>(b) negligence"));
    }

    #[test]
    fn the_ninth_letter_is_not_a_roman_numeral_after_h() {
        let items: String = "abcdefghij"
            .chars()
            .map(|c| format!("({c}) Item {c};\n"))
            .collect();
        let text = format!("1. LIST. The items are:\n{items}");
        let clauses = segment_text(&text);
        let i = clauses
            .iter()
            .find(|c| c.number.as_deref() == Some("(i)"))
            .expect("(i) is a clause");
        assert_eq!(i.path, ["1", "(i)"]);
        let j = clauses.iter().find(|c| c.number.as_deref() == Some("(j)"));
        assert_eq!(
            j.map(|c| c.path.clone()),
            Some(vec!["1".into(), "(j)".into()])
        );
    }

    #[test]
    fn definitions_are_kept_whole() {
        let text = "1. DEFINITIONS.\n\n\"Affiliate\" means any entity that:\n(i) controls a party; or\n(ii) is controlled by a party.\n\n\"Term\" has the meaning given in Section 8.\n";
        let clauses = segment_text(text);
        assert_eq!(clauses.len(), 2, "{clauses:#?}");
        assert!(clauses[0].text.contains("(ii) is controlled by a party."));
        assert!(clauses[1].text.starts_with("\"Term\""));
        assert_eq!(clauses[0].path, ["1"]);
    }

    #[test]
    fn page_noise_is_not_a_clause_and_broken_sentences_are_joined() {
        let text = "1. Grant. Licensor grants Licensee a license to use the Software,\n\nSource: ACME CORP, 10-K, 3/1/2001\n\n\n- 2 -\n\nsubject to the terms of this Agreement.\n\n[***]\n\n2. Fees. Licensee shall pay the fees.\n\nPage 3 of 9\n";
        let clauses = segment_text(text);
        let numbers: Vec<_> = clauses.iter().map(|c| c.number.clone()).collect();
        assert_eq!(numbers, [Some("1".to_string()), Some("2".to_string())]);
        assert_eq!(
            clauses[0].text,
            "1. Grant. Licensor grants Licensee a license to use the Software, subject to the terms of this Agreement.\n[***]"
        );
        assert!(!clauses[1].text.contains("Page 3"));
        assert!(
            is_page_number("Page 3 of 9") && is_page_number("- 12 -") && !is_page_number("(a)")
        );
    }

    #[test]
    fn wrapped_numbers_inside_sentences_do_not_start_clauses() {
        let text = "7.1 Survival. The obligations under Section\n9.2 of this Agreement and under\n(a) of the schedule survive.\n";
        let clauses = segment_text(text);
        assert_eq!(clauses.len(), 1, "{clauses:#?}");
    }

    /// The section numbers of the clauses, in order.
    fn numbers(clauses: &[Clause]) -> Vec<String> {
        clauses.iter().filter_map(|c| c.number.clone()).collect()
    }

    /// A filing that lost its line breaks: sections follow sentence ends inside one line.
    const FLATTENED: &str = "EXCLUSIVE LICENSE AGREEMENT THIS AGREEMENT is entered into by Eton and Aucta, who hereby agree as follows: 1. DEFINITIONS. For the purposes of this Agreement: 1.1 \"Affiliates\" means any entity that controls a Party. 1.2 \"ANDA Litigation\" shall have the meaning ascribed in Section 7.5.2 of this Agreement.";

    #[test]
    fn sections_inside_a_flattened_line_still_start_clauses() {
        let text = FLATTENED;
        let clauses = segment_text(text);
        assert_eq!(numbers(&clauses), ["1", "1.1", "1.2"]);
        let last = &clauses[clauses.len() - 1];
        assert!(span(text, last).starts_with("1.2 \"ANDA"));
        assert!(span(text, last).ends_with("Agreement."));
    }

    #[test]
    fn sections_inside_wrapped_lines_start_clauses_as_in_the_unwrapped_line() {
        let flat = FLATTENED;
        // The same text wrapped at about 70 characters, as a PDF made from it reads.
        let mut wrapped = String::new();
        let mut width = 0;
        for word in flat.split(' ') {
            if width + word.len() > 70 {
                wrapped.push('\n');
                width = 0;
            } else if width > 0 {
                wrapped.push(' ');
                width += 1;
            }
            wrapped.push_str(word);
            width += word.len();
        }
        let wrapped_numbers = numbers(&segment_text(&wrapped));
        assert_eq!(wrapped_numbers, ["1", "1.1", "1.2"], "{wrapped}");
        assert_eq!(wrapped_numbers, numbers(&segment_text(flat)));
    }

    #[test]
    fn a_run_in_section_after_an_address_starts_a_clause_when_it_continues_the_numbering() {
        let text = "9.01 Assignment. Neither party may assign this Agreement.\n\n9.02 Notices. Notices go to: Acme Inc., 1 Main Street, New York, NY 10001, Attention: President 9.03 Governing Law. This Agreement is governed by New York law. The parties refer to Sections 9.02 and 9.04 Survival for more.\n";
        let clauses = segment_text(text);
        assert_eq!(numbers(&clauses), ["9.01", "9.02", "9.03"], "{clauses:#?}");
        assert!(span(text, &clauses[2]).starts_with("9.03 Governing Law."));
        assert!(follows(&[9, 2], &[9, 3]) && follows(&[9, 2, 4], &[9, 3]));
        assert!(!follows(&[9, 2], &[9, 4]) && !follows(&[9, 2], &[10, 1]));
        assert!(!follows(&[9, 2], &[9, 2, 1]) && !follows(&[9], &[9, 1]));
    }

    #[test]
    fn items_set_apart_by_space_runs_in_a_flattened_line_start_clauses() {
        let text = "Cooperation Agreement between Party A and Party B, who reach the following agreement on the project:   I. Party A supports the project and will provide services to Party B.   II. Party B will build the power station within two years of signing.   III. Disputes go to arbitration.";
        let clauses = segment_text(text);
        assert_eq!(numbers(&clauses), ["I", "II", "III"], "{clauses:#?}");
    }

    #[test]
    fn unnumbered_paragraphs_under_an_exhibit_heading_are_separate_clauses() {
        let text = "EXHIBIT 10.46\n\nWEB HOSTING AGREEMENT\n\nThis agreement voids all previous agreements.\n\nHorst agrees to pay one cent per access.\n\nGalacticomm must provide support 24 hours per day.\n";
        let clauses = segment_text(text);
        assert_eq!(clauses.len(), 3, "{clauses:#?}");
        assert_eq!(clauses[0].number, None);
        assert_eq!(clauses[0].heading.as_deref(), Some("WEB HOSTING AGREEMENT"));
        assert_eq!(clauses[2].path, ["WEB HOSTING AGREEMENT"]);
        let text = text.replace("EXHIBIT 10.46", "EXHIBIT B");
        let clauses = segment_text(&text);
        assert_eq!(clauses[0].number.as_deref(), Some("EXHIBIT B"));
        assert_eq!(clauses[2].path, ["EXHIBIT B"]);
    }

    #[test]
    fn long_unnumbered_runs_are_split_into_their_own_clauses() {
        let sentence =
            "The Supplier shall perform the services diligently and in a workmanlike manner. ";
        let paragraph = sentence.repeat(15);
        let text = format!("3. SERVICES.\n\n{paragraph}\n\n{paragraph}\n\n{paragraph}\n");
        let clauses = segment_text(&text);
        // 1,200 + 1,200 characters stay together; the third paragraph starts a clause.
        assert_eq!(clauses.len(), 2, "{clauses:#?}");
        assert_eq!(clauses[1].number, None);
        assert_eq!(clauses[1].path, ["3"]);
    }
}
