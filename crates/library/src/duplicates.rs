//! Clauses that say the same thing word for word.
//!
//! Libraries hold many verbatim copies: the same boilerplate signed with several counterparties,
//! an amended agreement filed beside the original, or (in ACORD's corpus, 99 of 3,931 clauses) the
//! same clause cut twice with different quoting (`"Claim"` and `""Claim""`). A lawyer reading a
//! result page wants each wording once, and to know where else it occurs; so searches fold a
//! lower-ranked copy into the first hit with its words. Evaluation never folds: benchmark
//! ratings judge each copy separately.

use std::collections::HashMap;

/// The mark that joins the pieces of a clause cut from separate places (ACORD's corpus, CUAD's
/// spans, and our own segmenter when it attaches a cross-referenced section).
const OMISSION_MARK: &str = "<omitted>";

/// What two clauses must share to be copies of each other: their words, lowercased, with
/// punctuation, quoting and spacing ignored (so `""Claim""` and `"Claim"` agree, and a line
/// break inside a sentence does not matter). The omission mark is not a word of the clause: ACORD
/// holds ~230 clauses twice, once whole and once as the same sentences joined with `<omitted>`,
/// and a reader sees the same wording in both.
pub fn duplicate_key(text: &str) -> String {
    let mut key = String::with_capacity(text.len());
    for word in text
        .split(OMISSION_MARK)
        .flat_map(|piece| piece.split(|c: char| !c.is_alphanumeric()))
        .filter(|w| !w.is_empty())
    {
        if !key.is_empty() {
            key.push(' ');
        }
        key.extend(word.chars().flat_map(char::to_lowercase));
    }
    key
}

/// Where a hit goes on a result page that folds copies ([`CopyFolder::place`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// A wording not on the page yet: a hit of its own.
    New,
    /// A copy of the page's hit at this index: fold it in there.
    CopyOf(usize),
    /// A copy of the wording the page must not show (a `similar` search's source clause).
    Skip,
}

/// The wordings already on a result page, for folding copies as hits arrive in rank order.
/// The engine's search folds with it while it filters, for every face.
#[derive(Debug, Default)]
pub struct CopyFolder {
    first_with: HashMap<String, usize>,
    skip: Option<String>,
}

impl CopyFolder {
    /// A folder that also drops copies of `text` (the clause a page is "similar to").
    pub fn skipping(text: &str) -> Self {
        CopyFolder {
            first_with: HashMap::new(),
            skip: Some(duplicate_key(text)),
        }
    }

    /// Where the next hit, with clause `text`, goes. `page_len` is the number of hits on the
    /// page so far and `k` the page size: a new wording is recorded as the hit at `page_len`
    /// only while the page has room; a copy of a hit already on the page is folded in even
    /// when the page is full.
    pub fn place(&mut self, text: &str, page_len: usize, k: usize) -> Placement {
        let key = duplicate_key(text);
        if self.skip.as_ref() == Some(&key) {
            return Placement::Skip;
        }
        if let Some(&at) = self.first_with.get(&key) {
            return Placement::CopyOf(at);
        }
        if page_len < k {
            self.first_with.insert(key, page_len);
        }
        Placement::New
    }
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

    #[test]
    fn keys_ignore_the_omission_mark_but_not_the_word() {
        // ACORD's 156b6b3c16 and 4a71d57466: one clause, once joined with the mark.
        assert_eq!(
            duplicate_key("or services.<omitted>If FMI enters"),
            duplicate_key("or services. If FMI enters")
        );
        assert_ne!(
            duplicate_key("the rest is omitted here"),
            duplicate_key("the rest is here")
        );
    }
}
