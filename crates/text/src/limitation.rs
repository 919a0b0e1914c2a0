//! Whether a clause caps liability at all, for queries that ask for a cap ("IP infringement
//! exception to cap on liability"), and whether it waives indirect damages, for queries that ask
//! for such a waiver ("confidentiality exceptions to indirect damage waiver").

/// Clause phrases that set a ceiling on liability (words are compared unstemmed, lowercased;
/// any word beginning with "exceed" counts too: "shall not exceed", "exceeding").
///
/// Why a query naming a cap needs them: a cap ("aggregate liability shall not exceed the fees
/// paid") and a waiver of indirect damages ("in no event shall either party be liable for
/// consequential damages") are the two halves of most limitation-of-liability sections, share
/// nearly every word, and carve out the same claims, yet a lawyer asking for "compliance with
/// law carveout to cap on liability" wants the first. On ACORD's training ratings of the 14 queries
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

/// Whether the query asks for a cap on liability: it names one ("cap on liability", "liability
/// caps", "subject to a cap"), or it speaks of liability and describes the ceiling the way
/// clauses state it ([`CAP_PHRASES`]: "a party's liability is limited to the price paid").
/// Only what the query affirms is read ([`crate::affirmed_words`]).
pub fn wants_cap(query: &str) -> bool {
    let words = crate::affirmed_words(query);
    words
        .iter()
        .any(|w| w == "cap" || w == "caps" || w == "capped")
        || (words.iter().any(|w| w.starts_with("liabilit"))
            && crate::contains_any_phrase(&words, CAP_PHRASES))
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
    let words = crate::affirmed_words(query);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cap_described_as_clauses_state_it_is_a_cap() {
        assert!(wants_cap(
            "A clause under which a party's liability is limited to the fees paid"
        ));
        assert!(!wants_cap(
            "A clause under which the licence is limited to the territory"
        ));
    }

    #[test]
    fn a_cap_is_a_ceiling_not_a_waiver() {
        assert!(wants_cap(
            "compliance with law carveout to cap on liability"
        ));
        assert!(wants_cap(
            "A cap on liabilities clause that includes a variety of different exceptions to the \
             parties’ liability caps"
        ));
        assert!(wants_cap(
            "a party's liability for fraud, negligence, personal injury or tort subject to a cap"
        ));
        assert!(!wants_cap(
            "indirect damages waiver applies to a party's liability for fraud, negligence or \
             personal injury"
        ));
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
        assert!(wants_damages_waiver("disclaimer of indirect damages"));
        assert!(wants_damages_waiver(
            "seller-favorable waiver of indirect damages clauses"
        ));
        assert!(!wants_damages_waiver(
            "cap on liability for indirect damages"
        ));
        assert!(!wants_damages_waiver("disclaimer of lost profits"));
        assert!(!wants_damages_waiver(
            "indemnification covers indirect claims"
        ));
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
}
