//! The learned model: rating memory + listwise ranker, saved as a versioned directory.
//!
//! ```text
//! MODEL_DIR/
//!   manifest.json   format name and version, feature names, embedder, training summary
//!   memory.json     training queries, their ratings and category centroids
//!   ranker.json     the boosted trees
//! ```

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use gbdt::config::Loss;
use gbdt::decision_tree::{Data, DataVec, DecisionTree, TrainingCache};
use precedent_library::{write_atomically, Library};
use precedent_ml::boost::{BoostOptions, Boosted};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::category::CuadTypeProfiles;
use crate::features::{labelled_group, FeatureExtractor, Group, FEATURE_NAMES, NUM_FEATURES};
use crate::memory::{RatedQuery, RatingMemory};
use crate::LearnError;

pub const MODEL_FORMAT: &str = "precedent-learned-ranker";
/// Bumped whenever features, memory or ranker layout change; older directories are refused.
/// Version 4 added [`ModelManifest::without`]: a version-3 directory (the layout is otherwise
/// the same) is read as leaving nothing out, and a binary that knows only version 3 refuses a
/// version-4 model instead of ranking with the groups it was trained without. Version 5 added
/// [`ModelManifest::without_rules`] and [`ModelManifest::wordings`] (a memory may hold several
/// wordings of a query): older directories read as ranking with every rule.
pub const MODEL_FORMAT_VERSION: u32 = 5;

/// The oldest format version [`LearnedModel::load`] still reads.
pub const OLDEST_READ_FORMAT_VERSION: u32 = 3;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ModelManifest {
    pub format: String,
    pub format_version: u32,
    pub features: Vec<String>,
    /// Bi-encoder whose query and clause embeddings the memory and features assume.
    pub embedder_model_id: String,
    pub objective: String,
    pub trees: usize,
    pub max_depth: u32,
    pub learning_rate: f32,
    pub training_queries: usize,
    pub training_ratings: usize,
    /// Rating files trained on (as given), for provenance.
    pub trained_on: Vec<String>,
    pub train_seconds: f64,
    /// Feature groups ([`crate::cv::FEATURE_GROUPS`]) left out: blanked when training and when
    /// ranking. A model for libraries nobody rated leaves out `rating-memory`, which is empty
    /// there (`train --without rating-memory`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub without: Vec<String>,
    /// Query rules ([`crate::features::QUERY_RULES`]) the model ranks without: measured not to
    /// help across query wordings, or left out on purpose.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub without_rules: Vec<String>,
    /// The query wordings the training queries came in (e.g. short, medium, long): the rating
    /// memory holds one entry per query and wording.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub wordings: Vec<String>,
    /// Wordings that joined the memory's vote only ([`TrainOptions::memory_wordings`]); not in
    /// `wordings`, since the trees never saw them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub memory_wordings: Vec<String>,
    /// Unjudged hybrid candidates per training query added at label 0
    /// ([`TrainOptions::served_negatives`]); a training recipe, serving does not read it.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub served_negatives: usize,
    /// The trees were grown under [`crate::features::MONOTONE`] ([`TrainOptions::monotone`]);
    /// a training recipe, serving does not read it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub monotone: bool,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// Options of [`train`].
#[derive(Debug, Clone)]
pub struct TrainOptions {
    pub objective: RankObjective,
    /// Number of boosted trees.
    pub trees: usize,
    pub max_depth: u32,
    /// Fewest training rows in a leaf (guards against fitting single clauses).
    pub min_leaf: usize,
    /// Shrinkage applied to every tree's output.
    pub learning_rate: f32,
    /// Which trees the ranker boosts.
    pub learner: Learner,
    /// Seed of the cross-validation fold assignment (tree fitting itself is deterministic).
    pub seed: u64,
    /// Feature groups left out ([`ModelManifest::without`]).
    pub without: Vec<String>,
    /// Query rules left out ([`ModelManifest::without_rules`]).
    pub without_rules: Vec<String>,
    /// With cross-validation: the wordings whose texts of the training folds' queries train
    /// (empty: every wording given). Held-out queries are scored in every wording either way.
    pub train_wordings: Vec<String>,
    /// Wordings whose texts join the rating memory's vote only
    /// ([`RatingMemory::add_vote_entries`]): the trees never train on them, and the centroids
    /// and classifiers are fitted without them. For other writers' rewordings of the training
    /// queries: trained on, the trees learn those writers' register (docs/experiments/ranking.md,
    /// "Learning from more writers"); in the vote they only give a new request more phrasings
    /// to resemble. In cross-validation a held-out query's own texts in these wordings are held
    /// out with it, and still scored.
    pub memory_wordings: Vec<String>,
    /// Training lists also hold the first N clauses hybrid retrieval serves each training query
    /// that nobody judged for it, at label 0 (0: judged clauses only). ACORD judged a query's
    /// clauses by pooling, so among the judged ones a clause no other query rated was pooled
    /// for this one and is nearly always relevant; a ranker that learns only from judged lists
    /// learns that "unrated" means "relevant", which serving the whole library can misread.
    /// Measured to cost 10.7 NDCG@5 on ACORD (docs/experiments/ranking.md), so off by default.
    pub served_negatives: usize,
    /// Grow the trees under [`crate::features::MONOTONE`]: the ranker's score never falls as
    /// a feature of known direction (BM25, cosine, the memory's labels, ...) rises. Only
    /// [`Learner::Boost`] can hold the constraint, and [`Learner::Blend`] on its histogram half.
    pub monotone: bool,
}

impl TrainOptions {
    /// Whether texts in `wording` join the rating memory's vote only.
    pub fn votes_only(&self, wording: &str) -> bool {
        self.memory_wordings.iter().any(|w| w == wording)
    }
}

impl Default for TrainOptions {
    fn default() -> Self {
        TrainOptions {
            objective: RankObjective::LambdaRank,
            trees: 150,
            max_depth: 5,
            min_leaf: 40,
            learning_rate: 0.1,
            learner: Learner::Gbdt,
            seed: 42,
            without: Vec::new(),
            without_rules: Vec::new(),
            train_wordings: Vec::new(),
            memory_wordings: Vec::new(),
            served_negatives: 0,
            monotone: false,
        }
    }
}

/// The tree learner of the ranker (the boosting loop and the LambdaMART gradients are the same).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Learner {
    /// `precedent_ml::boost`: histogram Newton trees on the gradients
    /// ([`precedent_ml::boost::Boosted::train_with_gradients`]).
    Boost,
    /// The `gbdt` crate's exact-split regression trees on target = gradient / hessian.
    Gbdt,
    /// Both, each fitted on its own from the same lists, the score the mean of their two
    /// margins. The two grow different trees from the same gradients (exact splits on 40-row
    /// nodes against 255-bin histograms, under [`TrainOptions::monotone`] if asked), so their
    /// mistakes on an unseen wording are partly independent; each still sees every training
    /// query, unlike bagging, which starved the trees of queries (docs/experiments/ranking.md).
    Blend,
}

