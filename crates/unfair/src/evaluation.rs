//! `precedent eval-unfair-tos` as one call: the rows of a CSV predicted by the classifier asked
//! for, the predictions written when asked, LexGLUE's figures when the file has labels, the
//! text the command prints and the JSON summary it writes.
//!
//! Why here: which classifier scores the rows and how they are scored are this crate's
//! (LexGLUE's protocol, [`crate::metric`]); the command parses its flags and prints.

use std::fmt::Write;
use std::path::Path;
use std::time::Instant;

use anyhow::{Context, Result};

use crate::cache::UnfairSource;
use crate::classifiers::{load_from, write_predictions, ClassifierKind};
use crate::data::{has_labels_column, read_csv_with};
use crate::metric::{column_name, score, Scores};
use crate::minilm::MiniLmOptions;
use crate::LabelSet;

/// What `eval-unfair-tos` is asked to run (its flags).
pub struct UnfairTosPlan<'a> {
    /// The CSV to predict (column `text`; scored when it has `labels`).
    pub test: &'a Path,
    pub kind: ClassifierKind,
    pub source: &'a UnfairSource,
    /// How the MiniLM classifier is fine-tuned (`--model minilm` or `ensemble`).
    pub minilm: &'a MiniLmOptions,
    pub predictions_out: Option<&'a Path>,
    pub json_out: Option<&'a Path>,
}

/// Predicts and scores `plan`'s rows; returns the text to print (timings go to stderr).
pub fn evaluate_csv(plan: &UnfairTosPlan<'_>) -> Result<String> {
    let labelled = has_labels_column(plan.test)?;
    let rows = read_csv_with(plan.test, labelled)?;
    let started = Instant::now();
    let model = load_from(plan.kind, plan.source, plan.minilm)?;
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
        plan.kind,
        model.trained_on(),
        rows.len(),
        1000.0 * predict_s / rows.len().max(1) as f64
    );
    if let Some(path) = plan.predictions_out {
        write_predictions(path, &predicted)?;
    }
    let scores = labelled.then(|| {
        let gold: Vec<LabelSet> = rows.iter().map(|r| r.labels).collect();
        score(&gold, &predicted)
    });
    let mut text = match &scores {
        Some(s) => table(s),
        None => format!(
            "{} rows predicted ({} with a label); {} has no labels column to score against\n",
            rows.len(),
            predicted.iter().filter(|&&p| p != 0).count(),
            plan.test.display()
        ),
    };
    let block = model.block_comparison();
    if let Some(b) = block {
        let _ = writeln!(
            text,
            "on the training rows' held-out block ({} rows; MiniLM and ensemble thresholds cross-fitted on its halves), micro / macro-F1:",
            b.rows
        );
        for (name, s) in [
            ("svm", &b.svm),
            ("minilm", &b.minilm),
            ("ensemble", &b.ensemble),
        ] {
            let _ = writeln!(
                text,
                "  {name:<9} {:.1} / {:.1}  (per column: {})",
                100.0 * s.micro_f1,
                100.0 * s.macro_f1,
                s.per_column_f1
                    .iter()
                    .map(|f| format!("{:.1}", 100.0 * f))
                    .collect::<Vec<_>>()
                    .join(" ")
            );
        }
    }
    if let Some(path) = plan.json_out {
        let json = serde_json::json!({
            "held_out_block": block.map(|b| serde_json::json!({
                "rows": b.rows, "svm": b.svm, "minilm": b.minilm, "ensemble": b.ensemble,
            })),
            "test": plan.test.display().to_string(),
            "rows": rows.len(),
            "scores": scores,
            "columns": (0..crate::N_COLUMNS).map(column_name).collect::<Vec<_>>(),
            "model": format!("{:?}", plan.kind).to_lowercase(),
            "trained_on": model.trained_on(),
            "fine_tune_seconds": model.fine_tune_seconds(),
            "predict_seconds": predict_s,
        });
        std::fs::write(path, serde_json::to_string_pretty(&json)?)
            .with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(text)
}

/// LexGLUE's micro- and macro-F1, then each column's F1 with its counts.
fn table(scores: &Scores) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "micro-F1 {:.1}  macro-F1 {:.1}  ({} rows)",
        100.0 * scores.micro_f1,
        100.0 * scores.macro_f1,
        scores.rows
    );
    for (c, (f1, counts)) in scores.per_column_f1.iter().zip(&scores.counts).enumerate() {
        let _ = writeln!(
            out,
            "  {:<24} F1 {:5.1}  (support {}, tp {}, fp {}, fn {})",
            column_name(c),
            100.0 * f1,
            counts.support,
            counts.tp,
            counts.fp,
            counts.fn_
        );
    }
    out
}
