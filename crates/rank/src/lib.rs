//! Ranking clauses for a query: retrievers, fusion, rerankers, and pipelines selected by name.
//!
//! Like ripgrep's `grep-matcher`, the seams are traits: a new first-stage retriever implements
//! [`Retriever`], a new second stage implements [`Reranker`], and [`Pipeline`] strings them
//! together. Everything works on library *rows*; ids and texts are looked up at the edges.

pub mod dense;
pub mod fusion;
pub mod rerank;

use std::sync::Arc;

use precedent_library::{Library, LibraryError};
use precedent_models::{CrossEncoder, Embedder};
use serde::Serialize;

pub use dense::{check_same_model, embed_clauses, Dense, EmbedSettings};
pub use fusion::{fuse, FusionMethod};
pub use rerank::{candidate_texts, rescore, CrossEncoderReranker};

#[derive(Debug, thiserror::Error)]
pub enum RankError {
    #[error(transparent)]
    Library(#[from] LibraryError),
    #[error("unknown pipeline {name:?}; known pipelines: {known}")]
    UnknownPipeline { name: String, known: String },
    #[error("{0}")]
    Unavailable(String),
    #[error("the query is empty")]
    EmptyQuery,
    /// The query has no letter or digit ("?!..."): BM25 finds no term in it and a dense
    /// retriever would rank the library by the embedding of punctuation, so either way the
    /// hits would mean nothing.
    #[error("the query has no words (only punctuation or symbols); type the words to look for")]
    NoWords,
    #[error("{stage}: {message}")]
    Stage { stage: String, message: String },
}

/// Whether a query has a word to search for ([`precedent_text::has_words`]): the check every
/// pipeline makes ([`RankError::NoWords`]), and the CLI and the API with it.
pub use precedent_text::has_words;

/// What one stage said about a hit: used by `search --explain` to show who found what.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StageScore {
    pub stage: String,
    /// 1-based rank within that stage's list.
    pub rank: usize,
    pub score: f32,
}

/// A ranked clause.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Hit {
    pub row: u32,
    pub score: f32,
    /// Per-stage provenance, in pipeline order.
    pub stages: Vec<StageScore>,
}

/// A first-stage retriever: query text in, best `k` clauses out, best first.
pub trait Retriever: Send + Sync {
    fn name(&self) -> &str;
    fn retrieve(&self, query: &str, k: usize) -> Result<Vec<Hit>, RankError>;
}

/// A second stage: reorders (a prefix of) a candidate list.
pub trait Reranker: Send + Sync {
    fn name(&self) -> &str;
    fn rerank(&self, query: &str, candidates: Vec<Hit>) -> Result<Vec<Hit>, RankError>;
}

/// Lucene-style BM25 over the library's lexical index.
pub struct Bm25 {
    library: Arc<Library>,
}

impl Bm25 {
    pub fn new(library: Arc<Library>) -> Self {
        Bm25 { library }
    }
}

impl Retriever for Bm25 {
    fn name(&self) -> &str {
        "bm25"
    }

    fn retrieve(&self, query: &str, k: usize) -> Result<Vec<Hit>, RankError> {
        let ranked = self.library.lexical().search(query, k)?;
        Ok(ranked
            .into_iter()
            .enumerate()
            .map(|(i, (row, score))| Hit {
                row,
                score,
                stages: vec![StageScore {
                    stage: "bm25".into(),
                    rank: i + 1,
                    score,
                }],
            })
            .collect())
    }
}

/// A retriever followed by rerankers, each applied to the top `n` of the list before it.
pub struct Pipeline {
    name: String,
    retriever: Box<dyn Retriever>,
    rerankers: Vec<(Box<dyn Reranker>, usize)>,
}

impl Pipeline {
    pub fn new(name: impl Into<String>, retriever: Box<dyn Retriever>) -> Self {
        Pipeline {
            name: name.into(),
            retriever,
            rerankers: Vec::new(),
        }
    }

