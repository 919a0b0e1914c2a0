//! Misspelt query words, corrected against the library's own words.
//!
//! A lawyer typing fast writes "indemnifcation" or "liabilty". BM25 then matches nothing for
//! that word, the query readers miss the concept, and the dense model sees unfamiliar word
//! pieces. A word is corrected only when nothing we hold knows it: not the library's clauses,
//! not the embedder's vocabulary (passed in as `knows`), not the English and drafting word
//! lists ([`is_dictionary_word`]), not the glossary's triggers or the readers' shorthand
//! ([`query_vocabulary`]).
//!
//! Why the word lists: the embedder's 30,000 word pieces and a library's words leave out many
//! ordinary words a lawyer writes, and a real word one edit from a library word was "corrected"
//! into it, often turning the request around ("suing" into "using", "unconnected" into
//! "connected", "franchisor" into "franchisee"). The lists hold inflections too ("governs",
//! "indemnifies"), so a word sharing a Snowball stem with a library word is no longer left
//! alone for that reason: that rule also left typos ("managment" stems like "management"). The
//! price of the lists is that a typo which is itself a word ("clams" for "claims") stays as
//! typed: telling those apart needs the sentence, not the word.
//!
//! A word then becomes the library word within one edit (two for words of nine letters or
//! more) that begins with the same letter, is not a party noun's other form, and most clauses
//! use. Why the first letter: typists and spellers rarely get it wrong, while a real word a
//! library lacks often differs from a library word there, by a prefix or an initial
//! ("unliquidated" is not "liquidated", "deferral" not "referral"). Why party nouns: a typed
//! "indemnifier" is not a typo of "indemnified" ([`names_party_of`]). Acronyms (all capitals)
//! and words shorter than five letters are never touched: short words have too many neighbours
//! one edit away to guess from.
//!
//! Edits are those of the optimal string alignment distance: a letter inserted, deleted or
//! replaced, or two adjacent letters swapped ("liabiltiy" is one swap from "liability").
//! Between library words the same number of edits away, a typing-error model chooses
//! ([`slip_cost`]): a dropped letter, a swap, a doubled letter or a neighbouring key explains a
//! typo better than a letter added or replaced at random, so "cluse" becomes "clause" (a letter
//! dropped) rather than the commoner "cause" (an "l" typed for a far-off "a"). Only then do
//! clause counts decide.

use std::collections::{HashMap, HashSet};

use crate::{jargon, lowercase_words, QUERY_SHORTHAND, REQUEST_WORDS};

/// Words shorter than this are never corrected.
pub const MIN_WORD_CHARS: usize = 5;
/// Words this long or longer may be two edits from their correction; shorter ones one.
pub const TWO_EDIT_CHARS: usize = 9;
/// A correction must be a word of at least this many of the library's clauses: a word of one
/// clause is as likely a typo of the library's as the right spelling.
pub const MIN_CLAUSES: u32 = 2;

/// The lowercase words of a library's clauses and how many clauses use each.
#[derive(Debug, Clone, Default)]
pub struct LibraryWords {
    clauses: HashMap<String, u32>,
}

