//! Candidate spans the typer scores. A CUAD annotation counts as found only when a prediction's
//! word set has Jaccard ≥ 0.5 with it, so candidates come at several granularities: short ones for
//! dates and titles, sentences and semicolon pieces for most clauses, windows of two or three
//! sentences and whole paragraphs for long ones. Works on reflowed text too (many CUAD texts have
//! no line breaks): numbering such as ` 1.1 `, ` (a) ` inside a line also ends a sentence.

use std::collections::HashSet;
use std::ops::Range;
use std::sync::LazyLock;

use regex::Regex;
use serde::Serialize;

/// What kind of span a candidate is (the typer learns how likely each kind is per category).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Sentence,
    Piece,
    Window2,
    Window3,
    Paragraph,
    Date,
    Title,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Sentence => "sentence",
            Kind::Piece => "piece",
            Kind::Window2 => "window2",
            Kind::Window3 => "window3",
            Kind::Paragraph => "paragraph",
            Kind::Date => "date",
            Kind::Title => "title",
        }
    }
}

/// A candidate span (byte range of the text) and the sentence around it (its context).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    pub kind: Kind,
    pub span: Range<usize>,
    pub context: Range<usize>,
}

/// Words in a paragraph above which it is not a candidate itself (its sentences still are).
const MAX_PARAGRAPH_WORDS: usize = 600;
/// Sentences longer than this (in words) are also offered as semicolon-separated pieces.
const PIECE_MIN_SENTENCE_WORDS: usize = 40;
/// Titles are looked for in the first bytes only.
const TITLE_ZONE: usize = 3000;

static PARAGRAPH_BREAK: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\n[ \t\r\f\v]*\n\s*").expect("valid regex"));
static INLINE_NUMBER: LazyLock<Regex> = LazyLock::new(|| {
    // A section number or list marker preceded by whitespace and followed by a capitalised word:
    // " 1.1 Provision", " 12. TERM", " (a) Provider", " Section 9.2 ".
    Regex::new(r"\s((?:\d{1,2}(?:\.\d{1,2}){0,3}\.?|\([a-zA-Z]{1,4}\)|\(\d{1,2}\)|[A-Z]\.)\s+[A-Z\x22\u{201c}])")
        .expect("valid regex")
});
static DATE: LazyLock<Regex> = LazyLock::new(|| {
    let month = "(?:January|February|March|April|May|June|July|August|September|October|November|December|Jan\\.?|Feb\\.?|Mar\\.?|Apr\\.?|Jun\\.?|Jul\\.?|Aug\\.?|Sept?\\.?|Oct\\.?|Nov\\.?|Dec\\.?)";
    Regex::new(&format!(
        r"(?i)\b(?:{month}\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{4}}|\d{{1,2}}(?:st|nd|rd|th)?\s+(?:day\s+of\s+)?{month},?\s+\d{{4}}|{month},?\s+\d{{4}}|\d{{1,2}}/\d{{1,2}}/\d{{2,4}})\b"
    ))
    .expect("valid regex")
});
static TITLE: LazyLock<Regex> = LazyLock::new(|| {
    // Runs of two or more upper-case words (a contract's name is usually set in capitals).
    Regex::new(r"\b[A-Z][A-Z0-9&'\-]*(?:[ \t]+(?:[A-Z][A-Z0-9&'\-]*|OF|AND|TO|FOR|THE|[0-9.]+))+\b")
        .expect("valid regex")
});

/// Abbreviations after which a period does not end a sentence.
const ABBREVIATIONS: &[&str] = &[
    "inc", "ltd", "co", "corp", "no", "nos", "sec", "secs", "art", "mr", "mrs", "ms", "dr", "st",
    "jr", "sr", "vs", "v", "e.g", "i.e", "etc", "u.s", "u.k", "n.a", "l.p", "l.l.c", "llc", "s.a",
    "b.v", "n.v", "a.g", "fig", "para", "ex", "approx", "dept", "est", "ave", "blvd", "p.o", "ft",
    "int'l", "govt", "bros", "assn", "plc", "pty", "gmbh", "s.p.a", "ag", "sa", "nv", "bv", "cf",
];

