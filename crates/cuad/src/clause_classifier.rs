//! A classifier for a clause on its own ("is this clause a Non-Compete?"), as LegalBench's CUAD
//! tasks ask: one class-balanced, strongly L2-regularised logistic regression per CUAD category
//! over hashed TF-IDF word uni/bigrams and in-word character 3-5-grams, trained on the annotated
//! spans themselves.
//!
//! Why not the contract typer ([`crate::typer`]): the typer learns from candidate spans of whole
//! contracts labelled by a noisy Jaccard match, most of them boilerplate, and its features lean on
//! where a span sits in the contract. A LegalBench row is an annotated span with no contract
//! around it, and its negatives are spans of *other* categories, so the classifier learns exactly
//! that: positives = spans annotated with the category, negatives = spans of the other categories
//! (a text annotated under several categories is positive for each). Classes are weighted to
//! balance, since the metric is balanced accuracy and most categories have a few hundred
//! positives among ~10k spans.
//!
//! Decision thresholds come with the model: [`ClauseClassifier::train`] first cross-validates
//! itself by group (contract) on its own training data and tunes each category's threshold on
//! those out-of-fold scores, so nothing shipped goes stale and nothing is tuned on a row the
//! model then scores. [`cross_validate`] nests that whole procedure inside an outer K-fold by
//! contract, which is the honest development figure.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use anyhow::{bail, Result};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use precedent_metrics::balanced_accuracy;
use precedent_text::{Analyzer, AnalyzerConfig, StopWords};

use crate::candidates::{candidates, Candidate, Kind};
use crate::categories::CATEGORIES;
use crate::dataset::CuadContract;
use crate::features::{fnv, DIM};
use crate::labels::{label, label_by_position};
use crate::legalbench::best_threshold;
use crate::typer::{shuffled, N_CATEGORIES};

/// Bumped whenever features or training change, so cached models are not reused.
pub const CLASSIFIER_VERSION: u32 = 2;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ClassifierOptions {
    pub epochs: usize,
    pub learning_rate: f32,
    /// L2 penalty per update on the weights an example touches.
    pub l2: f32,
    /// Character 3..=5-grams inside words besides the word uni/bigrams.
    pub char_ngrams: bool,
    /// Folds (by group) of the internal cross-validation that tunes the thresholds; below 2 the
    /// thresholds stay at 0.5 (the balanced-class decision point).
    pub threshold_folds: usize,
    pub seed: u64,
    /// Train also on every sentence of the contracts that matches no annotation, as a clause of
    /// no category ([`training_examples`]). Off for LegalBench, whose negatives are other
    /// categories' spans; on for the typer's second stage, which scores every candidate of a
    /// contract, most of them boilerplate the spans alone never show.
    #[serde(default)]
    pub unmatched_sentences: bool,
    /// With `unmatched_sentences`: a sentence is unmatched when it matches no annotation whose
    /// placed span it overlaps ([`crate::labels::label_by_position`], the typer's labels until
    /// 2026-11-26), rather than when its words match no annotation anywhere. See
    /// [`ClassifierOptions::for_acord`].
    #[serde(default)]
    pub unmatched_by_position: bool,
}

impl ClassifierOptions {
    /// The classifier the typer's second stage reads ([`crate::stack`]): with unmatched
    /// sentences as negatives, and no decision thresholds (only its logits are used). Measured
    /// on the nested CUAD CV (BENCHMARKS.md): pooled AUPR 61.8 → 62.4, P@80R 28.6 → 31.3 over
    /// the spans-only classifier.
    pub fn for_second_stage() -> Self {
        ClassifierOptions {
            threshold_folds: 0,
            unmatched_sentences: true,
            ..ClassifierOptions::default()
        }
    }

