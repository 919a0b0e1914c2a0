//! The fine-tuned MiniLM classifier: all-MiniLM-L6-v2's encoder with a head of eight sigmoid
//! logits ([`precedent_models::MultiLabelTrainer`]), fine-tuned on the training rows with binary
//! cross-entropy (positives of rare labels weighted up), then served by the fast inference
//! encoder ([`SequenceClassifier`]).
//!
//! Everything that is decided is decided on the training rows, never on validation: the last
//! contiguous block of the training rows (`held_out`, 20%, a few companies' terms: consecutive
//! rows come from one document) is kept out of fine-tuning, and per label a Platt sigmoid and
//! the F1-best threshold are fitted on the logits the model gives that block. A label with too
//! few positives in the block keeps the plain threshold (logit 0). Epochs, learning rate and
//! weights are fixed defaults ([`MiniLmOptions::default`]), chosen before any score was seen.
//!
//! [`Ensemble`] averages the SVM's and MiniLM's calibrated probabilities, with thresholds
//! fitted on the same held-out block (the SVM side scored by SVMs trained without it).

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use precedent_models::{FineTuneOptions, MultiLabelTrainer, Pooling, SequenceClassifier};
use serde::{Deserialize, Serialize};

use crate::data::Example;
use crate::metric::{score, Scores};
use crate::model::{best_threshold, calibrate, decide, Calibration, Prediction};
use crate::normalise::normalise;
use crate::{LabelSet, UnfairModel, N_LABELS};
use precedent_ml::{sigmoid, SplitMix};

/// Bumped whenever training changes what a saved MiniLM model means (cache keys include it).
pub const MINILM_VERSION: u32 = 3;

/// The file beside the weights that records calibration and training facts.
pub const META_FILE: &str = "unfair-tos.json";

/// How the MiniLM classifier is fine-tuned.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MiniLmOptions {
    /// The encoder to start from (a folder, a wheel-installed name or a hub id).
    pub base_model: String,
    /// Passes over the fine-tuning rows' labelled sentences (each with its unlabelled ones).
    pub epochs: usize,
    /// Sentences without a label drawn per epoch, per labelled sentence (new ones each
    /// epoch); `None` takes every one. About 89% of the rows have no label: a share makes
    /// an epoch cheaper when every layer trains, and the held-out block's Platt sigmoids
    /// undo the shifted prior.
    pub negatives_per_positive: Option<f64>,
    pub batch_size: usize,
    /// Peak learning rate (10% linear warm-up, then linear decay to zero).
    pub learning_rate: f64,
    /// Sentence window in tokens; longer sentences are cut (batches are padded to their
    /// longest sentence, not to this).
    pub max_len: usize,
    /// Share of the training rows, taken as the last contiguous block, held out of
    /// fine-tuning for thresholds and calibration.
    pub held_out: f64,
    /// Cap on a label's positive weight `sqrt(negatives / positives)`.
    pub max_positive_weight: f32,
    /// A label with fewer positives than this in the held-out block keeps threshold logit 0.
    pub min_held_positives: usize,
    pub seed: u64,
    /// The embeddings and this many bottom encoder layers stay as loaded; their output for
    /// each sentence is computed once, and fine-tuning runs through the layers above only.
    #[serde(default)]
    pub frozen_layers: usize,
    /// What the head reads: the mean of the token states, where all-MiniLM-L6-v2 was
    /// trained to put a sentence's meaning (its [CLS] token through BERT's pooler learnt
    /// the rare labels far worse: docs/experiments/unfair-tos.md).
    #[serde(default = "mean_pooling")]
    pub pooling: Pooling,
}

fn mean_pooling() -> Pooling {
    Pooling::Mean
}

impl Default for MiniLmOptions {
    fn default() -> Self {
        MiniLmOptions {
            base_model: precedent_models::DEFAULT_MODEL.to_string(),
            epochs: 8,
            negatives_per_positive: None,
            batch_size: 32,
            learning_rate: 1e-4,
            max_len: 128,
            held_out: 0.2,
            max_positive_weight: 10.0,
            min_held_positives: 5,
            seed: 42,
            // The most layers that train in about 30 minutes on 2 cores (8 epochs over
            // every fine-tuning row); the embeddings and the first layer stay as loaded.
            frozen_layers: 1,
            pooling: Pooling::Mean,
        }
    }
}

