//! The typer's third step: re-scores each category's selected predictions of a contract by how
//! likely they are to add an answer that the more confident predictions above them have not
//! already given.
//!
//! Why: the second stage ([`crate::stack`]) estimates whether a candidate matches *some*
//! annotation. For Parties that is true of nearly every line naming "the Company", since CUAD
//! credits a prediction that contains an annotated name, so a contract's 20 Parties predictions all
//! look likely although the preamble above them already names every party. CUAD's pooled curve
//! (and a reader) gains nothing from a repeat, and every repeat that happens not to contain an
//! annotated name is a false positive: before this step Parties made 43% of all false positives at
//! 80% recall (BENCHMARKS.md, 100 predictions per question). So per (contract, category), in
//! order of second-stage confidence, each prediction gets features of what it adds: its
//! confidence, its rank, the question's best confidence, the confidence already spent above it,
//! and how much of its span, its words and its capitalised words (names) the predictions above
//! already cover. A logistic regression, per category with a shared part, is trained to tell a
//! prediction that matches an annotation no prediction above it matched (a new answer) from one
//! that matches no annotation at all (a false positive). Predictions that only repeat an answer
//! found above are left out of training: on CUAD's curve they cost nothing and gain nothing, so
//! the confidence becomes the odds of gain against cost that the pooled ranking should follow. In
//! practice repeats still score low, since a line whose names all appear above looks like the
//! false positives that do the same.
//!
//! On top of the logistic regression sit boosted regression trees ([`precedent_ml::boost`], log loss,
//! boosted from the linear logit) over the same values plus the category, the prediction's kind
//! and its length. Why: the linear step gives each category one slope per value, while what a
//! prediction ranked 6th adds depends on the category and the kind together (a second date in an
//! Effective Date question against a second sentence in an Exclusivity one), and the pooled curve
//! ranks every category's predictions against each other. Nested CV with the sentence-embedding
//! view, top 20 (BENCHMARKS.md, "Trees in the novelty step"): pooled AUPR / P@80R 71.9 / 42.4 ->
//! 72.9 / 45.9. And it re-scores more than it keeps ([`NoveltyOptions::pool`]): the second
//! stage's best 50 of a question, of which the 20 most likely new answers are kept: 73.6 / 48.2.
//!
//! Its targets come from the selected predictions' matches, so inside a cross-validation it is
//! refit per outer fold on the training contracts only (`precedent_eval::cuad`); the shipped weights sit
//! in `second_stage.json` beside the second stage's.

use std::collections::HashSet;

use precedent_ml::{fit_logistic, shuffled, sigmoid, Example, Sgd};
use serde::{Deserialize, Serialize};

use crate::candidates::Candidate;
use crate::N_CATEGORIES;
use precedent_ml::boost::{BoostOptions, Boosted};

/// Features per category and in the shared block (see [`features`]).
const PER: usize = 10;
pub const NOVELTY_DIM: usize = (N_CATEGORIES + 1) * PER;

/// Second-stage confidences are clipped to this logit before scaling.
const LOGIT_CLIP: f32 = 12.0;

/// One question's predictions as selected from second-stage confidences, most confident first.
pub struct Ranked<'a> {
    pub category: usize,
    pub text: &'a str,
    pub candidates: &'a [Candidate],
    /// Indices into `candidates`, most confident first.
    pub chosen: &'a [usize],
    /// Second-stage confidence of each chosen prediction (same order).
    pub confidence: &'a [f32],
}

/// Training settings of the novelty step.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct NoveltyOptions {
    pub epochs: usize,
    pub learning_rate: f32,
    pub l2: f32,
    pub seed: u64,
    /// Leave out of training the predictions that only repeat an answer found above (the
    /// confidence is then the chance of a new answer against a false positive, what CUAD's curve
    /// weighs); `false` makes repeats negatives. Nested CV (BENCHMARKS.md), top 20: pooled AUPR
    /// 66.5 / P@80R 32.3 left out, 65.0 / 29.2 as negatives.
    pub skip_repeats: bool,
    /// Boosted trees fitted on the linear model's residual (`None`: the linear model alone).
    #[serde(default)]
    pub trees: Option<BoostOptions>,
    /// How many of a question's best candidates (by second-stage confidence) the step re-scores,
    /// of which the selection's `top_n` most likely new answers are kept (0: `top_n`). Why more
    /// than `top_n`: the second stage fills a Parties question's 20 places with lines that repeat
    /// "the Company", and a name said only further down ("For and on behalf of Carrier 1 AG")
    /// never gets a place, while the step knows a repeat when it sees one. Files written before
    /// the field existed read as 0, as they were fitted.
    #[serde(default)]
    pub pool: usize,
}

