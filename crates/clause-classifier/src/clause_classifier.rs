//! A classifier for a clause on its own ("is this clause a Non-Compete?"), as LegalBench's CUAD
//! tasks ask: one class-balanced, strongly L2-regularised logistic regression per CUAD category
//! over hashed TF-IDF word uni/bigrams and in-word character 3-5-grams, trained on the annotated
//! spans themselves.
//!
//! Why not the contract typer (`precedent_clause_types::typer`): the typer learns from candidate spans of whole
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
//!
//! With [`ClassifierOptions::view_weight`] above 0 ([`ClassifierOptions::for_legalbench`]) the
//! classifier also reads the clause's sentence embedding (MiniLM, passed in as a
//! [`SentenceEmbedder`]): a per-category logistic regression over the vector
//! ([`DenseClassifier`]), whose logit is added to the word logit with that weight. Why: the word
//! model confuses clauses that share vocabulary (an exclusivity clause and a non-compete), which
//! an embedding tells apart by paraphrase and word order; the two agree on easy rows and their
//! errors differ (BENCHMARKS.md, "A sentence view for LegalBench"). With
//! [`ClassifierOptions::neighbour_weight`] it also adds a vote of the clause's nearest training
//! spans by that vector ([`NEIGHBOURS`] of them): near-copies of a template clause recur across
//! contracts, and a neighbour that is one says more than a linear boundary. The thresholds are
//! tuned on the combined score, inside the same internal CV.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::Arc;

use anyhow::{bail, ensure, Context, Result};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use precedent_metrics::balanced_accuracy;
use precedent_ml::{fit_logistic, group_folds, round_robin_fold, shuffled, sigmoid, Example, Sgd};
use precedent_text::Analyzer;

use crate::candidates::{candidates, Candidate, Kind};
use crate::dense::{
    self, embed_in_chunks, DenseClassifier, DenseOptions, SentenceEmbedder, SENTENCE_MAX_TOKENS,
};
use crate::features::{fnv, DIM};
use crate::labels::{label, label_by_position};
use crate::legalbench::best_threshold;
use crate::N_CATEGORIES;
use precedent_cuad::categories::CATEGORIES;
use precedent_cuad::dataset::CuadContract;

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
    /// placed span it overlaps ([`crate::labels::label_by_position`], the typer's earlier labels),
    /// rather than when its words match no annotation anywhere. See
    /// [`ClassifierOptions::for_acord`].
    #[serde(default)]
    pub unmatched_by_position: bool,
    /// Weight of the sentence-embedding view's logit added to the word logit; 0 = words only.
    /// A positive weight needs a [`SentenceEmbedder`] to train and to score
    /// ([`ClauseClassifier::train_with_view`], [`ClauseClassifier::batch_scores`]). Left out of
    /// the JSON at 0, so that options without a view keep the form (and cache keys) they had.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub view_weight: f32,
    /// Weight of the nearest training spans' vote (a logit, by the same vectors) added to the
    /// word logit; 0 = no vote. Like the view, it needs a [`SentenceEmbedder`].
    #[serde(default, skip_serializing_if = "is_zero")]
    pub neighbour_weight: f32,
}

impl ClassifierOptions {
    /// The classifier the typer's second stage reads (`precedent_clause_types::stack`): with unmatched
    /// sentences as negatives, and no decision thresholds (only its logits are used). Why the
    /// unmatched sentences: the nested CUAD CV ranks it above the spans-only classifier on AUPR
    /// and precision at 80% recall (docs/experiments/cuad-typer.md).
    pub fn for_second_stage() -> Self {
        ClassifierOptions {
            threshold_folds: 0,
            unmatched_sentences: true,
            ..ClassifierOptions::default()
        }
    }

    /// The classifier ACORD's learned ranker reads for clause types (`precedent_learn`): as
    /// [`ClassifierOptions::for_second_stage`], but a sentence repeating an annotation's words
    /// away from it is still a negative. Why not the second stage's: on ACORD's 5-fold CV the
    /// by-words negatives ranked lower at each of three fold seeds, and the shipped ranker was
    /// trained on this classifier's scores (docs/experiments/ranking.md).
    pub fn for_acord() -> Self {
        ClassifierOptions {
            unmatched_by_position: true,
            ..ClassifierOptions::for_second_stage()
        }
    }

    /// The classifier `eval-legalbench` answers with: the default plus the sentence-embedding
    /// view at weight 0.25 and the nearest spans' vote at 0.25 (BENCHMARKS.md, "A sentence view
    /// for LegalBench").
    pub fn for_legalbench() -> Self {
        ClassifierOptions {
            view_weight: 0.25,
            neighbour_weight: 0.25,
            ..ClassifierOptions::default()
        }
    }

    /// Whether training and scoring need sentence vectors (a view or a neighbour vote).
    pub fn reads_vectors(&self) -> bool {
        self.view_weight > 0.0 || self.neighbour_weight > 0.0
    }
}

fn is_zero(x: &f32) -> bool {
    *x == 0.0
}

/// How the view's logistic regressions are fitted: [`DenseOptions`]' defaults with a positive
/// weight of 30, since a category has ~20-700 positive spans among ~8,000 (with words at weight
/// 0.25, the development CV's mean balanced accuracy is 94.2 at positive weight 5 and 94.7 at
/// 30; BENCHMARKS.md).
fn view_fit_options(seed: u64) -> DenseOptions {
    DenseOptions {
        positive_weight: 30.0,
        seed,
        ..DenseOptions::default()
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
            view_weight: 0.0,
            neighbour_weight: 0.0,
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
            analyzer: crate::features::clause_analyzer(),
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
    /// The sentence embedder the view was fitted on; `None`: words only (and left out of the
    /// JSON, as in files written before views existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub view: Option<ViewInfo>,
    /// The categories (bits) of each neighbour span, in the order of their vectors in the file;
    /// empty without a neighbour vote.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub neighbour_labels: Vec<u64>,
}

/// The embedder a classifier's view reads: a vector from another model (or window) would be
/// meaningless to its weights, so scoring checks it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ViewInfo {
    pub model_id: String,
    pub dim: usize,
    /// The token window texts were cut to, special tokens included.
    pub max_tokens: usize,
}

