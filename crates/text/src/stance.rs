//! Which side a query wants a clause to favour ("seller-favorable waiver of indirect damages",
//! "buyer-favorable cap on liability"), and how one-sided a clause is.
//!
//! The drafting knowledge behind it: a limitation of liability, damages waiver or warranty
//! disclaimer protects the party whose liability it limits. The version that favours the seller
//! (supplier, licensor, provider) limits *its* liability alone and admits no exceptions; the
//! version that favours the buyer (customer, licensee) is mutual ("neither party shall be
//! liable") and carves out the claims a buyer cares about ("except for breach of
//! confidentiality, indemnification obligations, gross negligence"). Lexical and dense scores
//! cannot tell these apart: both versions use the same words.
//!
//! ACORD's ratings bear this out. For "seller-favorable waiver of indirect damages clauses", 19
//! of the 20 two-star clauses (right category, not responsive) are mutual or carve exceptions
//! out, against 2 of the 15 clauses rated three stars or more; for "buyer-favorable cap on
//! liability clauses", none of the 6 relevant clauses is one-sided without carve-outs, while 18
//! of the 20 two-star ones are; for "seller-favorable warranty disclaimer clauses", 2 of 12
//! relevant and 8 of 18 two-star clauses are shared or carve exceptions out.
//!
//! Indemnities are left alone: who indemnifies whom, for which claims, decides whether an
//! indemnity favours a side, and counting mutual phrases does not read that.

/// A side of a commercial deal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// Seller, supplier, vendor, licensor, provider, lessor...
    Seller,
    /// Buyer, customer, purchaser, licensee, client, lessee...
    Buyer,
}

const SELLER_ROLES: &[&str] = &[
    "seller",
    "supplier",
    "vendor",
    "licensor",
    "provider",
    "manufacturer",
    "lessor",
    "landlord",
    "contractor",
    "developer",
    "franchisor",
];

const BUYER_ROLES: &[&str] = &[
    "buyer",
    "customer",
    "purchaser",
    "licensee",
    "client",
    "lessee",
    "tenant",
    "distributor",
    "reseller",
    "franchisee",
];

/// Words of a query about a rule that protects a party from liability.
const PROTECTION_WORDS: &[&str] = &[
    "liability",
    "liable",
    "cap",
    "caps",
    "damages",
    "waiver",
    "disclaimer",
    "disclaimers",
    "disclaim",
    "warranty",
    "warranties",
    "limitation",
    "ceiling",
    "exclusion",
    "lol",
];

/// Phrases that make a clause apply to both parties.
const MUTUAL_PHRASES: &[&str] = &[
    "neither party",
    "either party",
    "each party",
    "any party",
    "a party",
    "the parties",
    "both parties",
    "neither of the parties",
    "each of the parties",
];

/// Words that carve exceptions out of a rule. "Unless" conditions it the same way ("UNLESS
/// SPECIFIED OTHERWISE HEREIN (INCLUDING ... THE BACK TO BACK WARRANTY) ... SUPPLIER DISCLAIMS",
/// a two-star clause that topped "seller-favorable warranty disclaimer clauses" in CV).
const CARVEOUT_PHRASES: &[&str] = &[
    "except",
    "exception",
    "exceptions",
    "excluding",
    "shall not apply",
    "will not apply",
    "other than",
    "unless",
];

