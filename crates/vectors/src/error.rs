use std::path::PathBuf;

/// Everything that can go wrong in the vector store.
///
/// Opening a store is the main source of errors: the data on disk is
/// untrusted input (it may be truncated by a crash or a full disk, built by
/// another model, or from a future version), so every such case maps to a
/// variant here instead of a panic.
#[derive(Debug, thiserror::Error)]
pub enum VectorError {
    #[error("I/O error on {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error("no vector store at {0}: manifest.json is missing (build one with `precedent index`)")]
    MissingManifest(PathBuf),

    #[error("vector store manifest {path} is unreadable: {reason}")]
    BadManifest { path: PathBuf, reason: String },

    #[error(
        "vector store format version {found} is not supported (this build reads version {supported}): rebuild with `precedent index`"
    )]
    UnsupportedVersion { found: u32, supported: u32 },

    #[error(
        "index built by model {index_model} (dim {index_dim}), but the query model is {query_model} (dim {query_dim}): rebuild with `precedent index`"
    )]
    ModelMismatch {
        index_model: String,
        index_dim: usize,
        query_model: String,
        query_dim: usize,
    },

    #[error("vector store file {path} is corrupt: {reason}")]
    Corrupt { path: PathBuf, reason: String },

    #[error("vector has dimension {got}, but the index has dimension {expected}")]
    DimMismatch { expected: usize, got: usize },

    #[error("invalid vector: {0}")]
    InvalidVector(String),

    #[error("invalid index parameter: {0}")]
    InvalidParam(String),

    #[error("index is full: rows are u32 ids, at most {max} rows are supported")]
    TooManyRows { max: usize },
}

impl VectorError {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        VectorError::Io {
            path: path.into(),
            source,
        }
    }

    pub(crate) fn corrupt(path: impl Into<PathBuf>, reason: impl Into<String>) -> Self {
        VectorError::Corrupt {
            path: path.into(),
            reason: reason.into(),
        }
    }
}