/// One CUAD category's reading of a clause ([`ClauseClassifier::types_of`]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct TypeScore {
    pub category: &'static str,
    pub confidence: f32,
    /// The cut the confidence is read against.
    pub threshold: f32,
    /// The type gate's confidence for the same category ([`ClauseClassifier::set_type_gate`]);
    /// left out without a gate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gate: Option<f32>,
    /// The type reads as likely rather than only possible ([`is_likely`]).
    pub likely: bool,
}

/// The confidence from which a listed type can read as likely rather than only possible
/// (`classify`'s text output, the web page, [`listing_report`]); fixed, not tuned.
pub const LIKELY_CONFIDENCE: f32 = 0.5;

/// Whether a type of `confidence` reads as likely: at [`LIKELY_CONFIDENCE`] or more and, with a
/// type gate's `gate` confidence, their geometric mean too (so the surer the classifier, the
/// less the gate must agree: at 0.5 the gate must say 0.5, at 0.9 only 0.28).
///
/// Why a gate: the classifier learnt from annotated spans only (LegalBench's setting) and says
/// *which* type a clause is, not *whether* it is of any; a third of held-out sentences of no
/// type got a likely type. The gate ([`ClassifierOptions::for_second_stage`]) also learnt from
/// the sentences no annotation covers. On the development CV (`eval-legalbench --dev-cuad`,
/// BENCHMARKS.md "A type gate for classify") it takes the no-type sentences with a likely type
/// from 33.6% to 17.0%, likely precision from 83.0% to 84.9%, recall from 82.1% to 78.9%.
pub fn is_likely(confidence: f32, gate: Option<f32>) -> bool {
    confidence >= LIKELY_CONFIDENCE
        && gate.is_none_or(|g| (confidence * g).max(0.0).sqrt() >= LIKELY_CONFIDENCE)
}

impl TypeScore {
    /// The confidence reaches the threshold: the clause is read as of this type.
    pub fn reached(&self) -> bool {
        self.confidence >= self.threshold
    }

    /// How the type reads, as `classify` and the web page split them: "likely" ([`is_likely`]),
    /// else "possible" at its threshold, else "no".
    pub fn mark(&self) -> &'static str {
        match (self.reached(), self.likely) {
            (true, true) => "likely",
            (true, false) => "possible",
            (false, _) => "no",
        }
    }
}

pub struct ClauseClassifier {
    featurizer: Featurizer,
    idf: Vec<f32>,
    /// Category-major: `weights[k * DIM + i]`.
    weights: Vec<f32>,
    bias: Vec<f32>,
    info: ClassifierInfo,
    /// The sentence-embedding view's regressions (with `options.view_weight`).
    view: Option<DenseClassifier>,
    /// The training spans' vectors the neighbour vote reads (with `options.neighbour_weight`),
    /// `info.neighbour_labels` holding their categories.
    neighbours: Vec<f32>,
    /// What embeds texts for the view when scoring ([`ClauseClassifier::set_sentence_embedder`]).
    embedder: Option<Arc<dyn SentenceEmbedder>>,
    /// The model whose agreement a type needs to read as likely ([`Self::set_type_gate`]).
    type_gate: Option<Arc<ClauseClassifier>>,
}

/// Unit vectors of a set of texts, each distinct text embedded once.
struct Embedded<'a> {
    dim: usize,
    vectors: Vec<f32>,
    slot: HashMap<&'a str, usize>,
}

impl<'a> Embedded<'a> {
    fn new(
        texts: impl IntoIterator<Item = &'a str>,
        embedder: &dyn SentenceEmbedder,
    ) -> Result<Self> {
        let mut slot: HashMap<&str, usize> = HashMap::new();
        let mut distinct: Vec<&str> = Vec::new();
        for t in texts {
            slot.entry(t).or_insert_with(|| {
                distinct.push(t);
                distinct.len() - 1
            });
        }
        let vectors = embed_in_chunks(&distinct, embedder, |_, _| {})?
            .into_iter()
            .flatten()
            .collect();
        Ok(Embedded {
            dim: embedder.dim(),
            vectors,
            slot,
        })
    }

    /// The vector of `text`, which must be one of the embedded texts.
    fn get(&self, text: &str) -> &[f32] {
        let i = self.slot[text];
        &self.vectors[i * self.dim..(i + 1) * self.dim]
    }

    /// The view's training input for `examples`, all of them among the embedded texts.
    fn view_data(
        &self,
        examples: &[&LabelledClause],
        embedder: &dyn SentenceEmbedder,
    ) -> ViewData<'_> {
        ViewData {
            vectors: examples.iter().map(|x| self.get(&x.text)).collect(),
            info: view_info(embedder),
        }
    }
}

fn view_info(embedder: &dyn SentenceEmbedder) -> ViewInfo {
    ViewInfo {
        model_id: embedder.model_id().to_owned(),
        dim: embedder.dim(),
        max_tokens: SENTENCE_MAX_TOKENS,
    }
}

/// The embedder a training with `options` uses: required with a view, dropped without one.
fn view_embedder(
    options: &ClassifierOptions,
    embedder: Option<Arc<dyn SentenceEmbedder>>,
) -> Result<Option<Arc<dyn SentenceEmbedder>>> {
    if options.reads_vectors() {
        ensure!(
            embedder.is_some(),
            "the classifier's options read sentence vectors (view weight {}, neighbour weight {}) but no sentence embedder was given",
            options.view_weight,
            options.neighbour_weight
        );
        Ok(embedder)
    } else {
        Ok(None)
    }
}

/// How many nearest training spans vote ([`ClassifierOptions::neighbour_weight`]): 5, 10 and 20
/// gave the same development figure within 0.1 (BENCHMARKS.md).
pub const NEIGHBOURS: usize = 10;

/// The vote of the `k` training vectors nearest `vector` (cosine; unit vectors; `labels` their
/// category bits), per category as a logit: each neighbour weighs its similarity to the 4th
/// power (a near-copy outvotes a loose paraphrase), smoothed so that no vote is certain.
pub fn neighbour_vote(
    vectors: &[f32],
    labels: &[u64],
    vector: &[f32],
    k: usize,
) -> [f32; N_CATEGORIES] {
    let dim = vector.len().max(1);
    let mut sims: Vec<(f32, usize)> = vectors
        .chunks_exact(dim)
        .enumerate()
        .map(|(j, v)| (dense::dot(v, vector), j))
        .collect();
    let k = k.min(sims.len());
    if k < sims.len() {
        sims.select_nth_unstable_by(k, |a, b| b.0.total_cmp(&a.0));
    }
    vote_logits(
        sims[..k]
            .iter()
            .map(|&(sim, j)| (sim, labels.get(j).copied().unwrap_or(0))),
    )
}

