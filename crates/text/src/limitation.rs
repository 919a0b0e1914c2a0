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

/// Words that name a ceiling by themselves, in a query ("hard cap", "damages ceiling",
/// "uncapped exposure for IP infringement": an exception to a cap is still a cap query).
const CEILING_WORDS: &[&str] = &["cap", "caps", "capped", "uncapped", "ceiling", "ceilings"];

/// Query phrases that name the ceiling by the exposure it bounds rather than by a cap word.
const EXPOSURE_PHRASES: &[&str] = &[
    "maximum exposure",
    "maximum liability",
    "exposure limit",
    "maximum amount",
    "up to a maximum",
];

/// Query words for what a cap bounds besides "liability": a lawyer writes "damages limited to
/// the fees paid", "the most a party can owe", "limits on recoverable damages", "a limit on
/// what we could be on the hook for", "a maximum-payout limit"; a civil-law lawyer writes
/// "limitation of responsibility".
fn speaks_of_exposure(w: &str) -> bool {
    w.starts_with("liabilit")
        || matches!(
            w,
            "liable"
                | "damages"
                | "exposure"
                | "owe"
                | "owed"
                | "owes"
                | "recoverable"
                | "recovery"
                | "pay"
                | "payout"
                | "payouts"
                | "hook"
                | "responsibility"
        )
}

/// Whether the query asks for a cap on liability: it names one (a word of [`CEILING_WORDS`],
/// "maximum exposure"), or it speaks of liability or damages and describes the ceiling the way
/// clauses state it ([`CAP_PHRASES`]: "a party's liability is limited to the price paid"), or it
/// asks for a limitation of liability or damages ("limitation of liability subject to law",
/// "damages limited to the fees paid") without naming the indirect damages a waiver excludes
/// and without being an indemnity query. Only what the query affirms is read
/// ([`crate::affirmed_words`]).
///
/// Why the last form is weaker: "limitation of liability" names the whole section, whose other
/// half is the waiver of indirect damages, and an indemnity query says its cover is "not
/// limited to" something; a query naming consequential damages or an indemnity is read by its
/// other words.
pub fn wants_cap(query: &str) -> bool {
    let words = crate::affirmed_words(query);
    names_ceiling(&words) || (limits_exposure(&words) && !names_waived_kind(&words))
}

/// A cap named by a ceiling word, an exposure phrase, or a clause's cap phrase about liability.
/// A covenant "capped in time" is bounded in duration, not capped in amount.
fn names_ceiling(words: &[String]) -> bool {
    let in_time = |i: usize| {
        words.get(i + 1).is_some_and(|w| w == "in")
            && words
                .get(i + 2)
                .is_some_and(|w| matches!(w.as_str(), "time" | "duration" | "length"))
    };
    (0..words.len()).any(|i| CEILING_WORDS.contains(&words[i].as_str()) && !in_time(i))
        || crate::contains_any_phrase(words, EXPOSURE_PHRASES)
        || (words.iter().any(|w| w.starts_with("liabilit"))
            && crate::contains_any_phrase(words, CAP_PHRASES))
}

/// A limit word ("limit", "limitation", "limited", "limiting"), a bound ("can't exceed the
/// fees"), or "the most" a party would pay ("the most either of us would ever have to pay"),
/// with a word for what a cap bounds, outside an indemnity query; or in-house shorthand for a
/// limitation of liability ("LoL").
fn limits_exposure(words: &[String]) -> bool {
    if crate::mentions_indemnity(words) {
        return false;
    }
    let limit_at = |i: usize| {
        let w = words[i].as_str();
        let limit = matches!(
            w,
            "limit" | "limits" | "limitation" | "limitations" | "limited" | "limiting"
        );
        // "not limited to" widens; "shall not exceed" is how a cap is written.
        (limit && !(i > 0 && words[i - 1] == "not"))
            || w.starts_with("exceed")
            || (w == "most" && i > 0 && words[i - 1] == "the")
    };
    let limited = (0..words.len()).any(limit_at);
    words.iter().any(|w| w == "lol") || (limited && words.iter().any(|w| speaks_of_exposure(w)))
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

/// Query words naming a waiver or disclaimer ("exoneration clause": a civil lawyer's word).
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
    "exoneration",
    "exonerate",
    "exonerates",
];

