//! Whether a query asks for a mutual or a one-sided clause ("mutual indemnification
//! provisions", "unilateral liability cap"), and whether a clause binds both parties.
//!
//! Mutuality is a drafting choice lawyers search for by name, and every lexical and dense
//! signal is blind to it: "each party's liability shall not exceed the fees paid" and
//! "Supplier's liability shall not exceed the fees paid" share every content word. The clause
//! itself says which it is, in two ways:
//!
//! - **mutual phrases**: "neither party", "each party", "either party", "the other party",
//!   "both parties", "mutually": the rule is stated once for both sides (typical of caps and
//!   damages waivers, and of "Each Party shall indemnify the other Party");
//! - **reciprocal obligations**: two named parties each undertake the same duty ("VS shall
//!   indemnify PPD ... PPD shall indemnify VS", or headings "Indemnification by Anixa" and
//!   "Indemnification by OntoChem"), which is how most mutual indemnities are drafted; counting
//!   phrases alone would call them one-sided.
//!
//! Unlike sides ([`crate::stance`]), ACORD's training queries never name mutuality, so these
//! thresholds are drafting knowledge that no training rating checked: a "mutual" query demotes
//! only clauses with no sign of mutuality at all, and a "unilateral" query only clauses that are
//! plainly mutual (two mutual phrases, two parties undertaking the same duty, or liability
//! protections that all protect "either party"), leaving the mixed cases (a one-sided cap next
//! to a mutual damages waiver) alone.

/// What a query asks of a clause's reciprocity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reciprocity {
    /// Binding both parties alike: "mutual", "reciprocal", "bilateral".
    Mutual,
    /// Binding or protecting one party only: "unilateral", "one-sided", "one-way".
    OneSided,
}

/// The reciprocity a query asks for, if it names one.
pub fn wanted_reciprocity(query: &str) -> Option<Reciprocity> {
    let words = crate::lowercase_words(query);
    let has = |w: &str| words.iter().any(|x| x == w);
    let mutual = has("mutual") || has("reciprocal") || has("bilateral");
    let one_sided = has("unilateral")
        || has("nonmutual")
        || crate::contains_any_phrase(
            &words,
            &["one sided", "one way", "non mutual", "not mutual"],
        );
    match (mutual, one_sided) {
        (_, true) => Some(Reciprocity::OneSided),
        (true, false) => Some(Reciprocity::Mutual),
        (false, false) => None,
    }
}

/// Phrases that state a rule for both parties at once (matched on lowercase words).
const MUTUAL_PHRASES: &[&str] = &[
    "neither party",
    "either party",
    "each party",
    "no party",
    "both parties",
    "neither of the parties",
    "either of the parties",
    "each of the parties",
    "mutual",
    "mutually",
];

/// Phrases that by themselves state a duty both ways ("the Parties shall indemnify and defend
/// each other", "the liability of one Party to the other"): each counts as two mutual phrases,
/// enough for a plainly mutual clause.
const RECIPROCAL_PHRASES: &[&str] = &["each other", "one another", "one party to the other"];

/// Words after "the other" that make it something else than the other party ("the other
/// provisions of this Agreement").
const OTHER_NOT_A_PARTY: &[&str] = &[
    "provisions",
    "provision",
    "terms",
    "term",
    "hand",
    "sections",
    "section",
    "articles",
    "article",
    "conditions",
    "products",
    "product",
    "services",
    "than",
    "remedies",
    "rights",
];

/// "The other" as the counterparty ("indemnify and hold harmless the other", "the other
/// Party"), the counterpart of "each party" in a rule stated once for both sides.
fn the_other(words: &[String]) -> usize {
    (0..words.len().saturating_sub(1))
        .filter(|&i| {
            words[i] == "the"
                && words[i + 1] == "other"
                && words
                    .get(i + 2)
                    .is_none_or(|n| !OTHER_NOT_A_PARTY.contains(&n.as_str()))
        })
        .count()
}

/// "Neither Licensor nor Licensee shall be liable": the two parties named in one rule.
fn neither_nor(words: &[String]) -> usize {
    words
        .iter()
        .enumerate()
        .filter(|(i, w)| {
            *w == "neither"
                && words.iter().skip(i + 2).take(4).any(|n| n == "nor")
                && words.get(i + 1).is_some_and(|n| n != "party")
        })
        .count()
}

/// Verbs after which the next words name the duty a party undertakes.
const UNDERTAKING_VERBS: &[&str] = &[
    "shall",
    "will",
    "agrees",
    "agree",
    "undertakes",
    "covenants",
];

