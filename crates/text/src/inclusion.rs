//! What a query asks clauses to contain.
//!
//! "Indemnification clauses that include hold harmless", "indemnification covers indirect
//! claims": the query names a clause type and then something the clause must say. Lexical and
//! dense scores reward the clause type far more than the one condition, so clauses of the right
//! type that lack it crowd the top. The condition is read out of the query here and checked
//! against each clause separately, as [`crate::exclusion`] does for what must be absent.
//!
//! In ACORD's training ratings: for "indemnification clauses that include hold
//! harmless", none of the 19 two-star clauses (right type, not responsive) has hold-harmless
//! language; for "indemnification covers indirect claims", all 13 clauses rated three stars or
//! more say "indirect" and none of the 19 two-star clauses do.
//!
//! A requirement is met when the clause contains every word of one of its alternatives, in any
//! order, so "hold the Company harmless" meets "hold harmless". The caller compares words after
//! its own analysis (stems, stop words).

use crate::exclusion::{CARVEOUT_FORMS, CARVEOUT_WORDS};

/// One thing the query requires.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inclusion {
    /// The required words as the query writes them ("hold harmless", "indirect claims").
    pub phrase: String,
    /// Ways a clause says it: each alternative's words must all occur in the clause.
    pub alternatives: Vec<String>,
}

/// Words after which the rest of the query names what must be present.
const TRIGGERS: &[&str] = &[
    "include",
    "includes",
    "including",
    "cover",
    "covers",
    "covering",
    "contain",
    "contains",
    "containing",
];

/// A trigger right after one of these is negated (an exclusion, read by [`crate::exclusion`]).
const NEGATIONS: &[&str] = &["not", "t", "never", "without", "no"];

/// Words that end the required phrase ("standards around manufacturing and shipping").
const PHRASE_ENDS: &[&str] = &[
    "and", "but", "that", "which", "for", "in", "on", "to", "of", "with", "when", "where", "if",
];

/// Words that name no content ("covers any clause").
const FILLER: &[&str] = &[
    "a",
    "an",
    "the",
    "any",
    "all",
    "clause",
    "clauses",
    "provision",
    "provisions",
    "language",
    "terms",
    "term",
];

/// Hold-harmless language as clauses write it (checked word by word, so "hold X harmless" counts).
const HOLD_HARMLESS: &[&str] = &["hold harmless", "save harmless", "held harmless"];

/// "Subject to law": the protection applies only as far as the law allows, which clauses say
/// as "to the maximum extent permitted by applicable law", "unless prohibited by law".
const SUBJECT_TO_LAW: &[&str] = &[
    "subject to law",
    "subject to laws",
    "subject to the law",
    "subject to applicable law",
    "subject to applicable laws",
    "subject to governing law",
];

/// How clauses make a protection subject to law (all words of one form, any order).
const LAW_LIMIT_FORMS: &[&str] = &[
    "permitted law",
    "permissible law",
    "applicable law",
    "prohibited law",
    "required law",
    "mandatory law",
];

/// Capitalised words before "Governing Law" that are not a place ("Clause Governing Law").
const NOT_PLACES: &[&str] = &[
    "clause",
    "clauses",
    "provision",
    "provisions",
    "the",
    "a",
    "an",
];

/// The place whose law a governing-law query asks for: "New York Governing Law". The place is
/// the run of capitalised words before the phrase, so "Governing Law excluding UCC" names none.
///
/// Why a requirement: a governing-law clause of another place is the textbook two-star answer
/// (right clause type, wrong law). In ACORD's training ratings for "New York Governing Law" all
/// 12 clauses rated three stars or more say "New York", none of the 20 two-star clauses do (14
/// name Delaware, California, Texas or England).
fn governing_law_place(query: &str) -> Option<Inclusion> {
    let words: Vec<&str> = query
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    let lower: Vec<String> = words.iter().map(|w| w.to_lowercase()).collect();
    let at = (0..lower.len().saturating_sub(1))
        .find(|&i| lower[i] == "governing" && (lower[i + 1] == "law" || lower[i + 1] == "laws"))?;
    let is_place_word = |i: usize| {
        words[i].chars().next().is_some_and(char::is_uppercase)
            && !NOT_PLACES.contains(&lower[i].as_str())
    };
    let mut start = at;
    while start > 0 && is_place_word(start - 1) {
        start -= 1;
    }
    if start == at {
        return None;
    }
    let phrase = lower[start..at].join(" ");
    Some(Inclusion {
        alternatives: vec![phrase.clone()],
        phrase,
    })
}

