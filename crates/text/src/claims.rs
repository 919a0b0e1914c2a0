//! Whose claims an indemnity query asks to cover: third parties' ("indemnification of third
//! party claims") or the parties' own ("first party indemnification of broad-based claims").
//!
//! The distinction is basic to indemnities. A third-party indemnity covers losses from claims
//! that outsiders bring ("any claim, suit or proceeding by a third party"); a first-party
//! indemnity also covers losses the indemnified party suffers directly, between the parties.
//! A clause limited to third-party claims is exactly what a lawyer asking for a first-party
//! indemnity filtered out, and an indemnity that never mentions third parties cannot be the
//! third-party indemnity asked for, yet both share every topical word with the query (for a
//! first-party query, "party" even matches everything).
//!
//! ACORD's training ratings (clauses of the indemnity category): for "first party
//! indemnification of broad-based claims", 10 of 17 two-star clauses mention third parties and
//! none of the 11 relevant ones do (specified claims: 15 of 21 vs 3 of 8); for "indemnification
//! of third party claims" and "... based on breach of agreement", no two-star clause mentions
//! third parties and every relevant one does. Only indemnity queries are read: a "first party
//! claim exception to waiver of indirect damages" is a different animal (its relevant clauses
//! do mention third parties).

/// Whose claims the query wants the indemnity to cover.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClaimSource {
    /// The parties' own losses ("first party", "first-party", "direct claims").
    FirstParty,
    /// Claims brought by outsiders ("third party claims", "third-party").
    ThirdParty,
}

/// Phrases that, a few words before a third party ([`THIRD_PARTY_FORMS`]), say the cover goes
/// beyond third parties' claims: "not limited to third party claims", "not just third-party",
/// "not limited to claims by outsiders".
const BEYOND: &[&str] = &[
    "not limited to",
    "not restricted to",
    "not confined to",
    "not just",
    "not only",
    "not merely",
];

/// Words between a [`BEYOND`] phrase and a third party, or right after the third party, that
/// make it third parties' rights rather than their claims: "not just mention third-party IP",
/// "claims brought by third parties, not just third-party rights".
const THIRD_PARTY_RIGHTS: &[&str] = &[
    "mention",
    "mentions",
    "mentioning",
    "reference",
    "references",
    "rights",
    "right",
    "ip",
    "intellectual",
];

/// Phrases that restrict the cover to what follows: "only for claims brought by outsiders",
/// "restricted to claims asserted by third parties" (not after "not": "not limited to").
const ONLY: &[&str] = &[
    "only",
    "restricted to",
    "limited to",
    "confined to",
    "solely",
];

/// How many words after a [`BEYOND`] phrase may hold the third party it goes beyond ("not
/// limited to claims brought by a third party": six).
const BEYOND_REACH: usize = 6;

/// Ways of saying claims from either side are covered: "regardless of who brings them",
/// "whoever brings the claim", "no matter whether the counterparty or an outsider sues", "by
/// the counterparty or a third party", "the other party, outsiders or both" (not a bare "or
/// both": long wordings say "one or both parties").
const EITHER_SOURCE: &[&str] = &[
    "regardless of who",
    "whoever",
    "either party or a third party",
    "either party or third parties",
    "first party or third party",
    "first party and third party",
    "first or third party",
    "or a third party",
    "or by a third party",
    "or from a third party",
    "or third parties",
    "or by third parties",
    "or from third parties",
    "or an outside party",
    "or from an outside party",
    "or an outside claimant",
    "no matter who",
    "no matter whether",
    "irrespective of who",
    "irrespective of whether",
    "or an outsider",
    "or by an outsider",
    "or from an outsider",
    "or outsiders",
    "outsiders or both",
    "third parties or both",
    "third party or both",
];

/// Ways of naming a third party in a query: the term of art, and the plain word a lawyer uses
/// for someone outside the contract ("claims brought by outsiders", "an outside party").
const THIRD_PARTY_FORMS: &[&str] = &[
    "third party",
    "third parties",
    "thirdparty",
    "outsider",
    "outsiders",
    "outside party",
    "outside parties",
    "outside claim",
    "outside claims",
    "outside claimant",
    "outside claimants",
    "outside company",
    "outside companies",
    "outside suit",
    "outside suits",
    "outside lawsuits",
    "outside the deal",
];

