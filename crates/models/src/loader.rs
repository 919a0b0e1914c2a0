//! Loading the parts every BERT-based model folder has: config, weights, tokenizer.

use std::path::{Path, PathBuf};

use candle_core::Device;
use sha2::{Digest, Sha256};
use tokenizers::Tokenizer;

use crate::bert::{BertConfig, Weights};
use crate::locate::{self, ResolvedModel};
use crate::ModelError;

pub(crate) struct Loaded {
    pub name: String,
    pub dir: PathBuf,
    pub cfg: BertConfig,
    pub weights: Weights,
    pub tokenizer: Tokenizer,
    /// Hash over weights and tokenizer: two folders with the same files are the
    /// same model wherever they live, and a re-trained model never collides.
    pub hasher: Sha256,
    pub model_max_length: Option<usize>,
}

fn require(dir: &Path, file: &str) -> Result<PathBuf, ModelError> {
    let p = dir.join(file);
    if p.is_file() {
        Ok(p)
    } else {
        let mut file = file.to_string();
        if file == "model.safetensors" && dir.join("pytorch_model.bin").is_file() {
            file.push_str(" (only pytorch_model.bin is present: convert it to safetensors)");
        }
        Err(ModelError::MissingFile {
            dir: dir.to_path_buf(),
            file,
        })
    }
}

pub(crate) fn load(spec: &str) -> Result<Loaded, ModelError> {
    let ResolvedModel { dir, name } = locate::resolve(spec)?;
    load_dir(&dir, name)
}

pub(crate) fn load_dir(dir: &Path, name: String) -> Result<Loaded, ModelError> {
    if !dir.is_dir() {
        return Err(ModelError::MissingDirectory(dir.to_path_buf()));
    }
    let config_path = require(dir, "config.json")?;
    let tok_path = require(dir, "tokenizer.json")?;
    let weights_path = require(dir, "model.safetensors")?;
    let cfg = BertConfig::from_file(&config_path)?;

    let tok_bytes = std::fs::read(&tok_path).map_err(|e| ModelError::io(&tok_path, e))?;
    let mut tokenizer = Tokenizer::from_bytes(&tok_bytes)
        .map_err(|e| ModelError::tokenizer(tok_path.display(), e))?;
    // tokenizer.json files often carry the padding/truncation used at training time
    // (MiniLM's says pad and truncate to 128), which must not leak into inference:
    // we pad and truncate ourselves.
    tokenizer
        .with_truncation(None)
        .map_err(|e| ModelError::tokenizer(tok_path.display(), e))?;
    tokenizer.with_padding(None);

    let data = std::fs::read(&weights_path).map_err(|e| ModelError::io(&weights_path, e))?;
    let weights = Weights::from_buffer(&data, &weights_path, &Device::Cpu)?;
    let mut hasher = Sha256::new();
    hasher.update(&data);
    hasher.update(&tok_bytes);
    drop(data);

    let model_max_length = {
        let p = dir.join("tokenizer_config.json");
        std::fs::read_to_string(&p)
            .ok()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            .and_then(|v| v.get("model_max_length").and_then(|m| m.as_u64()))
            // HF writes 1e30 for "no limit".
            .filter(|&m| m > 2 && m < 1_000_000)
            .map(|m| m as usize)
    };
    Ok(Loaded {
        name,
        dir: dir.to_path_buf(),
        cfg,
        weights,
        tokenizer,
        hasher,
        model_max_length,
    })
}

/// Finds the ids a tokenizer's post-processor puts around a single sequence, so the
/// windows we cut ourselves get exactly the same [CLS] ... [SEP] framing.
pub(crate) fn special_frame(tok: &Tokenizer) -> Result<(Vec<u32>, Vec<u32>), ModelError> {
    let probe = "hello";
    let bare = tok
        .encode_fast(probe, false)
        .map_err(|e| ModelError::tokenizer("probing special tokens", e))?;
    let framed = tok
        .encode_fast(probe, true)
        .map_err(|e| ModelError::tokenizer("probing special tokens", e))?;
    let (bare, framed) = (bare.get_ids(), framed.get_ids());
    let at = (0..=framed.len().saturating_sub(bare.len()))
        .find(|&i| framed[i..].starts_with(bare))
        .ok_or_else(|| {
            ModelError::tokenizer(
                "probing special tokens",
                "post-processor output does not contain the unframed tokens",
            )
        })?;
    Ok((framed[..at].to_vec(), framed[at + bare.len()..].to_vec()))
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