    /// The classifier ACORD's learned ranker reads for clause types (`precedent_learn`): as
    /// [`ClassifierOptions::for_second_stage`], but a sentence repeating an annotation's words
    /// away from it is still a negative. Why not the second stage's: on ACORD's 5-fold CV (seeds
    /// 42, 1, 2) the by-words negatives cost 0.6-0.8 NDCG@5 (82.3/82.3/82.1 -> 81.7/81.5/81.3),
    /// and the shipped ranker was trained on this classifier's scores (BENCHMARKS.md, "Short
    /// answers").
    pub fn for_acord() -> Self {
        ClassifierOptions {
            unmatched_by_position: true,
            ..ClassifierOptions::for_second_stage()
        }
    }
}

impl Default for ClassifierOptions {
    fn default() -> Self {
        // Chosen by the contract-level CV of `eval-legalbench --dev-cuad` (BENCHMARKS.md):
        // strong L2 matters most (mean 81.3 without, 92.6 at 0.1), char n-grams add ~1 point.
        ClassifierOptions {
            epochs: 8,
            learning_rate: 0.2,
            l2: 0.1,
            char_ngrams: true,
            threshold_folds: 5,
            seed: 42,
            unmatched_sentences: false,
            unmatched_by_position: false,
        }
    }
}

/// One training clause: its text, the categories it is annotated with, and the categories whose
/// answer is known (all of them for an annotated span; only the task's for a LegalBench row).
#[derive(Debug, Clone, PartialEq)]
pub struct LabelledClause {
    pub text: String,
    pub positive: u64,
    pub known: u64,
    /// Examples of one group (contract) stay in one fold when cross-validating.
    pub group: usize,
}

/// All categories known.
pub const ALL_KNOWN: u64 = (1u64 << N_CATEGORIES) - 1;

/// The annotated spans of `contracts` as training clauses: one per distinct text of a contract,
/// positive for every category it is annotated under; `group` is the contract's index.
pub fn span_examples(contracts: &[&CuadContract]) -> Vec<LabelledClause> {
    let mut out = Vec::new();
    for (ci, contract) in contracts.iter().enumerate() {
        let mut by_text: BTreeMap<String, u64> = BTreeMap::new();
        for a in &contract.annotations {
            let text = a.match_text();
            if text.trim().is_empty() {
                continue;
            }
            *by_text.entry(text).or_default() |= 1u64 << a.category;
        }
        out.extend(by_text.into_iter().map(|(text, positive)| LabelledClause {
            text,
            positive,
            known: ALL_KNOWN,
            group: ci,
        }));
    }
    out
}

/// What a classifier with `options` trains on: the annotated spans ([`span_examples`]) and,
/// with `options.unmatched_sentences`, every sentence candidate ([`crate::candidates`]) that
/// matches no annotation under CUAD's rule ([`crate::labels`]), negative for every category.
/// `group` is the contract's index.
pub fn training_examples(
    contracts: &[&CuadContract],
    options: &ClassifierOptions,
) -> Vec<LabelledClause> {
    let mut examples = span_examples(contracts);
    if options.unmatched_sentences {
        let unmatched: Vec<Vec<LabelledClause>> = contracts
            .par_iter()
            .enumerate()
            .map(|(ci, c)| {
                let candidates = candidates(&c.text);
                let labels = if options.unmatched_by_position {
                    label_by_position(c, &candidates)
                } else {
                    label(c, &candidates)
                };
                let bits = labels.candidate_bits;
                candidates
                    .iter()
                    .zip(bits)
                    .filter(|(cand, bits)| *bits == 0 && cand.kind == Kind::Sentence)
                    .map(|(cand, _)| LabelledClause {
                        text: c.text[cand.span.clone()].to_owned(),
                        positive: 0,
                        known: ALL_KNOWN,
                        group: ci,
                    })
                    .collect()
            })
            .collect();
        examples.extend(unmatched.into_iter().flatten());
    }
    examples
}

/// Sparse hashed features with their TF-IDF weights (sorted unique indices).
type Features = Vec<(u32, f32)>;

struct Featurizer {
    analyzer: Analyzer,
    char_ngrams: bool,
}