/// The claim source an indemnity query names; `None` for other queries.
///
/// Reads only what the query affirms ([`crate::affirmed_words`]): "it should not include
/// indemnities that cover both first party and third party claims" is no request for
/// first-party cover. Cover "not limited to third party claims" (or "not just claims by
/// outsiders") is first-party cover, and a query accepting claims from either side
/// ([`EITHER_SOURCE`]) names no source. Cover restricted to third parties ([`ONLY`]: "only
/// for claims by outsiders, not claims between us") is third-party cover, whatever else the
/// query says of the parties' own claims.
pub fn wanted_claim_source(query: &str) -> Option<ClaimSource> {
    let words = crate::affirmed_words(query);
    if !crate::mentions_indemnity(&words) {
        return None;
    }
    // Whether a third party's claims (not its rights) are named within `reach` words from
    // `after`.
    let third_party_claims_within = |after: usize, reach: usize| {
        let end = (after + reach).min(words.len());
        (after..end).any(|k| {
            THIRD_PARTY_FORMS
                .iter()
                .find(|f| crate::starts_with_phrase(&words[k..], f))
                .is_some_and(|f| {
                    let next = words.get(k + f.split(' ').count());
                    !words[after..k]
                        .iter()
                        .chain(next)
                        .any(|w| THIRD_PARTY_RIGHTS.contains(&w.as_str()))
                })
        })
    };
    let only_third_parties = (0..words.len()).any(|i| {
        ONLY.iter()
            .find(|o| crate::starts_with_phrase(&words[i..], o))
            .is_some_and(|o| {
                let negated = i > 0 && matches!(words[i - 1].as_str(), "not" | "just");
                let after = i + o.split(' ').count();
                !negated && third_party_claims_within(after, BEYOND_REACH)
            })
    }) || (0..words.len()).any(|i| {
        // "limited to 3P claims only"
        words[i] == "only"
            && THIRD_PARTY_FORMS.iter().any(|f| {
                let n = f.split(' ').count();
                (1..=2).any(|gap| {
                    i >= n + gap - 1 && crate::starts_with_phrase(&words[i + 1 - gap - n..], f)
                })
            })
    });
    let beyond_third_parties = (0..words.len()).any(|i| {
        BEYOND
            .iter()
            .find(|b| crate::starts_with_phrase(&words[i..], b))
            .is_some_and(|b| {
                let after = i + b.split(' ').count();
                third_party_claims_within(after, BEYOND_REACH)
            })
    });
    if beyond_third_parties {
        return Some(ClaimSource::FirstParty);
    }
    if crate::contains_any_phrase(&words, EITHER_SOURCE) {
        return None;
    }
    if only_third_parties {
        return Some(ClaimSource::ThirdParty);
    }
    if crate::contains_any_phrase(&words, &["first party", "direct claims", "direct claim"]) {
        Some(ClaimSource::FirstParty)
    } else if crate::contains_any_phrase(&words, THIRD_PARTY_FORMS) {
        Some(ClaimSource::ThirdParty)
    } else {
        None
    }
}

/// Whether `text` (raw clause text) speaks of third parties or their claims.
pub fn mentions_third_parties(text: &str) -> bool {
    let words = crate::lowercase_words(text);
    words.iter().any(|w| w == "thirdparty")
        || crate::contains_phrase(&words, "third party")
        || crate::contains_phrase(&words, "third parties")
}

impl ClaimSource {
    /// Whether a clause goes against a query wanting this claim source: for first-party
    /// claims, one that speaks of third parties; for third-party claims, one that does not.
    pub fn goes_against(self, clause_mentions_third_parties: bool) -> bool {
        match self {
            ClaimSource::FirstParty => clause_mentions_third_parties,
            ClaimSource::ThirdParty => !clause_mentions_third_parties,
        }
    }
}

