//! Reviewing a whole terms-of-service document: cutting it into sentences (the unit UNFAIR-ToS
//! labels), scoring each, and summarising the eight types as a checklist. Also the guess of
//! whether a document is terms of service at all ([`looks_like_terms_of_service`]), which decides
//! between this review and the CUAD contract review.

use std::ops::Range;

use serde::Serialize;

use crate::model::UnfairModel;
use crate::{label_ids, LABELS, N_LABELS};

/// A flagged sentence.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct FlaggedSentence {
    /// Sentence number in the document (0-based, counting every sentence).
    pub sentence: usize,
    /// Character span in the document text.
    pub start: usize,
    pub end: usize,
    pub text: String,
    /// The unfair-term types predicted, most confident first.
    pub types: Vec<TypeFlag>,
}

/// One predicted type of a flagged sentence.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct TypeFlag {
    pub id: usize,
    pub name: &'static str,
    /// Calibrated probability (Platt) that the type applies.
    pub confidence: f32,
    /// The sentence's words that weigh most for this type in the model, strongest first
    /// (LexGLUE's lowercase form; [`UnfairModel::evidence`]).
    pub evidence: Vec<String>,
}

/// A line of the checklist: is the type present anywhere in the document?
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ChecklistItem {
    pub id: usize,
    pub name: &'static str,
    pub present: bool,
    /// Flagged sentences of this type.
    pub sentences: usize,
    /// Highest confidence of this type over the flagged sentences (0 when absent).
    pub best_confidence: f32,
}

/// The review of one terms-of-service document.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct TosReview {
    pub sentences: usize,
    pub flagged: Vec<FlaggedSentence>,
    pub checklist: Vec<ChecklistItem>,
}

/// Abbreviations whose period does not end a sentence (lowercased, without the period).
const ABBREVIATIONS: &[&str] = &[
    "e.g", "i.e", "etc", "inc", "ltd", "llc", "co", "corp", "no", "nos", "mr", "mrs", "ms", "dr",
    "st", "vs", "v", "u.s", "u.k", "e.u", "art", "sec", "para", "approx", "incl", "cf", "jr",
];

/// Byte ranges of the sentences of `text`: a sentence ends at `.`, `?`, `!` or `;`-free
/// terminal punctuation followed by whitespace (closing quotes and brackets stay with it),
/// unless the word before the period is an abbreviation; and at a line break after a line
/// without terminal punctuation (headings, list items), or a blank line. Whitespace is trimmed.
pub fn sentence_spans(text: &str) -> Vec<Range<usize>> {
    let mut spans = Vec::new();
    let mut start = 0usize;
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut i = 0;
    while i < chars.len() {
        let (at, c) = chars[i];
        let mut end = None;
        if matches!(c, '.' | '?' | '!') {
            // Take closing quotes and brackets along.
            let mut j = i + 1;
            while j < chars.len()
                && matches!(chars[j].1, '"' | '\'' | ')' | ']' | '\u{201D}' | '\u{2019}')
            {
                j += 1;
            }
            let followed_by_space = j >= chars.len() || chars[j].1.is_whitespace();
            if followed_by_space && !(c == '.' && is_abbreviation(&text[start..at])) {
                end = Some(chars.get(j).map_or(text.len(), |&(b, _)| b));
                i = j;
            }
        } else if c == '\n' {
            let line_before = text[start..at].trim_end();
            let blank_next = text[at + 1..]
                .split('\n')
                .next()
                .is_some_and(|l| l.trim().is_empty());
            let ends_open = !line_before.ends_with(|c: char| c.is_alphanumeric() || c == ',');
            let short = line_before
                .lines()
                .last()
                .is_some_and(|l| l.split_whitespace().count() <= 12);
            if blank_next || (short && !ends_open) || line_before.ends_with(':') {
                end = Some(at);
            }
        }
        if let Some(e) = end {
            push_trimmed(text, start..e, &mut spans);
            start = e;
        }
        i += 1;
    }
    push_trimmed(text, start..text.len(), &mut spans);
    spans
}

fn push_trimmed(text: &str, range: Range<usize>, spans: &mut Vec<Range<usize>>) {
    let piece = &text[range.clone()];
    let lead = piece.len() - piece.trim_start().len();
    let trail = piece.len() - piece.trim_end().len();
    if lead + trail < piece.len() {
        spans.push(range.start + lead..range.end - trail);
    }
}

