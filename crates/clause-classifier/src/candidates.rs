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
    /// The kind as a number, a feature of the second stage and the novelty step.
    pub fn index(self) -> usize {
        match self {
            Kind::Sentence => 0,
            Kind::Piece => 1,
            Kind::Window2 => 2,
            Kind::Window3 => 3,
            Kind::Paragraph => 4,
            Kind::Date => 5,
            Kind::Title => 6,
        }
    }

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
/// Words before a date in its sentence up to which that lead-in is also a candidate.
const MAX_DATE_LEAD_WORDS: usize = 30;
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
/// The shapes a date takes in CUAD's texts, each found on its own so that one place can yield
/// spans of several lengths ("this 1st day of June, 2004" and "June, 2004"). Beyond the plain
/// forms, the annotators mark what the EDGAR texts really hold: blanks of unsigned forms ("this
/// ___ day of _________, 2004", "September __, 2018", "[·] day of [·], 2019"), ordinals split by
/// the text extraction ("18t h day of August 2014", "1 st day of May 2006"), stray spaces and
/// missing ones ("April 15 , 2010", "May 3,2006"), and numeric dates with dashes or dots
/// ("12-23-2019", "1.4.2011"). Before these forms, the candidates found 80.5% of Agreement Date
/// annotations.
static DATES: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    let month = "(?:January|February|March|April|May|June|July|August|September|October|November|December|Jan\\.?|Feb\\.?|Mar\\.?|Apr\\.?|Jun\\.?|Jul\\.?|Aug\\.?|Sept?\\.?|Oct\\.?|Nov\\.?|Dec\\.?)";
    // A day number, its ordinal suffix possibly split ("1s t", "15 th"), or a word ordinal.
    let ordinal = r"(?:\(?\d{1,2}(?:\s?(?:st|nd|rd|th)|s\s+t|n\s+d|r\s+d|t\s+h)?\)?|first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|fifteenth|twentieth|thirtieth|thirty-first)";
    // What stands for a day or month left to be filled in.
    let blank = r"(?:_+|\[\s*[·●*]?\s*\])";
    // A year; in the day-first form also the blanks of a form ("19__", "20", "____").
    let year = r"(?:\d{4}|(?:19|20)\d?_+)";
    let form_year = r"(?:\d{4}|(?:19|20)\d?_*|_{2,})";
    let forms = [
        // Month first: "June 1, 2019", "April 15 , 2010", "May 3,2006", "September __, 2018",
        // "June , 2010", "March, 2018", "April. 1st 2019".
        format!(r"(?i)\b{month}\.?(?:\s+(?:{ordinal}|{blank}))?\s*,?\s*{year}\b"),
        // Day first: "this ___ day of _________, 2004", "19  DAY OF MAY , 2010", "[·] day of [·],
        // 2019", "this day of , 20", "the 1st of March, 2003".
        format!(
            r"(?i)(?:\b(?:this|the)\s+)?(?:(?:{ordinal}|{blank})?\s*day\s+of|{ordinal}\s+of)\s+(?:{month}\.?|{blank})?\s*,?\s*(?:in\s+the\s+year\s+)?{form_year}"
        ),
        // "7 January 2018", "5th March 2019", "31 December, 1996".
        format!(r"(?i)\b{ordinal}\s+{month}\.?,?\s*{year}\b"),
        // Numeric: "12/23/2019", "12-23-2019", "1.4.2011".
        r"\b\d{1,2}/\d{1,2}/\d{2,4}\b|\b\d{1,2}-\d{1,2}-\d{2,4}\b|\b\d{1,2}\.\d{1,2}\.\d{4}\b"
            .to_owned(),
    ];
    forms
        .iter()
        .map(|f| Regex::new(f).expect("valid regex"))
        .collect()
});
/// A date left blank or bracketed after a dating phrase ("made as of , 2013", "DATED AS OF
/// [●]"): the blank itself is the answer.
static DATE_PLACEHOLDER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(?:as\s+of|dated|date:)\s*(,\s*\d{4}|\[[^\]\n]{0,8}\])")
        .expect("valid regex")
});
static TITLE: LazyLock<Regex> = LazyLock::new(|| {
    // Runs of two or more upper-case words (a contract's name is usually set in capitals).
    Regex::new(r"\b[A-Z][A-Z0-9&'\-]*(?:[ \t]+(?:[A-Z][A-Z0-9&'\-]*|OF|AND|TO|FOR|THE|[0-9.]+))+\b")
        .expect("valid regex")
});
/// The word that ends a document's name ("... Maintenance Agreement", "RESELLER AGREEMENT").
static DOCUMENT_KIND: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b(?:AGREEMENT|Agreement|CONTRACT|Contract|STATEMENT|Statement|ADDENDUM|Addendum|AMENDMENT|Amendment|SCHEDULE|Schedule)\b")
        .expect("valid regex")
});
/// Most words a document's name has before its kind.
const MAX_NAME_WORDS: usize = 7;