impl Featurizer {
    fn new(char_ngrams: bool) -> Self {
        Featurizer {
            analyzer: Analyzer::new(AnalyzerConfig {
                lowercase: true,
                // "not", "no", "any", "shall" carry meaning in clauses.
                stop_words: StopWords::None,
                stem: true,
                max_token_len: 40,
            }),
            char_ngrams,
        }
    }

    /// Hashed term counts of a text (word unigrams, bigrams, optionally char n-grams).
    fn counts(&self, text: &str) -> Vec<(u32, f32)> {
        let terms = self.analyzer.term_texts(text);
        let mut hashes: Vec<u32> = Vec::with_capacity(terms.len() * 2);
        for (i, t) in terms.iter().enumerate() {
            hashes.push(fnv(&["w", t]));
            if let Some(next) = terms.get(i + 1) {
                hashes.push(fnv(&["b", t, next]));
            }
        }
        if self.char_ngrams {
            for word in text
                .split(|c: char| !c.is_alphanumeric())
                .filter(|w| !w.is_empty())
            {
                let padded: Vec<char> = format!(" {} ", word.to_lowercase()).chars().collect();
                for n in 3..=5 {
                    for gram in padded.windows(n) {
                        let gram: String = gram.iter().collect();
                        hashes.push(fnv(&["c", &gram]));
                    }
                }
            }
        }
        hashes.sort_unstable();
        let mut out: Vec<(u32, f32)> = Vec::new();
        for h in hashes {
            match out.last_mut() {
                Some(last) if last.0 == h => last.1 += 1.0,
                _ => out.push((h, 1.0)),
            }
        }
        out
    }

    /// Sublinear TF times IDF, L2-normalised (a long clause does not score higher for length).
    fn features(&self, text: &str, idf: &[f32]) -> Features {
        let mut x = self.counts(text);
        for (i, v) in &mut x {
            *v = (1.0 + v.ln()) * idf[*i as usize];
        }
        let norm = x.iter().map(|(_, v)| v * v).sum::<f32>().sqrt();
        if norm > 0.0 {
            for (_, v) in &mut x {
                *v /= norm;
            }
        }
        x
    }
}

fn sigmoid(z: f32) -> f32 {
    1.0 / (1.0 + (-z).exp())
}

/// What the model file records about how it was made.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ClassifierInfo {
    pub version: u32,
    pub options: ClassifierOptions,
    pub examples: usize,
    pub positives: Vec<usize>,
    /// Per category, the decision threshold on [`ClauseClassifier::scores`] (tuned on
    /// out-of-fold scores of the training data; 0.5 when there were too few to tune).
    pub thresholds: Vec<f32>,
    /// Caller-provided description of the training data (e.g. a content hash).
    pub data: String,
}

pub struct ClauseClassifier {
    featurizer: Featurizer,
    idf: Vec<f32>,
    /// Category-major: `weights[k * DIM + i]`.
    weights: Vec<f32>,
    bias: Vec<f32>,
    info: ClassifierInfo,
}

impl std::fmt::Debug for ClauseClassifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClauseClassifier")
            .field("info", &self.info)
            .finish()
    }
}

/// Smoothed IDF (scikit-learn's `smooth_idf`): ln((1 + n) / (1 + df)) + 1.
fn fit_idf(counts: &[Vec<(u32, f32)>]) -> Vec<f32> {
    let mut df = vec![0u32; DIM];
    for x in counts {
        for &(i, _) in x {
            df[i as usize] += 1;
        }
    }
    let n = counts.len() as f32;
    df.iter()
        .map(|&d| ((1.0 + n) / (1.0 + d as f32)).ln() + 1.0)
        .collect()
}

