//! LexGLUE's text form for ordinary text: lowercased, and split into tokens the way the
//! UNFAIR-ToS sentences were (a Penn Treebank-style word tokenizer): punctuation such as
//! `, ; : ( ) ? !` and a word's final period are tokens of their own, double quotes become
//! `` and '', contractions split (`don't` → `do n't`, `company's` → `company 's`), while
//! hyphenated words, `and/or`, abbreviations (`u.s.`, `e.g.`), numbers (`75,000`, `20.3`) and
//! URLs stay whole. The model only ever saw that form, so a real terms-of-service sentence
//! scored as typed would lose most of its word n-grams (`cancel,` is not `cancel`).

/// Characters split off the front of a word.
const OPENING: &[char] = &['(', '[', '{', '"', '$', '#', '<', '*'];
/// Characters split off the end of a word (a final period separately, see [`split_period`]).
const CLOSING: &[char] = &[
    ')', ']', '}', '"', ',', ';', ':', '?', '!', '%', '>', '*', '\'',
];
/// Contraction suffixes split off as tokens (after lowercasing).
const CLITICS: &[&str] = &["n't", "'s", "'re", "'ve", "'ll", "'d", "'m"];

/// `text` in LexGLUE's lowercased, space-tokenised form.
pub fn normalise(text: &str) -> String {
    let text: String = text
        .chars()
        .map(|c| match c {
            '\u{2018}' | '\u{2019}' | '\u{201B}' | '\u{2032}' => '\'',
            '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{00AB}' | '\u{00BB}' => '"',
            '\u{2013}' => '-',
            '\u{00A0}' | '\u{2007}' | '\u{202F}' => ' ',
            c => c,
        })
        .collect::<String>()
        .replace('\u{2014}', " -- ")
        .replace("...", " ... ")
        .replace('\u{2026}', " ... ")
        .to_lowercase();
    let mut out: Vec<String> = Vec::new();
    for word in text.split_whitespace() {
        split_word(word, &mut out);
    }
    out.join(" ")
}

/// Splits one whitespace-delimited chunk into tokens, appending them to `out`.
fn split_word(word: &str, out: &mut Vec<String>) {
    let mut rest = word;
    // Leading punctuation, one token each; a leading `"` opens a quotation.
    while let Some(c) = rest.chars().next().filter(|c| OPENING.contains(c)) {
        if rest.len() == c.len_utf8() {
            break;
        }
        out.push(if c == '"' { "``".into() } else { c.to_string() });
        rest = &rest[c.len_utf8()..];
    }
    // Trailing punctuation, collected in reverse, then the final period.
    let mut tail: Vec<String> = Vec::new();
    loop {
        if let Some(c) = rest.chars().next_back().filter(|c| CLOSING.contains(c)) {
            if rest.len() == c.len_utf8() {
                break;
            }
            // A trailing apostrophe after an s is a possessive (`users'`), one token.
            if c == '\'' && !rest[..rest.len() - 1].ends_with('s') {
                break;
            }
            tail.push(if c == '"' { "''".into() } else { c.to_string() });
            rest = &rest[..rest.len() - c.len_utf8()];
            continue;
        }
        match split_period(rest) {
            Some(stem) => {
                tail.push(".".into());
                rest = stem;
            }
            None => break,
        }
    }
    // Dashes inside a word (`terms--which`) separate words.
    let mut pieces = rest.split("--").peekable();
    while let Some(piece) = pieces.next() {
        if !piece.is_empty() {
            split_clitic(piece, out);
        }
        if pieces.peek().is_some() {
            out.push("--".into());
        }
    }
    out.extend(tail.into_iter().rev());
}

/// The word without its final period when that period ends a sentence or a word rather than an
/// abbreviation: `you.` and `example.com/terms.` lose it, but `u.s.`, `e.g.`, `i.e.` (letters
/// between periods) and `...` keep it.
fn split_period(word: &str) -> Option<&str> {
    let stem = word.strip_suffix('.')?;
    let abbreviation = stem.contains('.')
        && stem
            .split('.')
            .all(|part| (1..=2).contains(&part.len()) && part.chars().all(char::is_alphabetic));
    if stem.is_empty() || stem.ends_with('.') || abbreviation {
        return None;
    }
    Some(stem)
}

/// Splits a contraction suffix off `word` ([`CLITICS`]) and appends the tokens.
fn split_clitic(word: &str, out: &mut Vec<String>) {
    for clitic in CLITICS {
        if let Some(stem) = word.strip_suffix(clitic) {
            if !stem.is_empty() && stem.chars().all(|c| c.is_alphanumeric() || c == '-') {
                out.push(stem.to_owned());
                out.push((*clitic).to_owned());
                return;
            }
        }
    }
    out.push(word.to_owned());
}

#[cfg(test)]
mod tests {
    use super::normalise;

    #[test]
    fn matches_lexglue_forms() {
        let cases = [
            (
                "Notice to California Subscribers: You may cancel your subscription, without penalty.",
                "notice to california subscribers : you may cancel your subscription , without penalty .",
            ),
            (
                "Tinder (\"us,\" \"we\") reserves the right, e.g. to terminate.",
                "tinder ( `` us , '' `` we '' ) reserves the right , e.g. to terminate .",
            ),
            (
                "You don't own the Company's content; see https://example.com/terms.",
                "you do n't own the company 's content ; see https://example.com/terms .",
            ),
            (
                "Disputes of $75,000 or less (15% VAT) are U.S. matters and/or third-party ones.",
                "disputes of $ 75,000 or less ( 15 % vat ) are u.s. matters and/or third-party ones .",
            ),
            (
                "We\u{2019}ve changed \u{201C}Terms\u{201D}\u{2014}as needed\u{2026}",
                "we 've changed `` terms '' -- as needed ...",
            ),
        ];
        for (raw, want) in cases {
            assert_eq!(normalise(raw), want, "{raw}");
        }
    }

    #[test]
    fn is_idempotent_on_lexglue_text() {
        let text = "you agree that tinder may access , preserve and disclose your account information ( `` content '' ) .";
        assert_eq!(normalise(text), text);
    }
}
