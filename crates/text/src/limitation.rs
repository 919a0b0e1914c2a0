//! Whether a clause limits liability, for queries that ask for limitations of liability shaped
//! by something else ("precedents for insurance coverage influencing limitation of liability").
//!
//! Why: such a query names two subjects, and the other one (insurance) has a category of its own
//! with far more clauses. Every insurance clause matches "insurance coverage" and "liability"
//! ("commercial general liability insurance with limits of ..."), and the rating memory carries
//! the ratings of the training query "Insurance" into it, so the first page fills with insurance
//! requirements that limit nothing. What the lawyer wants is a limitation of liability that
//! refers to insurance ("shall not exceed the amount of such Party's insurance coverage").

/// Query phrases naming a limitation of liability as what is wanted.
const LIMITATION_QUERY: &[&str] = &[
    "limitation of liability",
    "limitations of liability",
    "limitation on liability",
    "limitations on liability",
    "liability limitation",
    "liability limitations",
];

/// Clause phrases that limit or exclude a party's liability. Insurance requirements speak of
/// "liability insurance with limits of", which none of these match.
const LIMITING_PHRASES: &[&str] = &[
    "not exceed",
    "not to exceed",
    "not be liable",
    "no liability",
    "aggregate liability",
    "total liability",
    "maximum liability",
    "cumulative liability",
    "entire liability",
    "liability shall be limited",
    "liability will be limited",
    "liability is limited",
    "liability shall not",
    "liability will not",
    "limitation of liability",
    "limitations of liability",
    "limitation on liability",
    "liability cap",
    "cap on liability",
    "exceed the amount",
    "exceed the greater",
    "exceed the lesser",
];

/// Openings that limit liability only when liability or an amount it may not exceed follows
/// closely: "in no event shall either party be liable", but not the insurance requirement "in no
/// event less than $1,000,000".
const OPENINGS: &[&str] = &["in no event", "in no case", "under no circumstances"];

/// How many words after an opening the liability it limits must be named.
const OPENING_REACH: usize = 8;

/// Whether the query asks for limitations of liability by name.
pub fn wants_liability_limit(query: &str) -> bool {
    let words = crate::lowercase_words(query);
    LIMITATION_QUERY
        .iter()
        .any(|p| crate::contains_phrase(&words, p))
}

/// Whether the clause limits or excludes liability.
pub fn limits_liability(clause: &str) -> bool {
    let words = crate::lowercase_words(clause);
    if LIMITING_PHRASES
        .iter()
        .any(|p| crate::contains_phrase(&words, p))
    {
        return true;
    }
    (0..words.len()).any(|i| {
        OPENINGS.iter().any(|opening| {
            crate::starts_with_phrase(&words[i..], opening)
                && words[i..]
                    .iter()
                    .skip(opening.split(' ').count())
                    .take(OPENING_REACH)
                    .any(|w| w.starts_with("liab") || w.starts_with("exceed"))
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_query() {
        assert!(wants_liability_limit(
            "precedents for insurance coverage influencing limitation of liability"
        ));
        assert!(!wants_liability_limit("Insurance"));
        assert!(!wants_liability_limit("cap on liability"));
    }

    #[test]
    fn a_cap_tied_to_insurance_limits_liability() {
        assert!(limits_liability(
            "SUCH AGGREGATE LIABILITY DURING SUCH PERIOD ALSO SHALL NOT EXCEED THE AMOUNT OF \
             SUCH PARTY'S INSURANCE COVERAGE FOR SUCH AGGREGATE LIABILITY."
        ));
        assert!(limits_liability(
            "Carrier's liability will be limited in the aggregate to the greater of (a) three \
             (3) times the fees or (b) the amount of coverages required under the insurance \
             provisions."
        ));
    }

    #[test]
    fn an_insurance_requirement_does_not() {
        assert!(!limits_liability(
            "Business automobile liability insurance, including owned, non-owned and hired car \
             coverage providing third party liability insurance, with limits of liability not \
             less than One Million Dollars ($1,000,000) combined single limit."
        ));
        assert!(limits_liability(
            "IN NO EVENT WILL EITHER PARTY BE LIABLE TO THE OTHER PARTY FOR [**]."
        ));
        assert!(!limits_liability(
            "Commercial General Liability Insurance providing the limits of coverage written on \
             an occurrence basis, in no event less than $1,000,000 combined single limit."
        ));
        assert!(!limits_liability(
            "In no event shall any insurer have a Best's Insurance rating of less than (A-)."
        ));
        assert!(!limits_liability(
            "Supplier shall maintain insurance with an insurance company with an equivalent of \
             an A.M. Best rating of A- or better."
        ));
    }
}
