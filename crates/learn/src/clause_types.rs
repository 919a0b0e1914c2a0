//! Which CUAD clause types a clause is of, for queries that name a clause type.
//!
//! A query that names a CUAD clause type ("Change Of Control", "Rofr/Rofo/Rofn", "Audit Rights")
//! asks for clauses of that type, and a clause of another type that shares its words (an
//! assignment clause that mentions a change of control, an IP licence that grants a first
//! refusal) is the two-star answer. For a type that no rated query covers the rating memory
//! cannot tell; a single-clause classifier trained on CUAD's 398 annotated contracts can, and it has never seen an ACORD rating, so using it leaks
//! nothing into the cross-validation. Clauses it reads as none of the named types get the same
//! demotion as the other query constraints ([`crate::features::FeatureExtractor::against_query`]).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use precedent_clause_types::clause_classifier::ClauseClassifier;
use precedent_library::Library;
use precedent_rank::{rescore, Hit, RankError, Reranker};

use rayon::prelude::*;

use crate::features::{demote_against_query, row_slot, SERVED_AGAINST_QUERY_DEMOTION};
use crate::LearnError;

/// The CUAD clause types of a clause text, as a bit set over [`precedent_cuad::CATEGORIES`];
/// `None` when the reader cannot tell (its model could not be loaded), so that no clause is
/// held against the query on that account.
pub trait ClauseTypeReader: Send + Sync + std::fmt::Debug {
    fn clause_types(&self, text: &str) -> Option<u64>;

    /// Whether the reader's model is there yet, for a server's health report; a reader that
    /// holds its model is always ready.
    fn state(&self) -> ReaderState {
        ReaderState::Ready
    }
}

/// Where a reader's model is ([`ClauseTypeReader::state`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReaderState {
    /// No query has named a clause type yet (and no preload asked for the model).
    NotLoaded,
    /// Loading, or training for the first time.
    Loading,
    Ready,
    /// The load failed, for this reason; queries naming a type rank without the rule.
    Failed(String),
}

/// The classifier's logit above which a clause is read as of a type.
///
/// Why not zero, the balanced decision point: a clause of another type that shares a type's
/// vocabulary sits just above it (indemnities read as Covenant Not to Sue at 0.16-0.35, from
/// "claims, suits, actions"), and those near-misses then escape the demotion and fill the first
/// page of exactly the queries the rule is for. On ACORD's training ratings of the 24 queries
/// naming a type (`cargo test -p precedent-learn --test clause_types`), raising the threshold
/// from 0 to 0.5 keeps 220 of the 232 clauses rated 3-5 stars read as the named type (225 at 0,
/// 218 at 1.0) and reads 99 of the 21,165 one-star clauses as it (151 at 0, 57 at 1.0).
/// In 5-fold CV over three fold seeds the rule raised NDCG@5 at every seed, and 1.0 scored the
/// same as 0.5 (docs/experiments/ranking.md, "Query rules"). The tie is broken on the same
/// training ratings: 0.5 demotes fewer of the clauses rated 3-5 stars (12 of 232, against 14 at 1.0), and
/// a demoted good clause costs a lawyer more than a one-star clause left in place.
pub const TYPE_LOGIT_THRESHOLD: f32 = 0.5;

/// A type is read when the classifier's logit exceeds [`TYPE_LOGIT_THRESHOLD`]. The classifier
/// meant here is the one trained also on the contracts' unannotated sentences
/// ([`precedent_clause_types::clause_classifier::ClassifierOptions::for_second_stage`]): it has seen
/// boilerplate as "no type", so its logits weigh a type against background, not against other
/// types.
impl ClauseTypeReader for ClauseClassifier {
    fn clause_types(&self, text: &str) -> Option<u64> {
        Some(
            self.logits(text)
                .iter()
                .enumerate()
                .filter(|(_, &logit)| logit > TYPE_LOGIT_THRESHOLD)
                .fold(0u64, |bits, (k, _)| bits | (1 << k)),
        )
    }
}

