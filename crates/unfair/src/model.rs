//! The UNFAIR-ToS classifier: per label, a linear SVM over the sentence's TF-IDF
//! ([`crate::features`], [`crate::svm`]), a decision threshold on its margin, and a Platt
//! sigmoid that turns the margin into the confidence a reviewer sees.
//!
//! Thresholds and sigmoids are fitted on out-of-fold margins: the training rows are cut into
//! contiguous blocks ([`block_folds`]) and each block is scored by SVMs trained on the others.
//! Contiguous because consecutive rows come from one company's terms: a random split would put
//! sentences of the same document (often near-copies of each other) on both sides, and the
//! thresholds would be tuned on margins far more confident than the ones a new company's terms
//! get. The final SVMs are then trained on every row.
//!
//! Why per-label thresholds: at margin 0 the rare labels (arbitration has 28 training
//! sentences) are predicted far too rarely, and macro-F1 weighs each label equally.

use std::io::{Read, Write};
use std::path::Path;
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::data::Example;
use crate::features::{FeatureOptions, SparseRow, Vectorizer};
use crate::metric::{score, Scores};
use crate::normalise::normalise;
use crate::svm::{LinearSvm, SvmOptions};
use crate::{LabelSet, N_LABELS};
use precedent_ml::sigmoid;
use precedent_models::Embedder;

/// Bumped whenever training changes what a saved model means (cache keys include it).
pub const MODEL_VERSION: u32 = 1;

const MAGIC: &[u8; 8] = b"UNFAIR01";

/// How the classifier is trained.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModelOptions {
    pub features: FeatureOptions,
    pub svm: SvmOptions,
    /// Contiguous blocks of the training rows for the out-of-fold margins.
    pub folds: usize,
    /// Weight of the sentence-vector block (the sentence's unit-length all-MiniLM-L6-v2
    /// embedding appended to its TF-IDF row, whose word and character blocks have unit length
    /// each); 0 leaves it out. Why: TF-IDF only shares evidence between sentences that share
    /// n-grams, and a company's terms often word a type in ways no training company did.
    #[serde(default)]
    pub sentence_vectors: f32,
}

impl Default for ModelOptions {
    fn default() -> Self {
        ModelOptions {
            features: FeatureOptions::default(),
            svm: SvmOptions::default(),
            folds: 5,
            sentence_vectors: 0.5,
        }
    }
}

/// One sentence's prediction.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Prediction {
    /// The labels whose margin reaches their threshold.
    pub labels: LabelSet,
    /// Per label, the calibrated probability that it applies (Platt sigmoid of the margin).
    pub confidence: [f32; N_LABELS],
}

/// Per label: margin threshold and Platt sigmoid `1 / (1 + exp(-(a m + b)))`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Calibration {
    pub threshold: f32,
    pub a: f32,
    pub b: f32,
}

/// What a saved model file holds besides the arrays.
#[derive(Serialize, Deserialize)]
struct Header {
    version: u32,
    options: ModelOptions,
    calibration: Vec<Calibration>,
    biases: Vec<f32>,
    dim: usize,
    /// Columns of the sentence-vector block after the TF-IDF ones (0 without it).
    #[serde(default)]
    vector_dim: usize,
    trained_on: usize,
}

/// The trained classifier.
#[derive(Clone)]
pub struct UnfairModel {
    pub options: ModelOptions,
    vectorizer: Vectorizer,
    /// Columns of the sentence-vector block (0 without it).
    vector_dim: usize,
    svms: Vec<LinearSvm>,
    pub calibration: Vec<Calibration>,
    /// Training sentences.
    pub trained_on: usize,
    /// The embedder of the sentence vectors, when the model uses them ([`Self::with_encoder`]).
    encoder: Option<Arc<Embedder>>,
}

impl std::fmt::Debug for UnfairModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UnfairModel")
            .field("options", &self.options)
            .field("columns", &self.vectorizer.dim())
            .field("vector_dim", &self.vector_dim)
            .field("calibration", &self.calibration)
            .field("trained_on", &self.trained_on)
            .field(
                "encoder",
                &self.encoder.as_ref().map(|e| e.name().to_owned()),
            )
            .finish()
    }
}

pub use precedent_ml::block_folds;

