//! What the training ratings teach, kept so that new queries can use it.

use std::collections::{BTreeSet, HashMap, HashSet};

use precedent_formats::{Qrels, Query};
use precedent_library::Library;
use serde::{Deserialize, Serialize};

use crate::category::{CategoryClassifier, CuadTypeProfiles};
use crate::LearnError;

/// Inner folds of the cross-fitted category classifiers (see [`RatingMemory::cross_fit`]).
const CROSS_FIT_FOLDS: usize = 5;

/// A training query with its ratings resolved to library rows.
#[derive(Debug, Clone)]
pub struct RatedQuery {
    pub id: String,
    pub text: String,
    /// Which wording of the query `text` is (ACORD ships short, medium and long forms of each
    /// query under one id); empty when only one is given. Cross-validation keeps every wording
    /// of a query in the same fold, and the rating memory never lends a query the ratings of
    /// its own other wordings while training.
    pub wording: String,
    pub category: Option<String>,
    /// `(clause id, library row, label 0..=4)`, in clause-id order.
    pub ratings: Vec<(String, u32, i32)>,
}

impl RatedQuery {
    /// Joins queries with their ratings. Errors (naming the rating file) when the ratings are
    /// empty, rate a query the query file does not have, or rate no clause of the library; a
    /// few unknown clause ids are skipped and counted in the returned warning list.
    pub fn resolve(
        library: &Library,
        queries: &[Query],
        qrels: &Qrels,
    ) -> Result<(Vec<RatedQuery>, Vec<String>), LearnError> {
        let source = qrels
            .source()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| "ratings".into());
        if qrels.num_judgements() == 0 {
            return Err(LearnError::Invalid(format!(
                "{source}: no ratings (an empty rating file cannot train anything)"
            )));
        }
        let by_id: HashMap<&str, &Query> = queries.iter().map(|q| (q.id.as_str(), q)).collect();
        let mut warnings = Vec::new();
        let mut rated = Vec::new();
        let mut ids: Vec<&str> = qrels.query_ids().collect();
        ids.sort_unstable();
        for id in ids {
            let Some(query) = by_id.get(id) else {
                let at = qrels.location(id).unwrap_or_else(|| source.clone());
                return Err(LearnError::Invalid(format!(
                    "{at}: query {id:?} is rated but not in the query file"
                )));
            };
            let Some(judged) = qrels.judged(id) else {
                continue;
            };
            let mut ratings = Vec::with_capacity(judged.len());
            let mut unknown = 0usize;
            for (doc, &label) in judged {
                match library.store().row(doc) {
                    Some(row) => ratings.push((doc.clone(), row, label.clamp(0, 4))),
                    None => unknown += 1,
                }
            }
            if unknown > 0 {
                warnings.push(format!(
                    "{source}: {unknown} ratings of query {id:?} name clauses not in the library; skipped"
                ));
            }
            if ratings.is_empty() {
                continue;
            }
            ratings.sort_by(|a, b| a.0.cmp(&b.0));
            rated.push(RatedQuery {
                id: id.to_owned(),
                text: query.text.clone(),
                wording: String::new(),
                category: query.category.clone(),
                ratings,
            });
        }
        if rated.is_empty() {
            return Err(LearnError::Invalid(format!(
                "{source}: none of its ratings names a clause of the library"
            )));
        }
        Ok((rated, warnings))
    }
}

/// A training query as remembered in a model directory.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MemoryQuery {
    pub id: String,
    pub text: String,
    pub category: Option<String>,
    pub embedding: Vec<f32>,
    /// `(clause id, label 0..=4)`.
    pub ratings: Vec<(String, i32)>,
}

/// Training queries, their ratings and per-category clause centroids.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RatingMemory {
    pub dim: usize,
    /// Sorted category names; indexes into `centroids`.
    pub categories: Vec<String>,
    pub queries: Vec<MemoryQuery>,
    /// Unit-length mean embedding of the clauses rated two stars or more (label >= 1) by queries
    /// of each category: two stars means "same category, not responsive", so every rated-up
    /// clause is an example of its query's category.
    pub centroids: Vec<Vec<f32>>,
    /// Per-category logistic regressions over clause embeddings, fitted on every training query.
    pub classifier: CategoryClassifier,
    /// CUAD clause-type centroids (not learned from ratings), when CUAD data was available.
    pub cuad_types: Option<CuadTypeProfiles>,
    /// Classifiers fitted without an inner fold of the training queries, used for the features
    /// of those queries while training: a classifier that saw a query's own ratings would look
    /// better on that query than it ever is on a new one (for a category with a single query,
    /// perfect), and the ranker would learn to over-trust it. Not saved: serving uses
    /// `classifier`.
    #[serde(skip)]
    pub cross_fit: Vec<(HashSet<String>, CategoryClassifier)>,
}