/// Whether the text before a period ends with an abbreviation (or a single letter, an initial).
fn is_abbreviation(before: &str) -> bool {
    let word = before
        .rsplit(|c: char| c.is_whitespace() || c == '(')
        .next()
        .unwrap_or_default()
        .to_lowercase();
    // A list number opening its line ("1." or "2.3.") numbers the sentence, it does not end one.
    let numbering = word.chars().all(|c| c.is_ascii_digit() || c == '.')
        && before
            .rsplit('\n')
            .next()
            .is_some_and(|line| line.trim() == word);
    numbering
        || (word.chars().count() == 1 && word.chars().all(char::is_alphabetic))
        || ABBREVIATIONS.contains(&word.as_str())
}

/// Word n-grams taken as the evidence of each flagged type ([`UnfairModel::evidence`] joins those
/// sharing a word, so a type lists at most this many phrases).
pub const EVIDENCE_PER_TYPE: usize = 3;

/// The fewest tokens (LexGLUE form: words and punctuation marks) of a sentence the review may
/// flag. Every one of the 7,807 shared UNFAIR-ToS rows has at least six, so the corpus left
/// shorter pieces out: headings such as "5. Limitation of liability" (five tokens) are text the
/// model never saw the like of, and its words alone would flag them.
pub const MIN_TOKENS: usize = 6;

/// The fewest words (tokens with a letter or digit) of a sentence the review may flag. Every
/// labelled row of the 7,807 shared ones has at least five ("we may amend these terms ."), and
/// none of the 59 rows of fewer carries a label: they are headings ("( d ) binding arbitration
/// ."), dates and addresses. [`MIN_TOKENS`] alone counts a heading's trailing full stop, so "5.
/// Limitation of Liability." (six tokens, four words) would pass it.
pub const MIN_WORDS: usize = 5;

/// Whether a sentence in LexGLUE's form is long enough to be flagged ([`MIN_TOKENS`],
/// [`MIN_WORDS`]).
fn long_enough(normalised: &str) -> bool {
    let tokens = normalised.split_whitespace();
    let words = tokens
        .clone()
        .filter(|t| precedent_text::has_words(t))
        .count();
    tokens.count() >= MIN_TOKENS && words >= MIN_WORDS
}

/// Reviews `text`: every sentence long enough ([`MIN_TOKENS`], [`MIN_WORDS`]) scored, the ones
/// with at least one type flagged. Fails only when the model's sentence vectors cannot be computed.
pub fn review(model: &UnfairModel, text: &str) -> anyhow::Result<TosReview> {
    let spans = sentence_spans(text);
    let pieces: Vec<&str> = spans.iter().map(|r| &text[r.clone()]).collect();
    let predictions = model.predict_all(&pieces)?;
    let char_at = precedent_text::char_offsets(text);
    let mut flagged = Vec::new();
    for (n, (span, p)) in spans.iter().zip(&predictions).enumerate() {
        if p.labels == 0 {
            continue;
        }
        let normalised = crate::normalise::normalise(&text[span.clone()]);
        if !long_enough(&normalised) {
            continue;
        }
        let mut types: Vec<TypeFlag> = label_ids(p.labels)
            .into_iter()
            .map(|id| TypeFlag {
                id,
                name: LABELS[id],
                confidence: p.confidence[id],
                evidence: model.evidence(&normalised, id, EVIDENCE_PER_TYPE),
            })
            .collect();
        types.sort_by(|a, b| b.confidence.total_cmp(&a.confidence));
        flagged.push(FlaggedSentence {
            sentence: n,
            start: char_at[span.start],
            end: char_at[span.end],
            text: text[span.clone()].to_owned(),
            types,
        });
    }
    Ok(TosReview {
        sentences: spans.len(),
        checklist: checklist(&flagged),
        flagged,
    })
}

/// The checklist of the eight types over `flagged`.
fn checklist(flagged: &[FlaggedSentence]) -> Vec<ChecklistItem> {
    (0..N_LABELS)
        .map(|id| {
            let hits: Vec<f32> = flagged
                .iter()
                .flat_map(|f| f.types.iter().filter(|t| t.id == id).map(|t| t.confidence))
                .collect();
            ChecklistItem {
                id,
                name: LABELS[id],
                present: !hits.is_empty(),
                sentences: hits.len(),
                best_confidence: hits.iter().copied().fold(0.0, f32::max),
            }
        })
        .collect()
}

impl TosReview {
    /// The review keeping only the flags of `min_confidence` or more: a sentence left with no
    /// type is no longer flagged, and the checklist counts what remains.
    ///
    /// Why a filter and not the model's thresholds: those were fitted for F1 per type (some
    /// flag at a calibrated 0.3), which suits a checklist; a reader who wants only the surest
    /// findings raises the bar without retraining.
    pub fn at_confidence(&self, min_confidence: f32) -> TosReview {
        let flagged: Vec<FlaggedSentence> = self
            .flagged
            .iter()
            .filter_map(|f| {
                let types: Vec<TypeFlag> = f
                    .types
                    .iter()
                    .filter(|t| t.confidence >= min_confidence)
                    .cloned()
                    .collect();
                (!types.is_empty()).then(|| FlaggedSentence { types, ..f.clone() })
            })
            .collect();
        TosReview {
            sentences: self.sentences,
            checklist: checklist(&flagged),
            flagged,
        }
    }
}

