//! On-disk layout of a vector store directory.
//!
//! ```text
//! vectors/
//!   manifest.json              <- the commit point; names the data files below
//!   vectors.<token>.f32        <- little-endian f32, count*dim values (flat, hnsw)
//!   codes.<token>.i8           <- count*dim i8 codes (int8)
//!   scales.<token>.f32         <- count little-endian f32 scales (int8)
//!   graph.<token>.hnsw         <- HNSW adjacency (hnsw)
//! ```
//!
//! Crash safety comes from never overwriting a file the current manifest
//! points to: a save writes data files under a fresh `<token>`, fsyncs them,
//! then atomically renames `manifest.json.tmp` over `manifest.json`. A crash
//! before that rename leaves the old manifest pointing at the old, untouched
//! files; a crash after it leaves a complete new store. Only then are files of
//! older generations deleted (best effort; leftovers are swept by the next
//! save). Renaming data files in place instead would leave a window where a
//! new data file sits next to an old manifest.
//!
//! Data files are loaded with plain buffered reads into owned `Vec`s rather
//! than memory-mapped: exact search touches every byte on every query and
//! HNSW touches random rows, so lazy paging buys nothing after warm-up, while
//! owned buffers allow incremental `add`, need no `unsafe`, and cannot SIGBUS
//! if another process truncates a file under us.

use std::fs::{self, File};
use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::{IndexKind, VectorError};

/// Version of the on-disk format this build reads and writes.
pub const FORMAT_VERSION: u32 = 1;

pub(crate) const MANIFEST: &str = "manifest.json";
const ROLES: [&str; 4] = ["vectors", "codes", "scales", "graph"];

/// The JSON manifest of a store. Small and human-readable on purpose: it is
/// what `precedent` shows when explaining why an index must be rebuilt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub format_version: u32,
    pub kind: IndexKind,
    pub dim: usize,
    pub count: usize,
    /// Identifier of the embedding model, supplied by the caller; vectors from
    /// different models live in unrelated spaces, so it is checked on open.
    pub model_id: String,
    pub created_unix_secs: u64,
    pub files: Vec<FileEntry>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileEntry {
    pub role: String,
    pub name: String,
    pub bytes: u64,
}

impl Manifest {
    pub(crate) fn file(&self, dir: &Path, role: &str) -> Result<(PathBuf, u64), VectorError> {
        let entry =
            self.files
                .iter()
                .find(|f| f.role == role)
                .ok_or_else(|| VectorError::BadManifest {
                    path: dir.join(MANIFEST),
                    reason: format!("no `{role}` file listed"),
                })?;
        Ok((dir.join(&entry.name), entry.bytes))
    }
}

/// Reads and validates `dir/manifest.json` without loading any data, e.g. to
/// tell the user which model built an index.
pub fn read_manifest(dir: &Path) -> Result<Manifest, VectorError> {
    let path = dir.join(MANIFEST);
    let text = match fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(VectorError::MissingManifest(dir.to_path_buf()))
        }
        Err(e) => return Err(VectorError::io(&path, e)),
    };
    let m: Manifest = serde_json::from_str(&text).map_err(|e| VectorError::BadManifest {
        path: path.clone(),
        reason: e.to_string(),
    })?;
    if m.format_version != FORMAT_VERSION {
        return Err(VectorError::UnsupportedVersion {
            found: m.format_version,
            supported: FORMAT_VERSION,
        });
    }
    if m.dim == 0 {
        return Err(VectorError::BadManifest {
            path,
            reason: "dim is 0".into(),
        });
    }
    if m.count > crate::MAX_ROWS {
        return Err(VectorError::BadManifest {
            path,
            reason: format!("count {} exceeds the u32 row limit", m.count),
        });
    }
    for f in &m.files {
        // A manifest must never make us read or delete outside the store.
        let ok = !f.name.is_empty()
            && !f.name.contains(['/', '\\'])
            && f.name != "."
            && f.name != ".."
            && ROLES.contains(&f.role.as_str());
        if !ok {
            return Err(VectorError::BadManifest {
                path,
                reason: format!("invalid file entry {:?}", f.name),
            });
        }
    }
    Ok(m)
}

