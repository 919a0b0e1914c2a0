//! Dense retrieval: the query embedded by the same bi-encoder that embedded the clauses, then
//! nearest clause vectors by cosine (dot product of normalised vectors).

use std::sync::Arc;

use precedent_library::IndexKind;
use precedent_library::{ClauseVectors, Library, LibraryError, Progress, VectorsInfo};
use precedent_models::{EmbedOptions, Embedder, EmbeddingCache, LongTextPolicy};

use crate::{Hit, RankError, Retriever, StageScore};

/// Refuses to compare a query embedded by one model with clauses embedded by another: the
/// numbers would be meaningless but look plausible.
pub fn check_same_model(library: &Library, embedder: &Embedder) -> Result<(), RankError> {
    let info = library.vectors_info().ok_or_else(|| {
        RankError::Unavailable(format!(
            "library {} has no clause vectors: rebuild it with `precedent index` (without --no-vectors)",
            library.root().display()
        ))
    })?;
    if info.model_id != embedder.model_id() || info.dim != embedder.dim() {
        return Err(RankError::Library(LibraryError::VectorMismatch(format!(
            "library {} was embedded by model {} (dim {}), but the query model is {} (dim {}): \
             rebuild the library with `precedent index --model ...` or query with the same model",
            library.root().display(),
            info.model_id,
            info.dim,
            embedder.model_id(),
            embedder.dim()
        ))));
    }
    Ok(())
}

pub struct Dense {
    library: Arc<Library>,
    embedder: Arc<Embedder>,
}

impl Dense {
    pub fn new(library: Arc<Library>, embedder: Arc<Embedder>) -> Result<Self, RankError> {
        check_same_model(&library, &embedder)?;
        // Load (and validate) the vectors now, so a damaged store fails when the pipeline is
        // built rather than on the first query.
        library.vectors()?;
        Ok(Dense { library, embedder })
    }
}

impl Retriever for Dense {
    fn name(&self) -> &str {
        "dense"
    }

    fn retrieve(&self, query: &str, k: usize) -> Result<Vec<Hit>, RankError> {
        let vectors = self
            .library
            .vectors()?
            .ok_or_else(|| RankError::Unavailable("library has no clause vectors".into()))?;
        let q = self
            .embedder
            .embed_query(query)
            .map_err(|e| RankError::Stage {
                stage: "dense".into(),
                message: e.to_string(),
            })?;
        let neighbors = vectors.search(&q, k).map_err(LibraryError::from)?;
        Ok(neighbors
            .into_iter()
            .enumerate()
            .map(|(i, n)| Hit {
                row: n.row,
                score: n.score,
                stages: vec![StageScore {
                    stage: "dense".into(),
                    rank: i + 1,
                    score: n.score,
                }],
            })
            .collect())
    }
}

/// How clause vectors are computed for a library.
#[derive(Debug, Clone)]
pub struct EmbedSettings {
    pub policy: LongTextPolicy,
    pub kind: IndexKind,
    /// The spec the embedder was loaded from, recorded so queries can load it again.
    pub model_source: String,
}

impl Default for EmbedSettings {
    fn default() -> Self {
        EmbedSettings {
            policy: LongTextPolicy::Truncate,
            kind: IndexKind::Flat,
            model_source: precedent_models::DEFAULT_MODEL.to_owned(),
        }
    }
}

/// Embeds clause texts for a library (through the on-disk cache when one is given), row-major.
pub fn embed_clauses(
    embedder: &Embedder,
    cache: Option<&EmbeddingCache>,
    texts: &[&str],
    settings: &EmbedSettings,
    progress: &dyn Progress,
) -> Result<ClauseVectors, RankError> {
    let options = EmbedOptions {
        policy: settings.policy,
        ..EmbedOptions::default()
    };
    progress.start("embedding clauses", texts.len() as u64);
    let done = std::sync::atomic::AtomicU64::new(0);
    // The models crate reports a running total; progress bars want increments.
    let report = |total: usize| {
        let previous = done.swap(total as u64, std::sync::atomic::Ordering::Relaxed);
        progress.advance((total as u64).saturating_sub(previous));
    };
    let vectors = match cache {
        Some(cache) => cache.get_or_compute(embedder, texts, &options, &report),
        None => embedder.embed_with(texts, &options, &report),
    }
    .map_err(|e| RankError::Stage {
        stage: "embedding".into(),
        message: e.to_string(),
    })?;
    progress.finish();
    let dim = embedder.dim();
    let mut data = Vec::with_capacity(texts.len() * dim);
    for v in vectors {
        data.extend_from_slice(&v);
    }
    Ok(ClauseVectors {
        info: VectorsInfo {
            model_id: embedder.model_id().to_owned(),
            model_source: settings.model_source.clone(),
            dim,
            kind: settings.kind,
            long_text: settings.policy.tag(),
        },
        data,
    })
}
