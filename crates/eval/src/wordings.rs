//! Several wordings of the same queries (ACORD's short, medium and long queries) scored side
//! by side: each wording evaluated in turn ([`evaluate_wordings`], what `precedent eval` runs),
//! where each wording's run goes, the summary of them all, and the table of their figures and
//! spread.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{bail, Result};
use precedent_engine::library_setup::{corpus_library, VectorPlan};
use precedent_engine::pipeline_choice::{
    build_command_pipeline, command_needs_embedder, command_pipelines, BuiltPipeline,
    PipelineOptions,
};
use precedent_engine::Report;
use precedent_formats::{Qrels, Query};
use precedent_library::{Library, Progress};
use precedent_metrics::MeanMetrics;
use precedent_rank::Pipeline;

use crate::{evaluate, EvalOptions, Evaluation};

/// Where `precedent eval` scores: a corpus to build (or reuse) a library from, at `index` or
/// under `.precedent/eval/`, or only `index`, a library scored as it is (e.g. one `ingest`
/// built from contracts).
pub struct EvalLibrary<'a> {
    pub corpus: Option<&'a Path>,
    pub index: Option<&'a Path>,
    /// The pipeline named (`--pipeline`); `None` for the default one, which reads vectors.
    pub pipeline: Option<&'a str>,
}

/// The library `eval` scores ([`EvalLibrary`]), after refusing an unknown pipeline; clause
/// vectors are built (`vectors`) when the pipeline reads them, and a given library without
/// them is refused for such a pipeline.
pub fn eval_library<'a>(
    source: &EvalLibrary<'_>,
    vectors: &dyn Fn() -> Result<VectorPlan<'a>>,
    report: &dyn Report,
) -> Result<Library> {
    if let Some(name) = source.pipeline {
        if !command_pipelines().contains(&name) {
            bail!(
                "unknown pipeline {name:?}; known pipelines: {}",
                command_pipelines().join(", ")
            );
        }
    }
    // The default pipelines (learned, hybrid+types) read vectors.
    let want_vectors = source.pipeline.is_none_or(command_needs_embedder);
    match (source.corpus, source.index) {
        (Some(corpus), index) => {
            let plan = want_vectors.then_some(vectors);
            corpus_library(corpus, index, plan, report)
        }
        (None, Some(dir)) => {
            let library = Library::open(dir)?;
            if let Some(name) = source.pipeline {
                if want_vectors && library.vectors_info().is_none() {
                    bail!(
                        "{} has no clause vectors, which pipeline {name} needs: use --pipeline bm25, or rebuild the library with vectors",
                        dir.display()
                    );
                }
            }
            Ok(library)
        }
        (None, None) => bail!(
            "give --corpus (a library is built from it) or --index (a library to score as it is)"
        ),
    }
}

/// The pipeline `eval` scores: `name`, else the default as `search` chooses it but never a
/// model trained on the queries scored here ([`crate::ranker_cv::default_eval_ranking`], its
/// note on stderr); built ([`build_command_pipeline`]) and refused if a model in it learnt
/// from these queries ([`check_unseen`]).
pub fn eval_pipeline(
    name: Option<&str>,
    library: Arc<Library>,
    options: &PipelineOptions<'_>,
    qrels: &Qrels,
) -> Result<BuiltPipeline> {
    let name = match name {
        Some(name) => name,
        None => {
            let model_dir = options.learned.model_dir;
            let (name, note) = crate::ranker_cv::default_eval_ranking(&library, model_dir, qrels)?;
            if !note.is_empty() {
                eprintln!("{note}");
            }
            name
        }
    };
    // A bi-encoder fine-tuned on ratings (`train-bi-encoder`) embeds the library: it must not
    // have learnt from the queries scored here either.
    let embedded_by = library
        .vectors_info()
        .map(|info| std::path::PathBuf::from(&info.model_source))
        .filter(|dir| dir.is_dir());
    if let Some(dir) = embedded_by {
        precedent_engine::cross_encoder_training::check_no_overlap(&dir, qrels)?;
    }
    let built = build_command_pipeline(name, library, options)?;
    let cross_encoder = match (options.rerank.rerank, options.rerank.rerank_model) {
        (Some("cross-encoder"), Some(dir)) => Some(Path::new(dir)),
        _ => None,
    };
    check_unseen(built.learned.as_deref(), cross_encoder, qrels)?;
    Ok(built)
}

/// Refuses to score models on the queries they learnt from: the learned ranker in the
/// pipeline ([`crate::ranker_cv::check_no_overlap`]) and a fine-tuned cross-encoder that
/// reranks it ([`precedent_engine::cross_encoder_training::check_no_overlap`]).
pub fn check_unseen(
    learned: Option<&precedent_learn::LearnedModel>,
    cross_encoder: Option<&Path>,
    qrels: &Qrels,
) -> Result<()> {
    if let Some(model) = learned {
        crate::ranker_cv::check_no_overlap(model, qrels)?;
    }
    if let Some(dir) = cross_encoder {
        precedent_engine::cross_encoder_training::check_no_overlap(dir, qrels)?;
    }
    Ok(())
}

