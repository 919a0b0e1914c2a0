//! Reading the sentence-transformers side files (modules.json, pooling config,
//! sentence_bert_config.json) that decide how token vectors become one embedding.

use std::path::Path;

use serde::Deserialize;

use crate::ModelError;

/// One pooling strategy; sentence-transformers concatenates all enabled ones in this
/// order (cls, max, mean, mean_sqrt_len), so we do too.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PoolMode {
    Cls,
    Max,
    Mean,
    MeanSqrtLen,
}

#[derive(Debug, Clone)]
pub(crate) struct StConfig {
    pub pooling: Vec<PoolMode>,
    pub normalize: bool,
    pub max_seq_length: Option<usize>,
}

#[derive(Deserialize)]
struct ModuleEntry {
    #[serde(default)]
    path: String,
    #[serde(rename = "type")]
    kind: String,
}

#[derive(Deserialize, Default)]
struct PoolingFile {
    #[serde(default)]
    pooling_mode: Option<String>,
    #[serde(default)]
    pooling_mode_cls_token: bool,
    #[serde(default)]
    pooling_mode_mean_tokens: bool,
    #[serde(default)]
    pooling_mode_max_tokens: bool,
    #[serde(default)]
    pooling_mode_mean_sqrt_len_tokens: bool,
    #[serde(default)]
    pooling_mode_weightedmean_tokens: bool,
    #[serde(default)]
    pooling_mode_lasttoken: bool,
}

#[derive(Deserialize)]
struct SbertFile {
    #[serde(default)]
    max_seq_length: Option<usize>,
}

fn read_json<T: for<'de> Deserialize<'de>>(path: &Path) -> Result<T, ModelError> {
    let text = std::fs::read_to_string(path).map_err(|e| ModelError::io(path, e))?;
    serde_json::from_str(&text).map_err(|e| ModelError::config(path, e))
}

impl StConfig {
    /// Reads the sentence-transformers configuration of `dir`. A plain Hugging Face
    /// folder without modules.json gets what sentence-transformers itself would
    /// build for it: mean pooling, no normalisation.
    pub fn load(dir: &Path) -> Result<Self, ModelError> {
        let max_seq_length = {
            let p = dir.join("sentence_bert_config.json");
            if p.is_file() {
                read_json::<SbertFile>(&p)?.max_seq_length
            } else {
                None
            }
        };
        let modules_path = dir.join("modules.json");
        if !modules_path.is_file() {
            return Ok(Self {
                pooling: vec![PoolMode::Mean],
                normalize: false,
                max_seq_length,
            });
        }
        let modules: Vec<ModuleEntry> = read_json(&modules_path)?;
        let mut pooling = None;
        let mut normalize = false;
        for m in &modules {
            let kind = m.kind.rsplit('.').next().unwrap_or(&m.kind);
            match kind {
                "Transformer" => {}
                "Pooling" => {
                    let p = dir.join(&m.path).join("config.json");
                    let file: PoolingFile = if p.is_file() {
                        read_json(&p)?
                    } else {
                        PoolingFile {
                            pooling_mode_mean_tokens: true,
                            ..Default::default()
                        }
                    };
                    pooling = Some(parse_pooling(&file, &p)?);
                }
                "Normalize" => normalize = true,
                other => {
                    // Silently skipping a Dense or other layer would produce vectors
                    // that look fine but do not match the model: refuse instead.
                    return Err(ModelError::config(
                        &modules_path,
                        format!("sentence-transformers module `{other}` is not supported"),
                    ));
                }
            }
        }
        Ok(Self {
            pooling: pooling.unwrap_or_else(|| vec![PoolMode::Mean]),
            normalize,
            max_seq_length,
        })
    }
}

fn parse_pooling(f: &PoolingFile, path: &Path) -> Result<Vec<PoolMode>, ModelError> {
    if f.pooling_mode_weightedmean_tokens || f.pooling_mode_lasttoken {
        return Err(ModelError::config(
            path,
            "weighted-mean and last-token pooling are not supported",
        ));
    }
    if let Some(mode) = &f.pooling_mode {
        return match mode.as_str() {
            "mean" => Ok(vec![PoolMode::Mean]),
            "cls" => Ok(vec![PoolMode::Cls]),
            "max" => Ok(vec![PoolMode::Max]),
            "mean_sqrt_len_tokens" => Ok(vec![PoolMode::MeanSqrtLen]),
            other => Err(ModelError::config(
                path,
                format!("pooling_mode `{other}` is not supported"),
            )),
        };
    }
    let mut modes = Vec::new();
    if f.pooling_mode_cls_token {
        modes.push(PoolMode::Cls);
    }
    if f.pooling_mode_max_tokens {
        modes.push(PoolMode::Max);
    }
    if f.pooling_mode_mean_tokens {
        modes.push(PoolMode::Mean);
    }
    if f.pooling_mode_mean_sqrt_len_tokens {
        modes.push(PoolMode::MeanSqrtLen);
    }
    if modes.is_empty() {
        return Err(ModelError::config(path, "no pooling mode enabled"));
    }
    Ok(modes)
}

/// Pools one sequence's token vectors (`tokens` is `len * hidden`, row-major).
pub(crate) fn pool(modes: &[PoolMode], tokens: &[f32], len: usize, hidden: usize) -> Vec<f32> {
    let mut out = Vec::with_capacity(hidden * modes.len());
    let rows = || tokens.chunks_exact(hidden).take(len);
    for mode in modes {
        match mode {
            PoolMode::Cls => out.extend_from_slice(&tokens[..hidden]),
            PoolMode::Max => {
                let mut m = vec![f32::NEG_INFINITY; hidden];
                for r in rows() {
                    for (a, &b) in m.iter_mut().zip(r) {
                        *a = a.max(b);
                    }
                }
                out.extend(m);
            }
            PoolMode::Mean | PoolMode::MeanSqrtLen => {
                let mut s = vec![0f32; hidden];
                for r in rows() {
                    for (a, &b) in s.iter_mut().zip(r) {
                        *a += b;
                    }
                }
                let n = len.max(1) as f32;
                let d = if *mode == PoolMode::Mean { n } else { n.sqrt() };
                out.extend(s.into_iter().map(|v| v / d));
            }
        }
    }
    out
}

/// L2-normalises in place, with the same epsilon clamp as torch's `F.normalize`.
pub(crate) fn l2_normalize(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
    v.iter_mut().for_each(|x| *x /= norm);
}
