//! Queries typed in a legal research service's search syntax, read as a request.
//!
//! Lawyers and litigation-support staff who learnt research on Westlaw or Lexis search a clause
//! bank the way they search case law: `indemnif* /s "hold harmless" AND NOT gross`,
//! `(cap OR limit) /p liability`. Read as words, such a string goes wrong in three ways: the
//! terms after `NOT` are what the user wants *absent*, yet BM25 and the embedding reward them;
//! a truncated root (`indemnif*`) matches no indexed word; and the connectors (`/s`, `w/5`) and
//! operators become query words. [`read_search_syntax`] rewrites such a query into the request
//! it stands for: the wanted terms in order, truncated roots widened to the library's words
//! that start with them, and each negated term or group stated as "not including …", the form
//! the exclusion reader ([`crate::exclusions`]) reads, so a clause saying it is demoted.
//!
//! Only a query that shows the syntax is rewritten: an uppercase `AND` or `OR` operator, a
//! connector, `%`, or a truncated word (a root of three letters or more ending in `*` or `!`).
//! `NOT` or `%` alone does not show it ("clauses that do NOT cap liability" is a sentence), nor do
//! quotation marks (a lawyer quotes a defined term in a sentence too). A query written in
//! capitals throughout is a title, not syntax: its `AND` is a word.

use crate::spelling::{LibraryWords, MIN_CLAUSES};

/// How many library words a truncated root becomes, most used first.
pub const WORDS_PER_ROOT: usize = 3;
/// Shortest root a trailing `*` or `!` is read as truncation of.
pub const MIN_ROOT_CHARS: usize = 3;

/// The request a query in search syntax stands for, or `None` when `query` shows no search
/// syntax (see the module documentation). `library` supplies the words a truncated root is
/// widened to; without it a root stands as typed.
pub fn read_search_syntax(query: &str, library: Option<&LibraryWords>) -> Option<String> {
    let tokens = tokenize(query);
    if !shows_syntax(&tokens) {
        return None;
    }
    let mut wanted: Vec<String> = Vec::new();
    let mut excluded: Vec<Vec<String>> = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        if tokens[i] == Token::Not {
            // `NOT (a OR b)` wants neither: each term and phrase of the operand is excluded.
            let (operand, last) = operand(&tokens, i + 1);
            excluded.extend(operand.iter().filter_map(|t| words_of(t, library)));
            i = last;
        } else if let Some(words) = words_of(&tokens[i], library) {
            wanted.extend(words);
        }
        i += 1;
    }
    // "… not including a and not including b": the exclusion reader ends an excluded phrase at
    // "and" and finds the next trigger after it.
    let mut text = wanted.join(" ");
    for (n, group) in excluded.iter().filter(|g| !g.is_empty()).enumerate() {
        text.push_str(if n == 0 {
            " not including "
        } else {
            " and not including "
        });
        text.push_str(&group.join(" "));
    }
    let text = text.trim().to_owned();
    (!text.is_empty() && text != query.trim()).then_some(text)
}

/// The tokens of the operand that starts at `tokens[start]` (after any further operators): a
/// term, a phrase, or a parenthesised group (up to its closing parenthesis, or the end), and
/// the index of its last token.
fn operand(tokens: &[Token], start: usize) -> (&[Token], usize) {
    let mut i = start;
    while matches!(tokens.get(i), Some(Token::Not | Token::And | Token::Or)) {
        i += 1;
    }
    if tokens.get(i) != Some(&Token::Open) {
        return (tokens.get(i..=i).unwrap_or_default(), i);
    }
    let mut depth = 0usize;
    for (end, t) in tokens.iter().enumerate().skip(i) {
        match t {
            Token::Open => depth += 1,
            Token::Close => {
                depth -= 1;
                if depth == 0 {
                    return (&tokens[i..=end], end);
                }
            }
            _ => {}
        }
    }
    (&tokens[i..], tokens.len())
}

