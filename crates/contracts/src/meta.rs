//! Contract metadata — document type, parties, agreement date, governing law, title — the
//! fields CUAD lists first, so that search can filter on them and cite a clause as
//! "[Development Agreement, Pelican Delivers Inc., 2018]".
//!
//! Extraction is by pattern over the preamble (the text before the recitals or the first
//! section) and, for governing law, over the whole contract. Fields that are not found stay
//! empty rather than guessed.

use std::sync::LazyLock;

use regex::Regex;

/// What a contract says about itself.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ContractMeta {
    /// "License Agreement", "Co-Branding And Advertising Agreement".
    pub document_type: Option<String>,
    /// Full names first ("I-Escrow, Inc."), then the short names they are defined as.
    pub parties: Vec<String>,
    /// Agreement or effective date, ISO 8601 (`YYYY-MM-DD`).
    pub date: Option<String>,
    /// The jurisdiction whose law governs: "California", "England and Wales".
    pub governing_law: Option<String>,
    /// The title as written at the top of the contract.
    pub title: Option<String>,
}

/// How far into the contract the title and preamble are looked for.
const PREAMBLE_CHARS: usize = 4000;

static DOC_WORD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(agreement|contract|license|licence|amendment|addendum|lease|memorandum|terms|deed|charter|plan|letter|understanding|arrangement)\b")
        .expect("valid regex")
});
static EXHIBIT_LINE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^(exhibit|ex-|schedule|annex|appendix)\s*[\w.\-()]*$").expect("valid regex")
});
static INLINE_TYPE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b((?:[A-Z][\w\-]*\s+){0,5}?(?:Agreement|Contract|AGREEMENT|CONTRACT))\b")
        .expect("valid regex")
});

const MONTHS: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];
const MONTH_RE: &str = r"(January|February|March|April|May|June|July|August|September|October|November|December|Jan\.?|Feb\.?|Mar\.?|Apr\.?|Jun\.?|Jul\.?|Aug\.?|Sept?\.?|Oct\.?|Nov\.?|Dec\.?)";

static DATE_MDY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r"(?i)\b{MONTH_RE}\s+(\d{{1,2}})\s?(?:s\s?t|n\s?d|r\s?d|t\s?h)?(?:\s*,\s*|\s+)(\d{{4}})\b"
    ))
    .expect("valid regex")
});
static DATE_DMY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r"(?i)\b(\d{{1,2}})\s?(?:s\s?t|n\s?d|r\s?d|t\s?h)?\s+(?:day\s+of\s+)?{MONTH_RE}(?:\s*,\s*|\s+)(\d{{4}})\b"
    ))
    .expect("valid regex")
});
static DATE_NUMERIC: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b(\d{1,2})[/-](\d{1,2})[/-](\d{4}|\d{2})\b|\b(\d{4})-(\d{2})-(\d{2})\b")
        .expect("valid regex")
});
static DATE_CUE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(dated|as of|effective|entered into|made|executed|day of|date)\b")
        .expect("valid regex")
});

static LAW: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?i:govern(?:ed|s)?|constru(?:ed|es)|interpret(?:ed)?|enforced|controlled)[^.;]{0,160}?",
        // "the laws, other than choice of law rules, of the State of Georgia"
        r"(?i:laws?)(?:,[^,.;]{1,40},)?\s+(?i:of|in)\s+(?:(?i:the)\s+)?",
        r"(?i:(?:state|commonwealth|province|republic|kingdom|federal republic|people's republic)\s+of\s+)?",
        r"([A-Z][A-Za-z]+(?:(?:\s+|-)(?:[A-Z][A-Za-z]+|and|of))*)"
    ))
    .expect("valid regex")
});

/// A company name with its legal form; a word may open with one lower-case letter before a
/// capital ("iMine Corporation", "eBay Inc."). Its words may wrap onto the next line, but never
/// across a blank line: a title above the preamble ("CONSULTING AGREEMENT", then a blank line, then
/// "Acme Biotech, Inc.") is no part of the name.
static PARTY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"((?:(?:[A-Z0-9]|[a-z][A-Z])[\w&'’.\-]*,?(?:[ \t]+\n?|\n)[ \t]*){0,6}?(?:[A-Z0-9]|[a-z][A-Z])[\w&'’.\-]*,?(?:[ \t]+\n?|\n)[ \t]*",
        r"(?:(?i:inc\.?|incorporated|corp\.?|corporation|llc|l\.l\.c\.|ltd\.?|limited|l\.p\.|lp|llp|",
        r"company|co\.|gmbh|s\.a\.|plc|n\.v\.|b\.v\.|s\.p\.a\.|pty\.?\s+ltd\.?|trust|bank|university|s\.r\.l\.)",
        // Two- and three-letter forms only in capitals: "as", "sa" and "ag" are words too
        // ("the Securities Exchange Act of 1934, as amended").
        r"|AG|SA|SAS|KG|OY|AB|AS|NV|BV))",
        r"(?:\W|$)"
    ))
    .expect("valid regex")
});
/// What a capitalised run swallows before a party's name: "AND DRAGON SYSTEMS, INC.", "BY AND
/// BETWEEN ASTELLAS PHARMA INC.", "Exhibit 10.6 Goosehead Insurance Agency, LLC", "April 7, 2020
/// BANK OF AMERICA CORPORATION", "WHEREAS, Movado Group, Inc.", the end of the sentence before
/// ("Agreement, Cisco Systems, Inc.").
static PARTY_LEAD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r"(?i)^(?:(?:and|by\s+and\s+between|between|among|by)\s+|whereas,?\s+|agreement[,.]\s+|exhibit\s+[\w.\-]+\s+|(?:dated\s+)?(?:\d{{1,2}}\s+)?{MONTH_RE}\s+(?:\d{{1,2}},?\s+)?\d{{4}}\.?\s+)+"
    ))
    .expect("valid regex")
});
static ALIAS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r#"\(\s*(?:the\s+|hereinafter(?:\s+referred\s+to\s+as)?\s+|each\s+)?["“]([^"”]{2,40})["”]"#,
    )
    .expect("valid regex")
});
static PREAMBLE_END: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)\b(whereas|recitals|witnesseth|background|now,?\s+therefore|agree\s+as\s+follows)\b",
    )
    .expect("valid regex")
});