/// [`neighbour_vote`]'s logits from the chosen neighbours' `(similarity, category bits)`.
pub fn vote_logits(neighbours: impl IntoIterator<Item = (f32, u64)>) -> [f32; N_CATEGORIES] {
    let mut vote = [0f32; N_CATEGORIES];
    let mut total = 0f32;
    for (sim, bits) in neighbours {
        let w = sim.max(0.0).powi(4);
        total += w;
        for (c, v) in vote.iter_mut().enumerate() {
            if bits >> c & 1 == 1 {
                *v += w;
            }
        }
    }
    vote.map(|v| {
        let p = (v + 0.05) / (total + 0.1);
        (p / (1.0 - p)).ln()
    })
}

/// The view's training input and its embedder's description.
struct ViewData<'a> {
    /// One vector per example, aligned with the examples being fitted.
    vectors: Vec<&'a [f32]>,
    info: ViewInfo,
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
    if n_pos == 0.0 || n_neg == 0.0 {
        // Nothing to separate: a constant answer, never "yes" without a positive seen.
        return (vec![0f32; DIM], if n_pos == 0.0 { -10.0 } else { 10.0 });
    }
    let total = n_pos + n_neg;
    let (w_pos, w_neg) = (total / (2.0 * n_pos), total / (2.0 * n_neg));
    let sgd = Sgd {
        min_gradient: 1e-5,
        bias: true,
        ..Sgd::new(options.epochs, options.learning_rate, options.l2)
    };
    fit_logistic(DIM, order, &sgd, |r| {
        let e = examples[r];
        if e.known & bit == 0 {
            return None;
        }
        let label = e.positive & bit != 0;
        Some(Example {
            features: rows[r].iter().map(|&(i, v)| (i as usize, v)),
            label,
            weight: if label { w_pos } else { w_neg },
        })
    })
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

impl ClauseClassifier {
    /// Trains on `examples`, with thresholds tuned on out-of-fold scores of an internal
    /// `options.threshold_folds`-fold cross-validation by group. Deterministic for given data
    /// and options. Fails on an empty training set or one without any positive, and on options
    /// with a view ([`Self::train_with_view`] takes the embedder).
    pub fn train(
        examples: &[LabelledClause],
        options: &ClassifierOptions,
        data: &str,
    ) -> Result<Self> {
        Self::train_with_view(examples, options, data, None)
    }

    /// [`Self::train`], with the sentence-embedding view and neighbour vote per `options`: every
    /// distinct text is embedded once by `embedder`, which the returned model keeps for scoring.
    pub fn train_with_view(
        examples: &[LabelledClause],
        options: &ClassifierOptions,
        data: &str,
        embedder: Option<Arc<dyn SentenceEmbedder>>,
    ) -> Result<Self> {
        let refs: Vec<&LabelledClause> = examples.iter().collect();
        let embedder = view_embedder(options, embedder)?;
        let embedded = match &embedder {
            Some(e) => Some((
                Embedded::new(refs.iter().map(|e| e.text.as_str()), &**e)?,
                e,
            )),
            None => None,
        };
        let view = embedded.as_ref().map(|(v, e)| v.view_data(&refs, &***e));
        let mut model = Self::train_refs(&refs, options, data, view.as_ref())?;
        model.embedder = embedder;
        Ok(model)
    }

    fn train_refs(
        examples: &[&LabelledClause],
        options: &ClassifierOptions,
        data: &str,
        view: Option<&ViewData>,
    ) -> Result<Self> {
        if examples.is_empty() {
            bail!("no training clauses");
        }
        if examples.iter().all(|e| e.positive & e.known == 0) {
            bail!("no training clause is positive for any category");
        }
        let mut model = Self::fit(examples, options, data, view);
        let groups: std::collections::HashSet<usize> = examples.iter().map(|e| e.group).collect();
        let folds = options.threshold_folds.min(groups.len());
        if folds >= 2 {
            let fold = group_folds(examples.iter().map(|e| e.group), folds);
            let mut scores = vec![[0f32; N_CATEGORIES]; examples.len()];
            for f in 0..folds {
                let keep: Vec<usize> = (0..examples.len()).filter(|&i| fold[i] != f).collect();
                let train: Vec<&LabelledClause> = keep.iter().map(|&i| examples[i]).collect();
                let inner_view = view.map(|v| ViewData {
                    vectors: keep.iter().map(|&i| v.vectors[i]).collect(),
                    info: v.info.clone(),
                });
                let inner = Self::fit(&train, options, "threshold fold", inner_view.as_ref());
                for (i, e) in examples.iter().enumerate() {
                    if fold[i] == f {
                        let vector = view.map(|v| v.vectors[i]);
                        scores[i] = inner.logits_with(&e.text, vector).map(sigmoid);
                    }
                }
            }
            model.info.thresholds = tune_thresholds(examples, &scores);
        }
        Ok(model)
    }