/// Sentence vectors of the rows, one per text in the same order: the caller embeds them
/// (training and evaluation embed each sentence once for all folds). `None` when the model
/// does not use them.
pub type SentenceVectors<'a> = Option<&'a [Vec<f32>]>;

/// The sentence vectors [`ModelOptions::sentence_vectors`] weighs: each text normalised to
/// LexGLUE's form (the form the training rows have, so training and review embed alike), then
/// embedded by `embedder` (the default all-MiniLM-L6-v2, unit length).
pub fn sentence_vectors(embedder: &Embedder, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
    let normalised: Vec<String> = texts.iter().map(|t| normalise(t)).collect();
    let refs: Vec<&str> = normalised.iter().map(String::as_str).collect();
    embedder
        .embed(&refs)
        .context("embedding the sentences for the UNFAIR-ToS model")
}

/// The feature row of a normalised sentence: its TF-IDF, then its sentence vector scaled by
/// `weight` in the columns after the vectorizer's.
fn feature_row(
    vectorizer: &Vectorizer,
    text: &str,
    vector: Option<&[f32]>,
    weight: f32,
) -> SparseRow {
    let mut row = vectorizer.transform(text);
    if let Some(vector) = vector.filter(|_| weight > 0.0) {
        let base = vectorizer.dim() as u32;
        row.extend(
            vector
                .iter()
                .enumerate()
                .map(|(j, &x)| (base + j as u32, weight * x)),
        );
    }
    row
}

/// Columns of the sentence-vector block that `options` and `vectors` give.
fn vector_dim(vectors: SentenceVectors, options: &ModelOptions) -> usize {
    match vectors {
        Some(v) if options.sentence_vectors > 0.0 => v.first().map_or(0, Vec::len),
        _ => 0,
    }
}

/// Vectorizer and eight SVMs fitted on normalised `texts` (with their sentence vectors when
/// the options use them).
fn fit_svms(
    texts: &[&str],
    vectors: SentenceVectors,
    labels: &[LabelSet],
    options: &ModelOptions,
) -> (Vectorizer, Vec<LinearSvm>) {
    let vectorizer = Vectorizer::fit(texts, &options.features);
    let dim = vectorizer.dim() + vector_dim(vectors, options);
    let rows: Vec<SparseRow> = texts
        .par_iter()
        .enumerate()
        .map(|(i, t)| {
            let vector = vectors.and_then(|v| v.get(i)).map(Vec::as_slice);
            feature_row(&vectorizer, t, vector, options.sentence_vectors)
        })
        .collect();
    let refs: Vec<&SparseRow> = rows.iter().collect();
    let svms = (0..N_LABELS)
        .into_par_iter()
        .map(|k| {
            let positive: Vec<bool> = labels.iter().map(|&l| l & (1 << k) != 0).collect();
            LinearSvm::fit(&refs, &positive, dim, &options.svm)
        })
        .collect();
    (vectorizer, svms)
}

/// Checks that `vectors`, when the options use them, has one vector per row, all of one length.
fn check_vectors(vectors: SentenceVectors, rows: usize, options: &ModelOptions) -> Result<()> {
    if options.sentence_vectors <= 0.0 {
        return Ok(());
    }
    let Some(vectors) = vectors else {
        bail!(
            "the options use sentence vectors (weight {}) and none were given",
            options.sentence_vectors
        );
    };
    if vectors.len() != rows {
        bail!("{} sentence vectors for {rows} sentences", vectors.len());
    }
    let dim = vectors.first().map_or(0, Vec::len);
    if vectors.iter().any(|v| v.len() != dim) {
        bail!("sentence vectors of different lengths");
    }
    Ok(())
}

