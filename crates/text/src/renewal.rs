//! How a term clause renews, for queries that ask for automatic renewal unless a party gives
//! notice ("Clause that requires notice to terminate auto-renew").
//!
//! Why: automatic renewal and renewal by a party's option are opposite drafting choices that
//! share every word a lexical or dense signal sees (renew, notice, term, days prior): for
//! ACORD's training query on auto-renewal, all 9 four-star clauses renew automatically, while
//! the option-to-renew clauses ("may be extended ... by written notice given by Customer", "If
//! the Publishers exercise their right to renew") were rated two stars, same category but not
//! the answer.

/// The renewal mechanism a query asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RenewalMode {
    /// The term renews by itself unless a party gives notice ("evergreen", "auto-renew").
    Automatic,
}

/// What a clause says about renewal.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Renewal {
    /// It speaks of renewing or extending the term at all.
    pub mentioned: bool,
    /// The term renews or extends by itself ("shall automatically renew", "unless either party
    /// gives notice of its intention not to renew").
    pub automatic: bool,
}

/// Query phrases that ask for automatic renewal ("auto-renew", "automatic renewal").
const AUTOMATIC_QUERY: &[&str] = &[
    "auto renew",
    "auto renewal",
    "auto renewing",
    "auto renews",
    "autorenew",
    "autorenewal",
    "automatic renewal",
    "automatic extension",
    "automatically renew",
    "automatically renews",
    "automatically renewing",
    "automatically extend",
    "evergreen",
];

/// Clause phrases of renewal that happens by itself.
const AUTOMATIC_CLAUSE: &[&str] = &[
    "automatically renew",
    "automatically renewed",
    "automatically renews",
    "automatically renewing",
    "automatically extend",
    "automatically extended",
    "automatically extends",
    "automatically continue",
    "automatically continues",
    "automatic renewal",
    "automatic renewals",
    "automatic extension",
    "automatic extensions",
    "evergreen",
    "not to renew",
    "not to extend",
    "non renewal",
    "nonrenewal",
    "notice of non",
    "intent not to",
    "intention not to",
];

/// Words that show a clause is about renewing or extending a term.
const RENEWAL_WORDS: &[&str] = &[
    "renew",
    "renewal",
    "renewals",
    "renewed",
    "renewing",
    "renews",
    "renewable",
    "extend",
    "extended",
    "extension",
    "extensions",
];

/// Query phrases of a term that goes on by itself: "the contract rolls over", "renews by
/// itself", "tacit renewal". Only with a word of renewal, or of rolling over.
const BY_ITSELF: &[&str] = &[
    "automatic",
    "automatically",
    "by itself",
    "on its own",
    "tacit",
    "tacitly",
];

/// Query words of a term going on: besides renewing and extending, "prolongs", "successive
/// periods" (not "continues": "terminates automatically; the surviving terms continue").
fn speaks_of_renewal(w: &str) -> bool {
    w.starts_with("renew")
        || w.starts_with("extend")
        || w.starts_with("extension")
        || w.starts_with("prolong")
        || w.starts_with("successive")
}

/// The renewal mechanism the query asks for, if any ("notice to terminate auto-renew" is about
/// auto-renewal: the notice ends it; so is a contract that "rolls over into a new term unless
/// one side gives notice", or that "prolongs automatically for successive periods").
pub fn wanted_renewal(query: &str) -> Option<RenewalMode> {
    let words = crate::affirmed_words(query);
    let rolls_over = (1..words.len()).any(|i| {
        words[i] == "over" && matches!(words[i - 1].as_str(), "roll" | "rolls" | "rolling")
    }) || words.iter().any(|w| w == "rollover");
    let by_itself =
        crate::contains_any_phrase(&words, BY_ITSELF) && words.iter().any(|w| speaks_of_renewal(w));
    (crate::contains_any_phrase(&words, AUTOMATIC_QUERY) || rolls_over || by_itself)
        .then_some(RenewalMode::Automatic)
}

