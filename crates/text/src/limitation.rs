//! Whether a clause limits liability, for queries that ask for limitations of liability shaped
//! by something else ("precedents for insurance coverage influencing limitation of liability").
//!
//! Also whether a cap is a fixed sum, for queries that ask for one ("Fix fee liability cap"), and
//! whether a clause caps liability at all, for queries that ask for a cap ("IP infringement
//! exception to cap on liability"), and whether it waives indirect damages, for queries that ask
//! for such a waiver ("confidentiality exceptions to indirect damage waiver").
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
    "not be responsible",
    "no liability",
    "limit its liability",
    "limit their liability",
    "limits its liability",
    "be liable only",
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

/// Openings that limit liability only when liability, responsibility or an amount it may not
/// exceed follows closely: "in no event shall either party be liable", "neither party shall be
/// liable", but not the insurance requirement "in no event less than $1,000,000".
const OPENINGS: &[&str] = &[
    "in no event",
    "in no case",
    "in no way",
    "under no circumstances",
    "neither party",
    "no party",
    "neither",
];

/// How many words after an opening the liability it limits must be named ("IN NO EVENT SHALL
/// DOVA (OR ITS AFFILIATES) OR VALEANT (OR ITS AFFILIATES) BE LIABLE" takes twelve).
const OPENING_REACH: usize = 14;

/// Query words that ask for a cap of a fixed sum when followed (within two words) by one of
/// [`SUM_WORDS`] and the query speaks of a cap or of liability.
const FIXED_WORDS: &[&str] = &["fix", "fixed", "flat", "set"];
const SUM_WORDS: &[&str] = &["fee", "fees", "amount", "sum", "dollar", "dollars", "price"];

/// Currency marks a fixed cap states ("$2,000,000", "FIFTEEN MILLION DOLLARS", "EUR 2,000,000",
/// redacted "$[***]"), checked on the raw text because "$" is not a word.
const CURRENCY_SIGNS: &[char] = &['$', '\u{20ac}', '\u{a3}'];
const CURRENCY_WORDS: &[&str] = &[
    "dollar", "dollars", "usd", "eur", "euro", "euros", "pounds", "gbp", "yen", "rmb",
];
/// Phrases of a cap that is itself a fixed fee or sum.
const FIXED_CAP_PHRASES: &[&str] = &["fixed fee", "fixed fees", "fixed amount", "fixed sum"];

/// Clause phrases that set a ceiling on liability (words are compared unstemmed, lowercased;
/// any word beginning with "exceed" counts too: "shall not exceed", "exceeding").
///
/// Why a query naming a cap needs them: a cap ("aggregate liability shall not exceed the fees
/// paid") and a waiver of indirect damages ("in no event shall either party be liable for
/// consequential damages") are the two halves of most limitation-of-liability sections, share
/// nearly every word, and carve out the same claims, yet a lawyer asking for "confidentiality
/// exceptions to liability cap" wants the first. On ACORD's training ratings of the 14 queries
/// naming a cap, 113 of the 121 clauses rated three stars or more state one of these, against
/// 188 of the 271 two-star clauses (the rest mostly bare waivers and sole-remedy clauses;
/// `crates/learn/tests/query_rules.rs`).
const CAP_PHRASES: &[&str] = &[
    "in excess of",
    "maximum liability",
    "aggregate liability",
    "total liability",
    "cumulative liability",
    "entire liability",
    "liability cap",
    "cap on liability",
    "caps on liability",
    "maximum amount",
    "be limited to",
    "is limited to",
    "are limited to",
    "limited in the aggregate",
];

/// Whether the query asks for a cap on liability ("cap on liability", "liability caps",
/// "subject to a cap").
pub fn wants_cap(query: &str) -> bool {
    crate::lowercase_words(query)
        .iter()
        .any(|w| w == "cap" || w == "caps" || w == "capped")
}