/// Defined terms in a preamble that are not parties.
const NOT_PARTIES: &[&str] = &[
    "agreement",
    "effective date",
    "execution date",
    "party",
    "parties",
    "contract",
    "term",
    "amendment",
    "license agreement",
    "commencement date",
    "closing date",
    "signing date",
];

/// Extracts what can be found; see [`ContractMeta`].
pub fn extract(text: &str) -> ContractMeta {
    let head: String = text.chars().take(PREAMBLE_CHARS).collect();
    let title = find_title(&head)
        .or_else(|| caps_title(&head))
        .or_else(|| mixed_case_title(&head))
        .map(|t| tidy_title(&t))
        .filter(|t| DOC_WORD.is_match(t));
    let document_type = title
        .as_deref()
        .and_then(document_type_of)
        .or_else(|| inline_document_type(&head));
    let preamble = preamble(&head);
    ContractMeta {
        document_type,
        parties: find_parties(preamble),
        date: find_date(preamble).or_else(|| find_date(&head)),
        governing_law: find_governing_law(text),
        title,
    }
}

/// The first short line near the top that names a kind of document ("LICENSE AGREEMENT"),
/// skipping exhibit labels ("EXHIBIT 10.3").
///
/// A title that a wrapped line breaks in two ("… PUBLICLY DISCLOSED. SERVICES" then "AGREEMENT
/// This Services Agreement …") starts with the all-caps words the line before ends in.
fn find_title(head: &str) -> Option<String> {
    let lines: Vec<&str> = head
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .take(15)
        .collect();
    lines
        .iter()
        .enumerate()
        .filter(|(_, l)| !EXHIBIT_LINE.is_match(l))
        .find(|(_, l)| {
            let words = l.split_whitespace().count();
            words <= 14 && l.len() <= 120 && DOC_WORD.is_match(l) && !l.ends_with([',', ';'])
        })
        .map(|(i, l)| {
            let run_on = i
                .checked_sub(1)
                .and_then(|before| lines.get(before))
                .and_then(|before| title_start_wrapped_off(before));
            let l = match run_on {
                Some(start) => format!("{start} {l}"),
                None => l.to_string(),
            };
            let l = PAGE_OF.replace(&l, "");
            let l = EXHIBIT_PREFIX.replace(&l, "");
            collapse(l.trim_end_matches(['.', ':', ' ', '-', '(']))
        })
        .filter(|l| DOC_WORD.is_match(l))
}

/// Lines at least this long are taken to be wrapped, not set apart.
const WRAPPED_LINE_CHARS: usize = 60;
/// One to six all-caps words at a line's end, after its last sentence end (or its start).
static CAPS_RUN_AT_END: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:^|[.:;]\s+)((?:[A-Z][A-Z0-9&\-]*\s+){0,5}[A-Z][A-Z0-9&\-]*)$")
        .expect("valid regex")
});

/// The all-caps words a wrapped line ends in, when they can be a title's start.
fn title_start_wrapped_off(line: &str) -> Option<&str> {
    if line.chars().count() < WRAPPED_LINE_CHARS || EXHIBIT_LINE.is_match(line) {
        return None;
    }
    let run = CAPS_RUN_AT_END.captures(line)?.get(1)?.as_str();
    // A whole all-caps line is a heading of its own, not a title's start.
    (run.len() < line.len()).then_some(run)
}

static EXHIBIT_PREFIX: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)^exhibit\s+[\w.\-()]+\s+").expect("valid regex"));
static CAPS_TITLE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b((?:[A-Z][A-Z0-9&\-]*\s+){0,6}(?:AGREEMENT|CONTRACT|AMENDMENT))\b")
        .expect("valid regex")
});

/// Filings whose line breaks were lost have no title line; the first all-caps run ending in
/// AGREEMENT ("THIS STRATEGIC ALLIANCE AGREEMENT (the...") names the document.
fn caps_title(head: &str) -> Option<String> {
    let window: String = head.chars().take(1500).collect();
    CAPS_TITLE.captures_iter(&window).find_map(|c| {
        let words: Vec<&str> = c
            .get(1)?
            .as_str()
            .split_whitespace()
            .skip_while(|w| matches!(*w, "THIS" | "THE" | "EXHIBIT" | "AN" | "A"))
            .collect();
        (!words.is_empty()).then(|| words.join(" "))
    })
}

/// Labels printed before a title that are not part of it ("EXECUTION COPY", rules of dashes).
static TITLE_LABEL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^(?:[^\w]+|(?:execution|conformed)\s+(?:copy|version)\s+|confidential\s+)+")
        .expect("valid regex")
});
/// Where a title line runs on into the preamble or the parties: "COLLABORATION AGREEMENT THIS
/// COLLABORATION AGREEMENT", "OUTSOURCING AGREEMENT BETWEEN VIRTUAL ITEM PROCESSING SYSTEMS,
/// INC. And ...", "... AGREEMENT by and between MONSANTO COMPANY".
static TITLE_RUN_ON: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"\s+(?:THIS|This|(?:(?i:by\s+and\s+)?(?i:between|among))|(?i:dated|made\s+and\s+entered))\b",
    )
    .expect("valid regex")
});
/// An all-caps title followed by the parties in mixed case ("JOINT FILING AGREEMENT OneMain
/// Holdings, Inc"), or by a comma ("Collaboration Agreement, BII/ XENCOR").
static TITLE_TAIL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^(?:([^a-z]*\b(?:AGREEMENT|CONTRACT|AMENDMENT|ADDENDUM|LICENSE|LICENCE|LEASE))\s+\S*[a-z].*|(.*\b(?i:agreement|contract)),\s.*)$",
    )
    .expect("valid regex")
});

