//! PDF text layers through `pdf-extract`. A PDF without a text layer (a scan) is recognised by
//! OCR when `pdftoppm` and `tesseract` are installed (`super::ocr`), and is otherwise an error
//! that says what is missing; so are the pages without text in an otherwise typeset PDF. The running headers, footers and page numbers each page repeats
//! are dropped here, where page boundaries are still known, for both kinds of text.

use std::collections::HashMap;
use std::path::Path;

use super::ReadError;

/// The document's text, and whether it came from OCR.
pub(crate) fn read(path: &Path, bytes: &[u8]) -> Result<(String, bool), ReadError> {
    if !bytes.starts_with(b"%PDF")
        && !bytes[..bytes.len().min(1024)]
            .windows(4)
            .any(|w| w == b"%PDF")
    {
        return Err(corrupt(path, "no %PDF header".to_string()));
    }
    // pdf-extract panics on some malformed inputs (unknown encodings, bad fonts) instead of
    // returning an error; one bad file must not take a whole ingest down.
    let pages = std::panic::catch_unwind(|| pdf_extract::extract_text_from_mem_by_pages(bytes))
        .map_err(|panic| {
            let reason = panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied())
                .unwrap_or("the PDF parser failed");
            corrupt(path, reason.to_string())
        })?
        .map_err(|e| corrupt(path, e.to_string()))?;
    let blank = |page: &String| !page.chars().any(char::is_alphanumeric);
    let (mut pages, mut ocr) = (pages, false);
    let blank_pages: Vec<usize> = (0..pages.len()).filter(|&i| blank(&pages[i])).collect();
    if blank_pages.len() == pages.len() {
        let no_text = |reason: String| ReadError::NoTextLayer {
            path: path.to_path_buf(),
            reason,
        };
        match super::ocr::recognise_pages(bytes, None) {
            Ok(recognised) if !recognised.iter().all(blank) => {
                pages = recognised;
                ocr = true;
            }
            Ok(_) => return Err(no_text("OCR found no text in it".into())),
            Err(super::ocr::OcrFailure::Unavailable(why)) => {
                return Err(no_text(format!("cannot OCR it: {why}")))
            }
            Err(super::ocr::OcrFailure::Failed(why)) => {
                return Err(no_text(format!("OCR failed: {why}")))
            }
        }
    } else if !blank_pages.is_empty() {
        // A typeset contract with scanned pages (a signed signature page, an exhibit): those
        // pages are recognised; if OCR is unavailable or fails, the text layer still stands.
        let numbers: Vec<usize> = blank_pages.iter().map(|i| i + 1).collect();
        if let Ok(recognised) = super::ocr::recognise_pages(bytes, Some(&numbers)) {
            for (&i, text) in blank_pages.iter().zip(recognised) {
                ocr |= !blank(&text);
                pages[i] = text;
            }
        }
    }
    let text = strip_running_lines(&pages);
    Ok((super::tidy_rendered(&join_hyphenated(&text)), ocr))
}

/// A header or footer that ends in its page number ("Gas Franchise Agreement   Page 2"),
/// recognisable even in a two-page document where nothing repeats often enough.
static PAGE_SUFFIX: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    regex::Regex::new(r"(?i)\bpage\s+\d{1,4}(?:\s+of\s+\d{1,4})?$").expect("valid regex")
});

fn is_page_header(line: &str) -> bool {
    let collapsed = line.split_whitespace().collect::<Vec<_>>().join(" ");
    collapsed.chars().count() <= 100 && PAGE_SUFFIX.is_match(&collapsed)
}

/// A word hyphenated across a line break ("Sec-\ntion", "lock-\nout"): the part before the
/// break ends in a lowercase letter, the part after starts with one.
static HYPHENATED: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    regex::Regex::new(r"(\p{L}*\p{Ll})-\n[ \t]*(\p{Ll}\p{L}*)").expect("valid regex")
});
/// A hyphenated compound written within a line ("lock-out", "non-exclusive").
static COMPOUND: std::sync::LazyLock<regex::Regex> =
    std::sync::LazyLock::new(|| regex::Regex::new(r"\p{L}+(?:-\p{L}+)+").expect("valid regex"));

