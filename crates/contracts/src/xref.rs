//! Cross-references: a clause that says "except as set forth in Section 9" or "as defined in
//! Section 4.2(b)" reads incompletely without the referenced text, so that text is attached to
//! the clause, joined with `<omitted>` as ACORD's annotators joined non-adjacent text, within a
//! size bound so that a reference to a whole article does not swamp the clause.

use std::sync::LazyLock;

use regex::Regex;

use crate::segment::{is_page_number, Clause};

/// Text attached for one reference, at most.
pub const MAX_ATTACHED_CHARS_PER_REF: usize = 700;
/// Text attached to one clause, at most, over all its references.
pub const MAX_ATTACHED_CHARS: usize = 1400;
/// The separator ACORD uses between non-adjacent pieces of a clause.
pub const OMITTED: &str = "<omitted>";

static REFERENCE: LazyLock<Regex> = LazyLock::new(|| {
    let item = r"(?:\d{1,3}(?:\.\d{1,3})*(?:\([a-zA-Z0-9]{1,4}\))*|[IVXLC]{1,6}\b)";
    Regex::new(&format!(
        r"\b(?i:(sections?|articles?|§§?))\s*({item}(?:\s*(?:,|and|or|through|to|-)\s*(?:(?i:section)\s+)?{item})*)"
    ))
    .expect("valid regex")
});
static ITEM: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(\d{1,3}(?:\.\d{1,3})*)((?:\([a-zA-Z0-9]{1,4}\))*)|\b([IVXLC]{1,6})\b")
        .expect("valid regex")
});
static SUB: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\([a-zA-Z0-9]{1,4}\)").expect("valid regex"));

/// A reference as written, resolved to a path prefix to look for: `["9.1", "(a)"]`,
/// `["ARTICLE IV"]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reference {
    pub number: String,
    pub target: Vec<String>,
}

/// Longer lists ("Sections 1, 7, 9, 10 and 11 shall survive") enumerate rather than
/// incorporate: attaching them would bury the clause under unrelated text.
const MAX_ITEMS_PER_MENTION: usize = 2;

/// The sentence of `text` around the byte range `start..end`: from the end of the previous
/// sentence (a full stop, semicolon or line break) to the end of this one.
fn sentence_around(text: &str, start: usize, end: usize) -> &str {
    // A full stop inside a section number ("Section 9.2") is no sentence end: one ends only
    // where a space or the text's end follows.
    let ends_at = |i: usize, c: char| {
        matches!(c, '.' | ';' | '\n')
            && text[i + c.len_utf8()..]
                .chars()
                .next()
                .is_none_or(char::is_whitespace)
    };
    let from = text[..start]
        .char_indices()
        .rev()
        .find(|&(i, c)| ends_at(i, c))
        .map_or(0, |(i, c)| i + c.len_utf8());
    let to = text[end..]
        .char_indices()
        .map(|(i, c)| (end + i, c))
        .find(|&(i, c)| ends_at(i, c))
        .map_or(text.len(), |(i, _)| i);
    &text[from..to]
}

/// Whether a mention only says which sections outlive the agreement ("Sections 4.2 and 7 shall
/// survive any termination"): like a long list, it enumerates rather than incorporates, and
/// attaching the surviving sections would make the survival clause match what they say, so
/// that it could outrank them.
fn names_surviving_sections(sentence: &str) -> bool {
    sentence.to_ascii_lowercase().contains("surviv")
}

/// The references a clause text makes ("Sections 9.1 and 9.2(a)" gives two). Mentions that
/// list more than two sections, and mentions in a sentence on what survives, are skipped.
pub fn find_references(text: &str) -> Vec<Reference> {
    let mut out: Vec<Reference> = Vec::new();
    for c in REFERENCE.captures_iter(text) {
        let (Some(word), Some(items)) = (c.get(1), c.get(2)) else {
            continue;
        };
        if ITEM.find_iter(items.as_str()).count() > MAX_ITEMS_PER_MENTION {
            continue;
        }
        if names_surviving_sections(sentence_around(text, word.start(), items.end())) {
            continue;
        }
        let article = word.as_str().to_ascii_lowercase().starts_with("article");
        for item in ITEM.captures_iter(items.as_str()) {
            let reference = if let Some(decimal) = item.get(1) {
                if article {
                    let number = format!("ARTICLE {}", decimal.as_str());
                    Reference {
                        number: number.clone(),
                        target: vec![number],
                    }
                } else {
                    let mut target = vec![decimal.as_str().to_string()];
                    let subs = item.get(2).map_or("", |m| m.as_str());
                    target.extend(SUB.find_iter(subs).map(|m| m.as_str().to_string()));
                    Reference {
                        number: format!("{}{}", decimal.as_str(), subs),
                        target,
                    }
                }
            } else if let (Some(roman), true) = (item.get(3), article) {
                let number = format!("ARTICLE {}", roman.as_str().to_ascii_uppercase());
                Reference {
                    number: number.clone(),
                    target: vec![number],
                }
            } else {
                continue;
            };
            if !out.contains(&reference) {
                out.push(reference);
            }
        }
    }
    out
}