/// The request's words a term or phrase token stands for ([`expand`] for a term); `None` for
/// operators, connectors and parentheses.
fn words_of(token: &Token, library: Option<&LibraryWords>) -> Option<Vec<String>> {
    match token {
        Token::Term(w) => Some(expand(w, library)),
        Token::Phrase(p) => Some(p.clone()),
        _ => None,
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    /// A word as typed (a truncated one keeps its `*` or `!`).
    Term(String),
    /// The words of a quoted phrase.
    Phrase(Vec<String>),
    And,
    Or,
    /// `NOT`, `AND NOT` (the `AND` is skipped), `BUT NOT`, `%`.
    Not,
    /// A proximity connector: `/s`, `/p`, `/5`, `w/5`, `pre/3`, `near/2`, `+s`, `NEAR` …
    Connector,
    Open,
    Close,
}

fn is_quote(c: char) -> bool {
    matches!(c, '"' | '\u{201c}' | '\u{201d}')
}

fn tokenize(query: &str) -> Vec<Token> {
    let all_capitals = query
        .split_whitespace()
        .filter(|w| w.chars().any(char::is_alphabetic))
        .all(|w| !w.chars().any(char::is_lowercase));
    let mut tokens = Vec::new();
    let mut chars = query.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
        } else if c == '(' {
            chars.next();
            tokens.push(Token::Open);
        } else if c == ')' {
            chars.next();
            tokens.push(Token::Close);
        } else if is_quote(c) {
            chars.next();
            let phrase: String = chars.by_ref().take_while(|&c| !is_quote(c)).collect();
            let words: Vec<String> = phrase.split_whitespace().map(str::to_owned).collect();
            if !words.is_empty() {
                tokens.push(Token::Phrase(words));
            }
        } else {
            let mut word = String::new();
            while let Some(&c) = chars.peek() {
                if c.is_whitespace() || c == '(' || c == ')' || is_quote(c) {
                    break;
                }
                word.push(c);
                chars.next();
            }
            let token = classify(&word, all_capitals);
            // "BUT NOT" is one operator; "BUT" elsewhere is a word.
            if token == Token::Not && tokens.last() == Some(&Token::Term("BUT".to_owned())) {
                tokens.pop();
            }
            tokens.push(token);
        }
    }
    tokens
}

fn classify(word: &str, all_capitals: bool) -> Token {
    match word {
        "AND" if !all_capitals => return Token::And,
        "OR" if !all_capitals => return Token::Or,
        "NOT" | "%" if !all_capitals => return Token::Not,
        _ => {}
    }
    if is_connector(word) {
        return Token::Connector;
    }
    Token::Term(word.to_owned())
}

/// Westlaw's and Lexis's proximity connectors, in either case: `/s`, `/p`, `/n`, `+s`, `+p`,
/// `+n`, `w/n`, `w/s`, `w/p`, `w/seg`, `pre/n`, `near/n`, `onear/n`, `NEAR`.
fn is_connector(word: &str) -> bool {
    if word == "NEAR" {
        return true;
    }
    let lower = word.to_lowercase();
    let tail = |rest: &str| {
        !rest.is_empty()
            && (rest.chars().all(|c| c.is_ascii_digit())
                || matches!(rest, "s" | "p" | "seg" | "sent" | "para"))
    };
    for prefix in ["/", "+", "w/", "pre/", "near/", "onear/"] {
        if let Some(rest) = lower.strip_prefix(prefix) {
            if tail(rest) {
                return true;
            }
        }
    }
    false
}

/// Whether the tokens show search syntax (see the module documentation).
fn shows_syntax(tokens: &[Token]) -> bool {
    tokens.iter().any(|t| match t {
        Token::And | Token::Or | Token::Connector => true,
        Token::Term(w) => truncated_root(w).is_some(),
        _ => false,
    })
}

/// The root of a truncated word (`indemnif*`, `terminat!`), lowercase, when it is one.
fn truncated_root(word: &str) -> Option<String> {
    let root = word.strip_suffix(['*', '!'])?;
    (root.chars().count() >= MIN_ROOT_CHARS && root.chars().all(char::is_alphanumeric))
        .then(|| root.to_lowercase())
}