impl LibraryWords {
    /// Counts the words of `texts`, one text per clause (a word counts once per clause).
    pub fn from_texts<'a>(texts: impl IntoIterator<Item = &'a str>) -> Self {
        let mut words = Self::default();
        words.add_texts(texts);
        words
    }

    /// Counts the words of more clauses, one text per clause.
    pub fn add_texts<'a>(&mut self, texts: impl IntoIterator<Item = &'a str>) {
        let mut seen: HashSet<String> = HashSet::new();
        for text in texts {
            seen.clear();
            for (_, word) in alphabetic_words(text) {
                let lower = word.to_lowercase();
                if seen.insert(lower.clone()) {
                    self.add(lower, 1);
                }
            }
        }
    }

    /// Words and their clause counts as [`LibraryWords::counts`] gave them (a stored copy).
    pub fn from_counts(counts: impl IntoIterator<Item = (String, u32)>) -> Self {
        let mut words = Self::default();
        for (word, clauses) in counts {
            words.add(word, clauses);
        }
        words
    }

    /// Every word and the number of clauses using it, in no particular order.
    pub fn counts(&self) -> impl Iterator<Item = (&str, u32)> {
        self.clauses.iter().map(|(w, &c)| (w.as_str(), c))
    }

    fn add(&mut self, word: String, clauses: u32) {
        *self.clauses.entry(word).or_default() += clauses;
    }

    /// How many clauses use `word` (lowercase).
    pub fn clauses_with(&self, word: &str) -> u32 {
        self.clauses.get(word).copied().unwrap_or(0)
    }

    /// Number of distinct words.
    pub fn len(&self) -> usize {
        self.clauses.len()
    }

    pub fn is_empty(&self) -> bool {
        self.clauses.is_empty()
    }
}

/// One corrected word.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// The word as typed.
    pub from: String,
    /// What it became, in the typed word's case.
    pub to: String,
}

/// A query after correction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Correction {
    /// The query with its misspelt words replaced (the query itself when nothing changed).
    pub text: String,
    /// The words replaced, in query order.
    pub changes: Vec<Change>,
    /// Whether the query was written in a research service's search syntax and `text` is the
    /// request it stands for ([`crate::syntax::read_search_syntax`]).
    pub syntax_read: bool,
}

impl Correction {
    pub fn changed(&self) -> bool {
        !self.changes.is_empty() || self.syntax_read
    }

    /// What was done to the query, for "Searched for: … (spelling corrected)".
    pub fn what(&self) -> &'static str {
        match (self.syntax_read, self.changes.is_empty()) {
            (true, true) => "search syntax read",
            (true, false) => "search syntax read, spelling corrected",
            _ => "spelling corrected",
        }
    }
}

/// The words the query side of the engine reads that need not occur in any clause: the
/// glossary's triggers ("indem", "lol"), the readers' shorthand and the request words. Never
/// corrected, whatever the library holds.
pub fn query_vocabulary() -> HashSet<String> {
    let mut words: HashSet<String> = HashSet::new();
    for entry in jargon::GLOSSARY {
        for trigger in entry.triggers {
            words.extend(lowercase_words(trigger));
        }
    }
    words.extend(QUERY_SHORTHAND.iter().map(|(w, _)| (*w).to_owned()));
    words.extend(REQUEST_WORDS.iter().map(|w| (*w).to_owned()));
    words
}

/// Whether some word of `query` is one [`correct`] would look up in the library: long enough,
/// not an acronym, unknown to `knows` and not in `protected`. A caller can skip loading the
/// library's words when none is.
pub fn has_unknown_words(
    query: &str,
    knows: &dyn Fn(&str) -> bool,
    protected: &HashSet<String>,
) -> bool {
    alphabetic_words(query).any(|(_, word)| unknown_word(word, knows, protected).is_some())
}

/// `word` lowercased if it is a candidate for correction before the library is consulted:
/// at least [`MIN_WORD_CHARS`] letters, not all capitals, not protected, not known to `knows`
/// and not in the word lists ([`is_dictionary_word`]).
fn unknown_word(
    word: &str,
    knows: &dyn Fn(&str) -> bool,
    protected: &HashSet<String>,
) -> Option<String> {
    if word.chars().count() < MIN_WORD_CHARS || word.chars().all(|c| c.is_uppercase()) {
        return None;
    }
    let lower = word.to_lowercase();
    (!protected.contains(&lower) && !knows(&lower) && !is_dictionary_word(&lower)).then_some(lower)
}