impl MiniLmOptions {
    /// The trainer's options for this recipe over `steps` optimizer steps.
    pub fn fine_tune_options(&self, steps: usize) -> FineTuneOptions {
        FineTuneOptions {
            learning_rate: self.learning_rate,
            steps,
            batch_size: self.batch_size,
            max_len: self.max_len,
            seed: self.seed,
            frozen_layers: self.frozen_layers,
            pooling: self.pooling,
            ..FineTuneOptions::default()
        }
    }
}

/// A sentence's training target: 1 for each of its labels, 0 for the others.
pub fn target_row(labels: LabelSet) -> Vec<f32> {
    (0..N_LABELS)
        .map(|k| f32::from(u8::from(labels & (1 << k) != 0)))
        .collect()
}

/// What a trained MiniLM folder records beside its weights.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct MiniLmMeta {
    pub version: u32,
    pub options: MiniLmOptions,
    /// Per label: threshold on the logit and Platt sigmoid of the logit.
    pub calibration: Vec<Calibration>,
    /// Training rows given (fine-tuned on the first `held_start`, calibrated on the rest).
    pub rows: usize,
    pub held_start: usize,
    /// Logits of the held-out rows, in order (the ensemble calibrates on them).
    pub held_logits: Vec<[f32; N_LABELS]>,
    pub positive_weights: Vec<f32>,
    pub epoch_seconds: Vec<f64>,
    pub epoch_losses: Vec<f64>,
    /// Fine-tuning, saving and scoring the held-out block.
    pub train_seconds: f64,
}

/// The fine-tuned classifier and its calibration.
pub struct MiniLmModel {
    classifier: SequenceClassifier,
    pub meta: MiniLmMeta,
}

/// Where the held-out block starts among `n` rows.
fn held_start(n: usize, held_out: f64) -> usize {
    let held = ((n as f64) * held_out).round() as usize;
    n.saturating_sub(held.min(n))
}

fn logits_array(row: &[f32]) -> Result<[f32; N_LABELS]> {
    if row.len() != N_LABELS {
        bail!("the classifier gave {} logits, not {N_LABELS}", row.len());
    }
    Ok(std::array::from_fn(|k| row[k]))
}

/// Platt probability of score `x` under `c`.
fn calibrated(x: f32, c: &Calibration) -> f32 {
    sigmoid(c.a * x + c.b)
}

/// Batches of one epoch: rows shuffled, then, within windows of 16 batches, sorted by length
/// so a batch pads little, and the batches shuffled again.
fn epoch_batches(lengths: &[usize], batch: usize, rng: &mut SplitMix) -> Vec<Vec<usize>> {
    let mut order: Vec<usize> = (0..lengths.len()).collect();
    rng.shuffle(&mut order);
    let mut batches = Vec::new();
    for window in order.chunks_mut(batch * 16) {
        window.sort_by_key(|&i| lengths[i]);
        batches.extend(window.chunks(batch).map(<[usize]>::to_vec));
    }
    rng.shuffle(&mut batches);
    batches
}

