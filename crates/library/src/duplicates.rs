//! Clauses that say the same thing word for word.
//!
//! Libraries hold many verbatim copies: the same boilerplate signed with several counterparties,
//! an amended agreement filed beside the original, or (in ACORD's corpus, 99 of 3,931 clauses) the
//! same clause cut twice with different quoting (`"Claim"` and `""Claim""`). A lawyer reading a
//! result page wants each wording once, and to know where else it occurs; so searches fold a
//! lower-ranked copy into the first hit with its words. Evaluation never folds: benchmark
//! ratings judge each copy separately.

use std::collections::HashMap;

use crate::{Library, LibraryError};

/// What two clauses must share to be copies of each other: their words, lowercased, with
/// punctuation, quoting and spacing ignored (so `""Claim""` and `"Claim"` agree, and a line
/// break inside a sentence does not matter).
pub fn duplicate_key(text: &str) -> String {
    let mut key = String::with_capacity(text.len());
    for word in text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        if !key.is_empty() {
            key.push(' ');
        }
        key.extend(word.chars().flat_map(char::to_lowercase));
    }
    key
}

/// A hit and the rows of the lower-ranked copies folded into it (in rank order).
#[derive(Debug, Clone)]
pub struct Folded<H> {
    pub hit: H,
    pub copies: Vec<u32>,
}

/// Folds each hit whose clause text is a copy of a higher-ranked hit's ([`duplicate_key`]) into
/// that hit, keeping rank order, and stops after `k` distinct hits (later copies of those `k`
/// are still folded in, so callers can ask for more hits than `k` to fill a page).
pub fn fold_duplicates<H>(
    library: &Library,
    hits: Vec<H>,
    k: usize,
    row_of: impl Fn(&H) -> u32,
) -> Result<Vec<Folded<H>>, LibraryError> {
    let mut out: Vec<Folded<H>> = Vec::with_capacity(k.min(hits.len()));
    let mut first_with: HashMap<String, usize> = HashMap::new();
    for hit in hits {
        let row = row_of(&hit);
        let key = duplicate_key(&library.store().clause(row)?.text);
        if let Some(&at) = first_with.get(&key) {
            out[at].copies.push(row);
        } else if out.len() < k {
            first_with.insert(key, out.len());
            out.push(Folded {
                hit,
                copies: Vec::new(),
            });
        }
    }
    Ok(out)
}

/// How many hits to ask a pipeline for so that `k` distinct ones are likely among them when
/// copies are folded: copies rarely fill more than a page's worth.
pub fn fetch_for_folding(k: usize) -> usize {
    k.saturating_mul(2).saturating_add(10)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_ignore_case_quoting_punctuation_and_spacing() {
        assert_eq!(
            duplicate_key("against Reseller (a \"Claim\")  against\nall"),
            duplicate_key("AGAINST Reseller (a \"\"Claim\"\") against all")
        );
        assert_ne!(
            duplicate_key("shall not exceed $1,000,000"),
            duplicate_key("shall not exceed $2,000,000")
        );
        assert_eq!(duplicate_key("  ...  "), "");
    }
}