/// The CUAD types a query asks for, as a bit set over [`precedent_cuad::CATEGORIES`]: the types
/// it names ([`precedent_cuad::named_in_query`]) or, when it names none, the types `reader` reads
/// in the query's own text. Lawyers describe a type as often as they name it ("a clause that
/// restricts a party's ability to compete" is a non-compete), and the reader that reads the
/// clauses reads the description with the same threshold, so query and clauses are compared on
/// one scale. A name wins over a reading: "Non-Compete" is unambiguous, a description may also
/// read as a neighbouring type.
pub fn types_asked_for(query: &str, reader: &dyn ClauseTypeReader) -> u64 {
    let named = precedent_cuad::named_in_query(query);
    if named != 0 {
        return named;
    }
    reader.clause_types(query).unwrap_or(0)
}

/// The loader of a reader's model, run once.
pub type ReaderLoader = Box<dyn Fn() -> Result<Arc<dyn ClauseTypeReader>, String> + Send + Sync>;

/// A reader whose model is loaded on the first query that names a clause type: the classifier
/// is 44 MB (and about a minute to train when not cached), which most searches never need. A
/// failed load is reported once and leaves the reader answering `None`.
pub struct LazyClauseTypes {
    loaded: OnceLock<Result<Arc<dyn ClauseTypeReader>, String>>,
    load: ReaderLoader,
    /// Whether a load has begun ([`ClauseTypeReader::state`] tells loading from not loaded).
    started: AtomicBool,
}

impl LazyClauseTypes {
    pub fn new(load: ReaderLoader) -> Self {
        LazyClauseTypes {
            loaded: OnceLock::new(),
            load,
            started: AtomicBool::new(false),
        }
    }
}

impl std::fmt::Debug for LazyClauseTypes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LazyClauseTypes")
            .field("state", &self.state())
            .finish()
    }
}

impl LazyClauseTypes {
    /// Loads the model now (on the first call), rather than on the first query naming a clause
    /// type (`serve --preload`); whether it is available.
    pub fn load(&self) -> bool {
        self.reader().is_some()
    }

    fn reader(&self) -> Option<&Arc<dyn ClauseTypeReader>> {
        self.loaded
            .get_or_init(|| {
                self.started.store(true, Ordering::Release);
                (self.load)().inspect_err(|e| {
                    tracing::warn!(
                        "clause types unavailable, queries naming one rank without: {e}"
                    );
                })
            })
            .as_ref()
            .ok()
    }
}

impl ClauseTypeReader for LazyClauseTypes {
    fn clause_types(&self, text: &str) -> Option<u64> {
        self.reader()?.clause_types(text)
    }

    fn state(&self) -> ReaderState {
        match self.loaded.get() {
            Some(Ok(_)) => ReaderState::Ready,
            Some(Err(e)) => ReaderState::Failed(e.clone()),
            None if self.started.load(Ordering::Acquire) => ReaderState::Loading,
            None => ReaderState::NotLoaded,
        }
    }
}

/// The CUAD types of a library's clauses as a reader reads them, each read once (reading one
/// costs ~2 ms: character n-grams of a long clause) and kept for every later query.
pub struct LibraryClauseTypes {
    library: Arc<Library>,
    reader: Arc<dyn ClauseTypeReader>,
    rows: Vec<OnceLock<Option<u64>>>,
}

impl LibraryClauseTypes {
    pub fn new(library: Arc<Library>, reader: Arc<dyn ClauseTypeReader>) -> Self {
        let rows = (0..library.len()).map(|_| OnceLock::new()).collect();
        LibraryClauseTypes {
            library,
            reader,
            rows,
        }
    }

    /// The CUAD types of the clause at `row`; `None` when the reader cannot tell.
    fn of_row(&self, row: u32) -> Result<Option<u64>, LearnError> {
        let slot = row_slot(&self.rows, row)?;
        if let Some(types) = slot.get() {
            return Ok(*types);
        }
        let clause = self.library.store().clause(row)?;
        let types = self
            .reader
            .clause_types(&precedent_library::indexed_text(&clause));
        Ok(*slot.get_or_init(|| types))
    }

    /// The CUAD types `query` asks for ([`types_asked_for`]) as this reader reads them.
    pub fn asked_for(&self, query: &str) -> u64 {
        types_asked_for(query, &*self.reader)
    }