/// How wide a set of grounds an indemnity query asks the indemnity to cover.
///
/// A broad-based indemnity covers any loss "arising out of or relating to" the agreement or the
/// indemnitor's acts; a specified one lists the grounds it covers ("arising out of (a) any breach
/// of its representations, (b) its negligence or wilful misconduct, (c) ..."). The list is what
/// a lawyer asking for the broad form does not want, and what one asking for the specified form
/// does; both forms share every topical word with the query.
///
/// ACORD's training ratings (indemnity clauses, [`lists_grounds`]): for "first party
/// indemnification of broad-based claims", 2 of 11 relevant clauses list their grounds against
/// 12 of 17 two-star ones; for "... of specified claims", 8 of 8 against 12 of 25. Those are
/// the only training queries naming a breadth (both in the valid split), so the rule is
/// in-sample there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClaimBreadth {
    /// Any claim arising from the agreement or the indemnitor ("broad", "broad-based").
    Broad,
    /// Claims on listed grounds ("specified", "specific", "enumerated", "listed").
    Specified,
}

/// How many words before a breadth word a negation undoes it ("not one tied to a specific").
const BREADTH_NEGATION_REACH: usize = 5;

/// The breadth an indemnity query names; `None` for other queries: "broad" or its plain
/// synonyms ("a wide indemnity", "sweeping cover"), which win over a list of examples the
/// query gives ("a wide indemnity: breaches of reps plus listed events").
pub fn wanted_claim_breadth(query: &str) -> Option<ClaimBreadth> {
    let words = crate::affirmed_words(query);
    if !crate::mentions_indemnity(&words) {
        return None;
    }
    // A breadth word counts unless a negation stands just before it: "a general breach
    // indemnity, not one tied to a specific event", "as distinct from indemnities limited to
    // specified covenants".
    let has = |forms: &[&str]| {
        (0..words.len()).any(|i| {
            forms.contains(&words[i].as_str())
                && !words[i.saturating_sub(BREADTH_NEGATION_REACH)..i]
                    .iter()
                    .any(|w| matches!(w.as_str(), "not" | "no" | "distinct"))
        })
    };
    if has(&[
        "broad",
        "broadbased",
        "broadly",
        "broader",
        "broadest",
        "wide",
        "wider",
        "widest",
        "sweeping",
        "expansive",
    ]) {
        Some(ClaimBreadth::Broad)
    } else if has(&["specified", "specific", "enumerated", "listed"]) {
        Some(ClaimBreadth::Specified)
    } else {
        None
    }
}

/// Words that introduce the grounds of a claim ("arising out of", "resulting from", "based
/// on", "in connection with"), matched as word prefixes.
const GROUND_TRIGGERS: &[&str] = &[
    "aris",
    "result",
    "relat",
    "based",
    "caused",
    "connection",
    "attributable",
    "reason",
    "from",
    "out",
];

/// How many words may separate a ground trigger from the first item of its list ("arising out
/// of or in connection with any of the following: (a)").
const GROUND_LIST_REACH: usize = 12;

/// Whether `text` (raw clause text) lists the grounds it covers: a first list item ("(a)",
/// "(i)", "(1)", "a)", "i.", "1.") within [`GROUND_LIST_REACH`] words after a ground trigger, or
/// right before one ("(a) arising from its acts; (b) ..."). Lists of indemnitees or of losses
/// come before the trigger and do not count.
pub fn lists_grounds(text: &str) -> bool {
    let tokens: Vec<&str> = text.split_whitespace().collect();
    let is_trigger = |token: &str| {
        let word: String = token
            .chars()
            .filter(|c| c.is_alphabetic())
            .collect::<String>()
            .to_lowercase();
        GROUND_TRIGGERS.iter().any(|t| word.starts_with(t))
    };
    let is_first_item = |token: &str| {
        let token = token.trim_end_matches([':', ',', ';']);
        let inner = token.strip_prefix('(').unwrap_or(token);
        matches!(
            inner,
            "a)" | "A)" | "i)" | "I)" | "1)" | "a." | "A." | "i." | "I." | "1."
        )
    };
    tokens.iter().enumerate().any(|(i, token)| {
        is_first_item(token)
            && (tokens[i.saturating_sub(GROUND_LIST_REACH)..i]
                .iter()
                .any(|t| is_trigger(t))
                || tokens.get(i + 1).is_some_and(|t| is_trigger(t)))
    })
}

