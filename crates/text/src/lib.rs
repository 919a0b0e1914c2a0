//! Text analysis for legal clauses: the one place where "what is a term" is decided.
//!
//! The lexical index and anything that explains or highlights matches must agree on terms, so
//! there is a single [`Analyzer`] here, and the index crate adapts it to tantivy instead of
//! configuring tantivy's own filters separately (two configurations drift apart).
//!
//! Defaults follow the Lucene `EnglishAnalyzer` setup that the ACORD paper's BM25 reference uses:
//! split on non-alphanumeric characters, lowercase, drop Lucene's 33 English stop words, Snowball
//! English stems. Each step can be turned off through [`AnalyzerConfig`].

pub mod claims;
pub mod exclusion;
pub mod inclusion;
pub mod jargon;
pub mod limitation;
pub mod renewal;
pub mod scope;
pub mod spelling;
pub mod stance;
pub mod syntax;

pub use claims::{
    lists_grounds, mentions_third_parties, wanted_claim_breadth, wanted_claim_source, ClaimBreadth,
    ClaimSource,
};
pub use exclusion::{exclusions, Exclusion};
pub use inclusion::{inclusions, Inclusion};
pub use jargon::expand_query;
pub use limitation::{names_waived_damages, states_cap, wants_cap, wants_damages_waiver};
pub use renewal::{wanted_renewal, Renewal, RenewalMode};
use rust_stemmers::{Algorithm, Stemmer};
pub use scope::{required_limits, Limit};
use serde::{Deserialize, Serialize};
pub use stance::{favoured_side, Balance, Side};

