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

/// The claim source an indemnity query names; `None` for other queries.
pub fn wanted_claim_source(query: &str) -> Option<ClaimSource> {
    let words = crate::lowercase_words(query);
    if !words.iter().any(|w| w.starts_with("indemn")) {
        return None;
    }
    if crate::contains_any_phrase(&words, &["first party", "direct claims", "direct claim"]) {
        Some(ClaimSource::FirstParty)
    } else if crate::contains_any_phrase(&words, &["third party", "third parties"]) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_claim_source_of_indemnity_queries_only() {
        assert_eq!(
            wanted_claim_source("first party indemnification of broad-based claims"),
            Some(ClaimSource::FirstParty)
        );
        assert_eq!(
            wanted_claim_source("Indemnification of first party claims"),
            Some(ClaimSource::FirstParty)
        );
        assert_eq!(
            wanted_claim_source("indemnification of third-party claims based on breach"),
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
        assert_eq!(wanted_claim_source("Indemnity of broad-based claims"), None);
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
}
