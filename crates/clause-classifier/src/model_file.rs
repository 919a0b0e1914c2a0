//! The file layout the CUAD models (the clause typer, the single-clause classifier) are saved
//! in: an 8-byte magic naming the model kind, the length of a JSON header, the header (options,
//! version, thresholds), then the weights as little-endian f32.
//!
//! Why one module: both models are cached under `.precedent/cache/` and shipped or passed by
//! path, so both must refuse another kind's file or a truncated one with the same clear message,
//! and both must be written atomically (a crash mid-save leaves the previous file usable).

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};
use serde::de::DeserializeOwned;
use serde::Serialize;

/// Writes `magic`, the JSON `header` and `weights` to `path` through a temporary file renamed
/// over it, creating the parent directory.
pub fn save(
    path: &Path,
    magic: &[u8; 8],
    header: &impl Serialize,
    weights: impl IntoIterator<Item = f32>,
) -> Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let tmp = path.with_extension("tmp");
    let header = serde_json::to_vec(header)?;
    let mut f = std::io::BufWriter::new(
        std::fs::File::create(&tmp).with_context(|| format!("creating {}", tmp.display()))?,
    );
    f.write_all(magic)?;
    f.write_all(&(header.len() as u64).to_le_bytes())?;
    f.write_all(&header)?;
    for w in weights {
        f.write_all(&w.to_le_bytes())?;
    }
    f.into_inner()
        .map_err(|e| e.into_error())?
        .sync_all()
        .with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}

/// Reads a file written by [`save`] with the same `magic`: its header and weights. `kind`
/// names the model in errors ("clause typer"); a file of another kind, a truncated header or a
/// body that is not whole f32s is refused, naming the file.
pub fn load<H: DeserializeOwned>(
    path: &Path,
    magic: &[u8; 8],
    kind: &str,
) -> Result<(H, Vec<f32>)> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    let bad = |why: &str| anyhow::anyhow!("{}: not a {kind} model ({why})", path.display());
    if bytes.len() < 16 || &bytes[..8] != magic {
        return Err(bad("bad magic"));
    }
    let header_len = u64::from_le_bytes(bytes[8..16].try_into().map_err(|_| bad("header"))?);
    let header_end = usize::try_from(header_len)
        .ok()
        .and_then(|l| l.checked_add(16))
        .filter(|&e| e <= bytes.len())
        .ok_or_else(|| bad("truncated header"))?;
    let header: H =
        serde_json::from_slice(&bytes[16..header_end]).map_err(|e| bad(&e.to_string()))?;
    let body = &bytes[header_end..];
    if body.len() % 4 != 0 {
        return Err(bad("truncated weights"));
    }
    let weights = body
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    Ok((header, weights))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize, serde::Deserialize, PartialEq, Debug)]
    struct Header {
        version: u32,
    }

    #[test]
    fn round_trips_and_refuses_other_files() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("sub/model.bin");
        save(&path, b"TESTMOD1", &Header { version: 3 }, [1.5, -2.0]).expect("save");
        let (header, weights): (Header, Vec<f32>) = load(&path, b"TESTMOD1", "test").expect("load");
        assert_eq!(header, Header { version: 3 });
        assert_eq!(weights, [1.5, -2.0]);
        assert!(
            !path.with_extension("tmp").exists(),
            "temporary file renamed"
        );

        let err = load::<Header>(&path, b"OTHERMOD", "clause typer").unwrap_err();
        assert!(
            err.to_string()
                .contains("not a clause typer model (bad magic)"),
            "{err}"
        );
        let mut bytes = std::fs::read(&path).expect("read");
        bytes.pop();
        std::fs::write(&path, &bytes).expect("write");
        let err = load::<Header>(&path, b"TESTMOD1", "test").unwrap_err();
        assert!(err.to_string().contains("truncated weights"), "{err}");
        std::fs::write(&path, &bytes[..20]).expect("write");
        let err = load::<Header>(&path, b"TESTMOD1", "test").unwrap_err();
        assert!(err.to_string().contains("truncated header"), "{err}");
    }
}