impl Learner {
    pub fn name(&self) -> &'static str {
        match self {
            Learner::Boost => "boost",
            Learner::Gbdt => "gbdt",
            Learner::Blend => "blend",
        }
    }
}

impl std::str::FromStr for Learner {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "boost" => Ok(Learner::Boost),
            "gbdt" => Ok(Learner::Gbdt),
            "blend" => Ok(Learner::Blend),
            other => Err(format!("unknown learner {other:?} (boost, gbdt or blend)")),
        }
    }
}

/// Training objective of the ranker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RankObjective {
    /// LambdaMART: pairwise logistic gradients weighted by the NDCG change of swapping the pair
    /// (linear gain, as ACORD's metric), Newton leaf values.
    LambdaRank,
    /// Pointwise regression on the label, for comparison.
    Squared,
}

impl RankObjective {
    pub fn name(&self) -> &'static str {
        match self {
            RankObjective::LambdaRank => "lambdarank",
            RankObjective::Squared => "squared",
        }
    }
}

impl std::str::FromStr for RankObjective {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "lambdarank" => Ok(RankObjective::LambdaRank),
            "squared" => Ok(RankObjective::Squared),
            other => Err(format!(
                "unknown objective {other:?} (lambdarank or squared)"
            )),
        }
    }
}

/// Boosted regression trees over [`FEATURE_NAMES`], fitted by LambdaMART.
///
/// The boosting loop and the lambda gradients are the same for both learners
/// ([`TrainOptions::learner`]); only the tree growing differs:
///
/// - [`Learner::Boost`]: `precedent_ml::boost`'s histogram Newton trees grown on
///   (gradient, hessian) directly. The hyper-parameters map as follows: `trees`, `max_depth`
///   and `learning_rate` as they are; `min_leaf` (fewest training rows in a leaf) becomes
///   `min_child_rows` (a split must leave that many rows on each side; LambdaMART's hessians
///   shrink with each pair's NDCG change, so no `min_child_hessian` stands for a row count,
///   which is therefore 0); `l2 = 0`, so a leaf is the plain Newton step sum(g) / sum(h) the
///   `gbdt` trees give; 255 bins per feature, the finest the binning allows (the `gbdt` trees
///   split on exact values).
/// - [`Learner::Gbdt`]: the `gbdt` crate's regression trees fit target = lambda / hessian with
///   weight = hessian, whose weighted leaf mean is the same Newton step. Its `min_leaf_size` is
///   applied to the node before a split (a node of `min_leaf` rows or fewer stays a leaf), not
///   to the children.
///
/// The default is [`Learner::Gbdt`]: on ACORD's 5-fold cross-validation (two fold seeds, three
/// wordings) the `gbdt` trees ranked higher by more than the margin fixed beforehand as the price
/// of keeping one tree learner, although the histogram trees fit at least four times faster
/// (docs/experiments/ranking.md, "One GBDT").
/// `train --learner boost` keeps the comparison one flag away, e.g. when the features change.
pub struct Ranker {
    trees: RankerTrees,
}

enum RankerTrees {
    Boost(Boosted),
    Gbdt(GbdtTrees),
    Blend { boosted: Boosted, gbdt: GbdtTrees },
}

/// The `gbdt` crate's trees with their shrinkage. Serialised as `ranker.json` of
/// [`Learner::Gbdt`], `{"learning_rate", "trees"}` (the only layout before the learner was a
/// choice), and flattened into [`BlendFile`].
#[derive(Serialize, Deserialize)]
struct GbdtTrees {
    learning_rate: f32,
    trees: Vec<DecisionTree>,
}

impl GbdtTrees {
    /// The trees' summed, shrunk outputs for each row.
    fn margins(&self, features: &[[f32; NUM_FEATURES]]) -> Vec<f32> {
        let data: DataVec = features
            .iter()
            .map(|f| Data::new_test_data(f.to_vec(), None))
            .collect();
        let mut scores = vec![0f32; data.len()];
        for tree in &self.trees {
            for (s, p) in scores.iter_mut().zip(tree.predict(&data)) {
                *s += self.learning_rate * p;
            }
        }
        scores
    }
}

/// `ranker.json` of [`Learner::Boost`]: `{"learner": "boost", "boosted": {dim, base, trees}}`.
#[derive(Serialize, Deserialize)]
struct BoostFile<B> {
    learner: String,
    boosted: B,
}