    /// One fit without threshold tuning (thresholds 0.5).
    fn fit(
        examples: &[&LabelledClause],
        options: &ClassifierOptions,
        data: &str,
        view: Option<&ViewData>,
    ) -> Self {
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
        // The view learns "positive or not" per category; a category a row does not know
        // (a LegalBench row of another task) counts as a negative there.
        let labels: Vec<u64> = examples.iter().map(|e| e.positive & e.known).collect();
        let dense = view.filter(|_| options.view_weight > 0.0).map(|v| {
            let bits = &labels;
            let data: Vec<(&[f32], &[u64])> = v
                .vectors
                .iter()
                .zip(bits)
                .map(|(x, b)| (*x, std::slice::from_ref(b)))
                .collect();
            DenseClassifier::train(&data, v.info.dim, &view_fit_options(options.seed))
        });
        let (neighbours, neighbour_labels) = match view {
            Some(v) if options.neighbour_weight > 0.0 => (
                v.vectors.iter().flat_map(|x| x.iter().copied()).collect(),
                labels,
            ),
            _ => (Vec::new(), Vec::new()),
        };
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
                view: view.map(|v| v.info.clone()),
                neighbour_labels,
            },
            view: dense,
            neighbours,
            embedder: None,
            type_gate: None,
        }
    }

    /// Whether the model reads sentence embeddings besides words (a view or a neighbour vote).
    pub fn has_view(&self) -> bool {
        self.info.view.is_some()
    }

    /// Attaches the embedder a model with a view scores with ([`Self::batch_scores`]); refused
    /// when it is not the model (or window) the view was fitted on.
    pub fn set_sentence_embedder(&mut self, embedder: Arc<dyn SentenceEmbedder>) -> Result<()> {
        if let Some(info) = &self.info.view {
            ensure!(
                info == &view_info(&*embedder),
                "this clause classifier's view was fitted on {} ({}-d, {} tokens), not {} ({}-d, {} tokens)",
                info.model_id,
                info.dim,
                info.max_tokens,
                embedder.model_id(),
                embedder.dim(),
                SENTENCE_MAX_TOKENS
            );
        }
        self.embedder = Some(embedder);
        Ok(())
    }

    /// The word logits plus, given the text's vector, the view's logits and the neighbours'
    /// vote at the options' weights.
    fn logits_with(&self, text: &str, vector: Option<&[f32]>) -> [f32; N_CATEGORIES] {
        let mut out = self.logits(text);
        let Some(v) = vector else {
            return out;
        };
        if let Some(view) = &self.view {
            let w = self.info.options.view_weight;
            let d = view.row_logits(v);
            out.iter_mut().zip(d).for_each(|(o, d)| *o += w * d);
        }
        if !self.info.neighbour_labels.is_empty() {
            let w = self.info.options.neighbour_weight;
            let vote = neighbour_vote(&self.neighbours, &self.info.neighbour_labels, v, NEIGHBOURS);
            out.iter_mut().zip(vote).for_each(|(o, d)| *o += w * d);
        }
        out
    }

    /// [`Self::batch_scores`] before the sigmoid.
    pub fn batch_logits(&self, texts: &[&str]) -> Result<Vec<[f32; N_CATEGORIES]>> {
        let Some(info) = &self.info.view else {
            return Ok(texts.par_iter().map(|t| self.logits(t)).collect());
        };
        let embedder = self.embedder.as_ref().with_context(|| {
            format!(
                "this clause classifier also reads sentence embeddings ({}): it needs that model to score",
                info.model_id
            )
        })?;
        let embedded = Embedded::new(texts.iter().copied(), &**embedder)?;
        Ok(texts
            .par_iter()
            .map(|t| self.logits_with(t, Some(embedded.get(t))))
            .collect())
    }

    /// Confidences of every category for each of `texts`, with the view when the model has one
    /// (embedding the texts in one batch). The thresholds ([`Self::threshold`]) apply to these.
    pub fn batch_scores(&self, texts: &[&str]) -> Result<Vec<[f32; N_CATEGORIES]>> {
        Ok(self
            .batch_logits(texts)?
            .into_iter()
            .map(|l| l.map(sigmoid))
            .collect())
    }

    pub fn info(&self) -> &ClassifierInfo {
        &self.info
    }

    /// Probability-like confidence of every category for a clause, in category order, from its
    /// words alone (a model with a view answers with [`Self::batch_scores`]).
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
    /// stage's clause evidence (`precedent_clause_types::stack`).
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

    /// Attaches a type gate: a classifier that also learnt from sentences of no CUAD type
    /// ([`ClassifierOptions::for_second_stage`]), whose agreement a type needs to read as likely
    /// in [`Self::types_of`] ([`is_likely`]). It reads words only, so it adds little time.
    pub fn set_type_gate(&mut self, gate: Arc<ClauseClassifier>) -> Result<()> {
        ensure!(
            !gate.info.options.reads_vectors(),
            "the type gate must be a words-only classifier ({:?})",
            gate.info.options
        );
        ensure!(
            gate.type_gate.is_none(),
            "the type gate has a gate of its own"
        );
        self.type_gate = Some(gate);
        Ok(())
    }

    /// Whether a type gate is attached ([`Self::set_type_gate`]).
    pub fn has_type_gate(&self) -> bool {
        self.type_gate.is_some()
    }

    /// The CUAD types of each of `texts` as a lawyer reads them (`precedent classify`,
    /// `/v1/classify`): the categories whose confidence reaches their threshold (`threshold`
    /// for every category instead of each one's own), every category with `all`, most
    /// confident first, each marked likely or not ([`is_likely`], with the type gate's
    /// confidence when one is attached).
    pub fn types_of(
        &self,
        texts: &[&str],
        threshold: Option<f32>,
        all: bool,
    ) -> Result<Vec<Vec<TypeScore>>> {
        if let Some(t) = threshold {
            ensure!(
                (0.0..=1.0).contains(&t),
                "the threshold is a confidence between 0 and 1, got {t}"
            );
        }
        let gates: Vec<Option<[f32; N_CATEGORIES]>> = match &self.type_gate {
            Some(gate) => texts.par_iter().map(|t| Some(gate.scores(t))).collect(),
            None => vec![None; texts.len()],
        };
        Ok(self
            .batch_scores(texts)?
            .iter()
            .zip(gates)
            .map(|(scores, gates)| {
                let mut types: Vec<TypeScore> = CATEGORIES
                    .iter()
                    .zip(scores)
                    .enumerate()
                    .map(|(k, (&category, &confidence))| {
                        let gate = gates.map(|g| g[k]);
                        TypeScore {
                            category,
                            confidence,
                            threshold: threshold.unwrap_or_else(|| self.threshold(k)),
                            gate,
                            likely: is_likely(confidence, gate),
                        }
                    })
                    .filter(|t| all || t.reached())
                    .collect();
                types.sort_by(|a, b| b.confidence.total_cmp(&a.confidence));
                types
            })
            .collect())
    }

    /// Whether the clause is of category `k` (its confidence reaches the category's threshold).
    pub fn is_category(&self, text: &str, k: usize) -> bool {
        self.scores(text)[k] >= self.threshold(k)
    }

    const MAGIC: &'static [u8; 8] = b"PRCLAUS1";

    /// Writes the model (magic, JSON info, little-endian f32 IDF, biases and weights, then the
    /// view's mean, weights and biases, then the neighbours' vectors) atomically.
    pub fn save(&self, path: &Path) -> Result<()> {
        let view = self
            .view
            .iter()
            .flat_map(|v| v.mean.iter().chain(&v.weights).chain(&v.bias));
        let floats = self
            .idf
            .iter()
            .chain(&self.bias)
            .chain(&self.weights)
            .chain(view)
            .chain(&self.neighbours)
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
        let view_dim = info.view.as_ref().map_or(0, |v| v.dim);
        if info.view.is_some() && view_dim == 0 {
            return Err(bad("a view of 0 dimensions"));
        }
        if info.options.reads_vectors() != info.view.is_some()
            || info.neighbour_labels.is_empty() == (info.options.neighbour_weight > 0.0)
        {
            return Err(bad("options and sentence view disagree"));
        }
        let view_floats = if info.options.view_weight > 0.0 {
            view_dim + N_CATEGORIES * view_dim + N_CATEGORIES
        } else {
            0
        };
        let neighbour_floats = info.neighbour_labels.len() * view_dim;
        if floats.len() != DIM + N_CATEGORIES + N_CATEGORIES * DIM + view_floats + neighbour_floats
        {
            return Err(bad("wrong weight count"));
        }
        let mut floats = floats.into_iter();
        let idf: Vec<f32> = floats.by_ref().take(DIM).collect();
        let bias: Vec<f32> = floats.by_ref().take(N_CATEGORIES).collect();
        let weights: Vec<f32> = floats.by_ref().take(N_CATEGORIES * DIM).collect();
        let view = (view_floats > 0).then(|| DenseClassifier {
            dim: view_dim,
            mean: floats.by_ref().take(view_dim).collect(),
            weights: floats.by_ref().take(N_CATEGORIES * view_dim).collect(),
            bias: floats.by_ref().take(N_CATEGORIES).collect(),
        });
        if let Some(v) = &view {
            v.validate()
                .map_err(|e| bad(&format!("its sentence view: {e}")))?;
        }
        let neighbours: Vec<f32> = floats.collect();
        Ok(ClauseClassifier {
            featurizer: Featurizer::new(info.options.char_ngrams),
            idf,
            weights,
            bias,
            info,
            view,
            neighbours,
            embedder: None,
            type_gate: None,
        })
    }
}