impl Default for NoveltyOptions {
    fn default() -> Self {
        NoveltyOptions {
            epochs: 4,
            learning_rate: 0.05,
            l2: 1e-6,
            seed: 11,
            skip_repeats: true,
            // Nested CV, top 20, pooled AUPR / P@80R: none 71.9 / 42.4; 100 trees of depth 3
            // 72.7 / 44.9; these 72.9 / 45.9 (BENCHMARKS.md, "Trees in the novelty step").
            trees: Some(BoostOptions {
                trees: 300,
                max_depth: 5,
                learning_rate: 0.05,
                min_child_hessian: 5.0,
                ..BoostOptions::default()
            }),
            // With those trees, top 20: 72.9 / 45.9 re-scoring the top 20, 73.6 / 48.2 the top 50.
            pool: 50,
        }
    }
}

/// The fitted novelty step.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Novelty {
    pub options: NoveltyOptions,
    /// Training rows and positives (for the record).
    pub rows: usize,
    pub positives: usize,
    pub weights: Vec<f32>,
    /// Trees over [`tree_row`]s, added to the linear logit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trees: Option<Boosted>,
}

/// Dense features the trees read: the category, the linear features (bias left out), the
/// prediction's kind and length in words.
pub const NOVELTY_TREE_DIM: usize = PER + 2;

fn tree_row(q: &Ranked, j: usize, x: &[(u32, f32)]) -> Vec<f32> {
    let mut row = Vec::with_capacity(NOVELTY_TREE_DIM);
    row.push(q.category as f32);
    // The category's own block holds the PER values in order; the bias is the first.
    row.extend(x.iter().take(PER).skip(1).map(|&(_, v)| v));
    let c = &q.candidates[q.chosen[j]];
    row.push(c.kind.index() as f32);
    let words = q
        .text
        .get(c.span.clone())
        .map_or(0, |t| t.split_whitespace().count());
    row.push((1.0 + words as f32).ln());
    row
}

/// Lowercased words as CUAD compares them (`.,;:` dropped, `/` a space).
fn words(text: &str) -> HashSet<String> {
    text.split(|c: char| c.is_whitespace() || c == '/')
        .map(|w| {
            w.chars()
                .filter(|c| !matches!(c, '.' | ',' | ';' | ':'))
                .flat_map(char::to_lowercase)
                .collect::<String>()
        })
        .filter(|w| !w.is_empty())
        .collect()
}

/// Capitalised words (names, defined terms), punctuation and quotes trimmed, case kept.
fn names(text: &str) -> HashSet<&str> {
    text.split(|c: char| c.is_whitespace() || c == '/')
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()))
        .filter(|w| w.len() > 1 && w.chars().next().is_some_and(char::is_uppercase))
        .collect()
}

fn logit(p: f32) -> f32 {
    let p = p.clamp(1e-6, 1.0 - 1e-6);
    (p / (1.0 - p)).ln().clamp(-LOGIT_CLIP, LOGIT_CLIP)
}

/// Share of `items` found in `seen` (0 when `items` is empty).
fn covered<T: std::hash::Hash + Eq>(items: &HashSet<T>, seen: &HashSet<T>) -> f32 {
    if items.is_empty() {
        return 0.0;
    }
    items.iter().filter(|w| seen.contains(*w)).count() as f32 / items.len() as f32
}

/// The sparse features of every prediction of one question (same order as `chosen`).
fn features(q: &Ranked) -> Vec<Vec<(u32, f32)>> {
    let mut seen_words: HashSet<String> = HashSet::new();
    let mut seen_names: HashSet<&str> = HashSet::new();
    let mut spans: Vec<std::ops::Range<usize>> = Vec::new();
    let mut spent = 0f32;
    let best = q.confidence.first().map_or(-LOGIT_CLIP, |&s| logit(s));
    let mut out = Vec::with_capacity(q.chosen.len());
    for (j, (&i, &s)) in q.chosen.iter().zip(q.confidence).enumerate() {
        let span = q.candidates[i].span.clone();
        let text = q.text.get(span.clone()).unwrap_or("");
        let w = words(text);
        let n = names(text);
        // Bytes of this span inside spans above (they never nest much after IoU suppression,
        // so the sum of pairwise overlaps, capped, is close enough to the union).
        let inside: usize = spans
            .iter()
            .map(|t| span.end.min(t.end).saturating_sub(span.start.max(t.start)))
            .sum();
        let position = (inside as f32 / span.len().max(1) as f32).min(1.0);
        let values = [
            1.0,
            logit(s) / 4.0,
            (1.0 + j as f32).ln() / 3.0,
            (1.0 + spent).ln() / 2.0,
            position,
            if j == 0 {
                0.0
            } else {
                covered(&w, &seen_words)
            },
            if j == 0 {
                0.0
            } else {
                covered(&n, &seen_names)
            },
            if n.is_empty() { 1.0 } else { 0.0 },
            best / 4.0,
            (logit(s) - best) / 4.0,
        ];
        let own = (q.category * PER) as u32;
        let shared = (N_CATEGORIES * PER) as u32;
        let mut row: Vec<(u32, f32)> = Vec::with_capacity(2 * PER);
        row.extend(values.iter().enumerate().map(|(f, &v)| (own + f as u32, v)));
        row.extend(
            values
                .iter()
                .enumerate()
                .map(|(f, &v)| (shared + f as u32, v)),
        );
        out.push(row);
        spent += s;
        spans.push(span);
        seen_words.extend(w);
        seen_names.extend(n);
    }
    out
}