/// Query words that, a few words before a kind of damages, say those damages are not paid:
/// "no indirect damages", "nobody pays for knock-on losses", "we don't pay for any indirect
/// losses".
const NO_PAYMENT_WORDS: &[&str] = &["no", "nobody", "not", "never"];

/// How many words before a kind of damages a [`NO_PAYMENT_WORDS`] word may stand.
const NO_PAYMENT_REACH: usize = 4;

/// Whether the query asks for a waiver of indirect damages: it names a kind of damages from
/// [`WAIVED_DAMAGES`] followed closely by "damage(s)" or "loss(es)" ("consequential loss",
/// "indirect, incidental or punitive damages"), a waiver word ([`WAIVER_WORDS`]; also the verbs
/// of exclusion and "bar": "a consequential damages bar", "clause excluding liability for
/// indirect losses"), and no cap (a "cap on liability for indirect damages" is a cap, and its
/// answers rarely name those damages: 6 of 7 relevant clauses in ACORD's training ratings do
/// not).
///
/// Why the waiver needs them: the waiver's neighbours in a limitation-of-liability section are
/// the cap and the sole-remedy clause, which share its words but waive nothing. On ACORD's
/// training ratings of the 10 queries asking for a waiver, every one of the 100 clauses rated
/// three stars or more names one of those kinds of damages, against 167 of the 226 two-star
/// clauses (`crates/learn/tests/query_rules.rs`).
///
/// A query also names the damages the way people say them: "knock-on losses" (the plain word
/// for consequential loss), "a consequential waiver" (the kind right before the waiver word);
/// and it asks for the waiver by saying nobody pays them ([`NO_PAYMENT_WORDS`]) or that the
/// clause rules them out.
pub fn wants_damages_waiver(query: &str) -> bool {
    let words = crate::affirmed_words(query);
    let is_waiver_word = |w: &str| {
        WAIVER_WORDS.contains(&w)
            || w.starts_with("exclu")
            || matches!(w, "bar" | "bars" | "barred" | "waived" | "disclaimed")
    };
    let kind_at = |i: usize| {
        let w = words[i].as_str();
        let kind = WAIVED_DAMAGES.contains(&w)
            || (w == "knock" && words.get(i + 1).is_some_and(|n| n == "on"));
        kind && (qualified_by_damages(&words, i)
            || words.get(i + 1).is_some_and(|n| is_waiver_word(n)))
    };
    let kinds: Vec<usize> = (0..words.len()).filter(|&i| kind_at(i)).collect();
    let unpaid = kinds.iter().any(|&i| {
        words[i.saturating_sub(NO_PAYMENT_REACH)..i]
            .iter()
            .any(|w| NO_PAYMENT_WORDS.contains(&w.as_str()))
    });
    let rules_out = (1..words.len())
        .any(|i| words[i] == "out" && matches!(words[i - 1].as_str(), "rule" | "rules" | "ruling"));
    let waives = words.iter().any(|w| is_waiver_word(w)) || unpaid || rules_out;
    !kinds.is_empty() && waives && !names_ceiling(&words)
}

/// Whether `words` name a kind of damages a waiver excludes followed closely by the damages or
/// losses it qualifies: how [`names_waived_damages`] reads a clause and [`wants_cap`] tells a
/// waiver query from a cap query.
fn names_waived_kind(words: &[String]) -> bool {
    words
        .iter()
        .enumerate()
        .any(|(i, w)| WAIVED_DAMAGES.contains(&w.as_str()) && qualified_by_damages(words, i))
}

