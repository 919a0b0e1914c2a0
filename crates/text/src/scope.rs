//! Limits a query requires a clause to state: "Non-compete bound by time and territory",
//! "Exclusivity bound by time and territory".
//!
//! A restrictive covenant is enforceable (and worth copying) when it is limited in time and in
//! space, so a lawyer asking for one "bound by time and territory" wants clauses that say both:
//! a duration ("during the Term and for six months after", "for a period of two years") and a
//! geographic scope ("in the Territory", "within 50 miles", "in any country"). A clause on the
//! right topic that states neither is exactly what the lawyer filtered out, yet it scores as
//! well on every lexical and dense signal.
//!
//! In ACORD's training ratings, for "Non-compete bound by time and territory" all 20 two-star
//! clauses lack a duration or a place and none of the 12 relevant ones do; for "Exclusivity
//! bound by time and territory", 22 of 22 against 1 of 9.

/// A limit the query requires the clause to state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// A duration: the term, a period, months, years, "until".
    Duration,
    /// A geographic scope: a territory, country, region, radius.
    Territory,
}

/// Words after which the query names limits ("bound by time and territory").
const LIMIT_TRIGGERS: &[&str] = &[
    "bound by",
    "bounded by",
    "limited by",
    "limited to",
    "limited in",
    "restricted by",
    "restricted to",
    "restricted in",
    "limits on",
    "limitations on",
    "with limits on",
    "confined to",
    "confined in",
    "confined",
    "capped in",
];

const DURATION_WORDS: &[&str] = &[
    "time",
    "duration",
    "period",
    "temporal",
    "temporally",
    "term",
];
const TERRITORY_WORDS: &[&str] = &[
    "territory",
    "territorial",
    "geography",
    "geographic",
    "geographical",
    "geographically",
    "area",
    "region",
    "place",
    "location",
];

/// How clauses state a duration (whole words, lowercase).
const DURATION_FORMS: &[&str] = &[
    "term",
    "period",
    "during",
    "day",
    "days",
    "month",
    "months",
    "year",
    "years",
    "until",
    "expiration",
    "thereafter",
];

/// How clauses state a geographic scope (whole words, lowercase).
const TERRITORY_FORMS: &[&str] = &[
    "territory",
    "territories",
    "country",
    "countries",
    "geographic",
    "geographical",
    "area",
    "region",
    "regions",
    "worldwide",
    "world",
    "mile",
    "miles",
    "kilometers",
    "radius",
    "state",
    "states",
    "city",
    "county",
    "location",
    "market",
];

/// How many words after a trigger its limits may be named: "limited to a set period and a
/// defined geographic area" names the second seven words after "limited to". Outside a query
/// about a restrictive covenant the reach stays short ([`SHORT_REACH`]): "liability limited to
/// the fees paid in the preceding twelve-month period" bounds an amount, not a covenant.
const TRIGGER_REACH: usize = 8;
const SHORT_REACH: usize = 5;

/// Adjectives that make a limit word a required bound: "for a fixed period", "within a named
/// territory", "only for a limited time", "a defined geography".
const DEFINITE: &[&str] = &[
    "set",
    "fixed",
    "defined",
    "specified",
    "named",
    "limited",
    "specific",
    "agreed",
    "stated",
    "certain",
];

/// How many words after an adjective of [`DEFINITE`] its limits may be named: "a limited
/// duration and geographic scope", "a certain stretch of time".
const DEFINITE_REACH: usize = 4;

/// Participles that bound the limit word right before them: "time-limited", "geographically
/// limited", "time-bound".
const BOUND_AFTER: &[&str] = &[
    "limited",
    "bound",
    "bounded",
    "restricted",
    "confined",
    "capped",
];

/// Query words naming a restrictive covenant, the kind of clause a time or territory bound makes
/// enforceable (see the module's doc); a bound read from an adjective alone ([`DEFINITE`]) is
/// read only in such queries, since "notice a set period before renewal" asks for no limit. To
/// deal "only with" the other party is exclusive dealing described.
fn names_restrictive_covenant(words: &[String]) -> bool {
    words.iter().any(|w| {
        w.starts_with("compet")
            || w.starts_with("exclusiv")
            || w.starts_with("solicit")
            || w.starts_with("restrict")
            || w.starts_with("covenant")
            || w == "exclusive"
            || w == "noncompete"
    }) || crate::contains_any_phrase(
        words,
        &["deal only with", "deals only with", "dealing only with"],
    )
}

