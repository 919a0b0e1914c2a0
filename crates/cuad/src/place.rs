//! Placing annotated spans in the contract text. About 5% of CUAD's spans are not verbatim
//! substrings (whitespace was reflowed, redaction marks or quotes differ), so placement falls back
//! from exact search to whitespace-insensitive search to a word-window match.

use std::collections::HashMap;
use std::ops::Range;

use serde::Serialize;

/// How a span was found in the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Placement {
    /// Verbatim substring.
    Exact,
    /// Equal once runs of whitespace are collapsed.
    Whitespace,
    /// A window of the text's words covering at least [`FUZZY_MIN_COVERAGE`] of the span's words.
    Fuzzy,
    /// Not found.
    Unplaced,
}

/// Share of the span's words (as a multiset) a window must contain to count as a fuzzy placement.
pub const FUZZY_MIN_COVERAGE: f64 = 0.8;

/// The range from the first piece's start to the furthest end (`None` for no pieces).
pub fn cover(pieces: &[Range<usize>]) -> Option<Range<usize>> {
    let start = pieces.iter().map(|r| r.start).min()?;
    let end = pieces.iter().map(|r| r.end).max()?;
    Some(start..end)
}

/// Places a CUAD span in `text`, searching from byte `from` first (so repeated spans take
/// successive occurrences), then from the start: each piece's byte range, one range for a
/// contiguous span. CUAD joins discontiguous pieces of one annotation
/// with `<omitted>`; each piece is placed after the previous one, and the span is placed as well
/// as its worst piece ([`cover`] gives the range from first to last). Where an annotation lies
/// matters piece by piece: "December 12, 2014<omitted>This Agreement is effective as of
/// the date hereof" has one piece in the preamble and one near the end, and the range from
/// first to last piece covers the whole contract, which no piece says anything about.
pub fn place_pieces(text: &str, span: &str, from: usize) -> (Option<Vec<Range<usize>>>, Placement) {
    if span.contains(OMITTED) {
        let mut pieces: Vec<Range<usize>> = Vec::new();
        let mut worst = Placement::Exact;
        let mut cursor = from;
        for piece in span.split(OMITTED).filter(|p| !p.trim().is_empty()) {
            let (range, placement) = place_one(text, piece, cursor);
            let Some(range) = range else {
                return (None, Placement::Unplaced);
            };
            worst = worst.max(placement);
            cursor = range.end;
            pieces.push(range);
        }
        // A piece found before the previous one (searched again from the start) keeps the
        // pieces in text order.
        pieces.sort_by_key(|r| (r.start, r.end));
        return if pieces.is_empty() {
            (None, Placement::Unplaced)
        } else {
            (Some(pieces), worst)
        };
    }
    let (range, placement) = place_one(text, span, from);
    (range.map(|r| vec![r]), placement)
}

/// CUAD's separator between discontiguous pieces of one annotation.
pub const OMITTED: &str = "<omitted>";

fn place_one(text: &str, span: &str, from: usize) -> (Option<Range<usize>>, Placement) {
    let span = span.trim();
    if span.is_empty() {
        return (None, Placement::Unplaced);
    }
    let exact = |start: usize| {
        text.get(start..)
            .and_then(|t| t.find(span))
            .map(|i| start + i..start + i + span.len())
    };
    if let Some(r) = exact(from).or_else(|| exact(0)) {
        return (Some(r), Placement::Exact);
    }
    if let Some(r) = place_collapsed(text, span) {
        return (Some(r), Placement::Whitespace);
    }
    match place_words(text, span) {
        Some(r) => (Some(r), Placement::Fuzzy),
        None => (None, Placement::Unplaced),
    }
}

/// Whitespace-collapsed search, mapped back to the original byte offsets.
fn place_collapsed(text: &str, span: &str) -> Option<Range<usize>> {
    let (collapsed, origin) = collapse(text);
    let (needle, _) = collapse(span);
    let needle = needle.trim();
    let at = collapsed.find(needle)?;
    let start = origin[at];
    let last = at + needle.len() - 1;
    let last_char_len = text[origin[last]..]
        .chars()
        .next()
        .map_or(1, char::len_utf8);
    Some(start..origin[last] + last_char_len)
}

/// Collapses whitespace runs to one space; `origin[i]` is the byte in `text` that byte `i` of the
/// result came from (every byte of a multi-byte char maps to that char's start).
fn collapse(text: &str) -> (String, Vec<usize>) {
    let mut out = String::with_capacity(text.len());
    let mut origin = Vec::with_capacity(text.len());
    let mut in_space = false;
    for (i, c) in text.char_indices() {
        if c.is_whitespace() {
            if !in_space {
                out.push(' ');
                origin.push(i);
            }
            in_space = true;
        } else {
            in_space = false;
            out.push(c);
            origin.extend(std::iter::repeat_n(i, c.len_utf8()));
        }
    }
    (out, origin)
}