/// Checks the caller's model against the manifest before any data is read.
/// Reads and checks the manifest for a typed `open`: right model and dimension, and a store of
/// the kind the caller can load (`what` names it in the error, e.g. "a flat").
pub(crate) fn read_checked(
    dir: &Path,
    model_id: &str,
    dim: usize,
    is_kind: impl Fn(&IndexKind) -> bool,
    what: &str,
) -> Result<Manifest, VectorError> {
    let m = read_manifest(dir)?;
    check_model(&m, model_id, dim)?;
    if !is_kind(&m.kind) {
        return Err(VectorError::BadManifest {
            path: dir.join(MANIFEST),
            reason: format!("store holds a {:?} index, not {what} one", m.kind),
        });
    }
    Ok(m)
}

pub(crate) fn check_model(m: &Manifest, model_id: &str, dim: usize) -> Result<(), VectorError> {
    if m.model_id != model_id || m.dim != dim {
        return Err(VectorError::ModelMismatch {
            index_model: m.model_id.clone(),
            index_dim: m.dim,
            query_model: model_id.to_string(),
            query_dim: dim,
        });
    }
    Ok(())
}

/// Serialises one data file's contents.
pub(crate) type WriteFn<'a> = Box<dyn Fn(&mut dyn Write) -> std::io::Result<()> + 'a>;

/// A data file to be written by [`write_store`].
pub(crate) struct Part<'a> {
    pub role: &'static str,
    pub ext: &'static str,
    pub write: WriteFn<'a>,
}

fn unique_token() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let c = COUNTER.fetch_add(1, Ordering::Relaxed);
    format!("{nanos:x}-{:x}-{c:x}", std::process::id())
}

fn sync_dir(dir: &Path) {
    // Persists the renames. Not possible on every platform (e.g. Windows
    // cannot open a directory as a file), where the rename itself is the best
    // we can do.
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

/// Writes a complete store generation and commits it by renaming the
/// manifest. See the module docs for the crash-safety argument.
pub(crate) fn write_store(
    dir: &Path,
    kind: IndexKind,
    dim: usize,
    count: usize,
    model_id: &str,
    parts: Vec<Part<'_>>,
) -> Result<Manifest, VectorError> {
    fs::create_dir_all(dir).map_err(|e| VectorError::io(dir, e))?;
    let token = unique_token();
    let mut files = Vec::with_capacity(parts.len());
    for part in parts {
        let name = format!("{}.{token}.{}", part.role, part.ext);
        let final_path = dir.join(&name);
        let tmp_path = dir.join(format!("{name}.tmp"));
        let bytes = (|| -> std::io::Result<u64> {
            let f = File::create(&tmp_path)?;
            let mut w = BufWriter::with_capacity(1 << 20, f);
            (part.write)(&mut w)?;
            let f = w.into_inner().map_err(|e| e.into_error())?;
            f.sync_all()?;
            Ok(f.metadata()?.len())
        })()
        .map_err(|e| {
            let _ = fs::remove_file(&tmp_path);
            VectorError::io(&tmp_path, e)
        })?;
        fs::rename(&tmp_path, &final_path).map_err(|e| VectorError::io(&final_path, e))?;
        files.push(FileEntry {
            role: part.role.to_string(),
            name,
            bytes,
        });
    }
    let manifest = Manifest {
        format_version: FORMAT_VERSION,
        kind,
        dim,
        count,
        model_id: model_id.to_string(),
        created_unix_secs: SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0),
        files,
    };
    let json = serde_json::to_vec_pretty(&manifest).map_err(|e| VectorError::BadManifest {
        path: dir.join(MANIFEST),
        reason: e.to_string(),
    })?;
    let tmp = dir.join(format!("{MANIFEST}.tmp"));
    (|| -> std::io::Result<()> {
        let mut f = File::create(&tmp)?;
        f.write_all(&json)?;
        f.sync_all()
    })()
    .map_err(|e| VectorError::io(&tmp, e))?;
    sync_dir(dir);
    fs::rename(&tmp, dir.join(MANIFEST)).map_err(|e| VectorError::io(dir.join(MANIFEST), e))?;
    sync_dir(dir);
    sweep_old_generations(dir, &manifest);
    Ok(manifest)
}