/// Lowercased alphanumeric words of `text`, unstemmed: what the query-constraint readers
/// (exclusions, sides, required limits) match their word lists against.
pub(crate) fn lowercase_words(text: &str) -> Vec<String> {
    text.to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Drafting shorthand the query readers write out ([`query_words`]), one word each.
pub(crate) const QUERY_SHORTHAND: &[(&str, &[&str])] = &[
    ("indem", &["indemnity"]),
    ("3p", &["third", "party"]),
    ("3rd", &["third"]),
    ("dmgs", &["damages"]),
    ("dmg", &["damages"]),
    ("agmt", &["agreement"]),
    ("excl", &["exclusion"]),
];

/// [`lowercase_words`] of a query, with contractions and standard drafting shorthand written
/// out, for the readers of what a query asks: "isn't limited to" is "is not limited to", "we're
/// the buyer" is "we are the buyer", "indem w/o hold harmless" is "indemnity without hold
/// harmless", "3P claims" are "third party claims", "dmgs" are "damages".
///
/// Why: the readers match words and phrases, and a paralegal's clause-bank search or a
/// lawyer's quick note says the same thing in these forms; split at the apostrophe or the
/// slash, a contraction or a shorthand matches nothing the readers know ("doesn t include").
pub(crate) fn query_words(text: &str) -> Vec<String> {
    let words = lowercase_words(text);
    let mut out: Vec<String> = Vec::with_capacity(words.len());
    let mut i = 0;
    while i < words.len() {
        let w = words[i].as_str();
        let next = words.get(i + 1).map(String::as_str);
        let previous = out.last().map(String::as_str);
        match (w, next) {
            // "w/o" (without) and "w/" (with).
            ("w", Some("o")) => {
                out.push("without".to_owned());
                i += 2;
                continue;
            }
            ("w", _) => out.push("with".to_owned()),
            // "n't": "isn t" -> "is not", "can t" -> "can not", "won t" -> "will not".
            ("t", _) if previous.is_some_and(|p| p.ends_with('n') && p.len() > 2) => {
                let negated = out.pop().unwrap_or_default();
                let verb = match negated.as_str() {
                    "can" => "can",
                    "won" => "will",
                    other => &other[..other.len() - 1],
                };
                out.push(verb.to_owned());
                out.push("not".to_owned());
            }
            ("re", _) if matches!(previous, Some("we" | "you" | "they")) => {
                out.push("are".to_owned())
            }
            ("m", _) if previous == Some("i") => out.push("am".to_owned()),
            _ => match QUERY_SHORTHAND.iter().find(|(short, _)| *short == w) {
                Some((_, written_out)) => out.extend(written_out.iter().map(|s| (*s).to_owned())),
                None => out.push(words[i].clone()),
            },
        }
        i += 1;
    }
    out
}

/// Phrases that negate the rest of their sentence: "It should not include indemnification
/// clauses that cover both first and third party claims", "Do not include clauses that
/// disclaim all indirect damages". Not "not limited to": in "including but not limited to"
/// it widens, and "not limited to third party claims" affirms first-party cover.
const SENTENCE_NEGATIONS: &[&str] = &[
    "not include",
    "not including",
    "not contain",
    "not containing",
    "not cover",
    "not covering",
    "not want",
];

/// The words of `query` that state what the query wants, for the readers that look for
/// something wanted (a claim source, a limit, a cap): [`query_words`] of the query with
/// parenthesised asides removed ("(e.g., during the term ...)") and each sentence (or clause
/// after a colon: "I don't want the cap to protect a supplier: looking for ...") cut at a
/// negation ([`SENTENCE_NEGATIONS`]).
///
/// Why: a lawyer describing a clause at length says what it must not be ("It should not include
/// indemnification clauses that cover both first party and third party claims") and gives
/// examples in brackets. A reader of wanted features that reads those parts reads the opposite
/// of the request (first-party claims for a third-party query), and an aside can push a word
/// past a reader's reach ("limited in duration (e.g., ...) and territories"). What the query
/// excludes is read from the full text by [`exclusions`].
pub(crate) fn affirmed_words(query: &str) -> Vec<String> {
    let mut without_asides = String::with_capacity(query.len());
    let mut depth = 0usize;
    for c in query.chars() {
        match c {
            '(' => depth += 1,
            ')' if depth > 0 => depth -= 1,
            _ if depth == 0 => without_asides.push(c),
            _ => {}
        }
    }
    let mut out = Vec::new();
    for sentence in without_asides.split(['.', ';', ':', '!', '?']) {
        let words = query_words(sentence);
        let cut = (0..words.len())
            .find(|&i| {
                SENTENCE_NEGATIONS
                    .iter()
                    .any(|n| starts_with_phrase(&words[i..], n))
            })
            .unwrap_or(words.len());
        out.extend(words.into_iter().take(cut));
    }
    out
}

/// Whether `words` (from [`lowercase_words`]) speak of an indemnity ("indemnify",
/// "indemnification", "indemnity", or in plain words "reimburse", "hold harmless"): the
/// readers of indemnity-only constraints check it first.
pub(crate) fn mentions_indemnity(words: &[String]) -> bool {
    words
        .iter()
        .any(|w| w.starts_with("indemn") || w.starts_with("reimburs") || w == "harmless")
}

/// Whether `words` (from [`lowercase_words`]) begin with `phrase` (lowercase words separated
/// by single spaces).
pub(crate) fn starts_with_phrase(words: &[String], phrase: &str) -> bool {
    let parts: Vec<&str> = phrase.split(' ').collect();
    words.len() >= parts.len() && words.iter().zip(&parts).all(|(w, p)| w == p)
}

/// Whether `phrase` occurs anywhere in `words`.
pub(crate) fn contains_phrase(words: &[String], phrase: &str) -> bool {
    (0..words.len()).any(|i| starts_with_phrase(&words[i..], phrase))
}

/// Whether any of `phrases` occurs anywhere in `words`.
pub(crate) fn contains_any_phrase(words: &[String], phrases: &[&str]) -> bool {
    phrases.iter().any(|p| contains_phrase(words, p))
}

/// How many times `phrase` occurs in `words` (overlapping occurrences each count).
pub(crate) fn count_phrase(words: &[String], phrase: &str) -> usize {
    (0..words.len())
        .filter(|&i| starts_with_phrase(&words[i..], phrase))
        .count()
}

/// How many times any of `phrases` occurs in `words`, each occurrence of each phrase counted.
pub(crate) fn count_phrases(words: &[String], phrases: &[&str]) -> usize {
    phrases.iter().map(|p| count_phrase(words, p)).sum()
}

/// Whether a text has a word: a letter or a digit in any script. A query, a clause or a
/// rating's request of punctuation alone ("?!", "!!!") has nothing to search for or classify,
/// and any answer to it would read as a finding.
pub fn has_words(text: &str) -> bool {
    text.chars().any(char::is_alphanumeric)
}

/// Character offset of every byte offset of `text` (and of its end): byte spans from Rust's
/// string APIs become the character spans that JSON consumers (the page, Python) index by.
pub fn char_offsets(text: &str) -> Vec<usize> {
    let mut map = vec![0; text.len() + 1];
    let mut chars = 0;
    for (i, c) in text.char_indices() {
        for slot in &mut map[i..i + c.len_utf8()] {
            *slot = chars;
        }
        chars += 1;
    }
    map[text.len()] = chars;
    map
}

/// Lucene's `EnglishAnalyzer.ENGLISH_STOP_WORDS_SET`.
///
/// Note that it contains "no" and "not": for clause retrieval that loses "no event" and
/// "not exceed" as phrases, but BM25 over single terms gains little from them anyway, and keeping
/// the reference set makes our numbers comparable with the paper's.
pub const LUCENE_ENGLISH_STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it",
    "no", "not", "of", "on", "or", "such", "that", "the", "their", "then", "there", "these",
    "they", "this", "to", "was", "will", "with",
];