/// Joins words the typesetter broke at a line end. A break is also where a real compound's
/// own hyphen may fall ("lock-\nout"), and the two cannot be told apart from the break alone,
/// so the document decides: a compound it also writes with its hyphen within a line keeps the
/// hyphen; every other break is joined ("Sec-\ntion" becomes "Section"), since typesetters'
/// breaks are the commoner kind.
fn join_hyphenated(text: &str) -> String {
    let compounds: std::collections::HashSet<String> = COMPOUND
        .find_iter(text)
        .map(|m| m.as_str().to_lowercase())
        .collect();
    HYPHENATED
        .replace_all(text, |c: &regex::Captures<'_>| {
            let (before, after) = (&c[1], &c[2]);
            if compounds.contains(&format!("{before}-{after}").to_lowercase()) {
                format!("{before}-{after}")
            } else {
                format!("{before}{after}")
            }
        })
        .into_owned()
}

fn corrupt(path: &Path, reason: String) -> ReadError {
    ReadError::Corrupt {
        path: path.to_path_buf(),
        format: "PDF",
        reason,
    }
}

/// How many lines at the top and bottom of a page may be running headers/footers.
const EDGE_LINES: usize = 3;

/// Removes lines near the top or bottom of a page that recur (digits ignored, so "Page 3 of 9"
/// matches "Page 4 of 9") on at least half of the pages, and bare page numbers anywhere near
/// the edges.
fn strip_running_lines(pages: &[String]) -> String {
    let shape = |line: &str| -> String {
        line.trim()
            .chars()
            .map(|c| if c.is_ascii_digit() { '#' } else { c })
            .collect()
    };
    let page_lines: Vec<Vec<&str>> = pages.iter().map(|p| p.lines().collect()).collect();
    let edge_indices = |lines: &[&str]| -> Vec<usize> {
        let content: Vec<usize> = (0..lines.len())
            .filter(|&i| !lines[i].trim().is_empty())
            .collect();
        let mut edges: Vec<usize> = content.iter().take(EDGE_LINES).copied().collect();
        edges.extend(content.iter().rev().take(EDGE_LINES).copied());
        edges.sort_unstable();
        edges.dedup();
        edges
    };
    let mut counts: HashMap<String, usize> = HashMap::new();
    for lines in &page_lines {
        let mut seen: Vec<String> = edge_indices(lines)
            .iter()
            .map(|&i| shape(lines[i]))
            .collect();
        seen.sort();
        seen.dedup();
        for s in seen {
            *counts.entry(s).or_default() += 1;
        }
    }
    let repeated =
        |s: &str| pages.len() >= 3 && counts.get(s).copied().unwrap_or(0) * 2 >= pages.len();
    let mut out = String::new();
    for lines in &page_lines {
        let edges = edge_indices(lines);
        for (i, line) in lines.iter().enumerate() {
            // pdf-extract emits text in content-stream order, so a header may come out in the
            // middle of a page; it still shows by the wide gap between its left and right parts.
            if !edges.contains(&i) && line.contains("    ") && is_page_header(line) {
                continue;
            }
            if edges.contains(&i) {
                let s = shape(line);
                if repeated(&s) || crate::segment::is_page_number(line) || is_page_header(line) {
                    continue;
                }
            }
            out.push_str(line);
            out.push('\n');
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::join_hyphenated;

    #[test]
    fn a_line_end_hyphen_is_joined_unless_the_document_writes_the_compound() {
        let text = "a lock-\nout of the premises; the Sec-\ntion applies. No lock-out shall occur.";
        assert_eq!(
            join_hyphenated(text),
            "a lock-out of the premises; the Section applies. No lock-out shall occur."
        );
        assert_eq!(join_hyphenated("the Sec-\n  tion"), "the Section");
    }
}