/// Lowercased alphanumeric words with their byte ranges.
pub(crate) fn words(text: &str) -> Vec<(String, Range<usize>)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in text
        .char_indices()
        .chain(std::iter::once((text.len(), ' ')))
    {
        match (c.is_alphanumeric(), start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                out.push((text[s..i].to_lowercase(), s..i));
                start = None;
            }
            _ => {}
        }
    }
    out
}

/// The window of `span`-many text words sharing the most words with the span (multiset overlap),
/// accepted when it covers at least [`FUZZY_MIN_COVERAGE`] of them; trimmed to its first and last
/// shared word.
fn place_words(text: &str, span: &str) -> Option<Range<usize>> {
    let span_words = words(span);
    let n = span_words.len();
    if n == 0 {
        return None;
    }
    let mut need: HashMap<&str, i32> = HashMap::new();
    for (w, _) in &span_words {
        *need.entry(w.as_str()).or_default() += 1;
    }
    let text_words = words(text);
    if text_words.len() < n {
        return None;
    }
    let mut have: HashMap<&str, i32> = HashMap::new();
    let mut overlap = 0i32;
    let mut best = (0i32, 0usize);
    for (i, (w, _)) in text_words.iter().enumerate() {
        if let Some(&needed) = need.get(w.as_str()) {
            let h = have.entry(w.as_str()).or_default();
            if *h < needed {
                overlap += 1;
            }
            *h += 1;
        }
        if i >= n {
            let (old, _) = &text_words[i - n];
            if let Some(&needed) = need.get(old.as_str()) {
                let h = have.entry(old.as_str()).or_default();
                *h -= 1;
                if *h < needed {
                    overlap -= 1;
                }
            }
        }
        if i + 1 >= n && overlap > best.0 {
            best = (overlap, i + 1 - n);
        }
    }
    if (best.0 as f64) < FUZZY_MIN_COVERAGE * n as f64 {
        return None;
    }
    let window = &text_words[best.1..best.1 + n];
    let first = window
        .iter()
        .position(|(w, _)| need.contains_key(w.as_str()))?;
    let last = window
        .iter()
        .rposition(|(w, _)| need.contains_key(w.as_str()))?;
    Some(window[first].1.start..window[last].1.end)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The range a span covers, first to last piece, and how well it was placed.
    fn place(text: &str, span: &str, from: usize) -> (Option<Range<usize>>, Placement) {
        let (pieces, placement) = place_pieces(text, span, from);
        (pieces.as_deref().and_then(cover), placement)
    }

    #[test]
    fn exact_then_successive_occurrences() {
        let text = "Term. The term is one year. Term again. The term is one year.";
        let (r, p) = place(text, "The term is one year.", 0);
        assert_eq!((r.clone().unwrap().start, p), (6, Placement::Exact));
        let (r2, _) = place(text, "The term is one year.", r.unwrap().end);
        assert_eq!(r2.unwrap().start, 40);
    }

    #[test]
    fn whitespace_reflowed() {
        let text = "Intro.\nThis Agreement shall be\n   governed by the laws of Delaware.\nEnd";
        let (r, p) = place(
            text,
            "This Agreement shall be governed by the laws of  Delaware.",
            0,
        );
        assert_eq!(p, Placement::Whitespace);
        assert_eq!(
            &text[r.unwrap()],
            "This Agreement shall be\n   governed by the laws of Delaware."
        );
    }

    #[test]
    fn fuzzy_words_and_unplaced() {
        let text =
            "Preamble. Licensee shall pay [***] percent of net sales to Licensor quarterly. Other.";
        let (r, p) = place(
            text,
            "Licensee shall pay [*] percent of Net Sales to Licensor quarterly",
            0,
        );
        assert_eq!(p, Placement::Fuzzy);
        assert_eq!(
            &text[r.unwrap()],
            "Licensee shall pay [***] percent of net sales to Licensor quarterly"
        );
        assert_eq!(
            place(text, "completely different words here", 0).1,
            Placement::Unplaced
        );
        assert_eq!(place(text, "   ", 0).1, Placement::Unplaced);
        let (r, p) = place(text, "Preamble.<omitted>Other.", 0);
        assert_eq!((r, p), (Some(0..text.len()), Placement::Exact));
        let (pieces, p) = place_pieces(text, "Preamble.<omitted>Other.", 0);
        assert_eq!(p, Placement::Exact);
        assert_eq!(
            pieces,
            Some(vec![0..9, text.len() - 6..text.len()]),
            "each piece where it stands, not what lies between"
        );
    }
}