/// Each wording's headline figures and their mean, with the JSON summary `eval --json-out`
/// writes.
pub struct WordingsEvaluation {
    /// Each wording's figures, in the order given.
    pub means: Vec<(String, MeanMetrics)>,
    /// The mean over the wordings.
    pub mean: MeanMetrics,
    summaries: serde_json::Map<String, serde_json::Value>,
}

impl WordingsEvaluation {
    /// Whether more than one wording was scored.
    pub fn several(&self) -> bool {
        self.means.len() > 1
    }

    /// One wording's summary as it is, or the mean over wordings and each one's summary.
    pub fn summary_json(&self) -> serde_json::Value {
        if self.several() {
            serde_json::json!({ "mean_over_wordings": self.mean, "wordings": self.summaries })
        } else {
            self.summaries.values().next().cloned().unwrap_or_default()
        }
    }

    /// [`wording_summary`] of these wordings.
    pub fn table(&self) -> String {
        wording_summary(&self.means, &self.mean)
    }
}

/// Scores `pipeline` on each wording of the queries in turn; `each(wording, evaluation)` sees
/// every evaluation as it is done (to print it or write its run, [`wording_path`]).
pub fn evaluate_wordings(
    pipeline: &Pipeline,
    library: &Library,
    wordings: &[(String, Vec<Query>)],
    qrels: &Qrels,
    options: &EvalOptions,
    progress: &dyn Progress,
    each: &mut dyn FnMut(&str, &Evaluation) -> Result<()>,
) -> Result<WordingsEvaluation> {
    let mut summaries = serde_json::Map::new();
    let mut means = Vec::new();
    for (wording, queries) in wordings {
        let evaluation = evaluate(pipeline, library, queries, qrels, options, progress)?;
        each(wording, &evaluation)?;
        means.push((wording.clone(), evaluation.overall.clone()));
        summaries.insert(wording.clone(), evaluation.summary_json());
    }
    let mean = MeanMetrics::mean_of(means.iter().map(|(_, m)| m));
    Ok(WordingsEvaluation {
        means,
        mean,
        summaries,
    })
}

/// Where `eval --run-out PATH` writes a wording's run: PATH itself for a single wording, else
/// one file per wording ([`wording_path`]), since the same query ids rank differently in each.
pub fn run_path(path: &Path, wording: &str, several: bool) -> PathBuf {
    if several {
        wording_path(path, wording)
    } else {
        path.to_path_buf()
    }
}

/// `run.tsv` for the `medium` wording: `run.medium.tsv`.
pub fn wording_path(path: &Path, wording: &str) -> PathBuf {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = match path.extension() {
        Some(ext) => format!("{stem}.{wording}.{}", ext.to_string_lossy()),
        None => format!("{stem}.{wording}"),
    };
    path.with_file_name(name)
}

/// Each wording's headline figures, their mean and the spread of NDCG@5 between wordings.
pub fn wording_summary(
    means: &[(String, precedent_metrics::MeanMetrics)],
    mean: &precedent_metrics::MeanMetrics,
) -> String {
    let pct = |v: Option<f64>| v.map_or("      –".to_string(), |v| format!("{:>7.1}", 100.0 * v));
    let mut out = format!(
        "\n{:<24} {:>7} {:>7} {:>7}\n",
        "wording", "NDCG@5", "NDCG@10", "4★P@5"
    );
    for (name, m) in means
        .iter()
        .map(|(w, m)| (w.as_str(), m))
        .chain([("mean", mean)])
    {
        out.push_str(&format!(
            "{:<24} {} {} {}\n",
            name,
            pct(Some(m.ndcg5)),
            pct(Some(m.ndcg10)),
            pct(m.p5_4star)
        ));
    }
    let ndcg5: Vec<f64> = means.iter().map(|(_, m)| m.ndcg5).collect();
    let spread = ndcg5.iter().copied().fold(f64::NEG_INFINITY, f64::max)
        - ndcg5.iter().copied().fold(f64::INFINITY, f64::min);
    out.push_str(&format!(
        "{:<24} {}\n",
        "spread of NDCG@5",
        pct(Some(spread))
    ));
    out
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::run_path;

    #[test]
    fn several_wordings_write_one_run_each() {
        let path = Path::new("out/run.tsv");
        assert_eq!(run_path(path, "short", false), path);
        assert_eq!(
            run_path(path, "medium", true),
            Path::new("out/run.medium.tsv")
        );
    }
}