/// Words that cannot be a party's name when they precede an undertaking verb.
const NOT_A_PARTY: &[&str] = &[
    "it",
    "they",
    "which",
    "who",
    "that",
    "this",
    "such",
    "and",
    "or",
    "hereby",
    "also",
    "further",
    "party",
    "parties",
    "agreement",
    "there",
    "nor",
    "not",
    "indemnitor",
];

/// Words between the subject of a protection and "liable" ("Neither Party shall in no event be
/// liable", "Supplier will not be liable").
const BEFORE_LIABLE: &[&str] = &[
    "shall",
    "will",
    "would",
    "be",
    "not",
    "never",
    "in",
    "no",
    "event",
    "under",
    "any",
    "circumstances",
    "also",
    "hereby",
    "then",
    "have",
    "has",
];

/// Words between a possessive subject and "liability" ("each Party's total aggregate
/// liability", "Supplier's entire liability").
const BEFORE_LIABILITY: &[&str] = &[
    "aggregate",
    "total",
    "cumulative",
    "entire",
    "maximum",
    "overall",
    "sole",
    "collective",
];

/// Words before "party" or "parties" that make the subject both parties ("neither party shall
/// be liable", "each party's liability", "in no event shall any party be liable").
const BOTH_PARTIES: &[&str] = &["neither", "either", "no", "each", "both", "any"];

/// Words before "party" or "parties" that leave open which party is meant ("a party", "the
/// party", "such party").
const SOME_PARTY: &[&str] = &["a", "the", "such", "other", "one", "that", "which"];

/// Who a clause's liability protections protect: subjects of "... be liable" and possessives
/// before "liability" ("Supplier's aggregate liability").
#[derive(Debug, Default)]
struct LiabilitySubjects {
    /// Protections stated for both parties at once ("neither party shall be liable").
    both: usize,
    /// Distinct parties a protection names ("Licensor", "the released parties").
    named: Vec<String>,
}

impl LiabilitySubjects {
    fn of(words: &[String]) -> LiabilitySubjects {
        let mut subjects = LiabilitySubjects::default();
        for (i, w) in words.iter().enumerate() {
            let subject_at = match w.as_str() {
                "liable" => {
                    let mut j = i;
                    while j > 0 && BEFORE_LIABLE.contains(&words[j - 1].as_str()) {
                        j -= 1;
                    }
                    // "shall be liable" must have skipped at least the verb.
                    (j < i && j > 0).then(|| j - 1)
                }
                "liability" => {
                    let mut j = i;
                    while j > 0 && BEFORE_LIABILITY.contains(&words[j - 1].as_str()) {
                        j -= 1;
                    }
                    (j >= 2 && words[j - 1] == "s").then(|| j - 2)
                }
                _ => None,
            };
            let Some(k) = subject_at else { continue };
            let subject = words[k].as_str();
            if subject == "party" || subject == "parties" {
                match k.checked_sub(1).map(|b| words[b].as_str()) {
                    Some(before) if BOTH_PARTIES.contains(&before) => subjects.both += 1,
                    Some(before) if SOME_PARTY.contains(&before) => {}
                    Some(before) => subjects.note(&format!("{before} {subject}")),
                    None => {}
                }
            } else if !NOT_A_PARTY.contains(&subject) && !SOME_PARTY.contains(&subject) {
                subjects.note(subject);
            }
        }
        subjects
    }

    fn note(&mut self, name: &str) {
        if !self.named.iter().any(|n| n == name) {
            self.named.push(name.to_owned());
        }
    }
}

/// How a clause shares its obligations between the parties.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Sharing {
    /// Mutual phrases ("neither party", "the other party"...) in the clause.
    pub mutual_phrases: usize,
    /// Distinct parties that undertake to indemnify ("X shall indemnify", "indemnification
    /// by X"); two or more means a reciprocal indemnity.
    pub indemnitors: usize,
    /// Liability protections stated for both parties at once ("neither party shall be
    /// liable", "each party's aggregate liability").
    pub protections_for_both: usize,
    /// Distinct names of parties a liability protection protects ("Supplier shall not be
    /// liable", "Licensor's aggregate liability").
    pub protected_parties: usize,
}

