//! The 41 CUAD clause categories, named exactly as the headers of `master_clauses.csv`.

/// In the order of `master_clauses.csv` (and of the CUAD paper's tables).
pub const CATEGORIES: [&str; 41] = [
    "Document Name",
    "Parties",
    "Agreement Date",
    "Effective Date",
    "Expiration Date",
    "Renewal Term",
    "Notice Period to Terminate Renewal",
    "Governing Law",
    "Most Favored Nation",
    "Competitive Restriction Exception",
    "Non-Compete",
    "Exclusivity",
    "No-Solicit of Customers",
    "No-Solicit of Employees",
    "Non-Disparagement",
    "Termination for Convenience",
    "Rofr/Rofo/Rofn",
    "Change of Control",
    "Anti-Assignment",
    "Revenue/Profit Sharing",
    "Price Restrictions",
    "Minimum Commitment",
    "Volume Restriction",
    "IP Ownership Assignment",
    "Joint IP Ownership",
    "License Grant",
    "Non-Transferable License",
    "Affiliate License-Licensor",
    "Affiliate License-Licensee",
    "Unlimited/All-You-Can-Eat-License",
    "Irrevocable or Perpetual License",
    "Source Code Escrow",
    "Post-Termination Services",
    "Audit Rights",
    "Uncapped Liability",
    "Cap on Liability",
    "Liquidated Damages",
    "Warranty Duration",
    "Insurance",
    "Covenant Not to Sue",
    "Third Party Beneficiary",
];

/// Index of a category given loosely: case, spaces and punctuation are ignored, so
/// "Cap On Liability", "cap-on-liability" and LegalBench's "Rofr-Rofo-Rofn" all resolve.
pub fn category_index(name: &str) -> Option<usize> {
    let key = loose_key(name);
    CATEGORIES.iter().position(|c| loose_key(c) == key)
}

fn loose_key(name: &str) -> String {
    name.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

/// How a lawyer names each clause type in a search, besides its CUAD name: the usual
/// abbreviations and spellings (written as drafting vocabulary, never from benchmark answers).
/// Matched on word boundaries of the lowercased text with punctuation turned to spaces.
const ALIASES: &[(&str, &[&str])] = &[
    ("Most Favored Nation", &["most favoured nation", "mfn"]),
    ("Non-Compete", &["noncompete", "covenant not to compete"]),
    (
        "No-Solicit of Customers",
        &["non solicit of customers", "non solicitation of customers"],
    ),
    (
        "No-Solicit of Employees",
        &["non solicit of employees", "non solicitation of employees"],
    ),
    ("Non-Disparagement", &["nondisparagement"]),
    (
        "Termination for Convenience",
        &["terminate for convenience"],
    ),
    (
        "Rofr/Rofo/Rofn",
        &[
            "rofr",
            "rofo",
            "rofn",
            "right of first refusal",
            "right of first offer",
            "right of first negotiation",
        ],
    ),
    ("Change of Control", &["change in control"]),
    (
        "Revenue/Profit Sharing",
        &["revenue sharing", "profit sharing"],
    ),
    (
        "Cap on Liability",
        &[
            "liability cap",
            "caps on liability",
            "limitation of liability",
            "limitations of liability",
            "limitation on liability",
        ],
    ),
    ("Uncapped Liability", &["unlimited liability"]),
    ("Audit Rights", &["audit right", "right to audit"]),
    ("Third Party Beneficiary", &["third party beneficiaries"]),
];

/// The CUAD categories that are not kinds of clause: "Parties" spans are party names (in the
/// preamble, signature blocks, any sentence naming a party) and "Document Name" spans are
/// titles. They are what a contract is called and who signs it, so they are kept as contract
/// metadata (`parties`, `title`; filtered with `party`), not stored on clauses (typed onto
/// clauses they fired on most paragraphs: Parties at 4.7% precision at 0.5, which buried the
/// real types in the facets), not accepted as a clause-type filter, and a query naming them
/// ("the parties' liability") is not read as asking for one. The date categories stay clause
/// types: their spans are the clauses that fix the agreement's date, start and term (an
/// Expiration Date span is the term clause), which a lawyer does look for.
///
/// The one such list: ingest, the search filters of the CLI and the API, `eval-cuad`'s
/// stored-type figures and the query reader all read it.
pub const NOT_CLAUSE_TYPES: [&str; 2] = ["Document Name", "Parties"];

/// Whether a CUAD category is a kind of clause (see [`NOT_CLAUSE_TYPES`]).
pub fn is_clause_type(category: &str) -> bool {
    !NOT_CLAUSE_TYPES.contains(&category)
}

/// Why a name given as a clause type is refused ([`clause_type`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClauseTypeError {
    /// Not a CUAD category, nor an alias of one; `suggestions` are the CUAD names it is a
    /// common alias of ("Limitation of Liability" -> "Cap on Liability").
    Unknown {
        name: String,
        suggestions: Vec<&'static str>,
    },
    /// A CUAD category that names the contract, not a kind of clause ([`NOT_CLAUSE_TYPES`]).
    NotAClauseType { category: &'static str },
}

impl ClauseTypeError {
    /// The CUAD names to suggest instead (empty when there is no close one).
    pub fn suggestions(&self) -> Vec<&'static str> {
        match self {
            ClauseTypeError::Unknown { suggestions, .. } => suggestions.clone(),
            ClauseTypeError::NotAClauseType { .. } => Vec::new(),
        }
    }
}