impl ClaimBreadth {
    /// Whether a clause goes against a query wanting this breadth: for broad claims, one that
    /// lists its grounds; for specified claims, one that does not.
    pub fn goes_against(self, clause_lists_grounds: bool) -> bool {
        match self {
            ClaimBreadth::Broad => clause_lists_grounds,
            ClaimBreadth::Specified => !clause_lists_grounds,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negated_sentences_and_either_side_do_not_name_a_source() {
        assert_eq!(
            wanted_claim_source(
                "An indemnity for claims brought by third parties. It should not include \
                 indemnities that cover both first party and third party claims"
            ),
            Some(ClaimSource::ThirdParty)
        );
        assert_eq!(
            wanted_claim_source(
                "An indemnity for tort claims that are not limited to third party claims"
            ),
            Some(ClaimSource::FirstParty)
        );
        assert_eq!(
            wanted_claim_source(
                "An indemnity for listed events, regardless of who brings the claims"
            ),
            None
        );
    }

    #[test]
    fn reads_the_claim_source_of_indemnity_queries_only() {
        assert_eq!(
            wanted_claim_source("first party indemnification of broad-based claims"),
            Some(ClaimSource::FirstParty)
        );
        assert_eq!(
            wanted_claim_source("first party indemnification of specified claims"),
            Some(ClaimSource::FirstParty)
        );
        assert_eq!(
            wanted_claim_source(
                "indemnification of third-party claims based on breach of agreement"
            ),
            Some(ClaimSource::ThirdParty)
        );
        assert_eq!(
            wanted_claim_source("third party IP infringement indemnity"),
            Some(ClaimSource::ThirdParty)
        );
        assert_eq!(
            wanted_claim_source("first party claim exception to waiver of indirect damages"),
            None
        );
        assert_eq!(wanted_claim_source("Third Party Beneficiary"), None);
        assert_eq!(
            wanted_claim_source("indemnification covers indirect claims"),
            None
        );
    }

    #[test]
    fn third_party_language_decides_against_which_query_a_clause_goes() {
        let third = "Supplier shall indemnify Customer against any claim by a Third-Party \
                     alleging infringement.";
        let direct = "Supplier shall indemnify Customer against all losses arising from \
                      Supplier's breach of this Agreement.";
        assert!(mentions_third_parties(third));
        assert!(!mentions_third_parties(direct));
        assert!(ClaimSource::FirstParty.goes_against(mentions_third_parties(third)));
        assert!(!ClaimSource::FirstParty.goes_against(mentions_third_parties(direct)));
        assert!(ClaimSource::ThirdParty.goes_against(mentions_third_parties(direct)));
    }

    #[test]
    fn reads_the_breadth_of_indemnity_queries_only() {
        assert_eq!(
            wanted_claim_breadth("first party indemnification of broad-based claims"),
            Some(ClaimBreadth::Broad)
        );
        assert_eq!(
            wanted_claim_breadth("first party indemnification of specified claims"),
            Some(ClaimBreadth::Specified)
        );
        assert_eq!(
            wanted_claim_breadth("indemnification of third party claims"),
            None
        );
        // "Broad" outside an indemnity (the long wording of a waiver query).
        assert_eq!(
            wanted_claim_breadth(
                "A waiver of indirect damages clause that waives a broad range of \
                 consequential, incidental, punitive damages, and lost profits"
            ),
            None
        );
    }

    #[test]
    fn a_list_after_the_grounds_trigger_is_a_list_of_grounds() {
        let specified = "Supplier shall indemnify Customer from all Losses arising out of \
                         (a) any breach of its warranties, (b) its negligence.";
        let specified_roman = "NTC shall indemnify ALFA harmless from any and all claims \
                               which directly or indirectly arise out of or relate to:\ni) \
                               NTC's breach of warranties";
        let broad = "Supplier shall indemnify Customer and its (i) officers and (ii) directors \
                     against any loss arising out of or relating to this Agreement.";
        let items_first = "The Distributor shall hold the Company harmless from any and all \
                           claims (a) arising from acts of the Distributor; (b) as a \
                           consequence of termination.";
        assert!(lists_grounds(specified));
        assert!(lists_grounds(items_first));
        assert!(lists_grounds(specified_roman));
        assert!(!lists_grounds(broad));
        assert!(ClaimBreadth::Broad.goes_against(lists_grounds(specified)));
        assert!(ClaimBreadth::Specified.goes_against(lists_grounds(broad)));
    }

    #[test]
    fn cover_only_for_outsiders_is_third_party_cover() {
        assert_eq!(
            wanted_claim_source(
                "an indemnity where one side covers the other only for claims brought by \
                 outsiders, not one that also picks up claims between us; it should clearly \
                 talk about suits from third parties, not just mention third-party IP"
            ),
            Some(ClaimSource::ThirdParty)
        );
        assert_eq!(
            wanted_claim_source(
                "The counterparty ran its own direct claim through the indemnity. Find an \
                 indemnification clause restricted to claims asserted by third parties"
            ),
            Some(ClaimSource::ThirdParty)
        );
        // A query accepting either source names none, whatever it says happened before.
        assert_eq!(
            wanted_claim_source(
                "The other side argued the indemnity covered only outside lawsuits. I need an \
                 indemnity for specified events no matter whether the counterparty or a third \
                 party brings them"
            ),
            None
        );
        assert_eq!(
            wanted_claim_source("indem limited to 3P claims only"),
            Some(ClaimSource::ThirdParty)
        );
        assert_eq!(
            wanted_claim_source("an indemnity that isn't limited to outsider claims"),
            Some(ClaimSource::FirstParty)
        );
        assert_eq!(
            wanted_claim_source("an indemnity not confined to claims by outside claimants"),
            Some(ClaimSource::FirstParty)
        );
    }

    #[test]
    fn a_wide_indemnity_is_broad_and_a_negated_list_names_no_breadth() {
        assert_eq!(
            wanted_claim_breadth(
                "a wide indemnity: breaches of reps and warranties plus listed events"
            ),
            Some(ClaimBreadth::Broad)
        );
        assert_eq!(
            wanted_claim_breadth("a sweeping indemnity covering torts and fraud"),
            Some(ClaimBreadth::Broad)
        );
        assert_eq!(
            wanted_claim_breadth(
                "indemnity for outsiders' claims from a breach of reps; a general breach \
                 indemnity, not one tied to a specific event such as IP infringement"
            ),
            None
        );
    }

    #[test]
    fn outsiders_are_third_parties_and_either_source_names_none() {
        assert_eq!(
            wanted_claim_source("an indemnity only for suits brought by outsiders"),
            Some(ClaimSource::ThirdParty)
        );
        assert_eq!(
            wanted_claim_source("indemnity for claims by an outside party alleging infringement"),
            Some(ClaimSource::ThirdParty)
        );
        assert_eq!(
            wanted_claim_source("a wide indemnity, not just for claims by outsiders"),
            Some(ClaimSource::FirstParty)
        );
        assert_eq!(
            wanted_claim_source("indemnity not limited to claims brought by a third party"),
            Some(ClaimSource::FirstParty)
        );
        assert_eq!(
            wanted_claim_source(
                "indemnity for listed events, whether the counterparty or a third party sues"
            ),
            None
        );
        assert_eq!(
            wanted_claim_source("indemnity for listed events, whoever brings the claim"),
            None
        );
        // "one or both parties" is no "either source".
        assert_eq!(
            wanted_claim_source(
                "An indemnification clause under which one or both parties cover third party claims"
            ),
            Some(ClaimSource::ThirdParty)
        );
    }
}
