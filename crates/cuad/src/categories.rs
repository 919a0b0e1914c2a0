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
}