impl std::fmt::Display for ClauseTypeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ClauseTypeError::Unknown { name, suggestions } => {
                write!(f, "{name:?} is not a CUAD clause type")?;
                if !suggestions.is_empty() {
                    let quoted: Vec<String> =
                        suggestions.iter().map(|s| format!("{s:?}")).collect();
                    write!(f, "; did you mean {}?", quoted.join(" or "))?;
                }
                let names: Vec<&str> = CATEGORIES
                    .iter()
                    .copied()
                    .filter(|c| is_clause_type(c))
                    .collect();
                write!(f, " The clause types are: {}", names.join(", "))
            }
            ClauseTypeError::NotAClauseType { category } => {
                let instead = if *category == "Parties" {
                    "filter by party instead"
                } else {
                    "filter by document type instead"
                };
                write!(
                    f,
                    "{category:?} names a contract's parties or title, not a kind of clause, so it is not stored on clauses; {instead}"
                )
            }
        }
    }
}

impl std::error::Error for ClauseTypeError {}

/// A clause type as the search filters of the CLI (`--type`) and the API
/// (`filters.clause_type`) take it: a CUAD category given loosely ([`category_index`]) that is
/// a kind of clause ([`is_clause_type`]), returned with its canonical name. An unknown name is
/// refused with the CUAD names it is a common alias of (the aliases a query is read with: "Limitation of Liability"
/// suggests "Cap on Liability").
pub fn clause_type(name: &str) -> Result<&'static str, ClauseTypeError> {
    match category_index(name) {
        Some(k) if is_clause_type(CATEGORIES[k]) => Ok(CATEGORIES[k]),
        Some(k) => Err(ClauseTypeError::NotAClauseType {
            category: CATEGORIES[k],
        }),
        None => {
            let given = words_of(name);
            let suggestions = ALIASES
                .iter()
                .filter(|(_, aliases)| aliases.iter().any(|a| words_of(a) == given))
                .map(|(category, _)| *category)
                .collect();
            Err(ClauseTypeError::Unknown {
                name: name.to_owned(),
                suggestions,
            })
        }
    }
}

/// The CUAD clause types a search names, as a bit set over [`CATEGORIES`] (bit `k` for
/// category `k`): "Change Of Control", "Rofr/Rofo/Rofn", "liability cap carveouts". Read on
/// word boundaries, so "third party IP infringement" does not name
/// Third Party Beneficiary; "exclusivity remedy" (an exclusive remedy, not an exclusivity
/// covenant) does not name Exclusivity.
pub fn named_in_query(query: &str) -> u64 {
    let text = format!(" {} ", words_of(query));
    let mut named = 0u64;
    for (k, name) in CATEGORIES.iter().enumerate() {
        if !is_clause_type(name) {
            continue;
        }
        let aliases = ALIASES
            .iter()
            .filter(|(c, _)| c == name)
            .flat_map(|(_, a)| a.iter().map(|s| words_of(s)));
        let found = std::iter::once(words_of(name))
            .chain(aliases)
            .any(|phrase| {
                let needle = format!(" {phrase} ");
                text.match_indices(&needle).any(|(at, _)| {
                    let after = &text[at + needle.len()..];
                    !(*name == "Exclusivity" && after.starts_with("remed"))
                })
            });
        if found {
            named |= 1 << k;
        }
    }
    named
}