/// `ranker.json` of [`Learner::Blend`]: the boost layout with the gbdt layout's fields beside
/// it, `{"learner": "blend", "boosted", "learning_rate", "trees"}`.
#[derive(Serialize, Deserialize)]
struct BlendFile<B, G> {
    learner: String,
    boosted: B,
    #[serde(flatten)]
    gbdt: G,
}

impl Serialize for Ranker {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let learner = self.learner().name().to_owned();
        match &self.trees {
            RankerTrees::Boost(boosted) => BoostFile { learner, boosted }.serialize(serializer),
            RankerTrees::Gbdt(gbdt) => gbdt.serialize(serializer),
            RankerTrees::Blend { boosted, gbdt } => BlendFile {
                learner,
                boosted,
                gbdt,
            }
            .serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for Ranker {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let value = serde_json::Value::deserialize(deserializer)?;
        let validated = |boosted: Boosted| {
            boosted
                .validate(NUM_FEATURES)
                .map_err(|e| D::Error::custom(format!("boosted trees: {e}")))
                .map(|()| boosted)
        };
        let learner = value.get("learner").and_then(|l| l.as_str());
        let trees = if learner == Some(Learner::Blend.name()) {
            let file: BlendFile<Boosted, GbdtTrees> =
                serde_json::from_value(value).map_err(D::Error::custom)?;
            RankerTrees::Blend {
                boosted: validated(file.boosted)?,
                gbdt: file.gbdt,
            }
        } else if value.get("boosted").is_some() {
            let file: BoostFile<Boosted> =
                serde_json::from_value(value).map_err(D::Error::custom)?;
            if file.learner != Learner::Boost.name() {
                return Err(D::Error::custom(format!(
                    "unknown learner {:?}",
                    file.learner
                )));
            }
            RankerTrees::Boost(validated(file.boosted)?)
        } else {
            RankerTrees::Gbdt(serde_json::from_value(value).map_err(D::Error::custom)?)
        };
        Ok(Ranker { trees })
    }
}

impl Ranker {
    /// Fits on per-query groups of `(features, label)`.
    pub fn fit(
        groups: &[Vec<([f32; NUM_FEATURES], i32)>],
        options: &TrainOptions,
    ) -> Result<Ranker, LearnError> {
        let rows: usize = groups.iter().map(Vec::len).sum();
        if rows == 0 {
            return Err(LearnError::Invalid("no training rows".into()));
        }
        let started = Instant::now();
        let trees = match options.learner {
            Learner::Boost => RankerTrees::Boost(fit_boost(groups, options)),
            Learner::Gbdt => RankerTrees::Gbdt(fit_gbdt(groups, options, rows)),
            Learner::Blend => RankerTrees::Blend {
                boosted: fit_boost(groups, options),
                gbdt: fit_gbdt(groups, options, rows),
            },
        };
        tracing::info!(
            learner = options.learner.name(),
            rows,
            seconds = started.elapsed().as_secs_f64(),
            "ranker fitted"
        );
        Ok(Ranker { trees })
    }

    /// The learner whose trees these are.
    pub fn learner(&self) -> Learner {
        match self.trees {
            RankerTrees::Boost(_) => Learner::Boost,
            RankerTrees::Gbdt(_) => Learner::Gbdt,
            RankerTrees::Blend { .. } => Learner::Blend,
        }
    }

