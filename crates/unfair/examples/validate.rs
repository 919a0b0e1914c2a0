//! Trains the shipped configuration on the UNFAIR-ToS training rows and scores the validation
//! rows once, timing training and per-sentence prediction (the figures of BENCHMARKS.md; the
//! CLI's `eval-unfair-tos --test unfair_tos_validation.csv` gives the same scores):
//!
//! `cargo run --release -p precedent-unfair --example validate -- DATA_DIR`

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result};
use precedent_unfair::cache::{training_rows, TrainSplit, VALIDATION_FILE};
use precedent_unfair::metric::column_name;
use precedent_unfair::model::evaluate;
use precedent_unfair::{read_csv, ModelOptions, UnfairModel};

fn main() -> Result<()> {
    let dir = PathBuf::from(
        std::env::args()
            .nth(1)
            .context("usage: validate DATA_DIR")?,
    );
    let train = training_rows(&dir, TrainSplit::Train)?;
    let validation = read_csv(&dir.join(VALIDATION_FILE))?;
    let started = Instant::now();
    let model = UnfairModel::train(&train, &ModelOptions::default())?;
    let train_s = started.elapsed().as_secs_f64();
    let started = Instant::now();
    let (scores, _) = evaluate(&model, &validation);
    let all_s = started.elapsed().as_secs_f64();
    // One sentence at a time on one thread: what a single request waits.
    let started = Instant::now();
    for e in validation.iter().take(500) {
        std::hint::black_box(model.predict(&e.text));
    }
    let one_ms = 1000.0 * started.elapsed().as_secs_f64() / 500.0;
    println!(
        "trained on {} rows in {train_s:.1} s; {} validation rows in {all_s:.2} s; {one_ms:.3} ms a sentence alone",
        train.len(),
        validation.len()
    );
    println!(
        "validation micro-F1 {:.1} macro-F1 {:.1}",
        100.0 * scores.micro_f1,
        100.0 * scores.macro_f1
    );
    for (c, f) in scores.per_column_f1.iter().enumerate() {
        println!(
            "  {:<24} {:.1} (support {})",
            column_name(c),
            100.0 * f,
            scores.counts[c].support
        );
    }
    Ok(())
}
