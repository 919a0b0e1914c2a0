//! Cross-validation by query: every fold refits the rating memory, the category centroids and
//! the ranker from its training queries only, then ranks the held-out queries' judged clauses
//! (ACORD's condensed protocol) and scores them with the trec_eval-exact metrics.
//!
//! Feature vectors are extracted once per fold and reused by every variant (the full model,
//! the ablations that blank one feature group or switch query rules off, and single-feature
//! baselines), so an ablation study costs only extra tree fits, and none for a rule.
//!
//! Queries may come in several wordings (ACORD's short, medium and long forms share ids and
//! ratings). Folds are drawn by query id, so every wording of a held-out query is held out
//! together; training uses the training queries' wordings named in
//! [`TrainOptions::train_wordings`] (all by default), and each wording of the held-out queries is
//! scored on its own. The headline is the mean over wordings.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use precedent_library::Library;
use precedent_metrics::{mean_by_group, MeanMetrics, QueryMetrics, Scored};
use rayon::prelude::*;
use serde::Serialize;

use crate::features::{
    check_rule_names, combine_rule_flags, labelled_group, library_vectors, query_input,
    FeatureExtractor, Group, AGAINST_QUERY_DEMOTION, FEATURE_NAMES, NUM_FEATURES, QUERY_RULES,
    SERVED_AGAINST_QUERY_DEMOTION,
};
use crate::feedback::{final_scores, Marks};
use crate::memory::{RatedQuery, RatingMemory};
use crate::model::{blank, Ranker, TrainOptions, TrainingData};
use crate::reranker::LEARNED_TOP;
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
    // The two scores whose scale follows the query's length and wording (a BM25 sum grows with
    // the query's terms; a cosine's level with how the query is phrased); their query-relative
    // forms (bm25_rel_top, dense_gap_top, rrf) keep the same order within a query.
    ("raw-scores", &[0, 3]),
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
        /// Query rules switched off ([`QUERY_RULES`]), besides the options' `without_rules`.
        rules_off: Vec<String>,
    },
    /// A single feature as the score (a stage alone, e.g. BM25 or RRF).
    Feature { name: String, column: usize },
    /// The full model with the query rules that an inner cross-validation over each outer
    /// fold's training queries switched off ([`cross_validate_nested`]), reading the inner
    /// report's `chosen_on` line, and ranked as `ranked_as` says (the judged clauses alone, or
    /// the served list as [`Variant::Served`]).
    NestedRules {
        name: String,
        chosen_on: RuleLine,
        ranked_as: RuleLine,
    },
    /// The full model, then one round of a lawyer's marks on its first [`MARKED_PAGE`] clauses,
    /// simulated from the ratings ([`MarkPolicy`]), scored on the clauses the lawyer has not
    /// yet seen (residual collection: the first page leaves the ranking and the judgements).
    Marked { name: String, policy: MarkPolicy },
    /// The full model as the pipeline serves it: over hybrid's first [`LEARNED_TOP`] clauses of
    /// the library, not over the judged clauses alone, with the served demotion; judged clauses
    /// past them follow in hybrid's order. Then condensed to the judged clauses as any variant.
    /// The feedback exemplar and the demotion depend on the list they are given, so the other
    /// variants measure a list the product never ranks. `rules_off` switches query rules off
    /// ([`QUERY_RULES`]) besides the options' `without_rules`: the rule ablation as served.
    Served {
        name: String,
        rules_off: Vec<String>,
    },
}

/// Which ranking of the held-out queries a rule protocol reads.
///
/// Why both: the rules demote a flagged clause by a count of places, and a place among the
/// judged clauses is not a place in the list the pipeline serves (hybrid's first
/// [`LEARNED_TOP`], of which only a few are judged), so a rule's worth on one line need not be
/// its worth on the other. The served line is what `eval` and the held-out test compute.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuleLine {
    /// The judged clauses of each query ranked alone (the condensed protocol's candidates).
    Judged,
    /// The pipeline's served list, condensed to the judged clauses afterwards.
    Served,
}

impl RuleLine {
    /// The first word(s) of the rule ablation's line names on this line.
    fn prefix(self) -> &'static str {
        match self {
            RuleLine::Judged => "learned",
            RuleLine::Served => "as served",
        }
    }

    /// The name of the line with every rule on.
    pub fn full_name(self) -> String {
        match self {
            RuleLine::Judged => Variant::full().name().to_string(),
            RuleLine::Served => Variant::served().name().to_string(),
        }
    }

    /// The name of the line without `rule`.
    pub fn without_name(self, rule: &str) -> String {
        format!("{} without rule {rule}", self.prefix())
    }
}

/// The rule ablation's `(name, rules switched off)` pairs: every rule, then each rule in turn,
/// named after the line they ablate ("learned without rule cap", "as served without any query
/// rule").
fn rules_left_out(line: RuleLine) -> impl Iterator<Item = (String, Vec<String>)> {
    let every = (
        format!("{} without any query rule", line.prefix()),
        QUERY_RULES.iter().map(|r| r.to_string()).collect(),
    );
    std::iter::once(every).chain(
        QUERY_RULES
            .iter()
            .map(move |rule| (line.without_name(rule), vec![rule.to_string()])),
    )
}

/// How many clauses the simulated lawyer reads before marking: the first page a search shows
/// in the web page's compact view, and the depth of the headline metric.
pub const MARKED_PAGE: usize = 5;

/// Which clauses of the first page the simulated lawyer marks. A clause rated 4 or 5 stars is
/// wanted, 1 or 2 stars not; 3 stars ("same category, not responsive") is left unmarked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MarkPolicy {
    /// No marks: the full model's own ranking after its first page (the baseline).
    None,
    /// "More like this" on the wanted clauses only.
    Liked,
    /// Wanted and not-wanted clauses both marked.
    LikedAndUnliked,
}

