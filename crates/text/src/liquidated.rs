//! Whether a clause provides liquidated damages, for queries that ask for such clauses
//! ("Liquidated Damages").
//!
//! Why: a liquidated-damages clause fixes in advance what a party pays on a breach ("shall pay
//! ... as liquidated damages, and not as a penalty"), but the word "liquidated" is far more
//! often met in damages waivers that list it among the kinds a party is *not* liable for
//! ("NEITHER PARTY SHALL BE LIABLE ... FOR INDIRECT, INCIDENTAL, CONSEQUENTIAL, LIQUIDATED,
//! SPECIAL OR EXEMPLARY DAMAGES"), and in "assets ... sold or liquidated". Those match the query
//! word for word, and the shipped model put two such waivers at ranks 5 and 7.

/// Clause phrases of a liquidated-damages provision.
const PROVISION_PHRASES: &[&str] = &[
    "liquidated damages",
    "liquidated damage",
    "not a penalty",
    "not as a penalty",
    "not be deemed a penalty",
    "not constitute a penalty",
    "pre estimate",
    "reasonable estimate",
    "reasonable approximation",
    // Fees a party owes for ending the agreement early: CUAD's lawyers annotate them as
    // liquidated damages.
    "termination fee",
    "cancellation fee",
];

/// Whether the query asks for liquidated-damages clauses.
pub fn wants_liquidated_damages(query: &str) -> bool {
    let words = crate::lowercase_words(query);
    crate::contains_any_phrase(&words, &["liquidated damages", "liquidated damage"])
}

/// Whether the clause provides liquidated damages: it names them as such (not "liquidated,
/// special or exemplary damages" in a waiver's list) or says the agreed sum is not a penalty.
pub fn provides_liquidated_damages(clause: &str) -> bool {
    let words = crate::lowercase_words(clause);
    crate::contains_any_phrase(&words, PROVISION_PHRASES)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_query() {
        assert!(wants_liquidated_damages("Liquidated Damages"));
        assert!(!wants_liquidated_damages("disclaimer of indirect damages"));
    }

    #[test]
    fn provisions_and_waivers() {
        assert!(provides_liquidated_damages(
            "Distributor shall pay WGT fifty percent (50%) of the unpaid balance of cumulative \
             Guaranteed Minimum Purchase amounts as liquidated damages."
        ));
        assert!(provides_liquidated_damages(
            "Such sums of money will be paid by HealthGate to the Publishers not as a penalty \
             but as and for the ascertained and liquidated damages owing."
        ));
        assert!(!provides_liquidated_damages(
            "NEITHER PARTY SHALL BE LIABLE UNDER OR IN CONNECTION WITH THIS AGREEMENT FOR \
             INDIRECT, INCIDENTAL, CONSEQUENTIAL, LIQUIDATED, SPECIAL OR EXEMPLARY DAMAGES OR \
             PENALTIES."
        ));
        assert!(!provides_liquidated_damages(
            "if all or substantially all of the assets of the non-terminating party are \
             transferred, sold or liquidated"
        ));
    }
}