/// Whether `path` contains `target` as a contiguous run of elements (so `["ARTICLE IX", "9.1",
/// "(a)"]` contains `["9.1", "(a)"]`).
fn contains_run(path: &[String], target: &[String]) -> bool {
    !target.is_empty() && path.windows(target.len()).any(|w| w == target)
}

/// The clauses of the referenced part: those whose path contains the target, in the first part
/// of the contract that has it (numbering restarts in exhibits). Falls back to the target
/// without its sub-items ("4(b)" → "4") when the sub-item is not a clause of its own.
fn resolve(clauses: &[Clause], target: &[String]) -> Vec<usize> {
    let mut target = target.to_vec();
    while !target.is_empty() {
        let first = clauses.iter().position(|c| contains_run(&c.path, &target));
        if let Some(first) = first {
            // The part is contiguous: take clauses while they stay inside it.
            return (first..clauses.len())
                .take_while(|&i| contains_run(&clauses[i].path, &target))
                .collect();
        }
        target.pop();
    }
    Vec::new()
}

/// Attaches referenced text to every clause that makes resolvable cross-references, and records
/// the references in [`Clause::refs`]. A reference to the clause itself, to one of its
/// ancestors or to its own subsections attaches nothing.
pub fn attach_references(text: &str, clauses: &mut [Clause]) {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let slice = |start: usize, end: usize| -> &str {
        let byte = |i: usize| chars.get(i).map_or(text.len(), |&(b, _)| b);
        &text[byte(start)..byte(end.max(start))]
    };
    let mut attachments: Vec<(Vec<String>, String)> = Vec::with_capacity(clauses.len());
    for (i, clause) in clauses.iter().enumerate() {
        let own = slice(clause.start, clause.end);
        let mut refs = Vec::new();
        let mut attached = String::new();
        for reference in find_references(own) {
            let members = resolve(clauses, &reference.target);
            if members.is_empty() || members.contains(&i) {
                continue;
            }
            let first = &clauses[members[0]];
            let last = &clauses[members[members.len() - 1]];
            // Its own subsections, or an enclosing part, are already in context.
            if first.path.starts_with(&clause.path) || clause.path.starts_with(&first.path) {
                continue;
            }
            let referenced = clean(slice(first.start, last.end));
            let budget = MAX_ATTACHED_CHARS.saturating_sub(attached.chars().count());
            if budget < 80 {
                break;
            }
            let piece = bounded(&referenced, budget.min(MAX_ATTACHED_CHARS_PER_REF));
            attached.push_str(OMITTED);
            attached.push_str(&piece);
            refs.push(reference.number);
        }
        attachments.push((refs, attached));
    }
    for (clause, (refs, attached)) in clauses.iter_mut().zip(attachments) {
        clause.text.push_str(&attached);
        clause.refs = refs;
    }
}

/// One line per paragraph, page noise removed, whitespace collapsed.
fn clean(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !is_page_number(l) && !l.starts_with("Source: "))
        .collect::<Vec<_>>()
        .join(" ")
}

/// At most `limit` characters, cut after the last sentence end (else word end) that fits.
fn bounded(text: &str, limit: usize) -> String {
    if text.chars().count() <= limit {
        return text.to_string();
    }
    let cut: String = text.chars().take(limit).collect();
    let at = cut
        .rfind(". ")
        .map(|i| i + 1)
        .filter(|&i| i >= limit / 2)
        .or_else(|| cut.rfind(' '))
        .unwrap_or(cut.len());
    format!("{}…", cut[..at].trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_lists_ranges_and_subitems() {
        let refs =
            find_references("except as set forth in Sections 9.1 and 9.2(b), and Article IV");
        let numbers: Vec<&str> = refs.iter().map(|r| r.number.as_str()).collect();
        assert_eq!(numbers, ["9.1", "9.2(b)", "ARTICLE IV"]);
        assert_eq!(refs[1].target, ["9.2", "(b)"]);
    }

    #[test]
    fn a_survival_sentence_enumerates_rather_than_incorporates() {
        let text = "Sections 4.2 and 7 shall survive any expiration or termination of this \
                    Agreement. The fees are as set forth in Section 3.1.";
        let numbers: Vec<String> = find_references(text)
            .into_iter()
            .map(|r| r.number)
            .collect();
        assert_eq!(numbers, ["3.1"]);
        let text = "The obligations under Section 9.2 survive termination; payment is due under \
                    Section 5.";
        let numbers: Vec<String> = find_references(text)
            .into_iter()
            .map(|r| r.number)
            .collect();
        assert_eq!(numbers, ["5"]);
        // The section number's full stop does not end the sentence.
        assert_eq!(
            sentence_around("See Section 9.2 here. Next.", 4, 15),
            "See Section 9.2 here"
        );
    }

    #[test]
    fn bounded_cuts_at_a_sentence() {
        let text = "First sentence here. Second sentence is much longer than the limit allows.";
        assert_eq!(bounded(text, 40), "First sentence here.…");
    }
}
