//! Cross-validates classifier configurations on the UNFAIR-ToS training rows by contiguous
//! blocks, to choose the shipped options on the training rows alone:
//!
//! `cargo run --release -p precedent-tools --bin unfair_cv -- DATA_DIR [C] [POSITIVE_WEIGHT] [words|chars] [--vectors W1,W2,..] [--model SPEC] [--word-max-n N] [--validation]`
//!
//! `--vectors` scores each sentence-vector weight (0 = TF-IDF alone; the sentences are embedded
//! once with the default embedder, all-MiniLM-L6-v2, or with `--model`: a model folder or
//! name as `Embedder::load` takes it, to compare encoders). `--validation` also trains each
//! configuration on the training rows and scores the validation rows: report those figures,
//! never choose by them.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result};
use precedent_models::Embedder;
use precedent_unfair::cache::{training_rows, TrainSplit, VALIDATION_FILE};
use precedent_unfair::features::FeatureOptions;
use precedent_unfair::metric::{column_name, Scores};
use precedent_unfair::model::{cross_validate, evaluate, ModelOptions, UnfairModel};
use precedent_unfair::svm::SvmOptions;
use precedent_unfair::{read_csv, sentence_vectors, Example};

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

fn embed(embedder: &Embedder, rows: &[Example]) -> Result<Vec<Vec<f32>>> {
    let texts: Vec<&str> = rows.iter().map(|e| e.text.as_str()).collect();
    let started = Instant::now();
    let vectors = sentence_vectors(embedder, &texts)?;
    eprintln!(
        "embedded {} sentences in {:.0} s",
        texts.len(),
        started.elapsed().as_secs_f64()
    );
    Ok(vectors)
}

/// Removes `name` and its value from `args`, returning the value (`None` when `name` is absent).
fn take_option(args: &mut Vec<String>, name: &str, what: &str) -> Result<Option<String>> {
    let Some(at) = args.iter().position(|a| a == name) else {
        return Ok(None);
    };
    let value = args
        .get(at + 1)
        .with_context(|| format!("{name} needs {what}"))?
        .clone();
    args.drain(at..at + 2);
    Ok(Some(value))
}

fn main() -> Result<()> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let validation = args.iter().any(|a| a == "--validation");
    args.retain(|a| a != "--validation");
    let weights: Vec<f32> =
        match take_option(&mut args, "--vectors", "a list of weights, e.g. 0,0.5,1")? {
            Some(list) => list
                .split(',')
                .map(|w| w.trim().parse().with_context(|| format!("weight {w:?}")))
                .collect::<Result<_>>()?,
            None => vec![0.0],
        };
    let model_spec = take_option(&mut args, "--model", "a model folder or name")?;
    let word_max_n: Option<usize> = take_option(&mut args, "--word-max-n", "a number of words")?
        .map(|n| n.parse().with_context(|| format!("--word-max-n {n:?}")))
        .transpose()?;
    let dir = PathBuf::from(args.first().context(
        "usage: unfair_cv DATA_DIR [C] [W] [words|chars] [--vectors W,..] [--model SPEC] [--word-max-n N] [--validation]",
    )?);
    let c: f32 = args.get(1).map_or(Ok(1.0), |s| s.parse())?;
    let w: f32 = args.get(2).map_or(Ok(1.0), |s| s.parse())?;
    let mut features = match args.get(3).map(String::as_str) {
        Some("words") => FeatureOptions {
            char_range: None,
            ..FeatureOptions::default()
        },
        _ => FeatureOptions::default(),
    };
    if let Some(n) = word_max_n {
        features.word_max_n = n;
    }
    let rows = training_rows(&dir, TrainSplit::Train)?;
    let held = if validation {
        read_csv(&dir.join(VALIDATION_FILE))?
    } else {
        Vec::new()
    };
    let embedder = if weights.iter().any(|&w| w > 0.0) {
        Some(match &model_spec {
            Some(spec) => Embedder::load(spec).with_context(|| format!("loading {spec}"))?,
            None => Embedder::load_default()?,
        })
    } else {
        None
    };
    let (vectors, held_vectors) = match &embedder {
        Some(e) => (Some(embed(e, &rows)?), Some(embed(e, &held)?)),
        None => (None, None),
    };
    for &weight in &weights {
        let options = ModelOptions {
            features: features.clone(),
            svm: SvmOptions {
                c,
                positive_weight: w,
                ..SvmOptions::default()
            },
            sentence_vectors: weight,
            ..ModelOptions::default()
        };
        let started = Instant::now();
        let report = cross_validate(&rows, vectors.as_deref(), &options)?;
        println!(
            "C={c} w={w} words 1-{} chars {:?} sentence vectors {weight} ({:.0} s)",
            options.features.word_max_n,
            options.features.char_range,
            started.elapsed().as_secs_f64()
        );
        println!("  {}", line("nested", &report.nested));
        println!("  {}", line("pooled", &report.pooled));
        println!("  {}", line("at 0  ", &report.at_zero));
        if validation {
            let model = UnfairModel::train(&rows, vectors.as_deref(), &options)?;
            let (scores, _) = evaluate(&model, &held, held_vectors.as_deref());
            println!("  {}", line("valid ", &scores));
        }
    }
    Ok(())
}
