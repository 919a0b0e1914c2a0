//! Section headings of a contract and whether they name a category: the second stage's evidence
//! that a candidate sits in, say, the "8.2 Exclusivity." section when it is scored for
//! Exclusivity. The first stage does not see headings as words (measured worse, BENCHMARKS.md
//! "Section headings in the first stage's features"): a heading's words are shared by every
//! sentence of its section, so they raise the unannotated neighbours as much as the answer. Here a
//! heading only says which category the section is *about*, and the trees weigh that against the
//! candidate's own logits and its neighbours'.

use std::ops::Range;
use std::sync::LazyLock;

use precedent_text::{Analyzer, AnalyzerConfig, StopWords};
use regex::Regex;

use crate::candidates::{Candidate, Kind};
use crate::N_CATEGORIES;

/// Per category, the words a heading about it uses, from the category's name and CUAD's
/// description of it (not from which words help). Each entry is one word group: alternatives
/// separated by `|`; a word matches a heading word whose stem starts with its stem, or, marked
/// with a trailing `=`, whose stem equals it ("term" must not match "termination"). A heading's
/// score for a category is the share of its groups it matches.
pub const CATEGORY_KEYWORDS: [&[&str]; N_CATEGORIES] = [
    &[],                                                            // Document Name
    &["parties"],                                                   // Parties
    &["date="],                                                     // Agreement Date
    &["effective", "date="],                                        // Effective Date
    &["expiration", "term="],                                       // Expiration Date
    &["renewal", "term="],                                          // Renewal Term
    &["notice", "renewal", "termination"], // Notice Period to Terminate Renewal
    &["governing", "law"],                 // Governing Law
    &["most", "favored", "nation"],        // Most Favored Nation
    &["compete", "exception", "restriction"], // Competitive Restriction Exception
    &["compete"],                          // Non-Compete
    &["exclusive"],                        // Exclusivity
    &["solicit", "customer"],              // No-Solicit of Customers
    &["solicit", "employ|hire"],           // No-Solicit of Employees
    &["disparage"],                        // Non-Disparagement
    &["termination", "convenience"],       // Termination for Convenience
    &["first", "refusal|offer|negotiation"], // Rofr/Rofo/Rofn
    &["change", "control"],                // Change of Control
    &["assign"],                           // Anti-Assignment
    &["revenue|profit|royalty", "share"],  // Revenue/Profit Sharing
    &["price", "restriction"],             // Price Restrictions
    &["minimum", "commitment"],            // Minimum Commitment
    &["volume", "restriction"],            // Volume Restriction
    &["intellectual|ip=", "ownership", "assign"], // IP Ownership Assignment
    &["joint", "ownership"],               // Joint IP Ownership
    &["license", "grant"],                 // License Grant
    &["transfer", "license"],              // Non-Transferable License
    &["affiliate", "license"],             // Affiliate License-Licensor
    &["affiliate", "license"],             // Affiliate License-Licensee
    &["unlimited|enterprise", "license"],  // Unlimited/All-You-Can-Eat-License
    &["irrevocable|perpetual", "license"], // Irrevocable or Perpetual License
    &["source", "escrow"],                 // Source Code Escrow
    &["termination|expiration", "post|effect|transition|survival"], // Post-Termination Services
    &["audit|inspection|records"],         // Audit Rights
    &["liability", "limitation"],          // Uncapped Liability
    &["liability", "limitation"],          // Cap on Liability
    &["liquidated", "damages"],            // Liquidated Damages
    &["warranty"],                         // Warranty Duration
    &["insurance"],                        // Insurance
    &["covenant", "sue|contest"],          // Covenant Not to Sue
    &["third=", "beneficiary"],            // Third Party Beneficiary
];

/// One word of a group, stemmed: (stem, exact).
type Keyword = (String, bool);

fn analyzer() -> Analyzer {
    Analyzer::new(AnalyzerConfig {
        lowercase: true,
        stop_words: StopWords::None,
        stem: true,
        max_token_len: 40,
    })
}