/// A title as CUAD's annotators read it ("Document Name"): without labels printed before it and
/// without the preamble or parties a flattened title line runs on into. Measured against CUAD's
/// answers by `scripts/check_contract_meta.py` (BENCHMARKS.md).
fn tidy_title(title: &str) -> String {
    let title = TITLE_LABEL.replace(title, "");
    let mut title: &str = title.as_ref();
    if let Some(m) = TITLE_RUN_ON.find(title) {
        // Only where what is left still names the document.
        if DOC_WORD.is_match(&title[..m.start()]) {
            title = &title[..m.start()];
        }
    }
    if let Some(c) = TITLE_TAIL.captures(title) {
        if let Some(head) = c.get(1).or_else(|| c.get(2)) {
            title = head.as_str();
        }
    }
    // "SERVICES AGREEMENT SERVICES AGREEMENT": the title printed twice.
    let words: Vec<&str> = title.split_whitespace().collect();
    let half = words.len() / 2;
    let words = if words.len().is_multiple_of(2) && half > 0 && words[..half] == words[half..] {
        &words[..half]
    } else {
        &words[..]
    };
    words.join(" ")
}

static PAGE_OF: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)\s*page\s+\d+(\s+of\s+\d+)?\s*$").expect("valid regex"));

fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// "CO-BRANDING AND ADVERTISING AGREEMENT" → "Co-Branding And Advertising Agreement"; a title
/// in mixed case is kept as written. Only titles that name a document type count.
fn document_type_of(title: &str) -> Option<String> {
    if !DOC_WORD.is_match(title) {
        return None;
    }
    let stripped = title
        .trim_start_matches(|c: char| !c.is_alphanumeric())
        .trim();
    let stripped = title_like(stripped)?;
    let letters: Vec<char> = stripped.chars().filter(|c| c.is_alphabetic()).collect();
    let caps = letters.iter().filter(|c| c.is_uppercase()).count() * 10 >= letters.len() * 9;
    if !caps {
        return Some(stripped.to_string());
    }
    Some(title_case(stripped))
}

/// Words that open a sentence or a phrase, never a document's title ("On Schedule A hereto ...",
/// "This Agreement is effective ...", "For purposes of this Agreement").
const NOT_TITLE_START: &[&str] = &[
    "on", "in", "for", "to", "of", "by", "under", "with", "this", "that", "these", "which",
    "pursuant", "hereto", "if", "as", "whereas", "subject", "each", "any", "all", "such", "said",
];
/// The small words a title keeps in lower case.
const TITLE_SMALL_WORDS: &[&str] = &[
    "and", "of", "the", "to", "for", "in", "on", "with", "a", "an", "or", "between", "by", "de",
];

/// The document type a title names, if it reads as a title: it ends with the word naming the
/// document (what follows, a number or version, is dropped: "... Agreement 083096"), it does
/// not start with a section number or a word that opens a sentence ("19. Entire Agreement",
/// "On Schedule A Hereto ..."), and its lower-case words are only a title's small words.
fn title_like(title: &str) -> Option<&str> {
    let last = DOC_WORD.find_iter(title).last()?;
    let kind = title[..last.end()].trim();
    let words: Vec<&str> = kind.split_whitespace().collect();
    let first = words.first()?;
    let numbered = first.chars().next().is_some_and(|c| c.is_ascii_digit()) && first.ends_with('.');
    if numbered || NOT_TITLE_START.contains(&first.to_lowercase().as_str()) {
        return None;
    }
    let sentence = words.iter().any(|w| {
        let bare = w.trim_matches(|c: char| !c.is_alphanumeric());
        bare.chars().next().is_some_and(char::is_lowercase) && !TITLE_SMALL_WORDS.contains(&bare)
    });
    // A bare "Agreement" or "Contract" ("Contract No.: 151315UD0081") names no kind of document.
    let bare =
        words.len() == 1 && matches!(first.to_lowercase().as_str(), "agreement" | "contract");
    (!sentence && !bare).then_some(kind)
}

fn title_case(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut at_word_start = true;
    for c in text.chars() {
        if c.is_alphanumeric() || c == '\'' || c == '’' {
            if at_word_start {
                out.extend(c.to_uppercase());
            } else {
                out.extend(c.to_lowercase());
            }
            at_word_start = false;
        } else {
            out.push(c);
            at_word_start = true;
        }
    }
    out
}

fn inline_document_type(head: &str) -> Option<String> {
    let found = INLINE_TYPE.captures(head)?.get(1)?.as_str();
    let words = words_after(found, &["this", "the", "an", "a"]);
    if words.is_empty() {
        return None;
    }
    title_like(&words.join(" ")).map(title_case)
}

/// Flattened filings in mixed case ("Exhibit 2.01   Strategic Alliance Agreement   This agreement
/// is made ..."): the first capitalised run ending in "Agreement" or "Contract" near the top, as
/// written. Only in the first 300 characters, where a title stands; further on such a run is a
/// reference to another document.
fn mixed_case_title(head: &str) -> Option<String> {
    let mut end = head.len().min(300);
    while !head.is_char_boundary(end) {
        end -= 1;
    }
    INLINE_TYPE.captures_iter(&head[..end]).find_map(|c| {
        let words = words_after(c.get(1)?.as_str(), &["this", "the", "an", "a", "exhibit"]);
        // A bare "Contract" ("Contract No.: DDCX ...") names no kind of document.
        (words.len() > 1).then(|| words.join(" "))
    })
}

/// The words of a capitalised run naming a document, without the leading ones in `skip`
/// (lowercase): "This Supply Agreement" → ["Supply", "Agreement"].
fn words_after<'a>(run: &'a str, skip: &[&str]) -> Vec<&'a str> {
    run.split_whitespace()
        .skip_while(|w| skip.contains(&w.to_ascii_lowercase().as_str()))
        .collect()
}

/// The text from the first mention of "between"/"by and among" (or the start) to the
/// recitals: where parties and the date are named.
fn preamble(head: &str) -> &str {
    let end = PREAMBLE_END
        .find(head)
        .map(|m| m.start())
        .filter(|&e| e > 200)
        .unwrap_or(head.len().min(2000));
    let mut end = end.min(head.len());
    while !head.is_char_boundary(end) {
        end -= 1;
    }
    &head[..end]
}