impl Sharing {
    /// Reads `text` (raw clause text; case is ignored).
    pub fn of(text: &str) -> Sharing {
        let words = crate::lowercase_words(text);
        let mutual_phrases = crate::count_phrases(&words, MUTUAL_PHRASES)
            + 2 * crate::count_phrases(&words, RECIPROCAL_PHRASES)
            + the_other(&words)
            + neither_nor(&words);
        let mut indemnitors: Vec<String> = Vec::new();
        let mut note = |name: &str| {
            if !NOT_A_PARTY.contains(&name) && !indemnitors.iter().any(|n| n == name) {
                indemnitors.push(name.to_owned());
            }
        };
        for (i, w) in words.iter().enumerate() {
            // "X shall [at its expense] [defend,] indemnify": the subject right before the verb
            // (skipping a possessive "s" and "hereby").
            if UNDERTAKING_VERBS.contains(&w.as_str()) {
                let duty_follows = words
                    .iter()
                    .skip(i + 1)
                    .take(8)
                    .any(|n| n.starts_with("indemnif"));
                if duty_follows {
                    let mut j = i;
                    while j > 0 && matches!(words[j - 1].as_str(), "hereby" | "s" | "also") {
                        j -= 1;
                    }
                    if j > 0 {
                        note(words[j - 1].as_str());
                    }
                }
            }
            // "Indemnification by X", "Indemnity obligations of the X".
            if (w.starts_with("indemnif") || w == "indemnity" || w == "obligations")
                && words.get(i + 1).is_some_and(|n| n == "by" || n == "of")
            {
                let mut j = i + 2;
                while words.get(j).is_some_and(|n| n == "the") {
                    j += 1;
                }
                if let Some(name) = words.get(j) {
                    note(name.as_str());
                }
            }
        }
        let subjects = LiabilitySubjects::of(&words);
        Sharing {
            mutual_phrases,
            indemnitors: indemnitors.len(),
            protections_for_both: subjects.both,
            protected_parties: subjects.named.len(),
        }
    }