static KEYWORDS: LazyLock<Vec<Vec<Vec<Keyword>>>> = LazyLock::new(|| {
    let analyzer = analyzer();
    CATEGORY_KEYWORDS
        .iter()
        .map(|groups| {
            groups
                .iter()
                .map(|group| {
                    group
                        .split('|')
                        .filter_map(|w| {
                            let exact = w.ends_with('=');
                            let stem = analyzer
                                .term_texts(w.trim_end_matches('='))
                                .into_iter()
                                .next()?;
                            Some((stem, exact))
                        })
                        .collect()
                })
                .collect()
        })
        .collect()
});

static ANALYZER: LazyLock<Analyzer> = LazyLock::new(analyzer);

/// Per category, the share of its keyword groups ([`CATEGORY_KEYWORDS`]) that `heading` names.
pub fn naming(heading: &str) -> [f32; N_CATEGORIES] {
    let stems = ANALYZER.term_texts(heading);
    let mut out = [0f32; N_CATEGORIES];
    for (o, groups) in out.iter_mut().zip(KEYWORDS.iter()) {
        if groups.is_empty() {
            continue;
        }
        let hit = groups
            .iter()
            .filter(|group| {
                group.iter().any(|(k, exact)| {
                    stems.iter().any(|s| {
                        if *exact {
                            s == k
                        } else {
                            s.starts_with(k.as_str())
                        }
                    })
                })
            })
            .count();
        *o = hit as f32 / groups.len() as f32;
    }
    out
}

/// The sections of one contract as the second stage reads them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Sections {
    /// Per candidate: its section, the nearest heading at or before its start (index into
    /// `naming`), if any.
    pub section: Vec<Option<u32>>,
    /// Per heading: how much it names each category, and how much its parent heading does
    /// (0 without a parent).
    pub naming: Vec<[[f32; N_CATEGORIES]; 2]>,
}

impl Sections {
    /// Finds the headings of `text` at the starts of its sentence candidates and their lines.
    pub fn of(text: &str, candidates: &[Candidate]) -> Sections {
        let mut sentences: Vec<Range<usize>> = candidates
            .iter()
            .filter(|c| c.kind == Kind::Sentence)
            .map(|c| c.span.clone())
            .collect();
        sentences.sort_by_key(|s| (s.start, s.end));
        let found = headings(text, &sentences);
        let name = |r: &Range<usize>| text.get(r.clone()).map_or([0.0; N_CATEGORIES], naming);
        let naming = found
            .iter()
            .map(|h| {
                [
                    name(&h.text),
                    h.parent.as_ref().map_or([0.0; N_CATEGORIES], name),
                ]
            })
            .collect();
        let section = candidates
            .iter()
            .map(|c| {
                let i = found.partition_point(|h| h.at <= c.span.start);
                i.checked_sub(1).map(|i| i as u32)
            })
            .collect();
        Sections { section, naming }
    }
}

/// `range` of `text` without surrounding whitespace; `None` when nothing is left.
fn trimmed_range(text: &str, range: Range<usize>) -> Option<Range<usize>> {
    let s = text.get(range.clone())?;
    let lead = s.len() - s.trim_start().len();
    let trail = s.len() - s.trim_end().len();
    (lead + trail < s.len()).then(|| range.start + lead..range.end - trail)
}

/// Most words a heading has ("Representations and Warranties of the Licensee" has 6).
const MAX_HEADING_WORDS: usize = 10;

static HEADING_MARKER: LazyLock<Regex> = LazyLock::new(|| {
    // The numbering before a heading: "ARTICLE IX", "Section 14", "Section 1.01.", "8.2", "12.",
    // "IV." (roman numerals other than "I" need a period or a keyword: "C." is more often a
    // list item), "B.", "(a)", "(iv)", "(2)". Must be followed by whitespace.
    Regex::new(
        r"^(?:(?P<kw>(?i:article|section|clause))\s+(?P<kwnum>\d{1,2}(?:\.\d{1,2}){0,3}|[IVXLCivxlc]{1,6}|[A-Za-z])\.?|(?P<num>\d{1,2}(?:\.\d{1,2}){0,3})\.?|(?P<roman>I|[IVXLC]{2,6})\.|(?P<letter>[A-Z])\.|(?P<item>\([a-zA-Z]{1,4}\)|\(\d{1,2}\)))\s+",
    )
    .expect("valid regex")
});