/// Sentence ranges (byte offsets) of one paragraph `text[range]`.
fn sentences(text: &str, range: Range<usize>) -> Vec<Range<usize>> {
    let para = &text[range.clone()];
    let mut cuts: Vec<usize> = Vec::new();
    for (i, c) in para.char_indices() {
        if !matches!(c, '.' | '!' | '?') {
            continue;
        }
        // Must be followed by whitespace and then something that starts a sentence.
        let rest = &para[i + 1..];
        let trimmed = rest.trim_start();
        if trimmed.len() == rest.len() || trimmed.is_empty() {
            continue;
        }
        let next = trimmed.chars().next().unwrap_or(' ');
        if !(next.is_uppercase()
            || next.is_ascii_digit()
            || matches!(next, '(' | '"' | '\u{201c}' | '['))
        {
            continue;
        }
        if c == '.' {
            // The word before the period: numbers ("1."), single letters ("a."), abbreviations.
            let before = &para[..i];
            let word_start = before
                .char_indices()
                .rfind(|&(_, ch)| ch.is_whitespace() || ch == '(')
                .map_or(0, |(p, ch)| p + ch.len_utf8());
            let word = before[word_start..].to_lowercase();
            let word =
                word.trim_matches(|ch: char| !ch.is_alphanumeric() && ch != '.' && ch != '\'');
            if word.is_empty()
                || word.chars().all(|ch| ch.is_ascii_digit() || ch == '.')
                || word.chars().count() == 1
                || ABBREVIATIONS.contains(&word)
                || is_roman(word)
            {
                continue;
            }
        }
        cuts.push(i + c.len_utf8());
    }
    for m in INLINE_NUMBER.captures_iter(para) {
        if let Some(g) = m.get(1) {
            // Only where the preceding text ended a phrase, so "Section 9.1 Provider" mid-sentence
            // (preceded by "Section") is not a cut.
            let before = para[..g.start()].trim_end();
            if before.ends_with(['.', ':', ';']) || before.is_empty() {
                cuts.push(g.start());
            }
        }
    }
    cuts.sort_unstable();
    cuts.dedup();
    let mut out = Vec::new();
    let mut start = 0;
    for cut in cuts.into_iter().chain(std::iter::once(para.len())) {
        if let Some(r) = trimmed_range(para, start..cut) {
            out.push(range.start + r.start..range.start + r.end);
        }
        start = cut;
    }
    out
}

fn is_roman(word: &str) -> bool {
    !word.is_empty() && word.len() <= 5 && word.chars().all(|c| "ivxlc".contains(c))
}

/// `range` of `text` without surrounding whitespace; `None` when nothing is left.
fn trimmed_range(text: &str, range: Range<usize>) -> Option<Range<usize>> {
    let s = &text[range.clone()];
    let lead = s.len() - s.trim_start().len();
    let trail = s.len() - s.trim_end().len();
    (lead + trail < s.len()).then(|| range.start + lead..range.end - trail)
}

fn word_count(s: &str) -> usize {
    s.split_whitespace().count()
}

/// Paragraph ranges: text between blank lines, and lines that are themselves short headings.
fn paragraphs(text: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    for m in PARAGRAPH_BREAK.find_iter(text) {
        if let Some(r) = trimmed_range(text, start..m.start()) {
            out.push(r);
        }
        start = m.end();
    }
    if let Some(r) = trimmed_range(text, start..text.len()) {
        out.push(r);
    }
    out
}