/// One annotated span of a held-out contract scored by a classifier that never saw the contract.
#[derive(Debug, Clone)]
pub struct HeldOutSpan {
    pub contract: usize,
    pub category: usize,
    /// Every category the contract annotates this same text with (`category` among them): a
    /// text annotated under several categories is one LegalBench row per category, and one
    /// clause to a lawyer.
    pub labels: u64,
    pub scores: [f32; N_CATEGORIES],
    /// The scoring model's thresholds (tuned without the held-out contracts).
    pub thresholds: [f32; N_CATEGORIES],
    /// The annotated text.
    pub text: String,
    /// Scores of a gate model that also learnt from unmatched sentences
    /// ([`cross_validate_gate`]); `None` until one scored it.
    pub gate: Option<[f32; N_CATEGORIES]>,
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
    embedder: Option<Arc<dyn SentenceEmbedder>>,
    progress: impl FnMut(usize, usize),
) -> Result<Vec<HeldOutSpan>> {
    let (spans, _) =
        cross_validate_with_unannotated(contracts, folds, options, extra, &[], embedder, progress)?;
    Ok(spans)
}

/// A text of a held-out contract that no annotation covers, scored by a classifier that never
/// saw the contract: what `classify` says of a clause of no CUAD type.
#[derive(Debug, Clone)]
pub struct HeldOutUnannotated {
    pub contract: usize,
    pub scores: [f32; N_CATEGORIES],
    pub thresholds: [f32; N_CATEGORIES],
    pub text: String,
    /// As [`HeldOutSpan::gate`].
    pub gate: Option<[f32; N_CATEGORIES]>,
}

/// Up to `per_contract` sentences of each contract (index into `contracts`) that overlap no
/// placed annotation, spread evenly through the contract, of at least 8 words. An annotation of
/// pieces covers its pieces only: what lies between a preamble date and a closing sentence
/// joined by `<omitted>` is not annotated.
pub fn unannotated_sentences(
    contracts: &[&CuadContract],
    per_contract: usize,
) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (ci, contract) in contracts.iter().enumerate() {
        let annotated: Vec<std::ops::Range<usize>> = contract
            .annotations
            .iter()
            .flat_map(|a| a.pieces.iter().cloned())
            .collect();
        let free: Vec<&str> = candidates(&contract.text)
            .into_iter()
            .filter(|c| c.kind == Kind::Sentence)
            .filter(|c| {
                !annotated
                    .iter()
                    .any(|a| a.start < c.span.end && c.span.start < a.end)
            })
            .filter_map(|c| contract.text.get(c.span))
            .filter(|t| t.split_whitespace().count() >= 8)
            .collect();
        let step = (free.len() / per_contract.max(1)).max(1);
        out.extend(
            free.iter()
                .step_by(step)
                .take(per_contract)
                .map(|t| (ci, (*t).to_owned())),
        );
    }
    out
}

