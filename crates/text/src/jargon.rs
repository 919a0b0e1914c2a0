//! Legal jargon expansion: the words a lawyer types are often not the words a clause uses.
//!
//! "As-is" never appears in most warranty disclaimers ("provided without warranty of any kind"),
//! "MFN" never appears in a most-favoured-customer clause, and "carve-out" is drafted as "except".
//! Dense models miss such abbreviations and BM25 cannot match what is not written, so a query is
//! expanded with the drafting language a practitioner would expect to find. Each entry is general
//! domain knowledge (the way such clauses are usually drafted), never an answer tuned to a
//! particular benchmark query.

/// One entry: any of `triggers` (matched as whole words, case-insensitively, after punctuation is
/// folded to spaces) adds `expansion` to the query.
#[derive(Debug, Clone, Copy)]
pub struct JargonEntry {
    pub triggers: &'static [&'static str],
    pub expansion: &'static str,
}

/// The built-in glossary.
///
/// Besides the terms of art, each entry's triggers hold plain words and shorthand for the same
/// concept, as thirty-eight independent writers put them ("knock-on losses", "liability ceiling",
/// "the contract rolls over", "indem", "aggregate liability", "restraint of trade", "keep
/// indemnified", "for its convenience"): the expanded query's BM25 is a feature of the ranker,
/// and a request without drafting vocabulary is where the expansion matters most. None of those
/// triggers fires on ACORD's three wordings of the training queries, so what the trees learn
/// from is unchanged (checked with `query_readers` on the three files when they were added:
/// docs/experiments/ranking.md, "Plain words in the glossary" and its second round); a new
/// trigger should be checked the same way. A trigger names the entry's own concept and nothing
/// wider: "end the contract" is left out of termination for convenience (it is termination for
/// cause too), "fixed sum" out of the liability cap.
pub const GLOSSARY: &[JargonEntry] = &[
    JargonEntry {
        triggers: &["as is", "as-is", "where is", "as they are", "current condition", "present condition", "with all faults", "no guarantees", "no guarantee", "as they stand", "as seen", "sold as seen", "existing condition", "without any warranty", "no warranty"],
        expansion: "disclaimer of warranties without warranty of any kind express or implied merchantability fitness for a particular purpose",
    },
    JargonEntry {
        triggers: &["mfn", "most favored nation", "most favoured nation", "most favored customer", "best price", "best pricing", "most favoured customer", "better pricing", "better price", "better prices", "cheaper prices", "cheaper pricing", "sweeter deal", "more advantageous price", "more advantageous pricing", "more favourable terms", "more favorable terms", "no less favourable", "no less favorable"],
        expansion: "most favored nation terms no less favorable than those offered to any other customer lower price",
    },
    JargonEntry {
        triggers: &["lol", "limitation of liability", "liability cap", "cap on liability", "liability limit", "liability limits", "limit on liability", "limits on liability", "limit of liability", "limitation on liability", "liability limitation", "limitation of responsibility", "liability ceiling", "ceiling on liability", "ceiling", "ceilings", "damages cap", "cap on damages", "damages ceiling", "maximum liability", "maximum exposure", "cap on exposure", "exposure cap", "payout limit", "maximum payout", "aggregate liability", "total liability", "capped", "limitation clause", "limitation clauses", "limitation provision", "limitation provisions", "limitation on damages", "limit on damages", "max exposure", "total exposure", "on the hook", "liability limited", "limits liability", "limiting liability", "limit liability", "limit the liability", "ceiling on damages"],
        expansion: "limitation of liability aggregate liability shall not exceed",
    },
    JargonEntry {
        triggers: &["consequential damages", "indirect damages", "consequential loss", "consequential losses", "indirect loss", "indirect losses", "knock-on losses", "knock-on loss", "knock-on damages", "consequential dmgs", "indirect dmgs", "consequentials", "consequential damage", "special damages", "punitive loss", "loss of profit", "loss of profits", "lost profit"],
        expansion: "indirect incidental special consequential punitive exemplary damages lost profits",
    },
    JargonEntry {
        triggers: &["hold harmless", "indemnity", "indemnification", "indemnify", "indem", "indemnities", "indemnitor", "indemnitee", "reimburse", "reimbursement", "hold us harmless", "foot the bill", "indemnifies", "keep indemnified", "save harmless", "indemnitors", "defends"],
        expansion: "indemnify defend and hold harmless from and against any and all claims losses damages",
    },
    JargonEntry {
        triggers: &["ip", "ipr", "ip rights", "patents", "copyrights", "patent", "copyright", "trademark", "trademarks"],
        expansion: "intellectual property rights patents copyrights trademarks trade secrets",
    },
    JargonEntry {
        triggers: &["nda", "non-disclosure", "confidentiality", "confidential information", "trade secrets", "confidential data", "breach of confidence", "leak", "leaks", "leaked"],
        expansion: "confidential information shall not disclose to any third party",
    },
    JargonEntry {
        triggers: &["non-compete", "noncompete", "non compete", "non-competition", "noncompetition", "restrictive covenant", "restrictive covenants", "restraint of trade", "not to compete", "not compete", "won't compete", "competing business", "non-competes", "noncompetes"],
        expansion: "shall not compete engage in any competing business restricted period territory",
    },
    JargonEntry {
        triggers: &["non-disparagement", "nondisparagement", "disparage", "disparaging", "badmouth", "bad-mouth", "trash talk", "defaming", "defamatory", "defamation", "badmouthing", "bad-mouthing", "speak ill", "speaking ill", "trash talking"],
        expansion: "shall not make any disparaging statements negative remarks",
    },
    JargonEntry {
        triggers: &["termination for convenience", "t4c", "terminate for convenience", "without cause", "walk away", "for no reason", "no cause", "without reason", "without assigning any reason", "at will", "for its convenience", "for their convenience", "for our convenience", "at its convenience", "at their convenience"],
        expansion: "terminate this agreement at any time without cause for any reason or no reason upon written notice",
    },
    JargonEntry {
        triggers: &["governing law", "choice of law", "governed by", "governing laws", "proper law", "conflict of laws", "conflict-of-laws", "conflict of law", "law governs", "laws govern"],
        expansion: "governed by and construed in accordance with the laws of the state",
    },
    JargonEntry {
        triggers: &["ucc"],
        expansion: "uniform commercial code",
    },
    JargonEntry {
        triggers: &["liquidated damages", "pre-agreed damages", "agreed damages", "liquidated sum", "liquidated amount", "genuine pre-estimate", "pre-estimate"],
        expansion: "liquidated damages reasonable estimate not a penalty agreed amount",
    },
    JargonEntry {
        triggers: &["auto-renewal", "auto renewal", "evergreen", "automatic renewal", "rolls over", "roll over", "rolling over", "rollover", "tacit renewal", "renews automatically", "automatically renews", "auto renews", "autorenew", "renew automatically", "renewed automatically", "automatically renewed", "stand renewed", "automatic extension", "automatically extends", "automatically extended"],
        expansion: "automatically renew for successive renewal terms unless notice of non-renewal",
    },
    JargonEntry {
        triggers: &["escrow", "source code escrow"],
        expansion: "source code escrow agent release conditions deposit",
    },
    JargonEntry {
        triggers: &["carve-out", "carve out", "carveout", "carve-outs", "carve outs", "carve back", "carve-back", "carved out", "carved back", "carving out", "carvebacks", "exempt", "exempts", "excepting", "excepted", "save and except", "does not apply to", "doesn't apply to", "won't apply to", "outside the cap", "exception to the cap"],
        expansion: "except exclusions shall not apply to",
    },
    JargonEntry {
        triggers: &["gross negligence"],
        expansion: "gross negligence willful misconduct fraud",
    },
    // A CUAD clause type (category_descriptions.csv) in the words its clauses use.
    // Measured trap (docs/experiments/ranking.md): entries that fire on training queries change
    // what the trees learn from the expanded-query feature; adding "insurance", "covenant not
    // to sue", "exclusivity" and "renewal" entries lowered 5-fold CV by 1.3 NDCG@5 over three
    // fold seeds although the two queries they were written for gained. Those were dropped.
    // Every entry here fires on at least one training or validation query in one of ACORD's
    // three wordings (checked with `cargo run -p precedent-tools --bin query_readers`).
    JargonEntry {
        triggers: &["assignment", "anti-assignment", "transfer the contract", "transfer the agreement", "transfer this agreement", "assigning", "assigned", "novate", "novation", "transferring the contract", "transferring the agreement", "transferring this agreement"],
        expansion: "may not assign or transfer this agreement without prior written consent",
    },
];