/// Which stop words to drop.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum StopWords {
    /// Keep every token.
    None,
    /// Lucene's English set ([`LUCENE_ENGLISH_STOP_WORDS`]).
    #[default]
    LuceneEnglish,
    /// A custom list (compared after lowercasing).
    Custom(Vec<String>),
}

/// How clause and query text become index terms. Persisted with an index so that queries are
/// analysed exactly as the clauses were.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AnalyzerConfig {
    pub lowercase: bool,
    pub stop_words: StopWords,
    /// Snowball English stemming.
    pub stem: bool,
    /// Tokens longer than this (in bytes) are dropped: they are base64 blobs or table debris.
    pub max_token_len: usize,
}

impl Default for AnalyzerConfig {
    fn default() -> Self {
        AnalyzerConfig {
            lowercase: true,
            stop_words: StopWords::LuceneEnglish,
            stem: true,
            max_token_len: 64,
        }
    }
}

/// A term and where it came from in the original text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Term {
    pub text: String,
    /// Byte offsets of the source token in the analysed text.
    pub start: usize,
    pub end: usize,
    /// Position of the token among all tokens (stop words included), as Lucene counts positions.
    pub position: usize,
}

/// Turns text into terms according to an [`AnalyzerConfig`]. Cheap to clone.
pub struct Analyzer {
    config: AnalyzerConfig,
    stop_words: Vec<String>,
    stemmer: Option<Stemmer>,
    /// [`REQUEST_WORDS`] as this analyzer analyses them, for [`Analyzer::query_term_texts`].
    request_terms: Vec<String>,
}

impl Clone for Analyzer {
    fn clone(&self) -> Self {
        Analyzer::new(self.config.clone())
    }
}

impl std::fmt::Debug for Analyzer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Analyzer")
            .field("config", &self.config)
            .finish()
    }
}

impl Default for Analyzer {
    fn default() -> Self {
        Analyzer::new(AnalyzerConfig::default())
    }
}

impl Analyzer {
    pub fn new(config: AnalyzerConfig) -> Self {
        let mut stop_words: Vec<String> = match &config.stop_words {
            StopWords::None => Vec::new(),
            StopWords::LuceneEnglish => LUCENE_ENGLISH_STOP_WORDS
                .iter()
                .map(|s| s.to_string())
                .collect(),
            StopWords::Custom(words) => words.iter().map(|w| w.to_lowercase()).collect(),
        };
        stop_words.sort();
        stop_words.dedup();
        let stemmer = config.stem.then(|| Stemmer::create(Algorithm::English));
        let mut analyzer = Analyzer {
            config,
            stop_words,
            stemmer,
            request_terms: Vec::new(),
        };
        analyzer.request_terms = analyzer.term_texts(&REQUEST_WORDS.join(" "));
        analyzer
    }

    pub fn config(&self) -> &AnalyzerConfig {
        &self.config
    }

    fn is_stop_word(&self, token: &str) -> bool {
        self.stop_words
            .binary_search_by(|w| w.as_str().cmp(token))
            .is_ok()
    }

    /// Calls `emit` for every term of `text`, in order.
    pub fn for_each_term(&self, text: &str, mut emit: impl FnMut(Term)) {
        for (token_position, (start, end)) in word_spans(text).into_iter().enumerate() {
            let raw = &text[start..end];
            if raw.len() > self.config.max_token_len {
                continue;
            }
            let lowered;
            let token = if self.config.lowercase {
                lowered = raw.to_lowercase();
                lowered.as_str()
            } else {
                raw
            };
            if self.is_stop_word(token) {
                continue;
            }
            let text = match &self.stemmer {
                Some(stemmer) => stemmer.stem(token).into_owned(),
                None => token.to_owned(),
            };
            emit(Term {
                text,
                start,
                end,
                position: token_position,
            });
        }
    }

    /// The terms of `text`, in order.
    pub fn terms(&self, text: &str) -> Vec<Term> {
        let mut out = Vec::new();
        self.for_each_term(text, |t| out.push(t));
        out
    }

    /// Just the term strings, in order (duplicates kept).
    pub fn term_texts(&self, text: &str) -> Vec<String> {
        self.terms(text).into_iter().map(|t| t.text).collect()
    }