impl MiniLmModel {
    /// Fine-tunes on `examples` (any casing: texts are normalised first), saves the model to
    /// `out` (a folder, replaced whole) and returns it. `progress` receives one line per
    /// report (every 10 steps and each epoch).
    pub fn train(
        examples: &[Example],
        options: &MiniLmOptions,
        out: &Path,
        progress: &mut dyn FnMut(&str),
    ) -> Result<Self> {
        let started = Instant::now();
        let n = examples.len();
        let cut = held_start(n, options.held_out);
        if cut == 0 || cut == n {
            bail!(
                "{n} training sentences cannot be split into fine-tuning rows and a held-out block"
            );
        }
        if options.epochs == 0 || options.batch_size == 0 {
            bail!("epochs and batch size must be at least 1");
        }
        let texts: Vec<String> = examples.iter().map(|e| normalise(&e.text)).collect();
        let labels: Vec<LabelSet> = examples.iter().map(|e| e.labels).collect();
        let fit = 0..cut;
        let (labelled, unlabelled): (Vec<usize>, Vec<usize>) =
            fit.clone().partition(|&i| labels[i] != 0);
        let negatives = match options.negatives_per_positive {
            Some(share) => ((labelled.len() as f64 * share).round() as usize).min(unlabelled.len()),
            None => unlabelled.len(),
        };
        let per_epoch = labelled.len() + negatives;
        if per_epoch == 0 {
            bail!("no sentence to fine-tune on");
        }
        // Weights from the composition of an epoch's sample.
        let positive_weights: Vec<f32> = (0..N_LABELS)
            .map(|k| {
                let pos = labelled
                    .iter()
                    .filter(|&&i| labels[i] & (1 << k) != 0)
                    .count();
                if pos == 0 {
                    1.0
                } else {
                    (((per_epoch - pos) as f32) / pos as f32)
                        .sqrt()
                        .clamp(1.0, options.max_positive_weight)
                }
            })
            .collect();
        let steps_per_epoch = per_epoch.div_ceil(options.batch_size);
        let tune = options.fine_tune_options(steps_per_epoch * options.epochs);
        let mut trainer = MultiLabelTrainer::from_encoder(&options.base_model, tune, N_LABELS)
            .with_context(|| format!("loading {} to fine-tune", options.base_model))?
            .with_positive_weights(positive_weights.clone())?;
        progress(&format!(
            "fine-tuning {} on rows 1-{cut}: {} epochs of {steps_per_epoch} steps of {} (the {} labelled sentences and {negatives} of the {} unlabelled ones, drawn again each epoch); rows {}-{n} held out for thresholds; positive weights {:?}",
            options.base_model,
            options.epochs,
            options.batch_size,
            labelled.len(),
            unlabelled.len(),
            cut + 1,
            positive_weights
                .iter()
                .map(|w| (w * 10.0).round() / 10.0)
                .collect::<Vec<_>>()
        ));
        let lengths: Vec<usize> = texts[fit.clone()]
            .iter()
            .map(|t| t.split(' ').count())
            .collect();
        let targets: Vec<Vec<f32>> = labels[fit.clone()].iter().map(|&l| target_row(l)).collect();
        let states = if options.frozen_layers > 0 {
            let started = Instant::now();
            let fit_texts: Vec<&str> = texts[fit.clone()].iter().map(String::as_str).collect();
            let states = trainer.frozen_states(&fit_texts)?;
            progress(&format!(
                "the {} frozen layers' states of {} sentences: {:.0} s",
                options.frozen_layers,
                states.len(),
                started.elapsed().as_secs_f64()
            ));
            Some(states)
        } else {
            None
        };
        let mut rng = SplitMix(options.seed ^ 0xB17C_4E55);
        let mut pool = unlabelled.clone();
        let (mut epoch_seconds, mut epoch_losses) = (Vec::new(), Vec::new());
        for epoch in 0..options.epochs {
            let epoch_started = Instant::now();
            let (mut sum, mut count) = (0f64, 0usize);
            let mut window_started = Instant::now();
            rng.shuffle(&mut pool);
            let rows: Vec<usize> = labelled.iter().chain(&pool[..negatives]).copied().collect();
            let row_lengths: Vec<usize> = rows.iter().map(|&i| lengths[i]).collect();
            for (b, batch) in epoch_batches(&row_lengths, options.batch_size, &mut rng)
                .iter()
                .enumerate()
            {
                let batch: Vec<usize> = batch.iter().map(|&j| rows[j]).collect();
                let batch_targets: Vec<Vec<f32>> =
                    batch.iter().map(|&i| targets[i].clone()).collect();
                let loss = match &states {
                    Some(states) => {
                        let batch_states: Vec<_> = batch.iter().map(|&i| &states[i]).collect();
                        trainer.train_step_on_states(&batch_states, &batch_targets)?
                    }
                    None => {
                        let batch_texts: Vec<&str> =
                            batch.iter().map(|&i| texts[i].as_str()).collect();
                        trainer.train_step(&batch_texts, &batch_targets)?
                    }
                };
                sum += f64::from(loss);
                count += 1;
                if (b + 1) % 10 == 0 {
                    progress(&format!(
                        "  epoch {} step {}/{steps_per_epoch}: mean loss {:.4}, {:.2} s a step",
                        epoch + 1,
                        b + 1,
                        sum / count as f64,
                        window_started.elapsed().as_secs_f64() / 10.0
                    ));
                    window_started = Instant::now();
                }
            }
            let seconds = epoch_started.elapsed().as_secs_f64();
            let mean = sum / count.max(1) as f64;
            progress(&format!(
                "epoch {}/{}: mean loss {mean:.4}, {seconds:.0} s",
                epoch + 1,
                options.epochs
            ));
            epoch_seconds.push(seconds);
            epoch_losses.push(mean);
        }
        trainer
            .save(out, &[])
            .with_context(|| format!("saving the fine-tuned model to {}", out.display()))?;
        drop(trainer);
        let classifier = SequenceClassifier::load(&out.to_string_lossy())
            .with_context(|| format!("loading the fine-tuned model from {}", out.display()))?;
        let held_texts: Vec<&str> = texts[cut..].iter().map(String::as_str).collect();
        let held_logits = classifier
            .logits(&held_texts)?
            .iter()
            .map(|r| logits_array(r))
            .collect::<Result<Vec<_>>>()?;
        let held_labels = &labels[cut..];
        let mut calibration = calibrate(&held_logits, held_labels);
        for (k, c) in calibration.iter_mut().enumerate() {
            let positives = held_labels.iter().filter(|&&l| l & (1 << k) != 0).count();
            if positives < options.min_held_positives {
                c.threshold = 0.0;
            }
        }
        let meta = MiniLmMeta {
            version: MINILM_VERSION,
            options: options.clone(),
            calibration,
            rows: n,
            held_start: cut,
            held_logits,
            positive_weights,
            epoch_seconds,
            epoch_losses,
            train_seconds: started.elapsed().as_secs_f64(),
        };
        write_meta(out, &meta)?;
        Ok(MiniLmModel { classifier, meta })
    }