    /// For each of `rows`, whether it goes against a query asking for the types in `named` (a bit
    /// set; see [`types_asked_for`]): the reader reads it as none of them. The
    /// clauses not read yet are read on all cores.
    pub fn against(&self, rows: &[u32], named: u64) -> Result<Vec<bool>, LearnError> {
        rows.par_iter()
            .map(|&row| Ok(self.of_row(row)?.is_some_and(|types| types & named == 0)))
            .collect()
    }
}

/// Any pipeline's candidates reordered by the same clause-type rule as the learned ranker applies
/// after its trees: for a query naming CUAD clause types, clauses read as none of them move down
/// past the next [`SERVED_AGAINST_QUERY_DEMOTION`] clauses that are. The count is the learned
/// stage's served one because this stage, too, only ever ranks a served list, where few
/// candidates are the kind a rating would judge (docs/experiments/ranking.md, "The clause-type
/// rule of `hybrid+types`"). It needs no ratings, so it serves libraries the learned ranker does
/// not fit (contracts a firm ingested).
pub struct ClauseTypeStage {
    types: LibraryClauseTypes,
}

impl ClauseTypeStage {
    pub fn new(library: Arc<Library>, reader: Arc<dyn ClauseTypeReader>) -> Self {
        ClauseTypeStage {
            types: LibraryClauseTypes::new(library, reader),
        }
    }
}

/// The name of the hybrid pipeline followed by the clause-type rule: the default of `search` and
/// `serve` on libraries the learned ranker does not fit (on ACORD, without any learning, it
/// ranks better than hybrid on both the train and the valid queries: BENCHMARKS.md).
pub const HYBRID_WITH_TYPES: &str = "hybrid+types";

/// `base` followed by the clause-type rule over its top `depth` candidates (the CLI's
/// `NAME+types` pipelines and the server's `hybrid+types`).
pub fn with_clause_types(
    base: precedent_rank::Pipeline,
    library: Arc<Library>,
    reader: Arc<dyn ClauseTypeReader>,
    depth: usize,
) -> precedent_rank::Pipeline {
    base.then(
        Box::new(ClauseTypeStage::new(library, reader)),
        depth.max(1),
    )
}

impl Reranker for ClauseTypeStage {
    fn name(&self) -> &str {
        "clause-types"
    }

    fn rerank(&self, query: &str, candidates: Vec<Hit>) -> Result<Vec<Hit>, RankError> {
        let named = self.types.asked_for(query);
        if named == 0 {
            return Ok(candidates);
        }
        let rows: Vec<u32> = candidates.iter().map(|h| h.row).collect();
        let flagged = self
            .types
            .against(&rows, named)
            .map_err(|e| RankError::Stage {
                stage: "clause-types".into(),
                message: e.to_string(),
            })?;
        let mut scores: Vec<f32> = candidates.iter().map(|h| h.score).collect();
        demote_against_query(&mut scores, &flagged, SERVED_AGAINST_QUERY_DEMOTION);
        Ok(rescore(candidates, scores, "clause-types"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    #[derive(Debug)]
    struct Fixed(u64);
    impl ClauseTypeReader for Fixed {
        fn clause_types(&self, _: &str) -> Option<u64> {
            Some(self.0)
        }
    }

    #[test]
    fn lazy_reader_loads_once_and_survives_a_failed_load() {
        let loads = Arc::new(AtomicUsize::new(0));
        let counted = loads.clone();
        let lazy = LazyClauseTypes::new(Box::new(move || {
            counted.fetch_add(1, Ordering::SeqCst);
            Ok(Arc::new(Fixed(0b101)) as Arc<dyn ClauseTypeReader>)
        }));
        assert_eq!(lazy.state(), ReaderState::NotLoaded);
        assert_eq!(lazy.clause_types("a"), Some(0b101));
        assert_eq!(lazy.clause_types("b"), Some(0b101));
        assert_eq!(loads.load(Ordering::SeqCst), 1);
        assert_eq!(lazy.state(), ReaderState::Ready);
        let failing = LazyClauseTypes::new(Box::new(|| Err("no CUAD folder".into())));
        assert_eq!(failing.clause_types("a"), None);
        assert_eq!(
            failing.state(),
            ReaderState::Failed("no CUAD folder".into())
        );
        // A reader holding its model is ready.
        assert_eq!(Fixed(0).state(), ReaderState::Ready);
    }
}