/// Margins of every example, each scored by SVMs trained on the other folds (`fold[i]` is
/// example i's fold).
pub fn out_of_fold_margins(
    texts: &[String],
    vectors: SentenceVectors,
    labels: &[LabelSet],
    fold: &[usize],
    options: &ModelOptions,
) -> Vec<[f32; N_LABELS]> {
    let folds = fold.iter().max().map_or(0, |&f| f + 1);
    let mut margins = vec![[0f32; N_LABELS]; texts.len()];
    for f in 0..folds {
        let (train, held): (Vec<usize>, Vec<usize>) = (0..texts.len()).partition(|&i| fold[i] != f);
        let train_texts: Vec<&str> = train.iter().map(|&i| texts[i].as_str()).collect();
        let train_labels: Vec<LabelSet> = train.iter().map(|&i| labels[i]).collect();
        let train_vectors: Option<Vec<Vec<f32>>> =
            vectors.map(|v| train.iter().map(|&i| v[i].clone()).collect());
        let (vectorizer, svms) = fit_svms(
            &train_texts,
            train_vectors.as_deref(),
            &train_labels,
            options,
        );
        let scored: Vec<[f32; N_LABELS]> = held
            .par_iter()
            .map(|&i| {
                let vector = vectors.and_then(|v| v.get(i)).map(Vec::as_slice);
                let row = feature_row(&vectorizer, &texts[i], vector, options.sentence_vectors);
                std::array::from_fn(|k| svms[k].margin(&row))
            })
            .collect();
        for (&i, m) in held.iter().zip(scored) {
            margins[i] = m;
        }
    }
    margins
}

/// The margin threshold maximising F1 of one label on scored rows (`(margin, positive)`): the
/// midpoint between the lowest margin kept and the next one below, so a new row scoring between
/// them is not decided by an accident of the training margins. With no positive row, a
/// threshold above every margin.
pub fn best_threshold(scored: &[(f32, bool)]) -> f32 {
    let mut sorted: Vec<(f32, bool)> = scored.to_vec();
    sorted.sort_by(|a, b| b.0.total_cmp(&a.0));
    let positives = sorted.iter().filter(|s| s.1).count();
    let Some(top) = sorted.first() else {
        return 0.0;
    };
    if positives == 0 {
        return top.0.max(0.0) + 1.0;
    }
    let (mut best_f1, mut best_i, mut tp) = (-1.0f64, 0, 0usize);
    for (i, &(m, p)) in sorted.iter().enumerate() {
        tp += usize::from(p);
        // Only cut between distinct margins.
        if sorted.get(i + 1).is_some_and(|next| next.0 == m) {
            continue;
        }
        let f1 = 2.0 * tp as f64 / (i + 1 + positives) as f64;
        if f1 > best_f1 {
            best_f1 = f1;
            best_i = i;
        }
    }
    match sorted.get(best_i + 1) {
        Some(next) => 0.5 * (sorted[best_i].0 + next.0),
        None => sorted[best_i].0 - 1e-3,
    }
}

/// Platt's sigmoid fitted by Newton's method on `(margin, positive)`, with Platt's smoothed
/// targets so a label never seen wrong on one side does not get an infinite slope.
pub fn platt(scored: &[(f32, bool)]) -> (f32, f32) {
    let pos = scored.iter().filter(|s| s.1).count() as f64;
    let neg = scored.len() as f64 - pos;
    let hi = (pos + 1.0) / (pos + 2.0);
    let lo = 1.0 / (neg + 2.0);
    let (mut a, mut b) = (1.0f64, 0.0f64);
    for _ in 0..100 {
        let (mut g_a, mut g_b, mut h_aa, mut h_ab, mut h_bb) = (0.0, 0.0, 1e-9, 0.0, 1e-9);
        for &(m, p) in scored {
            let m = f64::from(m);
            let t = if p { hi } else { lo };
            let q = sigmoid(a * m + b);
            let d = q - t;
            let w = q * (1.0 - q);
            g_a += d * m;
            g_b += d;
            h_aa += w * m * m;
            h_ab += w * m;
            h_bb += w;
        }
        let det = h_aa * h_bb - h_ab * h_ab;
        if det.abs() < 1e-12 {
            break;
        }
        let step_a = (h_bb * g_a - h_ab * g_b) / det;
        let step_b = (h_aa * g_b - h_ab * g_a) / det;
        a -= step_a;
        b -= step_b;
        if step_a.abs() + step_b.abs() < 1e-7 {
            break;
        }
    }
    (a as f32, b as f32)
}

/// Thresholds and sigmoids of the eight labels from out-of-fold margins.
pub fn calibrate(margins: &[[f32; N_LABELS]], labels: &[LabelSet]) -> Vec<Calibration> {
    (0..N_LABELS)
        .map(|k| {
            let scored: Vec<(f32, bool)> = margins
                .iter()
                .zip(labels)
                .map(|(m, &l)| (m[k], l & (1 << k) != 0))
                .collect();
            let (a, b) = platt(&scored);
            Calibration {
                threshold: best_threshold(&scored),
                a,
                b,
            }
        })
        .collect()
}