/// The parties named in `preamble`: read from its first "between", "among", "by and" or
/// "parties" on, which skips a title and cover lines; when nothing is found from there, from
/// its start, since some preambles name the parties first and say none of those words
/// ("Acme, Inc. (\"Acme\") and Beta B.V. (\"Consultant\") agree to ...").
fn find_parties(preamble: &str) -> Vec<String> {
    // Whole words: "by and" inside "represented by Andrea van Elsas" is no "by and between".
    static PARTIES_FROM: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?i)\b(?:between|among|by\s+and|parties)\b").expect("valid regex")
    });
    let from = PARTIES_FROM.find(preamble).map_or(0, |m| m.start());
    let found = parties_in(&preamble[from..]);
    if found.is_empty() && from > 0 {
        return parties_in(preamble);
    }
    found
}

/// The parties named in `window` ([`find_parties`]): company names with a legal form, and the
/// entities (or, failing those, the terms) that defined terms stand for.
fn parties_in(window: &str) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    let push = |name: &str, names: &mut Vec<String>| {
        let name = collapse(name.trim().trim_end_matches(',').trim());
        let name = PARTY_LEAD.replace(&name, "").to_string();
        let lowered = name.to_lowercase();
        let generic = NOT_PARTIES.contains(&lowered.as_str())
            || lowered.starts_with("the ")
            || name.chars().filter(|c| c.is_alphabetic()).count() < 2
            || !reads_as_a_name(&name);
        if !generic && !names.iter().any(|n| n.eq_ignore_ascii_case(&name)) {
            names.push(name);
        }
    };
    for name in full_names_in(window) {
        push(name, &mut names);
    }
    let full_names = names.len();
    // A defined term ("Distributor") stands for the entity named before it: that entity is the
    // party ("Ingram Micro, a corporation ... ("Distributor")"); the term itself only when the
    // entity cannot be told.
    let mut segment_start = 0;
    for c in ALIAS.captures_iter(window) {
        let (Some(whole), Some(term)) = (c.get(0), c.get(1)) else {
            continue;
        };
        let segment = &window[segment_start..whole.start()];
        segment_start = whole.end();
        match defined_entity(segment) {
            Some(entity) => {
                push(&entity, &mut names);
                if shortens(term.as_str(), &entity) {
                    push(term.as_str(), &mut names);
                }
            }
            None => push(term.as_str(), &mut names),
        }
    }
    // Aliases only when at least one full name anchors them: elsewhere quoted terms are
    // definitions, not parties.
    if full_names == 0 {
        names.clear();
    }
    names.truncate(8);
    names
}

/// Whether a capitalised run the preamble reader took for a party reads as the name of one. A
/// party is never a section or article ("Section 4.01 The Company", a table of contents'
/// "OPERATING PROCEDURES 6 ARTICLE 6 GRAVITY BANK") or a date ("DATED AS" of one), and a name
/// without a legal form never ends in a word that makes it a date, a thing or a document:
/// "Amendment Effective Date", "Effective Time", "Territory", "PVSS Products", "Split Dollar
/// Agreement". A name that ends in a legal form ("Lyle Fermentation Products Ltd.") is a name.
fn reads_as_a_name(name: &str) -> bool {
    static SECTION: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?i)\b(?:section|article)\s+(?:\d|[ivx]+\b)").expect("valid regex")
    });
    // "DATED AS" (of a date) and "EFFECTIVE AS" end in "AS", which is also a legal form.
    static DATED: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"(?i)\b(?:dated|effective\s+as)\b").expect("valid regex"));
    if SECTION.is_match(name) || DATED.is_match(name) {
        return false;
    }
    if PARTY.is_match(name) {
        return true;
    }
    let last = name
        .split_whitespace()
        .last()
        .unwrap_or("")
        .trim_end_matches(['.', ',', ';', ':'])
        .to_lowercase();
    !matches!(
        last.as_str(),
        "as" | "of" | "date" | "time" | "territory" | "products" | "product" | "agreement"
    )
}

/// Company names with a legal form ("NETGEAR, Inc.") in `text`, leaving out what a party is ("a
/// Delaware corporation") and the company it belongs to ("a subsidiary of Bay Networks, Inc.").
fn full_names_in(text: &str) -> Vec<&str> {
    let mut found = Vec::new();
    for c in PARTY.captures_iter(text) {
        let Some(m) = c.get(1) else { continue };
        let before = text[..m.start()].trim_end().to_lowercase();
        let mut words = before.rsplit(|c: char| !c.is_alphanumeric());
        let last = words.next().unwrap_or("");
        let article = last == "a" || last == "an";
        let owner = last == "of"
            && words
                .next()
                .is_some_and(|w| matches!(w, "subsidiary" | "affiliate" | "division" | "parent"));
        if article || owner {
            continue;
        }
        // Drop a leading "between"/"by"/"and" swallowed by the capitalised run.
        let name = m.as_str();
        found.push(name.split_once(" between ").map_or(name, |(_, rest)| rest));
    }
    found
}

/// What a defined term's parenthesis follows names the entity it defines: a company with a
/// legal form in the text before it, else the first capitalised name on a line of it that a
/// description follows (", a corporation organized ...") or that the parenthesis closes.
fn defined_entity(segment: &str) -> Option<String> {
    if let Some(name) = full_names_in(segment).into_iter().next() {
        let name = collapse(name.trim().trim_end_matches(',').trim());
        return Some(PARTY_LEAD.replace(&name, "").to_string());
    }
    static NAMED: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(concat!(
            r"(?m)(?:^|\b(?:and|between|among)\s+)[ \t]*",
            r"((?:[A-Z][\w&'’.\-]*)(?:[ \t]+(?:[A-Z][\w&'’.\-]*|of|and|&|de))*)",
            r"(?:,[ \t]*(?:a|an|having|with|located|organized|incorporated)\b|,?\s*\z)"
        ))
        .expect("valid regex")
    });
    NAMED.captures_iter(segment).find_map(|c| {
        let name = c.get(1)?.as_str();
        let lowered = name.to_lowercase();
        let generic = NOT_PARTIES.contains(&lowered.as_str())
            || lowered
                .split_whitespace()
                .any(|w| matches!(w, "between" | "among" | "and"));
        // One capitalised word alone ("Shares", "Plan") is more often a defined term than a
        // company named without its legal form.
        (!generic && name.split_whitespace().count() >= 2).then(|| name.to_owned())
    })
}