impl Novelty {
    /// Fits on labelled questions: per question, for each chosen prediction, the indices of the
    /// annotations it matches (CUAD's rule). A prediction is a positive when it matches an
    /// annotation that no prediction above it matched, a negative when it matches none (and,
    /// unless `options.skip_repeats`, when it only repeats). Deterministic.
    pub fn train(questions: &[(Ranked, Vec<Vec<u32>>)], options: &NoveltyOptions) -> Self {
        let mut rows: Vec<(Vec<(u32, f32)>, bool)> = Vec::new();
        let mut dense_rows: Vec<Vec<f32>> = Vec::new();
        for (q, matches) in questions {
            let mut found: HashSet<u32> = HashSet::new();
            for (j, (x, m)) in features(q).into_iter().zip(matches).enumerate() {
                let mut new = false;
                for &g in m {
                    new |= found.insert(g);
                }
                if options.skip_repeats && !new && !m.is_empty() {
                    continue;
                }
                if options.trees.is_some() {
                    dense_rows.push(tree_row(q, j, &x));
                }
                rows.push((x, new));
            }
        }
        let order = shuffled(rows.len(), options.seed);
        let sgd = Sgd::new(options.epochs, options.learning_rate, options.l2);
        let (w, _) = fit_logistic(NOVELTY_DIM, &order, &sgd, |r| {
            let (x, y) = &rows[r];
            Some(Example {
                features: x.iter().map(|&(j, v)| (j as usize, v)),
                label: *y,
                weight: 1.0,
            })
        });
        let trees = options.trees.as_ref().map(|boost| {
            let offsets: Vec<f32> = rows.iter().map(|(x, _)| linear(&w, x)).collect();
            let labels: Vec<bool> = rows.iter().map(|(_, y)| *y).collect();
            Boosted::train(&dense_rows, &labels, Some(&offsets), boost)
        });
        Novelty {
            options: options.clone(),
            rows: rows.len(),
            positives: rows.iter().filter(|(_, y)| *y).count(),
            weights: w,
            trees,
        }
    }

    /// The probability that each chosen prediction adds an answer the ones above it do not
    /// (same order as `q.chosen`).
    pub fn apply(&self, q: &Ranked) -> Vec<f32> {
        features(q)
            .iter()
            .enumerate()
            .map(|(j, x)| {
                let z = linear(&self.weights, x)
                    + self
                        .trees
                        .as_ref()
                        .map_or(0.0, |t| t.margin(&tree_row(q, j, x)));
                sigmoid(z)
            })
            .collect()
    }
}