/// The side a query asks the clause to favour, when it is about a liability protection
/// (cap, damages waiver, warranty disclaimer) and names a side: "seller-favorable",
/// "favorable to the licensee", "pro-customer". `None` otherwise, including for indemnities.
pub fn favoured_side(query: &str) -> Option<Side> {
    let words = crate::affirmed_words(query);
    let favour = |w: &str| {
        matches!(
            w,
            "favorable"
                | "favourable"
                | "friendly"
                | "favoring"
                | "favouring"
                | "protective"
                | "side"
        )
    };
    let role_side = |w: &str| {
        let singular = w.strip_suffix('s').unwrap_or(w);
        if SELLER_ROLES.contains(&w) || SELLER_ROLES.contains(&singular) {
            Some(Side::Seller)
        } else if BUYER_ROLES.contains(&w) || BUYER_ROLES.contains(&singular) {
            Some(Side::Buyer)
        } else {
            None
        }
    };
    // The side of the deal named by its verb: "sell side", "buy-side", "selling side", "we
    // are selling", "we're buying".
    let trade_side = |w: &str| match w {
        "sell" | "selling" | "sells" => Some(Side::Seller),
        "buy" | "buying" | "buys" => Some(Side::Buyer),
        _ => None,
    };
    if crate::mentions_indemnity(&words) {
        return None;
    }
    if !words.iter().any(|w| PROTECTION_WORDS.contains(&w.as_str())) {
        return None;
    }
    for (i, w) in words.iter().enumerate() {
        // "seller-favorable", "seller friendly", "vendor-side", "pro-seller", "pro seller";
        // "acting for the vendor", "client is the seller", "protect the purchaser", "as the
        // customer", "the seller client"
        if let Some(side) = role_side(w) {
            let next_favours = words
                .get(i + 1)
                .is_some_and(|n| favour(n) || n == "client" || n == "clients");
            let after_pro = i > 0 && words[i - 1] == "pro";
            if next_favours || after_pro || acts_for(&words[..i]) {
                return Some(side);
            }
        }
        if let Some(side) = trade_side(w) {
            let next_is_side = words.get(i + 1).is_some_and(|n| n == "side");
            let we_are = i >= 2 && words[i - 2] == "we" && words[i - 1] == "are";
            if next_is_side || we_are {
                return Some(side);
            }
        }
        // "favorable to the buyer", "favoring licensee", "in favor of the seller"
        if favour(w) || (w == "favor" || w == "favour") {
            let mut j = i + 1;
            while words
                .get(j)
                .is_some_and(|n| matches!(n.as_str(), "to" | "the" | "of" | "a"))
            {
                j += 1;
            }
            if let Some(side) = words.get(j).and_then(|n| role_side(n)) {
                return Some(side);
            }
        }
    }
    None
}

/// Whether the words just before a role say whom the lawyer acts for or protects: "acting for
/// the", "we act for the", "representing the", "our client is the", "we're the", "protect the",
/// "on behalf of the", "as the" (at the start, or after "negotiating", "acting", "drafting").
fn acts_for(before: &[String]) -> bool {
    let mut end = before.len();
    while end > 0 && matches!(before[end - 1].as_str(), "the" | "a" | "an") {
        end -= 1;
    }
    let last = |k: usize| end.checked_sub(k).map(|at| before[at].as_str());
    match last(1) {
        Some(
            "representing" | "represent" | "represents" | "protect" | "protects" | "protecting",
        ) => true,
        Some("for") => matches!(last(2), Some("act" | "acting" | "acts" | "advising")),
        Some("is" | "are") => matches!(last(2), Some("client" | "we")),
        Some("of") => last(2) == Some("behalf"),
        Some("as") => matches!(
            last(2),
            None | Some("negotiating" | "acting" | "drafting" | "advising" | "writing")
        ),
        _ => false,
    }
}

/// How a clause shares its protection: mutual phrases and carve-out words it contains.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Balance {
    pub mutual_phrases: usize,
    pub carveouts: usize,
}

impl Balance {
    /// Counts in `text` (raw clause text; case is ignored).
    pub fn of(text: &str) -> Balance {
        let words = crate::lowercase_words(text);
        Balance {
            mutual_phrases: crate::count_phrases(&words, MUTUAL_PHRASES),
            carveouts: crate::count_phrases(&words, CARVEOUT_PHRASES),
        }
    }

