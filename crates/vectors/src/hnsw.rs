//! HNSW (Malkov & Yashunin) approximate search.
//!
//! Implemented here rather than taken from a crate, after reviewing the
//! candidates (see the crate docs for the comparison): the store must reload
//! a persisted graph from untrusted files with errors instead of panics,
//! filter by row allow-lists, accept incremental adds, change `ef` per query,
//! and share the f32 kernels and the on-disk vector format with the flat
//! index. None of the maintained pure-Rust crates offered all of that without
//! either panicking on corrupt input or duplicating the 1.5 GB of vectors.
//!
//! Layout: neighbour lists live in flat arrays of `AtomicU32`
//! (`[count, id, id, ...]` per node and layer) so that a parallel build can
//! read lists lock-free while writers serialise per node through striped
//! mutexes. Relaxed atomics compile to plain loads/stores on x86_64 and
//! aarch64, so searching the finished graph costs the same as plain `u32`s.
//! A reader racing a writer during build may see a list mid-rewrite; every
//! slot always holds *some* valid row id and counts are clamped, so that can
//! only cost graph quality marginally, never memory safety.

use std::cell::RefCell;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io::Read;
use std::ops::Range;
use std::path::Path;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::flat::FlatIndex;
use crate::kernels::dot_f32;
use crate::store::{self, Part};
use crate::topk::Cand;
use crate::{IndexKind, Manifest, Neighbor, RowSet, VectorError, VectorIndex};

const GRAPH_MAGIC: &[u8; 8] = b"PRCHNSW\0";
const GRAPH_VERSION: u32 = 1;
const MAX_LEVEL: usize = 16;
const EMPTY: u64 = u64::MAX;
const STRIPES: usize = 4096;

/// Build and search parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct HnswParams {
    /// Links per node on upper layers (twice that on layer 0). 16 is the
    /// usual sweet spot for 384-dim text embeddings: 12 loses recall on
    /// clustered data, 32 doubles build time and graph memory for ~1% recall.
    pub m: usize,
    /// Beam width while building; higher = better graph, linearly slower build.
    pub ef_construction: usize,
    /// Default beam width while searching (raised to `k` when `k` is larger).
    pub ef_search: usize,
    /// Seeds the level assignment so builds are reproducible (up to thread
    /// interleaving in parallel builds).
    pub seed: u64,
}

impl Default for HnswParams {
    fn default() -> Self {
        HnswParams {
            m: 16,
            ef_construction: 100,
            ef_search: 64,
            seed: 0x5EED,
        }
    }
}

impl HnswParams {
    fn validate(&self) -> Result<(), VectorError> {
        if !(2..=128).contains(&self.m) {
            return Err(VectorError::InvalidParam(format!(
                "m = {} must be in 2..=128",
                self.m
            )));
        }
        if self.ef_construction == 0 || self.ef_construction > 100_000 {
            return Err(VectorError::InvalidParam(format!(
                "ef_construction = {} must be in 1..=100000",
                self.ef_construction
            )));
        }
        if self.ef_search == 0 {
            return Err(VectorError::InvalidParam("ef_search must be > 0".into()));
        }
        Ok(())
    }
}

/// Approximate nearest-neighbour index over the same f32 vectors a
/// [`FlatIndex`] would hold, plus the HNSW graph.
pub struct HnswIndex {
    params: HnswParams,
    m0: usize,
    vectors: FlatIndex,
    levels: Vec<u8>,
    /// `n * (m0 + 1)` slots: `[count, ids...]` per node.
    layer0: Vec<AtomicU32>,
    /// Start of each node's upper-layer lists in `upper` (unused for level 0).
    upper_offsets: Vec<usize>,
    /// `level * (m + 1)` slots per node with level > 0.
    upper: Vec<AtomicU32>,
    /// Packed `node | level << 32`, or `EMPTY`.
    entry: AtomicU64,
    stripes: Box<[Mutex<()>]>,
}

