//! A clause's surroundings in its source contract, for "expand to context".

use crate::api::ClauseContext;

/// The text around chars `start..end` of the contract at `source_path`, `chars` characters on
/// each side. `None` when the clause carries no source span, the file is gone, or the span no
/// longer fits the file (the contract changed since it was ingested).
pub fn clause_context(
    source_path: Option<&str>,
    start: Option<usize>,
    end: Option<usize>,
    chars: usize,
) -> Option<ClauseContext> {
    let (path, start, end) = (source_path?, start?, end?);
    if start >= end {
        return None;
    }
    let text = contract_text(std::path::Path::new(path))?;
    let chars_of: Vec<char> = text.chars().collect();
    if end > chars_of.len() {
        return None;
    }
    let before_start = start.saturating_sub(chars);
    let after_end = (end + chars).min(chars_of.len());
    let collect = |a: usize, b: usize| chars_of[a..b].iter().collect::<String>();
    Some(ClauseContext {
        source_path: path.to_owned(),
        before: collect(before_start, start),
        clause: collect(start, end),
        after: collect(end, after_end),
        start,
        end,
    })
}

/// The contract's text as offsets were computed on it: plain text files as they are.
fn contract_text(path: &std::path::Path) -> Option<String> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    match ext.as_deref() {
        Some("txt") | Some("text") | None => std::fs::read_to_string(path).ok(),
        _ => None,
    }
}