    /// Adds a reranker over the top `top_n` candidates; the rest keep their order below them.
    pub fn then(mut self, reranker: Box<dyn Reranker>, top_n: usize) -> Self {
        self.name = format!("{}+{}", self.name, reranker.name());
        self.rerankers.push((reranker, top_n));
        self
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Ranks clauses for `query`, returning at most `k`.
    pub fn search(&self, query: &str, k: usize) -> Result<Vec<Hit>, RankError> {
        if query.trim().is_empty() {
            return Err(RankError::EmptyQuery);
        }
        if !has_words(query) {
            return Err(RankError::NoWords);
        }
        let depth = self
            .rerankers
            .iter()
            .map(|(_, n)| *n)
            .max()
            .unwrap_or(0)
            .max(k);
        let mut hits = self.retriever.retrieve(query, depth)?;
        for (reranker, top_n) in &self.rerankers {
            let split = (*top_n).min(hits.len());
            let tail = hits.split_off(split);
            let mut head = reranker.rerank(query, hits)?;
            head.extend(shift_below(tail, head.last().map(|h| h.score)));
            hits = head;
        }
        hits.truncate(k);
        Ok(hits)
    }
}

/// Keeps a ranked list's scores non-increasing after a reranker replaced the head's scores with
/// its own scale: the tail is shifted (spacing kept) to sit below the head's last score. Anything
/// that re-sorts by score, trec_eval included, then sees the pipeline's order.
fn shift_below(mut tail: Vec<Hit>, floor: Option<f32>) -> Vec<Hit> {
    let (Some(floor), Some(top)) = (floor, tail.first().map(|h| h.score)) else {
        return tail;
    };
    if top < floor {
        return tail;
    }
    let offset = top - floor + 1.0;
    for hit in &mut tail {
        hit.score -= offset;
    }
    tail
}

/// Several retrievers whose lists are fused into one.
pub struct Hybrid {
    name: String,
    retrievers: Vec<Box<dyn Retriever>>,
    weights: Vec<f32>,
    method: FusionMethod,
    /// Each retriever contributes at least this many candidates, so fusion sees clauses that one
    /// retriever ranks low but the other likes.
    min_depth: usize,
}

impl Hybrid {
    pub fn new(
        name: impl Into<String>,
        retrievers: Vec<Box<dyn Retriever>>,
        weights: Vec<f32>,
        method: FusionMethod,
    ) -> Self {
        Hybrid {
            name: name.into(),
            retrievers,
            weights,
            method,
            min_depth: 200,
        }
    }
}

impl Retriever for Hybrid {
    fn name(&self) -> &str {
        &self.name
    }

