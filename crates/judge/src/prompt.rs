//! The one prompt both backends send, and the parsers of the answers.
//!
//! The rubric is the ACORD paper's star scale. The query comes before the clause so that a local
//! model can compute the shared prefix (instructions + rubric + query) once per query and only
//! run the clause-specific suffix per candidate.

/// Bumped whenever the wording changes: it is part of every cache key, so judgements made with an
/// older prompt are never reused.
pub const PROMPT_VERSION: &str = "acord-rubric-v1";

pub const SYSTEM: &str = "You are an experienced contracts attorney. You rate precedent clauses for a lawyer who is drafting a contract.";

/// The ACORD paper's rating scale, verbatim in substance.
pub const RUBRIC: &str = "\
1 = not relevant, and not useful
2 = not relevant, but has useful language
3 = relevant, but defective (too long, missing key concepts, non-standard language, one-sided, or unclear)
4 = relevant, concise, clear and complete
5 = everything in 4, plus additional helpful concepts";

/// One chat message (OpenAI roles: `system`, `user`, `assistant`).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Message {
    pub role: &'static str,
    pub content: String,
}

/// The pointwise user message, split where the clause starts: `prefix + clause + suffix`.
pub struct PointwisePrompt {
    pub prefix: String,
    pub suffix: &'static str,
}

pub const POINTWISE_SUFFIX: &str = "\n\nHow many stars does this clause deserve for the query? Answer with a single digit from 1 to 5.";

pub fn pointwise(query: &str) -> PointwisePrompt {
    PointwisePrompt {
        prefix: format!(
            "A lawyer searches a clause library with this query:\n\"{}\"\n\nRate how well a clause serves the query, on this scale:\n{RUBRIC}\n\nClause:\n",
            query.trim()
        ),
        suffix: POINTWISE_SUFFIX,
    }
}

/// The pointwise conversation for an HTTP judge.
pub fn pointwise_messages(query: &str, clause: &str) -> Vec<Message> {
    let p = pointwise(query);
    vec![
        Message {
            role: "system",
            content: SYSTEM.to_owned(),
        },
        Message {
            role: "user",
            content: format!("{}{}{}", p.prefix, clause.trim(), p.suffix),
        },
    ]
}

/// The pairwise user message, in pieces around the two clauses:
/// `head + a + middle + b + tail`.
pub struct PairwisePrompt {
    pub head: String,
    pub middle: &'static str,
    pub tail: &'static str,
}

pub fn pairwise(query: &str) -> PairwisePrompt {
    PairwisePrompt {
        head: format!(
            "A lawyer searches a clause library with this query:\n\"{}\"\n\nClauses are rated on this scale:\n{RUBRIC}\n\nClause A:\n",
            query.trim()
        ),
        middle: "\n\nClause B:\n",
        tail: "\n\nWhich clause deserves more stars for the query? Answer with a single letter: A or B.",
    }
}

/// The pairwise user message: which of two clauses serves the query better.
pub fn pairwise_user(query: &str, a: &str, b: &str) -> String {
    let p = pairwise(query);
    format!("{}{}{}{}{}", p.head, a.trim(), p.middle, b.trim(), p.tail)
}

pub fn pairwise_messages(query: &str, a: &str, b: &str) -> Vec<Message> {
    vec![
        Message {
            role: "system",
            content: SYSTEM.to_owned(),
        },
        Message {
            role: "user",
            content: pairwise_user(query, a, b),
        },
    ]
}