/// Lower-case words a title-case heading may contain ("Limitation of Liability").
const HEADING_SMALL_WORDS: &[&str] = &[
    "a", "an", "and", "as", "at", "by", "for", "from", "in", "into", "its", "of", "on", "or",
    "the", "to", "under", "upon", "with", "non",
];

/// A section heading found at byte `at` (where its numbering starts): its text and that of the
/// heading of the enclosing section, if any.
struct SectionHeading {
    at: usize,
    text: Range<usize>,
    parent: Option<Range<usize>>,
}

/// Whether `s` reads as a heading: 1..=[`MAX_HEADING_WORDS`] words, no digits (page numbers,
/// dates, "Source: ... 11/2/1999" lines), every word capitalised but for a few small words, at
/// least one word of three letters or more.
fn heading_like(s: &str) -> bool {
    let mut words = 0;
    let mut long = false;
    if s.bytes().any(|b| b.is_ascii_digit()) {
        return false;
    }
    for w in s.split_whitespace() {
        words += 1;
        let w = w.trim_matches(|c: char| !c.is_alphanumeric());
        let letters = w.chars().filter(|c| c.is_alphabetic()).count();
        let Some(first) = w.chars().next() else {
            continue;
        };
        long |= letters >= 3;
        if !(first.is_uppercase() || HEADING_SMALL_WORDS.contains(&w)) {
            return false;
        }
    }
    long && words <= MAX_HEADING_WORDS
}

fn all_caps(s: &str) -> bool {
    s.chars().filter(|c| c.is_alphabetic()).count() >= 3 && !s.chars().any(|c| c.is_lowercase())
}

/// The heading starting at `range.start` (a sentence or a line start), if there is one, and its
/// nesting level (0 for articles and roman numerals, 1 for unnumbered headings, else the depth of
/// the section number: 1 for "12.", 2 for "8.2", 4 for "B.", 5 for "(a)").
///
/// A heading is the rest of the line after the numbering when that reads as a heading
/// ("1. APPOINTMENT AND SCOPE OF AUTHORITY", "12. Non-Competition.", "Term"), or, after a
/// number only, the part of the line up to a period, colon or wide gap ("9.   PRODUCT DESIGN
/// During the term", "Section 1.01. Term. The term ..."): reflowed texts keep no line breaks.
/// Where the line does not start a sentence (a sentence that runs over several lines), it must be
/// numbered or in capitals, so that a wrapped "State of New York." is not a heading.
fn heading_at(text: &str, range: Range<usize>, sentence_start: bool) -> Option<(u8, Range<usize>)> {
    let seg = &text[range.clone()];
    let (level, numbered, marker_len) = match HEADING_MARKER.captures(seg) {
        // Unnumbered headings ("CONSULTANT'S OBLIGATIONS", "Term" under "ARTICLE I") rank with
        // top-level numbered sections: an address line of the preamble read as a heading then
        // does not become the parent of every section after it.
        None => (1, false, 0),
        Some(m) => {
            let depth = |n: &str| n.split('.').filter(|p| !p.is_empty()).count() as u8;
            let level = if let Some(n) = m.name("num") {
                depth(n.as_str())
            } else if let Some(n) = m.name("kwnum") {
                let article = m
                    .name("kw")
                    .is_some_and(|k| k.as_str().eq_ignore_ascii_case("article"));
                if article || !n.as_str().starts_with(|c: char| c.is_ascii_digit()) {
                    0
                } else {
                    depth(n.as_str())
                }
            } else if m.name("roman").is_some() {
                0
            } else if m.name("letter").is_some() {
                4
            } else {
                5
            };
            (level, true, m.get(0).map_or(0, |g| g.end()))
        }
    };
    let rest_start = range.start + marker_len;
    let rest = &text[rest_start..range.end];
    let line = &rest[..rest.find('\n').unwrap_or(rest.len())];
    let accept = |r: Range<usize>| -> Option<(u8, Range<usize>)> {
        let r = trimmed_range(text, r)?;
        let h = text[r.clone()].trim_end_matches(['.', ':', '-', ' ', '\t']);
        let r = r.start..r.start + h.len();
        let h = h
            .trim_start_matches(['[', '('])
            .trim_end_matches([']', ')']);
        (heading_like(h) && (numbered || sentence_start || all_caps(h))).then_some((level, r))
    };
    if let Some(h) = accept(rest_start..rest_start + line.len()) {
        return Some(h);
    }
    if !numbered {
        return None;
    }
    // A heading run into its section's first sentence: cut at ". ", ": " or two spaces.
    let cut = [". ", ": ", "  ", ".\t"]
        .iter()
        .filter_map(|t| line.find(t))
        .min()?;
    accept(rest_start..rest_start + cut)
}