impl RatingMemory {
    /// Fits the memory from rated queries and their embeddings (same order).
    pub fn fit(
        rated: &[RatedQuery],
        query_embeddings: &[Vec<f32>],
        library: &Library,
        cuad_types: Option<CuadTypeProfiles>,
    ) -> Result<RatingMemory, LearnError> {
        let vectors = crate::features::library_vectors(library, "rebuild it with vectors")?;
        let dim = vectors.dim();
        let categories: Vec<String> = rated
            .iter()
            .filter_map(|q| q.category.clone())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let mut members: Vec<BTreeSet<u32>> = vec![BTreeSet::new(); categories.len()];
        for q in rated {
            let Some(c) = q
                .category
                .as_ref()
                .and_then(|c| categories.binary_search(c).ok())
            else {
                continue;
            };
            for &(_, row, label) in &q.ratings {
                if label >= 1 {
                    members[c].insert(row);
                }
            }
        }
        let mut centroids = Vec::with_capacity(categories.len());
        for rows in &members {
            let mut sum = vec![0f32; dim];
            for &row in rows {
                if let Some(v) = vectors.vector(row) {
                    sum.iter_mut().zip(&v).for_each(|(s, x)| *s += x);
                }
            }
            normalize(&mut sum);
            centroids.push(sum);
        }
        let vector = |row: u32| vectors.vector(row);
        let all: Vec<&RatedQuery> = rated.iter().collect();
        let classifier = CategoryClassifier::fit(&categories, &all, dim, vector);
        // By query id, not entry: every wording of a query is held out of the same inner fold.
        let mut sorted: Vec<&str> = rated.iter().map(|q| q.id.as_str()).collect();
        sorted.sort_unstable();
        sorted.dedup();
        let cross_fit = (0..CROSS_FIT_FOLDS.min(rated.len()))
            .map(|fold| {
                let held: HashSet<String> = sorted
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| i % CROSS_FIT_FOLDS == fold)
                    .map(|(_, id)| id.to_string())
                    .collect();
                let kept: Vec<&RatedQuery> =
                    rated.iter().filter(|q| !held.contains(&q.id)).collect();
                let clf = CategoryClassifier::fit(&categories, &kept, dim, vector);
                (held, clf)
            })
            .collect();
        let mut memory = RatingMemory {
            dim,
            categories,
            queries: Vec::with_capacity(rated.len()),
            centroids,
            classifier,
            cuad_types,
            cross_fit,
        };
        memory.add_vote_entries(rated.iter().zip(query_embeddings));
        Ok(memory)
    }

    /// The category classifier to use for a query: the one fitted without it while it is a
    /// training query (`id` in the memory), the full one otherwise.
    pub fn classifier_for(&self, id: Option<&str>) -> &CategoryClassifier {
        id.and_then(|id| {
            self.cross_fit
                .iter()
                .find(|(held, _)| held.contains(id))
                .map(|(_, c)| c)
        })
        .unwrap_or(&self.classifier)
    }

    /// Adds rated queries to the vote only: each becomes one more memory entry that new queries
    /// are compared with (its ratings weighted by that similarity), while the category
    /// centroids and classifiers stay as fitted. For rewordings of queries the memory already
    /// holds, written by other people: a lawyer's request is more likely to sit near one of
    /// many phrasings of a rated query than near the few the trees learned from, and the
    /// rewordings add no rating the centroids and classifiers lack.
    pub fn add_vote_entries<'a>(
        &mut self,
        entries: impl IntoIterator<Item = (&'a RatedQuery, &'a Vec<f32>)>,
    ) {
        self.queries.extend(entries.into_iter().map(|(q, e)| {
            MemoryQuery {
                id: q.id.clone(),
                text: q.text.clone(),
                category: q.category.clone(),
                embedding: e.clone(),
                ratings: q
                    .ratings
                    .iter()
                    .map(|(id, _, l)| (id.clone(), *l))
                    .collect(),
            }
        }));
    }

    pub fn num_ratings(&self) -> usize {
        self.queries.iter().map(|q| q.ratings.len()).sum()
    }
}

pub(crate) fn normalize(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
}

pub(crate) fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}
