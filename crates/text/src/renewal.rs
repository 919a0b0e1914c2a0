//! How a term clause renews, for queries that ask for one way of renewing: automatically unless
//! a party gives notice ("Clause that requires notice to terminate auto-renew"), or only when a
//! party gives notice that it renews ("Renewal clause that requires notice to Renew").
//!
//! Why: the two are opposite drafting choices that share every word a lexical or dense signal
//! sees (renew, notice, term, days prior), and the rating memory carries one into the other: for
//! ACORD's training query on auto-renewal, all 9 four-star clauses renew automatically, while
//! the option-to-renew clauses ("may be extended ... by written notice given by Customer", "If
//! the Publishers exercise their right to renew") were rated two stars, same category but not
//! the answer. A query asking for renewal by notice wants exactly those.

/// The renewal mechanism a query asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RenewalMode {
    /// The term renews by itself unless a party gives notice ("evergreen", "auto-renew").
    Automatic,
    /// The term renews only if a party gives notice or exercises an option to renew.
    ByNotice,
}

/// What a clause says about renewal.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Renewal {
    /// It speaks of renewing or extending the term at all.
    pub mentioned: bool,
    /// The term renews or extends by itself ("shall automatically renew", "unless either party
    /// gives notice of its intention not to renew").
    pub automatic: bool,
    /// A party renews or extends by notice or by exercising an option ("may renew by giving
    /// written notice", "shall have the right to extend", "notice of its election to renew").
    pub by_notice: bool,
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

/// Query phrases that ask for renewal by notice or option.
const BY_NOTICE_QUERY: &[&str] = &[
    "notice to renew",
    "notice to extend",
    "notice of renewal",
    "notice of intent to renew",
    "option to renew",
    "option to extend",
    "right to renew",
    "right to extend",
    "elect to renew",
    "election to renew",
    "renewal option",
    "renewal by notice",
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

/// Clause phrases of renewal by a party's act.
const BY_NOTICE_CLAUSE: &[&str] = &[
    "right to renew",
    "right to extend",
    "right of renewal",
    "option to renew",
    "option to extend",
    "option of renewing",
    "may renew",
    "may extend",
    "may elect to renew",
    "may elect to extend",
    "elect to renew",
    "elect to extend",
    "election to renew",
    "election to extend",
    "intention to renew",
    "intention to extend",
    "intent to renew",
    "intent to extend",
    "desire to renew",
    "desire to extend",
    "wishes to renew",
    "wishes to extend",
    "wish to renew",
    "wish to extend",
    "renewal notice",
    "notice of renewal",
    "notice to renew",
    "notice to extend",
    "exercise its right to renew",
    "exercise their right to renew",
    "may be renewed",
    "may be extended",
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

/// The renewal mechanism the query asks for, if any. Automatic wins when a query names both
/// ("notice to terminate auto-renew" is about auto-renewal: the notice ends it).
pub fn wanted_renewal(query: &str) -> Option<RenewalMode> {
    let words = crate::lowercase_words(query);
    if crate::contains_any_phrase(&words, AUTOMATIC_QUERY) {
        Some(RenewalMode::Automatic)
    } else if crate::contains_any_phrase(&words, BY_NOTICE_QUERY) {
        Some(RenewalMode::ByNotice)
    } else {
        None
    }
}

impl Renewal {
    /// What `clause` says about renewal.
    pub fn of(clause: &str) -> Self {
        let words = crate::lowercase_words(clause);
        Renewal {
            mentioned: words.iter().any(|w| RENEWAL_WORDS.contains(&w.as_str())),
            automatic: crate::contains_any_phrase(&words, AUTOMATIC_CLAUSE),
            by_notice: crate::contains_any_phrase(&words, BY_NOTICE_CLAUSE),
        }
    }

    /// Whether a clause that renews this way goes against a query asking for `wanted`: an
    /// automatic query wants the clause to renew by itself; a by-notice query wants a party's
    /// notice or option and no automatic renewal. A clause that never speaks of renewal goes
    /// against both (it cannot show the mechanism asked for).
    pub fn goes_against(&self, wanted: RenewalMode) -> bool {
        if !self.mentioned {
            return true;
        }
        match wanted {
            RenewalMode::Automatic => !self.automatic,
            RenewalMode::ByNotice => self.automatic || !self.by_notice,
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
        assert_eq!(
            wanted_renewal("Renewal clause that requires notice to Renew"),
            Some(RenewalMode::ByNotice)
        );
        assert_eq!(
            wanted_renewal("evergreen term"),
            Some(RenewalMode::Automatic)
        );
        assert_eq!(wanted_renewal("Termination for Convenience"), None);
        assert_eq!(wanted_renewal("cap on liability"), None);
        // Insurance clauses speak of non-renewal notices; the query does not ask for renewal.
        assert_eq!(wanted_renewal("Insurance"), None);
    }

    #[test]
    fn automatic_renewal_by_its_phrases() {
        let evergreen = Renewal::of(
            "The term of this Agreement shall be for one (1) year commencing on the Effective \
             Date and automatically renewing annually thereafter, unless either party provides \
             a thirty-day notice of written termination one to the other.",
        );
        assert!(evergreen.automatic && !evergreen.by_notice);
        let unless_notice = Renewal::of(
            "Upon expiration of the Initial Term, unless written notice to the contrary is \
             provided ... this Agreement shall be renewed ... unless either Party notifies the \
             other Party of its intention not to renew in writing.",
        );
        assert!(unless_notice.automatic);
        assert!(!evergreen.goes_against(RenewalMode::Automatic));
        assert!(evergreen.goes_against(RenewalMode::ByNotice));
    }

    #[test]
    fn renewal_by_notice_by_its_phrases() {
        let option = Renewal::of(
            "A Facility Addendum may be extended for up to three (3) additional periods of \
             twelve (12) months by written notice given by Customer to Manufacturer not less \
             than twelve (12) months prior to the expiration of the Initial Term.",
        );
        assert!(option.by_notice && !option.automatic);
        assert!(!option.goes_against(RenewalMode::ByNotice));
        assert!(option.goes_against(RenewalMode::Automatic));
        let intention = Renewal::of(
            "In the event that there is no written notice issued by either party to show the \
             intention to renew this Agreement in the said thirty(30) days before the expiry \
             of the current Term of the Agreement, the Agreement shall terminate.",
        );
        assert!(intention.by_notice && !intention.goes_against(RenewalMode::ByNotice));
        let franchise = Renewal::of(
            "You shall give AIRSOPURE notice in writing of Your election to renew this \
             Agreement at least 3 months prior to the expiration of the then-current term.",
        );
        assert!(!franchise.goes_against(RenewalMode::ByNotice));
    }

    #[test]
    fn a_clause_without_renewal_shows_neither() {
        let convenience = Renewal::of(
            "Either party may terminate this Agreement for convenience upon ninety (90) days' \
             prior written notice to the other party.",
        );
        assert!(!convenience.mentioned);
        assert!(convenience.goes_against(RenewalMode::Automatic));
        assert!(convenience.goes_against(RenewalMode::ByNotice));
    }
}