/// The section headings of a text (in order), each with the heading of its enclosing section,
/// found at sentence starts and line starts within `sentences` (sorted, as [`candidates`] makes
/// them).
fn headings(text: &str, sentences: &[Range<usize>]) -> Vec<SectionHeading> {
    let mut out: Vec<SectionHeading> = Vec::new();
    // Open sections: level and heading text.
    let mut open: Vec<(u8, Range<usize>)> = Vec::new();
    for s in sentences {
        let line_starts = text[s.clone()]
            .match_indices('\n')
            .filter_map(|(i, _)| trimmed_range(text, s.start + i + 1..s.end))
            .map(|r| (r.start, false));
        for (at, sentence_start) in std::iter::once((s.start, true)).chain(line_starts) {
            if out.last().is_some_and(|h| h.at >= at) {
                continue;
            }
            let Some((level, heading)) = heading_at(text, at..s.end, sentence_start) else {
                continue;
            };
            while open.last().is_some_and(|(l, _)| *l >= level) {
                open.pop();
            }
            out.push(SectionHeading {
                at,
                text: heading.clone(),
                parent: open.last().map(|(_, r)| r.clone()),
            });
            open.push((level, heading));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::candidates::candidates;
    use precedent_cuad::categories::category_index;

    fn category(name: &str) -> usize {
        category_index(name).expect("a CUAD category")
    }

    #[test]
    fn every_keyword_has_a_stem() {
        for (k, groups) in KEYWORDS.iter().enumerate() {
            assert_eq!(groups.len(), CATEGORY_KEYWORDS[k].len(), "category {k}");
            assert!(groups.iter().all(|g| !g.is_empty()), "category {k}");
        }
    }

    #[test]
    fn headings_name_categories_by_stem() {
        let n = naming("Non-Competition");
        assert_eq!(n[category("Non-Compete")], 1.0);
        assert_eq!(n[category("Competitive Restriction Exception")], 1.0 / 3.0);
        let n = naming("GOVERNING LAW");
        assert_eq!(n[category("Governing Law")], 1.0);
        assert_eq!(n[category("Insurance")], 0.0);
        let n = naming("Limitation of Liability");
        assert_eq!(n[category("Cap on Liability")], 1.0);
        assert_eq!(n[category("Uncapped Liability")], 1.0);
        // "term" names the term, not its termination.
        let n = naming("Termination");
        assert_eq!(n[category("Renewal Term")], 0.0);
        assert_eq!(n[category("Termination for Convenience")], 0.5);
        assert_eq!(naming("Term and Renewal")[category("Renewal Term")], 1.0);
    }

    #[test]
    fn candidates_get_their_section_and_its_parent() {
        let text = "ARTICLE IX INSURANCE\n9.1 Coverage. Licensee shall maintain insurance. It names Licensor.\n9.2 Exclusivity. During the term Licensor shall not appoint others. It applies worldwide.";
        let cands = candidates(text);
        let sections = Sections::of(text, &cands);
        assert_eq!(sections.section.len(), cands.len());
        let of = |needle: &str| {
            let at = text.find(needle).expect("needle in text");
            let i = cands
                .iter()
                .position(|c| c.kind == Kind::Sentence && c.span.start == at)
                .expect("a sentence at the needle");
            sections.section[i].map(|s| sections.naming[s as usize])
        };
        let insurance = category("Insurance");
        let exclusivity = category("Exclusivity");
        let names = of("It names").expect("under 9.1");
        assert_eq!((names[0][insurance], names[1][insurance]), (0.0, 1.0));
        let applies = of("It applies").expect("under 9.2");
        assert_eq!(applies[0][exclusivity], 1.0);
        assert_eq!(applies[1][insurance], 1.0);
        assert_eq!(applies[0][insurance], 0.0);
    }
}