    /// Whether a clause with this balance works against `side`: for the seller, a protection
    /// that is shared (two or more mutual phrases) or has exceptions; for the buyer, one that is
    /// essentially one-sided (at most one mutual phrase) and has none.
    pub fn works_against(&self, side: Side) -> bool {
        match side {
            Side::Seller => self.mutual_phrases >= 2 || self.carveouts >= 1,
            Side::Buyer => self.mutual_phrases <= 1 && self.carveouts == 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_favoured_side_of_protection_queries() {
        assert_eq!(
            favoured_side("seller-favorable waiver of indirect damages clauses"),
            Some(Side::Seller)
        );
        assert_eq!(
            favoured_side("buyer-favorable cap on liability clauses"),
            Some(Side::Buyer)
        );
        assert_eq!(
            favoured_side("seller-favorable warranty disclaimer clauses"),
            Some(Side::Seller)
        );
        // The medium wording of the buyer-favorable cap query.
        assert_eq!(
            favoured_side(
                "Limitation of liability clauses that are favorable to the buyer of products or \
                 services"
            ),
            Some(Side::Buyer)
        );
    }

    #[test]
    fn no_side_for_indemnities_or_queries_without_one() {
        assert_eq!(
            favoured_side("buyer-favorable indemnification clauses"),
            None
        );
        assert_eq!(favoured_side("cap on liability"), None);
    }

    #[test]
    fn balance_separates_one_sided_from_mutual_with_carveouts() {
        let one_sided = Balance::of(
            "IN NO EVENT SHALL SUPPLIER BE LIABLE FOR ANY CONSEQUENTIAL, INDIRECT OR SPECIAL DAMAGES.",
        );
        assert!(one_sided.works_against(Side::Buyer));
        assert!(!one_sided.works_against(Side::Seller));
        let mutual = Balance::of(
            "Except for a party's breach of Section 9, neither party shall be liable to the other \
             party for indirect damages.",
        );
        assert_eq!(mutual.carveouts, 1);
        assert_eq!(mutual.mutual_phrases, 2);
        assert!(mutual.works_against(Side::Seller));
        assert!(!mutual.works_against(Side::Buyer));
    }

    #[test]
    fn the_side_said_in_plain_words() {
        assert_eq!(
            favoured_side(
                "Since we're the buyer, I want the wording that leans our way: a high ceiling"
            ),
            Some(Side::Buyer)
        );
        assert_eq!(
            favoured_side("We're selling, so the broadest waiver of indirect losses"),
            Some(Side::Seller)
        );
        assert_eq!(
            favoured_side("Negotiating as the seller: the toughest warranty disclaimers"),
            Some(Side::Seller)
        );
        assert_eq!(
            favoured_side("sell-side waiver of consequential damages, no carve-outs"),
            Some(Side::Seller)
        );
        assert_eq!(
            favoured_side("The seller client wants the toughest waiver of damages"),
            Some(Side::Seller)
        );
        assert_eq!(
            favoured_side("customer-friendly LoL provisions"),
            Some(Side::Buyer)
        );
        // Whom the lawyer does not want protected is no side to favour.
        assert_eq!(
            favoured_side(
                "I don't want the limit on damages to protect a supplier that breaks the law: \
                 looking for a cap that leaves out claims for non-compliance"
            ),
            None
        );
    }

    #[test]
    fn the_side_a_lawyer_acts_for() {
        assert_eq!(
            favoured_side("Acting for the vendor: the broadest warranty disclaimer"),
            Some(Side::Seller)
        );
        assert_eq!(
            favoured_side("Our client is the seller and wants every warranty disclaimed"),
            Some(Side::Seller)
        );
        assert_eq!(
            favoured_side("customer-side limitation of liability with a high cap"),
            Some(Side::Buyer)
        );
        assert_eq!(
            favoured_side("a cap on liability drafted to protect the purchaser"),
            Some(Side::Buyer)
        );
        assert_eq!(favoured_side("the supplier's cap on liability"), None);
    }
}