    /// Reads a folder written by [`Self::train`].
    pub fn load(dir: &Path) -> Result<Self> {
        let path = dir.join(META_FILE);
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("reading {}", path.display()))?;
        let meta: MiniLmMeta = serde_json::from_str(&text)
            .with_context(|| format!("{}: not an UNFAIR-ToS MiniLM record", path.display()))?;
        if meta.version != MINILM_VERSION {
            bail!(
                "{}: MiniLM model version {} (this build reads {MINILM_VERSION})",
                path.display(),
                meta.version
            );
        }
        if meta.calibration.len() != N_LABELS {
            bail!(
                "{}: {} calibrations, not {N_LABELS}",
                path.display(),
                meta.calibration.len()
            );
        }
        let classifier = SequenceClassifier::load(&dir.to_string_lossy())
            .with_context(|| format!("loading the fine-tuned model from {}", dir.display()))?;
        if classifier.num_labels() != N_LABELS {
            bail!(
                "{}: the classifier has {} outputs, not {N_LABELS}",
                dir.display(),
                classifier.num_labels()
            );
        }
        Ok(MiniLmModel { classifier, meta })
    }

    /// The eight logits of sentences in any form (normalised here).
    pub fn logits(&self, texts: &[&str]) -> Result<Vec<[f32; N_LABELS]>> {
        let normalised: Vec<String> = texts.iter().map(|t| normalise(t)).collect();
        let refs: Vec<&str> = normalised.iter().map(String::as_str).collect();
        self.classifier
            .logits(&refs)?
            .iter()
            .map(|r| logits_array(r))
            .collect()
    }

    /// Predicts sentences in any form: labels whose logit reaches the label's threshold, and
    /// Platt probabilities as confidence.
    pub fn predict_all(&self, texts: &[&str]) -> Result<Vec<Prediction>> {
        let calibration = &self.meta.calibration;
        Ok(self
            .logits(texts)?
            .iter()
            .map(|l| Prediction {
                labels: decide(l, calibration),
                confidence: std::array::from_fn(|k| calibrated(l[k], &calibration[k])),
            })
            .collect())
    }
}

fn write_meta(dir: &Path, meta: &MiniLmMeta) -> Result<()> {
    let path = dir.join(META_FILE);
    let tmp = dir.join(format!("{META_FILE}.tmp"));
    std::fs::write(&tmp, serde_json::to_vec_pretty(meta)?)
        .with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, &path).with_context(|| format!("writing {}", path.display()))
}

