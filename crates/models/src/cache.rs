//! Persistent embedding cache, so re-indexing an unchanged library costs nothing.
//!
//! Layout: `<root>/<fingerprint>-<policy>/seg-*.bin`. Each segment is written in full
//! to a temporary file, fsynced and then renamed into place, so a crash can only ever
//! lose the segment being written, never corrupt earlier ones, and readers never see
//! a half-written segment. Every record carries its own checksum; a damaged record or
//! file (disk error, manual tampering) is skipped with a warning and recomputed.
//!
//! Segment format: `b"PRECEMB1"`, `dim: u32 LE`, `0u32`, then fixed-size records
//! `key[32] | dim x f32 LE | sha256(key|floats)[..8]`. Fixed-size records mean one bad
//! record does not hide the ones after it.

use std::collections::HashMap;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use sha2::{Digest, Sha256};

use crate::{EmbedOptions, Embedder, ModelError};

const MAGIC: &[u8; 8] = b"PRECEMB1";
const HEADER: usize = 16;
const KEY: usize = 32;
const CHECK: usize = 8;
/// Texts embedded between two segment writes: bounds the work a crash can lose.
const FLUSH_EVERY: usize = 2048;
/// Above this many segments in a namespace, they are merged into one.
const MAX_SEGMENTS: usize = 32;

type Key = [u8; KEY];

#[derive(Default)]
struct Namespace {
    map: HashMap<Key, Vec<f32>>,
    segments: Vec<PathBuf>,
}

/// On-disk cache of embeddings keyed by model fingerprint, long-text policy and text.
pub struct EmbeddingCache {
    root: PathBuf,
    loaded: Mutex<HashMap<String, Namespace>>,
}

/// How a [`EmbeddingCache::get_or_compute`] call was served.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Texts found in the cache.
    pub hits: usize,
    /// Distinct texts embedded (duplicates within one call are embedded once).
    pub computed: usize,
}