/// A defined term that shortens its entity's name ("Astellas" for "ASTELLAS PHARMA INC.") is a
/// name a lawyer searches by; one that shares no word with it ("Distributor") is a role.
fn shortens(term: &str, entity: &str) -> bool {
    let words = |s: &str| -> Vec<String> {
        s.split(|c: char| !c.is_alphanumeric())
            .filter(|w| w.chars().count() >= 3)
            .map(str::to_lowercase)
            .collect()
    };
    let entity_words = words(entity);
    let entity_flat: String = entity
        .chars()
        .filter(|c| c.is_alphanumeric())
        .collect::<String>()
        .to_lowercase();
    words(term)
        .iter()
        .any(|w| entity_words.contains(w) || entity_flat.contains(w.as_str()))
}

fn month_number(name: &str) -> Option<u32> {
    let key = name.trim_end_matches('.').to_lowercase();
    MONTHS
        .iter()
        .position(|m| m.starts_with(&key) && key.len() >= 3)
        .map(|i| i as u32 + 1)
}

fn iso(year: u32, month: u32, day: u32) -> Option<String> {
    let valid =
        (1900..=2100).contains(&year) && (1..=12).contains(&month) && (1..=31).contains(&day);
    valid.then(|| format!("{year:04}-{month:02}-{day:02}"))
}

/// EDGAR page footers that CUAD's texts keep ("Source: ATN INTERNATIONAL, INC., 10-Q,
/// 11/8/2019"): their date is the filing's, not the agreement's.
static SOURCE_LINE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?m)^\s*Source:[^\n]*").expect("valid regex"));

/// All dates in `text`, with their byte positions (none from EDGAR "Source:" footers).
fn dates(text: &str) -> Vec<(usize, String)> {
    let footers: Vec<std::ops::Range<usize>> =
        SOURCE_LINE.find_iter(text).map(|m| m.range()).collect();
    let mut out = dates_anywhere(text);
    out.retain(|(at, _)| !footers.iter().any(|f| f.contains(at)));
    out
}

fn dates_anywhere(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for c in DATE_MDY.captures_iter(text) {
        let parsed = (|| {
            let month = month_number(c.get(1)?.as_str())?;
            iso(
                c.get(3)?.as_str().parse().ok()?,
                month,
                c.get(2)?.as_str().parse().ok()?,
            )
        })();
        if let (Some(date), Some(m)) = (parsed, c.get(0)) {
            out.push((m.start(), date));
        }
    }
    for c in DATE_DMY.captures_iter(text) {
        let parsed = (|| {
            let month = month_number(c.get(2)?.as_str())?;
            iso(
                c.get(3)?.as_str().parse().ok()?,
                month,
                c.get(1)?.as_str().parse().ok()?,
            )
        })();
        if let (Some(date), Some(m)) = (parsed, c.get(0)) {
            out.push((m.start(), date));
        }
    }
    for c in DATE_NUMERIC.captures_iter(text) {
        let parsed = (|| {
            if let (Some(m), Some(d), Some(y)) = (c.get(1), c.get(2), c.get(3)) {
                let year: u32 = y.as_str().parse().ok()?;
                // "7/18/11": two-digit years are this century below 50, the last one above.
                let year = match (y.as_str().len(), year) {
                    (2, y) if y < 50 => 2000 + y,
                    (2, y) => 1900 + y,
                    (_, y) => y,
                };
                let (m, d): (u32, u32) = (m.as_str().parse().ok()?, d.as_str().parse().ok()?);
                // "18/9/2008", "29/3/18": day first where the first number is no month.
                let (m, d) = if m > 12 && d <= 12 { (d, m) } else { (m, d) };
                return iso(year, m, d);
            }
            iso(
                c.get(4)?.as_str().parse().ok()?,
                c.get(5)?.as_str().parse().ok()?,
                c.get(6)?.as_str().parse().ok()?,
            )
        })();
        if let (Some(date), Some(m)) = (parsed, c.get(0)) {
            out.push((m.start(), date));
        }
    }
    out.sort();
    out
}

/// The first date that a dating phrase ("dated as of", "effective", "this 17th day of")
/// introduces, else the first date.
fn find_date(text: &str) -> Option<String> {
    let found = dates(text);
    let cued = found.iter().find(|(at, _)| {
        let mut from = at.saturating_sub(60);
        while !text.is_char_boundary(from) {
            from -= 1;
        }
        DATE_CUE.is_match(&text[from..*at + 1])
    });
    cued.or(found.first()).map(|(_, d)| d.clone())
}

static LAW_PLACE: LazyLock<Regex> = LazyLock::new(|| {
    // "State of New York", or "laws of California" (a capitalised word right after "of": "laws
    // of the State of ..." is left to the first form).
    Regex::new(r"(?:State|Commonwealth|Province|Republic)\s+of\s+([A-Z][A-Za-z]+(?:\s+[A-Z][A-Za-z]+){0,3})|(?i:laws)\s+of\s+([A-Z][A-Za-z]+(?:\s+[A-Z][A-Za-z]+){0,3})")
        .expect("valid regex")
});
/// "governed by PRC Laws", "in accordance with Swiss law": the place as an adjective.
static LAW_ADJECTIVE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i:govern(?:ed|s)?|constru(?:ed|es)|interpret(?:ed)?)[^.;]{0,80}?\b(PRC|English|Swiss|French|German|Irish|Scottish|Dutch|Japanese|Chinese|Israeli|Canadian)\s+(?i:laws?)\b",
    )
    .expect("valid regex")
});