    pub fn predict(&self, features: &[[f32; NUM_FEATURES]]) -> Vec<f32> {
        match &self.trees {
            RankerTrees::Boost(boosted) => features.iter().map(|f| boosted.margin(f)).collect(),
            RankerTrees::Gbdt(gbdt) => gbdt.margins(features),
            RankerTrees::Blend { boosted, gbdt } => gbdt
                .margins(features)
                .into_iter()
                .zip(features)
                .map(|(g, f)| 0.5 * (g + boosted.margin(f)))
                .collect(),
        }
    }
}

/// The boosting options [`Learner::Boost`] grows its trees with (mapping in [`Ranker`]).
pub fn boost_options(options: &TrainOptions) -> BoostOptions {
    BoostOptions {
        trees: options.trees,
        max_depth: options.max_depth as usize,
        learning_rate: options.learning_rate,
        l2: 0.0,
        min_child_hessian: 0.0,
        max_bins: 255,
        min_child_rows: options.min_leaf,
        monotone: if options.monotone {
            crate::features::MONOTONE.to_vec()
        } else {
            Vec::new()
        },
    }
}

fn fit_boost(groups: &[Vec<([f32; NUM_FEATURES], i32)>], options: &TrainOptions) -> Boosted {
    let rows: Vec<Vec<f32>> = groups.iter().flatten().map(|(f, _)| f.to_vec()).collect();
    let labels: Vec<Vec<i32>> = groups
        .iter()
        .map(|g| g.iter().map(|(_, l)| *l).collect())
        .collect();
    let flat: Vec<f32> = labels.iter().flatten().map(|&l| l as f32).collect();
    let objective = options.objective;
    Boosted::train_with_gradients(
        &rows,
        None,
        0.0,
        &boost_options(options),
        |margin, grad, hess| {
            // Ascent directions and hessians, as the gbdt trees get them; the loss's gradient is
            // their negation.
            let (ascent, h) = match objective {
                RankObjective::LambdaRank => lambdas(&labels, margin),
                RankObjective::Squared => (
                    flat.iter().zip(margin).map(|(y, s)| y - s).collect(),
                    vec![1.0; margin.len()],
                ),
            };
            for (((g, h_out), a), h) in grad.iter_mut().zip(hess.iter_mut()).zip(ascent).zip(h) {
                *g = -a;
                *h_out = h.max(1e-6);
            }
        },
    )
}

/// LambdaMART with the `gbdt` crate growing the trees: each tree fits target = lambda /
/// hessian with weight = hessian, whose weighted leaf mean is the Newton step
/// sum(lambda) / sum(hessian).
fn fit_gbdt(
    groups: &[Vec<([f32; NUM_FEATURES], i32)>],
    options: &TrainOptions,
    rows: usize,
) -> GbdtTrees {
    let mut data: DataVec = groups
        .iter()
        .flatten()
        .map(|(f, label)| Data::new_training_data(f.to_vec(), 1.0, *label as f32, None))
        .collect();
    let labels: Vec<Vec<i32>> = groups
        .iter()
        .map(|g| g.iter().map(|(_, l)| *l).collect())
        .collect();
    let mut scores = vec![0f32; rows];
    let all: Vec<usize> = (0..rows).collect();
    let mut trees = Vec::with_capacity(options.trees);
    for _ in 0..options.trees {
        let (grad, hess) = match options.objective {
            RankObjective::LambdaRank => lambdas(&labels, &scores),
            RankObjective::Squared => (
                data.iter().zip(&scores).map(|(d, s)| d.label - s).collect(),
                vec![1.0; rows],
            ),
        };
        for ((d, g), h) in data.iter_mut().zip(&grad).zip(&hess) {
            let h = h.max(1e-6);
            d.target = g / h;
            d.weight = h;
        }
        // The cache records weights when built, so it is rebuilt for each tree's hessians.
        let mut cache = TrainingCache::get_cache(NUM_FEATURES, &data, 2);
        let mut tree = DecisionTree::new();
        tree.set_feature_size(NUM_FEATURES);
        tree.set_max_depth(options.max_depth);
        tree.set_min_leaf_size(options.min_leaf);
        tree.set_loss(Loss::SquaredError);
        tree.fit_n(&data, &all, &mut cache);
        for (s, p) in scores.iter_mut().zip(tree.predict(&data)) {
            *s += options.learning_rate * p;
        }
        trees.push(tree);
    }
    GbdtTrees {
        learning_rate: options.learning_rate,
        trees,
    }
}

/// LambdaRank gradients (ascent direction) and hessians for every row, group by group.
fn lambdas(labels: &[Vec<i32>], scores: &[f32]) -> (Vec<f32>, Vec<f32>) {
    const SIGMA: f32 = 1.0;
    let mut grad = vec![0f32; scores.len()];
    let mut hess = vec![0f32; scores.len()];
    let mut offset = 0;
    for group in labels {
        let n = group.len();
        let s = &scores[offset..offset + n];
        // Current rank of each row (score descending, ties by row order).
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by(|&a, &b| s[b].total_cmp(&s[a]).then(a.cmp(&b)));
        let mut rank = vec![0usize; n];
        for (r, &i) in order.iter().enumerate() {
            rank[i] = r;
        }
        let discount = |r: usize| 1.0 / ((r + 2) as f32).log2();
        let mut ideal: Vec<i32> = group.clone();
        ideal.sort_unstable_by(|a, b| b.cmp(a));
        let idcg: f32 = ideal
            .iter()
            .enumerate()
            .map(|(r, &l)| l.max(0) as f32 * discount(r))
            .sum();
        if idcg > 0.0 {
            // Only pairs with different labels carry gradient; ratings are mostly zeros, so
            // looping from the (few) positives keeps this linear in the group size.
            let positives: Vec<usize> = (0..n).filter(|&i| group[i] > 0).collect();
            for &i in &positives {
                for j in 0..n {
                    if group[i] <= group[j] {
                        continue;
                    }
                    let delta = ((group[i] - group[j]) as f32
                        * (discount(rank[i]) - discount(rank[j])).abs())
                        / idcg;
                    let rho = precedent_ml::sigmoid(-(SIGMA * (s[i] - s[j])));
                    let lambda = SIGMA * rho * delta;
                    let h = SIGMA * SIGMA * rho * (1.0 - rho) * delta;
                    grad[offset + i] += lambda;
                    grad[offset + j] -= lambda;
                    hess[offset + i] += h;
                    hess[offset + j] += h;
                }
            }
        }
        offset += n;
    }
    (grad, hess)
}

/// Everything a learned pipeline loads from a model directory.
pub struct LearnedModel {
    pub manifest: ModelManifest,
    pub memory: Arc<RatingMemory>,
    pub ranker: Ranker,
}

/// Trains the memory and the ranker from rated queries. `embeddings` are the unit query
/// embeddings in `rated` order. Features of each training query are computed with its own
/// ratings left out of the memory, as they will be for a new query.
pub fn train(
    library: &Arc<Library>,
    data: &TrainingData,
    embedder_model_id: &str,
    trained_on: Vec<String>,
    options: &TrainOptions,
    mut progress: impl FnMut(usize, usize) + Send,
) -> Result<LearnedModel, LearnError> {
    let started = Instant::now();
    let (all_rated, all_embeddings) = (data.rated, data.embeddings);
    // The trees' queries: all of them unless some wordings vote only (then a copy without those,
    // which the default recipe never pays for).
    let (rated, embeddings): (Cow<[RatedQuery]>, Cow<[Vec<f32>]>) =
        if options.memory_wordings.is_empty() {
            (Cow::Borrowed(all_rated), Cow::Borrowed(all_embeddings))
        } else {
            let (r, e) = all_rated
                .iter()
                .zip(all_embeddings)
                .filter(|(q, _)| !options.votes_only(&q.wording))
                .map(|(q, e)| (q.clone(), e.clone()))
                .unzip();
            (Cow::Owned(r), Cow::Owned(e))
        };
    if rated.is_empty() && !options.memory_wordings.is_empty() {
        return Err(LearnError::Invalid(format!(
            "every query comes in a memory-only wording ({}): nothing left to train on",
            options.memory_wordings.join(", ")
        )));
    }
    let (rated, embeddings) = (&rated[..], &embeddings[..]);
    let mut memory = RatingMemory::fit(rated, embeddings, library, data.cuad_types.cloned())?;
    let training_ratings = memory.num_ratings();
    memory.add_vote_entries(
        all_rated
            .iter()
            .zip(all_embeddings)
            .filter(|(q, _)| options.votes_only(&q.wording)),
    );
    let memory = Arc::new(memory);
    let mut groups = {
        let extractor = FeatureExtractor::new(library.clone(), memory.clone());
        // Queries are independent given the memory: extracted on every core, in rating order.
        let done = std::sync::atomic::AtomicUsize::new(0);
        let progress = std::sync::Mutex::new(&mut progress);
        rated
            .par_iter()
            .zip(embeddings.par_iter())
            .map(|(q, e)| -> Result<Group, LearnError> {
                let judged = q.ratings.iter().map(|r| (r.1, r.2));
                let group = labelled_group(&extractor, q, e, judged, options.served_negatives)?;
                let n = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
                if let Ok(mut report) = progress.lock() {
                    report(n, rated.len());
                }
                Ok(group)
            })
            .collect::<Result<Vec<_>, LearnError>>()?
    };
    if let Some(also) = data.also {
        groups.extend(also.groups(&memory, rated, embeddings)?);
    }
    let dropped = crate::cv::group_columns(&options.without).map_err(LearnError::Invalid)?;
    crate::features::check_rule_names(&options.without_rules).map_err(LearnError::Invalid)?;
    let groups: Vec<Group> = groups
        .into_iter()
        .map(|g| {
            g.into_iter()
                .map(|(f, l)| (blank(f, &dropped), l))
                .collect()
        })
        .collect();
    let ranker = Ranker::fit(&groups, options)?;
    let manifest = ModelManifest {
        format: MODEL_FORMAT.into(),
        format_version: MODEL_FORMAT_VERSION,
        features: FEATURE_NAMES.iter().map(|s| s.to_string()).collect(),
        embedder_model_id: embedder_model_id.to_owned(),
        objective: options.objective.name().into(),
        trees: options.trees,
        max_depth: options.max_depth,
        learning_rate: options.learning_rate,
        training_queries: rated.len(),
        training_ratings,
        trained_on,
        train_seconds: started.elapsed().as_secs_f64(),
        without: options.without.clone(),
        without_rules: options.without_rules.clone(),
        wordings: rated
            .iter()
            .map(|q| q.wording.clone())
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .filter(|w| !w.is_empty())
            .collect(),
        memory_wordings: options.memory_wordings.clone(),
        served_negatives: options.served_negatives,
        monotone: options.monotone,
    };
    Ok(LearnedModel {
        manifest,
        memory,
        ranker,
    })
}

/// `features` with the `columns` set to zero (a feature group left out).
pub(crate) fn blank(mut features: [f32; NUM_FEATURES], columns: &[usize]) -> [f32; NUM_FEATURES] {
    for &c in columns {
        features[c] = 0.0;
    }
    features
}

/// What training learns from: rated queries, their unit embeddings (same order), and the CUAD
/// type profiles when CUAD data is available (they are not learned from ratings, so cross-validation
/// shares them across folds).
#[derive(Clone, Copy)]
pub struct TrainingData<'a> {
    pub rated: &'a [RatedQuery],
    pub embeddings: &'a [Vec<f32>],
    pub cuad_types: Option<&'a CuadTypeProfiles>,
    /// Reads clauses' CUAD types for queries that name one; applied after the trees, like the
    /// other query constraints, so it changes the cross-validation, not the trained model.
    pub clause_types: Option<&'a Arc<dyn crate::ClauseTypeReader>>,
    /// The same queries' judgements over a second library (clauses cut by `ingest`), learnt
    /// from too: each training query adds its list there to its list here.
    pub also: Option<&'a crate::LibraryJudgements>,
    /// Cross-validation only: values that replace one feature column, per fold and entry
    /// ([`crate::cv::ColumnOverride`]). Training a model ignores it.
    pub column_override: Option<&'a crate::cv::ColumnOverride>,
}