/// A term as the request's words: a truncated root widened to the library's most used words
/// that start with it (the root itself without a library or a match), any other word without
/// the wildcards a search service reads inside words (`wom*n`, `organi?ation`).
fn expand(word: &str, library: Option<&LibraryWords>) -> Vec<String> {
    if let Some(root) = truncated_root(word) {
        let mut words: Vec<(&str, u32)> = library
            .map(|l| {
                l.counts()
                    .filter(|&(w, c)| c >= MIN_CLAUSES && w.starts_with(root.as_str()))
                    .collect()
            })
            .unwrap_or_default();
        words.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        if words.is_empty() {
            return vec![root];
        }
        return words
            .into_iter()
            .take(WORDS_PER_ROOT)
            .map(|(w, _)| w.to_owned())
            .collect();
    }
    let cleaned: String = word
        .chars()
        .filter(|&c| c != '*' && c != '?' && c != '!')
        .collect();
    if cleaned.is_empty() {
        Vec::new()
    } else {
        vec![cleaned]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn library() -> LibraryWords {
        LibraryWords::from_texts([
            "The Indemnifying Party shall indemnify and hold harmless. Indemnification.",
            "Indemnification obligations survive; indemnify the buyer.",
            "Indemnification; gross negligence; indemnified parties.",
            "Termination for convenience; terminate on notice.",
            "Terminate this agreement; termination fee.",
        ])
    }

    fn read(query: &str) -> Option<String> {
        read_search_syntax(query, Some(&library()))
    }

    #[test]
    fn sentences_are_left_alone() {
        for q in [
            "cap on liability",
            "indemnification clauses that do not include hold harmless",
            "clauses that do NOT cap liability",
            "the \"Licensed Product\" warranty",
            "INDEMNIFICATION AND HOLD HARMLESS",
            "Governing Law excluding UCC",
        ] {
            assert_eq!(read(q), None, "{q}");
        }
    }

    #[test]
    fn negated_terms_become_exclusions_the_reader_reads() {
        let text = read("indemnification AND NOT \"hold harmless\"").expect("syntax");
        assert_eq!(text, "indemnification not including hold harmless");
        let e = crate::exclusions(&text);
        assert_eq!(e.len(), 1, "{e:?}");
        assert_eq!(e[0].phrase, "hold harmless");
        let text = read("liability /s cap % (gross OR fraud)").expect("syntax");
        assert_eq!(
            text,
            "liability cap not including gross and not including fraud"
        );
        assert_eq!(crate::exclusions(&text).len(), 2);
    }

    #[test]
    fn truncated_roots_widen_to_the_librarys_words() {
        let text = read("indemnif* w/5 harmless").expect("syntax");
        assert_eq!(text, "indemnification indemnify harmless");
        // A root no library word starts with stands as typed; without a library too.
        assert_eq!(read("zyx* AND cap").as_deref(), Some("zyx cap"));
        assert_eq!(
            read_search_syntax("terminat! /p convenience", None).as_deref(),
            Some("terminat convenience")
        );
        // Too short a root is a word with a stray star, not truncation: no syntax shown.
        assert_eq!(read("ip* license"), None);
    }

    #[test]
    fn malformed_syntax_reads_without_panicking() {
        // Unbalanced quotes and parentheses, operators with no operand, wildcards alone, curly
        // quotes and non-ASCII words: each gives a request or none, never a panic.
        for q in [
            "NOT",
            "AND OR NOT",
            "cap AND",
            "cap AND NOT",
            "cap AND NOT (",
            "cap AND NOT (gross OR",
            "((( cap ))) /s",
            "\"unclosed phrase AND cap",
            "\u{201c}hold harmless\u{201d} AND NOT \u{201c}gross",
            "* ! % /s w/5",
            "indemnif* BUT",
            "BUT NOT",
            "responsabilit* AND d\u{e9}g\u{e2}ts % \u{e9}l\u{e8}ves",
            "",
            "   ",
        ] {
            let read = read(q);
            if let Some(text) = read {
                assert!(!text.is_empty(), "{q:?}");
                assert!(
                    !text.contains(" AND ") && !text.contains("/s"),
                    "{q:?}: {text}"
                );
            }
        }
        assert_eq!(read("cap AND NOT").as_deref(), Some("cap"));
        assert_eq!(
            read("cap AND NOT (gross OR").as_deref(),
            Some("cap not including gross")
        );
    }

    #[test]
    fn operators_connectors_and_parentheses_are_not_words() {
        assert_eq!(
            read("(cap OR limit) /p liability").as_deref(),
            Some("cap limit liability")
        );
        assert_eq!(
            read("\"most favored\" +s customer pre/3 price").as_deref(),
            Some("most favored customer price")
        );
        assert!(is_connector("/s") && is_connector("w/10") && is_connector("NEAR/3"));
        assert!(!is_connector("and/or") && !is_connector("w/o") && !is_connector("/"));
    }
}