/// [`cross_validate`], also scoring `unannotated` texts (contract index, text) with the model of
/// their contract's fold.
pub fn cross_validate_with_unannotated(
    contracts: &[&CuadContract],
    folds: usize,
    options: &ClassifierOptions,
    extra: &[LabelledClause],
    unannotated: &[(usize, String)],
    embedder: Option<Arc<dyn SentenceEmbedder>>,
    mut progress: impl FnMut(usize, usize),
) -> Result<(Vec<HeldOutSpan>, Vec<HeldOutUnannotated>)> {
    if folds < 2 {
        bail!("cross-validation needs at least 2 folds, got {folds}");
    }
    let examples = span_examples(contracts);
    let held_out_texts: Vec<String> = contracts
        .iter()
        .flat_map(|c| c.annotations.iter().map(|a| a.match_text()))
        .collect();
    // Every text (training and held out) is embedded once, up front.
    let embedder = view_embedder(options, embedder)?;
    let embedded = match &embedder {
        Some(e) => Some((
            Embedded::new(
                examples
                    .iter()
                    .chain(extra)
                    .map(|x| x.text.as_str())
                    .chain(held_out_texts.iter().map(String::as_str))
                    .chain(unannotated.iter().map(|(_, t)| t.as_str())),
                &**e,
            )?,
            e,
        )),
        None => None,
    };
    let vector = |text: &str| embedded.as_ref().map(|(v, _)| v.get(text));
    let mut out = Vec::new();
    let mut free = Vec::new();
    for f in 0..folds {
        let train: Vec<&LabelledClause> = examples
            .iter()
            .filter(|e| round_robin_fold(e.group, folds) != f)
            .chain(extra)
            .collect();
        let view = embedded.as_ref().map(|(v, e)| v.view_data(&train, &***e));
        let model = ClauseClassifier::train_refs(
            &train,
            options,
            &format!("cv without fold {f}"),
            view.as_ref(),
        )?;
        let mut thresholds = [0.5f32; N_CATEGORIES];
        for (k, t) in thresholds.iter_mut().enumerate() {
            *t = model.threshold(k);
        }
        let held_out: Vec<(usize, usize, String, u64)> = contracts
            .iter()
            .enumerate()
            .filter(|&(ci, _)| round_robin_fold(ci, folds) == f)
            .flat_map(|(ci, c)| {
                let mut labels: HashMap<String, u64> = HashMap::new();
                for a in &c.annotations {
                    *labels.entry(a.match_text()).or_default() |= 1u64 << a.category;
                }
                c.annotations.iter().map(move |a| {
                    let text = a.match_text();
                    let bits = labels.get(&text).copied().unwrap_or(1u64 << a.category);
                    (ci, a.category, text, bits)
                })
            })
            .collect();
        out.par_extend(
            held_out
                .into_par_iter()
                .map(|(contract, category, text, labels)| HeldOutSpan {
                    contract,
                    category,
                    labels,
                    scores: model.logits_with(&text, vector(&text)).map(sigmoid),
                    thresholds,
                    text,
                    gate: None,
                }),
        );
        free.par_extend(
            unannotated
                .par_iter()
                .filter(|(ci, _)| round_robin_fold(*ci, folds) == f)
                .map(|(contract, text)| HeldOutUnannotated {
                    contract: *contract,
                    scores: model.logits_with(text, vector(text)).map(sigmoid),
                    thresholds,
                    text: text.clone(),
                    gate: None,
                }),
        );
        progress(f + 1, folds);
    }
    Ok((out, free))
}

/// Fills the `gate` of held-out spans and sentences from [`cross_validate_with_unannotated`]
/// (same `contracts` and `folds`): per outer fold, a words-only classifier with `options`
/// (one that learns from unmatched sentences, e.g. [`ClassifierOptions::for_second_stage`]) is
/// trained on the other folds' contracts' [`training_examples`] and scores the fold's texts.
/// Why: the LegalBench classifier learnt from annotated spans only, so it says which type a
/// clause is but not whether it is of any; the gate has seen the boilerplate no annotation
/// covers.
pub fn cross_validate_gate(
    contracts: &[&CuadContract],
    folds: usize,
    options: &ClassifierOptions,
    spans: &mut [HeldOutSpan],
    unannotated: &mut [HeldOutUnannotated],
    mut progress: impl FnMut(usize, usize),
) -> Result<()> {
    ensure!(
        folds >= 2,
        "cross-validation needs at least 2 folds, got {folds}"
    );
    ensure!(
        !options.reads_vectors(),
        "the gate is a words-only classifier"
    );
    let examples = training_examples(contracts, options);
    for f in 0..folds {
        let train: Vec<&LabelledClause> = examples
            .iter()
            .filter(|e| round_robin_fold(e.group, folds) != f)
            .collect();
        let model =
            ClauseClassifier::train_refs(&train, options, &format!("gate without fold {f}"), None)?;
        spans
            .par_iter_mut()
            .filter(|s| round_robin_fold(s.contract, folds) == f)
            .for_each(|s| s.gate = Some(model.logits(&s.text).map(sigmoid)));
        unannotated
            .par_iter_mut()
            .filter(|u| round_robin_fold(u.contract, folds) == f)
            .for_each(|u| u.gate = Some(model.logits(&u.text).map(sigmoid)));
        progress(f + 1, folds);
    }
    Ok(())
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

/// How the held-out spans' types read as `precedent classify` lists them: a lawyer's view of
/// the development CV, beside LegalBench's balanced accuracy per task. Each distinct annotated
/// text counts once, its truth every category the contract annotates it with; a listed type
/// outside those counts as wrong.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ListingReport {
    /// Distinct annotated texts.
    pub clauses: usize,
    /// The most confident type is one of the annotated ones.
    pub top_type_right: f64,
    /// The types read as likely ([`is_likely`]), with the type gate's scores when every text
    /// has them ([`cross_validate_gate`]).
    pub likely: LikelyFigures,
    /// The same without the gate (0.5 and up), when the gate was there.
    pub likely_without_gate: Option<LikelyFigures>,
    /// Types at their own category's threshold (what `classify` lists).
    pub listed_precision: f64,
    pub listed_recall: f64,
    pub listed_per_clause: f64,
    /// Held-out sentences no annotation covers ([`unannotated_sentences`]), and the share of
    /// them that get any listed type.
    pub unannotated: usize,
    pub unannotated_with_listed: f64,
}

/// How the likely types read ([`ListingReport::likely`]): the share that are right, the share
/// of the annotated (clause, category) pairs among them, how many a clause gets, and the share
/// of the held-out sentences of no type that get one.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LikelyFigures {
    pub precision: f64,
    pub recall: f64,
    pub per_clause: f64,
    pub unannotated_with_likely: f64,
}

