//! Where the classifier comes from: trained from the shared UNFAIR-ToS data (one to three
//! minutes on 2 cores, most of it embedding the sentences) the first time a command needs it,
//! and cached under `.precedent/cache/unfair-tos/` ([`default_cache`]) keyed by a hash of the
//! training files, the options, the embedder and [`MODEL_VERSION`], so a changed data file,
//! option or model never loads a stale classifier.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result};
use precedent_models::Embedder;
use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::data::{read_csv, Example};
use crate::minilm::{cache_folder, MiniLmModel, MiniLmOptions, MINILM_VERSION};
use crate::model::{ModelOptions, UnfairModel, MODEL_VERSION};

/// The training file of the shared data.
pub const TRAIN_FILE: &str = "unfair_tos_train.csv";
/// The validation file of the shared data.
pub const VALIDATION_FILE: &str = "unfair_tos_validation.csv";

/// Which shared rows the model learns from (`--fit-on`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum TrainSplit {
    /// `unfair_tos_train.csv` only (LexGLUE's protocol): what the validation figures are
    /// measured with, since a model fitted on the validation rows cannot be scored on them.
    Train,
    /// Train and validation rows together (the default: 41% more sentences, which the rare
    /// types need; thresholds then come from contiguous-block CV over both). For the official
    /// test split and the product, never for scoring the validation file.
    #[cfg_attr(feature = "clap", value(name = "train-validation"))]
    TrainAndValidation,
}

impl TrainSplit {
    fn files(self) -> &'static [&'static str] {
        match self {
            TrainSplit::Train => &[TRAIN_FILE],
            TrainSplit::TrainAndValidation => &[TRAIN_FILE, VALIDATION_FILE],
        }
    }
}

/// Default cache directory (`.precedent/cache/unfair-tos` where
/// [`precedent_paths::state_path`] puts it).
pub fn default_cache() -> PathBuf {
    precedent_paths::state_path("cache/unfair-tos")
}

/// Finds the UNFAIR-ToS folder: `PRECEDENT_UNFAIR_TOS_DIR`, else `shared/data/unfair_tos`
/// beside the working directory, the executable, or an ancestor of either.
pub fn find_data_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("PRECEDENT_UNFAIR_TOS_DIR") {
        return Some(PathBuf::from(dir));
    }
    precedent_paths::search_roots()
        .into_iter()
        .map(|a| a.join("shared/data/unfair_tos"))
        .find(|d| d.join(TRAIN_FILE).is_file())
}

/// The training rows of `split` from `data_dir`, files in order.
pub fn training_rows(data_dir: &Path, split: TrainSplit) -> Result<Vec<Example>> {
    let mut rows = Vec::new();
    for file in split.files() {
        rows.extend(read_csv(&data_dir.join(file))?);
    }
    Ok(rows)
}

/// Cache file name of a model trained on `split` of `data_dir` with `options` (and the
/// sentence vectors of the embedder with fingerprint `encoder`, if any).
fn cache_key(
    data_dir: &Path,
    split: TrainSplit,
    options: &ModelOptions,
    encoder: Option<&str>,
) -> Result<String> {
    let mut h = Sha256::new();
    h.update(MODEL_VERSION.to_le_bytes());
    h.update(serde_json::to_vec(options)?);
    if let Some(fingerprint) = encoder {
        h.update(fingerprint.as_bytes());
    }
    for file in split.files() {
        let path = data_dir.join(file);
        h.update(file.as_bytes());
        h.update(std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?);
    }
    let hex: String = h
        .finalize()
        .iter()
        .take(12)
        .map(|b| format!("{b:02x}"))
        .collect();
    Ok(format!("unfair-tos-v{MODEL_VERSION}-{hex}.bin"))
}