/// The limits a query requires, a duration before a territory (each at most once): limit words
/// after a trigger ("bound by time and territory"), and, in a query about a restrictive
/// covenant, limit words right after an adjective of [`DEFINITE`] ("only for a fixed period and
/// within a named territory") or right before a participle of [`BOUND_AFTER`] ("time-limited
/// and geographically limited").
///
/// Reads what the query affirms ([`crate::affirmed_words`]: no asides in brackets, no negated
/// sentence ends); limit words count in the plural too ("territories", "periods").
pub fn required_limits(query: &str) -> Vec<Limit> {
    let words = crate::affirmed_words(query);
    let mut limits = Vec::new();
    let mut add = |w: &str| {
        let singular = singular(w);
        let word: &str = &singular;
        let limit = if DURATION_WORDS.contains(&word) {
            Limit::Duration
        } else if TERRITORY_WORDS.contains(&word) {
            Limit::Territory
        } else {
            return;
        };
        if !limits.contains(&limit) {
            limits.push(limit);
        }
    };
    let covenant = names_restrictive_covenant(&words);
    for start in 0..words.len() {
        if covenant && start > 0 && BOUND_AFTER.contains(&words[start].as_str()) {
            add(&words[start - 1]);
        }
        if covenant && DEFINITE.contains(&words[start].as_str()) {
            for w in words.iter().skip(start + 1).take(DEFINITE_REACH) {
                add(w);
            }
        }
        let Some(trigger) = LIMIT_TRIGGERS
            .iter()
            .find(|t| crate::starts_with_phrase(&words[start..], t))
        else {
            continue;
        };
        let after = start + trigger.split(' ').count();
        let reach = if covenant { TRIGGER_REACH } else { SHORT_REACH };
        for w in words.iter().skip(after).take(reach) {
            add(w);
        }
    }
    // One order whatever the wording: what the rule checks is the set.
    limits.sort_by_key(|l| matches!(l, Limit::Territory));
    limits
}

/// `word` without a plural ending ("territories" -> "territory", "periods" -> "period").
fn singular(word: &str) -> std::borrow::Cow<'_, str> {
    if let Some(stem) = word.strip_suffix("ies") {
        format!("{stem}y").into()
    } else {
        word.strip_suffix('s').unwrap_or(word).into()
    }
}

impl Limit {
    /// Whether `text` (raw clause text) states this limit.
    pub fn stated_in(self, text: &str) -> bool {
        let forms = match self {
            Limit::Duration => DURATION_FORMS,
            Limit::Territory => TERRITORY_FORMS,
        };
        text.to_lowercase()
            .split(|c: char| !c.is_alphanumeric())
            .any(|w| forms.contains(&w))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plurals_and_asides_do_not_hide_a_limit() {
        assert_eq!(
            required_limits(
                "A covenant not to compete limited in duration (e.g., the term and one year \
                 after) and territories"
            ),
            vec![Limit::Duration, Limit::Territory]
        );
    }

    #[test]
    fn reads_required_limits() {
        assert_eq!(
            required_limits("Non-compete bound by time and territory"),
            vec![Limit::Duration, Limit::Territory]
        );
        assert_eq!(
            required_limits("Exclusivity bound by time and territory"),
            vec![Limit::Duration, Limit::Territory]
        );
        assert!(required_limits("Non-Disparagement").is_empty());
        assert!(required_limits("Termination for Convenience").is_empty());
    }

    #[test]
    fn finds_stated_limits() {
        let covenant = "During the Term and for six (6) months thereafter, Distributor shall \
                        not sell competing products in the Territory.";
        assert!(Limit::Duration.stated_in(covenant));
        assert!(Limit::Territory.stated_in(covenant));
        let bare = "Agent may not offer or promote competitive products without consent.";
        assert!(!Limit::Duration.stated_in(bare));
        assert!(!Limit::Territory.stated_in(bare));
    }

    #[test]
    fn bounds_in_other_words() {
        let both = vec![Limit::Duration, Limit::Territory];
        assert_eq!(
            required_limits(
                "Exclusive dealing commitment, time-limited and geographically limited"
            ),
            both
        );
        assert_eq!(
            required_limits("noncompete limited duration and geographic scope"),
            both
        );
        assert_eq!(
            required_limits("exclusive dealing obligation, limited term and territory"),
            both
        );
        assert_eq!(
            required_limits(
                "the distributor deals only with us, limited to a certain stretch of time and a \
                 certain territory"
            ),
            both
        );
        assert_eq!(
            required_limits(
                "a restrictive covenant confined both temporally (e.g. the term plus a year) \
                 and geographically (e.g. the United States)"
            ),
            both
        );
        assert_eq!(
            required_limits("an exclusivity capped in time and limited to a defined territory"),
            both
        );
    }

    #[test]
    fn bounds_named_by_adjectives_in_covenant_queries() {
        assert_eq!(
            required_limits("a non-compete limited to a set period and a defined geographic area"),
            vec![Limit::Duration, Limit::Territory]
        );
        assert_eq!(
            required_limits(
                "exclusive dealing only for a fixed period and within a named territory"
            ),
            vec![Limit::Duration, Limit::Territory]
        );
        // Not a covenant: a set period before renewal asks for no bound.
        assert!(required_limits("notice a set period before the term renews").is_empty());
        // Outside a covenant the trigger's reach stays short.
        assert!(required_limits(
            "liability limited to the fees paid by the customer in the preceding twelve month period"
        )
        .is_empty());
    }
}