/// Whether damages or losses are named within [`DAMAGES_REACH`] words after `words[i]`.
fn qualified_by_damages(words: &[String], i: usize) -> bool {
    words[i + 1..]
        .iter()
        .take(DAMAGES_REACH)
        .any(|next| next.starts_with("damage") || next.starts_with("loss"))
}

/// How many words after a kind of damages the damages or losses it qualifies must be named
/// ("indirect, incidental, special, exemplary, punitive or consequential damages" takes six;
/// "direct and indirect customers" names none).
const DAMAGES_REACH: usize = 8;

/// Whether the clause names a kind of damages a waiver excludes ([`WAIVED_DAMAGES`]) followed
/// closely by the damages or losses it qualifies.
pub fn names_waived_damages(clause: &str) -> bool {
    names_waived_kind(&crate::lowercase_words(clause))
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

    #[test]
    fn a_cap_named_as_a_ceiling_or_a_limit_on_damages_is_a_cap() {
        assert!(wants_cap(
            "aggregate damages ceiling at a fixed dollar figure"
        ));
        assert!(wants_cap("uncapped exposure for infringement claims"));
        assert!(wants_cap("the maximum exposure is the fees paid"));
        assert!(wants_cap(
            "damages limited to the amounts paid under the agreement"
        ));
        assert!(wants_cap(
            "limitation of liability that applies only as far as the law allows"
        ));
        assert!(wants_cap("customer-side LoL with a high ceiling"));
        // The other half of the section: a waiver of consequential loss is not a cap.
        assert!(!wants_cap(
            "limitation of liability excluding consequential and incidental losses"
        ));
        // An indemnity's cover "not limited to" something asks for no cap.
        assert!(!wants_cap(
            "indemnity for damages from any breach, not limited to third-party claims"
        ));
        assert!(!wants_cap("exclusivity limited to a defined territory"));
    }

    #[test]
    fn a_waiver_of_consequential_loss_is_a_damages_waiver() {
        assert!(wants_damages_waiver(
            "exclusion of consequential loss with a carve-out for injury"
        ));
        assert!(wants_damages_waiver(
            "a consequential damages bar that still covers fraud"
        ));
        assert!(wants_damages_waiver(
            "clause excluding liability for incidental, punitive and other indirect losses"
        ));
        assert!(!wants_damages_waiver(
            "consequential losses recoverable only up to a ceiling, not excluded"
        ));
    }

    #[test]
    fn plain_words_for_a_waiver_of_consequential_loss() {
        assert!(wants_damages_waiver(
            "the usual clause saying nobody pays for knock-on losses"
        ));
        assert!(wants_damages_waiver(
            "a no-indirect-damages clause that names incidental damages"
        ));
        assert!(wants_damages_waiver(
            "breach of confidentiality carve-out from consequential dmgs exclusion"
        ));
        assert!(wants_damages_waiver(
            "direct claims between parties carved out of consequential waiver"
        ));
        assert!(wants_damages_waiver(
            "a clause ruling out claims for knock-on losses"
        ));
        assert!(wants_damages_waiver(
            "Exoneration clause for indirect damages"
        ));
        // Knock-on effects that are no losses, and a cap on knock-on losses.
        assert!(!wants_damages_waiver("a waiver with knock-on effects"));
        assert!(!wants_damages_waiver(
            "knock-on losses recoverable only up to a ceiling"
        ));
    }

    #[test]
    fn plain_words_for_a_cap() {
        assert!(wants_cap(
            "the most either of us would ever have to pay under this contract"
        ));
        assert!(wants_cap(
            "a limit on what we could be on the hook for, with no exceptions"
        ));
        assert!(wants_cap("aggregate exposure can't exceed the fees paid"));
        assert!(wants_cap("a clause limiting what each side can owe"));
        assert!(wants_cap(
            "Limitation of responsibility which applies only as far as the law permits"
        ));
        assert!(!wants_cap(
            "exclusivity capped in time and limited to a territory"
        ));
        assert!(!wants_cap("the most favoured nation clause"));
    }
}