impl std::fmt::Debug for HnswIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HnswIndex")
            .field("params", &self.params)
            .field("dim", &self.vectors.dim())
            .field("len", &self.levels.len())
            .finish()
    }
}

struct Visited {
    marks: Vec<u32>,
    epoch: u32,
}

impl Visited {
    fn begin(&mut self, n: usize) {
        if self.marks.len() < n {
            self.marks.resize(n, 0);
        }
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.marks.iter_mut().for_each(|m| *m = 0);
            self.epoch = 1;
        }
    }

    /// Marks `i`; returns true if it was not yet visited in this search.
    #[inline]
    fn first_visit(&mut self, i: u32) -> bool {
        let m = &mut self.marks[i as usize];
        if *m == self.epoch {
            false
        } else {
            *m = self.epoch;
            true
        }
    }
}

thread_local! {
    // Epoch-tagged visited marks, reused across searches on a thread: clearing
    // a per-search bitset would cost O(n) per query.
    static VISITED: RefCell<Visited> = const { RefCell::new(Visited { marks: Vec::new(), epoch: 0 }) };
}

#[inline]
fn prefetch(v: &[f32]) {
    #[cfg(target_arch = "x86_64")]
    for line in v.chunks(16) {
        // SAFETY: prefetch is a hint; it never faults, and SSE is part of
        // the x86_64 baseline.
        #[allow(unused_unsafe)]
        unsafe {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            _mm_prefetch::<_MM_HINT_T0>(line.as_ptr() as *const i8);
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = v;
}

fn pack(node: u32, level: usize) -> u64 {
    u64::from(node) | ((level as u64) << 32)
}

fn unpack(e: u64) -> (u32, usize) {
    (e as u32, (e >> 32) as usize)
}

impl HnswIndex {
    pub fn new(dim: usize, params: HnswParams) -> Result<Self, VectorError> {
        params.validate()?;
        Ok(HnswIndex {
            params,
            m0: params.m * 2,
            vectors: FlatIndex::new(dim)?,
            levels: Vec::new(),
            layer0: Vec::new(),
            upper_offsets: Vec::new(),
            upper: Vec::new(),
            entry: AtomicU64::new(EMPTY),
            stripes: (0..STRIPES).map(|_| Mutex::new(())).collect(),
        })
    }

    /// Builds an index over row-major `vectors` (taken without copying),
    /// inserting in parallel on the rayon pool.
    pub fn build(dim: usize, params: HnswParams, vectors: Vec<f32>) -> Result<Self, VectorError> {
        crate::validate_batch(dim, &vectors, 0)?;
        let mut idx = Self::new(dim, params)?;
        let n = vectors.len() / dim;
        idx.vectors = FlatIndex::from_vec(dim, vectors)?;
        idx.grow_graph(0, n);
        idx.insert_range(0..n);
        Ok(idx)
    }

    pub fn params(&self) -> HnswParams {
        self.params
    }

    /// Changes the default search beam width (query-time only; the graph is
    /// unaffected).
    pub fn set_ef_search(&mut self, ef: usize) {
        self.params.ef_search = ef.max(1);
    }

    /// The stored vectors, e.g. for exact re-ranking or ground truth.
    pub fn vectors(&self) -> &FlatIndex {
        &self.vectors
    }

    pub fn open(dir: &Path, model_id: &str, dim: usize) -> Result<Self, VectorError> {
        let m = store::read_checked(
            dir,
            model_id,
            dim,
            |k| matches!(k, IndexKind::Hnsw { .. }),
            "an HNSW",
        )?;
        Self::load(dir, &m)
    }

    #[inline]
    fn vec(&self, row: u32) -> &[f32] {
        let dim = self.vectors.dim();
        let s = row as usize * dim;
        &self.vectors.vectors()[s..s + dim]
    }

    fn random_level(&self, row: usize) -> usize {
        let h = crate::synth::mix64(
            self.params.seed ^ (row as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15),
        );
        let u = 1.0 - (h >> 11) as f64 * (1.0 / (1u64 << 53) as f64); // (0, 1]
        let ml = 1.0 / (self.params.m as f64).ln();
        ((-u.ln() * ml) as usize).min(MAX_LEVEL)
    }

    /// Allocates link storage for rows `old..new` (vectors already stored).
    fn grow_graph(&mut self, old: usize, new: usize) {
        let m = self.params.m;
        self.levels.reserve(new - old);
        self.layer0.reserve((new - old) * (self.m0 + 1));
        for row in old..new {
            let level = self.random_level(row);
            self.levels.push(level as u8);
            self.layer0.extend((0..=self.m0).map(|_| AtomicU32::new(0)));
            if level > 0 {
                self.upper_offsets.push(self.upper.len());
                self.upper
                    .extend((0..level * (m + 1)).map(|_| AtomicU32::new(0)));
            } else {
                self.upper_offsets.push(usize::MAX);
            }
        }
    }

    #[inline]
    fn cap(&self, layer: usize) -> usize {
        if layer == 0 {
            self.m0
        } else {
            self.params.m
        }
    }

    #[inline]
    fn links(&self, node: u32, layer: usize) -> &[AtomicU32] {
        let n = node as usize;
        if layer == 0 {
            let w = self.m0 + 1;
            &self.layer0[n * w..(n + 1) * w]
        } else {
            let w = self.params.m + 1;
            let off = self.upper_offsets[n] + (layer - 1) * w;
            &self.upper[off..off + w]
        }
    }

    #[inline]
    fn read_links(&self, node: u32, layer: usize, out: &mut Vec<u32>) {
        out.clear();
        let l = self.links(node, layer);
        let c = (l[0].load(Relaxed) as usize).min(l.len() - 1);
        out.extend(l[1..=c].iter().map(|a| a.load(Relaxed)));
    }

    /// Caller must hold the node's stripe lock (or `&mut self`).
    fn write_links(&self, node: u32, layer: usize, ids: &[u32]) {
        let l = self.links(node, layer);
        let c = ids.len().min(l.len() - 1);
        for (slot, id) in l[1..=c].iter().zip(ids) {
            slot.store(*id, Relaxed);
        }
        l[0].store(c as u32, Relaxed);
    }

    fn lock(&self, node: u32) -> std::sync::MutexGuard<'_, ()> {
        // A poisoned stripe only means another insert panicked; the guarded
        // data is the atomics, which are always in a valid state.
        self.stripes[node as usize % STRIPES]
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    fn insert_range(&self, rows: Range<usize>) {
        // The first few hundred nodes shape the upper layers; inserting them
        // sequentially avoids early races producing a poorly connected core.
        let seq_end = (rows.start + 512).min(rows.end);
        for r in rows.start..seq_end {
            self.insert(r as u32);
        }
        if rows.end - seq_end >= 2048 && rayon::current_num_threads() > 1 {
            (seq_end..rows.end)
                .into_par_iter()
                .with_min_len(64)
                .for_each(|r| self.insert(r as u32));
        } else {
            for r in seq_end..rows.end {
                self.insert(r as u32);
            }
        }
    }

    fn greedy(&self, q: &[f32], mut cur: Cand, layer: usize, buf: &mut Vec<u32>) -> Cand {
        loop {
            let mut changed = false;
            self.read_links(cur.row, layer, buf);
            for &nb in buf.iter() {
                let c = Cand {
                    score: dot_f32(q, self.vec(nb)),
                    row: nb,
                };
                if c > cur {
                    cur = c;
                    changed = true;
                }
            }
            if !changed {
                return cur;
            }
        }
    }

    /// Beam search on one layer; returns up to `ef` candidates, best first.
    /// With a filter, disallowed nodes are traversed but never returned.
    fn search_layer(
        &self,
        q: &[f32],
        entries: &[Cand],
        ef: usize,
        layer: usize,
        filter: Option<&RowSet>,
    ) -> Vec<Cand> {
        let allowed = |r: u32| filter.is_none_or(|f| f.contains(r));
        VISITED.with(|v| {
            let mut visited = v.borrow_mut();
            visited.begin(self.levels.len());
            let mut candidates: BinaryHeap<Cand> = BinaryHeap::with_capacity(ef * 2);
            let mut results: BinaryHeap<Reverse<Cand>> = BinaryHeap::with_capacity(ef + 1);
            for &e in entries {
                if visited.first_visit(e.row) {
                    candidates.push(e);
                    if allowed(e.row) {
                        results.push(Reverse(e));
                        if results.len() > ef {
                            results.pop();
                        }
                    }
                }
            }
            let mut buf = Vec::with_capacity(self.m0);
            let mut fresh = Vec::with_capacity(self.m0);
            while let Some(c) = candidates.pop() {
                if results.len() >= ef {
                    if let Some(Reverse(worst)) = results.peek() {
                        if c < *worst {
                            break;
                        }
                    }
                }
                self.read_links(c.row, layer, &mut buf);
                // Vectors of unvisited neighbours are scattered across RAM;
                // requesting them all before scoring overlaps the cache
                // misses instead of paying them one after another.
                fresh.clear();
                for &nb in &buf {
                    if visited.first_visit(nb) {
                        prefetch(self.vec(nb));
                        fresh.push(nb);
                    }
                }
                for &nb in &fresh {
                    let cand = Cand {
                        score: dot_f32(q, self.vec(nb)),
                        row: nb,
                    };
                    let admit =
                        results.len() < ef || results.peek().is_some_and(|Reverse(w)| cand > *w);
                    if admit {
                        candidates.push(cand);
                        if allowed(nb) {
                            results.push(Reverse(cand));
                            if results.len() > ef {
                                results.pop();
                            }
                        }
                    }
                }
            }
            let mut out: Vec<Cand> = results.into_iter().map(|Reverse(c)| c).collect();
            out.sort_unstable_by(|a, b| b.cmp(a));
            out
        })
    }

    /// The HNSW neighbour-selection heuristic: keep a candidate only if it is
    /// closer to the base than to every already kept neighbour. This spreads
    /// links across directions, which is what keeps recall high on clustered
    /// data (plain "closest M" links trap searches inside dense clusters).
    /// `cands` must be sorted best first.
    fn select(&self, base: u32, cands: &[Cand], m: usize) -> Vec<u32> {
        let mut kept: Vec<u32> = Vec::with_capacity(m);
        for c in cands {
            if kept.len() >= m {
                break;
            }
            if c.row == base {
                continue;
            }
            let cv = self.vec(c.row);
            let good = kept.iter().all(|&k| dot_f32(cv, self.vec(k)) <= c.score);
            if good {
                kept.push(c.row);
            }
        }
        kept
    }

    fn insert(&self, q: u32) {
        let level = self.levels[q as usize] as usize;
        let qv = self.vec(q);
        let (ep, max_level) = loop {
            let e = self.entry.load(Relaxed);
            if e == EMPTY {
                if self
                    .entry
                    .compare_exchange(EMPTY, pack(q, level), Relaxed, Relaxed)
                    .is_ok()
                {
                    return;
                }
                continue;
            }
            break unpack(e);
        };
        let mut buf = Vec::with_capacity(self.m0 + 1);
        let mut cur = Cand {
            score: dot_f32(qv, self.vec(ep)),
            row: ep,
        };
        for layer in (level + 1..=max_level).rev() {
            cur = self.greedy(qv, cur, layer, &mut buf);
        }
        let mut entries = vec![cur];
        for layer in (0..=level.min(max_level)).rev() {
            let found = self.search_layer(qv, &entries, self.params.ef_construction, layer, None);
            let selected = self.select(q, &found, self.params.m);
            {
                let _g = self.lock(q);
                self.write_links(q, layer, &selected);
            }
            for &nb in &selected {
                self.link_back(nb, q, layer, &mut buf);
            }
            if !found.is_empty() {
                entries = found;
            }
        }
        if level > max_level {
            let mut cur = self.entry.load(Relaxed);
            while unpack(cur).1 < level {
                match self
                    .entry
                    .compare_exchange(cur, pack(q, level), Relaxed, Relaxed)
                {
                    Ok(_) => break,
                    Err(now) => cur = now,
                }
            }
        }
    }

    fn link_back(&self, node: u32, q: u32, layer: usize, buf: &mut Vec<u32>) {
        let cap = self.cap(layer);
        let _g = self.lock(node);
        self.read_links(node, layer, buf);
        if buf.contains(&q) {
            return;
        }
        if buf.len() < cap {
            buf.push(q);
            self.write_links(node, layer, buf);
            return;
        }
        let nv = self.vec(node);
        let mut cands: Vec<Cand> = buf
            .iter()
            .chain(std::iter::once(&q))
            .map(|&r| Cand {
                score: dot_f32(nv, self.vec(r)),
                row: r,
            })
            .collect();
        cands.sort_unstable_by(|a, b| b.cmp(a));
        let kept = self.select(node, &cands, cap);
        self.write_links(node, layer, &kept);
    }

    /// Search with an explicit beam width (recall/latency trade-off per call).
    pub fn search_with_ef(
        &self,
        query: &[f32],
        k: usize,
        ef: usize,
        filter: Option<&RowSet>,
    ) -> Result<Vec<Neighbor>, VectorError> {
        crate::validate_query(self.vectors.dim(), query)?;
        let n = self.levels.len();
        let k = k.min(n);
        if k == 0 {
            return Ok(Vec::new());
        }
        let mut ef = ef.max(k);
        if let Some(f) = filter {
            let allowed = f.count_below(n);
            if allowed == 0 {
                return Ok(Vec::new());
            }
            // A restrictive filter starves the beam: the graph walk must wade
            // through many disallowed nodes. Below 5% selectivity an exact
            // scan of the allowed rows is both faster and exact; above it,
            // widen the beam in proportion to how much is filtered out.
            if allowed.saturating_mul(20) <= n || allowed <= ef {
                return Ok(self.vectors.scan(query, k, Some(f)));
            }
            ef = ef.saturating_mul(n.div_ceil(allowed).min(8));
        }
        let e = self.entry.load(Relaxed);
        if e == EMPTY {
            return Ok(Vec::new());
        }
        let (ep, max_level) = unpack(e);
        let mut buf = Vec::with_capacity(self.m0 + 1);
        let mut cur = Cand {
            score: dot_f32(query, self.vec(ep)),
            row: ep,
        };
        for layer in (1..=max_level).rev() {
            cur = self.greedy(query, cur, layer, &mut buf);
        }
        let found = self.search_layer(query, &[cur], ef, 0, filter);
        Ok(found
            .into_iter()
            .take(k)
            .map(|c| Neighbor {
                row: c.row,
                score: c.score,
            })
            .collect())
    }

    fn write_graph(&self, w: &mut dyn std::io::Write) -> std::io::Result<()> {
        w.write_all(GRAPH_MAGIC)?;
        w.write_all(&GRAPH_VERSION.to_le_bytes())?;
        w.write_all(&(self.params.m as u32).to_le_bytes())?;
        w.write_all(&(self.levels.len() as u64).to_le_bytes())?;
        w.write_all(&self.entry.load(Relaxed).to_le_bytes())?;
        let levels: Vec<u8> = self.levels.clone();
        w.write_all(&levels)?;
        store::write_u32s(w, self.layer0.iter().map(|a| a.load(Relaxed)))?;
        store::write_u32s(w, self.upper.iter().map(|a| a.load(Relaxed)))
    }

    pub(crate) fn load(dir: &Path, man: &Manifest) -> Result<Self, VectorError> {
        let IndexKind::Hnsw {
            m,
            ef_construction,
            ef_search,
        } = man.kind
        else {
            return Err(VectorError::BadManifest {
                path: dir.join(store::MANIFEST),
                reason: "not an HNSW store".into(),
            });
        };
        let params = HnswParams {
            m,
            ef_construction,
            ef_search,
            ..HnswParams::default()
        };
        params.validate().map_err(|e| VectorError::BadManifest {
            path: dir.join(store::MANIFEST),
            reason: e.to_string(),
        })?;
        let vectors = FlatIndex::load(dir, man)?;
        let (gpath, listed) = man.file(dir, "graph")?;
        let n = man.count;
        let corrupt = |why: String| VectorError::corrupt(&gpath, why);

        let mut f = std::fs::File::open(&gpath).map_err(|e| VectorError::io(&gpath, e))?;
        let actual = f.metadata().map_err(|e| VectorError::io(&gpath, e))?.len();
        if actual != listed {
            return Err(corrupt(format!(
                "manifest lists {listed} bytes, file has {actual}"
            )));
        }
        const HEADER: usize = 8 + 4 + 4 + 8 + 8;
        let mut header = [0u8; HEADER];
        f.read_exact(&mut header)
            .map_err(|_| corrupt("truncated header".into()))?;
        if &header[0..8] != GRAPH_MAGIC {
            return Err(corrupt("bad magic".into()));
        }
        let le32 = |b: &[u8]| u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        let le64 = |b: &[u8]| {
            let mut a = [0u8; 8];
            a.copy_from_slice(b);
            u64::from_le_bytes(a)
        };
        let version = le32(&header[8..12]);
        if version != GRAPH_VERSION {
            return Err(corrupt(format!("graph version {version} unsupported")));
        }
        let gm = le32(&header[12..16]) as usize;
        if gm != m {
            return Err(corrupt(format!(
                "graph built with m={gm}, manifest says m={m}"
            )));
        }
        let gn = le64(&header[16..24]);
        if gn != n as u64 {
            return Err(corrupt(format!("graph has {gn} nodes, manifest says {n}")));
        }
        let entry = le64(&header[24..32]);

        if actual < (HEADER + n) as u64 {
            return Err(corrupt(format!(
                "{actual} bytes cannot hold {n} nodes (truncated?)"
            )));
        }
        let mut levels = vec![0u8; n];
        f.read_exact(&mut levels)
            .map_err(|_| corrupt("truncated levels".into()))?;
        let mut upper_slots = 0usize;
        let mut upper_offsets = Vec::with_capacity(n);
        for &l in &levels {
            let l = l as usize;
            if l > MAX_LEVEL {
                return Err(corrupt(format!("node level {l} > {MAX_LEVEL}")));
            }
            if l > 0 {
                upper_offsets.push(upper_slots);
                upper_slots += l * (m + 1);
            } else {
                upper_offsets.push(usize::MAX);
            }
        }
        let m0 = 2 * m;
        let layer0_slots = n
            .checked_mul(m0 + 1)
            .ok_or_else(|| corrupt("size overflow".into()))?;
        let expected = (HEADER + n) as u64 + (layer0_slots as u64 + upper_slots as u64) * 4;
        if actual != expected {
            return Err(corrupt(format!(
                "expected {expected} bytes for {n} nodes, file has {actual} (truncated?)"
            )));
        }
        let read_slots =
            |f: &mut std::fs::File, count: usize| -> Result<Vec<AtomicU32>, VectorError> {
                let mut out = Vec::with_capacity(count);
                let mut buf = vec![0u8; 1 << 20];
                let mut remaining = count * 4;
                while remaining > 0 {
                    let take = remaining.min(buf.len());
                    f.read_exact(&mut buf[..take])
                        .map_err(|e| VectorError::io(&gpath, e))?;
                    out.extend(buf[..take].chunks_exact(4).map(|c| AtomicU32::new(le32(c))));
                    remaining -= take;
                }
                Ok(out)
            };
        let layer0 = read_slots(&mut f, layer0_slots)?;
        let upper = read_slots(&mut f, upper_slots)?;

        let check_lists =
            |slots: &[AtomicU32], width: usize, what: &str| -> Result<(), VectorError> {
                for (i, list) in slots.chunks_exact(width).enumerate() {
                    let c = list[0].load(Relaxed) as usize;
                    if c > width - 1 {
                        return Err(corrupt(format!(
                            "{what} list {i} has {c} links (max {})",
                            width - 1
                        )));
                    }
                    if list[1..=c].iter().any(|a| a.load(Relaxed) as usize >= n) {
                        return Err(corrupt(format!("{what} list {i} links to a row >= {n}")));
                    }
                }
                Ok(())
            };
        check_lists(&layer0, m0 + 1, "layer-0")?;
        check_lists(&upper, m + 1, "upper-layer")?;
        // Search walks layer-l lists only through nodes that have layer l;
        // a corrupt file linking to a lower node must be rejected here, or
        // the walk would index a non-existent list.
        for (node, &l) in levels.iter().enumerate() {
            for layer in 1..=l as usize {
                let off = upper_offsets[node] + (layer - 1) * (m + 1);
                let list = &upper[off..off + m + 1];
                let c = list[0].load(Relaxed) as usize;
                if list[1..=c]
                    .iter()
                    .any(|a| (levels[a.load(Relaxed) as usize] as usize) < layer)
                {
                    return Err(corrupt(format!(
                        "node {node} links on layer {layer} to a node without that layer"
                    )));
                }
            }
        }
        if entry == EMPTY {
            if n != 0 {
                return Err(corrupt("no entry point in a non-empty graph".into()));
            }
        } else {
            let (node, level) = unpack(entry);
            if node as usize >= n || levels[node as usize] as usize != level {
                return Err(corrupt("entry point inconsistent with node levels".into()));
            }
            if levels.iter().any(|&l| l as usize > level) {
                return Err(corrupt("entry point is not on the top layer".into()));
            }
        }
        Ok(HnswIndex {
            params,
            m0,
            vectors,
            levels,
            layer0,
            upper_offsets,
            upper,
            entry: AtomicU64::new(entry),
            stripes: (0..STRIPES).map(|_| Mutex::new(())).collect(),
        })
    }
}

impl VectorIndex for HnswIndex {
    fn vector(&self, row: u32) -> Option<Vec<f32>> {
        self.vectors.vector(row)
    }

    fn kind(&self) -> IndexKind {
        IndexKind::Hnsw {
            m: self.params.m,
            ef_construction: self.params.ef_construction,
            ef_search: self.params.ef_search,
        }
    }

    fn dim(&self) -> usize {
        self.vectors.dim()
    }

    fn len(&self) -> usize {
        self.levels.len()
    }

    /// Inserts into the existing graph (no rebuild); large batches are
    /// inserted in parallel.
    fn add(&mut self, vectors: &[f32]) -> Result<Range<u32>, VectorError> {
        let rows = self.vectors.push_rows(vectors)?;
        self.grow_graph(rows.start as usize, rows.end as usize);
        self.insert_range(rows.start as usize..rows.end as usize);
        Ok(rows)
    }

    fn search_filtered(
        &self,
        query: &[f32],
        k: usize,
        filter: Option<&RowSet>,
    ) -> Result<Vec<Neighbor>, VectorError> {
        self.search_with_ef(query, k, self.params.ef_search, filter)
    }

    fn save(&self, dir: &Path, model_id: &str) -> Result<Manifest, VectorError> {
        let parts = vec![
            Part {
                role: "vectors",
                ext: "f32",
                write: Box::new(|w| store::write_f32s(w, self.vectors.vectors())),
            },
            Part {
                role: "graph",
                ext: "hnsw",
                write: Box::new(|w| self.write_graph(w)),
            },
        ];
        store::write_store(dir, self.kind(), self.dim(), self.len(), model_id, parts)
    }

    fn memory_bytes(&self) -> usize {
        self.vectors.memory_bytes()
            + self.levels.capacity()
            + (self.layer0.capacity() + self.upper.capacity()) * 4
            + self.upper_offsets.capacity() * 8
    }
}