/// The requirements of a query, in the order the query states them.
pub fn inclusions(query: &str) -> Vec<Inclusion> {
    let words = crate::query_words(query);
    let mut out: Vec<Inclusion> = governing_law_place(query).into_iter().collect();
    if crate::contains_any_phrase(&words, SUBJECT_TO_LAW) {
        out.push(Inclusion {
            phrase: "subject to law".to_owned(),
            alternatives: LAW_LIMIT_FORMS.iter().map(|s| s.to_string()).collect(),
        });
    }
    let mut i = 0;
    while i < words.len() {
        if !TRIGGERS.contains(&words[i].as_str()) {
            i += 1;
            continue;
        }
        let negated = words[i.saturating_sub(2)..i]
            .iter()
            .any(|w| NEGATIONS.contains(&w.as_str()));
        let start = i + 1;
        let end = words[start..]
            .iter()
            .position(|w| PHRASE_ENDS.contains(&w.as_str()))
            .map_or(words.len(), |p| start + p)
            .min(start + 5);
        i = end.max(i + 1);
        if negated {
            continue;
        }
        let content: Vec<&str> = words[start..end]
            .iter()
            .map(String::as_str)
            .filter(|w| !FILLER.contains(w))
            .collect();
        if content.is_empty() {
            continue;
        }
        let phrase = content.join(" ");
        let alternatives: Vec<String> = if content.iter().any(|w| CARVEOUT_WORDS.contains(w)) {
            CARVEOUT_FORMS.iter().map(|s| s.to_string()).collect()
        } else if content.contains(&"harmless") {
            HOLD_HARMLESS.iter().map(|s| s.to_string()).collect()
        } else {
            // "repair, refund or replacement": any one will do.
            content
                .split(|w| *w == "or")
                .map(|part| part.join(" "))
                .filter(|part| !part.is_empty())
                .collect()
        };
        if !alternatives.is_empty() {
            out.push(Inclusion {
                phrase,
                alternatives,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_follows_include_or_cover_is_required() {
        let i = inclusions("indemnification covers indirect claims");
        assert_eq!(i.len(), 1);
        assert_eq!(i[0].alternatives, vec!["indirect claims"]);
        // The medium wordings: the phrase ends at a conjunction.
        let i = inclusions(
            "Disclaimer of warranty clause that includes standards around manufacturing and \
             shipping",
        );
        assert_eq!(i[0].alternatives, vec!["standards around manufacturing"]);
        let i = inclusions(
            "Clause that disclaims indirect damages that specifically includes incidental damages",
        );
        assert_eq!(i[0].alternatives, vec!["incidental damages"]);
    }

    #[test]
    fn alternatives_and_known_forms() {
        let i = inclusions(
            "Disclaimer of warranty clause that includes repair, refund or replacement the \
             exclusive remedy",
        );
        assert_eq!(i[0].alternatives, vec!["repair refund", "replacement"]);
        let i = inclusions("indemnification clauses that include hold harmless");
        assert!(i[0].alternatives.contains(&"save harmless".to_string()));
        let i = inclusions(
            "Disclaimer of indirect damages clause that includes an indemnification exception",
        );
        assert!(i[0].alternatives.contains(&"except".to_string()));
    }

    #[test]
    fn subject_to_law_requires_language_deferring_to_law() {
        let i = inclusions("cap on liability subject to law");
        assert_eq!(i.len(), 1);
        assert!(i[0].alternatives.contains(&"permitted law".to_string()));
        assert!(inclusions("compliance with law carveout to cap on liability").is_empty());
    }

    #[test]
    fn a_governing_law_query_requires_the_place_it_names() {
        let ny = inclusions("New York Governing Law");
        assert_eq!(ny.len(), 1);
        assert_eq!(ny[0].alternatives, vec!["new york".to_string()]);
        assert!(
            inclusions("Governing Law excluding UCC or other similar regulatory frameworks")
                .is_empty()
        );
        assert!(inclusions("Governing Law").is_empty());
    }

    #[test]
    fn negated_triggers_are_left_to_the_exclusion_reader() {
        assert!(inclusions("indemnification clauses that do not include hold harmless").is_empty());
    }

    #[test]
    fn queries_without_a_requirement() {
        assert!(inclusions("cap on liability").is_empty());
        assert!(inclusions("Cap on liability without carveouts").is_empty());
        assert!(inclusions("includes").is_empty());
    }
}