    fn retrieve(&self, query: &str, k: usize) -> Result<Vec<Hit>, RankError> {
        let depth = k.max(self.min_depth);
        let lists = self
            .retrievers
            .iter()
            .map(|r| r.retrieve(query, depth))
            .collect::<Result<Vec<_>, _>>()?;
        let mut fused = fuse(&lists, &self.weights, &self.method);
        fused.truncate(k);
        Ok(fused)
    }
}

/// Names of the pipelines [`build_pipeline`] knows.
pub const PIPELINES: &[&str] = &["bm25", "dense", "hybrid", "hybrid-norm"];

/// The pipeline used when none is named: the best one that runs offline (measured on ACORD
/// train, see BENCHMARKS.md).
pub const DEFAULT_PIPELINE: &str = "hybrid";

/// Does this pipeline need clause vectors and a bi-encoder?
pub fn needs_embedder(name: &str) -> bool {
    matches!(name, "dense" | "hybrid" | "hybrid-norm")
}

/// What a pipeline may use besides the library.
#[derive(Clone, Default)]
pub struct PipelineModels {
    /// Bi-encoder for dense retrieval (required by dense and hybrid pipelines).
    pub embedder: Option<Arc<Embedder>>,
    /// Cross-encoder to rerank the top `rerank_top` candidates.
    pub cross_encoder: Option<Arc<CrossEncoder>>,
    pub rerank_top: usize,
    /// Fusion weights (bm25, dense) for hybrid pipelines; default equal.
    pub fusion_weights: Option<(f32, f32)>,
}

/// Builds a pipeline by name over an opened library.
pub fn build_pipeline(
    name: &str,
    library: Arc<Library>,
    models: &PipelineModels,
) -> Result<Pipeline, RankError> {
    let embedder = || {
        models.embedder.clone().ok_or_else(|| {
            RankError::Unavailable(format!("pipeline {name:?} needs a bi-encoder model"))
        })
    };
    let (w_bm25, w_dense) = models.fusion_weights.unwrap_or((1.0, 1.0));
    let pipeline = match name {
        "bm25" => Pipeline::new("bm25", Box::new(Bm25::new(library.clone()))),
        "dense" => Pipeline::new("dense", Box::new(Dense::new(library.clone(), embedder()?)?)),
        "hybrid" | "hybrid-norm" => {
            let method = if name == "hybrid" {
                FusionMethod::Rrf { k: 60.0 }
            } else {
                FusionMethod::Normalized
            };
            let retrievers: Vec<Box<dyn Retriever>> = vec![
                Box::new(Bm25::new(library.clone())),
                Box::new(Dense::new(library.clone(), embedder()?)?),
            ];
            Pipeline::new(
                name,
                Box::new(Hybrid::new(name, retrievers, vec![w_bm25, w_dense], method)),
            )
        }
        other => {
            return Err(RankError::UnknownPipeline {
                name: other.to_owned(),
                known: PIPELINES.join(", "),
            })
        }
    };
    Ok(match &models.cross_encoder {
        Some(model) => pipeline.then(
            Box::new(CrossEncoderReranker::new(library, model.clone())),
            models.rerank_top.max(1),
        ),
        None => pipeline,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use precedent_formats::CorpusDoc;
    use precedent_library::{BuildOptions, NoProgress};

    struct Reverse;
    impl Reranker for Reverse {
        fn name(&self) -> &str {
            "reverse"
        }
        fn rerank(&self, _q: &str, mut c: Vec<Hit>) -> Result<Vec<Hit>, RankError> {
            c.reverse();
            Ok(c)
        }
    }

    fn library(dir: &std::path::Path) -> Arc<Library> {
        let docs: Vec<CorpusDoc> = [
            ("a", "liability cap liability cap liability"),
            ("b", "liability cap"),
            ("c", "liability"),
            ("d", "governing law"),
        ]
        .iter()
        .map(|(id, text)| CorpusDoc::new(*id, *text))
        .collect();
        Arc::new(
            Library::build(dir, &docs, &BuildOptions::default(), None, &NoProgress).expect("build"),
        )
    }

    #[test]
    fn reranker_touches_only_the_top_n() {
        let dir = tempfile::tempdir().expect("tempdir");
        let lib = library(&dir.path().join("lib"));
        let base = build_pipeline("bm25", lib.clone(), &PipelineModels::default()).expect("bm25");
        let plain: Vec<u32> = base
            .search("liability cap", 10)
            .expect("search")
            .iter()
            .map(|h| h.row)
            .collect();
        assert_eq!(plain.len(), 3, "only matching clauses are returned");
        let reranked = build_pipeline("bm25", lib, &PipelineModels::default())
            .expect("bm25")
            .then(Box::new(Reverse), 2);
        assert_eq!(reranked.name(), "bm25+reverse");
        let rows: Vec<u32> = reranked
            .search("liability cap", 10)
            .expect("search")
            .iter()
            .map(|h| h.row)
            .collect();
        assert_eq!(rows, vec![plain[1], plain[0], plain[2]]);
    }

    #[test]
    fn unknown_pipeline_and_empty_query_are_errors() {
        let dir = tempfile::tempdir().expect("tempdir");
        let lib = library(&dir.path().join("lib"));
        let err = build_pipeline("magic", lib.clone(), &PipelineModels::default())
            .err()
            .expect("unknown");
        assert!(err.to_string().contains("bm25"));
        let p = build_pipeline("bm25", lib, &PipelineModels::default()).expect("bm25");
        assert!(matches!(p.search("  ", 5), Err(RankError::EmptyQuery)));
        assert!(p.search("the of", 5).expect("stop words only").is_empty());
        assert!(matches!(p.search("?!...", 5), Err(RankError::NoWords)));
        assert!(matches!(p.search("— … §§", 5), Err(RankError::NoWords)));
        assert!(has_words("§ 9.1") && has_words("Haftung") && !has_words("(*)"));
    }
}
