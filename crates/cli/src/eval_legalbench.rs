//! `precedent eval-legalbench DIR`: balanced accuracy of the clause typer on LegalBench's CUAD
//! classification tasks (`CUAD_<Category>/test.tsv`, or `train.tsv` where no test file exists).

use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;
use precedent_cuad::legalbench::{read_examples, tasks, Thresholds};
use precedent_metrics::balanced_accuracy;

use crate::review::TyperArgs;

#[derive(Args)]
pub struct EvalLegalbenchArgs {
    /// Folder holding the `CUAD_<Category>/` task folders.
    pub dir: PathBuf,
    /// Write {"tasks": {"<folder>": x}, "mean": x} (balanced accuracy as fractions).
    #[arg(long)]
    pub json_out: Option<PathBuf>,
    /// Which rows to score: test (falls back to train.tsv where a folder has no test.tsv) or train.
    #[arg(long, default_value = "test")]
    pub split: String,
    /// Per-category confidence thresholds (JSON {"thresholds": {"<category>": t}}); default: the
    /// ones tuned by `eval-cuad` on the CUAD development set, shipped with the typer.
    #[arg(long)]
    pub thresholds: Option<PathBuf>,
    #[command(flatten)]
    pub typer: TyperArgs,
}

pub fn run(args: EvalLegalbenchArgs) -> Result<()> {
    let thresholds: Thresholds = match &args.thresholds {
        Some(path) => serde_json::from_str(
            &std::fs::read_to_string(path)
                .with_context(|| format!("reading {}", path.display()))?,
        )
        .with_context(|| format!("parsing {}", path.display()))?,
        None => precedent_cuad::legalbench::shipped_thresholds(),
    };
    let tasks = tasks(&args.dir)?;
    let typer = args.typer.load()?;
    let mut scores = BTreeMap::new();
    for task in &tasks {
        let test = task.dir.join("test.tsv");
        let file = if args.split == "test" && test.is_file() {
            test
        } else {
            task.dir.join("train.tsv")
        };
        let examples = read_examples(&file)?;
        let t = thresholds.get(task.category);
        let judged = examples.iter().map(|e| {
            let confidence = typer.classify_scores(&e.text)[task.category];
            (e.label, confidence >= t)
        });
        let Some(ba) = balanced_accuracy(judged) else {
            eprintln!("{}: no rows, skipped", file.display());
            continue;
        };
        println!(
            "{:<45} {:5.1}  ({} rows of {})",
            task.name,
            100.0 * ba,
            examples.len(),
            file.file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default()
        );
        scores.insert(task.name.clone(), ba);
    }
    let mean = scores.values().sum::<f64>() / scores.len().max(1) as f64;
    println!("{:<45} {:5.1}", "mean", 100.0 * mean);
    if let Some(path) = &args.json_out {
        let json = serde_json::json!({ "tasks": scores, "mean": mean });
        std::fs::write(path, serde_json::to_string_pretty(&json)?)
            .with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}
