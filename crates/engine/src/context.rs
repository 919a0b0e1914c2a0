//! A clause's surroundings in its source contract, for "expand to context".

use crate::hits::{contract_file_name, ClauseContext};

/// The text around chars `start..end` of the contract at `source_path`, `chars` characters on
/// each side. `None` when the clause carries no source span, the file is gone, or the contract
/// changed since it was ingested (its fingerprint differs from `fingerprint`, or the span no
/// longer fits): showing other words as the clause would mislead.
pub fn clause_context(
    source_path: Option<&str>,
    fingerprint: Option<&str>,
    start: Option<usize>,
    end: Option<usize>,
    chars: usize,
) -> Option<ClauseContext> {
    let (path, start, end) = (source_path?, start?, end?);
    if start >= end {
        return None;
    }
    let text = match crate::ingest::ingested_text(std::path::Path::new(path), fingerprint) {
        Ok(text) => text,
        Err(e) => {
            tracing::warn!("context of a clause unavailable: {e:#}");
            return None;
        }
    };
    let chars_of: Vec<char> = text.chars().collect();
    if end > chars_of.len() {
        return None;
    }
    let before_start = start.saturating_sub(chars);
    let after_end = (end + chars).min(chars_of.len());
    let collect = |a: usize, b: usize| chars_of[a..b].iter().collect::<String>();
    Some(ClauseContext {
        source: contract_file_name(path).unwrap_or_default(),
        before: collect(before_start, start),
        clause: collect(start, end),
        after: collect(end, after_end),
        start,
        end,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONTRACT: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/data/cuad/full_contract_txt/ABILITYINC_06_15_2020-EX-4.25-SERVICES AGREEMENT.txt"
    );

    #[test]
    fn context_surrounds_a_segmented_clause_of_a_real_contract() {
        let document =
            precedent_contracts::read_path(std::path::Path::new(CONTRACT)).expect("read");
        let clauses = precedent_contracts::segment(&document);
        assert!(clauses.len() > 10, "{} clauses", clauses.len());
        let clause = &clauses[clauses.len() / 2];
        let context = clause_context(
            Some(CONTRACT),
            None,
            Some(clause.start),
            Some(clause.end),
            200,
        )
        .expect("context");
        let chars: Vec<char> = document.text.chars().collect();
        let expected: String = chars[clause.start..clause.end].iter().collect();
        assert_eq!(context.clause, expected);
        assert_eq!(context.before.chars().count(), 200.min(clause.start));
        let whole = format!("{}{}{}", context.before, context.clause, context.after);
        assert!(document.text.contains(&whole));
    }

    #[test]
    fn no_context_once_the_contract_changed_since_it_was_ingested() {
        let bytes = std::fs::read(CONTRACT).expect("read");
        let ingested = crate::ingest::fingerprint(&bytes);
        assert!(clause_context(Some(CONTRACT), Some(&ingested), Some(10), Some(50), 10).is_some());
        // The file's bytes are not those ingested: the span would point at other words.
        let other = crate::ingest::fingerprint(b"another version");
        assert!(clause_context(Some(CONTRACT), Some(&other), Some(10), Some(50), 10).is_none());
    }

    #[test]
    fn no_context_without_a_usable_source() {
        assert!(clause_context(None, None, Some(0), Some(5), 10).is_none());
        assert!(clause_context(Some(CONTRACT), None, Some(5), Some(5), 10).is_none());
        assert!(clause_context(Some(CONTRACT), None, Some(0), Some(usize::MAX), 10).is_none());
        assert!(clause_context(
            Some("/nonexistent/contract.txt"),
            None,
            Some(0),
            Some(5),
            10
        )
        .is_none());
    }
}
