//! Word-level comparison of two texts (a precedent clause and the lawyer's draft, or two
//! clauses), for every face: the API's `/v1/compare`, the page's compare tab and `precedent
//! compare` show the same differences, and [`crate::redline`] writes them as tracked changes.

use serde::Serialize;

/// What a run of words is: on both sides, only on the left (deleted) or only on the right
/// (inserted).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Change {
    Equal,
    Delete,
    Insert,
}

impl Change {
    pub fn as_str(self) -> &'static str {
        match self {
            Change::Equal => "equal",
            Change::Delete => "delete",
            Change::Insert => "insert",
        }
    }
}

/// A run of words that is equal on both sides, only on the left or only on the right. The
/// `text` of equal and delete runs spells the left text; the `right_text` (else `text`) of equal
/// runs and the `text` of insert runs spell the right.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DiffRun {
    pub change: Change,
    /// The words as the left side writes them (the right side's, for an insert).
    pub text: String,
    /// For an equal run whose right side is written differently (other capitals or spacing,
    /// when the comparison ignores them): the right side's words.
    pub right_text: Option<String>,
}

/// Longest a word diff may search for the smallest edit: past it the diff is finished with
/// coarser runs (longer deletes and inserts, still spelling both texts), so one comparison holds
/// a core for about this long at most.
pub const DIFF_TIME_LIMIT: std::time::Duration = std::time::Duration::from_millis(500);

/// How [`word_diff`] matches words.
#[derive(Debug, Clone, Copy)]
pub struct DiffOptions {
    /// Words that differ only in capitals match.
    pub ignore_case: bool,
    /// Spacing is no token of its own, so runs of it never differ.
    pub ignore_whitespace: bool,
}

/// A token of a compared text: what it is compared by, and the bytes of the text it shows.
struct DiffToken {
    key: String,
    span: std::ops::Range<usize>,
}

/// Splits `text` into words (runs without whitespace) and, when spacing counts, runs of
/// whitespace. With spacing ignored, a word's span reaches to the next word (and the first
/// word's back to the start), so the spans still cover the whole text.
fn diff_tokens(text: &str, options: DiffOptions) -> Vec<DiffToken> {
    let mut runs: Vec<(bool, std::ops::Range<usize>)> = Vec::new();
    for (i, c) in text.char_indices() {
        let space = c.is_whitespace();
        let end = i + c.len_utf8();
        match runs.last_mut() {
            Some((was_space, span)) if *was_space == space => span.end = end,
            _ => runs.push((space, i..end)),
        }
    }
    let key = |span: &std::ops::Range<usize>| {
        let word = &text[span.clone()];
        if options.ignore_case {
            word.to_lowercase()
        } else {
            word.to_owned()
        }
    };
    if !options.ignore_whitespace {
        return runs
            .into_iter()
            .map(|(_, span)| DiffToken {
                key: key(&span),
                span,
            })
            .collect();
    }
    let mut tokens: Vec<DiffToken> = Vec::new();
    for (space, span) in runs {
        if space {
            if let Some(last) = tokens.last_mut() {
                last.span.end = span.end;
            }
        } else {
            tokens.push(DiffToken {
                key: key(&span),
                span,
            });
        }
    }
    // Leading spacing belongs to the first word; a text of spacing alone shows as it is.
    match tokens.first_mut() {
        Some(first) => first.span.start = 0,
        None if !text.is_empty() => tokens.push(DiffToken {
            key: String::new(),
            span: 0..text.len(),
        }),
        None => {}
    }
    tokens
}

