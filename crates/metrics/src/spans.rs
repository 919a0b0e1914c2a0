//! Span extraction metrics as the CUAD paper (Hendrycks et al., 2021) scores them: a predicted
//! span matches an annotated one when the Jaccard similarity of their word sets is at least 0.5,
//! and the precision-recall curve pools every (contract, category) question.
//!
//! The rules, taken from CUAD's `evaluate.py`, because small differences move the numbers:
//! - **Words**: `.`, `,`, `;`, `:` are deleted, text is lowercased, `/` becomes a space, then the
//!   text is split into a *set* of words (CUAD splits on single spaces; we split on any whitespace
//!   so a double space does not create an empty "word").
//! - **Parties**: a prediction also matches when the annotated text occurs verbatim inside it
//!   (`substring_ok`), since a party name is far shorter than any sentence naming it.
//! - **Counting** ([`Matching::Cuad`]): at a confidence threshold, true positives are the
//!   *annotations* matched by at least one kept prediction, false positives are kept predictions
//!   that match no annotation, false negatives are unmatched annotations. A second prediction
//!   matching an already-found annotation is neither. [`Matching::OneToOne`] is the stricter
//!   detection-style rule (predictions by descending confidence each claim one unmatched
//!   annotation; a prediction that finds none is a false positive), reported alongside.
//! - **Curve**: one point per distinct confidence (all predictions at or above it kept), starting
//!   at (recall 0, precision 1); precision is made monotone (each point takes the best precision at
//!   equal or higher recall) before the area is taken with the trapezoid rule and before
//!   precision at a recall level is read off (first point whose recall reaches the level; 0 if the
//!   curve never reaches it).

use std::cmp::Ordering;

/// The set of words CUAD compares (sorted, deduplicated).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WordSet(Vec<String>);

impl WordSet {
    pub fn new(text: &str) -> Self {
        let cleaned: String = text
            .chars()
            .filter(|c| !matches!(c, '.' | ',' | ';' | ':'))
            .map(|c| if c == '/' { ' ' } else { c })
            .collect::<String>()
            .to_lowercase();
        let mut words: Vec<String> = cleaned.split_whitespace().map(str::to_owned).collect();
        words.sort_unstable();
        words.dedup();
        WordSet(words)
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// |A ∩ B| / |A ∪ B|; two empty sets are not similar (0).
    pub fn jaccard(&self, other: &WordSet) -> f64 {
        let (a, b) = (&self.0, &other.0);
        let (mut i, mut j, mut common) = (0, 0, 0usize);
        while i < a.len() && j < b.len() {
            match a[i].cmp(&b[j]) {
                Ordering::Less => i += 1,
                Ordering::Greater => j += 1,
                Ordering::Equal => {
                    common += 1;
                    i += 1;
                    j += 1;
                }
            }
        }
        let union = a.len() + b.len() - common;
        if union == 0 {
            0.0
        } else {
            common as f64 / union as f64
        }
    }
}

/// CUAD's match threshold on word-set Jaccard similarity.
pub const JACCARD_THRESHOLD: f64 = 0.5;

/// CUAD's Jaccard similarity of two texts' word sets.
pub fn word_jaccard(a: &str, b: &str) -> f64 {
    WordSet::new(a).jaccard(&WordSet::new(b))
}

/// Does a prediction match an annotation (Jaccard ≥ 0.5, or containment when `substring_ok`)?
pub fn span_matches(
    prediction: &str,
    prediction_words: &WordSet,
    gold: &str,
    gold_words: &WordSet,
    substring_ok: bool,
) -> bool {
    prediction_words.jaccard(gold_words) >= JACCARD_THRESHOLD
        || (substring_ok && !gold.is_empty() && prediction.contains(gold))
}

/// How predictions are credited (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Matching {
    /// CUAD's `evaluate.py`: annotations found / predictions matching nothing.
    Cuad,
    /// Each prediction, by descending confidence, claims at most one unmatched annotation.
    OneToOne,
}

/// One prediction, already matched against the annotations of its question.
#[derive(Debug, Clone, PartialEq)]
pub struct MatchedPrediction {
    pub confidence: f64,
    /// Indices (into the question's annotations) of the annotations it matches.
    pub matches: Vec<u32>,
}

/// One (contract, category) question: how many annotations it has and the scored predictions.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Question {
    pub n_gold: usize,
    pub predictions: Vec<MatchedPrediction>,
}