impl MarkPolicy {
    /// The marks a lawyer who reads `page` (candidate indices, best first) would give, from
    /// the candidates' `labels` (0..=4) and library `rows`.
    fn marks(self, page: &[usize], labels: &[i32], rows: &[u32]) -> Marks {
        let pick = |wanted: fn(i32) -> bool| -> Vec<u32> {
            page.iter()
                .filter(|&&i| labels.get(i).copied().is_some_and(wanted))
                .filter_map(|&i| rows.get(i).copied())
                .collect()
        };
        match self {
            MarkPolicy::None => Marks::default(),
            MarkPolicy::Liked => Marks {
                liked: pick(|l| l >= 3),
                unliked: Vec::new(),
            },
            MarkPolicy::LikedAndUnliked => Marks {
                liked: pick(|l| l >= 3),
                unliked: pick(|l| l <= 1),
            },
        }
    }
}

impl Variant {
    pub fn name(&self) -> &str {
        match self {
            Variant::Learned { name, .. }
            | Variant::Feature { name, .. }
            | Variant::NestedRules { name, .. }
            | Variant::Marked { name, .. }
            | Variant::Served { name, .. } => name,
        }
    }

    /// The full model's first page left out, then scored without marks, with "more like
    /// these", and with both kinds of marks (see [`Variant::Marked`]).
    pub fn marks_study() -> Vec<Variant> {
        [
            ("learned, after the first page (no marks)", MarkPolicy::None),
            (
                "learned + liked marks, after the first page",
                MarkPolicy::Liked,
            ),
            (
                "learned + liked and unliked marks, after the first page",
                MarkPolicy::LikedAndUnliked,
            ),
        ]
        .into_iter()
        .map(|(name, policy)| Variant::Marked {
            name: name.into(),
            policy,
        })
        .collect()
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
                rules_off: Vec::new(),
            },
        ];
        for (group, cols) in FEATURE_GROUPS {
            v.push(Variant::Learned {
                name: format!("learned without {group}"),
                dropped: cols.to_vec(),
                feedback: true,
                rules_off: Vec::new(),
            });
        }
        v.extend(Variant::rule_ablation());
        v
    }

    /// The full model without any query rule, then without each rule in turn.
    pub fn rule_ablation() -> Vec<Variant> {
        rules_left_out(RuleLine::Judged)
            .map(|(name, rules_off)| Variant::Learned {
                name,
                dropped: Vec::new(),
                feedback: true,
                rules_off,
            })
            .collect()
    }

    /// The full model ranked as served ([`Variant::Served`]).
    pub fn served() -> Variant {
        Variant::Served {
            name: format!("learned as served (hybrid's first {LEARNED_TOP})"),
            rules_off: Vec::new(),
        }
    }

    /// The rule ablation of [`Variant::rule_ablation`] on the served line: the rules act on the
    /// list the pipeline ranks, where their demotion is counted in served places, so a rule's
    /// worth there need not be its worth among judged clauses.
    pub fn served_rule_ablation() -> Vec<Variant> {
        rules_left_out(RuleLine::Served)
            .map(|(name, rules_off)| Variant::Served { name, rules_off })
            .collect()
    }

    /// Which list the variant ranks: the judged clauses alone, or the served list (`None` for
    /// a single feature, which ranks the judged clauses by its own column).
    pub fn ranked_as(&self) -> Option<RuleLine> {
        match self {
            Variant::Feature { .. } => None,
            Variant::Learned { .. } | Variant::Marked { .. } => Some(RuleLine::Judged),
            Variant::Served { .. } => Some(RuleLine::Served),
            Variant::NestedRules { ranked_as, .. } => Some(*ranked_as),
        }
    }

    pub fn full() -> Variant {
        Variant::Learned {
            name: "learned (all features)".into(),
            dropped: Vec::new(),
            feedback: true,
            rules_off: Vec::new(),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct VariantResult {
    pub name: String,
    /// The mean over wordings of each wording's mean over queries (with one wording, that
    /// wording's mean).
    pub mean: MeanMetrics,
    /// Per wording (its name; empty when queries came in one unnamed wording).
    pub by_wording: BTreeMap<String, WordingResult>,
}

/// One wording's figures of a variant.
#[derive(Debug, Clone, Serialize)]
pub struct WordingResult {
    pub mean: MeanMetrics,
    pub by_category: BTreeMap<String, MeanMetrics>,
    pub per_query: BTreeMap<String, QueryMetrics>,
}

#[derive(Debug, Clone, Serialize)]
pub struct CvReport {
    pub folds: usize,
    pub seed: u64,
    /// Distinct query ids.
    pub queries: usize,
    /// The wordings scored, in order of first appearance.
    pub wordings: Vec<String>,
    /// The wordings the training folds learned from (empty: all).
    pub train_wordings: Vec<String>,
    /// The wordings that joined the folds' memory vote only (never trained on).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub memory_wordings: Vec<String>,
    pub features: Vec<String>,
    /// Query rules the ranker is trained and served without.
    pub without_rules: Vec<String>,
    /// Per query rule, on how many held-out queries of each wording it read a constraint.
    pub rule_firings: BTreeMap<String, BTreeMap<String, usize>>,
    pub variants: Vec<VariantResult>,
    pub seconds: f64,
}

/// One fold's held-out scores: per variant, (entry index, scores in rating order) pairs.
type FoldScores = Vec<Vec<(usize, Vec<f32>)>>;

/// Values that replace one feature column in cross-validation, e.g. a score from a model
/// fitted per fold that the feature extractor cannot compute. The caller cross-fits them: in
/// fold `f`, a held-out entry's values come from a model that never saw its query, and a
/// training entry's from one that saw neither its query nor fold `f`'s, so that the trees
/// learn how far to trust the column on queries its model never saw.
#[derive(Debug, Clone, Default)]
pub struct ColumnOverride {
    pub column: usize,
    /// Per fold, per entry of the rated queries (by index), the values in rating order.
    pub values: Vec<HashMap<usize, Vec<f32>>>,
}

impl ColumnOverride {
    /// Writes fold `fold`'s values into the groups of entries `idx` (one group per entry, in
    /// rating order); an entry without values is an error, as a silent mix of two scores
    /// would be.
    fn apply(&self, fold: usize, idx: &[usize], groups: &mut [Group]) -> Result<(), LearnError> {
        if self.column >= NUM_FEATURES {
            return Err(LearnError::Invalid(format!(
                "column {} is not a feature column",
                self.column
            )));
        }
        for (&i, group) in idx.iter().zip(groups.iter_mut()) {
            let values = self
                .values
                .get(fold)
                .and_then(|v| v.get(&i))
                .filter(|v| v.len() == group.len())
                .ok_or_else(|| {
                    LearnError::Invalid(format!(
                        "fold {fold}: no override values of entry {i} ({} ratings)",
                        group.len()
                    ))
                })?;
            for ((features, _), &v) in group.iter_mut().zip(values) {
                features[self.column] = v;
            }
        }
        Ok(())
    }
}

/// Deterministic fold of each query: a seeded shuffle of the sorted ids, dealt round-robin.
pub fn assign_folds(ids: &[&str], folds: usize, seed: u64) -> HashMap<String, usize> {
    let mut sorted: Vec<&str> = ids.to_vec();
    sorted.sort_unstable();
    precedent_ml::SplitMix(seed).shuffle(&mut sorted);
    sorted
        .into_iter()
        .enumerate()
        .map(|(i, id)| (id.to_owned(), precedent_ml::round_robin_fold(i, folds)))
        .collect()
}

/// What [`out_of_fold`] returns: per variant, the scores of each held-out entry of
/// `data.rated` (by index, in its rating order), and per query rule the entries it read a
/// constraint in.
struct OutOfFold {
    scores: Vec<HashMap<usize, Vec<f32>>>,
    rule_firings: BTreeMap<String, Vec<usize>>,
}

/// One fold's held-out scores: per variant, (entry index, scores in rating order) pairs; and
/// per rule, the held-out entries it fired on.
type FoldOutput = (FoldScores, Vec<(&'static str, usize)>);

/// One column set's raw tree scores in a fold: per held-out entry, of its judged clauses, and
/// of its served list (empty unless the served variant uses these columns).
type ColumnSetScores = (Vec<Vec<f32>>, Vec<Vec<f32>>);

/// What the pipeline ranks for one held-out entry: hybrid's first [`LEARNED_TOP`] clauses of
/// the library with their features and each query rule's flags, and the hybrid rank of every
/// clause (those past the first [`LEARNED_TOP`] keep hybrid's order beneath them, as the
/// pipeline leaves them).
struct ServedList {
    rows: Vec<u32>,
    features: Vec<[f32; NUM_FEATURES]>,
    flags: Vec<(&'static str, Vec<bool>)>,
    hybrid_rank: HashMap<u32, usize>,
}

impl ServedList {
    fn new(
        extractor: &FeatureExtractor,
        query: &RatedQuery,
        embedding: &[f32],
    ) -> Result<ServedList, LearnError> {
        let input = query_input(query, embedding);
        let order = extractor.served_rows(&input, extractor.library().len())?;
        let hybrid_rank = order.iter().enumerate().map(|(i, &r)| (r, i)).collect();
        let rows: Vec<u32> = order.into_iter().take(LEARNED_TOP).collect();
        let features = extractor.extract(&input, &rows)?;
        let flags = extractor.rule_flags(&query.text, &rows)?;
        Ok(ServedList {
            rows,
            features,
            flags,
            hybrid_rank,
        })
    }

    /// Scores of the `judged` rows (in their order) that rank them as the pipeline does: the
    /// served rows by the learned stage's final scores (feedback and the served demotion by
    /// the rules not in `rules_off` included), every other judged row below them in hybrid's
    /// order.
    fn judged_scores(
        &self,
        raw: &[f32],
        judged: &[u32],
        rules_off: &[String],
        vectors: &dyn precedent_vectors::VectorIndex,
    ) -> Vec<f32> {
        let flagged = combine_rule_flags(&self.flags, rules_off, self.rows.len());
        let scores = final_scores(
            raw,
            flagged.as_deref(),
            SERVED_AGAINST_QUERY_DEMOTION,
            &self.rows,
            Some(vectors),
            &Marks::default(),
        );
        let served: HashMap<u32, f32> = self.rows.iter().copied().zip(scores).collect();
        let floor = served.values().copied().fold(0f32, f32::min) - 1.0;
        judged
            .iter()
            .map(|row| match served.get(row) {
                Some(&s) => s,
                None => {
                    let rank = self.hybrid_rank.get(row).copied().unwrap_or(usize::MAX / 2);
                    floor - 1e-4 * rank as f32
                }
            })
            .collect()
    }
}

/// One thing per [`RuleLine`]: what the rule protocol chose reading each line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ByLine<T> {
    pub judged: T,
    pub served: T,
}

impl<T> ByLine<T> {
    pub fn get(&self, line: RuleLine) -> &T {
        match line {
            RuleLine::Judged => &self.judged,
            RuleLine::Served => &self.served,
        }
    }
}

/// The query rules each outer fold's inner cross-validation switched off
/// ([`cross_validate_nested`]), per outer fold, by the line the protocol read there.
pub type FoldRules = ByLine<Vec<Vec<String>>>;

impl FoldRules {
    /// The rules outer fold `fold` switched off reading `line` (none for a fold not chosen).
    pub fn of(&self, line: RuleLine, fold: usize) -> Vec<String> {
        self.get(line).get(fold).cloned().unwrap_or_default()
    }
}

/// Out-of-fold scores of each variant: every held-out entry's judged clauses, in rating order,
/// scored by a ranker (memory, classifiers, trees) fitted on the other folds' queries only.
fn out_of_fold(
    library: &Arc<Library>,
    data: &TrainingData,
    folds: usize,
    options: &TrainOptions,
    variants: &[Variant],
    fold_rules: &FoldRules,
    progress: &mut dyn FnMut(&str),
) -> Result<OutOfFold, LearnError> {
    let (rated, embeddings, cuad_types) = (data.rated, data.embeddings, data.cuad_types);
    let ids = distinct_ids(rated);
    if folds < 2 || folds > ids.len() {
        return Err(LearnError::Invalid(format!(
            "cannot make {folds} folds of {} queries",
            ids.len()
        )));
    }
    let vectors = library_vectors(library, "the learned ranker needs them")?;
    let without = group_columns(&options.without).map_err(LearnError::Invalid)?;
    check_rule_names(&options.without_rules).map_err(LearnError::Invalid)?;
    let trains_on = |wording: &str| {
        !options.votes_only(wording)
            && (options.train_wordings.is_empty()
                || options.train_wordings.iter().any(|w| w == wording))
    };
    if !rated.iter().any(|q| trains_on(&q.wording)) {
        return Err(LearnError::Invalid(format!(
            "no query comes in the training wording(s) {}",
            options.train_wordings.join(", ")
        )));
    }
    let fold_of = assign_folds(&ids, folds, options.seed);
    // Per variant, the feature columns its trees blank (the variant's groups and the options'),
    // or `None` for a single-feature variant.
    let blanked: Vec<Option<Vec<usize>>> = variants
        .iter()
        .map(|v| {
            let mut columns = match v {
                Variant::Learned { dropped, .. } => dropped.clone(),
                Variant::NestedRules { .. } | Variant::Marked { .. } | Variant::Served { .. } => {
                    Vec::new()
                }
                Variant::Feature { .. } => return None,
            };
            columns.extend_from_slice(&without);
            columns.sort_unstable();
            columns.dedup();
            Some(columns)
        })
        .collect();
    // The distinct column sets: one tree fit and one prediction per fold each (rule variants
    // share the full model's trees and scores).
    let mut column_sets: Vec<Vec<usize>> = Vec::new();
    for columns in blanked.iter().flatten() {
        if !column_sets.contains(columns) {
            column_sets.push(columns.clone());
        }
    }
    // The columns of the served variants, if one is asked for: their trees are the full model's.
    let served_columns: Option<Vec<usize>> = variants
        .iter()
        .zip(&blanked)
        .find(|(v, _)| v.ranked_as() == Some(RuleLine::Served))
        .and_then(|(_, columns)| columns.clone());
    progress(&format!(
        "{folds} folds in parallel: features, then {} tree fit(s) for {} variant(s) each",
        column_sets.len(),
        variants.len()
    ));
    // Folds are independent (each refits everything from its own training queries): run on
    // every core, collected in fold order, so the result does not depend on scheduling.
    let per_fold: Vec<FoldOutput> = (0..folds)
        .into_par_iter()
        .map(|fold| -> Result<FoldOutput, LearnError> {
            let held_out = |i: usize| fold_of.get(&rated[i].id) == Some(&fold);
            let test_idx: Vec<usize> = (0..rated.len()).filter(|&i| held_out(i)).collect();
            let train_idx: Vec<usize> = (0..rated.len())
                .filter(|&i| !held_out(i) && trains_on(&rated[i].wording))
                .collect();
            let train_rated: Vec<RatedQuery> =
                train_idx.iter().map(|&i| rated[i].clone()).collect();
            let train_emb: Vec<Vec<f32>> =
                train_idx.iter().map(|&i| embeddings[i].clone()).collect();
            let mut memory =
                RatingMemory::fit(&train_rated, &train_emb, library, cuad_types.cloned())?;
            memory.add_vote_entries(
                (0..rated.len())
                    .filter(|&i| !held_out(i) && options.votes_only(&rated[i].wording))
                    .map(|i| (&rated[i], &embeddings[i])),
            );
            let memory = Arc::new(memory);
            let extractor = FeatureExtractor::new(library.clone(), memory.clone())
                .with_clause_types(data.clause_types.cloned());
            // Queries are independent given the fold's memory: extracted on every core.
            // Held-out lists stay the judged clauses: they are scored by the condensed protocol.
            let groups = |idx: &[usize], served: usize| -> Result<Vec<Group>, LearnError> {
                idx.par_iter()
                    .map(|&i| {
                        let q = &rated[i];
                        let judged = q.ratings.iter().map(|r| (r.1, r.2));
                        labelled_group(&extractor, q, &embeddings[i], judged, served)
                    })
                    .collect()
            };
            let mut train_groups = groups(&train_idx, options.served_negatives)?;
            let mut test_groups = groups(&test_idx, 0)?;
            if let Some(o) = data.column_override {
                o.apply(fold, &train_idx, &mut train_groups)?;
                o.apply(fold, &test_idx, &mut test_groups)?;
            }
            if let Some(also) = data.also {
                train_groups.extend(also.groups(&memory, &train_rated, &train_emb)?);
            }
            let test_rows: Vec<Vec<u32>> = test_idx
                .iter()
                .map(|&i| rated[i].ratings.iter().map(|r| r.1).collect())
                .collect();
            let test_flags = test_idx
                .par_iter()
                .zip(&test_rows)
                .map(|(&i, rows)| extractor.rule_flags(&rated[i].text, rows))
                .collect::<Result<Vec<_>, LearnError>>()?;
            let fired: Vec<(&'static str, usize)> = test_idx
                .iter()
                .zip(&test_flags)
                .flat_map(|(&i, flags)| flags.iter().map(move |(rule, _)| (*rule, i)))
                .collect();
            let blank_group = |g: &Group, columns: &[usize]| -> Group {
                g.iter().map(|(f, l)| (blank(*f, columns), *l)).collect()
            };
            // What the pipeline would rank for each held-out entry, when a variant asks.
            let served_lists: Vec<ServedList> = if served_columns.is_some() {
                test_idx
                    .par_iter()
                    .map(|&i| ServedList::new(&extractor, &rated[i], &embeddings[i]))
                    .collect::<Result<_, LearnError>>()?
            } else {
                Vec::new()
            };
            // The tree fits are independent and each runs on one core: fitted in parallel,
            // collected in order, so the result does not depend on scheduling.
            // Per column set, the trees' raw scores of every held-out group (and, for the
            // served variant's columns, of every held-out entry's served list).
            let raw: Vec<ColumnSetScores> = column_sets
                .par_iter()
                .map(|columns| {
                    let train: Vec<Group> = train_groups
                        .iter()
                        .map(|g| blank_group(g, columns))
                        .collect();
                    let ranker = Ranker::fit(&train, options)?;
                    let predict = |features: Vec<[f32; NUM_FEATURES]>| ranker.predict(&features);
                    let judged = test_groups
                        .iter()
                        .map(|g| predict(g.iter().map(|(f, _)| blank(*f, columns)).collect()))
                        .collect();
                    let served = if served_columns.as_ref() == Some(columns) {
                        served_lists
                            .iter()
                            .map(|s| {
                                predict(s.features.iter().map(|f| blank(*f, columns)).collect())
                            })
                            .collect()
                    } else {
                        Vec::new()
                    };
                    Ok((judged, served))
                })
                .collect::<Result<_, LearnError>>()?;
            let predicted: Vec<Vec<Vec<f32>>> = variants
                .par_iter()
                .zip(&blanked)
                .map(|(variant, columns)| -> Vec<Vec<f32>> {
                    // The raw scores of the trees fitted on this variant's columns.
                    let fitted = columns
                        .as_ref()
                        .and_then(|c| column_sets.iter().position(|set| set == c))
                        .and_then(|at| raw.get(at));
                    // A variant's rules switched off, with the options' own.
                    let switched_off = |rules: &[String]| -> Vec<String> {
                        rules
                            .iter()
                            .chain(&options.without_rules)
                            .cloned()
                            .collect()
                    };
                    let policy = match variant {
                        Variant::Marked { policy, .. } => Some(*policy),
                        _ => None,
                    };
                    let (feedback, rules_off) = match variant {
                        Variant::Feature { column, .. } => {
                            return test_groups
                                .iter()
                                .map(|g| g.iter().map(|(f, _)| f[*column]).collect())
                                .collect()
                        }
                        Variant::Learned {
                            feedback,
                            rules_off,
                            ..
                        } => (*feedback, rules_off.clone()),
                        Variant::NestedRules { chosen_on, .. } => {
                            (true, fold_rules.of(*chosen_on, fold))
                        }
                        Variant::Marked { .. } => (true, Vec::new()),
                        Variant::Served { rules_off, .. } => (true, rules_off.clone()),
                    };
                    if variant.ranked_as() == Some(RuleLine::Served) {
                        let Some((_, served)) = fitted else {
                            return Vec::new();
                        };
                        let off = switched_off(&rules_off);
                        return served_lists
                            .iter()
                            .zip(served)
                            .zip(&test_rows)
                            .map(|((list, raw), judged)| {
                                list.judged_scores(raw, judged, &off, vectors)
                            })
                            .collect();
                    }
                    let Some((scores, _)) = fitted else {
                        return Vec::new();
                    };
                    let off = switched_off(&rules_off);
                    scores
                        .iter()
                        .zip(&test_flags)
                        .zip(&test_rows)
                        .zip(&test_groups)
                        .map(|(((raw, flags), rows), group)| {
                            let excluded = combine_rule_flags(flags, &off, rows.len());
                            let ranked = final_scores(
                                raw,
                                excluded.as_deref(),
                                AGAINST_QUERY_DEMOTION,
                                rows,
                                feedback.then_some(vectors),
                                &Marks::default(),
                            );
                            let Some(policy) = policy else {
                                return ranked;
                            };
                            let labels: Vec<i32> = group.iter().map(|(_, l)| *l).collect();
                            after_first_page(&ranked, |page| {
                                let marks = policy.marks(page, &labels, rows);
                                if marks.is_empty() {
                                    return ranked.clone();
                                }
                                final_scores(
                                    raw,
                                    excluded.as_deref(),
                                    AGAINST_QUERY_DEMOTION,
                                    rows,
                                    feedback.then_some(vectors),
                                    &marks,
                                )
                            })
                        })
                        .collect()
                })
                .collect();
            Ok((
                predicted
                    .into_iter()
                    .map(|p| test_idx.iter().copied().zip(p).collect())
                    .collect(),
                fired,
            ))
        })
        .collect::<Result<_, LearnError>>()?;
    let mut scores: Vec<HashMap<usize, Vec<f32>>> = vec![HashMap::new(); variants.len()];
    let mut rule_firings: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (fold, fired) in per_fold {
        for (v, predicted) in fold.into_iter().enumerate() {
            for (i, s) in predicted {
                scores[v].insert(i, s);
            }
        }
        for (rule, i) in fired {
            rule_firings.entry(rule.to_string()).or_default().push(i);
        }
    }
    Ok(OutOfFold {
        scores,
        rule_firings,
    })
}

/// Residual scoring of one round of marks: the first [`MARKED_PAGE`] candidates of `ranked`
/// (the lawyer's first page) are given to `rescore`, and in its scores they become NaN, which
/// [`report`] reads as "already seen": left out of the ranking and of the judgements alike.
fn after_first_page(ranked: &[f32], rescore: impl FnOnce(&[usize]) -> Vec<f32>) -> Vec<f32> {
    let mut order: Vec<usize> = (0..ranked.len()).collect();
    order.sort_by(|&a, &b| ranked[b].total_cmp(&ranked[a]).then(a.cmp(&b)));
    let page = &order[..MARKED_PAGE.min(order.len())];
    let mut scores = rescore(page);
    for &i in page {
        if let Some(s) = scores.get_mut(i) {
            *s = f32::NAN;
        }
    }
    scores
}

/// The full learned ranker's out-of-fold scores, per entry of `data.rated` (each in its rating
/// order): what `train --cv` scores, for stages stacked on top of it (the LLM judge).
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
        &FoldRules::default(),
        &mut progress,
    )?
    .scores
    .pop()
    .unwrap_or_default();
    Ok((0..data.rated.len())
        .map(|i| scores.remove(&i).unwrap_or_default())
        .collect())
}

/// The distinct query ids of `rated` (each query once, whatever its wordings), sorted: what
/// folds are drawn over.
pub fn distinct_ids(rated: &[RatedQuery]) -> Vec<&str> {
    let mut ids: Vec<&str> = rated.iter().map(|q| q.id.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    ids
}

/// A list of rule names for a report line ("none" when empty).
pub fn describe_rules(rules: &[String]) -> String {
    if rules.is_empty() {
        "none".to_string()
    } else {
        rules.join(", ")
    }
}

/// The wordings of `rated`, in order of first appearance.
pub fn wordings_of(rated: &[RatedQuery]) -> Vec<String> {
    let mut wordings: Vec<String> = Vec::new();
    for q in rated {
        if !wordings.contains(&q.wording) {
            wordings.push(q.wording.clone());
        }
    }
    wordings
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
    let out = out_of_fold(
        library,
        data,
        folds,
        options,
        variants,
        &FoldRules::default(),
        &mut progress,
    )?;
    Ok(report(data.rated, folds, options, variants, out, started))
}

/// Cross-validation with the query rules chosen inside each outer fold: an inner K-fold
/// cross-validation over the fold's training queries scores the full model without each rule,
/// on the judged line and on the served line ([`RuleLine`]), and [`rules_to_switch_off`]
/// decides from each which rules that fold ranks without. The outer held-out queries then
/// measure that whole procedure: the full model with every rule and with each line's choice,
/// ranked among the judged clauses and as served. Returns the report and, per outer fold, the
/// rules each line switched off.
pub fn cross_validate_nested(
    library: &Arc<Library>,
    data: &TrainingData,
    folds: usize,
    options: &TrainOptions,
    mut progress: impl FnMut(&str),
) -> Result<(CvReport, FoldRules), LearnError> {
    let started = std::time::Instant::now();
    let rated = data.rated;
    let ids = distinct_ids(rated);
    let fold_of = assign_folds(&ids, folds, options.seed);
    let inner_variants: Vec<Variant> = [Variant::full(), Variant::served()]
        .into_iter()
        .chain(Variant::rule_ablation())
        .chain(Variant::served_rule_ablation())
        .collect();
    let mut chosen = FoldRules::default();
    for fold in 0..folds {
        progress(&format!(
            "outer fold {}/{folds}: inner cross-validation",
            fold + 1
        ));
        let keep: Vec<usize> = (0..rated.len())
            .filter(|&i| fold_of.get(&rated[i].id) != Some(&fold))
            .collect();
        let inner_rated: Vec<RatedQuery> = keep.iter().map(|&i| rated[i].clone()).collect();
        let inner_embeddings: Vec<Vec<f32>> =
            keep.iter().map(|&i| data.embeddings[i].clone()).collect();
        // The override's entries and folds are the outer ones: not carried into the inner CV.
        let inner_data = TrainingData {
            rated: &inner_rated,
            embeddings: &inner_embeddings,
            column_override: None,
            ..*data
        };
        let inner = out_of_fold(
            library,
            &inner_data,
            folds,
            options,
            &inner_variants,
            &FoldRules::default(),
            &mut |_| {},
        )?;
        let inner = report(
            &inner_rated,
            folds,
            options,
            &inner_variants,
            inner,
            started,
        );
        let choice = rule_choices(&inner);
        chosen.judged.push(choice.judged);
        chosen.served.push(choice.served);
    }
    let nested = |name: &str, chosen_on: RuleLine, ranked_as: RuleLine| Variant::NestedRules {
        name: name.into(),
        chosen_on,
        ranked_as,
    };
    let variants = vec![
        Variant::full(),
        nested(
            "learned, rules chosen by inner CV (nested)",
            RuleLine::Judged,
            RuleLine::Judged,
        ),
        Variant::served(),
        nested(
            "as served, rules chosen by inner CV on the judged line (nested)",
            RuleLine::Judged,
            RuleLine::Served,
        ),
        nested(
            "as served, rules chosen by inner CV as served (nested)",
            RuleLine::Served,
            RuleLine::Served,
        ),
    ];
    let out = out_of_fold(
        library,
        data,
        folds,
        options,
        &variants,
        &chosen,
        &mut progress,
    )?;
    Ok((
        report(rated, folds, options, &variants, out, started),
        chosen,
    ))
}

/// How much NDCG@5 a rule may cost one wording (its removal raising that wording's figure by
/// more than this) and still be kept for helping the mean: a rule fitted to one phrasing must
/// not buy its gain there with a loss in another.
pub const RULE_WORDING_TOLERANCE: f64 = 0.005;

/// What the rule protocol ([`rules_to_switch_off`]) switches off reading each line of `report`.
pub fn rule_choices(report: &CvReport) -> ByLine<Vec<String>> {
    ByLine {
        judged: rules_to_switch_off(report, RuleLine::Judged),
        served: rules_to_switch_off(report, RuleLine::Served),
    }
}

/// The query rules a rule ablation on `line` ([`Variant::rule_ablation`] next to
/// [`Variant::full`], or [`Variant::served_rule_ablation`] next to [`Variant::served`]) says
/// to switch off, by a protocol fixed before measuring: a rule goes when leaving it out does
/// not lower the mean NDCG@5 over wordings, or raises some wording's NDCG@5 by more than
/// [`RULE_WORDING_TOLERANCE`]. Rules the report has no ablation line for stay.
pub fn rules_to_switch_off(report: &CvReport, line: RuleLine) -> Vec<String> {
    let full_name = line.full_name();
    let Some(full) = report.variants.iter().find(|v| v.name == full_name) else {
        return Vec::new();
    };
    QUERY_RULES
        .iter()
        .filter(|rule| {
            let name = line.without_name(rule);
            report
                .variants
                .iter()
                .find(|v| v.name == name)
                .is_some_and(|without| {
                    without.mean.ndcg5 >= full.mean.ndcg5
                        || without.by_wording.iter().any(|(w, r)| {
                            full.by_wording.get(w).is_some_and(|f| {
                                r.mean.ndcg5 - f.mean.ndcg5 > RULE_WORDING_TOLERANCE
                            })
                        })
                })
        })
        .map(|r| r.to_string())
        .collect()
}

/// Scores out-of-fold rankings per variant and wording.
fn report(
    rated: &[RatedQuery],
    folds: usize,
    options: &TrainOptions,
    variants: &[Variant],
    out: OutOfFold,
    started: std::time::Instant,
) -> CvReport {
    let OutOfFold {
        scores,
        rule_firings,
    } = out;
    let wordings = wordings_of(rated);
    let mut results = Vec::with_capacity(variants.len());
    for (v, variant) in variants.iter().enumerate() {
        let mut by_wording = BTreeMap::new();
        for wording in &wordings {
            let mut per_query = BTreeMap::new();
            for (i, q) in rated.iter().enumerate() {
                if q.wording != *wording {
                    continue;
                }
                let Some(s) = scores[v].get(&i) else {
                    continue;
                };
                // A NaN score marks a clause the lawyer has already seen ([`Variant::Marked`]):
                // out of the ranking and the judgements both.
                let unseen = || q.ratings.iter().zip(s).filter(|(_, score)| !score.is_nan());
                let run: Vec<Scored> = unseen()
                    .map(|((doc, _, _), score)| Scored {
                        doc: doc.as_str(),
                        score: f64::from(*score),
                    })
                    .collect();
                let judged: HashMap<String, i32> =
                    unseen().map(|((d, _, l), _)| (d.clone(), *l)).collect();
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
            by_wording.insert(
                wording.clone(),
                WordingResult {
                    mean: MeanMetrics::of(per_query.values()),
                    by_category,
                    per_query,
                },
            );
        }
        results.push(VariantResult {
            name: variant.name().to_owned(),
            mean: MeanMetrics::mean_of(by_wording.values().map(|w| &w.mean)),
            by_wording,
        });
    }
    let ids = distinct_ids(rated);
    CvReport {
        folds,
        seed: options.seed,
        queries: ids.len(),
        wordings,
        train_wordings: options.train_wordings.clone(),
        memory_wordings: options.memory_wordings.clone(),
        features: FEATURE_NAMES.iter().map(|s| s.to_string()).collect(),
        without_rules: options.without_rules.clone(),
        rule_firings: rule_firings
            .into_iter()
            .map(|(rule, entries)| {
                let mut per: BTreeMap<String, usize> = BTreeMap::new();
                for i in entries {
                    *per.entry(rated[i].wording.clone()).or_default() += 1;
                }
                (rule, per)
            })
            .collect(),
        variants: results,
        seconds: started.elapsed().as_secs_f64(),
    }
}

impl CvReport {
    /// A plain-text table: one line per variant (percent; with several wordings, the mean over
    /// wordings, then NDCG@5 per wording and the spread between the best and worst wording),
    /// then per-category NDCG@5 of the first learned variant, and which rules fired where.
    pub fn table(&self) -> String {
        let pct = |x: Option<f64>| x.map_or("   -".to_string(), |v| format!("{:5.1}", 100.0 * v));
        let several = self.wordings.len() > 1;
        let mut out = format!(
            "{}-fold cross-validation by query · {} queries{} · condensed protocol\n{:<48} {:>6} {:>6} {:>6} {:>6} {:>6}",
            self.folds,
            self.queries,
            if several {
                format!(
                    " × {} wordings ({}; trained on {}{})",
                    self.wordings.len(),
                    self.wordings.join(", "),
                    if self.train_wordings.is_empty() && self.memory_wordings.is_empty() {
                        "all".to_string()
                    } else if self.train_wordings.is_empty() {
                        "all others".to_string()
                    } else {
                        self.train_wordings.join(", ")
                    },
                    if self.memory_wordings.is_empty() {
                        String::new()
                    } else {
                        format!("; in the memory's vote only: {}", self.memory_wordings.join(", "))
                    }
                )
            } else {
                String::new()
            },
            if several { "variant (mean over wordings)" } else { "variant" },
            "nDCG5",
            "nDCG10",
            "4*P5",
            "5*P5",
            "R@100"
        );
        if several {
            for w in &self.wordings {
                out.push_str(&format!(" {:>7}", format!("{w:.7}")));
            }
            out.push_str(&format!(" {:>6}", "spread"));
        }
        out.push('\n');
        for v in &self.variants {
            out.push_str(&format!(
                "{:<48} {:>6} {:>6} {:>6} {:>6} {:>6}",
                v.name,
                pct(Some(v.mean.ndcg5)),
                pct(Some(v.mean.ndcg10)),
                pct(v.mean.p5_4star),
                pct(v.mean.p5_5star),
                pct(v.mean.recall100),
            ));
            if several {
                let per: Vec<f64> = self
                    .wordings
                    .iter()
                    .map(|w| v.by_wording.get(w).map_or(0.0, |r| r.mean.ndcg5))
                    .collect();
                for x in &per {
                    out.push_str(&format!(" {:>7}", pct(Some(*x))));
                }
                let spread = per.iter().copied().fold(f64::NEG_INFINITY, f64::max)
                    - per.iter().copied().fold(f64::INFINITY, f64::min);
                out.push_str(&format!(" {:>6}", pct(Some(spread))));
            }
            out.push('\n');
        }
        if let Some(v) = self
            .variants
            .iter()
            .find(|v| v.name.starts_with("learned ("))
        {
            for (wording, result) in &v.by_wording {
                out.push_str(&format!(
                    "\nper category ({}{}):\n",
                    v.name,
                    if wording.is_empty() {
                        String::new()
                    } else {
                        format!(", {wording} wording")
                    }
                ));
                for (c, m) in &result.by_category {
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
        }
        if !self.rule_firings.is_empty() {
            out.push_str("\nquery rules that read a constraint (held-out queries per wording):\n");
            for (rule, per) in &self.rule_firings {
                let counts: Vec<String> = per
                    .iter()
                    .map(|(w, n)| {
                        if w.is_empty() {
                            n.to_string()
                        } else {
                            format!("{w} {n}")
                        }
                    })
                    .collect();
                out.push_str(&format!("  {rule:<16} {}\n", counts.join(", ")));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_column_override_writes_its_fold_values_and_refuses_gaps() {
        let group = |n: usize| -> Group { (0..n).map(|_| ([0.5f32; NUM_FEATURES], 1)).collect() };
        let mut fold0 = HashMap::new();
        fold0.insert(7usize, vec![0.1f32, 0.2]);
        let o = ColumnOverride {
            column: 3,
            values: vec![fold0, HashMap::new()],
        };
        let mut groups = vec![group(2)];
        o.apply(0, &[7], &mut groups)
            .expect("values for entry 7 in fold 0");
        assert_eq!(groups[0][0].0[3], 0.1);
        assert_eq!(groups[0][1].0[3], 0.2);
        assert_eq!(groups[0][1].0[2], 0.5, "other columns untouched");
        // The same entry in another fold, a group of another length, a bad column: errors.
        assert!(o.apply(1, &[7], &mut groups).is_err());
        assert!(o.apply(0, &[7], &mut [group(3)]).is_err());
        let bad = ColumnOverride {
            column: NUM_FEATURES,
            ..o.clone()
        };
        assert!(bad.apply(0, &[7], &mut groups).is_err());
    }

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

    /// A report with one full model and one line per rule left out on `line`, NDCG@5 per
    /// wording given.
    fn rule_report(
        line: RuleLine,
        full: &[(&str, f64)],
        without: &[(&str, &[(&str, f64)])],
    ) -> CvReport {
        let result = |name: String, figures: &[(&str, f64)]| {
            let by_wording: BTreeMap<String, WordingResult> = figures
                .iter()
                .map(|(w, ndcg5)| {
                    let mean = MeanMetrics {
                        ndcg5: *ndcg5,
                        ..MeanMetrics::default()
                    };
                    let result = WordingResult {
                        mean,
                        by_category: BTreeMap::new(),
                        per_query: BTreeMap::new(),
                    };
                    (w.to_string(), result)
                })
                .collect();
            VariantResult {
                name,
                mean: MeanMetrics::mean_of(by_wording.values().map(|w| &w.mean)),
                by_wording,
            }
        };
        let mut variants = vec![result(line.full_name(), full)];
        for (rule, figures) in without {
            variants.push(result(line.without_name(rule), figures));
        }
        CvReport {
            folds: 5,
            seed: 42,
            queries: 57,
            wordings: full.iter().map(|(w, _)| w.to_string()).collect(),
            train_wordings: Vec::new(),
            memory_wordings: Vec::new(),
            features: Vec::new(),
            without_rules: Vec::new(),
            rule_firings: BTreeMap::new(),
            variants,
            seconds: 0.0,
        }
    }

    #[test]
    fn the_protocol_drops_rules_that_do_not_help_the_mean_or_hurt_a_wording() {
        let full = [("short", 0.80), ("medium", 0.73), ("long", 0.66)];
        let report = rule_report(
            RuleLine::Judged,
            &full,
            &[
                // Helps every wording: kept.
                (
                    "stance",
                    &[("short", 0.78), ("medium", 0.72), ("long", 0.66)],
                ),
                // Helps the short wording more than it costs the long one, but the long one
                // loses over half a point: dropped.
                (
                    "inclusion",
                    &[("short", 0.79), ("medium", 0.72), ("long", 0.68)],
                ),
                // Changes nothing: dropped.
                ("renewal", &full),
                // Costs a wording within the tolerance and helps the mean: kept.
                (
                    "exclusion",
                    &[("short", 0.79), ("medium", 0.71), ("long", 0.662)],
                ),
            ],
        );
        assert_eq!(
            rules_to_switch_off(&report, RuleLine::Judged),
            vec!["inclusion", "renewal"]
        );
        // The served line has no lines in this report: nothing is decided on it.
        assert!(rules_to_switch_off(&report, RuleLine::Served).is_empty());
        // Without a full-model line nothing is decided.
        let mut headless = report.clone();
        headless.variants.remove(0);
        assert!(rules_to_switch_off(&headless, RuleLine::Judged).is_empty());
    }

    #[test]
    fn the_protocol_reads_the_line_it_is_asked_for() {
        let full = [("short", 0.80), ("medium", 0.74), ("long", 0.75)];
        let helps = [("short", 0.78), ("medium", 0.72), ("long", 0.74)];
        let useless = [("short", 0.80), ("medium", 0.74), ("long", 0.75)];
        // Judged line: cap helps, renewal does nothing; served line: the other way round.
        let mut report = rule_report(
            RuleLine::Judged,
            &full,
            &[("cap", &helps), ("renewal", &useless)],
        );
        let served = rule_report(
            RuleLine::Served,
            &full,
            &[("cap", &useless), ("renewal", &helps)],
        );
        report.variants.extend(served.variants);
        assert_eq!(
            rules_to_switch_off(&report, RuleLine::Judged),
            vec!["renewal"]
        );
        assert_eq!(rules_to_switch_off(&report, RuleLine::Served), vec!["cap"]);
        // The names are the ones the ablations print.
        let printed: Vec<String> = Variant::served_rule_ablation()
            .iter()
            .map(|v| v.name().to_string())
            .collect();
        assert!(printed.contains(&RuleLine::Served.without_name("cap")));
        assert_eq!(RuleLine::Served.full_name(), Variant::served().name());
        let judged: Vec<String> = Variant::rule_ablation()
            .iter()
            .map(|v| v.name().to_string())
            .collect();
        assert!(judged.contains(&RuleLine::Judged.without_name("cap")));
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

    #[test]
    fn the_simulated_lawyer_marks_the_first_page_by_stars_and_it_leaves_the_scoring() {
        // Seven candidates; the ranking puts 6, 5, 4, 3, 2 first (the first page).
        let ranked = [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        let labels = [4, 4, 0, 2, 3, 1, 4];
        let rows = [10, 11, 12, 13, 14, 15, 16];
        let mut seen_page = Vec::new();
        let scores = after_first_page(&ranked, |page| {
            seen_page = page.to_vec();
            ranked.iter().map(|s| -s).collect()
        });
        assert_eq!(seen_page, [6, 5, 4, 3, 2]);
        // The page is out of the scoring (NaN); the rest keep the rescored values.
        assert!(scores[2..].iter().all(|s| s.is_nan()), "{scores:?}");
        assert_eq!(&scores[..2], &[-0.0, -1.0]);
        // 4-5 stars wanted, 1-2 stars not, 3 stars unmarked; clauses off the page never.
        let both = MarkPolicy::LikedAndUnliked.marks(&seen_page, &labels, &rows);
        assert_eq!(both.liked, [16, 14]);
        assert_eq!(both.unliked, [15, 12]);
        let liked = MarkPolicy::Liked.marks(&seen_page, &labels, &rows);
        assert!(liked.unliked.is_empty());
        assert!(MarkPolicy::None
            .marks(&seen_page, &labels, &rows)
            .is_empty());
    }
}