/// The SVM and the fine-tuned MiniLM together: per label the mean of their calibrated
/// probabilities, against a threshold fitted on the MiniLM's held-out block.
pub struct Ensemble {
    pub svm: UnfairModel,
    pub minilm: MiniLmModel,
    /// Per label, the probability threshold.
    pub thresholds: [f32; N_LABELS],
    /// The three classifiers compared on the held-out block of the training rows.
    pub block: BlockComparison,
}

/// The SVM, the MiniLM and their ensemble scored on the held-out block of the training
/// rows, the one comparison among them that never looks at validation. The SVM is the one
/// trained on the rows before the block, with its own thresholds; the MiniLM and the
/// ensemble get per-label thresholds cross-fitted on the block's two halves (each half
/// decided by thresholds fitted on the other), so no row is scored by a threshold fitted
/// on it. Their Platt sigmoids are the block's own: monotone per label, they do not move a
/// threshold's cut, only the ensemble's mix.
#[derive(Clone, Debug)]
pub struct BlockComparison {
    pub rows: usize,
    pub svm: Scores,
    pub minilm: Scores,
    pub ensemble: Scores,
}

/// Per label, the F1-best threshold on `scores` of `rows`; `fallback` for a label with
/// fewer than `min_positives` positives there.
fn label_thresholds(
    scores: &[[f32; N_LABELS]],
    labels: &[LabelSet],
    rows: std::ops::Range<usize>,
    min_positives: usize,
    fallback: f32,
) -> [f32; N_LABELS] {
    std::array::from_fn(|k| {
        let scored: Vec<(f32, bool)> = rows
            .clone()
            .map(|i| (scores[i][k], labels[i] & (1 << k) != 0))
            .collect();
        if scored.iter().filter(|s| s.1).count() < min_positives {
            fallback
        } else {
            best_threshold(&scored)
        }
    })
}

/// The labels whose score reaches their threshold.
fn labels_reaching(scores: &[f32; N_LABELS], thresholds: &[f32; N_LABELS]) -> LabelSet {
    (0..N_LABELS)
        .filter(|&k| scores[k] >= thresholds[k])
        .fold(0, |set, k| set | (1 << k))
}

/// Per row, the labels whose score reaches a threshold fitted on the other half of the
/// rows (`scores[row][k]`); a label with fewer than `min_positives` positives in the other
/// half uses `fallback`.
fn cross_fitted(
    scores: &[[f32; N_LABELS]],
    labels: &[LabelSet],
    min_positives: usize,
    fallback: f32,
) -> Vec<LabelSet> {
    let half = scores.len() / 2;
    let halves = [0..half, half..scores.len()];
    let mut predicted = vec![0; scores.len()];
    for (h, rows) in halves.iter().enumerate() {
        let thresholds = label_thresholds(
            scores,
            labels,
            halves[1 - h].clone(),
            min_positives,
            fallback,
        );
        for i in rows.clone() {
            predicted[i] = labels_reaching(&scores[i], &thresholds);
        }
    }
    predicted
}

impl Ensemble {
    /// Fits the thresholds on the held-out block of `rows` (the rows `minilm` was trained
    /// from): the SVM side scored by SVMs trained on the rows before the block (with `svm`'s
    /// options), the MiniLM side from its recorded held-out logits.
    pub fn fit(svm: UnfairModel, minilm: MiniLmModel, rows: &[Example]) -> Result<Self> {
        let meta = &minilm.meta;
        if rows.len() != meta.rows || meta.held_logits.len() != rows.len() - meta.held_start {
            bail!(
                "the MiniLM model was trained on {} rows, not these {}: train it again",
                meta.rows,
                rows.len()
            );
        }
        let before =
            UnfairModel::train_with_encoder(&rows[..meta.held_start], &svm.options, svm.encoder())?;
        let held = &rows[meta.held_start..];
        let texts: Vec<&str> = held.iter().map(|e| e.text.as_str()).collect();
        let svm_held = before.predict_all(&texts)?;
        let min_positives = meta.options.min_held_positives;
        let gold: Vec<LabelSet> = held.iter().map(|e| e.labels).collect();
        let minilm_p: Vec<[f32; N_LABELS]> = meta
            .held_logits
            .iter()
            .map(|l| std::array::from_fn(|k| calibrated(l[k], &meta.calibration[k])))
            .collect();
        let ensemble_p: Vec<[f32; N_LABELS]> = svm_held
            .iter()
            .zip(&minilm_p)
            .map(|(s, m)| std::array::from_fn(|k| 0.5 * (s.confidence[k] + m[k])))
            .collect();
        let thresholds =
            label_thresholds(&ensemble_p, &gold, 0..ensemble_p.len(), min_positives, 0.5);
        let svm_labels: Vec<LabelSet> = svm_held.iter().map(|p| p.labels).collect();
        let block = BlockComparison {
            rows: held.len(),
            svm: score(&gold, &svm_labels),
            minilm: score(&gold, &cross_fitted(&minilm_p, &gold, min_positives, 0.5)),
            ensemble: score(&gold, &cross_fitted(&ensemble_p, &gold, min_positives, 0.5)),
        };
        Ok(Ensemble {
            svm,
            minilm,
            thresholds,
            block,
        })
    }