impl EmbeddingCache {
    /// Opens (creating if needed) a cache rooted at `dir`.
    pub fn open(dir: impl AsRef<Path>) -> Result<Self, ModelError> {
        let root = dir.as_ref().to_path_buf();
        fs::create_dir_all(&root).map_err(|e| ModelError::io(&root, e))?;
        Ok(Self {
            root,
            loaded: Mutex::new(HashMap::new()),
        })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Returns embeddings for `texts` in order, computing and storing the missing
    /// ones. `progress` receives the number of texts available so far (hits first).
    pub fn get_or_compute(
        &self,
        embedder: &Embedder,
        texts: &[&str],
        opts: &EmbedOptions,
        progress: &dyn Fn(usize),
    ) -> Result<Vec<Vec<f32>>, ModelError> {
        self.get_or_compute_stats(embedder, texts, opts, progress)
            .map(|(v, _)| v)
    }

    /// Like [`Self::get_or_compute`], also telling how many texts were cache hits.
    pub fn get_or_compute_stats(
        &self,
        embedder: &Embedder,
        texts: &[&str],
        opts: &EmbedOptions,
        progress: &dyn Fn(usize),
    ) -> Result<(Vec<Vec<f32>>, CacheStats), ModelError> {
        let tag = opts.tag();
        let ns_name = format!("{}-{}", embedder.fingerprint(), tag);
        let ns_dir = self.root.join(&ns_name);
        let dim = embedder.dim();
        let keys: Vec<Key> = texts
            .iter()
            .map(|t| {
                let mut h = Sha256::new();
                h.update(embedder.fingerprint().as_bytes());
                h.update([0]);
                h.update(tag.as_bytes());
                h.update([0]);
                h.update(t.as_bytes());
                h.finalize().into()
            })
            .collect();

        let mut out: Vec<Option<Vec<f32>>> = vec![None; texts.len()];
        let mut missing: Vec<usize> = Vec::new();
        let mut hits = 0;
        {
            let mut loaded = self.lock()?;
            let ns = match loaded.entry(ns_name.clone()) {
                std::collections::hash_map::Entry::Occupied(o) => o.into_mut(),
                std::collections::hash_map::Entry::Vacant(v) => {
                    v.insert(load_namespace(&ns_dir, dim)?)
                }
            };
            let mut first_of: HashMap<Key, usize> = HashMap::new();
            for (i, k) in keys.iter().enumerate() {
                if let Some(v) = ns.map.get(k) {
                    out[i] = Some(v.clone());
                    hits += 1;
                } else if let std::collections::hash_map::Entry::Vacant(e) = first_of.entry(*k) {
                    e.insert(i);
                    missing.push(i);
                }
            }
        }
        let stats = CacheStats {
            hits,
            computed: missing.len(),
        };
        // Duplicates of missing texts are available as soon as the original is.
        let base = texts.len() - missing.len();
        progress(base);

        for (chunk_no, chunk) in missing.chunks(FLUSH_EVERY).enumerate() {
            let chunk_texts: Vec<&str> = chunk.iter().map(|&i| texts[i]).collect();
            let offset = base + chunk_no * FLUSH_EVERY;
            let vecs = embedder.embed_with(&chunk_texts, opts, &|n| progress(offset + n))?;
            let entries: Vec<(Key, &[f32])> = chunk
                .iter()
                .zip(&vecs)
                .map(|(&i, v)| (keys[i], v.as_slice()))
                .collect();
            // A cache that cannot be written (read-only disk, full disk) must not
            // fail the embedding job: warn and carry on uncached.
            let written = match write_segment(&ns_dir, dim, &entries) {
                Ok(p) => Some(p),
                Err(e) => {
                    tracing::warn!("embedding cache not updated: {e}");
                    None
                }
            };
            let mut loaded = self.lock()?;
            let ns = loaded.entry(ns_name.clone()).or_default();
            for (&i, v) in chunk.iter().zip(vecs) {
                ns.map.insert(keys[i], v.clone());
                out[i] = Some(v);
            }
            if let Some(p) = written {
                ns.segments.push(p);
            }
            if ns.segments.len() > MAX_SEGMENTS {
                if let Err(e) = compact(&ns_dir, dim, ns) {
                    tracing::warn!("embedding cache compaction failed: {e}");
                }
            }
        }

        // Duplicated texts were computed once; fill the copies.
        let mut result = Vec::with_capacity(texts.len());
        for (i, v) in out.into_iter().enumerate() {
            match v {
                Some(v) => result.push(v),
                None => {
                    let loaded = self.lock()?;
                    let v = loaded
                        .get(&ns_name)
                        .and_then(|ns| ns.map.get(&keys[i]))
                        .cloned()
                        .ok_or_else(|| ModelError::Cache {
                            path: ns_dir.clone(),
                            reason: "internal error: entry vanished".into(),
                        })?;
                    result.push(v);
                }
            }
        }
        progress(texts.len());
        Ok((result, stats))
    }

    fn lock(&self) -> Result<std::sync::MutexGuard<'_, HashMap<String, Namespace>>, ModelError> {
        self.loaded.lock().map_err(|_| ModelError::Cache {
            path: self.root.clone(),
            reason: "cache lock poisoned by a panic in another thread".into(),
        })
    }
}

fn record_len(dim: usize) -> usize {
    KEY + 4 * dim + CHECK
}

fn checksum(body: &[u8]) -> [u8; CHECK] {
    let d = Sha256::digest(body);
    let mut c = [0u8; CHECK];
    c.copy_from_slice(&d[..CHECK]);
    c
}

fn load_namespace(dir: &Path, dim: usize) -> Result<Namespace, ModelError> {
    let mut ns = Namespace::default();
    let rd = match fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(ns),
        Err(e) => return Err(ModelError::io(dir, e)),
    };
    let mut files: Vec<PathBuf> = rd
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .map(|n| n.to_string_lossy())
                .is_some_and(|n| n.starts_with("seg-") && n.ends_with(".bin"))
        })
        .collect();
    files.sort();
    for path in files {
        match read_segment(&path, dim, &mut ns.map) {
            Ok(bad) if bad > 0 => {
                tracing::warn!("{}: skipped {bad} corrupt cache record(s)", path.display())
            }
            Ok(_) => {}
            Err(reason) => tracing::warn!("{}: ignoring cache segment: {reason}", path.display()),
        }
        ns.segments.push(path);
    }
    Ok(ns)
}