/// Whether `lower` (a lowercase word) is in the word lists the corrector leaves alone: the
/// English words of Debian's American and British lists (SCOWL size 50, inflections
/// included), words of [`MIN_WORD_CHARS`] letters or more, proper nouns left out; and the
/// drafting words those lists lack, taken from CUAD's contracts ("licensor", "indemnitee",
/// "franchisor", "estoppel": role pairs one or two edits apart, which a library holding only
/// one side would otherwise turn into each other). `crates/text/data/README.md` says how both
/// were made.
pub fn is_dictionary_word(lower: &str) -> bool {
    static WORDS: std::sync::OnceLock<HashSet<&'static str>> = std::sync::OnceLock::new();
    WORDS
        .get_or_init(|| {
            include_str!("../data/english_words.txt")
                .lines()
                .chain(include_str!("../data/legal_words.txt").lines())
                .collect()
        })
        .contains(lower)
}

/// Corrects the misspelt words of `query` against `library` (see the module documentation).
/// `knows(word)` says whether a lowercase word is known to the caller (the embedder's
/// vocabulary) besides the word lists ([`is_dictionary_word`]);
/// `protected` holds words never to correct ([`query_vocabulary`]).
pub fn correct(
    query: &str,
    library: &LibraryWords,
    knows: &dyn Fn(&str) -> bool,
    protected: &HashSet<String>,
) -> Correction {
    let mut text = String::with_capacity(query.len());
    let mut changes = Vec::new();
    let mut last = 0;
    for (start, word) in alphabetic_words(query) {
        let Some(replacement) = correction_of(word, library, knows, protected) else {
            continue;
        };
        text.push_str(&query[last..start]);
        text.push_str(&replacement);
        last = start + word.len();
        changes.push(Change {
            from: word.to_owned(),
            to: replacement,
        });
    }
    if changes.is_empty() {
        return Correction {
            text: query.to_owned(),
            changes,
            syntax_read: false,
        };
    }
    text.push_str(&query[last..]);
    Correction {
        text,
        changes,
        syntax_read: false,
    }
}

/// The replacement for one typed word, in its case, or `None` to keep it.
fn correction_of(
    word: &str,
    library: &LibraryWords,
    knows: &dyn Fn(&str) -> bool,
    protected: &HashSet<String>,
) -> Option<String> {
    let lower = unknown_word(word, knows, protected)?;
    if library.clauses_with(&lower) > 0 {
        return None;
    }
    let typed: Vec<char> = lower.chars().collect();
    let max_edits = if typed.len() >= TWO_EDIT_CHARS { 2 } else { 1 };
    let mut best: Option<(u32, u32, &str)> = None;
    let mut candidate_chars: Vec<char> = Vec::new();
    for (candidate, &clauses) in &library.clauses {
        if clauses < MIN_CLAUSES {
            continue;
        }
        candidate_chars.clear();
        candidate_chars.extend(candidate.chars());
        if candidate_chars.len().abs_diff(typed.len()) > max_edits
            || candidate_chars.len() < MIN_WORD_CHARS
            || candidate_chars.first() != typed.first()
        {
            continue;
        }
        if edits_within(&typed, &candidate_chars, max_edits).is_none()
            || names_party_of(&lower, candidate)
        {
            continue;
        }
        let cost = slip_cost(&typed, &candidate_chars);
        let better = match best {
            None => true,
            // The likelier typing error, then more clauses, then the alphabetically first
            // (deterministic).
            Some((e, c, w)) => {
                (cost, std::cmp::Reverse(clauses), candidate.as_str())
                    < (e, std::cmp::Reverse(c), w)
            }
        };
        if better {
            best = Some((cost, clauses, candidate.as_str()));
        }
    }
    best.map(|(_, _, w)| in_case_of(word, w))
}

/// Endings that make a word name a party ("indemnifier", "licensor", "assignee").
const PARTY_SUFFIXES: [&str; 6] = ["er", "ers", "or", "ors", "ee", "ees"];

