//! The pipeline registry: names, how each pipeline is built, and the default for a library.
//!
//! Grammar: a base pipeline of [`precedent_rank::PIPELINES`] (`bm25`, `dense`, `hybrid`,
//! `hybrid-norm`); `learned` (hybrid, then the learned ranker over its top candidates, then
//! its query rules); `BASE+types` (a base pipeline, then the CUAD clause-type rule). A
//! cross-encoder, when the context holds one, reranks last whatever the pipeline.

use std::sync::Arc;

use precedent_learn::{ClauseTypeReader, LearnedModel};
use precedent_library::Library;
use precedent_models::{CrossEncoder, Embedder};
use precedent_rank::{Pipeline, PipelineModels};

use crate::EngineError;

pub use precedent_learn::clause_types::HYBRID_WITH_TYPES;

/// The learned pipeline's name.
pub const LEARNED: &str = "learned";

/// Suffix of a base pipeline followed by the clause-type rule.
const TYPES_SUFFIX: &str = "+types";

/// Every pipeline name the engine builds, in a stable order for listings and error messages.
pub fn known_pipelines() -> Vec<&'static str> {
    let mut names = precedent_rank::PIPELINES.to_vec();
    names.push(LEARNED);
    names.push(HYBRID_WITH_TYPES);
    names
}

/// Whether `name` is a pipeline the engine builds (any base pipeline may take `+types`).
pub fn is_known(name: &str) -> bool {
    let base = name.strip_suffix(TYPES_SUFFIX).unwrap_or(name);
    name == LEARNED || precedent_rank::PIPELINES.contains(&base)
}

/// Whether the pipeline embeds the query (and so needs the library's bi-encoder).
pub fn needs_embedder(name: &str) -> bool {
    name == LEARNED
        || precedent_rank::needs_embedder(name.strip_suffix(TYPES_SUFFIX).unwrap_or(name))
}

/// What a pipeline is built from.
#[derive(Clone)]
pub struct PipelineContext {
    pub library: Arc<Library>,
    /// The library's bi-encoder, for dense retrieval and the learned ranker.
    pub embedder: Option<Arc<Embedder>>,
    /// The learned ranker, for `learned`.
    pub ranker: Option<Arc<LearnedModel>>,
    /// The CUAD clause-type reader, for `+types` and the learned ranker's clause-type rule.
    pub clause_types: Option<Arc<dyn ClauseTypeReader>>,
    /// How many hybrid candidates the learned ranker and the clause-type rule reorder.
    pub learned_top: usize,
    /// Fusion weights (bm25, dense) of hybrid pipelines; `None` for equal weights.
    pub fusion_weights: Option<(f32, f32)>,
    /// A cross-encoder that reranks the top `rerank_top` candidates last.
    pub cross_encoder: Option<Arc<CrossEncoder>>,
    pub rerank_top: usize,
}

impl PipelineContext {
    /// A context with the library alone (lexical pipelines); set the other fields as needed.
    pub fn new(library: Arc<Library>) -> PipelineContext {
        PipelineContext {
            library,
            embedder: None,
            ranker: None,
            clause_types: None,
            learned_top: precedent_learn::LEARNED_TOP,
            fusion_weights: None,
            cross_encoder: None,
            rerank_top: 50,
        }
    }
}

/// Builds the pipeline `name` (see the module's grammar) from `context`.
pub fn build(name: &str, context: &PipelineContext) -> Result<Pipeline, EngineError> {
    if !is_known(name) {
        return Err(precedent_rank::RankError::UnknownPipeline {
            name: name.to_owned(),
            known: known_pipelines().join(", "),
        }
        .into());
    }
    let library = context.library.clone();
    let plain = PipelineModels {
        embedder: context.embedder.clone(),
        fusion_weights: context.fusion_weights,
        ..PipelineModels::default()
    };
    let pipeline = if let Some(base) = name.strip_suffix(TYPES_SUFFIX) {
        let reader = context.clause_types.clone().ok_or_else(|| {
            EngineError::Unavailable(format!(
                "pipeline {name:?} needs the CUAD clause-type reader (a CUAD folder: --cuad DIR or PRECEDENT_CUAD_DIR)"
            ))
        })?;
        precedent_learn::clause_types::with_clause_types(
            precedent_rank::build_pipeline(base, library.clone(), &plain)?,
            library.clone(),
            reader,
            context.learned_top,
        )
    } else if name == LEARNED {
        let embedder = context.embedder.clone().ok_or_else(|| {
            EngineError::Unavailable("the learned pipeline needs the library's bi-encoder".into())
        })?;
        let model = context.ranker.clone().ok_or_else(|| {
            EngineError::Unavailable(
                "no learned ranker: train one with `precedent train --out DIR` (the repository ships models/acord-ranker)".into(),
            )
        })?;
        if model.manifest.embedder_model_id != embedder.model_id() {
            return Err(EngineError::Unavailable(format!(
                "the learned ranker was trained with the bi-encoder {}, but this library's vectors come from {}",
                model.manifest.embedder_model_id,
                embedder.model_id()
            )));
        }
        precedent_learn::learned_pipeline(
            library.clone(),
            embedder,
            model,
            context.learned_top.max(1),
            context.fusion_weights,
            context.clause_types.clone(),
        )?
    } else {
        precedent_rank::build_pipeline(name, library.clone(), &plain)?
    };
    Ok(match &context.cross_encoder {
        Some(cross) => pipeline.then(
            Box::new(precedent_rank::CrossEncoderReranker::new(
                library,
                cross.clone(),
            )),
            context.rerank_top.max(1),
        ),
        None => pipeline,
    })
}

/// The pipeline a library gets when none is named, for `search`, `eval`, `bench` and `serve`
/// alike: `learned` when a learned ranker serves the library (it was trained on the library's
/// clauses, or it is the contracts ranker, or it was named) and the library has vectors;
/// otherwise `hybrid+types` with vectors and a clause-type reader, `hybrid` with vectors alone,
/// and `bm25` without vectors.
pub fn default_pipeline(
    has_vectors: bool,
    ranker_serves: bool,
    clause_types: bool,
) -> &'static str {
    match (has_vectors, ranker_serves, clause_types) {
        (false, _, _) => "bm25",
        (true, true, _) => LEARNED,
        (true, false, true) => HYBRID_WITH_TYPES,
        (true, false, false) => precedent_rank::DEFAULT_PIPELINE,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_one_grammar() {
        for name in known_pipelines() {
            assert!(is_known(name), "{name}");
        }
        assert!(is_known("bm25+types") && is_known("dense+types"));
        assert!(!is_known("learned+types") && !is_known("bm26") && !is_known("+types"));
        assert!(needs_embedder("learned") && needs_embedder("hybrid+types"));
        assert!(!needs_embedder("bm25") && !needs_embedder("bm25+types"));
    }

    #[test]
    fn the_default_is_the_best_pipeline_the_library_can_run() {
        assert_eq!(default_pipeline(false, true, true), "bm25");
        assert_eq!(default_pipeline(true, true, true), "learned");
        assert_eq!(default_pipeline(true, true, false), "learned");
        assert_eq!(default_pipeline(true, false, true), "hybrid+types");
        assert_eq!(default_pipeline(true, false, false), "hybrid");
    }
}