/// Weights and bias of one category's class-balanced logistic regression (AdaGrad SGD, fixed
/// example order so training is deterministic).
fn fit_category(
    rows: &[Features],
    examples: &[&LabelledClause],
    k: usize,
    order: &[u32],
    options: &ClassifierOptions,
) -> (Vec<f32>, f32) {
    let bit = 1u64 << k;
    let known = examples.iter().filter(|e| e.known & bit != 0);
    let (mut n_pos, mut n_neg) = (0f32, 0f32);
    for e in known {
        if e.positive & bit != 0 {
            n_pos += 1.0;
        } else {
            n_neg += 1.0;
        }
    }
    let mut w = vec![0f32; DIM];
    if n_pos == 0.0 || n_neg == 0.0 {
        // Nothing to separate: a constant answer, never "yes" without a positive seen.
        return (w, if n_pos == 0.0 { -10.0 } else { 10.0 });
    }
    let total = n_pos + n_neg;
    let (w_pos, w_neg) = (total / (2.0 * n_pos), total / (2.0 * n_neg));
    let mut g2 = vec![0f32; DIM];
    let (mut b, mut b2) = (0f32, 0f32);
    for _ in 0..options.epochs {
        for &r in order {
            let e = examples[r as usize];
            if e.known & bit == 0 {
                continue;
            }
            let x = &rows[r as usize];
            let y = e.positive & bit != 0;
            let z = b + x.iter().map(|&(i, v)| w[i as usize] * v).sum::<f32>();
            let g = (sigmoid(z) - if y { 1.0 } else { 0.0 }) * if y { w_pos } else { w_neg };
            if g.abs() < 1e-5 {
                continue;
            }
            for &(i, v) in x {
                let i = i as usize;
                let gi = g * v + options.l2 * w[i];
                g2[i] += gi * gi;
                w[i] -= options.learning_rate * gi / (g2[i].sqrt() + 1e-6);
            }
            b2 += g * g;
            b -= options.learning_rate * g / (b2.sqrt() + 1e-6);
        }
    }
    (w, b)
}

/// Per category, the threshold maximising balanced accuracy on `(example, scores)` pairs; 0.5
/// where the category has no positive or no negative among them.
fn tune_thresholds(examples: &[&LabelledClause], scores: &[[f32; N_CATEGORIES]]) -> Vec<f32> {
    (0..N_CATEGORIES)
        .map(|k| {
            let bit = 1u64 << k;
            let pairs: Vec<(bool, f32)> = examples
                .iter()
                .zip(scores)
                .filter(|(e, _)| e.known & bit != 0)
                .map(|(e, s)| (e.positive & bit != 0, s[k]))
                .collect();
            let pos = pairs.iter().filter(|p| p.0).count();
            if pos == 0 || pos == pairs.len() {
                0.5
            } else {
                best_threshold(&pairs)
            }
        })
        .collect()
}

/// Fold of each distinct group: groups in order of first appearance, round-robin.
fn group_folds(examples: &[&LabelledClause], folds: usize) -> Vec<usize> {
    let mut fold_of_group: HashMap<usize, usize> = HashMap::new();
    examples
        .iter()
        .map(|e| {
            let next = fold_of_group.len();
            *fold_of_group.entry(e.group).or_insert(next % folds)
        })
        .collect()
}

impl ClauseClassifier {
    /// Trains on `examples`, with thresholds tuned on out-of-fold scores of an internal
    /// `options.threshold_folds`-fold cross-validation by group. Deterministic for given data
    /// and options. Fails on an empty training set or one without any positive.
    pub fn train(
        examples: &[LabelledClause],
        options: &ClassifierOptions,
        data: &str,
    ) -> Result<Self> {
        let refs: Vec<&LabelledClause> = examples.iter().collect();
        Self::train_refs(&refs, options, data)
    }