/// The label set of margins under `calibration`.
pub fn decide(margins: &[f32; N_LABELS], calibration: &[Calibration]) -> LabelSet {
    margins
        .iter()
        .zip(calibration)
        .enumerate()
        .filter(|(_, (m, c))| **m >= c.threshold)
        .fold(0, |set, (k, _)| set | (1 << k))
}

/// What cross-validation on the training rows says of a configuration.
#[derive(Clone, Debug, Serialize)]
pub struct CvReport {
    /// Thresholds tuned inside each fold's training blocks (nested): an honest estimate.
    pub nested: Scores,
    /// Thresholds tuned on all out-of-fold margins at once (optimistic; comparable across
    /// configurations and cheaper).
    pub pooled: Scores,
    /// At margin 0 (no threshold tuning).
    pub at_zero: Scores,
}

/// Cross-validates `options` on `examples` by contiguous blocks: out-of-fold margins for every
/// row, and for the nested figure, thresholds of each fold tuned on out-of-fold margins of the
/// other folds' rows (inner folds again by contiguous blocks). `vectors` are the examples'
/// sentence vectors when the options use them.
pub fn cross_validate(
    examples: &[Example],
    vectors: SentenceVectors,
    options: &ModelOptions,
) -> Result<CvReport> {
    check_vectors(vectors, examples.len(), options)?;
    let texts: Vec<String> = examples.iter().map(|e| normalise(&e.text)).collect();
    let labels: Vec<LabelSet> = examples.iter().map(|e| e.labels).collect();
    let fold = block_folds(texts.len(), options.folds);
    let margins = out_of_fold_margins(&texts, vectors, &labels, &fold, options);
    let pooled_cal = calibrate(&margins, &labels);
    let pooled: Vec<LabelSet> = margins.iter().map(|m| decide(m, &pooled_cal)).collect();
    let zero: Vec<LabelSet> = margins
        .iter()
        .map(|m| {
            m.iter()
                .enumerate()
                .filter(|(_, &x)| x >= 0.0)
                .fold(0, |s, (k, _)| s | (1 << k))
        })
        .collect();
    let mut nested = vec![0 as LabelSet; texts.len()];
    for f in 0..options.folds {
        let train: Vec<usize> = (0..texts.len()).filter(|&i| fold[i] != f).collect();
        let inner_texts: Vec<String> = train.iter().map(|&i| texts[i].clone()).collect();
        let inner_labels: Vec<LabelSet> = train.iter().map(|&i| labels[i]).collect();
        let inner_vectors: Option<Vec<Vec<f32>>> =
            vectors.map(|v| train.iter().map(|&i| v[i].clone()).collect());
        let inner_fold = block_folds(train.len(), options.folds);
        let inner = out_of_fold_margins(
            &inner_texts,
            inner_vectors.as_deref(),
            &inner_labels,
            &inner_fold,
            options,
        );
        let cal = calibrate(&inner, &inner_labels);
        for i in (0..texts.len()).filter(|&i| fold[i] == f) {
            nested[i] = decide(&margins[i], &cal);
        }
    }
    Ok(CvReport {
        nested: score(&labels, &nested),
        pooled: score(&labels, &pooled),
        at_zero: score(&labels, &zero),
    })
}

impl UnfairModel {
    /// Trains on `examples` (any casing and punctuation: texts are normalised first).
    /// `vectors` are the examples' sentence vectors when the options use them
    /// ([`ModelOptions::sentence_vectors`]).
    pub fn train(
        examples: &[Example],
        vectors: SentenceVectors,
        options: &ModelOptions,
    ) -> Result<Self> {
        if examples.is_empty() {
            bail!("no training sentences");
        }
        check_vectors(vectors, examples.len(), options)?;
        let texts: Vec<String> = examples.iter().map(|e| normalise(&e.text)).collect();
        let labels: Vec<LabelSet> = examples.iter().map(|e| e.labels).collect();
        let fold = block_folds(texts.len(), options.folds);
        let margins = out_of_fold_margins(&texts, vectors, &labels, &fold, options);
        let calibration = calibrate(&margins, &labels);
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let (vectorizer, svms) = fit_svms(&refs, vectors, &labels, options);
        Ok(UnfairModel {
            options: options.clone(),
            vector_dim: vector_dim(vectors, options),
            vectorizer,
            svms,
            calibration,
            trained_on: examples.len(),
            encoder: None,
        })
    }

