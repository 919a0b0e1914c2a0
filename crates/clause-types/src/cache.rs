//! Where the typer comes from: it is trained from the CUAD data (≈1 minute on 2 cores) the first
//! time it is needed and cached under `.precedent/cache/typer/` (see [`default_cache`]), keyed
//! by a hash of the training data, the training options and [`TYPER_VERSION`]. Not committed:
//! the weights are 43 MB.
//! The single-clause classifier of LegalBench runs is cached the same way, under
//! `.precedent/cache/clause-classifier/`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result};
use fs4::fs_std::FileExt;
use sha2::{Digest, Sha256};

use crate::clause_classifier::{
    training_examples, ClassifierOptions, ClauseClassifier, CLASSIFIER_VERSION,
};
use crate::dense::SentenceEmbedder;
use crate::typer::{prepare, ClauseTyper, TrainOptions, TYPER_VERSION};
use precedent_cuad::dataset::load;

/// Default cache directory of the typer: `.precedent/cache/typer` where
/// [`precedent_paths::state_path`] puts it (an existing cache above the working directory or
/// the executable, else the executable's checkout, else the working directory).
pub fn default_cache() -> PathBuf {
    precedent_paths::state_path("cache/typer")
}

/// Default cache directory of the single-clause classifier (LegalBench, and the typer's second
/// stage), beside the typer's.
pub fn default_classifier_cache() -> PathBuf {
    precedent_paths::state_path("cache/clause-classifier")
}

/// The clause classifiers' cache beside `typer_cache` (its sibling `clause-classifier`), so that
/// a typer cache moved elsewhere takes the classifiers with it; beside the default typer cache
/// this is [`default_classifier_cache`].
pub fn classifier_cache_beside(typer_cache: &Path) -> PathBuf {
    typer_cache.parent().map_or_else(
        || PathBuf::from("clause-classifier"),
        |p| p.join("clause-classifier"),
    )
}

/// Finds the CUAD folder: `PRECEDENT_CUAD_DIR`, else `shared/data/cuad` beside the working
/// directory, the executable, or any of their ancestors (the layout of this project's
/// checkouts; [`precedent_paths::search_roots`]).
pub fn find_cuad_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("PRECEDENT_CUAD_DIR") {
        return Some(PathBuf::from(dir));
    }
    precedent_paths::search_roots()
        .into_iter()
        .map(|a| a.join("shared/data/cuad"))
        .find(|d| d.join("master_clauses.csv").is_file())
}

/// Hash of what the model is trained from: the CSV and every text file (name and content).
pub fn data_fingerprint(cuad_dir: &Path, options: &TrainOptions) -> Result<String> {
    let mut header = TYPER_VERSION.to_le_bytes().to_vec();
    header.extend(serde_json::to_vec(options)?);
    fingerprint(cuad_dir, &header)
}

/// Key of the sentence vectors of the first `contracts` CUAD contracts embedded by `model` with
/// a `max_tokens` window (`eval-cuad --dense` caches them: embedding all 398 contracts' 94k
/// distinct sentences takes 15-35 minutes on 2 cores).
pub fn sentences_fingerprint(
    cuad_dir: &Path,
    model: &str,
    max_tokens: usize,
    contracts: usize,
) -> Result<String> {
    let header = format!("sentences-v1 {model} {max_tokens} {contracts}");
    fingerprint(cuad_dir, header.as_bytes())
}