/// Deletes data files of previous generations and abandoned temp files.
/// Only names following our own `<role>.<token>.<ext>` pattern are touched,
/// so stray user files in the directory survive.
fn sweep_old_generations(dir: &Path, keep: &Manifest) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        let ours = ROLES
            .iter()
            .any(|r| name.starts_with(r) && name[r.len()..].starts_with('.'));
        if ours && !keep.files.iter().any(|f| f.name == name) {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// Opens a data file and checks its size against both the manifest entry and
/// the size implied by `dim * count`, so truncation is reported before any
/// allocation or parsing happens.
pub(crate) fn open_checked(path: &Path, listed: u64, expected: u64) -> Result<File, VectorError> {
    let f = File::open(path).map_err(|e| VectorError::io(path, e))?;
    let actual = f.metadata().map_err(|e| VectorError::io(path, e))?.len();
    if actual != expected || listed != expected {
        return Err(VectorError::corrupt(
            path,
            format!(
                "expected {expected} bytes, manifest lists {listed}, file has {actual} (truncated or from another build)"
            ),
        ));
    }
    Ok(f)
}

pub(crate) fn expected_bytes(path: &Path, items: usize, width: usize) -> Result<u64, VectorError> {
    items
        .checked_mul(width)
        .and_then(|b| u64::try_from(b).ok())
        .ok_or_else(|| VectorError::corrupt(path, "size overflows"))
}

/// Reads a little-endian f32 file of exactly `n` values, rejecting
/// non-finite values (a sign of corruption, and poison for ranking).
pub(crate) fn read_f32s(path: &Path, listed: u64, n: usize) -> Result<Vec<f32>, VectorError> {
    let expected = expected_bytes(path, n, 4)?;
    let mut f = open_checked(path, listed, expected)?;
    let mut out = Vec::new();
    out.try_reserve_exact(n)
        .map_err(|e| VectorError::corrupt(path, format!("cannot allocate {n} floats: {e}")))?;
    let mut buf = vec![0u8; 1 << 20];
    let mut remaining = n * 4;
    while remaining > 0 {
        let take = remaining.min(buf.len());
        f.read_exact(&mut buf[..take])
            .map_err(|e| VectorError::io(path, e))?;
        for c in buf[..take].chunks_exact(4) {
            let v = f32::from_le_bytes([c[0], c[1], c[2], c[3]]);
            if !v.is_finite() {
                return Err(VectorError::corrupt(
                    path,
                    format!("non-finite value at index {}", out.len()),
                ));
            }
            out.push(v);
        }
        remaining -= take;
    }
    Ok(out)
}

/// Reads a raw byte file of exactly `n` bytes.
pub(crate) fn read_bytes(path: &Path, listed: u64, n: usize) -> Result<Vec<u8>, VectorError> {
    let expected = expected_bytes(path, n, 1)?;
    let mut f = open_checked(path, listed, expected)?;
    let mut out = Vec::new();
    out.try_reserve_exact(n)
        .map_err(|e| VectorError::corrupt(path, format!("cannot allocate {n} bytes: {e}")))?;
    f.read_to_end(&mut out)
        .map_err(|e| VectorError::io(path, e))?;
    if out.len() != n {
        return Err(VectorError::corrupt(path, "file changed while reading"));
    }
    Ok(out)
}

/// Writes f32 values little-endian in large chunks (per-value `write_all`
/// calls through a `dyn Write` would dominate save time at 1M rows).
pub(crate) fn write_f32s(w: &mut dyn Write, values: &[f32]) -> std::io::Result<()> {
    let mut buf = Vec::with_capacity(1 << 16);
    for chunk in values.chunks(1 << 14) {
        buf.clear();
        for v in chunk {
            buf.extend_from_slice(&v.to_le_bytes());
        }
        w.write_all(&buf)?;
    }
    Ok(())
}

pub(crate) fn write_u32s(
    w: &mut dyn Write,
    values: impl Iterator<Item = u32>,
) -> std::io::Result<()> {
    let mut buf = Vec::with_capacity(1 << 16);
    for v in values {
        buf.extend_from_slice(&v.to_le_bytes());
        if buf.len() >= 1 << 16 {
            w.write_all(&buf)?;
            buf.clear();
        }
    }
    w.write_all(&buf)
}
