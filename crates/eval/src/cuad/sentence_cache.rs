//! The on-disk cache of the CUAD contracts' sentence vectors for `eval-cuad --dense`.
//!
//! Why a cache: embedding the 94k distinct sentences of the 398 contracts takes 15-35 minutes on
//! 2 cores, and every cross-validation with the sentence view reads them all. A review embeds
//! one contract and keeps nothing, so the file format lives here with the harness, not with the
//! typer. Files are keyed by `precedent_clause_types::cache::sentences_fingerprint` (data, model,
//! window); a file of another format version is refused and embedded again.

use std::io::{Read, Write};
use std::path::Path;

use anyhow::{bail, ensure, Context, Result};
use precedent_clause_types::candidates::Candidate;
use precedent_clause_types::dense::{candidate_vectors, SentenceCache, SentenceVectors};

const MAGIC: &[u8; 8] = b"CUADSEMB";
const CACHE_VERSION: u32 = 1;

fn read_u64(r: &mut impl Read) -> Result<u64> {
    let mut b = [0u8; 8];
    r.read_exact(&mut b)?;
    Ok(u64::from_le_bytes(b))
}

fn read_u32(r: &mut impl Read) -> Result<u32> {
    let mut b = [0u8; 4];
    r.read_exact(&mut b)?;
    Ok(u32::from_le_bytes(b))
}

/// Writes `cache` through a temporary file renamed over `path` (a crash mid-write leaves the
/// previous cache, or none, never a truncated one).
pub fn save(cache: &SentenceCache, path: &Path) -> Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let tmp = path.with_extension("tmp");
    write(cache, &tmp).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}

fn write(cache: &SentenceCache, path: &Path) -> Result<()> {
    let mut out = std::io::BufWriter::new(std::fs::File::create(path)?);
    out.write_all(MAGIC)?;
    out.write_all(&CACHE_VERSION.to_le_bytes())?;
    out.write_all(&(cache.dim as u32).to_le_bytes())?;
    out.write_all(&(cache.max_tokens as u32).to_le_bytes())?;
    out.write_all(&(cache.contracts.len() as u64).to_le_bytes())?;
    for c in &cache.contracts {
        out.write_all(&(c.candidates as u64).to_le_bytes())?;
        out.write_all(&(c.indices.len() as u64).to_le_bytes())?;
        for i in &c.indices {
            out.write_all(&i.to_le_bytes())?;
        }
        for v in &c.vectors {
            out.write_all(&v.to_le_bytes())?;
        }
    }
    out.into_inner().map_err(|e| e.into_error())?.sync_all()?;
    Ok(())
}

/// Reads a cache written by [`save`], refusing another format version and candidate indices
/// beyond a contract's candidates.
pub fn load(path: &Path) -> Result<SentenceCache> {
    let mut r = std::io::BufReader::new(
        std::fs::File::open(path).with_context(|| format!("opening {}", path.display()))?,
    );
    let mut magic = [0u8; 8];
    r.read_exact(&mut magic)?;
    if &magic != MAGIC || read_u32(&mut r)? != CACHE_VERSION {
        bail!(
            "{} is not a sentence-vector cache of this version",
            path.display()
        );
    }
    let dim = read_u32(&mut r)? as usize;
    let max_tokens = read_u32(&mut r)? as usize;
    let n = read_u64(&mut r)? as usize;
    let mut contracts = Vec::with_capacity(n);
    for _ in 0..n {
        let candidates = read_u64(&mut r)? as usize;
        let m = read_u64(&mut r)? as usize;
        let mut idx = vec![0u8; m * 4];
        r.read_exact(&mut idx)?;
        let mut vec_bytes = vec![0u8; m * dim * 4];
        r.read_exact(&mut vec_bytes)?;
        let indices: Vec<u32> = idx
            .chunks_exact(4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        if indices.iter().any(|&i| i as usize >= candidates) {
            bail!("{}: candidate index out of range", path.display());
        }
        let vectors = vec_bytes
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        contracts.push(SentenceVectors {
            candidates,
            indices,
            vectors,
        });
    }
    Ok(SentenceCache {
        dim,
        max_tokens,
        contracts,
    })
}

/// [`candidate_vectors`] from cached sentence vectors, refusing vectors that were made for
/// another candidate set (an older cache, another contract).
pub fn cached_candidate_vectors(
    candidates: &[Candidate],
    sentences: &SentenceVectors,
    dim: usize,
) -> Result<Vec<f32>> {
    ensure!(
        sentences.candidates == candidates.len(),
        "sentence vectors made for {} candidates, the contract has {}",
        sentences.candidates,
        candidates.len()
    );
    Ok(candidate_vectors(candidates, sentences, dim))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_round_trips_through_a_temporary_file() {
        let c = SentenceCache {
            dim: 2,
            max_tokens: 128,
            contracts: vec![SentenceVectors {
                candidates: 3,
                indices: vec![0, 2],
                vectors: vec![0.5, -0.5, 1.0, 0.0],
            }],
        };
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("sub/sentences.bin");
        save(&c, &path).expect("save");
        assert_eq!(load(&path).expect("load"), c);
        assert!(!path.with_extension("tmp").exists());
        let wrong = SentenceVectors {
            candidates: 4,
            ..c.contracts[0].clone()
        };
        let three: Vec<Candidate> = (0..3)
            .map(|i| Candidate {
                kind: precedent_clause_types::candidates::Kind::Sentence,
                span: i * 10..i * 10 + 9,
                context: i * 10..i * 10 + 9,
            })
            .collect();
        assert!(cached_candidate_vectors(&three, &wrong, 2).is_err());
        assert!(cached_candidate_vectors(&three, &c.contracts[0], 2).is_ok());
        std::fs::write(&path, b"not a cache").expect("write");
        assert!(load(&path).is_err());
    }
}
