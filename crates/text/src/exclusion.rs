//! What a query asks clauses *not* to contain.
//!
//! "Indemnification clauses that do not include hold harmless" wants indemnities whose text has
//! no hold-harmless language, and "cap on liability without carveouts" wants caps with no
//! exceptions. Every lexical and dense signal rewards the very words the lawyer excluded (the
//! query mentions "hold harmless", so BM25 and the embedding pull hold-harmless clauses up), so the
//! exclusion has to be read out of the query and checked against the clause separately.
//!
//! In ACORD's training ratings the effect is stark: for the hold-harmless query above, 15 of the
//! 20 two-star clauses (right category, not responsive) say "hold harmless" and none of the 15
//! clauses rated three stars or more do.
//!
//! "Without" is ambiguous in contract language: "terminate without cause", "assign without
//! consent", "without limitation" and "provided without warranty" are drafting phrases the
//! lawyer wants *in* the clause, so those are not exclusions.

/// One thing the query excludes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exclusion {
    /// The excluded words as the query writes them ("hold harmless", "carveouts"); empty for an
    /// exclusion implied by a word such as "unqualified".
    pub phrase: String,
    /// How clauses write the excluded thing: a clause containing any of these (as a phrase of
    /// analysed terms) has what the query excludes.
    pub surface_forms: Vec<String>,
}

/// Phrases after which the rest of the query names what must be absent.
const TRIGGERS: &[&str] = &[
    "that do not include",
    "which do not include",
    "that does not include",
    "which does not include",
    "do not include",
    "does not include",
    "not including",
    "that do not contain",
    "do not contain",
    "does not contain",
    "lacking",
    "without",
];

/// "Without X" where "without X" is itself drafting language, wanted in the clause.
const DRAFTING_AFTER_WITHOUT: &[&str] = &[
    "cause",
    "consent",
    "the consent",
    "prior",
    "the prior",
    "limitation",
    "limiting",
    "prejudice",
    "notice",
    "penalty",
    "warranty",
    "warranties",
    "any warranty",
    "charge",
    "cost",
    "regard",
    "recourse",
    "reservation",
    "delay",
    "undue delay",
    "restriction",
    "fault",
];

/// Words that end the excluded phrase.
const PHRASE_ENDS: &[&str] = &["and", "or", "but", "that", "which", "for", "in", "on", "to"];

/// Exceptions to a rule (a cap, a waiver, a disclaimer) as clauses draft them.
///
/// Not "exclude"/"excluding"/"exclusion": in a disclaimer or waiver that is the operative verb
/// ("the parties expressly exclude and disclaim any warranties", "exclusion of consequential
/// damages"), not a carve-out. With those forms, 2 of the 7 clauses rated three stars or more
/// for "unqualified \"as is\" clause" counted as qualified; no cap's carve-out in the training
/// ratings was written only with them.
pub(crate) const CARVEOUT_FORMS: &[&str] = &[
    "except",
    "exception",
    "exceptions",
    "shall not apply",
    "will not apply",
    "does not apply",
    "do not apply",
    "carve out",
    "carveout",
    "other than",
];

/// Words naming exceptions or qualifications in a query.
pub(crate) const CARVEOUT_WORDS: &[&str] = &[
    "carveout",
    "carveouts",
    "carve",
    "exception",
    "exceptions",
    "exclusion",
    "exclusions",
    "qualification",
    "qualifications",
];

/// Hold-harmless language as clauses write it: the word "harmless" alone, because the parties sit
/// between the verb and it ("hold the Company harmless", "save and hold the other harmless") and a
/// contract uses the word for little else. Matching only "hold harmless" next to each other missed
/// 5 of the 20 two-star clauses of "indemnification clauses that do not include hold harmless"
/// (all 20 say "harmless", none of its 15 clauses rated three stars or more does).
const HOLD_HARMLESS_FORMS: &[&str] = &["harmless"];

/// The exclusions of a query, in the order the query states them.
pub fn exclusions(query: &str) -> Vec<Exclusion> {
    let words = crate::lowercase_words(query);
    let mut out = Vec::new();
    if words.iter().any(|w| w == "unqualified") {
        out.push(Exclusion {
            phrase: String::new(),
            surface_forms: CARVEOUT_FORMS.iter().map(|s| s.to_string()).collect(),
        });
    }
    let mut i = 0;
    while i < words.len() {
        let Some(trigger) = TRIGGERS
            .iter()
            .find(|t| crate::starts_with_phrase(&words[i..], t))
        else {
            i += 1;
            continue;
        };
        let start = i + trigger.split(' ').count();
        let end = words[start..]
            .iter()
            .position(|w| PHRASE_ENDS.contains(&w.as_str()))
            .map_or(words.len(), |p| start + p)
            .min(start + 4);
        let phrase = words[start..end].join(" ");
        i = end.max(i + 1);
        if phrase.is_empty() {
            continue;
        }
        if *trigger == "without"
            && DRAFTING_AFTER_WITHOUT
                .iter()
                .any(|d| crate::starts_with_phrase(&words[start..end], d))
        {
            continue;
        }
        let surface_forms: Vec<String> = if words[start..end]
            .iter()
            .any(|w| CARVEOUT_WORDS.contains(&w.as_str()))
        {
            CARVEOUT_FORMS.iter().map(|s| s.to_string()).collect()
        } else if phrase.contains("harmless") {
            HOLD_HARMLESS_FORMS.iter().map(|s| s.to_string()).collect()
        } else {
            vec![phrase.clone()]
        };
        out.push(Exclusion {
            phrase,
            surface_forms,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negated_inclusion_is_an_exclusion() {
        let e = exclusions("indemnification clauses that do not include hold harmless");
        assert_eq!(e.len(), 1);
        assert_eq!(e[0].phrase, "hold harmless");
        assert_eq!(e[0].surface_forms, vec!["harmless".to_string()]);
    }

    #[test]
    fn carveouts_map_to_exception_language() {
        let e = exclusions("Cap on liability without carveouts");
        assert_eq!(e.len(), 1);
        assert!(e[0].surface_forms.contains(&"except".to_string()));
        let u = exclusions("unqualified \"as is\" clause");
        assert_eq!(u.len(), 1);
        assert!(u[0].phrase.is_empty());
    }

    #[test]
    fn drafting_phrases_with_without_are_not_exclusions() {
        // The medium wording of "Termination for Convenience".
        assert!(exclusions(
            "Clause that allows a party to terminate the contract at any time without cause"
        )
        .is_empty());
        assert!(exclusions("indemnification clauses that include hold harmless").is_empty());
        assert!(
            exclusions("Governing Law excluding UCC or other similar regulatory frameworks")
                .is_empty()
        );
        // "excludes" as a carve-out the lawyer wants is not an exclusion.
        assert!(exclusions(
            "Waiver of indirect damages clause that specifically excludes claims for breach of \
             confidentiality obligations"
        )
        .is_empty());
    }
}