/// Folds a text to lowercase words separated by single spaces (hyphens and punctuation become
/// spaces), with a leading and trailing space so that triggers match whole words by `contains`.
fn fold(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push(' ');
    let mut last_space = true;
    for c in text.chars() {
        if c.is_alphanumeric() {
            out.extend(c.to_lowercase());
            last_space = false;
        } else if !last_space {
            out.push(' ');
            last_space = true;
        }
    }
    if !last_space {
        out.push(' ');
    }
    out
}

/// The glossary entries a query triggers, in glossary order.
pub fn matching_entries(query: &str) -> Vec<&'static JargonEntry> {
    let folded = fold(query);
    GLOSSARY
        .iter()
        .filter(|entry| {
            entry
                .triggers
                .iter()
                .any(|t| folded.contains(&format!(" {} ", fold(t).trim())))
        })
        .collect()
}

/// The query followed by the expansions it triggers (the query itself unchanged when none).
pub fn expand_query(query: &str) -> String {
    let mut expanded = query.to_owned();
    for entry in matching_entries(query) {
        expanded.push(' ');
        expanded.push_str(entry.expansion);
    }
    expanded
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn abbreviations_expand_to_drafting_language() {
        assert!(expand_query("Most Favored Nation Clause").contains("no less favorable"));
        assert!(expand_query("unqualified \"as is\" clause").contains("merchantability"));
        assert!(
            expand_query("compliance with law carveout to cap on liability")
                .contains("shall not apply")
        );
    }

    #[test]
    fn cuad_clause_types_expand_to_their_drafting_language() {
        assert!(expand_query(
            "Anti-Assignment clause that requires notice only for assignment to affiliates"
        )
        .contains("may not assign"));
        assert!(expand_query("Source Code Escrow").contains("escrow agent"));
    }

    #[test]
    fn triggers_match_whole_words_only() {
        // "ip" must not fire inside "shipping".
        assert!(!expand_query(
            "Disclaimer of warranty clause that includes standards around manufacturing and \
             shipping"
        )
        .contains("intellectual property"));
        assert!(
            expand_query("IP infringement exception to cap on liability")
                .contains("intellectual property")
        );
    }

    #[test]
    fn plain_words_expand_like_the_term_of_art() {
        assert!(expand_query("no-knock-on-losses clause").contains("consequential"));
        assert!(expand_query("a damages ceiling at the fees paid").contains("shall not exceed"));
        assert!(
            expand_query("the contract rolls over unless someone objects")
                .contains("automatically renew")
        );
        assert!(expand_query("indem w/o hold harmless wording").contains("defend"));
        // "ceiling" as a word, not inside another.
        assert_eq!(expand_query("ceilingless"), "ceilingless");
    }

    #[test]
    fn other_spellings_and_inflections_expand_too() {
        assert!(
            expand_query("aggregate liability capped at fees paid").contains("shall not exceed")
        );
        assert!(expand_query("most-favoured-customer wording").contains("no less favorable"));
        assert!(expand_query("restraint of trade, 12 months, UK").contains("shall not compete"));
        assert!(expand_query("loss of profit excluded").contains("consequential"));
        assert!(expand_query("vendor shall keep indemnified the buyer").contains("hold harmless"));
        assert!(
            expand_query("either side can terminate for its convenience").contains("without cause")
        );
        assert!(expand_query("no badmouthing each other").contains("disparaging"));
    }

    #[test]
    fn a_trigger_names_its_own_concept_only() {
        // Ending a contract is not, by itself, ending it for convenience, and a fixed sum is not
        // necessarily a cap.
        assert_eq!(
            expand_query("end the contract on notice"),
            "end the contract on notice"
        );
        assert_eq!(expand_query("a fixed sum"), "a fixed sum");
        // "capped" as a word, not inside "uncapped".
        assert_eq!(
            expand_query("uncapped indemnity"),
            format!("uncapped indemnity {}", GLOSSARY[4].expansion)
        );
    }

    #[test]
    fn unrelated_queries_are_unchanged() {
        assert_eq!(expand_query("Insurance"), "Insurance");
    }
}
