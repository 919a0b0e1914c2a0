//! The pipelines a served library offers, and the one it answers with by default.
//!
//! Why here: which pipelines a library can run (a dense stage needs vectors, `hybrid+types` the
//! clause-type reader, `learned` a ranker trained with the library's bi-encoder), their
//! cross-encoder variants, and the default among them are the engine's choice for every face.

use std::collections::BTreeMap;
use std::sync::Arc;

use precedent_models::CrossEncoder;
use precedent_rank::Pipeline;

use crate::{needs_embedder, EngineError, PipelineContext, HYBRID_WITH_TYPES, LEARNED};

/// A library's pipelines by name (`NAME+cross-encoder` variants when a cross-encoder is
/// loaded), and the name of its default one.
pub struct ServedPipelines {
    pub pipelines: BTreeMap<String, Arc<Pipeline>>,
    pub default_pipeline: String,
}

/// Every pipeline the engine builds that `context`'s library can run, each also followed by
/// `cross_encoder` when there is one; `ranker_is_default` says whether the context's ranker
/// serves the library by default ([`crate::Rankers::for_library`]). A ranker trained with
/// another bi-encoder than the library's vectors' is left out, saying so under `library`'s
/// name.
pub fn served_pipelines(
    context: &PipelineContext,
    ranker_is_default: bool,
    cross_encoder: Option<&Arc<CrossEncoder>>,
    library: &str,
) -> Result<ServedPipelines, EngineError> {
    let embedder = &context.embedder;
    let mut pipelines = BTreeMap::new();
    for name in crate::known_pipelines() {
        let missing_embedder = needs_embedder(name) && embedder.is_none();
        let missing_reader = name == HYBRID_WITH_TYPES && context.clause_types.is_none();
        if missing_embedder || missing_reader {
            continue;
        }
        if name == LEARNED {
            let (Some(model), Some(embedder)) = (&context.ranker, embedder) else {
                continue;
            };
            if model.manifest.embedder_model_id != embedder.model_id() {
                tracing::warn!(
                    "library {library}: no learned pipeline, its vectors are not from the bi-encoder the ranker was trained with ({})",
                    model.manifest.embedder_model_id
                );
                continue;
            }
        }
        pipelines.insert(name.to_owned(), Arc::new(crate::build(name, context)?));
        if let Some(cross) = cross_encoder {
            let reranked = PipelineContext {
                cross_encoder: Some(cross.clone()),
                ..context.clone()
            };
            pipelines.insert(
                format!("{name}+cross-encoder"),
                Arc::new(crate::build(name, &reranked)?),
            );
        }
    }
    let learned_fits = ranker_is_default && pipelines.contains_key(LEARNED);
    let default_pipeline = crate::default_pipeline(
        embedder.is_some(),
        learned_fits,
        pipelines.contains_key(HYBRID_WITH_TYPES),
    )
    .to_owned();
    Ok(ServedPipelines {
        pipelines,
        default_pipeline,
    })
}
