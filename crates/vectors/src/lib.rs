//! Vector store for clause embeddings (all-MiniLM-L6-v2: 384 dims,
//! L2-normalised, so cosine similarity is a dot product).
//!
//! Three interchangeable indexes behind [`VectorIndex`]:
//!
//! * [`FlatIndex`]: exact f32 scan. The embedded default: exact, no build
//!   step, ≈2–3 ms per query per 50k clauses on one core (AVX2).
//! * [`QuantizedIndex`]: exact scan over int8 codes. 4x smaller, ~2.5x
//!   faster scan, recall@10 ≈ 0.97–0.99 against f32 (not rescored).
//! * [`HnswIndex`]: approximate graph search for libraries of 10^5–10^6+
//!   clauses where a scan no longer fits the latency budget (≈0.2 ms for
//!   top-100 at 1M clauses, recall@10 ≈ 0.98 at ef = 64).
//!
//! Rows are dense `0..len()` in insertion order; the engine maps rows to
//! clause ids. Results are sorted by score descending, ties by row ascending,
//! so identical embeddings (boilerplate) rank deterministically.
//!
//! A store directory has a single writer: two processes saving into the same
//! directory at once can delete each other's new files during cleanup.
//!
//! ## Why our own HNSW
//! Crate sources reviewed: `hnsw_rs` 0.3.5 reloads dumps with `assert!`s on
//! magic numbers (a corrupt file panics), writes native-endian `usize`
//! fields, ties the reloaded graph's lifetime to the loader, keeps its own
//! copy of every vector, and pulls in ~15 crates (env_logger, mmap-rs,
//! cpu-time, anndists, ...). `instant-distance` 0.6.1 fixes M at 32, freezes
//! `ef_search` at build time, has no incremental insert or filtering, and
//! persists only via serde (needing an extra binary serde format).
//! `usearch` requires a C++ build. HNSW itself is a few hundred lines, so
//! owning it keeps the on-disk format ours (validated, little-endian,
//! versioned), shares the kernels and vector file with the flat index, and
//! adds no dependencies.

mod error;
mod flat;
mod hnsw;
pub mod kernels;
mod quantized;
mod rowset;
mod store;
pub mod synth;
mod topk;

use std::ops::Range;
use std::path::Path;

use serde::{Deserialize, Serialize};

pub use error::VectorError;
pub use flat::{FlatIndex, DEFAULT_PARALLEL_MIN_ROWS};
pub use hnsw::{HnswIndex, HnswParams};
pub use quantized::{quantize_into, QuantizedIndex};
pub use rowset::RowSet;
pub use store::{read_manifest, FileEntry, Manifest, FORMAT_VERSION};
pub use topk::Neighbor;

/// Rows are `u32`; `u32::MAX` is kept free as a sentinel.
pub const MAX_ROWS: usize = u32::MAX as usize;

/// Which index implementation a store uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum IndexKind {
    Flat,
    Int8,
    Hnsw {
        m: usize,
        ef_construction: usize,
        ef_search: usize,
    },
}

impl IndexKind {
    /// HNSW with the default parameters (M=16, ef_construction=100, ef_search=64).
    pub fn hnsw_default() -> Self {
        let p = HnswParams::default();
        IndexKind::Hnsw {
            m: p.m,
            ef_construction: p.ef_construction,
            ef_search: p.ef_search,
        }
    }
}

/// Common interface so the engine can switch implementations by
/// configuration (`IndexKind`) without code changes.
pub trait VectorIndex: Send + Sync {
    fn kind(&self) -> IndexKind;
    fn dim(&self) -> usize;
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Appends row-major vectors (`vectors.len()` a multiple of `dim`) and
    /// returns the rows they received. All-or-nothing: an invalid batch
    /// (wrong length, non-finite values) adds nothing.
    fn add(&mut self, vectors: &[f32]) -> Result<Range<u32>, VectorError>;

    /// Top-`k` rows by dot product, restricted to `filter` when given.
    /// `k` larger than the index returns every (allowed) row.
    fn search_filtered(
        &self,
        query: &[f32],
        k: usize,
        filter: Option<&RowSet>,
    ) -> Result<Vec<Neighbor>, VectorError>;