    /// Predicts sentences in any form.
    pub fn predict_all(&self, texts: &[&str]) -> Result<Vec<Prediction>> {
        let svm = self.svm.predict_all(texts)?;
        let minilm = self.minilm.predict_all(texts)?;
        Ok(svm
            .iter()
            .zip(&minilm)
            .map(|(s, m)| {
                let confidence: [f32; N_LABELS] =
                    std::array::from_fn(|k| 0.5 * (s.confidence[k] + m.confidence[k]));
                let labels = labels_reaching(&confidence, &self.thresholds);
                Prediction { labels, confidence }
            })
            .collect())
    }
}

/// Cache folder of a MiniLM model (inside the UNFAIR-ToS cache directory).
pub fn cache_folder(cache_dir: &Path, key: &str) -> PathBuf {
    cache_dir.join(format!("unfair-tos-minilm-v{MINILM_VERSION}-{key}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cross_fitted_thresholds_decide_each_half_by_the_other() {
        // Label 0: positives score 0.9 in the first half and 0.6 in the second; negatives
        // 0.5 in the first half and 0.1 in the second. The second half's threshold (between
        // 0.6 and 0.1) keeps the first half's negatives (0.5); the first half's (between
        // 0.9 and 0.5) misses the second half's positives (0.6).
        let row =
            |p: f32| -> [f32; N_LABELS] { std::array::from_fn(|k| if k == 0 { p } else { 0.0 }) };
        let scores = vec![
            row(0.9),
            row(0.5),
            row(0.9),
            row(0.5),
            row(0.6),
            row(0.1),
            row(0.6),
            row(0.1),
        ];
        let labels: Vec<LabelSet> = vec![1, 0, 1, 0, 1, 0, 1, 0];
        let predicted = cross_fitted(&scores, &labels, 1, 0.5);
        assert_eq!(predicted, vec![1, 1, 1, 1, 0, 0, 0, 0]);
        // Too few positives on the other side: the fallback threshold decides.
        let predicted = cross_fitted(&scores, &labels, 5, 0.55);
        assert_eq!(predicted, vec![1, 0, 1, 0, 1, 0, 1, 0]);
    }

    #[test]
    fn held_block_is_the_last_share_of_rows() {
        assert_eq!(held_start(5532, 0.2), 4426);
        assert_eq!(held_start(10, 0.2), 8);
        assert_eq!(held_start(3, 0.0), 3);
    }

    #[test]
    fn epoch_batches_cover_every_row_once_and_pad_little() {
        let lengths: Vec<usize> = (0..1000).map(|i| (i * 37) % 120 + 1).collect();
        let mut rng = SplitMix(3);
        let batches = epoch_batches(&lengths, 32, &mut rng);
        let mut seen: Vec<usize> = batches.iter().flatten().copied().collect();
        seen.sort_unstable();
        assert_eq!(seen, (0..1000).collect::<Vec<_>>());
        assert!(batches.iter().all(|b| !b.is_empty() && b.len() <= 32));
        // Sorting inside windows keeps a batch's lengths close together.
        let spread: f64 = batches
            .iter()
            .map(|b| {
                let lens: Vec<usize> = b.iter().map(|&i| lengths[i]).collect();
                (lens.iter().max().unwrap_or(&0) - lens.iter().min().unwrap_or(&0)) as f64
            })
            .sum::<f64>()
            / batches.len() as f64;
        assert!(spread < 20.0, "{spread}");
        // Another epoch draws another order.
        assert_ne!(batches, epoch_batches(&lengths, 32, &mut rng));
    }
}
