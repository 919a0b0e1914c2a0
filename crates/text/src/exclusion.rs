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
    /// The words that introduced the exclusion ("not including", "without"); `None` for one
    /// implied by a word. An explanation does not count them as words the request searches for.
    pub trigger: Option<&'static str>,
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
    "not include",
    "not contain",
    "not containing",
    "does not have",
    "do not have",
    "contains no",
    "contain no",
    "has no",
    "have no",
    "lacking",
    "without",
];

/// Triggers, looked for after [`TRIGGERS`], that exclude only exceptions or hold-harmless
/// language: "hard cap, zero exceptions", "nothing carved back", "with no hold-harmless
/// language", "never agrees to hold it harmless", "none of them with exceptions", "not a single
/// exception". Anything else after them is usually what the query asks for ("the buyer has no
/// other remedy", "no notice needed"), so it is not read as an exclusion.
const NARROW_TRIGGERS: &[&str] = &[
    "no",
    "never",
    "none",
    "not a single",
    "not one",
    "zero",
    "nothing",
    "free of",
];

/// Triggers that are also common drafting language when followed by certain words ("without
/// cause", "has no liability"), checked against [`DRAFTING_AFTER_WITHOUT`].
const AMBIGUOUS_TRIGGERS: &[&str] = &["without", "contains no", "contain no", "has no", "have no"];

/// Words between a trigger and the excluded thing that name nothing themselves: "without a
/// specific reference to \"hold harmless\"", "should not include any reference to any
/// \"non-exclusive\" license", "without specifically agreeing to hold ... harmless".
const FILLERS: &[&str] = &[
    "a",
    "an",
    "any",
    "the",
    "specific",
    "specifically",
    "expressly",
    "explicitly",
    "clearly",
    "reference to",
    "references to",
    "mention of",
    "mentions of",
    "agreeing to",
    "agree to",
];

/// Words that name a clause or its text, not something in it: an exclusion made only of them
/// ("do not include clauses that ...") excludes nothing a clause could contain.
const META_WORDS: &[&str] = &[
    "clause",
    "clauses",
    "provision",
    "provisions",
    "language",
    "reference",
    "references",
    "one",
];

/// How far after the trigger hold-harmless language may sit ("without specifically agreeing to
/// hold the other party harmless").
const HARMLESS_REACH: usize = 8;

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
    "guarantee",
    "guarantees",
    "any guarantee",
    "charge",
    "cost",
    "regard",
    "recourse",
    "reservation",
    "delay",
    "undue delay",
    "restriction",
    "fault",
    "liability",
    "obligation",
    // "without showing any breach or reason", "without having to give a reason", "without
    // needing consent": what the clause allows, described, not an exclusion.
    "reason",
    "any reason",
    "a reason",
    "breach",
    "having",
    "showing",
    "giving",
    "stating",
    "needing",
    "requiring",
    // "the buyer has no other remedy": a sole-remedy clause described.
    "other remedy",
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
    "carved",
    "carving",
    "carveback",
    "carvebacks",
    "exception",
    "exceptions",
    "exclusion",
    "exclusions",
    "qualification",
    "qualifications",
    // The participles, after a trigger: "with nothing excluded from it", "no matters
    // excepted from the cap".
    "excepted",
    "excluded",
];

/// Hold-harmless language as clauses write it: the word "harmless" alone, because the parties sit
/// between the verb and it ("hold the Company harmless", "save and hold the other harmless") and a
/// contract uses the word for little else. Matching only "hold harmless" next to each other missed
/// 5 of the 20 two-star clauses of "indemnification clauses that do not include hold harmless"
/// (all 20 say "harmless", none of its 15 clauses rated three stars or more does).
const HOLD_HARMLESS_FORMS: &[&str] = &["harmless"];

