//! Cross-encoder reranking: the query and each candidate clause read together by a BERT
//! cross-encoder, which sees word interactions a bi-encoder cannot.

use std::sync::Arc;

use precedent_library::Library;
use precedent_models::CrossEncoder;

use crate::{Hit, RankError, Reranker, StageScore};

pub struct CrossEncoderReranker {
    library: Arc<Library>,
    model: Arc<CrossEncoder>,
}

impl CrossEncoderReranker {
    pub fn new(library: Arc<Library>, model: Arc<CrossEncoder>) -> Self {
        CrossEncoderReranker { library, model }
    }
}

impl Reranker for CrossEncoderReranker {
    fn name(&self) -> &str {
        "cross-encoder"
    }

    fn rerank(&self, query: &str, candidates: Vec<Hit>) -> Result<Vec<Hit>, RankError> {
        let texts = candidate_texts(&self.library, &candidates)?;
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let scores = self
            .model
            .score(query, &refs)
            .map_err(|e| RankError::Stage {
                stage: "cross-encoder".into(),
                message: e.to_string(),
            })?;
        Ok(rescore(candidates, scores, "cross-encoder"))
    }
}

/// The text a reranker reads for each candidate, in order: the clause as it was indexed
/// (heading and referenced sections included), the same text the first stages scored.
pub fn candidate_texts(library: &Library, candidates: &[Hit]) -> Result<Vec<String>, RankError> {
    candidates
        .iter()
        .map(|h| {
            library
                .store()
                .clause(h.row)
                .map(|c| precedent_library::indexed_text(&c))
                .map_err(RankError::from)
        })
        .collect()
}

/// Gives each candidate its new score (same order as `candidates`), sorts best first (ties by
/// row) and records the stage's rank and score on every hit: the common tail of every reranker.
pub fn rescore(candidates: Vec<Hit>, scores: Vec<f32>, stage: &str) -> Vec<Hit> {
    let mut hits: Vec<Hit> = candidates
        .into_iter()
        .zip(scores)
        .map(|(mut hit, score)| {
            hit.score = score;
            hit
        })
        .collect();
    hits.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.row.cmp(&b.row)));
    for (i, hit) in hits.iter_mut().enumerate() {
        hit.stages.push(StageScore {
            stage: stage.into(),
            rank: i + 1,
            score: hit.score,
        });
    }
    hits
}