    /// Trains on `examples`, embedding them with `encoder` when the options use sentence
    /// vectors, and keeps the encoder for predictions. Without an encoder, options that use
    /// sentence vectors are an error.
    pub fn train_with_encoder(
        examples: &[Example],
        options: &ModelOptions,
        encoder: Option<Arc<Embedder>>,
    ) -> Result<Self> {
        let vectors = match (&encoder, options.sentence_vectors > 0.0) {
            (Some(e), true) => {
                let texts: Vec<&str> = examples.iter().map(|x| x.text.as_str()).collect();
                Some(sentence_vectors(e, &texts)?)
            }
            _ => None,
        };
        Ok(Self::train(examples, vectors.as_deref(), options)?.with_encoder(encoder))
    }

    /// The model with `encoder` to embed the sentences it predicts (needed when
    /// [`Self::uses_sentence_vectors`]).
    pub fn with_encoder(mut self, encoder: Option<Arc<Embedder>>) -> Self {
        self.encoder = encoder;
        self
    }

    /// The embedder of the sentence vectors, if any.
    pub fn encoder(&self) -> Option<Arc<Embedder>> {
        self.encoder.clone()
    }

    /// Whether predictions need each sentence's vector (see [`Self::predict`]).
    pub fn uses_sentence_vectors(&self) -> bool {
        self.vector_dim > 0
    }

    /// The eight margins of a sentence already in LexGLUE form, with its sentence vector when
    /// the model uses them (a missing one counts as zeros).
    pub fn margins(&self, normalised: &str, vector: Option<&[f32]>) -> [f32; N_LABELS] {
        let vector = vector.filter(|v| v.len() == self.vector_dim);
        let row = feature_row(
            &self.vectorizer,
            normalised,
            vector,
            self.options.sentence_vectors,
        );
        std::array::from_fn(|k| self.svms[k].margin(&row))
    }

    /// Why a sentence already in LexGLUE form scores for `label` (as [`Self::margins`] reads
    /// it): the phrases of its words that push the label's margin up most. The `k` word n-grams
    /// with the largest TF-IDF value times SVM weight are taken (n-grams with a punctuation
    /// token, or of stop words only, are skipped: "time ,", "or for" do not read as evidence),
    /// and those sharing a word are joined into one phrase ("by binding" and "binding
    /// individual" give "by binding individual"); phrases come strongest first. The character
    /// n-grams and the sentence vector count in the margin too but do not read as words, so
    /// this is the part of the evidence a reader can check against the sentence.
    pub fn evidence(&self, normalised: &str, label: usize, k: usize) -> Vec<String> {
        let Some(svm) = self.svms.get(label) else {
            return Vec::new();
        };
        let words: Vec<&str> = normalised.split_whitespace().collect();
        let row = self.vectorizer.transform(normalised);
        let value = |col: u32| {
            row.binary_search_by_key(&col, |&(c, _)| c)
                .map_or(0.0, |i| row[i].1)
        };
        let mut pushes: Vec<(f32, usize, usize)> = self
            .vectorizer
            .word_columns(normalised)
            .into_iter()
            .filter(|&(start, n, _)| {
                let gram = &words[start..start + n];
                gram.iter().all(|w| w.chars().any(char::is_alphanumeric))
                    && !gram
                        .iter()
                        .all(|w| precedent_text::LUCENE_ENGLISH_STOP_WORDS.contains(w))
            })
            .map(|(start, n, col)| {
                let weight = svm.weights.get(col as usize).copied().unwrap_or(0.0);
                (weight * value(col), start, start + n)
            })
            .filter(|(push, _, _)| *push > 0.0)
            .collect();
        pushes.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        pushes.truncate(k);
        // Join n-grams that share a word, keeping each phrase's strongest push.
        let mut phrases: Vec<(f32, usize, usize)> = Vec::new();
        let mut by_start = pushes;
        by_start.sort_by_key(|&(_, start, _)| start);
        for (push, start, end) in by_start {
            match phrases.last_mut() {
                Some(last) if start < last.2 => {
                    last.2 = last.2.max(end);
                    last.0 = last.0.max(push);
                }
                _ => phrases.push((push, start, end)),
            }
        }
        phrases.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        phrases
            .into_iter()
            .map(|(_, start, end)| words[start..end].join(" "))
            .collect()
    }