impl Renewal {
    /// What `clause` says about renewal.
    pub fn of(clause: &str) -> Self {
        let words = crate::lowercase_words(clause);
        Renewal {
            mentioned: words.iter().any(|w| RENEWAL_WORDS.contains(&w.as_str())),
            automatic: crate::contains_any_phrase(&words, AUTOMATIC_CLAUSE),
        }
    }

    /// Whether a clause that renews this way goes against a query asking for `wanted`: an
    /// automatic query wants the clause to renew by itself. A clause that never speaks of
    /// renewal goes against it (it cannot show the mechanism asked for).
    pub fn goes_against(&self, wanted: RenewalMode) -> bool {
        if !self.mentioned {
            return true;
        }
        match wanted {
            RenewalMode::Automatic => !self.automatic,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_query() {
        assert_eq!(
            wanted_renewal("Clause that requires notice to terminate auto-renew"),
            Some(RenewalMode::Automatic)
        );
        // The medium and long wordings of the same query.
        assert_eq!(
            wanted_renewal(
                "Clause that allows the auto-renewal of a contract unless a party provides notice \
                 not to renew"
            ),
            Some(RenewalMode::Automatic)
        );
        assert_eq!(
            wanted_renewal(
                "A clause that specifies that the contract will automatically renew for \
                 successive terms after the expiration of the initial term unless a party \
                 provides notice not to renew"
            ),
            Some(RenewalMode::Automatic)
        );
        assert_eq!(wanted_renewal("Termination for Convenience"), None);
        assert_eq!(wanted_renewal("cap on liability"), None);
        // Insurance clauses speak of non-renewal notices; the query does not ask for renewal.
        assert_eq!(wanted_renewal("Insurance"), None);
    }

    #[test]
    fn a_term_that_goes_on_by_itself_is_automatic_renewal() {
        for query in [
            "the contract just rolls over into a new term unless one of us tells the other",
            "contract rolls over into new terms by itself once the first term runs out",
            "Clause of tacit renewal, where the contract prolongs automatically for successive \
             periods, unless one party gives notice of non-renewal",
        ] {
            assert_eq!(
                wanted_renewal(query),
                Some(RenewalMode::Automatic),
                "{query}"
            );
        }
        assert_eq!(
            wanted_renewal("the licence terminates automatically; the surviving terms continue"),
            None
        );
    }

    #[test]
    fn automatic_renewal_by_its_phrases() {
        let evergreen = Renewal::of(
            "The term of this Agreement shall be for one (1) year commencing on the Effective \
             Date and automatically renewing annually thereafter, unless either party provides \
             a thirty-day notice of written termination one to the other.",
        );
        assert!(evergreen.automatic);
        let unless_notice = Renewal::of(
            "Upon expiration of the Initial Term, unless written notice to the contrary is \
             provided ... this Agreement shall be renewed ... unless either Party notifies the \
             other Party of its intention not to renew in writing.",
        );
        assert!(unless_notice.automatic);
        assert!(!evergreen.goes_against(RenewalMode::Automatic));
    }

    #[test]
    fn renewal_by_a_party_s_option_is_not_automatic() {
        let option = Renewal::of(
            "A Facility Addendum may be extended for up to three (3) additional periods of \
             twelve (12) months by written notice given by Customer to Manufacturer not less \
             than twelve (12) months prior to the expiration of the Initial Term.",
        );
        assert!(option.mentioned && !option.automatic);
        assert!(option.goes_against(RenewalMode::Automatic));
    }

    #[test]
    fn a_clause_without_renewal_shows_no_automatic_renewal() {
        let convenience = Renewal::of(
            "Either party may terminate this Agreement for convenience upon ninety (90) days' \
             prior written notice to the other party.",
        );
        assert!(!convenience.mentioned);
        assert!(convenience.goes_against(RenewalMode::Automatic));
    }
}
