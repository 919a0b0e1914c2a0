//! Which pipeline, and which learned ranker in it, a command ranks with: the choice `search`,
//! `eval` and `bench` make from a library and an optional `--model-dir`.
//!
//! Why here: the default pipeline of a library and the ranker that serves it are the engine's
//! decisions ([`crate::default_pipeline`], [`Rankers::for_library`]); a face that chose for
//! itself would rank the same query differently from the API.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use anyhow::{Context, Result};
use precedent_learn::LearnedModel;
use precedent_library::Library;
use precedent_rank::{Pipeline, PipelineModels};

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
/// [`ranker_for`] chooses; a cross-encoder in `models` reranks last. Returns the learned model
/// in it, for the checks of what it was trained on.
pub fn make_pipeline(
    name: &str,
    library: Arc<Library>,
    models: &PipelineModels,
    learned: &LearnedChoice<'_>,
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
        clause_types: Some(lazy_clause_type_reader(
            None,
            precedent_clause_types::cache::default_classifier_cache(),
        )),
        learned_top: learned.learned_top,
        fusion_weights: models.fusion_weights,
        cross_encoder: models.cross_encoder.clone(),
        rerank_top: models.rerank_top,
        ..PipelineContext::new(library)
    };
    Ok((crate::build(name, &context)?, ranker))
}