    /// Predicts one sentence in any form (normalised here); `vector` is its sentence vector
    /// when the model uses them ([`Self::uses_sentence_vectors`]).
    pub fn predict(&self, text: &str, vector: Option<&[f32]>) -> Prediction {
        let margins = self.margins(&normalise(text), vector);
        let confidence = std::array::from_fn(|k| {
            let c = &self.calibration[k];
            sigmoid(c.a * margins[k] + c.b)
        });
        Prediction {
            labels: decide(&margins, &self.calibration),
            confidence,
        }
    }

    /// Predicts many sentences in any form, embedding them with the model's encoder when it
    /// uses sentence vectors.
    pub fn predict_all(&self, texts: &[&str]) -> Result<Vec<Prediction>> {
        if !self.uses_sentence_vectors() {
            return Ok(self.predict_all_with(texts, None));
        }
        let Some(encoder) = &self.encoder else {
            bail!("this UNFAIR-ToS model reads sentence vectors and has no embedder to make them");
        };
        let vectors = sentence_vectors(encoder, texts)?;
        Ok(self.predict_all_with(texts, Some(&vectors)))
    }

    /// Predicts many sentences (in parallel) with their sentence vectors given, one per text,
    /// when the model uses them.
    pub fn predict_all_with(&self, texts: &[&str], vectors: SentenceVectors) -> Vec<Prediction> {
        texts
            .par_iter()
            .enumerate()
            .map(|(i, t)| {
                let vector = vectors.and_then(|v| v.get(i)).map(Vec::as_slice);
                self.predict(t, vector)
            })
            .collect()
    }

    /// Writes the model: a magic tag, a JSON header, then the arrays as little-endian numbers
    /// (the weights are ~8 x 300k floats: as JSON text they would be several times larger and
    /// slower to read).
    pub fn save(&self, path: &Path) -> Result<()> {
        let header = Header {
            version: MODEL_VERSION,
            options: self.options.clone(),
            calibration: self.calibration.clone(),
            biases: self.svms.iter().map(|s| s.bias).collect(),
            dim: self.vectorizer.dim(),
            vector_dim: self.vector_dim,
            trained_on: self.trained_on,
        };
        let json = serde_json::to_vec(&header)?;
        let vectorizer = serde_json::to_vec(&self.vectorizer)?;
        let mut out = Vec::with_capacity(json.len() + vectorizer.len() + 40 * header.dim);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&(json.len() as u64).to_le_bytes());
        out.extend_from_slice(&json);
        out.extend_from_slice(&(vectorizer.len() as u64).to_le_bytes());
        out.extend_from_slice(&vectorizer);
        for svm in &self.svms {
            for w in &svm.weights {
                out.extend_from_slice(&w.to_le_bytes());
            }
        }
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        let tmp = path.with_extension("tmp");
        let mut file =
            std::fs::File::create(&tmp).with_context(|| format!("writing {}", tmp.display()))?;
        file.write_all(&out)
            .with_context(|| format!("writing {}", tmp.display()))?;
        std::fs::rename(&tmp, path).with_context(|| format!("writing {}", path.display()))?;
        Ok(())
    }

    /// Reads a model written by [`Self::save`].
    pub fn load(path: &Path) -> Result<Self> {
        let mut bytes = Vec::new();
        std::fs::File::open(path)
            .and_then(|mut f| f.read_to_end(&mut bytes))
            .with_context(|| format!("reading {}", path.display()))?;
        let bad = || format!("{}: not an UNFAIR-ToS model file", path.display());
        let mut at = 0usize;
        let mut take = |n: usize| -> Result<&[u8]> {
            let slice = bytes.get(at..at + n).with_context(bad)?;
            at += n;
            Ok(slice)
        };
        if take(8)? != MAGIC {
            bail!(bad());
        }
        let len = |b: &[u8]| -> Result<usize> {
            Ok(u64::from_le_bytes(b.try_into().with_context(bad)?) as usize)
        };
        let n = len(take(8)?)?;
        let header: Header = serde_json::from_slice(take(n)?).with_context(bad)?;
        if header.version != MODEL_VERSION {
            bail!(
                "{}: model version {} (this build reads {MODEL_VERSION})",
                path.display(),
                header.version
            );
        }
        let n = len(take(8)?)?;
        let mut vectorizer: Vectorizer = serde_json::from_slice(take(n)?).with_context(bad)?;
        vectorizer.index();
        if vectorizer.dim() != header.dim || header.biases.len() != N_LABELS {
            bail!(bad());
        }
        let mut svms = Vec::with_capacity(N_LABELS);
        for &bias in &header.biases {
            let raw = take(4 * (header.dim + header.vector_dim))?;
            let weights = raw
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect();
            svms.push(LinearSvm { weights, bias });
        }
        Ok(UnfairModel {
            options: header.options,
            vector_dim: header.vector_dim,
            vectorizer,
            svms,
            calibration: header.calibration,
            trained_on: header.trained_on,
            encoder: None,
        })
    }
}

