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
}

impl Default for ModelOptions {
    fn default() -> Self {
        ModelOptions {
            features: FeatureOptions::default(),
            svm: SvmOptions::default(),
            folds: 5,
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
    trained_on: usize,
}

/// The trained classifier.
#[derive(Clone, Debug)]
pub struct UnfairModel {
    pub options: ModelOptions,
    vectorizer: Vectorizer,
    svms: Vec<LinearSvm>,
    pub calibration: Vec<Calibration>,
    /// Training sentences.
    pub trained_on: usize,
}

pub use precedent_ml::block_folds;

/// Vectorizer and eight SVMs fitted on normalised `texts`.
fn fit_svms(
    texts: &[&str],
    labels: &[LabelSet],
    options: &ModelOptions,
) -> (Vectorizer, Vec<LinearSvm>) {
    let vectorizer = Vectorizer::fit(texts, &options.features);
    let rows: Vec<SparseRow> = texts.par_iter().map(|t| vectorizer.transform(t)).collect();
    let refs: Vec<&SparseRow> = rows.iter().collect();
    let svms = (0..N_LABELS)
        .into_par_iter()
        .map(|k| {
            let positive: Vec<bool> = labels.iter().map(|&l| l & (1 << k) != 0).collect();
            LinearSvm::fit(&refs, &positive, vectorizer.dim(), &options.svm)
        })
        .collect();
    (vectorizer, svms)
}

/// Margins of every example, each scored by SVMs trained on the other folds (`fold[i]` is
/// example i's fold).
pub fn out_of_fold_margins(
    texts: &[String],
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
        let (vectorizer, svms) = fit_svms(&train_texts, &train_labels, options);
        let scored: Vec<[f32; N_LABELS]> = held
            .par_iter()
            .map(|&i| {
                let row = vectorizer.transform(&texts[i]);
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
/// other folds' rows (inner folds again by contiguous blocks).
pub fn cross_validate(examples: &[Example], options: &ModelOptions) -> CvReport {
    let texts: Vec<String> = examples.iter().map(|e| normalise(&e.text)).collect();
    let labels: Vec<LabelSet> = examples.iter().map(|e| e.labels).collect();
    let fold = block_folds(texts.len(), options.folds);
    let margins = out_of_fold_margins(&texts, &labels, &fold, options);
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
        let inner_fold = block_folds(train.len(), options.folds);
        let inner = out_of_fold_margins(&inner_texts, &inner_labels, &inner_fold, options);
        let cal = calibrate(&inner, &inner_labels);
        for i in (0..texts.len()).filter(|&i| fold[i] == f) {
            nested[i] = decide(&margins[i], &cal);
        }
    }
    CvReport {
        nested: score(&labels, &nested),
        pooled: score(&labels, &pooled),
        at_zero: score(&labels, &zero),
    }
}

impl UnfairModel {
    /// Trains on `examples` (any casing and punctuation: texts are normalised first).
    pub fn train(examples: &[Example], options: &ModelOptions) -> Result<Self> {
        if examples.is_empty() {
            bail!("no training sentences");
        }
        let texts: Vec<String> = examples.iter().map(|e| normalise(&e.text)).collect();
        let labels: Vec<LabelSet> = examples.iter().map(|e| e.labels).collect();
        let fold = block_folds(texts.len(), options.folds);
        let margins = out_of_fold_margins(&texts, &labels, &fold, options);
        let calibration = calibrate(&margins, &labels);
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let (vectorizer, svms) = fit_svms(&refs, &labels, options);
        Ok(UnfairModel {
            options: options.clone(),
            vectorizer,
            svms,
            calibration,
            trained_on: examples.len(),
        })
    }

    /// The eight margins of a sentence already in LexGLUE form.
    pub fn margins(&self, normalised: &str) -> [f32; N_LABELS] {
        let row = self.vectorizer.transform(normalised);
        std::array::from_fn(|k| self.svms[k].margin(&row))
    }

    /// Predicts one sentence in any form (normalised here).
    pub fn predict(&self, text: &str) -> Prediction {
        let margins = self.margins(&normalise(text));
        let confidence = std::array::from_fn(|k| {
            let c = &self.calibration[k];
            sigmoid(c.a * margins[k] + c.b)
        });
        Prediction {
            labels: decide(&margins, &self.calibration),
            confidence,
        }
    }

    /// Predicts many sentences (in parallel).
    pub fn predict_all(&self, texts: &[&str]) -> Vec<Prediction> {
        texts.par_iter().map(|t| self.predict(t)).collect()
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
            let raw = take(4 * header.dim)?;
            let weights = raw
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect();
            svms.push(LinearSvm { weights, bias });
        }
        Ok(UnfairModel {
            options: header.options,
            vectorizer,
            svms,
            calibration: header.calibration,
            trained_on: header.trained_on,
        })
    }
}

/// Validation figures of a model on labelled examples, with the predictions.
pub fn evaluate(model: &UnfairModel, examples: &[Example]) -> (Scores, Vec<Prediction>) {
    let texts: Vec<&str> = examples.iter().map(|e| e.text.as_str()).collect();
    let predictions = model.predict_all(&texts);
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
            ..ModelOptions::default()
        };
        let model = UnfairModel::train(&examples, &options).expect("train");
        let p = model.predict("We may terminate your account at any time!");
        assert_eq!(p.labels, 0b10);
        assert!(p.confidence[1] > 0.5);
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("m.bin");
        model.save(&path).expect("save");
        let loaded = UnfairModel::load(&path).expect("load");
        assert_eq!(loaded.predict("you can upload a photo").labels, 0);
        assert_eq!(
            loaded.margins("we may terminate"),
            model.margins("we may terminate")
        );
        std::fs::write(&path, b"nonsense").expect("write");
        assert!(UnfairModel::load(&path).is_err());
    }
}