/// Phrases that name a document as terms of service (lowercase).
const TOS_NAMES: &[&str] = &[
    "terms of service",
    "terms of use",
    "terms and conditions",
    "user agreement",
    "end user license agreement",
    "acceptable use",
    "privacy policy",
    "by using the",
    "by accessing",
];

/// Guesses whether `text` is an online terms-of-service document rather than a negotiated
/// contract: it names itself so ([`TOS_NAMES`]) and speaks to the reader ("you", "your" at
/// least 1.5% of its words), where a contract speaks of "the parties" and "the Company".
///
/// Why a guess by words and not the classifier: a contract's limitation-of-liability or
/// governing-law clause is flagged by the UNFAIR-ToS model too, so its flags cannot tell the
/// two kinds apart; the way the text addresses its reader can. `review --kind` overrides it.
pub fn looks_like_terms_of_service(text: &str) -> bool {
    let lower = text.to_lowercase();
    let named = TOS_NAMES.iter().any(|n| lower.contains(n));
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric() && c != '\'')
        .filter(|w| !w.is_empty())
        .collect();
    if words.is_empty() {
        return false;
    }
    let second_person = words
        .iter()
        .filter(|w| matches!(**w, "you" | "your" | "yours" | "you're" | "you'll"))
        .count();
    let contract_words = words
        .iter()
        .filter(|w| matches!(**w, "hereto" | "hereinafter" | "whereas" | "witnesseth"))
        .count();
    named && second_person * 1000 >= 15 * words.len() && contract_words * 1000 < 2 * words.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_sentences_keeping_abbreviations() {
        let text =
            "Welcome to Acme Inc. and its services.  You agree to these terms, e.g. the fees! \
                    Is that \"fine?\" Yes.\n\n1. Termination\nWe may end it";
        let got: Vec<&str> = sentence_spans(text).into_iter().map(|r| &text[r]).collect();
        assert_eq!(
            got,
            vec![
                "Welcome to Acme Inc. and its services.",
                "You agree to these terms, e.g. the fees!",
                "Is that \"fine?\"",
                "Yes.",
                "1. Termination",
                "We may end it"
            ]
        );
    }

    #[test]
    fn headings_are_too_short_to_flag_even_with_a_full_stop() {
        use crate::normalise::normalise;
        for heading in [
            "5. Limitation of Liability.",
            "5. Limitation of liability",
            "(d) Binding Arbitration.",
            "Dispute Resolution & Governing Law.",
        ] {
            assert!(!long_enough(&normalise(heading)), "{heading}");
        }
        // The shortest labelled row of the shared data still passes, as written and in LexGLUE's form.
        assert!(long_enough("we may amend these terms ."));
        assert!(long_enough(&normalise("We may amend these Terms.")));
    }

    #[test]
    fn a_confidence_bar_drops_weaker_flags_and_recounts_the_checklist() {
        let flag = |id: usize, confidence: f32| TypeFlag {
            id,
            name: LABELS[id],
            confidence,
            evidence: Vec::new(),
        };
        let sentence = |n: usize, types: Vec<TypeFlag>| FlaggedSentence {
            sentence: n,
            start: 0,
            end: 1,
            text: "x".to_owned(),
            types,
        };
        let flagged = vec![
            sentence(2, vec![flag(6, 0.9), flag(5, 0.4)]),
            sentence(7, vec![flag(0, 0.3)]),
        ];
        let review = TosReview {
            sentences: 10,
            checklist: checklist(&flagged),
            flagged,
        };
        let sure = review.at_confidence(0.5);
        assert_eq!(sure.flagged.len(), 1);
        assert_eq!(sure.flagged[0].types, vec![flag(6, 0.9)]);
        let present: Vec<usize> = sure
            .checklist
            .iter()
            .filter(|c| c.present)
            .map(|c| c.id)
            .collect();
        assert_eq!(present, vec![6]);
        assert_eq!(review.at_confidence(0.0), review);
    }

    #[test]
    fn tells_terms_of_service_from_contracts() {
        let tos = "These Terms of Service govern your use of the app. By using it you agree. You may cancel your account.";
        let contract = "This Agreement is made between Acme Corp. (the \"Company\") and Beta LLC. WHEREAS the parties hereto wish to cooperate, the Company shall pay the fees. Terms and conditions apply.";
        assert!(looks_like_terms_of_service(tos));
        assert!(!looks_like_terms_of_service(contract));
    }
}
