//! Contract-level CV of the single-clause classifier on the shared CUAD spans, for trying options
//! faster than a release build of the CLI allows:
//! `clause_cv [EPOCHS] [RATE] [L2] [CHAR 0/1] [FOLDS] [LIMIT]` (missing ones take the defaults).
//! Prints balanced accuracy per category and the means over all 41 categories and over the 38
//! LegalBench tasks (the figure `eval-legalbench --dev-cuad` reports).

use std::path::Path;
use std::str::FromStr;

use anyhow::{Context, Result};
use precedent_cuad::clause_classifier::{cross_validate, dev_report, ClassifierOptions};
use precedent_cuad::legalbench::is_task_category;
use precedent_cuad::CATEGORIES;

fn arg<T: FromStr>(args: &[String], i: usize, name: &str) -> Result<Option<T>>
where
    T::Err: std::error::Error + Send + Sync + 'static,
{
    args.get(i)
        .map(|v| v.parse().with_context(|| format!("{name}: {v:?}")))
        .transpose()
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let mut options = ClassifierOptions::default();
    if let Some(v) = arg(&args, 1, "EPOCHS")? {
        options.epochs = v;
    }
    if let Some(v) = arg(&args, 2, "RATE")? {
        options.learning_rate = v;
    }
    if let Some(v) = arg(&args, 3, "L2")? {
        options.l2 = v;
    }
    if let Some(v) = arg::<u8>(&args, 4, "CHAR")? {
        options.char_ngrams = v == 1;
    }
    let folds = arg(&args, 5, "FOLDS")?.unwrap_or(5);
    let cuad = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/data/cuad"
    ));
    let mut data = precedent_cuad::load(cuad)?;
    if let Some(limit) = arg(&args, 6, "LIMIT")? {
        data.contracts.truncate(limit);
    }
    let contracts: Vec<&_> = data.contracts.iter().collect();
    let started = std::time::Instant::now();
    let spans = cross_validate(&contracts, folds, &options, &[], None, |f, n| {
        eprintln!("fold {f}/{n} {:.0} s", started.elapsed().as_secs_f64())
    })?;
    let report = dev_report(&spans, folds, &options);
    for (category, ba) in &report.tasks {
        println!("{category:<40} {:5.1}", 100.0 * ba);
    }
    let task_scores: Vec<f64> = CATEGORIES
        .iter()
        .enumerate()
        .filter(|(k, _)| is_task_category(*k))
        .filter_map(|(_, c)| report.tasks.get(*c).copied())
        .collect();
    println!(
        "{options:?} folds {folds}: mean of 41 {:.2}, mean of the {} LegalBench tasks {:.2} ({:.0} s)",
        100.0 * report.mean,
        task_scores.len(),
        100.0 * task_scores.iter().sum::<f64>() / task_scores.len().max(1) as f64,
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