/// Whether `typed` names a party and `candidate` is a form of the same word without that
/// ending ("indemnifier" beside "indemnified", "prescriber" beside "prescribed"): a different
/// role, often the other side of the deal, not a typo. Both lowercase.
fn names_party_of(typed: &str, candidate: &str) -> bool {
    PARTY_SUFFIXES
        .iter()
        .any(|suffix| typed.ends_with(suffix) && !candidate.ends_with(suffix))
        && english_stemmer().stem(typed) == english_stemmer().stem(candidate)
}

fn english_stemmer() -> &'static rust_stemmers::Stemmer {
    static STEMMER: std::sync::OnceLock<rust_stemmers::Stemmer> = std::sync::OnceLock::new();
    STEMMER.get_or_init(|| rust_stemmers::Stemmer::create(rust_stemmers::Algorithm::English))
}

/// `replacement` written in the case pattern of `typed`: capitalised when `typed` starts with
/// a capital, lowercase otherwise (all-capital words are never corrected).
fn in_case_of(typed: &str, replacement: &str) -> String {
    if typed.chars().next().is_some_and(char::is_uppercase) {
        let mut chars = replacement.chars();
        chars
            .next()
            .map(|c| c.to_uppercase().chain(chars).collect())
            .unwrap_or_default()
    } else {
        replacement.to_owned()
    }
}