fn linear(weights: &[f32], x: &[(u32, f32)]) -> f32 {
    x.iter()
        .map(|&(j, v)| weights.get(j as usize).copied().unwrap_or(0.0) * v)
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::candidates::Kind;

    /// Candidates over the given lines of `text` (joined by newlines), in order.
    fn lines(text: &str) -> Vec<Candidate> {
        let mut out = Vec::new();
        let mut start = 0;
        for line in text.split('\n') {
            out.push(Candidate {
                kind: Kind::Sentence,
                span: start..start + line.len(),
                context: start..start + line.len(),
            });
            start += line.len() + 1;
        }
        out
    }

    /// With a pool larger than the selection, the step re-scores the second stage's best
    /// `pool` candidates and keeps the `top_n` it prefers, which may come from beyond `top_n`.
    #[test]
    fn a_pool_lets_the_step_keep_candidates_beyond_top_n() {
        let text = "a one\nb two\nc three\nd four\ne five";
        let candidates = lines(text);
        // Second-stage confidences fall with the line; this step prefers the less confident.
        let scores: Vec<[f32; N_CATEGORIES]> = (0..5)
            .map(|i| [0.9 - 0.1 * i as f32; N_CATEGORIES])
            .collect();
        let mut weights = vec![0.0; NOVELTY_DIM];
        weights[N_CATEGORIES * PER + 1] = -4.0;
        let step = |pool| Novelty {
            options: NoveltyOptions {
                trees: None,
                pool,
                ..NoveltyOptions::default()
            },
            rows: 0,
            positives: 0,
            weights: weights.clone(),
            trees: None,
        };
        let selection = crate::selection::Selection {
            top_n: 2,
            max_overlap: None,
        };
        let kept = |pool| {
            let chosen = crate::selection::choose_with_novelty(
                text,
                &candidates,
                &scores,
                &selection,
                Some(&step(pool)),
            );
            chosen[3].candidates.clone()
        };
        assert_eq!(kept(0), vec![0, 1]);
        assert_eq!(kept(4), vec![2, 3]);
    }

    /// Where the first prediction already names both parties, a line whose names all appear
    /// above adds nothing (whether it repeats an answer or matches none), while a line with a
    /// name not seen above does: the step learns that from the coverage of names, though the
    /// second stage is equally confident of all three and their ranks vary.
    #[test]
    fn repeats_score_below_new_answers() {
        let names = ["Acme", "Beta", "Gamma", "Delta", "Omega", "Sigma"];
        let text_of = |a: &str, b: &str, n: &str| {
            format!(
                "This agreement is between {a} Corp and {b} Inc.\n{a} Corp shall pay fees to the other.\nNotices to {n} LLC go to its office.\nthe Corp shall pay fees to the Inc."
            )
        };
        let texts: Vec<String> = (0..120)
            .map(|c| text_of(names[c % 6], names[(c + 1) % 6], names[(c + 2) % 6]))
            .collect();
        let golds: Vec<Vec<String>> = (0..120)
            .map(|c| {
                let (a, b, n) = (names[c % 6], names[(c + 1) % 6], names[(c + 2) % 6]);
                vec![format!("{a} Corp"), format!("{b} Inc"), format!("{n} LLC")]
            })
            .collect();
        let candidates: Vec<Vec<Candidate>> = texts.iter().map(|t| lines(t)).collect();
        let orders = [[0usize, 1, 2, 3], [0, 1, 3, 2]];
        let confidence = [0.9f32, 0.8, 0.8, 0.8];
        let questions: Vec<(Ranked, Vec<Vec<u32>>)> = texts
            .iter()
            .zip(&candidates)
            .zip(&golds)
            .enumerate()
            .map(|(c, ((text, candidates), gold))| {
                let chosen = &orders[c % 2];
                let matches = chosen
                    .iter()
                    .map(|&i| {
                        let t = &text[candidates[i].span.clone()];
                        (0..gold.len() as u32)
                            .filter(|&g| t.contains(gold[g as usize].as_str()))
                            .collect()
                    })
                    .collect();
                (
                    Ranked {
                        category: 1,
                        text,
                        candidates,
                        chosen,
                        confidence: &confidence,
                    },
                    matches,
                )
            })
            .collect();
        let linear = NoveltyOptions {
            trees: None,
            ..NoveltyOptions::default()
        };
        let model = Novelty::train(&questions, &linear);
        // The repeats are left out of training: 3 rows per contract, 2 of them new answers.
        assert_eq!(model.rows, 360);
        assert_eq!(model.positives, 240);
        let text = text_of("Kappa", "Zeta", "Theta");
        let c = lines(&text);
        let scores = model.apply(&Ranked {
            category: 1,
            text: &text,
            candidates: &c,
            chosen: &orders[0],
            confidence: &confidence,
        });
        let new = scores[0].min(scores[2]);
        assert!(
            new > 0.8 && scores[1] < 0.5 && scores[3] < 0.5 && scores[1].max(scores[3]) < new - 0.3,
            "{scores:?}"
        );
        // Trained with repeats as negatives, they are rows too.
        let strict = Novelty::train(
            &questions,
            &NoveltyOptions {
                skip_repeats: false,
                ..linear.clone()
            },
        );
        assert_eq!(strict.rows, 480);
        // With trees on the linear model's residual: the same order, and a weight file that
        // reads back to the same scores.
        let boosted = Novelty::train(
            &questions,
            &NoveltyOptions {
                trees: Some(BoostOptions {
                    trees: 20,
                    max_depth: 3,
                    ..BoostOptions::default()
                }),
                ..NoveltyOptions::default()
            },
        );
        let ranked = Ranked {
            category: 1,
            text: &text,
            candidates: &c,
            chosen: &orders[0],
            confidence: &confidence,
        };
        let scores = boosted.apply(&ranked);
        let new = scores[0].min(scores[2]);
        assert!(
            boosted.trees.as_ref().is_some_and(|t| t.trees.len() == 20)
                && new > 0.8
                && scores[1].max(scores[3]) < new - 0.3,
            "{scores:?}"
        );
        let json = serde_json::to_string(&boosted).expect("serializes");
        let read: Novelty = serde_json::from_str(&json).expect("reads back");
        assert_eq!(read.apply(&ranked), scores);
    }
}
