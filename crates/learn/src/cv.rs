//! Cross-validation by query: every fold refits the rating memory, the category centroids and
//! the ranker from its training queries only, then ranks the held-out queries' judged clauses
//! (ACORD's condensed protocol) and scores them with the trec_eval-exact metrics.
//!
//! Feature vectors are extracted once per fold and reused by every variant (the full model,
//! the ablations that blank one feature group, and single-feature baselines), so an ablation
//! study costs only extra tree fits.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use precedent_library::Library;
use precedent_metrics::{mean_by_group, MeanMetrics, QueryMetrics, Scored};
use rayon::prelude::*;
use serde::Serialize;

use crate::features::{library_vectors, FeatureExtractor, QueryInput, FEATURE_NAMES, NUM_FEATURES};
use crate::feedback::final_scores;
use crate::memory::{RatedQuery, RatingMemory};
use crate::model::{blank, Ranker, TrainOptions, TrainingData};
use crate::LearnError;

/// Named groups of features, for ablations ("what each feature buys").
pub const FEATURE_GROUPS: &[(&str, &[usize])] = &[
    ("bm25", &[0, 1, 2, 5, 6, 7]),
    ("jargon-expansion", &[2]),
    ("dense", &[3, 4, 5]),
    ("phrases+coverage", &[6, 7]),
    ("clause-length", &[8]),
    ("category-centroids", &[9, 10, 11]),
    ("category-classifier", &[21]),
    ("cuad-types", &[22, 23]),
    ("rating-memory", &[12, 13, 14, 15, 16, 17, 18, 19, 20]),
];

/// The feature columns of the named groups ([`FEATURE_GROUPS`]); an unknown name is an error
/// listing the known ones.
pub fn group_columns(groups: &[String]) -> Result<Vec<usize>, String> {
    let mut columns = Vec::new();
    for name in groups {
        let Some((_, cols)) = FEATURE_GROUPS.iter().find(|(g, _)| g == name) else {
            let known: Vec<&str> = FEATURE_GROUPS.iter().map(|(g, _)| *g).collect();
            return Err(format!(
                "unknown feature group {name:?}; known groups: {}",
                known.join(", ")
            ));
        };
        columns.extend_from_slice(cols);
    }
    columns.sort_unstable();
    columns.dedup();
    Ok(columns)
}

/// One way of scoring the held-out queries.
#[derive(Debug, Clone)]
pub enum Variant {
    /// The learned ranker with some feature columns blanked (empty: the full model), with or
    /// without the ranking's own feedback after the trees ([`crate::feedback`]).
    Learned {
        name: String,
        dropped: Vec<usize>,
        feedback: bool,
    },
    /// A single feature as the score (a stage alone, e.g. BM25 or RRF).
    Feature { name: String, column: usize },
}

impl Variant {
    pub fn name(&self) -> &str {
        match self {
            Variant::Learned { name, .. } | Variant::Feature { name, .. } => name,
        }
    }

    /// The full model, every group ablated, and the single-stage baselines.
    pub fn ablation_study() -> Vec<Variant> {
        let mut v = vec![
            Variant::Feature {
                name: "bm25 alone".into(),
                column: 0,
            },
            Variant::Feature {
                name: "dense alone".into(),
                column: 3,
            },
            Variant::Feature {
                name: "hybrid rrf alone".into(),
                column: 5,
            },
            Variant::Feature {
                name: "rating memory alone (neighbor mean label)".into(),
                column: 14,
            },
            Variant::full(),
            Variant::Learned {
                name: "learned without feedback".into(),
                dropped: Vec::new(),
                feedback: false,
            },
        ];
        for (group, cols) in FEATURE_GROUPS {
            v.push(Variant::Learned {
                name: format!("learned without {group}"),
                dropped: cols.to_vec(),
                feedback: true,
            });
        }
        v
    }