/// Whether the clause sets a ceiling on liability (see [`CAP_PHRASES`]); "capped" counts.
pub fn states_cap(clause: &str) -> bool {
    let words = crate::lowercase_words(clause);
    words
        .iter()
        .any(|w| w.starts_with("exceed") || w == "capped")
        || crate::contains_any_phrase(&words, CAP_PHRASES)
}

/// The kinds of damages a waiver excludes ("in no event shall either party be liable for any
/// indirect, incidental, special or consequential damages").
const WAIVED_DAMAGES: &[&str] = &[
    "indirect",
    "consequential",
    "incidental",
    "special",
    "punitive",
    "exemplary",
];

/// Query words naming a waiver or disclaimer.
const WAIVER_WORDS: &[&str] = &[
    "waiver",
    "waivers",
    "waive",
    "waives",
    "disclaimer",
    "disclaimers",
    "disclaim",
    "disclaims",
    "exclusion",
];

/// Whether the query asks for a waiver of indirect damages: a kind of damages from
/// [`WAIVED_DAMAGES`] followed by "damage(s)", a waiver word, and no cap (a "cap on liability
/// for indirect damages" is a cap, and its answers rarely name those damages: 6 of 7 relevant
/// clauses in ACORD's training ratings do not).
///
/// Why the waiver needs them: the waiver's neighbours in a limitation-of-liability section are
/// the cap and the sole-remedy clause, which share its words but waive nothing. On ACORD's
/// training ratings of the 10 queries asking for a waiver, every one of the 100 clauses rated
/// three stars or more names one of those kinds of damages, against 167 of the 226 two-star
/// clauses (`crates/learn/tests/query_rules.rs`).
pub fn wants_damages_waiver(query: &str) -> bool {
    let words = crate::lowercase_words(query);
    let names_damages = words.windows(2).any(|w| {
        WAIVED_DAMAGES.contains(&w[0].as_str()) && (w[1] == "damage" || w[1] == "damages")
    });
    names_damages && words.iter().any(|w| WAIVER_WORDS.contains(&w.as_str())) && !wants_cap(query)
}

/// How many words after a kind of damages the damages or losses it qualifies must be named
/// ("indirect, incidental, special, exemplary, punitive or consequential damages" takes six;
/// "direct and indirect customers" names none).
const DAMAGES_REACH: usize = 8;

/// Whether the clause names a kind of damages a waiver excludes ([`WAIVED_DAMAGES`]) followed
/// closely by the damages or losses it qualifies.
pub fn names_waived_damages(clause: &str) -> bool {
    let words = crate::lowercase_words(clause);
    words.iter().enumerate().any(|(i, w)| {
        WAIVED_DAMAGES.contains(&w.as_str())
            && words[i + 1..]
                .iter()
                .take(DAMAGES_REACH)
                .any(|next| next.starts_with("damage") || next.starts_with("loss"))
    })
}

/// Whether the query asks for a liability cap of a fixed sum ("Fix fee liability cap", "fixed
/// amount cap on liability").
pub fn wants_fixed_cap(query: &str) -> bool {
    let words = crate::lowercase_words(query);
    let about_caps = words
        .iter()
        .any(|w| w == "cap" || w == "caps" || w.starts_with("liab"));
    about_caps
        && words.iter().enumerate().any(|(i, w)| {
            FIXED_WORDS.contains(&w.as_str())
                && words[i + 1..]
                    .iter()
                    .take(2)
                    .any(|next| SUM_WORDS.contains(&next.as_str()))
        })
}

/// Whether the clause states a sum of money or calls its cap a fixed fee or sum: what a
/// fixed-sum cap needs (a cap of "the fees paid in the preceding twelve months" states neither).
pub fn states_fixed_sum(clause: &str) -> bool {
    if clause.contains(CURRENCY_SIGNS) {
        return true;
    }
    let words = crate::lowercase_words(clause);
    words.iter().any(|w| CURRENCY_WORDS.contains(&w.as_str()))
        || crate::contains_any_phrase(&words, FIXED_CAP_PHRASES)
}

/// Whether the query asks for limitations of liability by name.
pub fn wants_liability_limit(query: &str) -> bool {
    let words = crate::lowercase_words(query);
    crate::contains_any_phrase(&words, LIMITATION_QUERY)
}