/// [`ListingReport`] of held-out spans and unannotated held-out sentences.
pub fn listing_report(spans: &[HeldOutSpan], unannotated: &[HeldOutUnannotated]) -> ListingReport {
    let share = |a: usize, b: usize| if b == 0 { 0.0 } else { a as f64 / b as f64 };
    // A text annotated under k categories is k spans with the same scores: read it once, at
    // its lowest category.
    let distinct: Vec<&HeldOutSpan> = spans
        .iter()
        .filter(|s| s.labels.trailing_zeros() as usize == s.category)
        .collect();
    let clauses = distinct.len();
    let truths: usize = distinct
        .iter()
        .map(|s| s.labels.count_ones() as usize)
        .sum();
    let is_truth = |s: &HeldOutSpan, k: usize| s.labels >> k & 1 == 1;
    let top = distinct
        .iter()
        .filter(|s| {
            s.scores
                .iter()
                .enumerate()
                .max_by(|a, b| a.1.total_cmp(b.1))
                .is_some_and(|(k, _)| is_truth(s, k))
        })
        .count();
    let (mut listed, mut listed_right) = (0, 0);
    for s in &distinct {
        for (k, (&score, &threshold)) in s.scores.iter().zip(&s.thresholds).enumerate() {
            if score >= threshold {
                listed += 1;
                listed_right += usize::from(is_truth(s, k));
            }
        }
    }
    let likely_figures = |gated: bool| {
        let gate = |g: &Option<[f32; N_CATEGORIES]>, k: usize| g.filter(|_| gated).map(|g| g[k]);
        let (mut likely, mut right) = (0, 0);
        for s in &distinct {
            for (k, &score) in s.scores.iter().enumerate() {
                if is_likely(score, gate(&s.gate, k)) {
                    likely += 1;
                    right += usize::from(is_truth(s, k));
                }
            }
        }
        let free = unannotated
            .iter()
            .filter(|u| (0..N_CATEGORIES).any(|k| is_likely(u.scores[k], gate(&u.gate, k))))
            .count();
        LikelyFigures {
            precision: share(right, likely),
            recall: share(right, truths),
            per_clause: share(likely, clauses),
            unannotated_with_likely: share(free, unannotated.len()),
        }
    };
    let gated = !distinct.is_empty()
        && distinct.iter().all(|s| s.gate.is_some())
        && unannotated.iter().all(|u| u.gate.is_some());
    ListingReport {
        clauses,
        top_type_right: share(top, clauses),
        likely: likely_figures(gated),
        likely_without_gate: gated.then(|| likely_figures(false)),
        listed_precision: share(listed_right, listed),
        listed_recall: share(listed_right, truths),
        listed_per_clause: share(listed, clauses),
        unannotated: unannotated.len(),
        unannotated_with_listed: share(
            unannotated
                .iter()
                .filter(|u| u.scores.iter().zip(&u.thresholds).any(|(x, t)| x >= t))
                .count(),
            unannotated.len(),
        ),
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

    /// Embeds a text as hashed word counts in 16 dimensions (a stand-in for MiniLM).
    struct Words(&'static str);

    impl SentenceEmbedder for Words {
        fn embed_sentences(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
            Ok(texts
                .iter()
                .map(|t| {
                    let mut v = vec![0f32; 16];
                    for w in t.split_whitespace() {
                        v[fnv(&["t", &w.to_lowercase()]) as usize % 16] += 1.0;
                    }
                    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-6);
                    v.iter_mut().for_each(|x| *x /= n);
                    v
                })
                .collect())
        }
        fn dim(&self) -> usize {
            16
        }
        fn model_id(&self) -> &str {
            self.0
        }
    }

    #[test]
    fn a_sentence_view_is_trained_scored_saved_and_checked() {
        let options = ClassifierOptions::for_legalbench();
        // Options with a view and no embedder: a clear refusal, not a silent word-only model.
        let err = ClauseClassifier::train(&toy(), &options, "toy").unwrap_err();
        assert!(format!("{err:#}").contains("sentence embedder"), "{err:#}");

        let model =
            ClauseClassifier::train_with_view(&toy(), &options, "toy", Some(Arc::new(Words("w"))))
                .unwrap();
        assert!(model.has_view());
        let law = "This Agreement is governed by the laws of New York.";
        let assign = "Licensee may not assign this Agreement without prior written consent.";
        let scores = model.batch_scores(&[law, assign]).unwrap();
        assert!(scores[0][7] >= model.threshold(7) && scores[0][18] < model.threshold(18));
        assert!(scores[1][18] >= model.threshold(18) && scores[1][7] < model.threshold(7));
        // The view moves the score away from the words' alone.
        assert_ne!(scores[0], model.scores(law));

        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("view.bin");
        model.save(&path).unwrap();
        let mut loaded = ClauseClassifier::load(&path).unwrap();
        assert_eq!(loaded.info(), model.info());
        // Loaded without its embedder, it refuses to score rather than drop the view.
        assert!(loaded.batch_scores(&[law]).is_err());
        assert!(loaded
            .set_sentence_embedder(Arc::new(Words("other")))
            .is_err());
        loaded.set_sentence_embedder(Arc::new(Words("w"))).unwrap();
        assert_eq!(loaded.batch_scores(&[law, assign]).unwrap(), scores);

        // A word-only model scores in batch as one at a time, and needs no embedder.
        let words = ClauseClassifier::train(&toy(), &ClassifierOptions::default(), "toy").unwrap();
        assert!(!words.has_view());
        assert_eq!(words.batch_scores(&[law]).unwrap(), vec![words.scores(law)]);
        // Its options serialise as before views existed (cache keys unchanged).
        let json = serde_json::to_string(&ClassifierOptions::default()).unwrap();
        assert!(!json.contains("view"), "{json}");
    }

    #[test]
    fn likely_needs_the_gate_to_agree() {
        assert!(is_likely(0.5, None) && !is_likely(0.49, None));
        assert!(is_likely(0.5, Some(0.5)) && !is_likely(0.5, Some(0.49)));
        // The surer the classifier, the less the gate must agree.
        assert!(is_likely(0.9, Some(0.28)) && !is_likely(0.9, Some(0.27)));
        // The gate alone never makes a type likely.
        assert!(!is_likely(0.45, Some(1.0)));
    }

    #[test]
    fn types_of_reads_the_type_gate() {
        let examples = toy();
        let options = ClassifierOptions {
            threshold_folds: 0,
            ..ClassifierOptions::default()
        };
        let mut model = ClauseClassifier::train(&examples, &options, "toy").unwrap();
        let law = "This Agreement shall be governed by the laws of State 99.";
        let ungated = model.types_of(&[law], None, true).unwrap();
        assert!(ungated[0]
            .iter()
            .all(|t| t.gate.is_none() && t.likely == (t.confidence >= LIKELY_CONFIDENCE)));
        // A gate that has also seen boilerplate as no type.
        let mut gate_examples = examples.clone();
        for g in 0..12 {
            gate_examples.push(LabelledClause {
                text: format!("The headings of this Agreement are for convenience only, part {g}."),
                positive: 0,
                known: ALL_KNOWN,
                group: g,
            });
        }
        let gate = ClauseClassifier::train(&gate_examples, &options, "toy gate").unwrap();
        model.set_type_gate(Arc::new(gate)).unwrap();
        assert!(model.has_type_gate());
        let gated = model.types_of(&[law], None, true).unwrap();
        assert_eq!(gated[0].len(), N_CATEGORIES);
        for t in &gated[0] {
            let gate = t.gate.expect("the gate's confidence");
            assert_eq!(t.likely, is_likely(t.confidence, Some(gate)));
        }
        assert_eq!(gated[0][0].category, CATEGORIES[7]);
        assert!(gated[0][0].likely, "{:?}", gated[0][0]);
        // A gate with a gate of its own is refused.
        let mut nested = ClauseClassifier::train(&examples, &options, "toy").unwrap();
        let inner = ClauseClassifier::train(&examples, &options, "toy").unwrap();
        nested.set_type_gate(Arc::new(inner)).unwrap();
        let mut outer = ClauseClassifier::train(&examples, &options, "toy").unwrap();
        assert!(outer.set_type_gate(Arc::new(nested)).is_err());
    }

    #[test]
    fn listing_report_counts_types_as_classify_lists_them() {
        let span = |category: usize, labels: u64, high: &[(usize, f32)]| {
            let mut scores = [0.01f32; N_CATEGORIES];
            for &(k, v) in high {
                scores[k] = v;
            }
            HeldOutSpan {
                contract: 0,
                category,
                labels,
                scores,
                thresholds: [0.2; N_CATEGORIES],
                text: String::new(),
                gate: None,
            }
        };
        let both = 1 << 4 | 1 << 5;
        let spans = [
            // Right and alone.
            span(3, 1 << 3, &[(3, 0.9)]),
            // One text annotated twice (two LegalBench rows, one clause): both types listed,
            // one likely.
            span(4, both, &[(4, 0.7), (5, 0.3)]),
            span(5, both, &[(4, 0.7), (5, 0.3)]),
            // Wrong on top; the right type only possible.
            span(6, 1 << 6, &[(7, 0.8), (6, 0.4)]),
        ];
        let free = |high: f32| HeldOutUnannotated {
            contract: 0,
            scores: [high; N_CATEGORIES],
            thresholds: [0.2; N_CATEGORIES],
            text: String::new(),
            gate: None,
        };
        let report = listing_report(&spans, &[free(0.1), free(0.3), free(0.6), free(0.01)]);
        assert_eq!(report.clauses, 3);
        assert!((report.top_type_right - 2.0 / 3.0).abs() < 1e-9);
        assert!((report.likely.precision - 2.0 / 3.0).abs() < 1e-9);
        assert!((report.likely.recall - 2.0 / 4.0).abs() < 1e-9);
        assert!((report.listed_precision - 4.0 / 5.0).abs() < 1e-9);
        assert!((report.listed_recall - 1.0).abs() < 1e-9);
        assert!((report.listed_per_clause - 5.0 / 3.0).abs() < 1e-9);
        assert_eq!(report.unannotated, 4);
        assert!((report.likely.unannotated_with_likely - 0.25).abs() < 1e-9);
        assert!((report.unannotated_with_listed - 0.5).abs() < 1e-9);
        assert_eq!(report.likely_without_gate, None);

        // With a gate: a type reads as likely only when the gate agrees enough.
        let gated = |mut s: HeldOutSpan, gate: f32| {
            s.gate = Some([gate; N_CATEGORIES]);
            s
        };
        let spans = [
            gated(spans[0].clone(), 0.9),
            gated(spans[1].clone(), 0.2),
            gated(spans[2].clone(), 0.2),
            gated(spans[3].clone(), 0.9),
        ];
        let free = |high: f32, gate: f32| HeldOutUnannotated {
            gate: Some([gate; N_CATEGORIES]),
            ..free(high)
        };
        let report = listing_report(&spans, &[free(0.6, 0.1), free(0.6, 0.5)]);
        // Clause 1 keeps its likely type, clause 2 loses it (0.7 x 0.2 < 0.25), clause 3 keeps
        // its wrong one.
        assert!((report.likely.precision - 1.0 / 2.0).abs() < 1e-9);
        assert!((report.likely.recall - 1.0 / 4.0).abs() < 1e-9);
        assert!((report.likely.unannotated_with_likely - 0.5).abs() < 1e-9);
        let without = report
            .likely_without_gate
            .expect("figures without the gate");
        assert!((without.precision - 2.0 / 3.0).abs() < 1e-9);
        assert!((without.unannotated_with_likely - 1.0).abs() < 1e-9);
    }

    #[test]
    fn the_nearest_spans_vote_for_their_categories() {
        // Twelve spans of category 3 near (1, 0), twelve of category 5 near (0, 1).
        let mut vectors = Vec::new();
        let mut labels = Vec::new();
        for i in 0..12 {
            let a = 0.01 * i as f32;
            vectors.extend([(1.0 - a * a).sqrt(), a]);
            labels.push(1u64 << 3);
            vectors.extend([a, (1.0 - a * a).sqrt()]);
            labels.push(1u64 << 5);
        }
        let vote = neighbour_vote(&vectors, &labels, &[0.995, 0.0999], NEIGHBOURS);
        assert!(vote[3] > 2.0 && vote[5] < -2.0, "{vote:?}");
        // No category among the neighbours: a clear no, never NaN.
        assert!(vote[0] < -2.0 && vote.iter().all(|v| v.is_finite()));
        // Fewer spans than NEIGHBOURS: all of them vote.
        let few = neighbour_vote(&vectors[..4], &labels[..2], &[0.0, 1.0], NEIGHBOURS);
        assert!(few[5] > 0.0 && few.iter().all(|v| v.is_finite()));
    }
}