/// All candidates of a contract text, deduplicated by span (the first kind wins).
pub fn candidates(text: &str) -> Vec<Candidate> {
    let mut out = Vec::new();
    let mut seen: HashSet<(usize, usize)> = HashSet::new();
    let mut push = |out: &mut Vec<Candidate>, kind, span: Range<usize>, context: Range<usize>| {
        if span.start < span.end && seen.insert((span.start, span.end)) {
            out.push(Candidate {
                kind,
                span,
                context,
            });
        }
    };
    let mut all_sentences: Vec<Range<usize>> = Vec::new();
    for para in paragraphs(text) {
        let sents = sentences(text, para.clone());
        for s in &sents {
            push(&mut out, Kind::Sentence, s.clone(), s.clone());
        }
        for s in &sents {
            if word_count(&text[s.clone()]) >= PIECE_MIN_SENTENCE_WORDS {
                let mut piece_start = s.start;
                for (i, _) in text[s.clone()].match_indices(';') {
                    let cut = s.start + i + 1;
                    if let Some(r) = trimmed_range(text, piece_start..cut) {
                        push(&mut out, Kind::Piece, r, s.clone());
                    }
                    piece_start = cut;
                }
                if piece_start > s.start {
                    if let Some(r) = trimmed_range(text, piece_start..s.end) {
                        push(&mut out, Kind::Piece, r, s.clone());
                    }
                }
            }
        }
        for w in sents.windows(2) {
            push(
                &mut out,
                Kind::Window2,
                w[0].start..w[1].end,
                w[0].start..w[1].end,
            );
        }
        for w in sents.windows(3) {
            push(
                &mut out,
                Kind::Window3,
                w[0].start..w[2].end,
                w[0].start..w[2].end,
            );
        }
        if sents.len() > 3 && word_count(&text[para.clone()]) <= MAX_PARAGRAPH_WORDS {
            push(&mut out, Kind::Paragraph, para.clone(), para.clone());
        }
        all_sentences.extend(sents);
    }
    let context_of = |pos: usize| {
        let i = all_sentences.partition_point(|s| s.end <= pos);
        all_sentences
            .get(i)
            .filter(|s| s.start <= pos)
            .cloned()
            .unwrap_or(pos..pos)
    };
    for m in DATE.find_iter(text) {
        push(&mut out, Kind::Date, m.range(), context_of(m.start()));
    }
    let zone = floor_char_boundary(text, TITLE_ZONE.min(text.len()));
    for m in TITLE.find_iter(&text[..zone]) {
        if word_count(m.as_str()) <= 15 {
            push(&mut out, Kind::Title, m.range(), context_of(m.start()));
        }
    }
    out
}

fn floor_char_boundary(text: &str, mut i: usize) -> usize {
    while i > 0 && !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(text: &str, kind: Kind) -> Vec<&str> {
        candidates(text)
            .into_iter()
            .filter(|c| c.kind == kind)
            .map(|c| &text[c.span])
            .collect()
    }

    #[test]
    fn sentences_respect_abbreviations_and_numbering() {
        let text = "SERVICES AGREEMENT This agreement is made by Acme Inc. and Beta Co. on June 1, 2019. 1. Services. 1.1 Provision. (a) Provider shall do it. It pays U.S. taxes.";
        let s = texts(text, Kind::Sentence);
        assert!(s.contains(&"SERVICES AGREEMENT This agreement is made by Acme Inc. and Beta Co. on June 1, 2019."), "{s:?}");
        assert!(s.contains(&"(a) Provider shall do it."), "{s:?}");
        assert!(s.contains(&"It pays U.S. taxes."), "{s:?}");
        assert_eq!(texts(text, Kind::Date), vec!["June 1, 2019"]);
        assert!(texts(text, Kind::Title).contains(&"SERVICES AGREEMENT"));
    }

    #[test]
    fn pieces_windows_and_paragraphs() {
        let long = "Licensee shall not (a) assign this Agreement without consent of the other party in writing; (b) sublicense any rights to any third party whatsoever under any circumstances; or (c) transfer any license granted hereunder to anyone else at any time.";
        let text =
            format!("First sentence here. Second one here. Third one. Fourth one.\n\n{long}");
        let c = candidates(&text);
        assert!(c.iter().any(|c| c.kind == Kind::Paragraph
            && &text[c.span.clone()]
                == "First sentence here. Second one here. Third one. Fourth one."));
        assert!(c.iter().any(|c| c.kind == Kind::Window2
            && &text[c.span.clone()] == "First sentence here. Second one here."));
        let pieces = texts(&text, Kind::Piece);
        assert_eq!(pieces.len(), 3, "{pieces:?}");
        assert!(pieces[1].starts_with("(b) sublicense"));
        // Spans are unique.
        let mut spans: Vec<_> = c.iter().map(|c| (c.span.start, c.span.end)).collect();
        spans.sort();
        spans.dedup();
        assert_eq!(spans.len(), c.len());
    }
}