impl Question {
    /// Matches `predictions` (text, confidence) against `gold` texts by CUAD's rule.
    pub fn matched(gold: &[&str], predictions: &[(&str, f64)], substring_ok: bool) -> Self {
        let gold_words: Vec<WordSet> = gold.iter().map(|g| WordSet::new(g)).collect();
        let predictions = predictions
            .iter()
            .map(|(text, confidence)| {
                let words = WordSet::new(text);
                MatchedPrediction {
                    confidence: *confidence,
                    matches: (0..gold.len())
                        .filter(|&g| {
                            span_matches(text, &words, gold[g], &gold_words[g], substring_ok)
                        })
                        .map(|g| g as u32)
                        .collect(),
                }
            })
            .collect();
        Question {
            n_gold: gold.len(),
            predictions,
        }
    }
}

/// A precision-recall curve, points by increasing recall; precision as counted (not yet made
/// monotone).
#[derive(Debug, Clone, PartialEq)]
pub struct PrCurve {
    pub recall: Vec<f64>,
    pub precision: Vec<f64>,
    /// Total annotations over all questions.
    pub n_gold: usize,
}

impl PrCurve {
    /// Pools all questions and sweeps the confidence threshold from high to low.
    pub fn from_questions<'a>(
        questions: impl IntoIterator<Item = &'a Question>,
        matching: Matching,
    ) -> Self {
        let questions: Vec<&Question> = questions.into_iter().collect();
        let n_gold: usize = questions.iter().map(|q| q.n_gold).sum();
        let mut found: Vec<Vec<bool>> = questions.iter().map(|q| vec![false; q.n_gold]).collect();
        let mut order: Vec<(f64, usize, usize)> = questions
            .iter()
            .enumerate()
            .flat_map(|(qi, q)| {
                q.predictions
                    .iter()
                    .enumerate()
                    .map(move |(pi, p)| (p.confidence, qi, pi))
            })
            .collect();
        order.sort_by(|a, b| {
            b.0.partial_cmp(&a.0)
                .unwrap_or(Ordering::Equal)
                .then(a.1.cmp(&b.1))
                .then(a.2.cmp(&b.2))
        });
        let mut curve = PrCurve {
            recall: vec![0.0],
            precision: vec![1.0],
            n_gold,
        };
        let (mut tp, mut fp) = (0usize, 0usize);
        let mut i = 0;
        while i < order.len() {
            let confidence = order[i].0;
            while i < order.len() && order[i].0 == confidence {
                let (_, qi, pi) = order[i];
                let matches = &questions[qi].predictions[pi].matches;
                let found = &mut found[qi];
                match matching {
                    Matching::Cuad => {
                        if matches.is_empty() {
                            fp += 1;
                        }
                        for &g in matches {
                            if !std::mem::replace(&mut found[g as usize], true) {
                                tp += 1;
                            }
                        }
                    }
                    Matching::OneToOne => match matches.iter().find(|&&g| !found[g as usize]) {
                        Some(&g) => {
                            found[g as usize] = true;
                            tp += 1;
                        }
                        None => fp += 1,
                    },
                }
                i += 1;
            }
            if tp + fp > 0 && n_gold > 0 {
                curve.recall.push(tp as f64 / n_gold as f64);
                curve.precision.push(tp as f64 / (tp + fp) as f64);
            }
        }
        curve
    }

    /// Each precision replaced by the best precision at this or any higher recall.
    pub fn monotone_precision(&self) -> Vec<f64> {
        let mut out = self.precision.clone();
        for i in (0..out.len().saturating_sub(1)).rev() {
            out[i] = out[i].max(out[i + 1]);
        }
        out
    }

    /// Area under the (monotone) precision-recall curve, trapezoid rule; 0 without annotations.
    pub fn aupr(&self) -> f64 {
        if self.n_gold == 0 {
            return 0.0;
        }
        let precision = self.monotone_precision();
        self.recall
            .windows(2)
            .zip(precision.windows(2))
            .map(|(r, p)| (r[1] - r[0]) * (p[0] + p[1]) / 2.0)
            .sum()
    }

    /// Precision at the first point whose recall reaches `level`; 0 if none does.
    pub fn precision_at_recall(&self, level: f64) -> f64 {
        let precision = self.monotone_precision();
        self.recall
            .iter()
            .zip(precision)
            .find(|(r, _)| **r >= level - 1e-12)
            .map(|(_, p)| p)
            .unwrap_or(0.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pred(confidence: f64, matches: &[u32]) -> MatchedPrediction {
        MatchedPrediction {
            confidence,
            matches: matches.to_vec(),
        }
    }

    #[test]
    fn jaccard_follows_cuad_normalisation() {
        // "." "," ";" ":" removed, lowercased, "/" splits: {this, agreement, is, governed, by, new, york, law}
        let a = "This Agreement is governed by New York law.";
        let b = "this agreement, governed by: new/york LAW";
        // b = {this, agreement, governed, by, new, york, law}; a has also "is" -> 7/8
        assert!((word_jaccard(a, b) - 7.0 / 8.0).abs() < 1e-12);
        // Other punctuation stays attached: "(a)" and "a" differ.
        assert_eq!(word_jaccard("(a)", "a"), 0.0);
        assert_eq!(word_jaccard("", ""), 0.0);
        assert_eq!(word_jaccard("Term  Term", "term"), 1.0);
    }

    #[test]
    fn parties_match_by_containment() {
        let gold = "Pelican Delivers Inc.";
        let sentence = "This agreement is between Pelican Delivers Inc. and Acme Corp, made on ...";
        let (gw, sw) = (WordSet::new(gold), WordSet::new(sentence));
        assert!(!span_matches(sentence, &sw, gold, &gw, false));
        assert!(span_matches(sentence, &sw, gold, &gw, true));
    }

    #[test]
    fn hand_computed_curve() {
        // Question A: 2 annotations; predictions 0.9 -> gold 0, 0.8 -> nothing, 0.6 -> gold 0 again,
        // 0.3 -> gold 1. Question B: no annotation; prediction 0.7 -> false positive.
        let a = Question {
            n_gold: 2,
            predictions: vec![
                pred(0.9, &[0]),
                pred(0.8, &[]),
                pred(0.6, &[0]),
                pred(0.3, &[1]),
            ],
        };
        let b = Question {
            n_gold: 0,
            predictions: vec![pred(0.7, &[])],
        };
        let curve = PrCurve::from_questions([&a, &b], Matching::Cuad);
        // thresholds 0.9: tp1 fp0; 0.8: tp1 fp1; 0.7: tp1 fp2; 0.6: tp1 fp2 (duplicate ignored);
        // 0.3: tp2 fp2.
        assert_eq!(curve.recall, vec![0.0, 0.5, 0.5, 0.5, 0.5, 1.0]);
        assert_eq!(
            curve.precision,
            vec![1.0, 1.0, 0.5, 1.0 / 3.0, 1.0 / 3.0, 0.5]
        );
        assert_eq!(
            curve.monotone_precision(),
            vec![1.0, 1.0, 0.5, 0.5, 0.5, 0.5]
        );
        // Area: 0..0.5 at precision 1, then 0.5..1 at 0.5 -> 0.5 + 0.25.
        assert!((curve.aupr() - 0.75).abs() < 1e-12);
        assert_eq!(curve.precision_at_recall(0.5), 1.0);
        assert_eq!(curve.precision_at_recall(0.8), 0.5);

        // One-to-one: the duplicate at 0.6 is a false positive.
        let strict = PrCurve::from_questions([&a, &b], Matching::OneToOne);
        assert_eq!(*strict.precision.last().unwrap(), 2.0 / 5.0);
        assert!((strict.aupr() - (0.5 + 0.5 * 0.4)).abs() < 1e-12);
    }

    #[test]
    fn unreached_recall_scores_zero_and_ties_form_one_point() {
        let q = Question {
            n_gold: 4,
            predictions: vec![pred(0.5, &[0]), pred(0.5, &[]), pred(0.5, &[1])],
        };
        let curve = PrCurve::from_questions([&q], Matching::Cuad);
        assert_eq!(curve.recall, vec![0.0, 0.5]);
        assert_eq!(curve.precision, vec![1.0, 2.0 / 3.0]);
        assert_eq!(curve.precision_at_recall(0.8), 0.0);
        assert!((curve.aupr() - 0.5 * (1.0 + 2.0 / 3.0) / 2.0).abs() < 1e-12);
        let empty = PrCurve::from_questions(std::iter::empty(), Matching::Cuad);
        assert_eq!(empty.aupr(), 0.0);
    }

    #[test]
    fn matched_builds_match_lists() {
        let q = Question::matched(
            &["The term is one year.", "Either party may terminate."],
            &[
                ("The term is one (1) year.", 0.9),
                ("Unrelated text about payment.", 0.2),
            ],
            false,
        );
        assert_eq!(q.n_gold, 2);
        assert_eq!(q.predictions[0].matches, vec![0]);
        assert!(q.predictions[1].matches.is_empty());
    }
}
