use std::ops::Range;
use std::path::Path;

use rayon::prelude::*;

use crate::kernels;
use crate::store::{self, Part};
use crate::topk::TopK;
use crate::{IndexKind, Manifest, Neighbor, RowSet, VectorError, VectorIndex};

/// Rows scored per kernel call: large enough to amortise dispatch, small
/// enough that the score buffer lives on the stack.
const BLOCK_ROWS: usize = 256;

/// Below this many rows a scan is done on the calling thread: rayon's fork /
/// join costs a few microseconds, which only pays off once a scan takes
/// longer than that (≈ 30k rows × 384 dims ≈ 1 ms single-threaded).
pub const DEFAULT_PARALLEL_MIN_ROWS: usize = 32_768;

/// Exact (brute-force) search over f32 vectors stored contiguously.
///
/// The default for embedded use: no build step, no recall loss, and at
/// clause-library sizes (≤ ~100k rows) a full scan is a millisecond or two.
/// Beyond that, see [`crate::HnswIndex`].
#[derive(Debug, Clone)]
pub struct FlatIndex {
    dim: usize,
    data: Vec<f32>,
    parallel_min_rows: usize,
}

impl FlatIndex {
    pub fn new(dim: usize) -> Result<Self, VectorError> {
        Self::from_vec(dim, Vec::new())
    }

    /// Takes ownership of row-major vectors (`data.len()` must be a multiple
    /// of `dim`) without copying.
    pub fn from_vec(dim: usize, data: Vec<f32>) -> Result<Self, VectorError> {
        crate::validate_batch(dim, &data, 0)?;
        Ok(FlatIndex {
            dim,
            data,
            parallel_min_rows: DEFAULT_PARALLEL_MIN_ROWS,
        })
    }

    /// Opens a store saved by a flat index and checks it was built by
    /// `model_id` with dimension `dim`.
    pub fn open(dir: &Path, model_id: &str, dim: usize) -> Result<Self, VectorError> {
        let m = store::read_checked(dir, model_id, dim, |k| *k == IndexKind::Flat, "a flat")?;
        Self::load(dir, &m)
    }

    pub(crate) fn load(dir: &Path, m: &Manifest) -> Result<Self, VectorError> {
        let (path, listed) = m.file(dir, "vectors")?;
        let n = m
            .count
            .checked_mul(m.dim)
            .ok_or_else(|| VectorError::corrupt(&path, "count * dim overflows"))?;
        let data = store::read_f32s(&path, listed, n)?;
        Ok(FlatIndex {
            dim: m.dim,
            data,
            parallel_min_rows: DEFAULT_PARALLEL_MIN_ROWS,
        })
    }

    /// Row-major view of all stored vectors.
    pub fn vectors(&self) -> &[f32] {
        &self.data
    }

    pub fn row(&self, row: u32) -> Option<&[f32]> {
        let start = (row as usize).checked_mul(self.dim)?;
        self.data.get(start..start.checked_add(self.dim)?)
    }

    /// Sets the row count from which a single query is split across the rayon
    /// pool; `usize::MAX` forces single-threaded queries (useful when the
    /// caller already parallelises over queries).
    pub fn set_parallel_min_rows(&mut self, rows: usize) {
        self.parallel_min_rows = rows;
    }

    /// Exact top-k for many queries at once.
    ///
    /// Faster than looping over [`VectorIndex::search`] because each block of
    /// rows is scored against a group of queries while it is hot in cache,
    /// turning a memory-bound scan into a compute-bound one (used for ground
    /// truth and offline evaluation).
    pub fn search_batch(
        &self,
        queries: &[f32],
        k: usize,
    ) -> Result<Vec<Vec<Neighbor>>, VectorError> {
        const GROUP: usize = 32;
        if !queries.len().is_multiple_of(self.dim) {
            return Err(VectorError::DimMismatch {
                expected: self.dim,
                got: queries.len() % self.dim,
            });
        }
        crate::validate_batch(self.dim, queries, 0)?;
        let n = self.len();
        let dim = self.dim;
        let groups: Vec<&[f32]> = queries.chunks(GROUP * dim).collect();
        let out: Vec<Vec<Vec<Neighbor>>> = groups
            .par_iter()
            .map(|group| {
                let nq = group.len() / dim;
                let mut tops: Vec<TopK> = (0..nq).map(|_| TopK::new(k, n)).collect();
                let mut buf = [0f32; BLOCK_ROWS];
                let mut start = 0;
                while start < n && k > 0 {
                    let end = (start + BLOCK_ROWS).min(n);
                    let block = &self.data[start * dim..end * dim];
                    for (qi, top) in tops.iter_mut().enumerate() {
                        let q = &group[qi * dim..(qi + 1) * dim];
                        let scores = &mut buf[..end - start];
                        kernels::dot_f32_block(q, block, dim, scores);
                        for (i, &s) in scores.iter().enumerate() {
                            top.push((start + i) as u32, s);
                        }
                    }
                    start = end;
                }
                tops.into_iter().map(TopK::into_sorted).collect()
            })
            .collect();
        Ok(out.into_iter().flatten().collect())
    }