    fn train_refs(
        examples: &[&LabelledClause],
        options: &ClassifierOptions,
        data: &str,
    ) -> Result<Self> {
        if examples.is_empty() {
            bail!("no training clauses");
        }
        if examples.iter().all(|e| e.positive & e.known == 0) {
            bail!("no training clause is positive for any category");
        }
        let mut model = Self::fit(examples, options, data);
        let groups: std::collections::HashSet<usize> = examples.iter().map(|e| e.group).collect();
        let folds = options.threshold_folds.min(groups.len());
        if folds >= 2 {
            let fold = group_folds(examples, folds);
            let mut scores = vec![[0f32; N_CATEGORIES]; examples.len()];
            for f in 0..folds {
                let train: Vec<&LabelledClause> = examples
                    .iter()
                    .zip(&fold)
                    .filter(|(_, &g)| g != f)
                    .map(|(e, _)| *e)
                    .collect();
                let inner = Self::fit(&train, options, "threshold fold");
                for (i, e) in examples.iter().enumerate() {
                    if fold[i] == f {
                        scores[i] = inner.scores(&e.text);
                    }
                }
            }
            model.info.thresholds = tune_thresholds(examples, &scores);
        }
        Ok(model)
    }

    /// One fit without threshold tuning (thresholds 0.5).
    fn fit(examples: &[&LabelledClause], options: &ClassifierOptions, data: &str) -> Self {
        let featurizer = Featurizer::new(options.char_ngrams);
        let counts: Vec<Vec<(u32, f32)>> = examples
            .par_iter()
            .map(|e| featurizer.counts(&e.text))
            .collect();
        let idf = fit_idf(&counts);
        let rows: Vec<Features> = examples
            .par_iter()
            .map(|e| featurizer.features(&e.text, &idf))
            .collect();
        let order = shuffled(rows.len(), options.seed);
        let fitted: Vec<(Vec<f32>, f32)> = (0..N_CATEGORIES)
            .into_par_iter()
            .map(|k| fit_category(&rows, examples, k, &order, options))
            .collect();
        let positives = (0..N_CATEGORIES)
            .map(|k| {
                examples
                    .iter()
                    .filter(|e| e.positive & e.known & (1u64 << k) != 0)
                    .count()
            })
            .collect();
        let (weights, bias): (Vec<Vec<f32>>, Vec<f32>) = fitted.into_iter().unzip();
        ClauseClassifier {
            featurizer,
            idf,
            weights: weights.concat(),
            bias,
            info: ClassifierInfo {
                version: CLASSIFIER_VERSION,
                options: options.clone(),
                examples: examples.len(),
                positives,
                thresholds: vec![0.5; N_CATEGORIES],
                data: data.to_owned(),
            },
        }
    }

    pub fn info(&self) -> &ClassifierInfo {
        &self.info
    }

    /// Probability-like confidence of every category for a clause, in category order.
    pub fn scores(&self, text: &str) -> [f32; N_CATEGORIES] {
        self.logits(text).map(sigmoid)
    }

    /// [`Self::scores`] before the sigmoid (what a second model combining them should read:
    /// confident answers stay apart instead of all rounding to 1).
    pub fn logits(&self, text: &str) -> [f32; N_CATEGORIES] {
        let x = self.featurizer.features(text, &self.idf);
        let mut out = [0f32; N_CATEGORIES];
        for (k, o) in out.iter_mut().enumerate() {
            let w = &self.weights[k * DIM..(k + 1) * DIM];
            *o = self.bias[k] + x.iter().map(|&(i, v)| w[i as usize] * v).sum::<f32>();
        }
        out
    }

    /// [`Self::logits`] of each candidate span of a contract `text` (in parallel): the second
    /// stage's clause evidence ([`crate::stack`]).
    pub fn candidate_logits(
        &self,
        text: &str,
        candidates: &[Candidate],
    ) -> Vec<[f32; N_CATEGORIES]> {
        candidates
            .par_iter()
            .map(|c| self.logits(&text[c.span.clone()]))
            .collect()
    }

    /// The decision threshold of category `k`.
    pub fn threshold(&self, k: usize) -> f32 {
        self.info.thresholds.get(k).copied().unwrap_or(0.5)
    }

    /// Whether the clause is of category `k` (its confidence reaches the category's threshold).
    pub fn is_category(&self, text: &str, k: usize) -> bool {
        self.scores(text)[k] >= self.threshold(k)
    }