/// Lowercased words separated by single spaces; hyphens, slashes and other punctuation split
/// words ("Non-Compete" -> "non compete"), apostrophes are dropped ("customer's" -> "customers").
fn words_of(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c == '\'' || c == '\u{2019}' {
            continue;
        }
        if c.is_alphanumeric() {
            out.extend(c.to_lowercase());
        } else if !out.ends_with(' ') && !out.is_empty() {
            out.push(' ');
        }
    }
    out.trim_end().to_owned()
}

/// CUAD credits a Parties prediction that contains the annotated name (see
/// `precedent_metrics::spans`).
pub fn substring_ok(category: usize) -> bool {
    CATEGORIES[category] == "Parties"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loose_names_resolve() {
        assert_eq!(category_index("Cap On Liability"), Some(35));
        assert_eq!(category_index("Rofr-Rofo-Rofn"), Some(16));
        assert_eq!(
            category_index("Unlimited-All-You-Can-Eat-License"),
            Some(29)
        );
        assert_eq!(category_index("Nothing like it"), None);
        assert!(substring_ok(1) && !substring_ok(0));
    }

    fn named(query: &str) -> Vec<&'static str> {
        let bits = named_in_query(query);
        (0..CATEGORIES.len())
            .filter(|k| bits & (1 << k) != 0)
            .map(|k| CATEGORIES[k])
            .collect()
    }

    #[test]
    fn clause_type_names_are_checked_and_aliases_suggested() {
        assert_eq!(clause_type("cap on liability"), Ok("Cap on Liability"));
        assert_eq!(clause_type("Expiration Date"), Ok("Expiration Date"));
        let e = clause_type("Limitation of Liability").expect_err("an alias");
        assert_eq!(e.suggestions(), ["Cap on Liability"]);
        let message = e.to_string();
        assert!(
            message.contains("did you mean \"Cap on Liability\"?"),
            "{message}"
        );
        assert!(message.contains("Termination for Convenience"), "{message}");
        assert!(!message.contains("Document Name"), "{message}");
        let e = clause_type("Parties").expect_err("not a kind of clause");
        assert!(e.to_string().contains("filter by party"), "{e}");
        let e = clause_type("Cap").expect_err("unknown");
        assert!(e.suggestions().is_empty());
    }

    #[test]
    fn reads_the_clause_types_a_query_names() {
        assert_eq!(named("Change Of Control"), ["Change of Control"]);
        assert_eq!(named("Rofr/Rofo/Rofn"), ["Rofr/Rofo/Rofn"]);
        assert_eq!(
            named("No-Solicit of Customers"),
            ["No-Solicit of Customers"]
        );
        assert_eq!(
            named("Non-compete bound by time and territory"),
            ["Non-Compete"]
        );
        assert_eq!(named("Most Favored Nation Clause"), ["Most Favored Nation"]);
        assert_eq!(named("liability cap carveouts"), ["Cap on Liability"]);
        assert_eq!(
            named("Third Party Beneficiary"),
            ["Third Party Beneficiary"]
        );
        // The medium wording of "buyer-favorable cap on liability clauses".
        assert_eq!(
            named(
                "Limitation of liability clauses that are favorable to the buyer of products or \
                 services"
            ),
            ["Cap on Liability"]
        );
    }

    #[test]
    fn does_not_read_types_into_look_alikes() {
        assert!(named("third party IP infringement indemnity").is_empty());
        assert!(named("product replacement, repair or refund as exclusivity remedy").is_empty());
        assert!(named("Exclusivity bound by time and territory") == ["Exclusivity"]);
        assert!(named("indemnification clauses that include hold harmless").is_empty());
        // A contract's parties are not a kind of clause; its dates are (the clause fixing them).
        assert!(named("the parties' liability").is_empty());
        assert_eq!(named("effective date of the agreement"), ["Effective Date"]);
        assert!(
            named("Anti-Assignment clause that requires notice only for assignment to affiliates")
                == ["Anti-Assignment"]
        );
        assert!(named("").is_empty());
        // "mfn" only as a word, not inside one.
        assert!(named("amfnx").is_empty());
    }
}