/// The place a law is named after, as CUAD's answers name it ("PRC" → "People's Republic of
/// China", "Swiss" → "Switzerland").
fn place_of(name: &str) -> String {
    let place = match name.trim_start_matches("the ") {
        "PRC" | "P.R.C" | "P.R.C." => "People's Republic of China",
        "English" => "England",
        "Swiss" => "Switzerland",
        "French" => "France",
        "German" => "Germany",
        "Irish" => "Ireland",
        "Scottish" => "Scotland",
        "Dutch" => "Netherlands",
        "Japanese" => "Japan",
        "Chinese" => "China",
        "Israeli" => "Israel",
        "Canadian" => "Canada",
        other => other,
    };
    place.to_string()
}
static LAW_SENTENCE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)\b(govern|constru|interpret)").expect("valid regex"));

/// "The laws of the State of New York … govern this Agreement": the place comes before the
/// verb, so the main pattern misses it; look for "State of X" in a sentence about governing.
fn governing_place_in_sentence(text: &str) -> Option<String> {
    text.split(". ")
        .filter(|s| s.contains("law") && LAW_SENTENCE.is_match(s))
        .find_map(|s| {
            LAW_PLACE.captures_iter(s).find_map(|c| {
                c.get(1)
                    .or_else(|| c.get(2))
                    .map(|m| m.as_str().to_string())
                    .filter(|p| {
                        !p.starts_with("United States")
                            && !matches!(
                                p.split_whitespace().next(),
                                Some("The" | "State" | "Commonwealth" | "Province" | "Republic")
                            )
                    })
            })
        })
}

fn find_governing_law(text: &str) -> Option<String> {
    let found = find_governing_law_after_verb(text).or_else(|| {
        LAW_ADJECTIVE
            .captures(text)
            .and_then(|c| c.get(1))
            .map(|m| place_of(m.as_str()))
    });
    let in_sentence = || governing_place_in_sentence(text).map(|p| place_of(&p));
    match found.as_deref() {
        // A federal-law mention ("laws of the United States [of America]") is weaker than a
        // state's.
        Some(f) if f.starts_with("United States") => in_sentence().or(found),
        None => in_sentence(),
        _ => found,
    }
}

/// Words that end a place named in capitals ("NEW YORK WITHOUT REGARD TO ...").
const PLACE_ENDS: &[&str] = &[
    "APPLICABLE",
    "WITHOUT",
    "EXCLUDING",
    "EXCEPT",
    "EXCLUSIVE",
    "AS",
    "IN",
    "TO",
    "FOR",
    "WHICH",
    "THAT",
    "REGARDLESS",
    "NOTWITHSTANDING",
    "WITH",
    "AND",
    "OTHER",
];