    const MAGIC: &'static [u8; 8] = b"PRCLAUS1";

    /// Writes the model (magic, JSON info, little-endian f32 IDF, biases and weights) atomically.
    pub fn save(&self, path: &Path) -> Result<()> {
        let floats = self
            .idf
            .iter()
            .chain(&self.bias)
            .chain(&self.weights)
            .copied();
        crate::model_file::save(path, Self::MAGIC, &self.info, floats)
    }

    pub fn load(path: &Path) -> Result<Self> {
        let (info, floats): (ClassifierInfo, Vec<f32>) =
            crate::model_file::load(path, Self::MAGIC, "clause classifier")?;
        let bad = |why: &str| {
            anyhow::anyhow!("{}: not a clause classifier model ({why})", path.display())
        };
        if info.version != CLASSIFIER_VERSION {
            bail!(
                "{}: model version {} but this build needs {CLASSIFIER_VERSION}; retrain it",
                path.display(),
                info.version
            );
        }
        if info.thresholds.len() != N_CATEGORIES {
            return Err(bad("wrong threshold count"));
        }
        if floats.len() != DIM + N_CATEGORIES + N_CATEGORIES * DIM {
            return Err(bad("wrong weight count"));
        }
        let mut floats = floats.into_iter();
        let idf: Vec<f32> = floats.by_ref().take(DIM).collect();
        let bias: Vec<f32> = floats.by_ref().take(N_CATEGORIES).collect();
        let weights: Vec<f32> = floats.collect();
        Ok(ClauseClassifier {
            featurizer: Featurizer::new(info.options.char_ngrams),
            idf,
            weights,
            bias,
            info,
        })
    }
}

/// One annotated span of a held-out contract scored by a classifier that never saw the contract.
#[derive(Debug, Clone)]
pub struct HeldOutSpan {
    pub contract: usize,
    pub category: usize,
    pub scores: [f32; N_CATEGORIES],
    /// The scoring model's thresholds (tuned without the held-out contracts).
    pub thresholds: [f32; N_CATEGORIES],
}

/// Development results of the classifier, the shape of [`crate::legalbench::DevReport`]'s
/// per-task part: balanced accuracy per category and their mean (fractions).
#[derive(Debug, Clone, Serialize)]
pub struct ClassifierDevReport {
    pub tasks: BTreeMap<String, f64>,
    pub mean: f64,
    pub positives: BTreeMap<String, usize>,
    pub folds: usize,
    pub options: ClassifierOptions,
}

/// Contract-level K-fold cross-validation: per outer fold the classifier (with its own internal
/// threshold CV) is trained on the other folds' contracts' spans only, and scores every
/// annotation of the fold's contracts. Contracts are assigned to folds round-robin by index
/// (as `eval-cuad` does), `progress(done, folds)` is told after each fold.
pub fn cross_validate(
    contracts: &[&CuadContract],
    folds: usize,
    options: &ClassifierOptions,
    extra: &[LabelledClause],
    mut progress: impl FnMut(usize, usize),
) -> Result<Vec<HeldOutSpan>> {
    if folds < 2 {
        bail!("cross-validation needs at least 2 folds, got {folds}");
    }
    let examples = span_examples(contracts);
    let mut out = Vec::new();
    for f in 0..folds {
        let train: Vec<&LabelledClause> = examples
            .iter()
            .filter(|e| e.group % folds != f)
            .chain(extra)
            .collect();
        let model = ClauseClassifier::train_refs(&train, options, &format!("cv without fold {f}"))?;
        let mut thresholds = [0.5f32; N_CATEGORIES];
        for (k, t) in thresholds.iter_mut().enumerate() {
            *t = model.threshold(k);
        }
        let held_out: Vec<(usize, usize, String)> = contracts
            .iter()
            .enumerate()
            .filter(|(ci, _)| ci % folds == f)
            .flat_map(|(ci, c)| {
                c.annotations
                    .iter()
                    .map(move |a| (ci, a.category, a.match_text()))
            })
            .collect();
        out.par_extend(
            held_out
                .into_par_iter()
                .map(|(contract, category, text)| HeldOutSpan {
                    contract,
                    category,
                    scores: model.scores(&text),
                    thresholds,
                }),
        );
        progress(f + 1, folds);
    }
    Ok(out)
}

