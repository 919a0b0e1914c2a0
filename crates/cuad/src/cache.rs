//! Where the typer comes from: it is trained from the CUAD data (≈1 minute on 2 cores) the first
//! time it is needed and cached under `.precedent/cache/typer/`, keyed by a hash of the training
//! data, the training options and [`TYPER_VERSION`]. Not committed: the weights are 43 MB.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use fs4::fs_std::FileExt;
use sha2::{Digest, Sha256};

use crate::dataset::load;
use crate::typer::{prepare, ClauseTyper, TrainOptions, TYPER_VERSION};

/// Default cache directory, relative to the working directory.
pub const DEFAULT_CACHE: &str = ".precedent/cache/typer";

/// Finds the CUAD folder: `PRECEDENT_CUAD_DIR`, else `shared/data/cuad` next to the working
/// directory or any of its ancestors (the layout of this project's checkouts).
pub fn find_cuad_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("PRECEDENT_CUAD_DIR") {
        return Some(PathBuf::from(dir));
    }
    let cwd = std::env::current_dir().ok()?;
    cwd.ancestors()
        .map(|a| a.join("shared/data/cuad"))
        .find(|d| d.join("master_clauses.csv").is_file())
}

/// Hash of what the model is trained from: the CSV and every text file (name and content).
pub fn data_fingerprint(cuad_dir: &Path, options: &TrainOptions) -> Result<String> {
    let mut h = Sha256::new();
    h.update(TYPER_VERSION.to_le_bytes());
    h.update(serde_json::to_vec(options)?);
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
        if let Ok(typer) = ClauseTyper::load(&path) {
            return Ok(typer);
        }
    }
    on_train();
    let data = load(cuad_dir)?;
    let contracts: Vec<&_> = data.contracts.iter().collect();
    let prepared = prepare(&contracts);
    let refs: Vec<&_> = prepared.iter().collect();
    let typer = ClauseTyper::train(
        &refs,
        options,
        &format!("{} sha256:{fingerprint}", cuad_dir.display()),
    );
    typer.save(&path)?;
    Ok(typer)
}