/// Loads the cached model, or trains (telling `on_train` first) and caches it. A cache that
/// cannot be written is not an error: the model trained now is still returned. Options that
/// use sentence vectors load the default embedder (all-MiniLM-L6-v2) for training and for the
/// model's predictions.
pub fn load_or_train(
    data_dir: &Path,
    cache_dir: &Path,
    split: TrainSplit,
    options: &ModelOptions,
    on_train: impl FnOnce(),
) -> Result<UnfairModel> {
    let encoder = if options.sentence_vectors > 0.0 {
        Some(Arc::new(Embedder::load_default().context(
            "loading all-MiniLM-L6-v2 for the UNFAIR-ToS model's sentence vectors",
        )?))
    } else {
        None
    };
    let fingerprint = encoder.as_ref().map(|e| e.fingerprint().to_owned());
    let path = cache_dir.join(cache_key(data_dir, split, options, fingerprint.as_deref())?);
    if path.is_file() {
        if let Ok(model) = UnfairModel::load(&path) {
            return Ok(model.with_encoder(encoder));
        }
    }
    on_train();
    let rows = training_rows(data_dir, split)?;
    let model = UnfairModel::train_with_encoder(&rows, options, encoder)?;
    if let Err(e) = model.save(&path) {
        eprintln!("warning: could not cache the UNFAIR-ToS model: {e:#}");
    }
    Ok(model)
}

/// Cache key of a MiniLM model fine-tuned on `split` of `data_dir` with `options`.
fn minilm_key(data_dir: &Path, split: TrainSplit, options: &MiniLmOptions) -> Result<String> {
    let mut h = Sha256::new();
    h.update(MINILM_VERSION.to_le_bytes());
    h.update(serde_json::to_vec(options)?);
    for file in split.files() {
        let path = data_dir.join(file);
        h.update(file.as_bytes());
        h.update(std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?);
    }
    Ok(h.finalize()
        .iter()
        .take(12)
        .map(|b| format!("{b:02x}"))
        .collect())
}

/// Loads the cached fine-tuned MiniLM classifier, or fine-tunes it (about 30 minutes on 2 cores;
/// `progress` gets the per-epoch timing) and caches it as a model folder in `cache_dir`.
pub fn load_or_train_minilm(
    data_dir: &Path,
    cache_dir: &Path,
    split: TrainSplit,
    options: &MiniLmOptions,
    progress: &mut dyn FnMut(&str),
) -> Result<MiniLmModel> {
    let folder = cache_folder(cache_dir, &minilm_key(data_dir, split, options)?);
    if folder.join(crate::minilm::META_FILE).is_file() {
        match MiniLmModel::load(&folder) {
            Ok(model) => return Ok(model),
            Err(e) => progress(&format!(
                "cached MiniLM model unusable ({e:#}); training again"
            )),
        }
    }
    let rows = training_rows(data_dir, split)?;
    progress(&format!(
        "fine-tuning the MiniLM classifier on {} sentences from {} (once; cached in {})",
        rows.len(),
        data_dir.display(),
        folder.display()
    ));
    MiniLmModel::train(&rows, options, &folder, progress)
}

/// Where the UNFAIR-ToS model comes from, as `review`, `serve` and `eval-unfair-tos` name it:
/// the data folder (else the one found beside the checkout), the rows it learns from and the
/// cache of trained models.
#[derive(Clone, Debug)]
pub struct UnfairSource {
    pub data: Option<PathBuf>,
    pub split: TrainSplit,
    pub cache: PathBuf,
}

impl UnfairSource {
    /// The data folder: the one given, else [`find_data_dir`].
    pub fn data_dir(&self) -> Result<PathBuf> {
        match &self.data {
            Some(d) => Ok(d.clone()),
            None => find_data_dir().context(
                "no UNFAIR-ToS data to train from: pass --data DIR (holding unfair_tos_train.csv)",
            ),
        }
    }

    /// The cached model, or one trained now (a few seconds) and cached, saying so on stderr.
    pub fn load(&self) -> Result<UnfairModel> {
        let dir = self.data_dir()?;
        load_or_train(
            &dir,
            &self.cache,
            self.split,
            &ModelOptions::default(),
            || {
                eprintln!(
                    "training the UNFAIR-ToS classifier from {} (once; cached in {})",
                    dir.display(),
                    self.cache.display()
                )
            },
        )
        .with_context(|| format!("training the UNFAIR-ToS classifier from {}", dir.display()))
    }
}