/// The exclusions of a query, in the order the query states them.
pub fn exclusions(query: &str) -> Vec<Exclusion> {
    let words = crate::query_words(query);
    let mut out = Vec::new();
    if words.iter().any(|w| w == "unqualified") {
        out.push(Exclusion {
            phrase: String::new(),
            surface_forms: CARVEOUT_FORMS.iter().map(|s| s.to_string()).collect(),
            trigger: None,
        });
    }
    let mut i = 0;
    while i < words.len() {
        let Some(trigger) = TRIGGERS
            .iter()
            .chain(NARROW_TRIGGERS)
            .find(|t| crate::starts_with_phrase(&words[i..], t))
        else {
            i += 1;
            continue;
        };
        let trigger_at = i;
        let mut start = i + trigger.split(' ').count();
        while let Some(filler) = FILLERS
            .iter()
            .find(|f| crate::starts_with_phrase(&words[start..], f))
        {
            start += filler.split(' ').count();
        }
        let end = words[start..]
            .iter()
            .position(|w| PHRASE_ENDS.contains(&w.as_str()))
            .map_or(words.len(), |p| start + p)
            .min(start + 4);
        let phrase = words[start..end].join(" ");
        // Past the trigger only: a phrase that turns out to exclude nothing may hold the next
        // trigger ("no warranties at all, no exceptions"); an exclusion read resumes after it.
        i = start;
        if phrase.is_empty() {
            continue;
        }
        if AMBIGUOUS_TRIGGERS.contains(trigger) && is_drafting_after_without(&words[start..end]) {
            continue;
        }
        let names_harmless = words[start..(start + HARMLESS_REACH).min(words.len())]
            .iter()
            .any(|w| w == "harmless");
        let names_carveouts = words[start..end]
            .iter()
            .any(|w| CARVEOUT_WORDS.contains(&w.as_str()));
        if *trigger == "without"
            && !names_harmless
            && !names_carveouts
            && is_an_action(&words[start])
        {
            continue;
        }
        if NARROW_TRIGGERS.contains(trigger) && !names_carveouts && !names_harmless {
            continue;
        }
        let (phrase, surface_forms): (String, Vec<String>) = if names_carveouts {
            (
                phrase,
                CARVEOUT_FORMS.iter().map(|s| s.to_string()).collect(),
            )
        } else if names_harmless {
            (
                "hold harmless".to_owned(),
                HOLD_HARMLESS_FORMS.iter().map(|s| s.to_string()).collect(),
            )
        } else if names_nothing_new(&words[start..end], &words[..trigger_at]) {
            continue;
        } else {
            (phrase.clone(), vec![phrase])
        };
        i = end;
        // "an unqualified as-is clause, none of them with exceptions" excludes one thing twice.
        if out.iter().all(|e| e.surface_forms != surface_forms) {
            out.push(Exclusion {
                phrase,
                surface_forms,
                trigger: Some(*trigger),
            });
        }
    }
    out
}

/// Whether `word`, right after "without", is a gerund of an action the request describes
/// ("without telling anyone", "without opening the door to strangers") rather than something
/// the clause must not say; the gerunds of saying and containing do name what it must not say
/// ("without mentioning hold harmless", "without including a cap").
fn is_an_action(word: &str) -> bool {
    const SAYING: &[&str] = &[
        "including",
        "mentioning",
        "containing",
        "referring",
        "referencing",
        "naming",
        "listing",
        "using",
        "saying",
        "providing",
    ];
    word.len() > 5 && word.ends_with("ing") && !SAYING.contains(&word)
}

/// Whether `phrase` (the words after "without") is itself drafting language
/// ([`DRAFTING_AFTER_WITHOUT`]), in the singular or the plural ("without regards to").
fn is_drafting_after_without(phrase: &[String]) -> bool {
    DRAFTING_AFTER_WITHOUT.iter().any(|d| {
        let parts: Vec<&str> = d.split(' ').collect();
        phrase.len() >= parts.len()
            && phrase
                .iter()
                .zip(&parts)
                .all(|(w, p)| w == p || w.strip_suffix('s') == Some(p))
    })
}