/// Document names ending at each kind word of the title zone, walking back over capitalised words
/// and joiners ("Network Build and Maintenance Agreement"), stopping at "This"/"EXHIBIT", another
/// kind word or a lowercase word; offered at every length, as the annotators may start the name
/// anywhere in the run ("Execution Version Network Build ..."). Why beside [`TITLE`]: a run of
/// capitals takes in whatever capitals stand next to it ("EXHIBIT 10.1 RESELLER AGREEMENT THIS
/// RESELLER AGREEMENT"), and the annotators mark the name alone; before these, the candidates
/// found 89.9% of Document Name annotations.
fn document_names(text: &str, zone: usize) -> Vec<Range<usize>> {
    const JOINERS: &[&str] = &[
        "and", "of", "to", "the", "for", "on", "AND", "OF", "TO", "THE", "FOR", "ON", "&",
    ];
    const STOPS: &[&str] = &[
        "This", "THIS", "The", "THE", "Exhibit", "EXHIBIT", "Between", "BETWEEN",
    ];
    let mut out = Vec::new();
    for kind in DOCUMENT_KIND.find_iter(&text[..zone]) {
        // Word starts before the kind word, nearest first.
        let mut starts = Vec::new();
        let mut end = kind.start();
        while starts.len() < MAX_NAME_WORDS {
            let before = text[..end].trim_end();
            let word_start = before
                .char_indices()
                .rfind(|&(_, c)| c.is_whitespace())
                .map_or(0, |(p, c)| p + c.len_utf8());
            let word = before[word_start..].trim_end_matches(',');
            let capitalised = word.chars().next().is_some_and(char::is_uppercase)
                && word
                    .chars()
                    .all(|c| c.is_alphanumeric() || "&'-®".contains(c));
            if word.is_empty()
                || STOPS.contains(&word)
                || DOCUMENT_KIND.is_match(word)
                || !(capitalised || JOINERS.contains(&word))
            {
                break;
            }
            starts.push(word_start);
            end = word_start;
        }
        // Every length, but a name does not start with a joiner.
        for &start in &starts {
            let first = text[start..].split_whitespace().next().unwrap_or("");
            if !JOINERS.contains(&first.trim_end_matches(',')) {
                out.push(start..kind.end());
            }
        }
    }
    out
}

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
    for form in DATES.iter() {
        for m in form.find_iter(text) {
            if let Some(span) = trimmed_range(text, m.range()) {
                push(&mut out, Kind::Date, span, context_of(m.start()));
            }
        }
    }
    // What leads up to a date in its sentence: "This Agreement shall commence on 5th March 2019".
    let dates: Vec<Range<usize>> = out
        .iter()
        .filter(|c| c.kind == Kind::Date)
        .map(|c| c.span.clone())
        .collect();
    for date in dates {
        let sentence = context_of(date.start);
        if sentence.start < date.start
            && word_count(&text[sentence.start..date.start]) <= MAX_DATE_LEAD_WORDS
        {
            push(&mut out, Kind::Piece, sentence.start..date.end, sentence);
        }
    }
    for c in DATE_PLACEHOLDER.captures_iter(text) {
        if let Some(m) = c.get(1) {
            push(&mut out, Kind::Date, m.range(), context_of(m.start()));
        }
    }
    let zone = floor_char_boundary(text, TITLE_ZONE.min(text.len()));
    for m in TITLE.find_iter(&text[..zone]) {
        if word_count(m.as_str()) <= 15 {
            push(&mut out, Kind::Title, m.range(), context_of(m.start()));
        }
    }
    for name in document_names(text, zone) {
        let context = context_of(name.start);
        push(&mut out, Kind::Title, name, context);
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
    use precedent_metrics::spans::WordSet;

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

    /// Date shapes seen in CUAD's Agreement Date answers (each line from a shared contract).
    #[test]
    fn dates_with_blanks_split_ordinals_and_odd_spacing() {
        let cases = [
            (
                "is made and entered into on this 18t h day of August 2014 by",
                "18t h day of August 2014",
            ),
            (
                "as of the 1 st  day of May 2006 between",
                "1 st  day of May 2006",
            ),
            (
                "entered into this ___ day of _________, 2004 by and between",
                "this ___ day of _________, 2004",
            ),
            (
                "made and entered into as of September __, 2018 (the",
                "September __, 2018",
            ),
            ("is made on April 15 , 2010 by", "April 15 , 2010"),
            ("THIS AGREEMENT is dated May 3,2006.", "May 3,2006"),
            (
                "is made and effective as of [·] day of [·], 2019 (the",
                "[·] day of [·], 2019",
            ),
            (
                "THIS AGREEMENT IS MADE ON THE 19  DAY OF MAY , 2010 BETWEEN",
                "THE 19  DAY OF MAY , 2010",
            ),
            ("entered into this day of , 20 by", "this day of , 20"),
            ("Date: 12-23-2019", "12-23-2019"),
            ("effective as of the 1.4.2011 (the", "1.4.2011"),
            ("DATED AS OF [●] between", "[●]"),
            ("AGREEMENT made as of  , 2013, between", ", 2013"),
        ];
        // As the scorer matches: some candidate's words have Jaccard >= 0.5 with the answer's.
        for (text, date) in cases {
            let answer = WordSet::new(date);
            let found = texts(text, Kind::Date);
            assert!(
                found
                    .iter()
                    .any(|f| WordSet::new(f).jaccard(&answer) >= 0.5),
                "{text:?}: {found:?}"
            );
        }
        // Not dates: a statute's year, a count of days.
        assert!(texts(
            "under the Securities Act of 1933 within 20 days",
            Kind::Date
        )
        .is_empty());
        // A date's lead-in in its sentence is a candidate too.
        let text = "This Agreement shall commence on 5th March 2019 and run for a year.";
        assert!(
            texts(text, Kind::Piece).contains(&"This Agreement shall commence on 5th March 2019")
        );
    }

    #[test]
    fn document_names_without_what_stands_next_to_them() {
        let text = "EXHIBIT 10.1   RESELLER AGREEMENT   THIS RESELLER AGREEMENT (the \"Agreement\") is made. Execution Version Network Build and Maintenance Agreement Between Commnet Wireless, LLC And AT&T Mobility LLC.";
        let titles = texts(text, Kind::Title);
        assert!(titles.contains(&"RESELLER AGREEMENT"), "{titles:?}");
        assert!(
            titles.contains(&"Network Build and Maintenance Agreement"),
            "{titles:?}"
        );
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
