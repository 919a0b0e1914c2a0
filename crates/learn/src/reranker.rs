//! The learned model as a pipeline stage.

use std::sync::Arc;

use precedent_library::Library;
use precedent_models::Embedder;
use precedent_rank::{rescore, Hit, RankError, Reranker};

use crate::features::{
    library_vectors, FeatureExtractor, QueryInput, SERVED_AGAINST_QUERY_DEMOTION,
};
use crate::feedback::{final_scores, Marks};
use crate::model::LearnedModel;
use crate::ClauseTypeReader;

/// Reorders candidates by the learned ranker's score, the query's constraints and the ranking's
/// own feedback ([`crate::feedback`]).
pub struct LearnedReranker {
    extractor: FeatureExtractor,
    model: Arc<LearnedModel>,
    embedder: Arc<Embedder>,
}

impl LearnedReranker {
    /// Refuses a model trained with another bi-encoder: its memory embeddings and centroids
    /// would not be comparable with this library's vectors.
    pub fn new(
        library: Arc<Library>,
        model: Arc<LearnedModel>,
        embedder: Arc<Embedder>,
        clause_types: Option<Arc<dyn ClauseTypeReader>>,
    ) -> Result<Self, RankError> {
        if model.manifest.embedder_model_id != embedder.model_id() {
            return Err(RankError::Unavailable(format!(
                "the learned model was trained with bi-encoder {:?} but the pipeline uses {:?}",
                model.manifest.embedder_model_id,
                embedder.model_id()
            )));
        }
        Ok(LearnedReranker {
            extractor: FeatureExtractor::new(library, model.memory.clone())
                .with_clause_types(clause_types),
            model,
            embedder,
        })
    }
}

impl Reranker for LearnedReranker {
    fn name(&self) -> &str {
        "learned"
    }

    fn rerank(&self, query: &str, candidates: Vec<Hit>) -> Result<Vec<Hit>, RankError> {
        let stage = |message: String| RankError::Stage {
            stage: "learned".into(),
            message,
        };
        let embedding = self
            .embedder
            .embed_query(query)
            .map_err(|e| stage(e.to_string()))?;
        let input = QueryInput {
            id: None,
            text: query.to_owned(),
            embedding,
        };
        let rows: Vec<u32> = candidates.iter().map(|h| h.row).collect();
        let features = self
            .extractor
            .extract(&input, &rows)
            .map_err(|e| stage(e.to_string()))?;
        let raw = self.model.predict(&features);
        let flagged = self
            .extractor
            .against_query(query, &rows, &self.model.manifest.without_rules)
            .map_err(|e| stage(e.to_string()))?;
        let vectors = library_vectors(self.extractor.library(), "the learned ranker needs them")
            .map_err(|e| stage(e.to_string()))?;
        let scores = final_scores(
            &raw,
            flagged.as_deref(),
            SERVED_AGAINST_QUERY_DEMOTION,
            &rows,
            Some(vectors),
            &Marks::default(),
        );
        Ok(rescore(candidates, scores, "learned"))
    }
}

/// How many of hybrid's first candidates the learned stage reorders by default (`search
/// --learned-top`): the CV's served variant ranks the same number.
pub const LEARNED_TOP: usize = 500;

/// The learned pipeline: the hybrid retriever's top `top` candidates reordered by the learned
/// ranker (candidates below `top` keep their hybrid order underneath). `clause_types` reads
/// clauses' CUAD types for queries that name one ([`crate::clause_types`]; typically a
/// [`crate::clause_types::LazyClauseTypes`]).
pub fn learned_pipeline(
    library: Arc<Library>,
    embedder: Arc<Embedder>,
    model: Arc<LearnedModel>,
    top: usize,
    fusion_weights: Option<(f32, f32)>,
    clause_types: Option<Arc<dyn ClauseTypeReader>>,
) -> Result<precedent_rank::Pipeline, RankError> {
    let models = precedent_rank::PipelineModels {
        embedder: Some(embedder.clone()),
        fusion_weights,
        ..Default::default()
    };
    let base = precedent_rank::build_pipeline("hybrid", library.clone(), &models)?;
    let reranker = LearnedReranker::new(library, model, embedder, clause_types)?;
    Ok(base.then(Box::new(reranker), top.max(1)))
}