/// Whether the clause limits or excludes liability.
pub fn limits_liability(clause: &str) -> bool {
    let words = crate::lowercase_words(clause);
    if crate::contains_any_phrase(&words, LIMITING_PHRASES) {
        return true;
    }
    (0..words.len()).any(|i| {
        OPENINGS.iter().any(|opening| {
            crate::starts_with_phrase(&words[i..], opening)
                && words[i..]
                    .iter()
                    .skip(opening.split(' ').count())
                    .take(OPENING_REACH)
                    .any(|w| w.starts_with("liab") || w.starts_with("exceed") || w == "responsible")
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
    fn fixed_sum_caps() {
        assert!(wants_fixed_cap("Fix fee liability cap"));
        assert!(wants_fixed_cap("fixed amount cap on liability"));
        assert!(!wants_fixed_cap("liability cap is based on purchase price"));
        assert!(!wants_fixed_cap(
            "Cap on liability equals 12 months payment"
        ));
        assert!(!wants_fixed_cap("fixed fee arrangements"));
        assert!(states_fixed_sum(
            "THE LIABILITY OF A PARTY TO THE OTHER FOR DIRECT DAMAGES SHALL NOT EXCEED FIFTEEN \
             MILLION DOLLARS."
        ));
        assert!(states_fixed_sum(
            "EACH PARTY'S LIABILITY SHALL NOT EXCEED $1,000,000."
        ));
        assert!(states_fixed_sum("will be limited to $[***]."));
        assert!(!states_fixed_sum(
            "aggregate liability shall not exceed the fees paid by Customer in the twelve (12) \
             months preceding the claim."
        ));
    }

    #[test]
    fn a_cap_is_a_ceiling_not_a_waiver() {
        assert!(wants_cap("confidentiality exceptions to liability cap"));
        assert!(wants_cap(
            "two parties having different liability caps and/or carveouts"
        ));
        assert!(wants_cap("a party's liability for fraud subject to a cap"));
        assert!(!wants_cap("indirect damage waiver is subject to law"));
        assert!(!wants_cap("capital expenditures"));
        assert!(states_cap(
            "EACH PARTY'S AGGREGATE LIABILITY SHALL NOT EXCEED THE FEES PAID IN THE TWELVE \
             MONTHS PRECEDING THE CLAIM."
        ));
        assert!(states_cap(
            "Carrier's liability will be limited in the aggregate to three (3) times the fees."
        ));
        assert!(states_cap(
            "Licensor's liability is limited to the amounts paid hereunder."
        ));
        assert!(!states_cap(
            "Except with respect to any claim arising from an infringement of any third party \
             intellectual property right, in no event shall either party be liable for any \
             special, indirect, consequential or punitive damages."
        ));
    }

    #[test]
    fn a_damages_waiver_names_the_damages_it_waives() {
        assert!(wants_damages_waiver(
            "confidentiality exceptions to indirect damage waiver"
        ));
        assert!(wants_damages_waiver("disclaimer of punitive damages"));
        assert!(wants_damages_waiver("consequential damages waiver"));
        assert!(!wants_damages_waiver(
            "cap on liability for indirect damages"
        ));
        assert!(!wants_damages_waiver("disclaimer of lost profits"));
        assert!(!wants_damages_waiver("indirect claims indemnity"));
        assert!(names_waived_damages(
            "IN NO EVENT SHALL EITHER PARTY BE LIABLE FOR ANY INCIDENTAL OR CONSEQUENTIAL DAMAGES."
        ));
        assert!(!names_waived_damages(
            "EACH PARTY'S AGGREGATE LIABILITY SHALL NOT EXCEED THE FEES PAID HEREUNDER."
        ));
        assert!(!names_waived_damages(
            "Company shall defend Investors and their direct and indirect customers, to the \
             fullest extent permitted by applicable law."
        ));
        assert!(names_waived_damages(
            "Neither party shall be liable for special, indirect or consequential losses."
        ));
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
