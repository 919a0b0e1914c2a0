//! `precedent eval-unfair-tos --test FILE.csv`: LexGLUE's UNFAIR-ToS task. Trains the
//! classifier from the shared data (or loads the cached one), predicts every row of FILE,
//! optionally writes the predictions, and when FILE has labels prints LexGLUE's micro- and
//! macro-F1 and the F1 of each column.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use precedent_unfair::cache::{default_cache, TrainSplit, UnfairSource};
use precedent_unfair::classifiers::{load_from, write_predictions, ClassifierKind};
use precedent_unfair::data::{has_labels_column, read_csv_with};
use precedent_unfair::metric::{column_name, score, Scores};
use precedent_unfair::minilm::MiniLmOptions;
use precedent_unfair::LabelSet;

/// Which classifier scores the rows (`--model`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ModelKind {
    /// Per-label linear SVMs over TF-IDF (trained in seconds).
    Svm,
    /// all-MiniLM-L6-v2 fine-tuned with eight sigmoid outputs (10-30 minutes on 2 cores the
    /// first time, then cached).
    Minilm,
    /// The mean of the SVM's and the fine-tuned MiniLM's calibrated probabilities.
    Ensemble,
}

/// Which shared rows train the model (`--fit-on`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum FitOn {
    /// `unfair_tos_train.csv` only (LexGLUE's protocol): what the validation figures are
    /// measured with, since a model fitted on the validation rows cannot be scored on them.
    Train,
    /// Train and validation rows together (the default: 41% more sentences, which the rare
    /// types need; thresholds then come from contiguous-block CV over both). For the official
    /// test split and the product, never for scoring the validation file.
    TrainValidation,
}

impl From<FitOn> for TrainSplit {
    fn from(f: FitOn) -> Self {
        match f {
            FitOn::Train => TrainSplit::Train,
            FitOn::TrainValidation => TrainSplit::TrainAndValidation,
        }
    }
}

/// Where the UNFAIR-ToS model comes from (shared by eval-unfair-tos, review and serve).
#[derive(Args, Clone)]
pub struct UnfairArgs {
    /// UNFAIR-ToS folder (unfair_tos_train.csv, unfair_tos_validation.csv); default
    /// $PRECEDENT_UNFAIR_TOS_DIR or shared/data/unfair_tos beside the working directory, the
    /// executable, or an ancestor of either.
    #[arg(long)]
    pub unfair_data: Option<PathBuf>,
    /// Which shared rows the terms-of-service model learns from.
    #[arg(long, value_enum, default_value_t = FitOn::TrainValidation)]
    pub fit_on: FitOn,
    /// Cache directory of trained UNFAIR-ToS models (default: .precedent/cache/unfair-tos).
    #[arg(long, default_value_os_t = default_cache())]
    pub unfair_cache: PathBuf,
}

impl UnfairArgs {
    /// The model source these arguments name ([`UnfairSource`]).
    pub fn source(&self) -> UnfairSource {
        UnfairSource {
            data: self.unfair_data.clone(),
            split: self.fit_on.into(),
            cache: self.unfair_cache.clone(),
        }
    }
}

#[derive(Args)]
pub struct EvalUnfairTosArgs {
    /// CSV to predict (column `text`; with a `labels` column it is scored).
    #[arg(long)]
    pub test: PathBuf,
    /// Write one {"row": i, "labels": [ids]} per input row, in input order.
    #[arg(long)]
    pub predictions_out: Option<PathBuf>,
    /// Write the figures as JSON (micro_f1, macro_f1, per-column F1 and counts; fractions).
    #[arg(long)]
    pub json_out: Option<PathBuf>,
    /// UNFAIR-ToS folder to train from (the same as --unfair-data).
    #[arg(long, conflicts_with = "unfair_data")]
    pub data: Option<PathBuf>,
    /// The classifier to score with.
    #[arg(long = "model", value_enum, default_value_t = ModelKind::Svm)]
    pub kind: ModelKind,
    /// Fine-tuning epochs of the MiniLM classifier (--model minilm or ensemble).
    #[arg(long, default_value_t = MiniLmOptions::default().epochs)]
    pub epochs: usize,
    #[command(flatten)]
    pub model: UnfairArgs,
}

impl From<ModelKind> for ClassifierKind {
    fn from(kind: ModelKind) -> Self {
        match kind {
            ModelKind::Svm => ClassifierKind::Svm,
            ModelKind::Minilm => ClassifierKind::Minilm,
            ModelKind::Ensemble => ClassifierKind::Ensemble,
        }
    }
}

fn print_scores(scores: &Scores) {
    println!(
        "micro-F1 {:.1}  macro-F1 {:.1}  ({} rows)",
        100.0 * scores.micro_f1,
        100.0 * scores.macro_f1,
        scores.rows
    );
    for (c, (f1, counts)) in scores.per_column_f1.iter().zip(&scores.counts).enumerate() {
        println!(
            "  {:<24} F1 {:5.1}  (support {}, tp {}, fp {}, fn {})",
            column_name(c),
            100.0 * f1,
            counts.support,
            counts.tp,
            counts.fp,
            counts.fn_
        );
    }
}

pub fn run(mut args: EvalUnfairTosArgs) -> Result<()> {
    if let Some(dir) = args.data.take() {
        args.model.unfair_data = Some(dir);
    }
    let labelled = has_labels_column(&args.test)?;
    let rows = read_csv_with(&args.test, labelled)?;
    let started = Instant::now();
    let model = load_from(args.kind.into(), &args.model.source(), args.epochs)?;
    let load_s = started.elapsed().as_secs_f64();
    let started = Instant::now();
    let texts: Vec<&str> = rows.iter().map(|r| r.text.as_str()).collect();
    let predicted: Vec<LabelSet> = model
        .predict_all(&texts)?
        .into_iter()
        .map(|p| p.labels)
        .collect();
    let predict_s = started.elapsed().as_secs_f64();
    if let Some(seconds) = model.fine_tune_seconds() {
        eprintln!("MiniLM fine-tuning took {seconds:.0} s when it was trained");
    }
    eprintln!(
        "{:?} model ready in {load_s:.1} s (trained on {} sentences); {} rows predicted in {predict_s:.2} s ({:.2} ms a sentence)",
        args.kind,
        model.trained_on(),
        rows.len(),
        1000.0 * predict_s / rows.len().max(1) as f64
    );
    if let Some(path) = &args.predictions_out {
        write_predictions(path, &predicted)?;
    }
    let scores = labelled.then(|| {
        let gold: Vec<LabelSet> = rows.iter().map(|r| r.labels).collect();
        score(&gold, &predicted)
    });
    match &scores {
        Some(s) => print_scores(s),
        None => println!(
            "{} rows predicted ({} with a label); {} has no labels column to score against",
            rows.len(),
            predicted.iter().filter(|&&p| p != 0).count(),
            args.test.display()
        ),
    }
    if let Some(path) = &args.json_out {
        let json = serde_json::json!({
            "test": args.test.display().to_string(),
            "rows": rows.len(),
            "scores": scores,
            "columns": (0..precedent_unfair::N_COLUMNS).map(column_name).collect::<Vec<_>>(),
            "model": format!("{:?}", args.kind).to_lowercase(),
            "trained_on": model.trained_on(),
            "fine_tune_seconds": model.fine_tune_seconds(),
            "predict_seconds": predict_s,
        });
        std::fs::write(path, serde_json::to_string_pretty(&json)?)
            .with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}