/// Probability at or above which the category classifier counts a clause as a member.
pub const CATEGORY_THRESHOLD: f32 = 0.5;

impl LearnedModel {
    /// The clause categories the model knows (the training queries' categories).
    pub fn categories(&self) -> &[String] {
        &self.memory.classifier.categories
    }

    /// Library rows of one clause category, for the `--category` search filter. The lawyers'
    /// own judgements decide where they exist (a clause a query of the category rated two stars
    /// or more is in, one it rated one star is out); the classifier decides for the rest: the
    /// category must be the clause's most probable one, at probability 0.5 or more. (The
    /// regressions are class-balanced, so neighbouring categories, e.g. indemnities next to
    /// liability caps, often both pass 0.5.)
    /// The category name is matched case-insensitively; an unknown one is an error naming
    /// those the model knows.
    pub fn category_members(
        &self,
        library: &Library,
        name: &str,
    ) -> Result<std::collections::HashSet<u32>, LearnError> {
        let classifier = &self.memory.classifier;
        let Some(c) = classifier.index_of(name) else {
            return Err(LearnError::Invalid(format!(
                "unknown clause category {name:?}; the learned model knows: {}",
                classifier.categories.join(", ")
            )));
        };
        let category = &classifier.categories[c];
        let mut judged: std::collections::HashMap<&str, bool> = Default::default();
        for q in self
            .memory
            .queries
            .iter()
            .filter(|q| q.category.as_ref() == Some(category))
        {
            for (id, label) in &q.ratings {
                *judged.entry(id.as_str()).or_insert(false) |= *label >= 1;
            }
        }
        let vectors = crate::features::library_vectors(library, "the category filter needs them")?;
        let mut members = std::collections::HashSet::new();
        for row in 0..library.len() as u32 {
            let id = library.store().id(row);
            let member = match id.and_then(|id| judged.get(id)) {
                Some(&rated_in) => rated_in,
                None => vectors.vector(row).is_some_and(|v| {
                    let p = classifier.probabilities(&v);
                    let best = p.iter().copied().fold(0.0, f32::max);
                    p[c] >= CATEGORY_THRESHOLD && p[c] >= best
                }),
            };
            if member {
                members.insert(row);
            }
        }
        Ok(members)
    }