/// Hash of `header` (what identifies the model kind, version and options) and the CUAD data.
fn fingerprint(cuad_dir: &Path, header: &[u8]) -> Result<String> {
    let mut h = Sha256::new();
    h.update(header);
    let csv = cuad_dir.join("master_clauses.csv");
    h.update(std::fs::read(&csv).with_context(|| format!("reading {}", csv.display()))?);
    let txt_dir = cuad_dir.join("full_contract_txt");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&txt_dir)
        .with_context(|| format!("reading {}", txt_dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    files.sort();
    for f in files {
        h.update(
            f.file_name()
                .map(|n| n.as_encoded_bytes())
                .unwrap_or_default(),
        );
        h.update(std::fs::read(&f).with_context(|| format!("reading {}", f.display()))?);
    }
    Ok(h.finalize()
        .iter()
        .take(12)
        .map(|b| format!("{b:02x}"))
        .collect())
}

/// Loads the cached typer for `cuad_dir`, or trains and caches it. `on_train` is told before a
/// (slow) training starts.
///
/// Processes that need the typer at the same time (a server and an ingest, parallel tests) hold
/// a lock file in `cache_dir` while they look and train, so the minute of training happens once
/// and the others load its result instead of training again into the same file.
pub fn load_or_train(
    cuad_dir: &Path,
    cache_dir: &Path,
    options: &TrainOptions,
    on_train: impl FnOnce(),
) -> Result<ClauseTyper> {
    let fingerprint = data_fingerprint(cuad_dir, options)?;
    let path = cache_dir.join(format!("typer-v{TYPER_VERSION}-{fingerprint}.bin"));
    cached(
        cache_dir,
        &path,
        ClauseTyper::load,
        |typer: &ClauseTyper| typer.save(&path),
        || {
            on_train();
            let data = load(cuad_dir)?;
            let contracts: Vec<&_> = data.contracts.iter().collect();
            let prepared = prepare(&contracts);
            let refs: Vec<&_> = prepared.iter().collect();
            Ok(ClauseTyper::train(
                &refs,
                options,
                &format!("{} sha256:{fingerprint}", cuad_dir.display()),
            ))
        },
    )
}

/// Loads the cached single-clause classifier for `cuad_dir`, or trains it on every annotated
/// span of the contracts (and, per `options`, their unmatched sentences; with its thresholds
/// from an internal cross-validation when `options` asks) and caches it, under the same locking
/// as [`load_or_train`]. Models of different options are cached side by side.
pub fn load_or_train_classifier(
    cuad_dir: &Path,
    cache_dir: &Path,
    options: &ClassifierOptions,
    on_train: impl FnOnce(),
) -> Result<ClauseClassifier> {
    load_or_train_classifier_with_view(cuad_dir, cache_dir, options, None, on_train)
}

/// [`load_or_train_classifier`] for options with a sentence view: `embedder` embeds the spans
/// when training, and is attached to the returned model for scoring. Models fitted on another
/// embedder are cached apart.
pub fn load_or_train_classifier_with_view(
    cuad_dir: &Path,
    cache_dir: &Path,
    options: &ClassifierOptions,
    embedder: Option<Arc<dyn SentenceEmbedder>>,
    on_train: impl FnOnce(),
) -> Result<ClauseClassifier> {
    let mut header = b"clause-classifier".to_vec();
    header.extend(CLASSIFIER_VERSION.to_le_bytes());
    header.extend(serde_json::to_vec(options)?);
    if options.reads_vectors() {
        if let Some(e) = &embedder {
            header.extend(e.model_id().as_bytes());
        }
    }
    let fingerprint = fingerprint(cuad_dir, &header)?;
    let path = cache_dir.join(format!(
        "clause-classifier-v{CLASSIFIER_VERSION}-{fingerprint}.bin"
    ));
    let mut model = cached(
        cache_dir,
        &path,
        ClauseClassifier::load,
        |model: &ClauseClassifier| model.save(&path),
        || {
            on_train();
            let data = load(cuad_dir)?;
            let contracts: Vec<&_> = data.contracts.iter().collect();
            ClauseClassifier::train_with_view(
                &training_examples(&contracts, options),
                options,
                &format!("{} sha256:{fingerprint}", cuad_dir.display()),
                embedder.clone(),
            )
        },
    )?;
    if let (true, Some(e)) = (model.has_view(), embedder) {
        model.set_sentence_embedder(e)?;
    }
    Ok(model)
}

/// The model at `path` if it loads, else `train`ed and `save`d there, all while holding the
/// cache's lock file.
///
/// Processes that need a model at the same time (a server and an ingest, parallel tests) hold
/// a lock file in `cache_dir` while they look and train, so the training happens once and the
/// others load its result instead of training again into the same file.
fn cached<M>(
    cache_dir: &Path,
    path: &Path,
    load: impl Fn(&Path) -> Result<M>,
    save: impl FnOnce(&M) -> Result<()>,
    train: impl FnOnce() -> Result<M>,
) -> Result<M> {
    std::fs::create_dir_all(cache_dir)
        .with_context(|| format!("creating {}", cache_dir.display()))?;
    let lock_path = cache_dir.join("train.lock");
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .with_context(|| format!("opening {}", lock_path.display()))?;
    // Released when `lock` is dropped (the file is closed) at the end of this function.
    FileExt::lock_exclusive(&lock).with_context(|| format!("locking {}", lock_path.display()))?;
    if path.is_file() {
        if let Ok(model) = load(path) {
            return Ok(model);
        }
    }
    let model = train()?;
    save(&model)?;
    Ok(model)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_classifier_cache_sits_beside_the_typer_cache() {
        assert_eq!(
            classifier_cache_beside(Path::new(".precedent/cache/typer")),
            Path::new(".precedent/cache/clause-classifier")
        );
        assert_eq!(
            classifier_cache_beside(Path::new("/tmp/audit/typer-cache")),
            Path::new("/tmp/audit/clause-classifier")
        );
    }
}