/// Reads one segment into `map`; returns how many records failed their checksum.
fn read_segment(
    path: &Path,
    dim: usize,
    map: &mut HashMap<Key, Vec<f32>>,
) -> Result<usize, String> {
    let data = fs::read(path).map_err(|e| e.to_string())?;
    if data.len() < HEADER || &data[..8] != MAGIC {
        return Err("not a cache segment (bad header)".into());
    }
    let file_dim = u32::from_le_bytes([data[8], data[9], data[10], data[11]]) as usize;
    if file_dim != dim {
        return Err(format!(
            "dimension {file_dim} does not match the model's {dim}"
        ));
    }
    let rl = record_len(dim);
    let body = &data[HEADER..];
    let mut bad = 0;
    if body.len() % rl != 0 {
        bad += 1; // trailing partial record
    }
    for rec in body.chunks_exact(rl) {
        let (payload, check) = rec.split_at(KEY + 4 * dim);
        if checksum(payload) != check {
            bad += 1;
            continue;
        }
        let mut key = [0u8; KEY];
        key.copy_from_slice(&payload[..KEY]);
        let v: Vec<f32> = payload[KEY..]
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        map.insert(key, v);
    }
    Ok(bad)
}

fn unique_suffix() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!(
        "{nanos:024}-{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

fn write_segment(dir: &Path, dim: usize, entries: &[(Key, &[f32])]) -> Result<PathBuf, ModelError> {
    fs::create_dir_all(dir).map_err(|e| ModelError::io(dir, e))?;
    let suffix = unique_suffix();
    let tmp = dir.join(format!(".tmp-{suffix}"));
    let fin = dir.join(format!("seg-{suffix}.bin"));
    let mut buf = Vec::with_capacity(HEADER + entries.len() * record_len(dim));
    buf.extend_from_slice(MAGIC);
    buf.extend_from_slice(&(dim as u32).to_le_bytes());
    buf.extend_from_slice(&0u32.to_le_bytes());
    for (key, v) in entries {
        if v.len() != dim {
            return Err(ModelError::Cache {
                path: dir.to_path_buf(),
                reason: format!("vector of length {} in a {dim}-dim namespace", v.len()),
            });
        }
        let start = buf.len();
        buf.extend_from_slice(key);
        for x in v.iter() {
            buf.extend_from_slice(&x.to_le_bytes());
        }
        let c = checksum(&buf[start..]);
        buf.extend_from_slice(&c);
    }
    let write = || -> std::io::Result<()> {
        let mut f = fs::File::create(&tmp)?;
        f.write_all(&buf)?;
        f.sync_all()?;
        fs::rename(&tmp, &fin)?;
        // Make the rename itself durable; not all platforms can open directories.
        if let Ok(d) = fs::File::open(dir) {
            let _ = d.sync_all();
        }
        Ok(())
    };
    write().map_err(|e| {
        let _ = fs::remove_file(&tmp);
        ModelError::io(&fin, e)
    })?;
    Ok(fin)
}

/// Merges all segments of a namespace into one. The merged file is in place before
/// any old one is deleted, so a crash in between only leaves duplicates.
fn compact(dir: &Path, dim: usize, ns: &mut Namespace) -> Result<(), ModelError> {
    let entries: Vec<(Key, &[f32])> = ns.map.iter().map(|(k, v)| (*k, v.as_slice())).collect();
    let merged = write_segment(dir, dim, &entries)?;
    for old in ns.segments.drain(..) {
        if let Err(e) = fs::remove_file(&old) {
            if e.kind() != std::io::ErrorKind::NotFound {
                tracing::warn!("{}: could not remove merged segment: {e}", old.display());
            }
        }
    }
    ns.segments.push(merged);
    Ok(())
}