    /// Writes the directory; each file is replaced atomically and the manifest goes last, so a
    /// crash mid-save leaves either the old manifest (refusing mismatched files is then the
    /// loader's job: they are checked against the manifest's counts) or the complete new model.
    pub fn save(&self, dir: &Path) -> Result<(), LearnError> {
        std::fs::create_dir_all(dir).map_err(|source| LearnError::Io {
            path: dir.to_owned(),
            source,
        })?;
        write_atomically(&dir.join("memory.json"), to_json(&*self.memory)?.as_bytes())?;
        write_atomically(&dir.join("ranker.json"), to_json(&self.ranker)?.as_bytes())?;
        write_atomically(
            &dir.join("manifest.json"),
            to_json(&self.manifest)?.as_bytes(),
        )?;
        Ok(())
    }

    /// Loads a model directory, refusing other formats, older versions and other feature
    /// layouts with a message that says what to do.
    pub fn load(dir: &Path) -> Result<LearnedModel, LearnError> {
        let bad = |message: String| LearnError::ModelDir {
            path: dir.to_owned(),
            message,
        };
        let read = |name: &str| -> Result<String, LearnError> {
            let path = dir.join(name);
            std::fs::read_to_string(&path).map_err(|source| LearnError::Io { path, source })
        };
        let manifest_text = read("manifest.json")?;
        let raw: serde_json::Value = serde_json::from_str(&manifest_text)
            .map_err(|e| bad(format!("manifest.json is not JSON ({e})")))?;
        if raw.get("format").and_then(|f| f.as_str()) != Some(MODEL_FORMAT) {
            return Err(bad(format!(
                "not a {MODEL_FORMAT} directory (manifest.json has no matching \"format\")"
            )));
        }
        let version = raw.get("format_version").and_then(|v| v.as_u64());
        let readable = u64::from(OLDEST_READ_FORMAT_VERSION)..=u64::from(MODEL_FORMAT_VERSION);
        if !version.is_some_and(|v| readable.contains(&v)) {
            return Err(bad(format!(
                "model format version {} is not a supported version ({OLDEST_READ_FORMAT_VERSION} to {MODEL_FORMAT_VERSION}); retrain it with `precedent train`",
                version.map_or("(missing)".to_string(), |v| v.to_string())
            )));
        }
        let manifest: ModelManifest =
            serde_json::from_value(raw).map_err(|e| bad(format!("manifest.json: {e}")))?;
        if manifest.features != FEATURE_NAMES {
            return Err(bad(
                "the model was trained on a different feature layout; retrain it with `precedent train`"
                    .into(),
            ));
        }
        let memory: RatingMemory = serde_json::from_str(&read("memory.json")?)
            .map_err(|e| bad(format!("memory.json: {e}")))?;
        if memory.queries.len() != manifest.training_queries {
            return Err(bad(format!(
                "memory.json holds {} queries but the manifest says {} (a partial save?); retrain",
                memory.queries.len(),
                manifest.training_queries
            )));
        }
        let ranker: Ranker = serde_json::from_str(&read("ranker.json")?)
            .map_err(|e| bad(format!("ranker.json: {e}")))?;
        crate::cv::group_columns(&manifest.without).map_err(bad)?;
        crate::features::check_rule_names(&manifest.without_rules).map_err(bad)?;
        Ok(LearnedModel {
            manifest,
            memory: Arc::new(memory),
            ranker,
        })
    }

    /// The trees' scores of candidates' features, with the groups the model was trained
    /// without blanked as they were in training.
    pub fn predict(&self, features: &[[f32; NUM_FEATURES]]) -> Vec<f32> {
        // Checked when the model was trained or loaded.
        let dropped = crate::cv::group_columns(&self.manifest.without).unwrap_or_default();
        if dropped.is_empty() {
            return self.ranker.predict(features);
        }
        let blanked: Vec<[f32; NUM_FEATURES]> =
            features.iter().map(|f| blank(*f, &dropped)).collect();
        self.ranker.predict(&blanked)
    }

    pub fn dir_exists(dir: &Path) -> bool {
        dir.join("manifest.json").is_file()
    }

    /// Share (0..1) of the clauses the model's training ratings name that `library` holds.
    ///
    /// The model learned on those clauses: its rating memory lends their ratings and its
    /// category centroids are their embeddings. On a library of other clauses (contracts
    /// ingested from CUAD, a tenth of ACORD) the memory lends nothing and the model was never
    /// validated, so a default pipeline should use it only at [`MIN_LIBRARY_FIT`] or more.
    pub fn library_fit(&self, library: &Library) -> f64 {
        let rated: std::collections::HashSet<&str> = self
            .memory
            .queries
            .iter()
            .flat_map(|q| q.ratings.iter().map(|(id, _)| id.as_str()))
            .collect();
        if rated.is_empty() {
            return 0.0;
        }
        let held = rated
            .iter()
            .filter(|id| library.store().row(id).is_some())
            .count();
        held as f64 / rated.len() as f64
    }
}

/// A learned model is the default ranking stage of a library holding at least this share of
/// the clauses it was trained on (see [`LearnedModel::library_fit`]).
pub const MIN_LIBRARY_FIT: f64 = 0.5;