fn find_governing_law_after_verb(text: &str) -> Option<String> {
    for c in LAW.captures_iter(text) {
        let Some(m) = c.get(1) else { continue };
        // In an all-caps clause the capitalised run goes on past the place ("DELAWARE
        // APPLICABLE TO CONTRACTS ..."): it ends at the first word that names no place.
        let mut words: Vec<&str> = m
            .as_str()
            .split_whitespace()
            .take_while(|w| !PLACE_ENDS.contains(w))
            .collect();
        // "California without regard to" is cut at the first lowercase word already; trailing
        // connectives are dropped ("England and").
        while words.last().is_some_and(|w| matches!(*w, "and" | "of")) {
            words.pop();
        }
        let mut place = place_of(&words.join(" "));
        if !place.chars().any(char::is_lowercase) {
            place = title_case(&place);
        }
        let lowered = place.to_lowercase();
        // "the laws of such jurisdiction" names no place.
        if place.is_empty() || ["this", "such", "any", "each"].contains(&lowered.as_str()) {
            continue;
        }
        return Some(place);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_defined_party_resolves_to_the_entity_it_defines() {
        let text = "DISTRIBUTOR AGREEMENT BETWEEN INGRAM MICRO AND NETGEAR\n\nIngram Micro, a corporation organized under the laws of the State of California, having a place of business located at 1600 E. St. Andrew Place, Santa Ana, California, USA, (\"Distributor\") and NETGEAR, Inc. (\"NETGEAR\"), a wholly owned subsidiary of Bay Networks, Inc., organized under the laws of the State of Delaware, agree that the following terms govern the purchase of Products between the parties.";
        let meta = extract(text);
        assert!(
            meta.parties.iter().any(|p| p == "Ingram Micro"),
            "{:?}",
            meta.parties
        );
        assert!(
            meta.parties.iter().any(|p| p == "NETGEAR, Inc."),
            "{:?}",
            meta.parties
        );
        // Roles are no parties, nor is a party's parent company.
        for not in ["Distributor", "Bay Networks, Inc."] {
            assert!(!meta.parties.iter().any(|p| p == not), "{:?}", meta.parties);
        }
    }

    #[test]
    fn a_document_type_is_a_title_not_a_sentence_or_a_section() {
        for (line, want) in [
            ("ON SCHEDULE A HERETO ORDERLY MARKETING AGREEMENT", None),
            ("19. ENTIRE AGREEMENT", None),
            (
                "This Agreement is effective 7/1/98 (\"Effective Date\")",
                None,
            ),
            (
                "Ingram NETGEAR Distributor Agreement 083096",
                Some("Ingram NETGEAR Distributor Agreement"),
            ),
            (
                "Software License Agreement [v.08.05.03]",
                Some("Software License Agreement"),
            ),
            (
                "CO-BRANDING AND ADVERTISING AGREEMENT",
                Some("Co-Branding And Advertising Agreement"),
            ),
        ] {
            assert_eq!(document_type_of(line).as_deref(), want, "{line}");
        }
    }

    #[test]
    fn a_cuad_style_preamble() {
        let text = "EXHIBIT 10.10\n\nCO-BRANDING AND ADVERTISING AGREEMENT\n\nTHIS CO-BRANDING AND ADVERTISING AGREEMENT (the \"Agreement\") is made as of June 21, 1999 (the \"Effective Date\") by and between I-ESCROW, INC., with its principal place of business at 1730 S. Amphlett Blvd., San Mateo, California 94402 (\"i-Escrow\"), and 2THEMART.COM, INC. having its principal place of business at Irvine, California 92612 (\"2TheMart\").\n\n1. DEFINITIONS.\n\n12.1 GOVERNING LAW. This Agreement will be governed and construed in accordance with the laws of the State of California without giving effect to conflict of laws.";
        let meta = extract(text);
        assert_eq!(
            meta.title.as_deref(),
            Some("CO-BRANDING AND ADVERTISING AGREEMENT")
        );
        assert_eq!(
            meta.document_type.as_deref(),
            Some("Co-Branding And Advertising Agreement")
        );
        assert_eq!(meta.date.as_deref(), Some("1999-06-21"));
        assert_eq!(meta.governing_law.as_deref(), Some("California"));
        assert_eq!(
            meta.parties,
            [
                "I-ESCROW, INC.",
                "2THEMART.COM, INC.",
                "i-Escrow",
                "2TheMart"
            ]
        );
    }

    #[test]
    fn day_of_month_dates_and_foreign_law() {
        let text = "GAS FRANCHISE AGREEMENT\n\nTHIS AGREEMENT, made and entered into this 17th day of November, 2015, by and between the Town of Vinton and ROANOKE GAS COMPANY, a Virginia corporation (\"Grantee\").\n\nThis Agreement shall be governed by the laws of England and Wales.";
        let meta = extract(text);
        assert_eq!(meta.date.as_deref(), Some("2015-11-17"));
        assert_eq!(meta.governing_law.as_deref(), Some("England and Wales"));
        assert_eq!(
            meta.document_type.as_deref(),
            Some("Gas Franchise Agreement")
        );
        assert!(
            meta.parties.contains(&"ROANOKE GAS COMPANY".to_string()),
            "{:?}",
            meta.parties
        );
    }

    #[test]
    fn two_digit_years_spaced_ordinals_and_law_named_before_the_verb() {
        let meta = extract("SUPPLY AGREEMENT\n\nThis Agreement is dated 7/18/11 between Acme Corp. and Beta LLC.\n\n9. The laws of the State of New York (excluding conflict rules) govern this Agreement.");
        assert_eq!(meta.date.as_deref(), Some("2011-07-18"));
        assert_eq!(meta.governing_law.as_deref(), Some("New York"));
        let meta = extract("LICENSE AGREEMENT made this 1s t day of June, 2004 by Acme Corp.");
        assert_eq!(meta.date.as_deref(), Some("2004-06-01"));
    }

    #[test]
    fn titles_lose_labels_and_what_a_flattened_title_line_runs_on_into() {
        // Title lines of CUAD contracts (full_contract_txt), against CUAD's "Document Name".
        for (line, title) in [
            (
                "COLLABORATION AGREEMENT THIS COLLABORATION AGREEMENT",
                "COLLABORATION AGREEMENT",
            ),
            (
                "OUTSOURCING AGREEMENT BETWEEN VIRTUAL ITEM PROCESSING SYSTEMS, INC. And BROKERS NATIONAL LIFE ASSURANCE COMPANY",
                "OUTSOURCING AGREEMENT",
            ),
            (
                "SECOND AMENDED AND RESTATED EXCLUSIVE AGENCY AND MARKETING AGREEMENT by and between MONSANTO COMPANY",
                "SECOND AMENDED AND RESTATED EXCLUSIVE AGENCY AND MARKETING AGREEMENT",
            ),
            (
                "- ---------------------------------------------------------------------------- CO-BRANDING AGREEMENT",
                "CO-BRANDING AGREEMENT",
            ),
            (
                "EXECUTION COPY VIDEO-ON-DEMAND CONTENT LICENSE AGREEMENT",
                "VIDEO-ON-DEMAND CONTENT LICENSE AGREEMENT",
            ),
            ("SERVICES AGREEMENT SERVICES AGREEMENT", "SERVICES AGREEMENT"),
            (
                "JOINT FILING AGREEMENT OneMain Holdings, Inc",
                "JOINT FILING AGREEMENT",
            ),
            (
                "Collaboration Agreement, BII/ XENCOR",
                "Collaboration Agreement",
            ),
            // Left alone: a title that goes on after its document word.
            (
                "Broker Dealer Marketing and Servicing Agreement for Variable Annuity Contracts",
                "Broker Dealer Marketing and Servicing Agreement for Variable Annuity Contracts",
            ),
            (
                "AGREEMENT AND PLAN OF MERGER",
                "AGREEMENT AND PLAN OF MERGER",
            ),
        ] {
            assert_eq!(tidy_title(line), title, "{line}");
        }
    }

    #[test]
    fn dates_as_cuad_contracts_write_them_and_not_the_filing_date() {
        // From CUAD contracts; the "Source:" line is an EDGAR page footer with the filing date.
        for (text, date) in [
            (
                "Source: WESTERN COPPER CORP, 6-K, 2/23/2006\nThis Agreement is made May 3,2006 between A and B.",
                Some("2006-05-03"),
            ),
            (
                "HOSTING AGREEMENT\nSource: PARETEUM CORP, 8-K, 10/1/2008\nDated: 18/9/2008",
                Some("2008-09-18"),
            ),
            ("Effective Date: 12-23-2019", Some("2019-12-23")),
            (
                "SUPPLY AGREEMENT dated November 19t h, 2012",
                Some("2012-11-19"),
            ),
            ("made this 19  DAY OF MAY , 2010", Some("2010-05-19")),
            ("Source: ATN INTERNATIONAL, INC., 10-Q, 11/8/2019", None),
        ] {
            assert_eq!(extract(text).date.as_deref(), date, "{text}");
        }
    }

    #[test]
    fn governing_law_places_as_cuad_names_them() {
        // Governing-law sentences of CUAD contracts.
        for (text, place) in [
            (
                "This Agreement shall be governed by PRC Laws.",
                "People's Republic of China",
            ),
            (
                "This Agreement shall be governed by the laws of the PRC, without regard to conflicts of law principles.",
                "People's Republic of China",
            ),
            (
                "This Agreement shall be governed by and construed in accordance with Swiss law.",
                "Switzerland",
            ),
            (
                "The laws of California shall govern the construction and enforceability of the Agreement.",
                "California",
            ),
            (
                "This Agreement shall be governed by and construed in accordance with the laws, other than choice of law rules, of the state of Florida.",
                "Florida",
            ),
            (
                "This AGREEMENT is controlled by the laws of the State of Texas, and venue ...",
                "Texas",
            ),
            (
                "This Distributor Agreement shall be exclusively governed, construed, enforced and controlled by the laws of the United States of America and of the State of Texas.",
                "Texas",
            ),
            (
                "THIS AGREEMENT SHALL BE GOVERNED BY THE LAWS OF THE STATE OF NEW YORK APPLICABLE TO AGREEMENTS MADE AND TO BE PERFORMED ENTIRELY WITHIN SUCH STATE.",
                "New York",
            ),
            (
                "This Agreement shall be governed by the laws of England and Wales.",
                "England and Wales",
            ),
            (
                "This Agreement is governed by the laws of The State of Florida.",
                "Florida",
            ),
        ] {
            assert_eq!(extract(text).governing_law.as_deref(), Some(place), "{text}");
        }
    }

    #[test]
    fn parties_without_what_they_are_or_what_the_capitals_swallowed() {
        let meta = extract(
            "DISTRIBUTOR AGREEMENT\n\nThis Agreement is made July 6, 2020 BY AND BETWEEN ASTELLAS PHARMA INC., a Japanese company (\"Astellas\"), and FIBROGEN, INC., a Delaware corporation (\"FibroGen\"), subject to the Securities Exchange Act of 1934, as amended.",
        );
        assert_eq!(
            meta.parties,
            [
                "ASTELLAS PHARMA INC.",
                "FIBROGEN, INC.",
                "Astellas",
                "FibroGen"
            ]
        );
    }

    #[test]
    fn sections_dates_and_defined_things_are_no_parties() {
        for junk in [
            "DATED AS",
            "EFFECTIVE AS",
            "Section 3.2 Limited",
            "OPERATING PROCEDURES 6 ARTICLE 6 GRAVITY BANK",
            "Amendment Effective Date",
            "Effective Time",
            "Territory",
            "PVSS Products",
            "Split Dollar Agreement",
        ] {
            assert!(!reads_as_a_name(junk), "{junk}");
        }
        for name in [
            "LYLE FERMENTATION PRODUCTS LTD.",
            "Reynolds Consumer Products LLC",
            "Norsk Hydro AS",
            "Ingram Micro",
            "Bank of America Corporation",
        ] {
            assert!(reads_as_a_name(name), "{name}");
        }
        let meta = extract(
            "SERVICES OUTSOURCING AGREEMENT\n\nBetween\n\nCCA INDUSTRIES, INC. (\"Company\")\n\nAnd\n\nEMERSON HEALTHCARE, LLC (\"Contractor\")\n\nDATED AS OF January 20, 2014",
        );
        assert!(
            !meta.parties.iter().any(|p| p.contains("DATED")),
            "{:?}",
            meta.parties
        );
        assert!(
            meta.parties.iter().any(|p| p == "EMERSON HEALTHCARE, LLC"),
            "{:?}",
            meta.parties
        );
        let meta = extract(
            "DISTRIBUTION AGREEMENT\n\nThis Agreement is made between iMine Corporation, a Nevada corporation (\"JRVS\"), and SUNWAI Technology Co., Ltd. (\"Distributor\").",
        );
        assert!(
            meta.parties.iter().any(|p| p == "iMine Corporation"),
            "{:?}",
            meta.parties
        );
    }

    #[test]
    fn a_name_starting_with_and_is_no_by_and_between() {
        // No "between": the parties open the preamble, a signatory's first name begins with
        // "And", and the first "parties" comes after the names.
        let meta = extract(
            "CONSULTING AGREEMENT\n\nAcme Biotech, Inc., with a place of business at 1 Main Street, Berkeley, CA 94710 (\"Acme\") and NOVA B.V having an address at Kade 16, Leiden, represented by Andrea Jansen, (\"Consultant\") agree to all terms and conditions of this Consulting Agreement.\n\n1. Services. The parties shall meet monthly.",
        );
        assert!(
            meta.parties.iter().any(|p| p == "Acme Biotech, Inc."),
            "{:?}",
            meta.parties
        );
    }

    #[test]
    fn a_title_a_wrapped_line_breaks_in_two_keeps_its_first_words() {
        let meta = extract(
            "EXHIBIT 4.25 INFORMATION IN THIS EXHIBIT IS CONFIDENTIAL AND WOULD LIKELY CAUSE HARM IF PUBLICLY DISCLOSED. SERVICES\nAGREEMENT This Services Agreement (this \"Agreement\") is entered into by and between Acme Ltd. and Bolt Inc.\n",
        );
        assert_eq!(meta.title.as_deref(), Some("SERVICES AGREEMENT"));
        // A short line before the title is set apart, not wrapped: it stays out.
        let meta =
            extract("ACME CORP\nLICENSE AGREEMENT\nThis License Agreement is made by Acme Corp.\n");
        assert_eq!(meta.title.as_deref(), Some("LICENSE AGREEMENT"));
    }

    #[test]
    fn a_mixed_case_title_in_a_flattened_filing() {
        let meta = extract(
            "Exhibit 2.01   Strategic Alliance Agreement   This agreement is made and entered into this 30th day of November, 2017 by and between Bravatek Solutions, Inc. and Acme Corp.",
        );
        assert_eq!(meta.title.as_deref(), Some("Strategic Alliance Agreement"));
        let meta = extract(
            "Contract No.: DDCX 201812130044 Exhibit 10.5 Collaboration Agreement This Collaboration Agreement is made and entered into by and between the following parties.",
        );
        assert_eq!(meta.title.as_deref(), Some("Collaboration Agreement"));
    }

    #[test]
    fn nothing_is_guessed() {
        let meta = extract("Some notes about a meeting.");
        assert_eq!(meta, ContractMeta::default());
    }
}