/// Word-level differences between two texts, and the share of tokens in common. The ops spell
/// both texts exactly as written (see [`DiffRun`]), whatever `options` ignores.
pub fn word_diff(left: &str, right: &str, options: DiffOptions) -> (Vec<DiffRun>, f32) {
    let old = diff_tokens(left, options);
    let new = diff_tokens(right, options);
    let old_keys: Vec<&str> = old.iter().map(|t| t.key.as_str()).collect();
    let new_keys: Vec<&str> = new.iter().map(|t| t.key.as_str()).collect();
    let deadline = std::time::Instant::now().checked_add(DIFF_TIME_LIMIT);
    let changes = similar::capture_diff_slices_deadline(
        similar::Algorithm::Patience,
        &old_keys,
        &new_keys,
        deadline,
    );
    let text_of = |tokens: &[DiffToken], source: &str, range: std::ops::Range<usize>| -> String {
        match (
            tokens.get(range.start),
            range.end.checked_sub(1).and_then(|e| tokens.get(e)),
        ) {
            (Some(first), Some(last)) if range.start < range.end => {
                source[first.span.start..last.span.end].to_owned()
            }
            _ => String::new(),
        }
    };
    let mut ops: Vec<DiffRun> = Vec::new();
    let mut push = |change: Change, text: String, right_text: Option<String>| {
        if text.is_empty() {
            return;
        }
        match ops.last_mut() {
            Some(last) if last.change == change && change != Change::Equal => {
                last.text.push_str(&text)
            }
            _ => ops.push(DiffRun {
                change,
                text,
                right_text,
            }),
        }
    };
    let mut matched = 0;
    for change in &changes {
        let (tag, old_range, new_range) = change.as_tag_tuple();
        match tag {
            similar::DiffTag::Equal => {
                matched += old_range.len();
                let l = text_of(&old, left, old_range);
                let r = text_of(&new, right, new_range);
                let right_text = (r != l).then_some(r);
                push(Change::Equal, l, right_text);
            }
            similar::DiffTag::Delete => push(Change::Delete, text_of(&old, left, old_range), None),
            similar::DiffTag::Insert => push(Change::Insert, text_of(&new, right, new_range), None),
            similar::DiffTag::Replace => {
                push(Change::Delete, text_of(&old, left, old_range), None);
                push(Change::Insert, text_of(&new, right, new_range), None);
            }
        }
    }
    let total = old.len() + new.len();
    let similarity = if total == 0 {
        1.0
    } else {
        (2 * matched) as f32 / total as f32
    };
    (ops, similarity)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn word_diff_spells_both_sides() {
        let left = "The Company shall not be liable for indirect damages.";
        let right = "The Supplier shall not be liable for any indirect or consequential damages.";
        let exact = DiffOptions {
            ignore_case: false,
            ignore_whitespace: false,
        };
        let (ops, ratio) = word_diff(left, right, exact);
        let spell = |keep: Change| -> String {
            ops.iter()
                .filter(|o| o.change == Change::Equal || o.change == keep)
                .map(|o| o.text.as_str())
                .collect()
        };
        assert_eq!(spell(Change::Delete), left);
        assert_eq!(spell(Change::Insert), right);
        assert!(ops
            .iter()
            .any(|o| o.change == Change::Delete && o.text.contains("Company")));
        assert!(ops
            .iter()
            .any(|o| o.change == Change::Insert && o.text.contains("consequential")));
        assert!(ratio > 0.5 && ratio < 1.0, "{ratio}");
    }

    #[test]
    fn word_diff_can_ignore_capitals_and_spacing_and_still_spell_both_sides() {
        let left = "  LICENSOR DISCLAIMS ALL WARRANTIES,\n\tEXPRESS OR IMPLIED. Ünïcode";
        let right = "Licensor disclaims all warranties, express  or implied. ünïcode\n";
        let loose = DiffOptions {
            ignore_case: true,
            ignore_whitespace: true,
        };
        let (ops, ratio) = word_diff(left, right, loose);
        assert_eq!(ratio, 1.0, "{ops:?}");
        assert!(ops.iter().all(|o| o.change == Change::Equal), "{ops:?}");
        let left_spelt: String = ops.iter().map(|o| o.text.as_str()).collect();
        let right_spelt: String = ops
            .iter()
            .map(|o| o.right_text.as_deref().unwrap_or(&o.text))
            .collect();
        assert_eq!(left_spelt, left);
        assert_eq!(right_spelt, right);
        // Another word is still a difference, and spelt on its side only.
        let (ops, ratio) = word_diff(left, "Licensor disclaims some warranties", loose);
        assert!(ratio < 1.0);
        assert!(ops
            .iter()
            .any(|o| o.change == Change::Insert && o.text.starts_with("some")));
        // Spacing alone, or nothing at all, compares without panicking.
        assert_eq!(word_diff(" \n", "", loose).0.len(), 1);
        assert_eq!(word_diff("", "", loose), (Vec::new(), 1.0));
    }
}