    pub fn full() -> Variant {
        Variant::Learned {
            name: "learned (all features)".into(),
            dropped: Vec::new(),
            feedback: true,
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct VariantResult {
    pub name: String,
    pub mean: MeanMetrics,
    pub by_category: BTreeMap<String, MeanMetrics>,
    pub per_query: BTreeMap<String, QueryMetrics>,
}

#[derive(Debug, Clone, Serialize)]
pub struct CvReport {
    pub folds: usize,
    pub seed: u64,
    pub queries: usize,
    pub features: Vec<String>,
    pub variants: Vec<VariantResult>,
    pub seconds: f64,
}

type Group = Vec<([f32; NUM_FEATURES], i32)>;

/// One fold's held-out scores: per variant, (query index, scores in rating order) pairs.
type FoldScores = Vec<Vec<(usize, Vec<f32>)>>;

/// Deterministic fold of each query: a seeded shuffle of the sorted ids, dealt round-robin.
pub fn assign_folds(ids: &[&str], folds: usize, seed: u64) -> HashMap<String, usize> {
    let mut sorted: Vec<&str> = ids.to_vec();
    sorted.sort_unstable();
    // SplitMix64: tiny, seeded, stable across platforms and crate versions.
    let mut state = seed;
    let mut next = || {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    for i in (1..sorted.len()).rev() {
        let j = (next() % (i as u64 + 1)) as usize;
        sorted.swap(i, j);
    }
    sorted
        .into_iter()
        .enumerate()
        .map(|(i, id)| (id.to_owned(), i % folds.max(1)))
        .collect()
}

/// Out-of-fold scores of each variant: `scores[v][query id]` holds, in the query's rating order,
/// the scores its judged clauses get from a ranker (memory, classifiers, trees) fitted on the
/// other folds only.
fn out_of_fold(
    library: &Arc<Library>,
    data: &TrainingData,
    folds: usize,
    options: &TrainOptions,
    variants: &[Variant],
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<HashMap<String, Vec<f32>>>, LearnError> {
    let (rated, embeddings, cuad_types) = (data.rated, data.embeddings, data.cuad_types);
    if folds < 2 || folds > rated.len() {
        return Err(LearnError::Invalid(format!(
            "cannot make {folds} folds of {} queries",
            rated.len()
        )));
    }
    let vectors = library_vectors(library, "the learned ranker needs them")?;
    let without = group_columns(&options.without).map_err(LearnError::Invalid)?;
    let ids: Vec<&str> = rated.iter().map(|q| q.id.as_str()).collect();
    let fold_of = assign_folds(&ids, folds, options.seed);
    let learned = variants
        .iter()
        .filter(|v| matches!(v, Variant::Learned { .. }))
        .count();
    progress(&format!(
        "{folds} folds in parallel: features, then {learned} learned variant(s) each"
    ));
    // Folds are independent (each refits everything from its own training queries): run on
    // every core, collected in fold order, so the result does not depend on scheduling.
    let per_fold: Vec<FoldScores> = (0..folds)
        .into_par_iter()
        .map(|fold| -> Result<FoldScores, LearnError> {
            let (train_idx, test_idx): (Vec<usize>, Vec<usize>) =
                (0..rated.len()).partition(|&i| fold_of[&rated[i].id] != fold);
            let train_rated: Vec<RatedQuery> =
                train_idx.iter().map(|&i| rated[i].clone()).collect();
            let train_emb: Vec<Vec<f32>> =
                train_idx.iter().map(|&i| embeddings[i].clone()).collect();
            let memory = Arc::new(RatingMemory::fit(
                &train_rated,
                &train_emb,
                library,
                cuad_types.cloned(),
            )?);
            let extractor = FeatureExtractor::new(library.clone(), memory)
                .with_clause_types(data.clause_types.cloned());
            // Queries are independent given the fold's memory: extracted on every core.
            let groups = |idx: &[usize]| -> Result<Vec<Group>, LearnError> {
                idx.par_iter()
                    .map(|&i| {
                        let q = &rated[i];
                        let rows: Vec<u32> = q.ratings.iter().map(|r| r.1).collect();
                        let input = QueryInput {
                            id: Some(q.id.clone()),
                            text: q.text.clone(),
                            embedding: embeddings[i].clone(),
                        };
                        let f = extractor.extract(&input, &rows)?;
                        Ok(f.into_iter().zip(q.ratings.iter().map(|r| r.2)).collect())
                    })
                    .collect()
            };
            let train_groups = groups(&train_idx)?;
            let test_groups = groups(&test_idx)?;
            let test_rows: Vec<Vec<u32>> = test_idx
                .iter()
                .map(|&i| rated[i].ratings.iter().map(|r| r.1).collect())
                .collect();
            let test_excluded = test_idx
                .par_iter()
                .zip(&test_rows)
                .map(|(&i, rows)| extractor.against_query(&rated[i].text, rows))
                .collect::<Result<Vec<_>, LearnError>>()?;
            // The variants' tree fits are independent and each runs on one core: fitted in
            // parallel, collected in variant order, so the result does not depend on scheduling.
            let predicted: Vec<Vec<Vec<f32>>> = variants
                .par_iter()
                .map(|variant| -> Result<Vec<Vec<f32>>, LearnError> {
                    Ok(match variant {
                        Variant::Feature { column, .. } => test_groups
                            .iter()
                            .map(|g| g.iter().map(|(f, _)| f[*column]).collect())
                            .collect(),
                        Variant::Learned {
                            dropped, feedback, ..
                        } => {
                            // The variant's own groups and those the model is trained without.
                            let mut dropped = dropped.clone();
                            dropped.extend_from_slice(&without);
                            let blank = |g: &Group| -> Group {
                                g.iter().map(|(f, l)| (blank(*f, &dropped), *l)).collect()
                            };
                            let train: Vec<Group> = train_groups.iter().map(blank).collect();
                            let ranker = Ranker::fit(&train, options)?;
                            test_groups
                                .iter()
                                .zip(&test_excluded)
                                .zip(&test_rows)
                                .map(|((g, excluded), rows)| {
                                    let f: Vec<[f32; NUM_FEATURES]> =
                                        blank(g).into_iter().map(|(f, _)| f).collect();
                                    final_scores(
                                        &ranker.predict(&f),
                                        excluded.as_deref(),
                                        rows,
                                        feedback.then_some(vectors),
                                    )
                                })
                                .collect()
                        }
                    })
                })
                .collect::<Result<_, LearnError>>()?;
            Ok(predicted
                .into_iter()
                .map(|p| test_idx.iter().copied().zip(p).collect())
                .collect())
        })
        .collect::<Result<_, LearnError>>()?;
    let mut scores: Vec<HashMap<String, Vec<f32>>> = vec![HashMap::new(); variants.len()];
    for fold in per_fold {
        for (v, predicted) in fold.into_iter().enumerate() {
            for (i, s) in predicted {
                scores[v].insert(rated[i].id.clone(), s);
            }
        }
    }
    Ok(scores)
}

/// The full learned ranker's out-of-fold scores, per query in `data.rated` order (each in its
/// rating order): what `train --cv` scores, for stages stacked on top of it (the LLM judge).
pub fn out_of_fold_scores(
    library: &Arc<Library>,
    data: &TrainingData,
    folds: usize,
    options: &TrainOptions,
    mut progress: impl FnMut(&str),
) -> Result<Vec<Vec<f32>>, LearnError> {
    let mut scores = out_of_fold(
        library,
        data,
        folds,
        options,
        &[Variant::full()],
        &mut progress,
    )?
    .pop()
    .unwrap_or_default();
    Ok(data
        .rated
        .iter()
        .map(|q| scores.remove(&q.id).unwrap_or_default())
        .collect())
}

/// Runs K-fold cross-validation by query for each variant.
pub fn cross_validate(
    library: &Arc<Library>,
    data: &TrainingData,
    folds: usize,
    options: &TrainOptions,
    variants: &[Variant],
    mut progress: impl FnMut(&str),
) -> Result<CvReport, LearnError> {
    let started = std::time::Instant::now();
    let rated = data.rated;
    let scores = out_of_fold(library, data, folds, options, variants, &mut progress)?;
    let mut results = Vec::with_capacity(variants.len());
    for (v, variant) in variants.iter().enumerate() {
        let mut per_query = BTreeMap::new();
        for q in rated {
            let Some(s) = scores[v].get(&q.id) else {
                continue;
            };
            let run: Vec<Scored> = q
                .ratings
                .iter()
                .zip(s)
                .map(|((doc, _, _), score)| Scored {
                    doc: doc.as_str(),
                    score: f64::from(*score),
                })
                .collect();
            let judged: HashMap<String, i32> =
                q.ratings.iter().map(|(d, _, l)| (d.clone(), *l)).collect();
            per_query.insert(q.id.clone(), QueryMetrics::compute(&run, &judged));
        }
        let category_of: HashMap<&str, &str> = rated
            .iter()
            .map(|q| (q.id.as_str(), q.category.as_deref().unwrap_or("(none)")))
            .collect();
        let by_category = mean_by_group(
            per_query
                .iter()
                .map(|(id, m)| (category_of.get(id.as_str()).copied().unwrap_or("(none)"), m)),
        );
        results.push(VariantResult {
            name: variant.name().to_owned(),
            mean: MeanMetrics::of(per_query.values()),
            by_category,
            per_query,
        });
    }
    Ok(CvReport {
        folds,
        seed: options.seed,
        queries: rated.len(),
        features: FEATURE_NAMES.iter().map(|s| s.to_string()).collect(),
        variants: results,
        seconds: started.elapsed().as_secs_f64(),
    })
}

impl CvReport {
    /// A plain-text table: one line per variant (percent), then per-category NDCG@5 of the first
    /// learned variant.
    pub fn table(&self) -> String {
        let pct = |x: Option<f64>| x.map_or("   -".to_string(), |v| format!("{:5.1}", 100.0 * v));
        let mut out = format!(
            "{}-fold cross-validation by query · {} queries · condensed protocol\n{:<48} {:>6} {:>6} {:>6} {:>6} {:>6}\n",
            self.folds, self.queries, "variant", "nDCG5", "nDCG10", "4*P5", "5*P5", "R@100"
        );
        for v in &self.variants {
            out.push_str(&format!(
                "{:<48} {:>6} {:>6} {:>6} {:>6} {:>6}\n",
                v.name,
                pct(Some(v.mean.ndcg5)),
                pct(Some(v.mean.ndcg10)),
                pct(v.mean.p5_4star),
                pct(v.mean.p5_5star),
                pct(v.mean.recall100),
            ));
        }
        if let Some(v) = self
            .variants
            .iter()
            .find(|v| v.name.starts_with("learned ("))
        {
            out.push_str(&format!("\nper category ({}):\n", v.name));
            for (c, m) in &v.by_category {
                out.push_str(&format!(
                    "  {:<40} n={:<3} nDCG5 {} nDCG10 {} 4*P5 {}\n",
                    c,
                    m.queries,
                    pct(Some(m.ndcg5)),
                    pct(Some(m.ndcg10)),
                    pct(m.p5_4star)
                ));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn feature_groups_name_their_columns_and_unknown_names_are_refused() {
        let memory = group_columns(&["rating-memory".into()]).expect("known group");
        assert_eq!(memory, (12..=20).collect::<Vec<usize>>());
        // Overlapping groups give each column once, in order.
        let lexical = group_columns(&["bm25".into(), "jargon-expansion".into()]).expect("known");
        assert_eq!(lexical, vec![0, 1, 2, 5, 6, 7]);
        assert!(group_columns(&[]).expect("none").is_empty());
        let err = group_columns(&["memory".into()]).expect_err("unknown");
        assert!(
            err.contains("\"memory\"") && err.contains("rating-memory"),
            "{err}"
        );
    }

    #[test]
    fn folds_are_seeded_and_balanced() {
        let ids: Vec<String> = (0..57).map(|i| format!("q{i}")).collect();
        let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
        let a = assign_folds(&refs, 5, 42);
        assert_eq!(a, assign_folds(&refs, 5, 42));
        assert_ne!(a, assign_folds(&refs, 5, 1));
        let mut sizes = [0usize; 5];
        a.values().for_each(|&f| sizes[f] += 1);
        assert_eq!(sizes, [12, 12, 11, 11, 11]);
    }
}
