//! The query as the engine ranks it: a query typed in a research service's search syntax read
//! as the request it stands for ([`precedent_text::syntax`]), then misspelt words corrected
//! against the library's words ([`precedent_text::spelling`]), with the embedder's vocabulary
//! and the English and drafting word lists as the words that are left alone. Every face and
//! the benchmarks correct through here, so a typed query ranks the same in `search`, the API
//! and `train --cv`.

use std::collections::HashSet;
use std::sync::OnceLock;

use precedent_library::Library;
use precedent_models::Embedder;
pub use precedent_text::spelling::{Change, Correction};
use precedent_text::{spelling, syntax};

use crate::EngineError;

/// `query` read as a request when it is written in search syntax, then corrected against
/// `library`'s words, `embedder`'s vocabulary being the words to leave alone. Without an
/// embedder (a BM25-only pipeline) no word is corrected: the library's own words would then be
/// the only dictionary, and ordinary words a small library lacks would be "corrected" into
/// other words. Search syntax is read with or without one.
pub fn corrected_query(
    library: &Library,
    embedder: Option<&Embedder>,
    query: &str,
) -> Result<Correction, EngineError> {
    // A truncated root (`indemnif*`) is widened to the library's words; only then are they read.
    let words = if query.contains(['*', '!']) {
        Some(library.words()?)
    } else {
        None
    };
    let read = syntax::read_search_syntax(query, words);
    let mut correction = spelled(library, embedder, read.as_deref().unwrap_or(query))?;
    correction.syntax_read = read.is_some();
    Ok(correction)
}

/// `query`'s misspelt words corrected ([`corrected_query`]'s second step).
fn spelled(
    library: &Library,
    embedder: Option<&Embedder>,
    query: &str,
) -> Result<Correction, EngineError> {
    let unchanged = || Correction {
        text: query.to_owned(),
        changes: Vec::new(),
        syntax_read: false,
    };
    let Some(embedder) = embedder else {
        return Ok(unchanged());
    };
    // Most queries have no word outside the embedder's vocabulary: they never count the
    // library's words.
    let protected = protected_words();
    let knows = |w: &str| embedder.knows_word(w);
    let Some(words) = spelling::has_unknown_words(query, &knows, protected)
        .then(|| library.words())
        .transpose()?
    else {
        return Ok(unchanged());
    };
    Ok(spelling::correct(query, words, &knows, protected))
}

/// Corrects each of `texts` in place as a search would ([`corrected_query`]) and returns how
/// many changed: the query files `eval` and `train --cv` rank.
pub fn correct_in_place<'a>(
    library: &Library,
    embedder: Option<&Embedder>,
    texts: impl IntoIterator<Item = &'a mut String>,
) -> Result<usize, EngineError> {
    let mut changed = 0;
    for text in texts {
        let c = corrected_query(library, embedder, text)?;
        if c.changed() {
            changed += 1;
            tracing::debug!(from = %text, to = %c.text, how = c.what(), "query corrected");
            *text = c.text;
        }
    }
    Ok(changed)
}

fn protected_words() -> &'static HashSet<String> {
    static WORDS: OnceLock<HashSet<String>> = OnceLock::new();
    WORDS.get_or_init(spelling::query_vocabulary)
}
