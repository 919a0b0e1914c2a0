//! Embeds the UNFAIR-ToS train and validation sentences with MiniLM (precedent-models'
//! `Embedder`) and writes them as little-endian f32 rows (train rows, then validation rows) for
//! the `cv` example's embedding experiments:
//!
//! `cargo run --release -p precedent-unfair --example embed -- DATA_DIR OUT.f32 [MODEL]`

use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result};
use precedent_models::Embedder;
use precedent_unfair::cache::{training_rows, TrainSplit};

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let usage = "usage: embed DATA_DIR OUT.f32 [MODEL]";
    let dir = PathBuf::from(args.get(1).context(usage)?);
    let out = PathBuf::from(args.get(2).context(usage)?);
    let spec = args.get(3).map_or("all-MiniLM-L6-v2", String::as_str);
    let rows = training_rows(&dir, TrainSplit::TrainAndValidation)?;
    let embedder = Embedder::load(spec).with_context(|| format!("loading {spec}"))?;
    let texts: Vec<&str> = rows.iter().map(|r| r.text.as_str()).collect();
    let started = Instant::now();
    let vectors = embedder.embed(&texts)?;
    eprintln!(
        "{} sentences embedded ({} dims) in {:.0} s",
        vectors.len(),
        embedder.dim(),
        started.elapsed().as_secs_f64()
    );
    let mut file = std::io::BufWriter::new(std::fs::File::create(&out)?);
    for v in &vectors {
        for x in v {
            file.write_all(&x.to_le_bytes())?;
        }
    }
    file.flush()?;
    Ok(())
}
