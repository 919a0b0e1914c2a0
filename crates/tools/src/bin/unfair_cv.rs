//! Cross-validates classifier configurations on the UNFAIR-ToS training rows by contiguous
//! blocks (the validation rows are not read), to choose the shipped options:
//!
//! `cargo run --release -p precedent-tools --bin unfair_cv -- DATA_DIR [C] [POSITIVE_WEIGHT] [words|chars]`

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result};
use precedent_unfair::cache::{training_rows, TrainSplit};
use precedent_unfair::features::FeatureOptions;
use precedent_unfair::metric::{column_name, Scores};
use precedent_unfair::model::{cross_validate, ModelOptions};
use precedent_unfair::svm::SvmOptions;

fn line(name: &str, s: &Scores) -> String {
    let per: Vec<String> = s
        .per_column_f1
        .iter()
        .enumerate()
        .map(|(c, f)| format!("{}={:.1}", &column_name(c)[..4], 100.0 * f))
        .collect();
    format!(
        "{name}: micro {:.1} macro {:.1} [{}]",
        100.0 * s.micro_f1,
        100.0 * s.macro_f1,
        per.join(" ")
    )
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let dir = PathBuf::from(
        args.get(1)
            .context("usage: cv DATA_DIR [C] [W] [words|chars]")?,
    );
    let c: f32 = args.get(2).map_or(Ok(1.0), |s| s.parse())?;
    let w: f32 = args.get(3).map_or(Ok(1.0), |s| s.parse())?;
    let features = match args.get(4).map(String::as_str) {
        Some("words") => FeatureOptions {
            char_range: None,
            ..FeatureOptions::default()
        },
        _ => FeatureOptions::default(),
    };
    let rows = training_rows(&dir, TrainSplit::Train)?;
    let options = ModelOptions {
        features,
        svm: SvmOptions {
            c,
            positive_weight: w,
            ..SvmOptions::default()
        },
        ..ModelOptions::default()
    };
    let started = Instant::now();
    let report = cross_validate(&rows, &options);
    println!(
        "C={c} w={w} {:?} ({:.0} s)",
        options.features.char_range,
        started.elapsed().as_secs_f64()
    );
    println!("  {}", line("nested", &report.nested));
    println!("  {}", line("pooled", &report.pooled));
    println!("  {}", line("at 0  ", &report.at_zero));
    Ok(())
}