/// The model the repository ships (trained on ACORD train + valid), relative to the project.
pub const SHIPPED_MODEL_DIR: &str = "models/acord-ranker";

/// Where a trained model is looked for when none is named: `$PRECEDENT_RANKER`, else
/// [`SHIPPED_MODEL_DIR`] in the current directory, the executable's, or any of their ancestors
/// ([`precedent_paths::search_roots`]: the CLI built in a checkout finds the checkout's
/// model from any folder).
pub fn default_model_dir() -> Option<PathBuf> {
    model_dir_from("PRECEDENT_RANKER", SHIPPED_MODEL_DIR)
}

/// The ranker the repository ships for libraries nobody rated (contracts you ingest): trained on
/// ACORD train + valid without the rating-memory features (`train --without rating-memory`),
/// which are empty on such a library. Cross-validated on the CUAD contracts ingested and
/// judged through `map-qrels` it beats both `hybrid+types` and the rated-library model
/// (BENCHMARKS.md, "ACORD's ratings on ingested contracts").
pub const SHIPPED_CONTRACTS_MODEL_DIR: &str = "models/contracts-ranker";

/// The learned model for libraries [`default_model_dir`]'s does not fit
/// ([`LearnedModel::library_fit`]): `$PRECEDENT_CONTRACTS_RANKER`, else
/// [`SHIPPED_CONTRACTS_MODEL_DIR`] found as [`default_model_dir`] finds its own.
pub fn default_contracts_model_dir() -> Option<PathBuf> {
    model_dir_from("PRECEDENT_CONTRACTS_RANKER", SHIPPED_CONTRACTS_MODEL_DIR)
}

fn model_dir_from(variable: &str, shipped: &str) -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os(variable) {
        return Some(PathBuf::from(dir));
    }
    precedent_paths::search_roots()
        .into_iter()
        .map(|a| a.join(shipped))
        .find(|d| LearnedModel::dir_exists(d))
}

