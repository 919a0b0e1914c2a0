//! Times fine-tuning steps of the MiniLM multi-label classifier on real UNFAIR-ToS sentences,
//! in batches drawn at random (so padded to their longest sentence, as any batch of mixed
//! lengths is), over frozen states as `eval-unfair-tos --model minilm` trains.
//!
//! Why it exists: a padded batch once took 100 s a step against 5 s for an unpadded one of
//! the same size, because masked attention keys got subnormal probabilities (see
//! `exp_neg` in precedent-models). This measures the step the product's recipe pays.
//!
//! cargo run --release -p precedent-tools --bin finetune_step -- \
//!     [--csv ../shared/data/unfair_tos/unfair_tos_train.csv] [--steps 5] [--batch-size 32]
//!     [--frozen-layers 1] [--keep-freed-memory]

use std::path::PathBuf;
use std::time::Instant;

use precedent_models::MultiLabelTrainer;
use precedent_unfair::minilm::{target_row, MiniLmOptions};
use precedent_unfair::N_LABELS;

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let mut csv = PathBuf::from("../shared/data/unfair_tos/unfair_tos_train.csv");
    let mut steps = 5usize;
    let mut recipe = MiniLmOptions::default();
    let mut keep = false;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut val = || args.next().ok_or(format!("{a} needs a value"));
        match a.as_str() {
            "--csv" => csv = PathBuf::from(val()?),
            "--steps" => steps = val()?.parse()?,
            "--batch-size" => recipe.batch_size = val()?.parse()?,
            "--frozen-layers" => recipe.frozen_layers = val()?.parse()?,
            "--keep-freed-memory" => keep = true,
            other => return Err(format!("unknown argument {other}").into()),
        }
    }
    if steps == 0 {
        return Err("--steps must be at least 1".into());
    }
    let batch_size = recipe.batch_size;
    if keep {
        precedent_models::keep_freed_memory();
    }
    let rows = precedent_unfair::data::read_csv(&csv)?;
    if rows.len() < batch_size {
        return Err(format!(
            "{} has {} rows, fewer than a batch",
            csv.display(),
            rows.len()
        )
        .into());
    }
    let texts: Vec<String> = rows
        .iter()
        .map(|r| precedent_unfair::normalise::normalise(&r.text))
        .collect();
    let mut trainer = MultiLabelTrainer::from_encoder(
        &recipe.base_model,
        recipe.fine_tune_options(steps),
        N_LABELS,
    )?;
    // Every `stride`-th row: a fixed, spread draw, so runs compare.
    let stride = (rows.len() / (batch_size * steps)).max(1);
    let mut total = 0.0;
    for step in 0..steps {
        let picked: Vec<usize> = (0..batch_size)
            .map(|i| ((step * batch_size + i) * stride) % rows.len())
            .collect();
        let batch: Vec<&str> = picked.iter().map(|&i| texts[i].as_str()).collect();
        let targets: Vec<Vec<f32>> = picked.iter().map(|&i| target_row(rows[i].labels)).collect();
        let started = Instant::now();
        if recipe.frozen_layers > 0 {
            let states = trainer.frozen_states(&batch)?;
            let refs: Vec<_> = states.iter().collect();
            let begun = Instant::now();
            trainer.train_step_on_states(&refs, &targets)?;
            let s = begun.elapsed().as_secs_f64();
            total += s;
            println!(
                "step {}: {s:.2} s (frozen states {:.2} s)",
                step + 1,
                started.elapsed().as_secs_f64() - s
            );
        } else {
            trainer.train_step(&batch, &targets)?;
            let s = started.elapsed().as_secs_f64();
            total += s;
            println!("step {}: {s:.2} s", step + 1);
        }
    }
    println!(
        "mean {:.2} s a step over {steps} steps of {batch_size}",
        total / steps as f64
    );
    Ok(())
}
