//! Which pipeline, and which learned ranker in it, a command ranks with: the choice `search`,
//! `eval` and `bench` make from a library and an optional `--model-dir`, and the pipeline
//! built from it with the models it loads (judges included: `learned+judge`, `learned+llm`).
//!
//! Why here: the default pipeline of a library and the ranker that serves it are the engine's
//! decisions ([`crate::default_pipeline`], [`Rankers::for_library`]); a face that chose for
//! itself would rank the same query differently from the API.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use anyhow::{Context, Result};
use precedent_judge::pipelines::{judge_backend, JudgeSettings, BASE_PIPELINE, JUDGE_PIPELINES};
use precedent_judge::Judge;
use precedent_learn::{ClauseTypeReader, LearnedModel};
use precedent_library::Library;
use precedent_models::Embedder;
use precedent_rank::{Pipeline, PipelineModels};

use crate::library_setup::{pipeline_models, RerankChoice};
use crate::{lazy_clause_type_reader, PipelineContext, Rankers, LEARNED};

/// Where the learned stage comes from: a model directory (else the defaults) and how many
/// hybrid candidates it reorders.
#[derive(Debug, Clone, Default)]
pub struct LearnedChoice<'a> {
    pub model_dir: Option<&'a Path>,
    pub learned_top: usize,
}

/// The error when the learned pipeline is asked for and no learned model is found.
fn no_learned_model() -> String {
    format!(
        "no learned model found: train one with `precedent train --out DIR` and pass --model-dir DIR (the repository ships {})",
        precedent_learn::SHIPPED_MODEL_DIR
    )
}

/// Loads the learned model of `dir`, else of the default directory.
pub fn load_model(dir: Option<&Path>) -> Result<(PathBuf, Arc<LearnedModel>)> {
    let dir = match dir {
        Some(d) => d.to_owned(),
        None => precedent_learn::default_model_dir().with_context(no_learned_model)?,
    };
    let model = LearnedModel::load(&dir)?;
    Ok((dir, Arc::new(model)))
}

/// The rankers for `named` (or the defaults), loaded once per process: choosing the default
/// pipeline, building it and checking `eval`'s overlap all ask, and each model's rating memory
/// is megabytes of JSON.
pub fn shared_rankers(named: Option<&Path>) -> Result<Rankers> {
    static LOADED: Mutex<Vec<(Option<PathBuf>, Rankers)>> = Mutex::new(Vec::new());
    let mut loaded = LOADED.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some((_, rankers)) = loaded.iter().find(|(dir, _)| dir.as_deref() == named) {
        return Ok(rankers.clone());
    }
    let rankers = Rankers::load(named).with_context(|| {
        format!(
            "loading the learned ranker {}",
            named.map(|d| d.display().to_string()).unwrap_or_default()
        )
    })?;
    loaded.push((named.map(Path::to_path_buf), rankers.clone()));
    Ok(rankers)
}

/// The learned ranker for `library` and whether it serves it by default: the one named in
/// `model_dir`, else as the engine chooses for every face ([`Rankers::for_library`]).
pub fn ranker_for(
    library: &Library,
    model_dir: Option<&Path>,
) -> Result<(Option<Arc<LearnedModel>>, bool)> {
    Ok(shared_rankers(model_dir)?.for_library(library))
}

/// The pipeline used when none is named, as the engine chooses it for `search`, `bench` and
/// `serve` alike ([`crate::default_pipeline`]): `learned` where a learned ranker serves the
/// library, else `hybrid+types` (the clause-type rule needs no ratings) with vectors, else
/// `bm25`.
pub fn default_ranking(library: &Library, model_dir: Option<&Path>) -> Result<&'static str> {
    let (ranker, serves) = ranker_for(library, model_dir)?;
    Ok(crate::default_pipeline(
        library.vectors_info().is_some(),
        ranker.is_some() && serves,
        true,
    ))
}