/// The star rating in a text answer: the first digit 1–5 standing alone ("4", "Rating: 4",
/// "**4** stars", "4/5"), not part of a longer number ("12 months" is not a rating).
pub fn parse_stars(answer: &str) -> Option<u8> {
    let chars: Vec<char> = answer.chars().collect();
    let digit_at = |i: Option<usize>| {
        i.and_then(|i| chars.get(i))
            .is_some_and(char::is_ascii_digit)
    };
    let dot_at = |i: Option<usize>| i.and_then(|i| chars.get(i)) == Some(&'.');
    (0..chars.len()).find_map(|i| {
        let (before, after) = (i.checked_sub(1), Some(i + 1));
        let in_number = digit_at(before)
            || digit_at(after)
            || (dot_at(before) && digit_at(i.checked_sub(2)))
            || (dot_at(after) && digit_at(Some(i + 2)));
        let c = chars[i];
        (('1'..='5').contains(&c) && !in_number).then(|| c as u8 - b'0')
    })
}

/// The preferred clause in a text answer: `Some(true)` for A, `Some(false)` for B. Accepts
/// "A", "B.", "Clause B", "**A**", "The answer is B"; refuses answers naming both or neither.
pub fn parse_preference(answer: &str) -> Option<bool> {
    let words: Vec<&str> = answer
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    let says_a = words.contains(&"A");
    let says_b = words.contains(&"B");
    match (says_a, says_b) {
        (true, false) => Some(true),
        (false, true) => Some(false),
        (true, true) => {
            // "Clause B is better than clause A": the first named clause wins.
            let first = words.iter().find(|w| **w == "A" || **w == "B")?;
            Some(*first == "A")
        }
        (false, false) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointwise_prompt_holds_rubric_query_and_clause_in_order() {
        let m = pointwise_messages("cap on liability", "Liability is capped at fees paid.");
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].role, "system");
        let user = &m[1].content;
        let q = user.find("\"cap on liability\"").unwrap();
        let r = user.find("3 = relevant, but defective").unwrap();
        let c = user.find("Liability is capped").unwrap();
        let ask = user.find("single digit from 1 to 5").unwrap();
        assert!(q < r && r < c && c < ask, "{user}");
        for line in RUBRIC.lines() {
            assert!(user.contains(line));
        }
    }

    #[test]
    fn pointwise_prefix_is_shared_by_every_clause_of_a_query() {
        let a = pointwise_messages("q", "first clause");
        let b = pointwise_messages("q", "second clause");
        let prefix = pointwise("q").prefix;
        assert!(a[1].content.starts_with(&prefix) && b[1].content.starts_with(&prefix));
        assert!(prefix.ends_with('\n'), "the clause starts a new pre-token");
    }

    #[test]
    fn pairwise_prompt_labels_clauses_a_then_b() {
        let user = pairwise_user("q", "alpha text", "beta text");
        let a = user.find("Clause A:\nalpha text").unwrap();
        let b = user.find("Clause B:\nbeta text").unwrap();
        assert!(a < b);
    }

    #[test]
    fn stars_are_read_from_typical_answers() {
        assert_eq!(parse_stars("4"), Some(4));
        assert_eq!(parse_stars(" 5\n"), Some(5));
        assert_eq!(parse_stars("Rating: 3"), Some(3));
        assert_eq!(parse_stars("**2** stars"), Some(2));
        assert_eq!(parse_stars("4/5"), Some(4));
        assert_eq!(parse_stars("I would give it 1 star."), Some(1));
        assert_eq!(parse_stars("12 months, so 4"), Some(4));
        assert_eq!(parse_stars("Rating: 4."), Some(4));
        assert_eq!(parse_stars("3.5"), None);
        assert_eq!(parse_stars("0"), None);
        assert_eq!(parse_stars("9"), None);
        assert_eq!(parse_stars("relevant"), None);
        assert_eq!(parse_stars(""), None);
    }

    #[test]
    fn preferences_are_read_from_typical_answers() {
        assert_eq!(parse_preference("A"), Some(true));
        assert_eq!(parse_preference("B."), Some(false));
        assert_eq!(parse_preference("Clause B"), Some(false));
        assert_eq!(parse_preference("**A**"), Some(true));
        assert_eq!(
            parse_preference("Clause B is better than clause A"),
            Some(false)
        );
        assert_eq!(parse_preference("neither"), None);
        assert_eq!(parse_preference("a"), None);
    }
}