/// Balanced accuracy per category on held-out spans, LegalBench's way: positives = spans of the
/// category, negatives = spans of the other categories, each judged against the threshold of the
/// model that scored it.
pub fn dev_report(
    spans: &[HeldOutSpan],
    folds: usize,
    options: &ClassifierOptions,
) -> ClassifierDevReport {
    let mut tasks = BTreeMap::new();
    let mut positives = BTreeMap::new();
    for (k, name) in CATEGORIES.iter().enumerate() {
        let n_pos = spans.iter().filter(|s| s.category == k).count();
        if n_pos == 0 {
            continue;
        }
        let judged = spans
            .iter()
            .map(|s| (s.category == k, s.scores[k] >= s.thresholds[k]));
        tasks.insert((*name).to_owned(), balanced_accuracy(judged).unwrap_or(0.0));
        positives.insert((*name).to_owned(), n_pos);
    }
    let mean = tasks.values().sum::<f64>() / tasks.len().max(1) as f64;
    ClassifierDevReport {
        tasks,
        mean,
        positives,
        folds,
        options: options.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clause(text: &str, category: usize, group: usize) -> LabelledClause {
        LabelledClause {
            text: text.to_owned(),
            positive: 1u64 << category,
            known: ALL_KNOWN,
            group,
        }
    }

    fn toy() -> Vec<LabelledClause> {
        let mut out = Vec::new();
        for g in 0..12 {
            out.push(clause(
                &format!("This Agreement shall be governed by the laws of State {g}."),
                7,
                g,
            ));
            out.push(clause(
                &format!("Neither party may assign this Agreement without consent, clause {g}."),
                18,
                g,
            ));
            out.push(clause(
                &format!("The Licensee shall maintain insurance coverage of {g} million."),
                34,
                g,
            ));
        }
        out
    }

    #[test]
    fn learns_a_toy_separation() {
        let model = ClauseClassifier::train(&toy(), &ClassifierOptions::default(), "toy").unwrap();
        let law = "This Agreement is governed by the laws of New York.";
        let assign = "Licensee may not assign this Agreement without prior written consent.";
        assert!(model.is_category(law, 7));
        assert!(!model.is_category(law, 18));
        assert!(model.is_category(assign, 18));
        assert!(!model.is_category(assign, 7));
        // Never seen a positive: never says yes.
        assert!(!model.is_category(law, 0));
        assert!(model.scores(law)[7] > model.scores(assign)[7]);
    }

    #[test]
    fn refuses_empty_or_positive_free_training_sets() {
        let options = ClassifierOptions::default();
        assert!(ClauseClassifier::train(&[], &options, "").is_err());
        let mut none = toy();
        for e in &mut none {
            e.positive = 0;
        }
        assert!(ClauseClassifier::train(&none, &options, "").is_err());
        // Empty text scores without panicking.
        let model = ClauseClassifier::train(&toy(), &options, "toy").unwrap();
        assert!(model.scores("").iter().all(|s| s.is_finite()));
    }

    #[test]
    fn save_and_load_round_trip() {
        let model = ClauseClassifier::train(&toy(), &ClassifierOptions::default(), "toy").unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.bin");
        model.save(&path).unwrap();
        let loaded = ClauseClassifier::load(&path).unwrap();
        assert_eq!(loaded.info(), model.info());
        let text = "governed by the laws of Delaware";
        assert_eq!(loaded.scores(text), model.scores(text));
        std::fs::write(&path, b"PRCLAUS1garbage").unwrap();
        assert!(ClauseClassifier::load(&path).is_err());
    }
}