/// Builds a pipeline by name through the engine ([`crate::build`]), with the learned ranker
/// [`ranker_for`] chooses and `clause_types` reading the types a query asks for; a
/// cross-encoder in `models` reranks last. Returns the learned model in it, for the checks of
/// what it was trained on.
pub fn make_pipeline(
    name: &str,
    library: Arc<Library>,
    models: &PipelineModels,
    learned: &LearnedChoice<'_>,
    clause_types: Arc<dyn ClauseTypeReader>,
) -> Result<(Pipeline, Option<Arc<LearnedModel>>)> {
    let ranker = if name == LEARNED {
        let (ranker, _) = ranker_for(&library, learned.model_dir)?;
        Some(ranker.with_context(no_learned_model)?)
    } else {
        None
    };
    let context = PipelineContext {
        embedder: models.embedder.clone(),
        ranker: ranker.clone(),
        clause_types: Some(clause_types),
        learned_top: learned.learned_top,
        fusion_weights: models.fusion_weights,
        cross_encoder: models.cross_encoder.clone(),
        rerank_top: models.rerank_top,
        ..PipelineContext::new(library)
    };
    Ok((crate::build(name, &context)?, ranker))
}

/// Every pipeline a command can name: the engine's ([`crate::known_pipelines`]) and those that
/// end with an LLM judge.
pub fn command_pipelines() -> Vec<&'static str> {
    let mut names = crate::known_pipelines();
    names.extend(JUDGE_PIPELINES.iter().map(|(p, _)| *p));
    names
}

/// Whether pipeline `name` (judges included) embeds the query, so needs the library's vectors.
pub fn command_needs_embedder(name: &str) -> bool {
    judge_backend(name).is_some() || crate::needs_embedder(name)
}

/// What a command asks of its pipeline besides the name: the query model, the second stage,
/// the learned stage and the judge (read only by `+judge`/`+llm` pipelines).
pub struct PipelineOptions<'a> {
    /// Query model; by default the model that embedded the library.
    pub model: Option<&'a str>,
    pub rerank: RerankChoice<'a>,
    pub learned: LearnedChoice<'a>,
    pub judge: &'a JudgeSettings,
}

/// A built pipeline with what a command reads from it afterwards: the learned model in it (the
/// train/eval overlap check, explanations), its judge (the usage report), the query
/// embedder and the clause-type reader (explanations).
pub struct BuiltPipeline {
    pub pipeline: Pipeline,
    pub learned: Option<Arc<LearnedModel>>,
    pub judge: Option<Arc<dyn Judge>>,
    pub embedder: Option<Arc<Embedder>>,
    pub clause_types: Arc<dyn ClauseTypeReader>,
}

/// Loads the models pipeline `name` needs and builds it ([`make_pipeline`]);
/// `learned+judge`/`learned+llm` are the learned pipeline followed by the judge over its top
/// [`JudgeSettings::top`].
pub fn build_command_pipeline(
    name: &str,
    library: Arc<Library>,
    options: &PipelineOptions<'_>,
) -> Result<BuiltPipeline> {
    // Checked before any model loads, and against every name a command takes: the retrieval
    // crate's own error would list only its four base pipelines.
    if judge_backend(name).is_none() && !crate::is_known(name) {
        anyhow::bail!(
            "unknown pipeline {name:?}; known pipelines: {}",
            command_pipelines().join(", ")
        );
    }
    let models = pipeline_models(
        name,
        command_needs_embedder(name),
        &library,
        options.model,
        &options.rerank,
    )?;
    let embedder = models.embedder.clone();
    let clause_types: Arc<dyn ClauseTypeReader> = lazy_clause_type_reader(
        None,
        precedent_clause_types::cache::default_classifier_cache(),
    );
    let Some(backend) = judge_backend(name) else {
        let (pipeline, learned) = make_pipeline(
            name,
            library,
            &models,
            &options.learned,
            clause_types.clone(),
        )?;
        return Ok(BuiltPipeline {
            pipeline,
            learned,
            judge: None,
            embedder,
            clause_types,
        });
    };
    options.judge.check()?;
    let (pipeline, learned) = make_pipeline(
        BASE_PIPELINE,
        library.clone(),
        &models,
        &options.learned,
        clause_types.clone(),
    )?;
    let (pipeline, judge) = options.judge.then_judge(pipeline, library, backend)?;
    Ok(BuiltPipeline {
        pipeline,
        learned,
        judge: Some(judge),
        embedder,
        clause_types,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn judge_pipelines_are_known_and_need_the_bi_encoder() {
        assert!(command_pipelines().contains(&"learned+judge"));
        assert!(command_pipelines().contains(&"learned+llm"));
        assert!(command_pipelines().contains(&"hybrid+types"));
        assert!(command_needs_embedder("hybrid+types") && !command_needs_embedder("bm25"));
        assert!(command_needs_embedder("learned+llm"));
        assert_eq!(judge_backend("learned+judge"), Some("judge"));
        assert_eq!(judge_backend("learned"), None);
    }
}