/// Validation figures of a model on labelled examples (with their sentence vectors when the
/// model uses them), with the predictions.
pub fn evaluate(
    model: &UnfairModel,
    examples: &[Example],
    vectors: SentenceVectors,
) -> (Scores, Vec<Prediction>) {
    let texts: Vec<&str> = examples.iter().map(|e| e.text.as_str()).collect();
    let predictions = model.predict_all_with(&texts, vectors);
    let gold: Vec<LabelSet> = examples.iter().map(|e| e.labels).collect();
    let predicted: Vec<LabelSet> = predictions.iter().map(|p| p.labels).collect();
    (score(&gold, &predicted), predictions)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_contiguous_and_balanced() {
        assert_eq!(block_folds(7, 3), vec![0, 0, 0, 1, 1, 2, 2]);
        assert_eq!(block_folds(2, 5), vec![0, 2]);
    }

    #[test]
    fn threshold_maximises_f1_between_margins() {
        // Sorted: 3.0+ 2.0+ 1.0- 0.5+ -1.0- : best cut keeps the top 4 (F1 6/7) vs top 2 (4/5).
        let scored = [
            (1.0, false),
            (3.0, true),
            (-1.0, false),
            (2.0, true),
            (0.5, true),
        ];
        assert!((best_threshold(&scored) - (-0.25)).abs() < 1e-6);
        assert!(best_threshold(&[(0.3, false)]) > 0.3);
    }

    #[test]
    fn platt_is_increasing_in_the_margin() {
        let scored: Vec<(f32, bool)> = (0..40)
            .map(|i| (i as f32 / 10.0 - 2.0, i % 7 == 0 || i > 30))
            .collect();
        let (a, _) = platt(&scored);
        assert!(a > 0.0);
    }

    #[test]
    fn trains_saves_and_loads() {
        let mut examples = Vec::new();
        for i in 0..30 {
            examples.push(Example {
                text: format!("We may terminate your account {i} at any time."),
                labels: 0b10,
            });
            examples.push(Example {
                text: format!("You can upload photo {i} to your profile."),
                labels: 0,
            });
        }
        let options = ModelOptions {
            folds: 3,
            sentence_vectors: 0.0,
            ..ModelOptions::default()
        };
        let model = UnfairModel::train(&examples, None, &options).expect("train");
        let p = model.predict("We may terminate your account at any time!", None);
        assert_eq!(p.labels, 0b10);
        assert!(p.confidence[1] > 0.5);
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("m.bin");
        model.save(&path).expect("save");
        let loaded = UnfairModel::load(&path).expect("load");
        assert_eq!(loaded.predict("you can upload a photo", None).labels, 0);
        assert_eq!(
            loaded.margins("we may terminate", None),
            model.margins("we may terminate", None)
        );
        std::fs::write(&path, b"nonsense").expect("write");
        assert!(UnfairModel::load(&path).is_err());
    }

    #[test]
    fn evidence_names_the_words_that_push_the_label() {
        // Label 1 rides on "terminate your account"; the rest of each sentence varies.
        let fillers = ["photo", "post", "video", "note", "song", "file"];
        let mut examples = Vec::new();
        for (i, filler) in fillers.iter().cycle().take(36).enumerate() {
            let labels = if i % 2 == 0 { 0b10 } else { 0 };
            let text = if labels != 0 {
                format!("Sure, we may terminate your account and the {filler} {i}.")
            } else {
                format!("Sure, you may keep your {filler} {i} and the account.")
            };
            examples.push(Example { text, labels });
        }
        let options = ModelOptions {
            folds: 3,
            sentence_vectors: 0.0,
            ..ModelOptions::default()
        };
        let model = UnfairModel::train(&examples, None, &options).expect("train");
        let sentence = normalise("Sure, we may terminate your account and the song.");
        let evidence = model.evidence(&sentence, 1, 3);
        assert!(!evidence.is_empty() && evidence.len() <= 3, "{evidence:?}");
        // The strongest phrase holds the distinctive verb; n-grams sharing a word are joined,
        // so no listed phrase sits inside another.
        assert!(evidence[0].contains("terminate"), "{evidence:?}");
        for (i, a) in evidence.iter().enumerate() {
            for b in &evidence[i + 1..] {
                assert!(
                    !a.contains(b.as_str()) && !b.contains(a.as_str()),
                    "{evidence:?}"
                );
            }
        }
        // Every phrase is words of the sentence (lowercase form), never punctuation or only
        // stop words.
        for phrase in &evidence {
            assert!(
                sentence.contains(phrase.as_str()),
                "{phrase:?} in {sentence:?}"
            );
            assert!(phrase.chars().any(char::is_alphanumeric));
            assert!(!phrase
                .split(' ')
                .all(|w| precedent_text::LUCENE_ENGLISH_STOP_WORDS.contains(&w)));
        }
        assert!(!evidence.iter().any(|p| p.contains(',')), "{evidence:?}");
        // Each word of this sentence occurs once, so joined phrases share no word.
        for (i, a) in evidence.iter().enumerate() {
            for b in &evidence[i + 1..] {
                assert!(
                    !a.split(' ').any(|w| b.split(' ').any(|v| v == w)),
                    "{evidence:?}"
                );
            }
        }
        // Words the model never saw show nothing, and an unknown label nothing.
        assert!(model
            .evidence(&normalise("Zebras quokkas."), 1, 3)
            .is_empty());
        assert!(model.evidence(&sentence, 99, 3).is_empty());
    }

    #[test]
    fn sentence_vectors_are_weighed_saved_and_required() {
        // Texts that share no n-gram across the two classes' test sentences: only the vector
        // (first component: the class) tells them apart.
        let examples: Vec<Example> = (0..40)
            .map(|i| Example {
                text: format!("sentence number {i}"),
                labels: if i % 2 == 0 { 0b1 } else { 0 },
            })
            .collect();
        let vectors: Vec<Vec<f32>> = (0..40)
            .map(|i| {
                if i % 2 == 0 {
                    vec![1.0, 0.0]
                } else {
                    vec![0.0, 1.0]
                }
            })
            .collect();
        let options = ModelOptions {
            folds: 4,
            sentence_vectors: 1.0,
            ..ModelOptions::default()
        };
        assert!(UnfairModel::train(&examples, None, &options).is_err());
        assert!(UnfairModel::train(&examples, Some(&vectors[..3]), &options).is_err());
        let model = UnfairModel::train(&examples, Some(&vectors), &options).expect("train");
        assert!(model.uses_sentence_vectors());
        let liable = model.predict("zebra", Some(&[1.0, 0.0]));
        let harmless = model.predict("zebra", Some(&[0.0, 1.0]));
        assert_eq!((liable.labels, harmless.labels), (0b1, 0));
        // Without its encoder the model cannot embed texts itself.
        assert!(model.predict_all(&["zebra"]).is_err());
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("m.bin");
        model.save(&path).expect("save");
        let loaded = UnfairModel::load(&path).expect("load");
        assert_eq!(
            loaded.margins("zebra", Some(&[1.0, 0.0])),
            model.margins("zebra", Some(&[1.0, 0.0]))
        );
    }
}
