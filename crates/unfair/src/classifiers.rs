//! The three UNFAIR-ToS classifiers behind one face: the linear SVMs, the fine-tuned MiniLM and
//! their ensemble, loaded (or trained and cached) by kind, predicting the same way.
//!
//! Why here: which model answers, how the ensemble is fitted on the training rows, and how
//! predictions are written for LexGLUE's scorer belong with the models; `precedent
//! eval-unfair-tos` only parses its flags and prints the scores.

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};

use crate::cache::{load_or_train_minilm, training_rows, TrainSplit, UnfairSource};
use crate::minilm::{BlockComparison, Ensemble, MiniLmModel, MiniLmOptions};
use crate::model::Prediction;
use crate::{label_ids, LabelSet, UnfairModel};

/// Which classifier scores the rows (`eval-unfair-tos --model`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum ClassifierKind {
    /// Per-label linear SVMs over TF-IDF (trained in seconds).
    Svm,
    /// all-MiniLM-L6-v2 fine-tuned with eight sigmoid outputs (about 30 minutes on 2 cores
    /// the first time, then cached).
    Minilm,
    /// The mean of the SVM's and the fine-tuned MiniLM's calibrated probabilities.
    Ensemble,
}

/// A loaded classifier of any kind.
pub enum Classifier {
    Svm(Box<UnfairModel>),
    Minilm(Box<MiniLmModel>),
    Ensemble(Box<Ensemble>),
}

impl Classifier {
    /// The prediction of each text, in order.
    pub fn predict_all(&self, texts: &[&str]) -> Result<Vec<Prediction>> {
        match self {
            Classifier::Svm(m) => m.predict_all(texts),
            Classifier::Minilm(m) => m.predict_all(texts),
            Classifier::Ensemble(m) => m.predict_all(texts),
        }
    }

    /// Sentences the model (its neural part, for the ensemble) was fitted on.
    pub fn trained_on(&self) -> usize {
        match self {
            Classifier::Svm(m) => m.trained_on,
            Classifier::Minilm(m) => m.meta.held_start,
            Classifier::Ensemble(m) => m.minilm.meta.held_start,
        }
    }

    /// For the ensemble, the three classifiers compared on the training rows' held-out
    /// block ([`BlockComparison`]).
    pub fn block_comparison(&self) -> Option<&BlockComparison> {
        match self {
            Classifier::Ensemble(m) => Some(&m.block),
            _ => None,
        }
    }

    /// Seconds the MiniLM fine-tuning took when it was trained (cached or now).
    pub fn fine_tune_seconds(&self) -> Option<f64> {
        match self {
            Classifier::Svm(_) => None,
            Classifier::Minilm(m) => Some(m.meta.train_seconds),
            Classifier::Ensemble(m) => Some(m.minilm.meta.train_seconds),
        }
    }
}

/// Where a classifier is loaded from (or trained from, then cached).
pub struct ClassifierSource<'a> {
    /// The UNFAIR-ToS data folder.
    pub data_dir: &'a Path,
    /// Cache directory of trained models.
    pub cache: &'a Path,
    /// Which shared rows the model learns from.
    pub split: TrainSplit,
    /// How the MiniLM classifier is fine-tuned.
    pub minilm: &'a MiniLmOptions,
}

/// Loads the classifier of `kind`: the SVMs through `load_svm` (cached by the caller's own
/// options), the MiniLM fine-tuned once and cached (its progress lines to `log`), and the
/// ensemble's thresholds fitted on the training rows.
pub fn load_classifier(
    kind: ClassifierKind,
    source: &ClassifierSource<'_>,
    load_svm: &dyn Fn() -> Result<UnfairModel>,
    log: &mut dyn FnMut(&str),
) -> Result<Classifier> {
    if kind == ClassifierKind::Svm {
        return Ok(Classifier::Svm(Box::new(load_svm()?)));
    }
    let dir = source.data_dir;
    let minilm = load_or_train_minilm(dir, source.cache, source.split, source.minilm, log)
        .with_context(|| format!("fine-tuning the MiniLM classifier from {}", dir.display()))?;
    if kind == ClassifierKind::Minilm {
        return Ok(Classifier::Minilm(Box::new(minilm)));
    }
    let svm = load_svm()?;
    let rows = training_rows(dir, source.split)?;
    let ensemble = Ensemble::fit(svm, minilm, &rows)
        .with_context(|| format!("fitting the ensemble's thresholds on {}", dir.display()))?;
    Ok(Classifier::Ensemble(Box::new(ensemble)))
}

/// The classifier of `kind` from `source` ([`load_classifier`], with the SVMs of
/// [`UnfairSource::load`]); the MiniLM's progress lines go to stderr.
pub fn load_from(
    kind: ClassifierKind,
    source: &UnfairSource,
    minilm: &MiniLmOptions,
) -> Result<Classifier> {
    let load_svm = || source.load();
    if kind == ClassifierKind::Svm {
        return Ok(Classifier::Svm(Box::new(load_svm()?)));
    }
    let source = ClassifierSource {
        data_dir: &source.data_dir()?,
        cache: &source.cache,
        split: source.split,
        minilm,
    };
    load_classifier(kind, &source, &load_svm, &mut |line| eprintln!("{line}"))
}

/// Writes one `{"row": i, "labels": [ids]}` line per input row, in input order.
pub fn write_predictions(path: &Path, predicted: &[LabelSet]) -> Result<()> {
    let file =
        std::fs::File::create(path).with_context(|| format!("writing {}", path.display()))?;
    let mut out = std::io::BufWriter::new(file);
    for (row, &set) in predicted.iter().enumerate() {
        let line = serde_json::json!({ "row": row, "labels": label_ids(set) });
        writeln!(out, "{line}").with_context(|| format!("writing {}", path.display()))?;
    }
    out.flush()
        .with_context(|| format!("writing {}", path.display()))
}