    /// Whether a clause with this sharing goes against a query asking for `wanted`: for a
    /// mutual query, a clause with no mutual phrase and no reciprocal indemnity; for a
    /// one-sided query, a clause with two or more mutual phrases or a reciprocal indemnity.
    ///
    /// A clause whose liability protections all protect both parties ("IN NO EVENT SHALL
    /// EITHER PARTY BE LIABLE ...": one mutual phrase) is plainly mutual too; a one-sided cap
    /// next to a mutual waiver ("Neither party shall be liable for indirect damages. Supplier's
    /// aggregate liability shall not exceed ...") stays mixed. Two named parties protected are
    /// not read as each side in turn: one side goes by several names ("the Released Parties"
    /// then "Sponsor's cumulative liability"; "Dana or its ... licensors").
    pub fn works_against(&self, wanted: Reciprocity) -> bool {
        let only_both_protected = self.protections_for_both > 0 && self.protected_parties == 0;
        let plainly_mutual =
            self.mutual_phrases >= 2 || self.indemnitors >= 2 || only_both_protected;
        match wanted {
            Reciprocity::Mutual => self.mutual_phrases == 0 && self.indemnitors < 2,
            Reciprocity::OneSided => plainly_mutual,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_reciprocity_a_query_asks_for() {
        assert_eq!(
            wanted_reciprocity("mutual indemnification provisions"),
            Some(Reciprocity::Mutual)
        );
        assert_eq!(
            wanted_reciprocity("unilateral liability cap"),
            Some(Reciprocity::OneSided)
        );
        assert_eq!(
            wanted_reciprocity("one-sided indirect damages waiver"),
            Some(Reciprocity::OneSided)
        );
        assert_eq!(
            wanted_reciprocity("non-mutual confidentiality"),
            Some(Reciprocity::OneSided)
        );
        assert_eq!(wanted_reciprocity("cap on liability"), None);
        assert_eq!(
            wanted_reciprocity("two parties having different liability caps"),
            None
        );
    }

    #[test]
    fn reciprocal_indemnities_are_mutual_without_mutual_phrases() {
        let reciprocal = Sharing::of(
            "12. Indemnification. VS shall indemnify, defend and hold harmless PPD for any \
             damages arising from VS's negligence. PPD shall indemnify, defend and hold \
             harmless VS for any damages arising from PPD's negligence.",
        );
        assert_eq!(reciprocal.indemnitors, 2);
        assert!(reciprocal.works_against(Reciprocity::OneSided));
        assert!(!reciprocal.works_against(Reciprocity::Mutual));

        let headed = Sharing::of(
            "8.1 Indemnification by Anixa. Anixa will indemnify OntoChem from any claim. \
             8.2 Indemnification by OntoChem. OntoChem will indemnify Anixa from any claim.",
        );
        assert_eq!(headed.indemnitors, 2);
    }

    #[test]
    fn rules_stated_once_for_both_parties_are_mutual() {
        // Real clauses from the ACORD corpus that the phrase list alone read as one-sided.
        let each_other = Sharing::of(
            "25. Indemnification. The Parties shall indemnify, hold harmless, and defend each \
             other, their heirs, successors, and assigns, from and against any and all losses.",
        );
        assert!(each_other.works_against(Reciprocity::OneSided));
        let the_other = Sharing::of(
            "8.1 Each Party shall at all times indemnify and hold harmless the other, its \
             directors, officers, employees and any others for whom it may be responsible.",
        );
        assert!(the_other.works_against(Reciprocity::OneSided));
        let one_to_the_other = Sharing::of(
            "9.1 The maximum liability of one Party to the other Party and its affiliates in \
             relation to this Agreement will be [***] (\"Liability Cap\").",
        );
        assert!(one_to_the_other.works_against(Reciprocity::OneSided));
        // "The other provisions" is not the other party.
        let one_sided = Sharing::of(
            "Notwithstanding the other provisions of this Agreement, Supplier shall indemnify \
             Customer against any claim.",
        );
        assert_eq!(one_sided.mutual_phrases, 0);
        assert!(one_sided.works_against(Reciprocity::Mutual));
    }

    #[test]
    fn a_protection_stated_for_both_parties_is_mutual() {
        let waiver = Sharing::of(
            "EXCEPT WITH RESPECT TO THE INDEMNIFICATION OBLIGATIONS SET FORTH IN SECTION 9, IN \
             NO EVENT SHALL EITHER PARTY BE LIABLE FOR CONSEQUENTIAL, INDIRECT OR SPECIAL \
             DAMAGES.",
        );
        assert_eq!(waiver.mutual_phrases, 1);
        assert_eq!(waiver.protections_for_both, 1);
        assert!(waiver.works_against(Reciprocity::OneSided));
        assert!(!waiver.works_against(Reciprocity::Mutual));

        let one_sided = Sharing::of(
            "IN NO EVENT SHALL THE RELEASED PARTIES BE LIABLE FOR ANY INDIRECT DAMAGES. \
             SPONSOR'S CUMULATIVE LIABILITY TO PARTICIPANT WILL BE LIMITED TO $1,000.",
        );
        assert_eq!(one_sided.protected_parties, 2);
        assert!(!one_sided.works_against(Reciprocity::OneSided));

        let any_party = Sharing::of(
            "IN NO EVENT SHALL ANY PARTY BE LIABLE TO THE OTHER FOR ANY INDIRECT DAMAGES.",
        );
        assert_eq!(any_party.protections_for_both, 1);

        let mixed = Sharing::of(
            "Neither party shall be liable for indirect damages. Supplier's aggregate \
             liability shall not exceed the fees paid.",
        );
        assert_eq!(mixed.protections_for_both, 1);
        assert_eq!(mixed.protected_parties, 1);
        assert!(!mixed.works_against(Reciprocity::OneSided));
        assert!(!mixed.works_against(Reciprocity::Mutual));
    }

    #[test]
    fn one_sided_clauses_go_against_mutual_queries() {
        let one_sided = Sharing::of(
            "IMNTV will defend, indemnify, and hold Distributor harmless from and against any \
             and all liabilities arising out of IMNTV's breach of this Agreement.",
        );
        assert_eq!(one_sided.indemnitors, 1);
        assert_eq!(one_sided.mutual_phrases, 0);
        assert!(one_sided.works_against(Reciprocity::Mutual));
        assert!(!one_sided.works_against(Reciprocity::OneSided));

        let cap = Sharing::of("IN NO EVENT SHALL SUPPLIER'S LIABILITY EXCEED THE FEES PAID.");
        assert!(cap.works_against(Reciprocity::Mutual));
    }

    #[test]
    fn mutual_caps_go_against_one_sided_queries() {
        let mutual = Sharing::of(
            "Each party's aggregate liability shall not exceed the fees paid. Neither party \
             shall be liable to the other party for indirect damages.",
        );
        assert_eq!(mutual.mutual_phrases, 3);
        assert!(mutual.works_against(Reciprocity::OneSided));
        assert!(!mutual.works_against(Reciprocity::Mutual));
        let named = Sharing::of(
            "NEITHER LICENSOR NOR LICENSEE SHALL BE LIABLE FOR INDIRECT DAMAGES. NO PARTY SHALL \
             BE LIABLE FOR PUNITIVE DAMAGES.",
        );
        assert_eq!(named.mutual_phrases, 2);
        // One mutual phrase next to a one-sided cap: mixed, left alone by both.
        let mixed = Sharing::of(
            "Licensor's liability shall not exceed the fees paid. Neither party is liable for \
             lost profits.",
        );
        assert!(!mixed.works_against(Reciprocity::OneSided));
        assert!(!mixed.works_against(Reciprocity::Mutual));
    }
}