fn to_json<T: Serialize>(value: &T) -> Result<String, LearnError> {
    serde_json::to_string(value).map_err(|e| LearnError::Invalid(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lambdas_push_better_labels_up_and_worse_down() {
        // One group, all scores equal: the 4-star row must get the largest positive gradient,
        // zeros negative gradients, and gradients of a group sum to zero.
        let labels = vec![vec![0, 4, 0, 2]];
        let (grad, hess) = lambdas(&labels, &[0.0; 4]);
        assert!(grad[1] > grad[3] && grad[3] > 0.0, "{grad:?}");
        assert!(grad[0] < 0.0 && grad[2] < 0.0, "{grad:?}");
        assert!(grad.iter().sum::<f32>().abs() < 1e-5);
        assert!(hess.iter().all(|h| *h > 0.0));
    }

    #[test]
    fn ranker_learns_an_ordering_and_survives_a_round_trip() {
        // The label is carried by feature 3 (noisy elsewhere): the ranker must order by it,
        // with either learner.
        let groups: Vec<Vec<([f32; NUM_FEATURES], i32)>> = (0..20i32)
            .map(|g| {
                (0..30i32)
                    .map(|i| {
                        let label = i % 5;
                        let mut f = [0f32; NUM_FEATURES];
                        f[3] = label as f32 + 0.1 * ((i * 7 + g) % 3) as f32;
                        f[0] = ((i * 13 + g * 5) % 11) as f32;
                        (f, label)
                    })
                    .collect()
            })
            .collect();
        for learner in [Learner::Boost, Learner::Gbdt, Learner::Blend] {
            let options = TrainOptions {
                trees: 30,
                min_leaf: 5,
                learner,
                ..TrainOptions::default()
            };
            let ranker = Ranker::fit(&groups, &options).expect("fit");
            assert_eq!(ranker.learner(), learner);
            let test: Vec<[f32; NUM_FEATURES]> = groups[0].iter().map(|(f, _)| *f).collect();
            let scores = ranker.predict(&test);
            let best = (0..test.len())
                .max_by(|&a, &b| scores[a].total_cmp(&scores[b]))
                .expect("rows");
            assert_eq!(groups[0][best].1, 4, "{learner:?}: {scores:?}");
            let json = serde_json::to_string(&ranker).expect("serialize");
            let back: Ranker = serde_json::from_str(&json).expect("deserialize");
            assert_eq!(back.learner(), learner);
            assert_eq!(back.predict(&test), scores);
        }
    }

    /// The blend's score is the mean of what its two learners, fitted alone on the same lists,
    /// would score.
    #[test]
    fn blend_scores_the_mean_of_its_two_learners() {
        let groups: Vec<Vec<([f32; NUM_FEATURES], i32)>> = (0..12i32)
            .map(|g| {
                (0..25i32)
                    .map(|i| {
                        let mut f = [0f32; NUM_FEATURES];
                        f[0] = ((i * 7 + g) % 13) as f32;
                        f[3] = (i % 5) as f32 + 0.3 * ((i + g) % 4) as f32;
                        (f, ((f[0] as i32 + i) % 5).min(4))
                    })
                    .collect()
            })
            .collect();
        let fit = |learner| {
            let options = TrainOptions {
                trees: 20,
                min_leaf: 5,
                learner,
                monotone: learner != Learner::Gbdt,
                ..TrainOptions::default()
            };
            Ranker::fit(&groups, &options).expect("fit")
        };
        let test: Vec<[f32; NUM_FEATURES]> = groups[1].iter().map(|(f, _)| *f).collect();
        let (boost, gbdt, blend) = (
            fit(Learner::Boost).predict(&test),
            fit(Learner::Gbdt).predict(&test),
            fit(Learner::Blend).predict(&test),
        );
        assert_ne!(boost, gbdt, "the two learners grow different trees");
        for ((b, g), m) in boost.iter().zip(&gbdt).zip(&blend) {
            assert!((0.5 * (b + g) - m).abs() < 1e-5, "{b} {g} {m}");
        }
    }

    /// Under `monotone`, the ranker's score never falls as BM25 (feature 0, constrained) rises,
    /// although the labels here fall in a band of it; without it the trees follow the band.
    #[test]
    fn monotone_trees_never_rank_a_clause_lower_for_more_evidence() {
        assert_eq!(crate::features::MONOTONE[0], 1, "bm25 rises with relevance");
        let groups: Vec<Vec<([f32; NUM_FEATURES], i32)>> = (0..20i32)
            .map(|g| {
                (0..40i32)
                    .map(|i| {
                        let bm25 = i as f32 / 4.0;
                        // Relevance rises with BM25 except in a band where it dips.
                        let dip = (4.0..6.0).contains(&bm25);
                        let label = ((bm25 / 2.5) as i32 - if dip { 2 } else { 0 }).clamp(0, 4);
                        let mut f = [0f32; NUM_FEATURES];
                        f[0] = bm25;
                        f[8] = ((i * 7 + g) % 5) as f32;
                        (f, label)
                    })
                    .collect()
            })
            .collect();
        let falls = |ranker: &Ranker| {
            let sweep: Vec<[f32; NUM_FEATURES]> = (0..40)
                .map(|i| {
                    let mut f = [0f32; NUM_FEATURES];
                    f[0] = i as f32 / 4.0;
                    f[8] = 2.0;
                    f
                })
                .collect();
            let scores = ranker.predict(&sweep);
            scores.windows(2).any(|w| w[1] < w[0] - 1e-6)
        };
        let options = TrainOptions {
            trees: 30,
            min_leaf: 5,
            learner: Learner::Boost,
            ..TrainOptions::default()
        };
        assert!(falls(&Ranker::fit(&groups, &options).expect("fit")));
        let monotone = TrainOptions {
            monotone: true,
            ..options
        };
        assert!(!falls(&Ranker::fit(&groups, &monotone).expect("fit")));
    }

    #[test]
    fn a_malformed_ranker_file_is_an_error_not_a_panic() {
        for text in [
            r#"{"learner":"boost","boosted":{"dim":3,"base":0.0,"trees":[]}}"#,
            r#"{"learner":"forest","boosted":{"dim":24,"base":0.0,"trees":[]}}"#,
            r#"{"learner":"boost","boosted":{"dim":24,"base":0.0,"trees":[{"nodes":[[99,0.5,1,2,0.0],[0,0,0,0,1.0],[0,0,0,0,2.0]]}]}}"#,
            r#"{"learning_rate":0.1}"#,
            r#"[1, 2]"#,
        ] {
            assert!(serde_json::from_str::<Ranker>(text).is_err(), "{text}");
        }
    }

    #[test]
    fn memory_only_wordings_join_the_vote_but_not_the_trees() {
        let dir = tempfile::tempdir().expect("tempdir");
        let lib = crate::test_support::library(
            dir.path(),
            &[
                ("a1", "Liability shall not exceed the fees paid."),
                ("a2", "The laws of the State of New York govern."),
                ("a3", "Each party shall indemnify the other."),
            ],
            true,
        );
        let query =
            |id: &str, text: &str, wording: &str, ratings: &[(&str, u32, i32)]| RatedQuery {
                id: id.into(),
                text: text.into(),
                wording: wording.into(),
                category: Some(id.into()),
                ratings: ratings.iter().map(|&(c, r, l)| (c.into(), r, l)).collect(),
            };
        let cap: &[(&str, u32, i32)] = &[("a1", 0, 4), ("a2", 1, 0)];
        let law: &[(&str, u32, i32)] = &[("a2", 1, 3), ("a3", 2, 0)];
        let rated = vec![
            query("cap", "cap on liability", "short", cap),
            query("law", "governing law", "short", law),
            query("cap", "a ceiling on what we owe", "own_x", cap),
            query("law", "which state's law applies", "own_x", law),
        ];
        let embeddings: Vec<Vec<f32>> = [0, 1, 0, 1].map(crate::test_support::unit).to_vec();
        let data = TrainingData {
            rated: &rated,
            embeddings: &embeddings,
            cuad_types: None,
            clause_types: None,
            also: None,
            column_override: None,
        };
        let options = TrainOptions {
            trees: 3,
            min_leaf: 1,
            memory_wordings: vec!["own_x".into()],
            ..TrainOptions::default()
        };
        let model = train(&lib, &data, "test", Vec::new(), &options, |_, _| {}).expect("model");
        // All four texts vote; only the two the trees learn from count as training ratings.
        assert_eq!(model.memory.queries.len(), 4);
        assert_eq!(model.manifest.training_ratings, 4);
        assert_eq!(model.manifest.wordings, vec!["short".to_string()]);
        assert_eq!(model.manifest.memory_wordings, vec!["own_x".to_string()]);
        let texts: Vec<&str> = model
            .memory
            .queries
            .iter()
            .map(|q| q.text.as_str())
            .collect();
        assert!(texts.contains(&"a ceiling on what we owe"), "{texts:?}");
        // Nothing left to train on is an error, not an empty ranker.
        let every = TrainOptions {
            memory_wordings: vec!["short".into(), "own_x".into()],
            ..options
        };
        let err = train(&lib, &data, "test", Vec::new(), &every, |_, _| {})
            .err()
            .expect("refused");
        assert!(
            err.to_string().contains("nothing left to train on"),
            "{err}"
        );
    }

    #[test]
    fn fitting_nothing_is_an_error() {
        assert!(Ranker::fit(&[], &TrainOptions::default()).is_err());
    }
}