/// The optimal string alignment distance between `a` and `b` if it is at most `max`, else
/// `None`. Rows of the dynamic programme stop early once every cell exceeds `max`.
fn edits_within(a: &[char], b: &[char], max: usize) -> Option<usize> {
    let (n, m) = (a.len(), b.len());
    if n.abs_diff(m) > max {
        return None;
    }
    let mut before: Vec<usize> = vec![0; m + 1];
    let mut previous: Vec<usize> = (0..=m).collect();
    let mut current: Vec<usize> = vec![0; m + 1];
    for i in 1..=n {
        current[0] = i;
        let mut row_min = current[0];
        for j in 1..=m {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut d = (previous[j] + 1)
                .min(current[j - 1] + 1)
                .min(previous[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d = d.min(before[j - 2] + 1);
            }
            current[j] = d;
            row_min = row_min.min(d);
        }
        if row_min > max {
            return None;
        }
        std::mem::swap(&mut before, &mut previous);
        std::mem::swap(&mut previous, &mut current);
    }
    let d = previous[m];
    (d <= max).then_some(d)
}

/// A usual typing slip, in half edits: a letter dropped, two letters swapped, a letter typed
/// twice or next to its neighbour's key, a neighbouring key or a vowel for a vowel.
const SLIP: u32 = 2;
/// Any other added or replaced letter, in half edits.
const OTHER_EDIT: u32 = 3;

/// The cost, in half edits, of reading `typed` as `intended` mistyped: the optimal string
/// alignment with each edit weighted by how often typists make it (Damerau 1964; Kernighan,
/// Church and Gale 1990). Usual slips ([`SLIP`]) cost 1, other added or replaced letters 1.5,
/// so a one-edit word (at most 1.5) always beats a two-edit one (at least 2): the weights only
/// choose between words the same number of edits away.
fn slip_cost(typed: &[char], intended: &[char]) -> u32 {
    let (n, m) = (typed.len(), intended.len());
    // A letter of `typed` the typist added: a doubled letter or a key next to the letter
    // before or after it is a slip.
    let added = |i: usize| {
        let c = typed[i];
        let before = i.checked_sub(1).map(|k| typed[k]);
        let after = typed.get(i + 1).copied();
        if [before, after]
            .into_iter()
            .flatten()
            .any(|b| b == c || keyboard_neighbours(b, c))
        {
            SLIP
        } else {
            OTHER_EDIT
        }
    };
    let replaced = |t: char, w: char| {
        if keyboard_neighbours(t, w) || (is_vowel(t) && is_vowel(w)) {
            SLIP
        } else {
            OTHER_EDIT
        }
    };
    let mut d = vec![vec![0u32; m + 1]; n + 1];
    for i in 1..=n {
        d[i][0] = d[i - 1][0] + added(i - 1);
    }
    for j in 1..=m {
        d[0][j] = d[0][j - 1] + SLIP;
    }
    for i in 1..=n {
        for j in 1..=m {
            let (t, w) = (typed[i - 1], intended[j - 1]);
            let mut best = (d[i - 1][j] + added(i - 1))
                .min(d[i][j - 1] + SLIP)
                .min(d[i - 1][j - 1] + if t == w { 0 } else { replaced(t, w) });
            if i > 1 && j > 1 && t == intended[j - 2] && typed[i - 2] == w {
                best = best.min(d[i - 2][j - 2] + SLIP);
            }
            d[i][j] = best;
        }
    }
    d[n][m]
}

fn is_vowel(c: char) -> bool {
    matches!(c, 'a' | 'e' | 'i' | 'o' | 'u')
}

/// Whether two lowercase letters are next to each other on a QWERTY keyboard (same row, or the
/// two keys a staggered row above or below touches).
fn keyboard_neighbours(a: char, b: char) -> bool {
    const ROWS: [&str; 3] = ["qwertyuiop", "asdfghjkl", "zxcvbnm"];
    let key = |c: char| {
        ROWS.iter()
            .enumerate()
            .find_map(|(row, keys)| keys.find(c).map(|column| (row as i64, column as i64)))
    };
    let (Some((ra, ca)), Some((rb, cb))) = (key(a), key(b)) else {
        return false;
    };
    match rb - ra {
        0 => (ca - cb).abs() == 1,
        // Each row sits half a key to the right of the one above it.
        1 => cb == ca || cb == ca - 1,
        -1 => cb == ca || cb == ca + 1,
        _ => false,
    }
}

/// Maximal runs of alphabetic characters of `text`, with their byte offsets.
fn alphabetic_words(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut out = Vec::new();
    let mut start: Option<usize> = None;
    for (i, c) in text.char_indices() {
        match (c.is_alphabetic(), start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                out.push((s, &text[s..i]));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        out.push((s, &text[s..]));
    }
    out.into_iter()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn library() -> LibraryWords {
        LibraryWords::from_texts([
            "The Indemnifying Party shall indemnify against any liability. Indemnification.",
            "Indemnification obligations survive; liability is capped.",
            "Termination for convenience on notice. Termination fee.",
            "Notice of termination; limitation of liability.",
            "a lone word: indemnificatio",
        ])
    }

    fn correct_plain(query: &str) -> Correction {
        correct(query, &library(), &|_| false, &query_vocabulary())
    }

    /// `query` corrected against `library` with nothing else known or protected.
    fn correct_bare(query: &str, library: &LibraryWords) -> Correction {
        correct(query, library, &|_| false, &HashSet::new())
    }

    #[test]
    fn one_edit_typos_become_the_library_word() {
        let c = correct_plain("indemnifcation for third party claims and liabilty caps");
        assert_eq!(
            c.text,
            "indemnification for third party claims and liability caps"
        );
        assert_eq!(
            c.changes,
            vec![
                Change {
                    from: "indemnifcation".into(),
                    to: "indemnification".into()
                },
                Change {
                    from: "liabilty".into(),
                    to: "liability".into()
                },
            ]
        );
    }

    #[test]
    fn swapped_letters_and_case_are_kept_in_the_typed_form() {
        let c = correct_plain("Liabiltiy cap, Termniation for convenience");
        assert_eq!(c.text, "Liability cap, Termination for convenience");
    }

    #[test]
    fn known_words_acronyms_short_words_and_shorthand_stay() {
        // "indem" is the readers' shorthand; EBITDA an acronym; "capp" too short to guess.
        let c = correct_plain("indem EBITDA capp");
        assert!(!c.changed(), "{c:?}");
        // A word the embedder's vocabulary knows is left alone even if the library lacks it
        // (a word that is in no English word list, so that only `knows` can save it).
        let library = LibraryWords::from_texts(["the warranty", "each warranty"]);
        let knows = |w: &str| w == "warrantor";
        assert!(!is_dictionary_word("warrantor"));
        let c = correct("warrantor", &library, &knows, &HashSet::new());
        assert!(!c.changed(), "{c:?}");
        assert_eq!(correct_bare("warrantor", &library).text, "warranty");
        // Another form of a library word ("indemnifies" beside "indemnify") is not a typo: the
        // English list holds inflections.
        let c = correct_plain("indemnifies terminations");
        assert!(!c.changed(), "{c:?}");
    }

    #[test]
    fn english_words_the_library_lacks_are_not_typos() {
        // Each is one or two edits from a word of this library, which lacks it: before the
        // English word list they were "corrected" into it, turning the request around.
        let library = LibraryWords::from_texts([
            "using the software; the parties are connected; resources and hours",
            "using it; connected persons; resources; business hours",
        ]);
        let c = correct_bare(
            "barred from suing; unconnected matters; renounces its rights; sours the deal",
            &library,
        );
        assert!(!c.changed(), "{c:?}");
        // English words, then drafting words from CUAD's contracts, are in the lists.
        let english = [
            "suing",
            "unconnected",
            "renounces",
            "cession",
            "saleable",
            "wilful",
        ];
        let drafting = [
            "licensor",
            "indemnitor",
            "assignor",
            "estoppel",
            "severability",
        ];
        for word in english.into_iter().chain(drafting) {
            assert!(is_dictionary_word(word), "{word}");
        }
        // Misspellings are not.
        for word in ["liabilty", "indemnifcation", "princples"] {
            assert!(!is_dictionary_word(word), "{word}");
        }
        // A library holding only "franchisee" leaves "franchisor" alone (two edits apart, ten
        // letters: it was corrected).
        let franchise = LibraryWords::from_texts(["the franchisee shall", "each franchisee"]);
        let c = correct_bare("franchisor", &franchise);
        assert!(!c.changed(), "{c:?}");
        // And a misspelling is still corrected beside them.
        let c = correct_bare("suing over the resourses", &library);
        assert_eq!(c.text, "suing over the resources");
    }

    #[test]
    fn words_of_one_clause_are_not_corrections_and_far_words_stay() {
        // "indemnificatio" occurs in one clause only: not a correction target.
        let c = correct_plain("indemnificatiox");
        assert_eq!(c.text, "indemnification");
        let c = correct_plain("xyzzyplugh");
        assert!(!c.changed());
    }

    #[test]
    fn counts_round_trip_and_grow_clause_by_clause() {
        let mut words = LibraryWords::from_texts(["Liability, liability and notice."]);
        words.add_texts(["No liability here."]);
        assert_eq!(words.clauses_with("liability"), 2);
        assert_eq!(words.clauses_with("notice"), 1);
        let copy = LibraryWords::from_counts(words.counts().map(|(w, c)| (w.to_owned(), c)));
        assert_eq!(copy.clauses_with("liability"), 2);
        assert_eq!(copy.len(), words.len());
    }

    #[test]
    fn the_likelier_typing_error_decides_between_words_one_edit_away() {
        // "cause" and "execution" are commoner in this library, but a dropped letter or a
        // swap explains each typo better than a letter typed for a far-off key ("l" for "a",
        // "p" for "u").
        let library = LibraryWords::from_texts([
            "the cause of execution",
            "for cause; on execution",
            "for cause; at execution",
            "this clause and its exception",
            "each clause, no exception",
        ]);
        let c = correct_bare("cluse execption", &library);
        assert_eq!(c.text, "clause exception", "{c:?}");
        // At equal slips the commoner word wins: "r" is a key beside both "e" and "f".
        let library = LibraryWords::from_texts(["abcde abcdf", "abcde", "abcde abcdf"]);
        assert_eq!(correct_bare("abcdr", &library).text, "abcde");
        let library = LibraryWords::from_texts(["abcde abcdf", "abcdf", "abcde abcdf"]);
        assert_eq!(correct_bare("abcdr", &library).text, "abcdf");
    }

    #[test]
    fn corrections_keep_the_first_letter_and_a_shared_stem_is_no_excuse() {
        let library = LibraryWords::from_texts([
            "liquidated damages; referral fees; management",
            "liquidated sums; referral; the management committee",
        ]);
        // Real words the library lacks, one edit from a library word but for the first letter.
        let c = correct_bare("unliquidated deferral", &library);
        assert!(!c.changed(), "{c:?}");
        // A typo that stems like its word ("managment", "management": "manag") is corrected.
        let c = correct_bare("managment", &library);
        assert_eq!(c.text, "management", "{c:?}");
    }

    #[test]
    fn party_nouns_are_not_typos_of_their_participles() {
        let library = LibraryWords::from_texts([
            "the indemnified party; the licensor; prescribed drugs",
            "each indemnified person; a licensor; as prescribed",
        ]);
        // One edit and one stem from a library word, but a party, not a typo.
        let c = correct_bare("indemnifier prescriber", &library);
        assert!(!c.changed(), "{c:?}");
        // A typo of a party noun keeps its suffix and is corrected.
        let c = correct_bare("licensoor indemnifeid", &library);
        assert_eq!(c.text, "licensor indemnified", "{c:?}");
    }

    #[test]
    fn slips_cost_less_than_other_edits() {
        let cost = |t: &str, w: &str| {
            slip_cost(
                &t.chars().collect::<Vec<_>>(),
                &w.chars().collect::<Vec<_>>(),
            )
        };
        assert_eq!(cost("clause", "clause"), 0);
        assert_eq!(cost("cluse", "clause"), SLIP); // "a" dropped
        assert_eq!(cost("cluse", "cause"), OTHER_EDIT); // "l" for a far-off "a"
        assert_eq!(cost("caluse", "cause"), OTHER_EDIT); // "l" added beside "a" and "u"
        assert_eq!(cost("caluse", "clause"), SLIP); // swap
        assert_eq!(cost("liabillity", "liability"), SLIP); // doubled
        assert_eq!(cost("liabiloity", "liability"), SLIP); // "o" beside "i"
        assert_eq!(cost("liabikity", "liability"), SLIP); // "k" for its neighbour "l"
        assert_eq!(cost("seperate", "separate"), SLIP); // a vowel for a vowel
        assert_eq!(cost("execption", "execution"), OTHER_EDIT); // "p" for a far-off "u"
        assert_eq!(cost("indemnifcaton", "indemnification"), 2 * SLIP);
        assert!(keyboard_neighbours('s', 'w') && keyboard_neighbours('s', 'x'));
        assert!(keyboard_neighbours('g', 'h') && keyboard_neighbours('b', 'g'));
        assert!(!keyboard_neighbours('s', 'r') && !keyboard_neighbours('q', 'p'));
    }

    #[test]
    fn edit_distance_is_optimal_string_alignment() {
        let d = |a: &str, b: &str, m| {
            edits_within(
                &a.chars().collect::<Vec<_>>(),
                &b.chars().collect::<Vec<_>>(),
                m,
            )
        };
        assert_eq!(d("liability", "liability", 2), Some(0));
        assert_eq!(d("liabilty", "liability", 1), Some(1));
        assert_eq!(d("liabiltiy", "liability", 1), Some(1));
        assert_eq!(d("lbaiility", "liability", 1), None);
        assert_eq!(d("indemnfiication", "indemnification", 2), Some(1));
        assert_eq!(d("kitten", "sitting", 3), Some(3));
        assert_eq!(d("kitten", "sitting", 2), None);
    }
}