    pub(crate) fn scan(&self, query: &[f32], k: usize, filter: Option<&RowSet>) -> Vec<Neighbor> {
        let dim = self.dim;
        exact_topk(
            self.len(),
            k,
            filter,
            self.parallel_min_rows,
            |rows, out| {
                kernels::dot_f32_block(
                    query,
                    &self.data[rows.start * dim..rows.end * dim],
                    dim,
                    out,
                )
            },
            |row| kernels::dot_f32(query, &self.data[row * dim..(row + 1) * dim]),
        )
    }

    pub(crate) fn push_rows(&mut self, vectors: &[f32]) -> Result<Range<u32>, VectorError> {
        let start = self.len();
        crate::validate_batch(self.dim, vectors, start)?;
        self.data.extend_from_slice(vectors);
        Ok(start as u32..self.len() as u32)
    }
}

impl VectorIndex for FlatIndex {
    fn vector(&self, row: u32) -> Option<Vec<f32>> {
        self.row(row).map(<[f32]>::to_vec)
    }

    fn kind(&self) -> IndexKind {
        IndexKind::Flat
    }

    fn dim(&self) -> usize {
        self.dim
    }

    fn len(&self) -> usize {
        self.data.len() / self.dim
    }

    fn add(&mut self, vectors: &[f32]) -> Result<Range<u32>, VectorError> {
        self.push_rows(vectors)
    }

    fn search_filtered(
        &self,
        query: &[f32],
        k: usize,
        filter: Option<&RowSet>,
    ) -> Result<Vec<Neighbor>, VectorError> {
        crate::validate_query(self.dim, query)?;
        Ok(self.scan(query, k, filter))
    }

    fn save(&self, dir: &Path, model_id: &str) -> Result<Manifest, VectorError> {
        let parts = vec![Part {
            role: "vectors",
            ext: "f32",
            write: Box::new(|w| store::write_f32s(w, &self.data)),
        }];
        store::write_store(dir, IndexKind::Flat, self.dim, self.len(), model_id, parts)
    }

    fn memory_bytes(&self) -> usize {
        self.data.capacity() * 4
    }
}

/// Shared exact top-k driver for the f32 and int8 indexes.
///
/// * no filter: scan all rows in blocks;
/// * sparse filter (< 1/16 of rows): visit only the allowed rows, so "rank
///   these 200 clauses" costs 200 dot products, not a full scan;
/// * dense filter: scan all rows, skipping disallowed ones.
///
/// Large scans are split into contiguous chunks across rayon workers, each
/// with its own heap, merged at the end. The total order on candidates makes
/// the result independent of the split.
pub(crate) fn exact_topk<B, O>(
    n: usize,
    k: usize,
    filter: Option<&RowSet>,
    parallel_min_rows: usize,
    score_block: B,
    score_one: O,
) -> Vec<Neighbor>
where
    B: Fn(Range<usize>, &mut [f32]) + Sync,
    O: Fn(usize) -> f32 + Sync,
{
    let k = k.min(n);
    if k == 0 {
        return Vec::new();
    }
    if let Some(f) = filter {
        if f.len().saturating_mul(16) < n {
            let rows: Vec<u32> = f.iter().take_while(|&r| (r as usize) < n).collect();
            let run = |rows: &[u32]| {
                let mut top = TopK::new(k, rows.len());
                for &r in rows {
                    top.push(r, score_one(r as usize));
                }
                top
            };
            if rows.len() >= parallel_min_rows {
                let chunk = rows
                    .len()
                    .div_ceil(rayon::current_num_threads() * 4)
                    .max(1024);
                return rows
                    .par_chunks(chunk)
                    .map(run)
                    .reduce(|| TopK::new(k, 0), TopK::merge)
                    .into_sorted();
            }
            return run(&rows).into_sorted();
        }
    }
    let run = |range: Range<usize>| {
        let mut top = TopK::new(k, n);
        match filter {
            None => {
                let mut buf = [0f32; BLOCK_ROWS];
                let mut start = range.start;
                while start < range.end {
                    let end = (start + BLOCK_ROWS).min(range.end);
                    let scores = &mut buf[..end - start];
                    score_block(start..end, scores);
                    for (i, &s) in scores.iter().enumerate() {
                        top.push((start + i) as u32, s);
                    }
                    start = end;
                }
            }
            Some(f) => {
                for r in range {
                    if f.contains(r as u32) {
                        top.push(r as u32, score_one(r));
                    }
                }
            }
        }
        top
    };
    if n >= parallel_min_rows && rayon::current_num_threads() > 1 {
        let chunk = n.div_ceil(rayon::current_num_threads() * 4).max(4096);
        let chunks: Vec<Range<usize>> = (0..n)
            .step_by(chunk)
            .map(|s| s..(s + chunk).min(n))
            .collect();
        chunks
            .into_par_iter()
            .map(run)
            .reduce(|| TopK::new(k, 0), TopK::merge)
            .into_sorted()
    } else {
        run(0..n).into_sorted()
    }
}