    /// Top-`k` rows by dot product. Errors only for a query of the wrong
    /// dimension or with non-finite values; returning `Result` rather than an
    /// empty list keeps such caller bugs loud.
    fn search(&self, query: &[f32], k: usize) -> Result<Vec<Neighbor>, VectorError> {
        self.search_filtered(query, k, None)
    }

    /// The stored vector of `row` (dequantised for int8 stores), or `None` past the end.
    /// Learned stages need clause vectors themselves, e.g. to average them into category
    /// centroids, not only their dot products with a query.
    fn vector(&self, row: u32) -> Option<Vec<f32>>;

    /// Atomically replaces the store in `dir` (see the `store` module docs).
    fn save(&self, dir: &Path, model_id: &str) -> Result<Manifest, VectorError>;

    /// Heap bytes held by the index (vectors + graph), for capacity planning.
    fn memory_bytes(&self) -> usize;
}

/// Builds an index of the given kind over row-major `vectors`.
pub fn build(
    kind: IndexKind,
    dim: usize,
    vectors: Vec<f32>,
) -> Result<Box<dyn VectorIndex>, VectorError> {
    Ok(match kind {
        IndexKind::Flat => Box::new(FlatIndex::from_vec(dim, vectors)?),
        IndexKind::Int8 => Box::new(QuantizedIndex::from_vectors(dim, &vectors)?),
        IndexKind::Hnsw {
            m,
            ef_construction,
            ef_search,
        } => Box::new(HnswIndex::build(
            dim,
            HnswParams {
                m,
                ef_construction,
                ef_search,
                ..HnswParams::default()
            },
            vectors,
        )?),
    })
}

/// Opens the store in `dir`, whatever its kind, after checking that it was
/// built by `expected_model_id` with `expected_dim` dimensions.
///
/// The model check happens before any data file is read, so a mismatch is
/// reported instantly even for a multi-GB store.
pub fn open(
    dir: &Path,
    expected_model_id: &str,
    expected_dim: usize,
) -> Result<Box<dyn VectorIndex>, VectorError> {
    let m = store::read_manifest(dir)?;
    store::check_model(&m, expected_model_id, expected_dim)?;
    Ok(match m.kind {
        IndexKind::Flat => Box::new(FlatIndex::load(dir, &m)?),
        IndexKind::Int8 => Box::new(QuantizedIndex::load(dir, &m)?),
        IndexKind::Hnsw { .. } => Box::new(HnswIndex::load(dir, &m)?),
    })
}

/// L2-normalises in place, so dot products become cosines. The index never
/// normalises on its own: the embedding model already does, and silently
/// renormalising would hide a model that doesn't.
pub fn l2_normalize(v: &mut [f32]) {
    synth::normalize(v)
}

pub(crate) fn validate_query(dim: usize, q: &[f32]) -> Result<(), VectorError> {
    if q.len() != dim {
        return Err(VectorError::DimMismatch {
            expected: dim,
            got: q.len(),
        });
    }
    if q.iter().any(|x| !x.is_finite()) {
        return Err(VectorError::InvalidVector(
            "query has non-finite values".into(),
        ));
    }
    Ok(())
}

pub(crate) fn validate_batch(
    dim: usize,
    v: &[f32],
    existing_rows: usize,
) -> Result<(), VectorError> {
    if dim == 0 {
        return Err(VectorError::InvalidParam("dim must be > 0".into()));
    }
    if !v.len().is_multiple_of(dim) {
        return Err(VectorError::InvalidVector(format!(
            "batch of {} floats is not a multiple of dim {dim}",
            v.len()
        )));
    }
    if existing_rows + v.len() / dim > MAX_ROWS {
        return Err(VectorError::TooManyRows { max: MAX_ROWS });
    }
    if let Some(i) = v.iter().position(|x| !x.is_finite()) {
        return Err(VectorError::InvalidVector(format!(
            "non-finite value in row {}",
            existing_rows + i / dim
        )));
    }
    Ok(())
}