/// Whether an excluded phrase names nothing a clause could be told apart by: only stop words
/// and words naming a clause ([`META_WORDS`]), or a word the query itself asks for before the
/// exclusion ("An indemnification clause ... It does not include indemnification for breach of
/// specific covenants": the query cannot exclude its own subject; the rest of such a sentence
/// narrows the subject, which a phrase of four words cannot say).
fn names_nothing_new(phrase: &[String], before: &[String]) -> bool {
    let singular = |w: &str| w.strip_suffix('s').unwrap_or(w).to_owned();
    let asked: Vec<String> = before.iter().map(|w| singular(w)).collect();
    let content: Vec<&String> = phrase
        .iter()
        .filter(|w| {
            !crate::LUCENE_ENGLISH_STOP_WORDS.contains(&w.as_str())
                && !META_WORDS.contains(&w.as_str())
        })
        .collect();
    content.is_empty() || content.iter().any(|w| asked.contains(&singular(w)))
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
        let e = exclusions("A cap on liability clause that does not have any exceptions");
        assert_eq!(e.len(), 1);
        assert!(e[0].surface_forms.contains(&"except".to_string()));
        let e = exclusions("Cap on liability without carveouts");
        assert_eq!(e.len(), 1);
        assert!(e[0].surface_forms.contains(&"except".to_string()));
        let u = exclusions("unqualified \"as is\" clause");
        assert_eq!(u.len(), 1);
        assert!(u[0].phrase.is_empty());
    }

    #[test]
    fn an_action_after_without_is_no_exclusion() {
        assert!(exclusions(
            "The counterparty handed the deal to a subsidiary without telling anyone."
        )
        .is_empty());
        assert!(exclusions(
            "assignment to affiliates by notice, without opening the door to strangers"
        )
        .is_empty());
        assert!(exclusions("delivery as is, without guarantee about quality").is_empty());
        let e = exclusions("an indemnity without mentioning hold harmless");
        assert_eq!(e.len(), 1);
        assert_eq!(e[0].phrase, "hold harmless");
        let e = exclusions("a cap without carving out anything");
        assert_eq!(e.len(), 1);
        assert!(e[0].surface_forms.contains(&"except".to_string()));
        let e = exclusions("indem w/o hold harmless wording");
        assert_eq!(e.len(), 1);
        assert_eq!(e[0].phrase, "hold harmless");
    }

    #[test]
    fn fillers_and_meta_words_are_read_past() {
        let e =
            exclusions("Indemnification clause without a specific reference to \"hold harmless\"");
        assert_eq!(e.len(), 1);
        assert_eq!(e[0].surface_forms, vec!["harmless".to_string()]);
        let e = exclusions(
            "An indemnity for any claims, damages, or liabilities without specifically agreeing \
             to hold the other party harmless",
        );
        assert_eq!(e.len(), 1);
        assert_eq!(e[0].phrase, "hold harmless");
        let e = exclusions(
            "An exclusivity clause. It should not include any reference to any \"non-exclusive\" \
             license or right",
        );
        assert_eq!(e.len(), 1);
        assert_eq!(e[0].phrase, "non exclusive license");
    }

    #[test]
    fn a_phrase_that_excludes_nothing_does_not_hide_the_next_trigger() {
        let e = exclusions("products sold as-is, no warranties at all, no exceptions");
        assert_eq!(e.len(), 1);
        assert!(e[0].surface_forms.contains(&"except".to_string()));
        // One exclusion read twice is listed once.
        let e = exclusions("an unqualified as-is clause with no exceptions");
        assert_eq!(e.len(), 1);
    }

    #[test]
    fn a_query_does_not_exclude_its_own_subject() {
        assert!(exclusions(
            "An indemnification clause that covers claims brought by third parties. It does not \
             include indemnification for breach of specific covenants"
        )
        .is_empty());
        assert!(exclusions(
            "A clause that caps liability for indirect damages. Do not include clauses that \
             disclaim all indirect damages"
        )
        .is_empty());
    }

    #[test]
    fn drafting_phrases_with_without_are_not_exclusions() {
        assert!(exclusions(
            "Clause that specifies New York law will govern the contract without regards to \
             conflicts of law principles"
        )
        .is_empty());
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

    #[test]
    fn no_exceptions_and_no_hold_harmless_are_exclusions_but_no_other_words_are() {
        for q in [
            "hard cap, zero exceptions",
            "a bare as-is statement with nothing carved back",
            "a damages ceiling with no exclusions at all",
            "a liability ceiling with nothing excluded from it",
            "a cap with no matters whatsoever excepted from it",
            "as-is, no guarantees on quality, and not a single exception",
            "a full as-is plus other disclaimers, none of them with exceptions",
        ] {
            let e = exclusions(q);
            assert_eq!(e.len(), 1, "{q}");
            assert!(e[0].surface_forms.contains(&"except".to_string()), "{q}");
        }
        let e = exclusions("an indemnity drafted with no hold-harmless language");
        assert_eq!(e.len(), 1);
        assert_eq!(e[0].surface_forms, vec!["harmless".to_string()]);
        assert!(exclusions("the buyer has no other remedy than repair").is_empty());
        let e = exclusions("an indemnity where the party never agrees to keep the other harmless");
        assert_eq!(e.len(), 1);
        assert_eq!(e[0].phrase, "hold harmless");
        assert!(exclusions("the cap should never exceed the fees paid").is_empty());
        assert!(exclusions("no notice is needed for a transfer to affiliates").is_empty());
        assert!(exclusions(
            "either side may end the contract early without having to show any breach or reason"
        )
        .is_empty());
    }
}
