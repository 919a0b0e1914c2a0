use std::path::PathBuf;

/// Everything that can go wrong while finding, loading or running a model.
///
/// Messages are written for the person running the CLI: each one names the file or
/// model involved and, where there is one, the action that fixes it, because the
/// usual cause is an environment problem (model not installed, file truncated by an
/// interrupted copy) rather than a bug.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error("model directory {0} does not exist or is not a directory")]
    MissingDirectory(PathBuf),

    #[error("model directory {dir} has no {file}: expected a sentence-transformers model folder (config.json, tokenizer.json, model.safetensors)")]
    MissingFile { dir: PathBuf, file: String },

    #[error("could not find model `{spec}`: {hint}\n  searched: {searched}")]
    NotFound {
        spec: String,
        hint: String,
        searched: String,
    },

    #[error("cannot fetch `{id}` from the Hugging Face hub: {reason}\n  hint: {hint}")]
    Hub {
        id: String,
        reason: String,
        hint: String,
    },

    #[error("weights file {path} is unusable (truncated or corrupt download?): {reason}")]
    Weights { path: PathBuf, reason: String },

    #[error("bad or unsupported model configuration in {path}: {reason}")]
    Config { path: PathBuf, reason: String },

    #[error("tokenizer error ({context}): {reason}")]
    Tokenizer { context: String, reason: String },

    #[error("inference failed: {0}")]
    Inference(#[from] candle_core::Error),

    #[error("invalid options: {0}")]
    InvalidOptions(String),

    #[error("embedding cache at {path}: {reason}")]
    Cache { path: PathBuf, reason: String },

    #[error("I/O error on {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl ModelError {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        ModelError::Io {
            path: path.into(),
            source,
        }
    }

    pub(crate) fn config(path: impl Into<PathBuf>, reason: impl ToString) -> Self {
        ModelError::Config {
            path: path.into(),
            reason: reason.to_string(),
        }
    }

    pub(crate) fn tokenizer(context: impl ToString, reason: impl ToString) -> Self {
        ModelError::Tokenizer {
            context: context.to_string(),
            reason: reason.to_string(),
        }
    }
}