    /// The terms of a query that say what it asks for: [`Analyzer::term_texts`] without the
    /// words a request names a clause with ([`REQUEST_WORDS`]). "A clause that caps liability"
    /// wants the cap, not clauses that happen to say "this clause".
    pub fn query_term_texts(&self, query: &str) -> Vec<String> {
        let mut terms = self.term_texts(query);
        terms.retain(|t| !self.request_terms.contains(t));
        terms
    }
}

/// Nouns a request names a clause with ("a clause that ...", "provisions where ..."). Few
/// clauses contain them (about 3% of ACORD's clauses say "clause"), so BM25 would weigh them like
/// a rare legal term and reward clauses that merely refer to themselves.
pub const REQUEST_WORDS: &[&str] = &["clause", "clauses", "provision", "provisions"];

/// Byte spans of maximal alphanumeric runs. An apostrophe between letters stays inside the word
/// and a trailing possessive `'s` is dropped, as Lucene's English possessive filter does, so
/// "Licensee's" and "Licensee" meet.
fn word_spans(text: &str) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut start: Option<usize> = None;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c.is_alphanumeric() {
            if start.is_none() {
                start = Some(i);
            }
            continue;
        }
        let is_apostrophe = c == '\'' || c == '\u{2019}';
        if let (Some(s), true) = (start, is_apostrophe) {
            if let Some(&(j, next)) = chars.peek() {
                if next.is_alphanumeric() {
                    // Possessive: "party's" → "party".
                    let after = j + next.len_utf8();
                    let ends_word = text[after..]
                        .chars()
                        .next()
                        .is_none_or(|ch| !ch.is_alphanumeric());
                    if (next == 's' || next == 'S') && ends_word {
                        spans.push((s, i));
                        start = None;
                        chars.next();
                    }
                    continue;
                }
            }
        }
        if let Some(s) = start.take() {
            spans.push((s, i));
        }
    }
    if let Some(s) = start {
        spans.push((s, text.len()));
    }
    spans
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn affirmed_words_leave_out_asides_and_negated_sentence_ends() {
        let words = super::affirmed_words(
            "A non-compete limited in time (e.g., two years after the term). It should not \
             include clauses that cover exclusivity; limited to a territory",
        );
        assert_eq!(
            words.join(" "),
            "a non compete limited in time it should limited to a territory"
        );
    }

    #[test]
    fn a_query_does_not_look_up_the_words_it_names_a_clause_with() {
        let a = Analyzer::default();
        assert_eq!(
            a.query_term_texts("Clauses that cap liability; provisions on the cap"),
            vec!["cap", "liabil", "cap"]
        );
        // Only queries lose them: a clause that says "this Clause" is still indexed as it says.
        assert_eq!(a.term_texts("this Clause"), vec!["claus"]);
        assert!(a.query_term_texts("clause").is_empty());
    }

    #[test]
    fn lucene_like_defaults() {
        let a = Analyzer::default();
        assert_eq!(
            a.term_texts("The Licensee's liability shall not exceed the fees paid."),
            vec!["license", "liabil", "shall", "exceed", "fee", "paid"]
        );
    }

    #[test]
    fn offsets_point_into_the_source() {
        let a = Analyzer::default();
        let text = "Indemnification — “Losses”";
        for t in a.terms(text) {
            assert!(text.get(t.start..t.end).is_some());
        }
        assert_eq!(a.term_texts(text), vec!["indemnif", "loss"]);
    }

    #[test]
    fn each_step_can_be_disabled() {
        let a = Analyzer::new(AnalyzerConfig {
            lowercase: false,
            stop_words: StopWords::None,
            stem: false,
            max_token_len: 64,
        });
        assert_eq!(
            a.term_texts("The Parties agree"),
            vec!["The", "Parties", "agree"]
        );
        let custom = Analyzer::new(AnalyzerConfig {
            stop_words: StopWords::Custom(vec!["Shall".into()]),
            ..AnalyzerConfig::default()
        });
        assert_eq!(
            custom.term_texts("the party shall pay"),
            vec!["the", "parti", "pay"]
        );
    }

    #[test]
    fn numbers_and_long_tokens() {
        let a = Analyzer::default();
        assert_eq!(
            a.term_texts("twelve (12) months"),
            vec!["twelv", "12", "month"]
        );
        let blob = "x".repeat(100);
        assert!(a.term_texts(&blob).is_empty());
    }

    #[test]
    fn positions_count_stop_words() {
        let a = Analyzer::default();
        let positions: Vec<usize> = a
            .terms("cap on liability")
            .iter()
            .map(|t| t.position)
            .collect();
        assert_eq!(positions, vec![0, 2]);
    }
}
