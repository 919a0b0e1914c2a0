//! The typer's second stage: re-scores every (candidate, category) from what the first stage
//! ([`crate::typer`]) thinks of the *whole contract*, so that confidences mean the same across
//! categories and contracts.
//!
//! Why: CUAD pools all (contract, category) questions into one precision-recall curve, and most
//! questions have no answer at all, so every prediction they make is a false positive. A
//! first-stage logit of 2 means something different for Governing Law (one clear sentence per
//! contract) than for Exclusivity, and a candidate ranked 5th under a confident first answer is
//! less likely right than the same logit alone suggests. The second stage is a logistic
//! regression over, per category: the candidate's logit, its gap to the contract's best logit for
//! the category, that best logit (does the contract contain the category at all?), the margin
//! between the best two, and the candidate's rank; shared across categories: the candidate's
//! kind (interacting with its logit), its length, its margin over its best other category, and how
//! many candidates of the contract the first stage calls positive.
//!
//! On top of that linear stage sit boosted regression trees ([`precedent_ml::boost`], log loss, boosted
//! from the linear logit so they fit its residual and the output stays a calibrated probability)
//! over each question's best candidates (the top 20 by the first stage or by the classifier; the
//! rest keep the linear confidence). Why: most false positives left at 80% recall are in
//! *answered* questions, at ranks 0-3: a different clause sharing the category's vocabulary. Which
//! one is right depends on interactions a linear model cannot express (the candidate's logit
//! against the contract's best, its rank, its kind and length, whether the classifier agrees, how
//! many near-ties there are, where it sits in the contract). The nested CV measured its gain over a linear
//! second stage (docs/experiments/cuad-typer.md), spread over most categories.
//!
//! The trees also read what the candidate's section is about and what its surroundings score:
//! whether its section heading (or the parent heading) names the category ([`crate::sections`]),
//! and the first-stage and classifier logits of its neighbours and of the best other sentence of
//! its section. Why: a sentence in the middle of "8.2 Exclusivity." need not repeat the
//! category's words, and the first stage, which reads one candidate at a time, cannot see that it
//! sits there. A second set of trees fitted with a pairwise loss within each question is averaged
//! in ([`TreeStage::rank_weight`]), because the errors left are mostly the order of a question's
//! near-ties. Together they raised the nested CV's AUPR and P@80R on the index fold
//! assignment, confirmed on a shuffled one (docs/experiments/cuad-typer.md).
//!
//! It is fitted on *out-of-fold* first-stage logits (a first stage scores its own training
//! contracts far too confidently), so inside a cross-validation it is refit per outer fold from
//! inner out-of-fold logits (`precedent_eval::cuad`). The shipped weights (`models/clause-typer/second_stage.json`,
//! compiled in) are fitted on the out-of-fold logits of all 398 shared contracts by
//! `precedent eval-cuad --second-stage-out FILE`; with both sets of trees they are about a megabyte, and the typer's
//! training (and its cache) stays one first-stage fit. The heading and neighbour features are
//! computed from the contract's text and candidates alone ([`Sections::of`]), the same way at
//! inference ([`crate::typer::ClauseTyper::contract_scores`]) as in the cross-validation.

use precedent_ml::{fit_logistic, shuffled, sigmoid, Example, Sgd};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::candidates::{Candidate, Kind};
use crate::dense::DenseClassifier;
use crate::novelty::Novelty;
use crate::sections::Sections;
use crate::N_CATEGORIES;
use precedent_ml::boost::{BoostOptions, Boosted};

/// Bumped when the features change, or the first stage it reads (older weight files are
/// refused): 7 is fitted on `TYPER_VERSION` 3 (date and document-name candidates, labels by
/// words wherever they stand).
pub const SECOND_STAGE_VERSION: u32 = 7;

/// Features owned by each category: its own Platt scaling and contract-level evidence (6), the
/// candidate's logits for every category, and the contract's best logit for every category
/// (related categories: a date that is clearly the Agreement Date, a contract with a License
/// Grant).
const OWN: usize = 6;
/// Per category, what the single-clause classifier ([`crate::clause_classifier`]) says: the
/// candidate's logit, its gap to the contract's best, that best, and the candidate's rank.
const CLAUSE: usize = 4;
const PER_CATEGORY: usize = OWN + 2 * N_CATEGORIES + KINDS + CLAUSE;
const KINDS: usize = 7;
/// Category-independent features (the last: the classifier's margin of the category over the
/// candidate's best other category).
const SHARED: usize = OWN + 2 * KINDS + 4 + CLAUSE + 1;
pub const STACK_DIM: usize = N_CATEGORIES * PER_CATEGORY + SHARED;

/// Only each question's best candidates (by first-stage logit) are training rows: the ones that
/// can become predictions. The model is applied to all candidates (rank features saturate).
const TRAIN_TOP: u32 = 100;

/// Logits are clipped to this range before scaling (a saturated sigmoid carries no more signal).
const LOGIT_CLIP: f32 = 20.0;

/// What the first stage says about one contract as a whole: per category, each candidate's rank
/// and the best logits; per candidate, its best two categories.
struct ContractView<'a> {
    candidates: &'a [Candidate],
    logits: &'a [[f32; N_CATEGORIES]],
    /// `ranks[i][k]`: 0 for the contract's best candidate of category k.
    ranks: Vec<[u32; N_CATEGORIES]>,
    best: [f32; N_CATEGORIES],
    second: [f32; N_CATEGORIES],
    positives: [f32; N_CATEGORIES],
    /// Per category, how many candidates are within one logit of the best (near-ties).
    near_best: [f32; N_CATEGORIES],
    /// End of the last candidate (the contract's length, near enough).
    length: usize,
    /// Per candidate: (best category, best logit, second-best logit).
    top_categories: Vec<(usize, f32, f32)>,
    clause: Option<ClauseView<'a>>,
    /// The sentence-embedding classifier's logits ([`crate::dense`]), seen like the clause
    /// classifier's.
    dense: Option<ClauseView<'a>>,
    /// Per candidate: what its section's heading and parent heading name, and (for the context
    /// features) its section.
    sections: Option<&'a Sections>,
    /// Per candidate: the previous and next candidate of the same kind (by start).
    neighbours: Vec<(Option<u32>, Option<u32>)>,
    /// Per section and category: the best two sentences' (candidate, logit), first stage and
    /// classifier.
    section_best: Vec<[[(u32, f32); 2]; N_CATEGORIES]>,
    section_best_clause: Vec<[[(u32, f32); 2]; N_CATEGORIES]>,
}

/// Per section of `sections` and category, the two sentences with the highest `logits`.
fn best_per_section(
    candidates: &[Candidate],
    sections: Option<&Sections>,
    logits: &[[f32; N_CATEGORIES]],
) -> Vec<[[(u32, f32); 2]; N_CATEGORIES]> {
    let Some(sections) = sections else {
        return Vec::new();
    };
    let none = (u32::MAX, -LOGIT_CLIP);
    let mut best = vec![[[none; 2]; N_CATEGORIES]; sections.naming.len()];
    for (i, c) in candidates.iter().enumerate() {
        if c.kind != Kind::Sentence {
            continue;
        }
        let Some(b) = sections
            .section
            .get(i)
            .copied()
            .flatten()
            .and_then(|s| best.get_mut(s as usize))
        else {
            continue;
        };
        for (k, pair) in b.iter_mut().enumerate() {
            let z = clip(logits[i][k]);
            if z > pair[0].1 {
                pair[1] = pair[0];
                pair[0] = (i as u32, z);
            } else if z > pair[1].1 {
                pair[1] = (i as u32, z);
            }
        }
    }
    best
}

/// The best logit of category `k` among the other sentences of candidate `i`'s section.
fn section_max(
    best: &[[[(u32, f32); 2]; N_CATEGORIES]],
    section: Option<u32>,
    i: usize,
    k: usize,
) -> f32 {
    section
        .and_then(|s| best.get(s as usize))
        .map_or(-LOGIT_CLIP, |b| {
            let [first, second] = b[k];
            if first.0 as usize == i {
                second.1
            } else {
                first.1
            }
        })
}

/// The single-clause classifier's logits of a contract's candidates, seen the same way.
struct ClauseView<'a> {
    logits: &'a [[f32; N_CATEGORIES]],
    ranks: Vec<[u32; N_CATEGORIES]>,
    best: [f32; N_CATEGORIES],
    positives: [f32; N_CATEGORIES],
    top_categories: Vec<(usize, f32, f32)>,
}

/// Per category, each candidate's rank (0 = highest logit), the best and second-best logits.
fn rank_by_category(
    logits: &[[f32; N_CATEGORIES]],
) -> (
    Vec<[u32; N_CATEGORIES]>,
    [f32; N_CATEGORIES],
    [f32; N_CATEGORIES],
) {
    let n = logits.len();
    let mut ranks = vec![[0u32; N_CATEGORIES]; n];
    let mut best = [-LOGIT_CLIP; N_CATEGORIES];
    let mut second = [-LOGIT_CLIP; N_CATEGORIES];
    let mut order: Vec<usize> = (0..n).collect();
    for k in 0..N_CATEGORIES {
        order.sort_by(|&a, &b| logits[b][k].total_cmp(&logits[a][k]).then(a.cmp(&b)));
        for (rank, &i) in order.iter().enumerate() {
            ranks[i][k] = rank as u32;
        }
        if let Some(&i) = order.first() {
            best[k] = clip(logits[i][k]);
        }
        if let Some(&i) = order.get(1) {
            second[k] = clip(logits[i][k]);
        }
    }
    (ranks, best, second)
}

/// Per candidate: (best category, best logit, second-best logit), clipped.
fn top_categories(logits: &[[f32; N_CATEGORIES]]) -> Vec<(usize, f32, f32)> {
    logits
        .iter()
        .map(|l| {
            let mut first = (0, f32::NEG_INFINITY);
            let mut second = f32::NEG_INFINITY;
            for (k, &z) in l.iter().enumerate() {
                if z > first.1 {
                    second = first.1;
                    first = (k, z);
                } else if z > second {
                    second = z;
                }
            }
            (first.0, clip(first.1), clip(second))
        })
        .collect()
}

/// The best logit among the categories other than `k`, from a candidate's
/// [`top_categories`] entry: what the candidate's logit for `k` must beat.
fn best_other((top, first, second): (usize, f32, f32), k: usize) -> f32 {
    if top == k {
        second
    } else {
        first
    }
}

/// Per category, how many candidates' logits pass `keep(category, logit)`.
fn count_per_category(
    logits: &[[f32; N_CATEGORIES]],
    keep: impl Fn(usize, f32) -> bool,
) -> [f32; N_CATEGORIES] {
    let mut counts = [0f32; N_CATEGORIES];
    for (k, n) in counts.iter_mut().enumerate() {
        *n = logits.iter().filter(|l| keep(k, l[k])).count() as f32;
    }
    counts
}

impl<'a> ContractView<'a> {
    fn new(
        candidates: &'a [Candidate],
        logits: &'a [[f32; N_CATEGORIES]],
        clause: Option<&'a [[f32; N_CATEGORIES]]>,
        sections: Option<&'a Sections>,
        dense: Option<&'a [[f32; N_CATEGORIES]]>,
    ) -> Self {
        let sections = sections.filter(|s| s.section.len() == candidates.len());
        let mut order: Vec<usize> = (0..candidates.len()).collect();
        order.sort_by_key(|&i| (candidates[i].kind.index(), candidates[i].span.start, i));
        let mut neighbours = vec![(None, None); candidates.len()];
        for w in order.windows(2) {
            if candidates[w[0]].kind == candidates[w[1]].kind {
                neighbours[w[1]].0 = Some(w[0] as u32);
                neighbours[w[0]].1 = Some(w[1] as u32);
            }
        }
        let section_best = best_per_section(candidates, sections, logits);
        let section_best_clause = clause
            .map(|c| best_per_section(candidates, sections, c))
            .unwrap_or_default();
        let (ranks, best, second) = rank_by_category(logits);
        let positives = count_per_category(logits, |_, z| z > 0.0);
        let near_best = count_per_category(logits, |k, z| clip(z) >= best[k] - 1.0);
        let length = candidates.iter().map(|c| c.span.end).max().unwrap_or(0);
        let view_of = |logits: &'a [[f32; N_CATEGORIES]]| {
            let (ranks, best, _) = rank_by_category(logits);
            ClauseView {
                logits,
                ranks,
                best,
                positives: count_per_category(logits, |_, z| z > 0.0),
                top_categories: top_categories(logits),
            }
        };
        let clause = clause.map(view_of);
        let dense = dense.filter(|d| d.len() == candidates.len()).map(view_of);
        ContractView {
            candidates,
            logits,
            ranks,
            best,
            second,
            positives,
            near_best,
            length,
            top_categories: top_categories(logits),
            clause,
            dense,
            sections,
            neighbours,
            section_best,
            section_best_clause,
        }
    }

    /// The features of candidate `i` for category `k` (index, value), indices ascending.
    fn features(&self, i: usize, k: usize, out: &mut Vec<(u32, f32)>) {
        out.clear();
        let z = clip(self.logits[i][k]);
        let own = [
            1.0,
            z / 4.0,
            (z - self.best[k]) / 4.0,
            self.best[k] / 4.0,
            (1.0 + self.ranks[i][k] as f32).ln() / 3.0,
            (self.best[k] - self.second[k]) / 4.0,
        ];
        let base = (k * PER_CATEGORY) as u32;
        out.extend(own.iter().enumerate().map(|(j, &v)| (base + j as u32, v)));
        let related = base + OWN as u32;
        out.extend(
            self.logits[i]
                .iter()
                .enumerate()
                .map(|(j, &v)| (related + j as u32, clip(v) / 4.0)),
        );
        let profile = related + N_CATEGORIES as u32;
        out.extend(
            self.best
                .iter()
                .enumerate()
                .map(|(j, &v)| (profile + j as u32, v / 4.0)),
        );
        let kind = self.candidates[i].kind.index() as u32;
        out.push((profile + N_CATEGORIES as u32 + kind, 1.0));
        let clause_base = profile + (N_CATEGORIES + KINDS) as u32;
        let clause = self.clause.as_ref().map(|c| {
            let z = clip(c.logits[i][k]);
            let margin = z - best_other(c.top_categories[i], k);
            let own = [
                z / 4.0,
                (z - c.best[k]) / 4.0,
                c.best[k] / 4.0,
                (1.0 + c.ranks[i][k] as f32).ln() / 3.0,
            ];
            (own, margin)
        });
        if let Some((own, _)) = &clause {
            out.extend(
                own.iter()
                    .enumerate()
                    .map(|(j, &v)| (clause_base + j as u32, v)),
            );
        }
        let shared = (N_CATEGORIES * PER_CATEGORY) as u32;
        out.extend(own.iter().enumerate().map(|(j, &v)| (shared + j as u32, v)));
        let kinds = shared + OWN as u32;
        out.push((kinds + kind, 1.0));
        out.push((kinds + KINDS as u32 + kind, z / 4.0));
        let rest = kinds + 2 * KINDS as u32;
        let other = best_other(self.top_categories[i], k);
        let span = &self.candidates[i].span;
        out.extend([
            (rest, (1.0 + span.len() as f32).ln() / 8.0),
            (rest + 1, (z - other) / 4.0),
            (rest + 2, (1.0 + self.positives[k]).ln() / 3.0),
            (rest + 3, (1.0 + self.candidates.len() as f32).ln() / 8.0),
        ]);
        if let Some((own, margin)) = &clause {
            let base = rest + 4;
            out.extend(own.iter().enumerate().map(|(j, &v)| (base + j as u32, v)));
            out.push((base + CLAUSE as u32, margin / 4.0));
        }
    }
}

/// Dense features of the trees ([`TreeStage`]): the linear stage's inputs that are about this
/// (candidate, category) and its contract, unscaled (trees do not care), plus the category's prior
/// and the linear stage's logit (22); whether the candidate's section heading and its parent
/// heading name the category ([`crate::sections`], 2); the first-stage and classifier logits of
/// the previous and next candidate of the same kind and the best of each over the other sentences
/// of its section (6).
pub const TREE_DIM: usize = 30;

/// Trees fitted with the sentence-embedding classifier's logits ([`crate::dense`]) read 5 more
/// features after [`TREE_DIM`]: its logit for the category, the gap to the contract's best, that
/// best, the log rank, and the margin over the candidate's best other category. Why: every other
/// feature is bag-of-words, and what is left at 80% recall is clauses sharing the category's
/// vocabulary.
pub const DENSE_TREE_DIM: usize = 5;
const FULL_TREE_DIM: usize = TREE_DIM + DENSE_TREE_DIM;

impl ContractView<'_> {
    /// Whether candidate `i` is among the contract's best `top` for category `k` by the first
    /// stage or by the clause classifier: the rows the trees are fitted on and re-score.
    fn in_top(&self, i: usize, k: usize, top: u32) -> bool {
        self.ranks[i][k] < top || self.clause.as_ref().is_some_and(|c| c.ranks[i][k] < top)
    }

    fn dense(&self, i: usize, k: usize, prior: f32, linear: f32) -> [f32; FULL_TREE_DIM] {
        let z = clip(self.logits[i][k]);
        let top = self.top_categories[i].0;
        let other = best_other(self.top_categories[i], k);
        let mut x = [0f32; FULL_TREE_DIM];
        x[..10].copy_from_slice(&[
            z,
            z - self.best[k],
            self.best[k],
            (1.0 + self.ranks[i][k] as f32).ln(),
            self.best[k] - self.second[k],
            self.candidates[i].kind.index() as f32,
            (1.0 + self.candidates[i].span.len() as f32).ln(),
            z - other,
            (1.0 + self.positives[k]).ln(),
            (1.0 + self.candidates.len() as f32).ln(),
        ]);
        if let Some(c) = &self.clause {
            let zc = clip(c.logits[i][k]);
            let margin = zc - best_other(c.top_categories[i], k);
            x[10..16].copy_from_slice(&[
                zc,
                zc - c.best[k],
                c.best[k],
                (1.0 + c.ranks[i][k] as f32).ln(),
                margin,
                (1.0 + c.positives[k]).ln(),
            ]);
        }
        x[16] = prior;
        x[17] = linear;
        x[18] = k as f32;
        // Does the first stage's best category for this candidate agree with the classifier's?
        x[19] = self
            .clause
            .as_ref()
            .map_or(0.0, |c| f32::from(u8::from(c.top_categories[i].0 == top)));
        // Where in the contract (boilerplate sits late, parties and dates early).
        x[20] = self.candidates[i].span.start as f32 / self.length.max(1) as f32;
        x[21] = (1.0 + self.near_best[k]).ln();
        let section = self
            .sections
            .and_then(|s| s.section.get(i).copied().flatten());
        // Does the candidate's section heading (and its parent) name the category? A heading
        // says which clause a section is about, which the second and later sentences of a
        // section do not repeat.
        if let Some(n) = section.and_then(|s| self.sections?.naming.get(s as usize)) {
            x[22] = n[0][k];
            x[23] = n[1][k];
        }
        // The neighbouring candidates of the same kind, and the best other sentence of the
        // section: section-level evidence without the words.
        let (prev, next) = self.neighbours[i];
        let first = |j: Option<u32>| j.map_or(-LOGIT_CLIP, |j| clip(self.logits[j as usize][k]));
        x[24] = first(prev);
        x[25] = first(next);
        x[28] = section_max(&self.section_best, section, i, k);
        if let Some(c) = &self.clause {
            let of = |j: Option<u32>| j.map_or(-LOGIT_CLIP, |j| clip(c.logits[j as usize][k]));
            x[26] = of(prev);
            x[27] = of(next);
            x[29] = section_max(&self.section_best_clause, section, i, k);
        }
        // A semantic view: does the embedding of the candidate read like the category's clauses?
        match &self.dense {
            Some(d) => {
                let zd = clip(d.logits[i][k]);
                x[TREE_DIM..].copy_from_slice(&[
                    zd,
                    zd - d.best[k],
                    d.best[k],
                    (1.0 + d.ranks[i][k] as f32).ln(),
                    zd - best_other(d.top_categories[i], k),
                ]);
            }
            None => x[TREE_DIM..].fill(-LOGIT_CLIP),
        }
        x
    }
}

/// A training row: sparse features and whether the candidate matches an annotation.
type Row = (Vec<(u32, f32)>, bool);

/// A training row of the trees: dense features, whether the candidate matches an annotation, the
/// linear stage's logit (the trees' offset) and the question (contract, category) it belongs to.
type TreeRow = (Vec<f32>, bool, f32, u32);

fn clip(z: f32) -> f32 {
    z.clamp(-LOGIT_CLIP, LOGIT_CLIP)
}

/// One contract's first-stage output and, for training, its candidates' labels.
#[derive(Clone, Copy)]
pub struct StackInput<'a> {
    pub candidates: &'a [Candidate],
    pub logits: &'a [[f32; N_CATEGORIES]],
    /// Bit `k` set when the candidate matches an annotation of category `k` (training only).
    pub bits: &'a [u64],
    /// The single-clause classifier's logits of the candidates, from a classifier that did not
    /// see this contract when training ([`crate::selection::fold_clause_logits`]); `None` leaves
    /// those features out.
    pub clause: Option<&'a [[f32; N_CATEGORIES]]>,
    /// The contract's sections ([`Sections::of`]); `None` leaves the heading and section
    /// features out.
    pub sections: Option<&'a Sections>,
    /// The sentence-embedding classifier's logits ([`crate::dense`]), out-of-fold like
    /// `clause`; the trees read them only when every training contract has them.
    pub dense: Option<&'a [[f32; N_CATEGORIES]]>,
}

/// Training settings of the second stage.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct StackOptions {
    pub epochs: usize,
    pub learning_rate: f32,
    pub l2: f32,
    pub seed: u64,
    /// Boosted trees over the linear stage (`None`: the linear stage alone).
    #[serde(default)]
    pub trees: Option<TreeStage>,
}

impl Default for StackOptions {
    fn default() -> Self {
        StackOptions {
            epochs: 4,
            learning_rate: 0.05,
            l2: 1e-6,
            seed: 7,
            trees: Some(TreeStage::default()),
        }
    }
}

/// How the trees sit on the linear stage.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TreeStage {
    pub boost: BoostOptions,
    /// Rows: each question's best `top` candidates by the first stage or the classifier.
    pub top: u32,
    /// Boost from the linear stage's logit (the trees fit its residual) instead of from the
    /// base rate.
    pub from_linear: bool,
    /// The novelty step is fitted on second-stage scores of the training contracts; trees score
    /// their own training rows far more confidently than new ones, so with `n > 1` those scores
    /// come from `n`-fold cross-fitted second stages instead (0 or 1: in-sample; the
    /// cross-fitting is `precedent_eval::cuad::novelty_training_scores`).
    #[serde(default)]
    pub novelty_folds: usize,
    /// Weight `w` of a second set of trees fitted with a pairwise (RankNet) loss within each
    /// question: the trees' margin is `(1 - w)` x the log-loss trees' + `w` x the pairwise
    /// trees'; 0 fits no pairwise trees. Why: what is left at 80% recall is mostly which of a
    /// question's near-ties is the answer, which the pairwise loss targets directly, while the
    /// log-loss trees keep the output on a calibrated scale for the pooled curve (the nested CV
    /// chose w = 0.5 on two fold assignments; docs/experiments/cuad-typer.md).
    pub rank_weight: f32,
}

impl Default for TreeStage {
    fn default() -> Self {
        TreeStage {
            boost: BoostOptions::default(),
            top: 20,
            from_linear: true,
            novelty_folds: 0,
            rank_weight: 0.5,
        }
    }
}

/// The fitted trees and the per-category priors they read.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Trees {
    pub stage: TreeStage,
    /// Per category: share of training contracts with an answer.
    pub prior: Vec<f32>,
    pub model: Boosted,
    /// Trees fitted with a within-question pairwise loss from the linear logit, weighted by
    /// [`TreeStage::rank_weight`] against `model`; `None` when that weight is 0.
    pub rank: Option<Boosted>,
}

/// The fitted second stage.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SecondStage {
    pub version: u32,
    pub options: StackOptions,
    /// Training rows and positives (for the record).
    pub rows: usize,
    pub positives: usize,
    /// What it was fitted on.
    pub data: String,
    pub weights: Vec<f32>,
    /// The novelty step fitted on this stage's selected predictions ([`crate::novelty`]);
    /// `None` keeps the second stage's confidences.
    #[serde(default)]
    pub novelty: Option<Novelty>,
    /// Boosted trees re-scoring each question's best candidates ([`TreeStage`]).
    #[serde(default)]
    pub trees: Option<Trees>,
    /// The sentence-embedding view the trees read ([`crate::dense`]), fitted on all the
    /// training contracts; `Some` exactly when the trees were fitted with its logits.
    #[serde(default)]
    pub dense: Option<DenseView>,
}

/// The sentence-embedding classifier a dense second stage reads, and the embedding it was fitted
/// on (a review must embed with the same model and window, or its logits mean nothing).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct DenseView {
    /// The embedding model's name ([`crate::dense::SentenceEmbedder::model_id`]).
    pub model: String,
    /// Token window of the sentences ([`crate::dense::SENTENCE_MAX_TOKENS`]).
    pub max_tokens: usize,
    pub classifier: DenseClassifier,
}

/// The weights shipped with the typer (see the module docs for how they are made).
const SHIPPED: &str = include_str!("../../../models/clause-typer/second_stage.json");

/// The second stage `precedent review` uses when MiniLM is at hand: the same stages fitted with
/// the sentence-embedding view, which it carries (`precedent eval-cuad --dense
/// --second-stage-out FILE`).
const SHIPPED_DENSE: &str = include_str!("../../../models/clause-typer/second_stage_dense.json");

impl SecondStage {
    /// The compiled-in second stage.
    pub fn shipped() -> Self {
        Self::from_json(SHIPPED).expect("second_stage.json matches this build (tested)")
    }

    /// The compiled-in second stage that reads the sentence-embedding view
    /// ([`SecondStage::dense`] is `Some`).
    pub fn shipped_dense() -> Self {
        Self::from_json(SHIPPED_DENSE).expect("second_stage_dense.json matches this build (tested)")
    }

    /// Reads a weight file written by [`Self::to_json`], refusing other feature versions.
    pub fn from_json(json: &str) -> anyhow::Result<Self> {
        let stage: SecondStage = serde_json::from_str(json)?;
        anyhow::ensure!(
            stage.version == SECOND_STAGE_VERSION
                && stage.weights.len() == STACK_DIM
                && stage
                    .novelty
                    .as_ref()
                    .is_none_or(|n| n.weights.len() == crate::novelty::NOVELTY_DIM),
            "second stage of version {} with {} weights; this build needs version {SECOND_STAGE_VERSION} with {STACK_DIM}",
            stage.version,
            stage.weights.len()
        );
        if let Some(trees) = stage.novelty.as_ref().and_then(|n| n.trees.as_ref()) {
            trees
                .validate(crate::novelty::NOVELTY_TREE_DIM)
                .map_err(|e| anyhow::anyhow!("novelty step: {e}"))?;
        }
        if let Some(trees) = &stage.trees {
            anyhow::ensure!(
                trees.prior.len() == N_CATEGORIES,
                "second-stage trees with {} category priors, expected {N_CATEGORIES}",
                trees.prior.len()
            );
            let dim = trees.model.dim;
            let expected = if stage.dense.is_some() {
                FULL_TREE_DIM
            } else {
                TREE_DIM
            };
            anyhow::ensure!(
                dim == expected,
                "second-stage trees over {dim} features, expected {expected} ({})",
                if stage.dense.is_some() {
                    "with the sentence-embedding view"
                } else {
                    "without a sentence-embedding view"
                }
            );
            trees.model.validate(dim)?;
            if let Some(rank) = &trees.rank {
                rank.validate(dim)?;
            }
        }
        if let Some(view) = &stage.dense {
            view.classifier.validate()?;
        }
        Ok(stage)
    }

    /// One line of JSON (the shipped file stays a one-line diff when refitted).
    pub fn to_json(&self) -> String {
        let mut json = serde_json::to_string(self).expect("plain data serializes");
        json.push('\n');
        json
    }

    /// Fits on out-of-fold first-stage logits of labelled contracts. Deterministic.
    pub fn train(inputs: &[StackInput], options: &StackOptions, data: &str) -> Self {
        let per_contract: Vec<Vec<Row>> = inputs
            .par_iter()
            .map(|input| {
                let view = ContractView::new(
                    input.candidates,
                    input.logits,
                    input.clause,
                    input.sections,
                    None,
                );
                let mut rows = Vec::new();
                let mut buffer = Vec::new();
                for i in 0..input.candidates.len() {
                    for k in 0..N_CATEGORIES {
                        if view.ranks[i][k] >= TRAIN_TOP {
                            continue;
                        }
                        view.features(i, k, &mut buffer);
                        rows.push((buffer.clone(), (input.bits[i] >> k) & 1 == 1));
                    }
                }
                rows
            })
            .collect();
        let rows: Vec<&Row> = per_contract.iter().flatten().collect();
        let order = shuffled(rows.len(), options.seed);
        let sgd = Sgd::new(options.epochs, options.learning_rate, options.l2);
        let (w, _) = fit_logistic(STACK_DIM, &order, &sgd, |r| {
            let (x, y) = rows[r];
            Some(Example {
                features: x.iter().map(|&(j, v)| (j as usize, v)),
                label: *y,
                weight: 1.0,
            })
        });
        let mut stage = SecondStage {
            version: SECOND_STAGE_VERSION,
            options: options.clone(),
            rows: rows.len(),
            positives: rows.iter().filter(|(_, y)| *y).count(),
            data: data.to_owned(),
            weights: w,
            novelty: None,
            trees: None,
            dense: None,
        };
        if let Some(tree_stage) = &options.trees {
            stage.trees = Some(stage.train_trees(inputs, tree_stage));
        }
        stage
    }

    /// The linear stage's logit of candidate `i` for category `k`.
    fn linear(&self, view: &ContractView, i: usize, k: usize, buffer: &mut Vec<(u32, f32)>) -> f32 {
        view.features(i, k, buffer);
        buffer
            .iter()
            .map(|&(j, v)| self.weights[j as usize] * v)
            .sum()
    }

    /// Fits the trees on the training contracts' top rows, reading the (already fitted) linear
    /// stage's in-sample logits.
    fn train_trees(&self, inputs: &[StackInput], stage: &TreeStage) -> Trees {
        let mut prior = vec![0f32; N_CATEGORIES];
        for input in inputs {
            let any = input.bits.iter().fold(0u64, |a, &b| a | b);
            for (k, p) in prior.iter_mut().enumerate() {
                *p += ((any >> k) & 1) as f32;
            }
        }
        prior
            .iter_mut()
            .for_each(|p| *p /= inputs.len().max(1) as f32);
        let width = if !inputs.is_empty() && inputs.iter().all(|i| i.dense.is_some()) {
            FULL_TREE_DIM
        } else {
            TREE_DIM
        };
        let per_contract: Vec<Vec<TreeRow>> = inputs
            .par_iter()
            .enumerate()
            .map(|(ci, input)| {
                let view = ContractView::new(
                    input.candidates,
                    input.logits,
                    input.clause,
                    input.sections,
                    input.dense,
                );
                let mut buffer = Vec::new();
                let mut rows = Vec::new();
                for i in 0..input.candidates.len() {
                    for (k, &p) in prior.iter().enumerate() {
                        if !view.in_top(i, k, stage.top) {
                            continue;
                        }
                        let z = self.linear(&view, i, k, &mut buffer);
                        rows.push((
                            view.dense(i, k, p, z)[..width].to_vec(),
                            (input.bits[i] >> k) & 1 == 1,
                            z,
                            (ci * N_CATEGORIES + k) as u32,
                        ));
                    }
                }
                rows
            })
            .collect();
        let all: Vec<TreeRow> = per_contract.into_iter().flatten().collect();
        let labels: Vec<bool> = all.iter().map(|r| r.1).collect();
        let offsets: Vec<f32> = all.iter().map(|r| r.2).collect();
        let groups: Vec<u32> = all.iter().map(|r| r.3).collect();
        let rows: Vec<Vec<f32>> = all.into_iter().map(|r| r.0).collect();
        let model = Boosted::train(
            &rows,
            &labels,
            stage.from_linear.then_some(offsets.as_slice()),
            &stage.boost,
        );
        // Groups are questions (contract, category); a question without an answer, or without a
        // wrong candidate, gives no pair.
        let rank = (stage.rank_weight > 0.0).then(|| {
            Boosted::train_grouped(&rows, &labels, Some(&offsets), Some(&groups), &stage.boost)
        });
        Trees {
            stage: stage.clone(),
            prior,
            model,
            rank,
        }
    }

    /// Confidence of every candidate for every category, from the first stage's logits of the
    /// whole contract.
    pub fn apply(
        &self,
        candidates: &[Candidate],
        logits: &[[f32; N_CATEGORIES]],
        clause: Option<&[[f32; N_CATEGORIES]]>,
        sections: Option<&Sections>,
    ) -> Vec<[f32; N_CATEGORIES]> {
        self.apply_dense(candidates, logits, clause, sections, None)
    }

    /// [`Self::apply`] with the sentence-embedding classifier's logits for trees fitted with
    /// them (without, their features read as missing).
    pub fn apply_dense(
        &self,
        candidates: &[Candidate],
        logits: &[[f32; N_CATEGORIES]],
        clause: Option<&[[f32; N_CATEGORIES]]>,
        sections: Option<&Sections>,
        dense: Option<&[[f32; N_CATEGORIES]]>,
    ) -> Vec<[f32; N_CATEGORIES]> {
        let view = ContractView::new(candidates, logits, clause, sections, dense);
        let mut buffer = Vec::new();
        (0..candidates.len())
            .map(|i| {
                let mut out = [0f32; N_CATEGORIES];
                for (k, o) in out.iter_mut().enumerate() {
                    let z = self.linear(&view, i, k, &mut buffer);
                    *o = match &self.trees {
                        Some(t) if view.in_top(i, k, t.stage.top) => {
                            let x = view.dense(i, k, t.prior[k], z);
                            let x = &x[..t.model.dim.min(FULL_TREE_DIM)];
                            let offset = if t.stage.from_linear { z } else { 0.0 };
                            let m = match &t.rank {
                                Some(rank) => {
                                    let w = t.stage.rank_weight;
                                    (1.0 - w) * t.model.margin(x) + w * rank.margin(x)
                                }
                                None => t.model.margin(x),
                            };
                            sigmoid(offset + m)
                        }
                        _ => sigmoid(z),
                    };
                }
                out
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sentence(i: usize) -> Candidate {
        Candidate {
            kind: Kind::Sentence,
            span: i * 40..i * 40 + 40,
            context: i * 40..i * 40 + 40,
        }
    }

    /// Where only a contract's best candidate of a category is right, whatever its logit, the
    /// second stage learns the rank: the first stage's nearly equal logits cannot tell them apart.
    #[test]
    fn learns_what_the_contract_context_says() {
        let candidates: Vec<Candidate> = (0..3).map(sentence).collect();
        let contracts: Vec<(Vec<[f32; N_CATEGORIES]>, Vec<u64>)> = (0..300)
            .map(|c| {
                let top = (c % 7) as f32 - 3.0;
                let logits = [top, top - 0.05, top - 6.0]
                    .iter()
                    .map(|&z| {
                        let mut l = [-8.0; N_CATEGORIES];
                        l[0] = z;
                        l
                    })
                    .collect();
                (logits, vec![1, 0, 0])
            })
            .collect();
        let inputs: Vec<StackInput> = contracts
            .iter()
            .map(|(logits, bits)| StackInput {
                candidates: &candidates,
                logits,
                bits,
                clause: None,
                sections: None,
                dense: None,
            })
            .collect();
        let stage = SecondStage::train(&inputs, &StackOptions::default(), "synthetic");
        assert_eq!(stage.rows, 300 * 3 * N_CATEGORIES);
        assert_eq!(stage.positives, 300);
        for top in [-2.5f32, 0.5, 2.5] {
            let logits: Vec<[f32; N_CATEGORIES]> = [top, top - 0.05, top - 6.0]
                .iter()
                .map(|&z| {
                    let mut l = [-8.0; N_CATEGORIES];
                    l[0] = z;
                    l
                })
                .collect();
            let scores = stage.apply(&candidates, &logits, None, None);
            assert!(
                scores[0][0] > 0.5 && scores[1][0] < 0.5 && scores[2][0] < scores[1][0],
                "top logit {top}: {:?}",
                scores.iter().map(|s| s[0]).collect::<Vec<_>>()
            );
        }
    }

    /// Three sentences of which the first stage ties the first two (and rules out the third),
    /// and 300 contracts whose answer alternates between the two; each contract's second
    /// logit set says which one it is, by `margin` against `-margin`.
    #[allow(clippy::type_complexity)]
    fn tied_pair(
        margin: f32,
    ) -> (
        Vec<Candidate>,
        Vec<[f32; N_CATEGORIES]>,
        Vec<(Vec<[f32; N_CATEGORIES]>, Vec<u64>)>,
    ) {
        let candidates: Vec<Candidate> = (0..3).map(sentence).collect();
        let first_stage = [1.0f32, 1.0, -4.0]
            .iter()
            .map(|&z| {
                let mut l = [-8.0; N_CATEGORIES];
                l[0] = z;
                l
            })
            .collect();
        let telling = |right: usize| -> Vec<[f32; N_CATEGORIES]> {
            (0..3)
                .map(|i| {
                    let mut l = [-5.0; N_CATEGORIES];
                    l[0] = if i == right { margin } else { -margin };
                    l
                })
                .collect()
        };
        let contracts = (0..300)
            .map(|c| {
                let right = c % 2;
                let mut bits = vec![0u64; 3];
                bits[right] = 1;
                (telling(right), bits)
            })
            .collect();
        (candidates, first_stage, contracts)
    }

    /// Where the first stage cannot tell two candidates apart but the clause classifier can,
    /// the second stage follows the classifier (and without its logits it could not).
    #[test]
    fn reads_the_clause_classifier() {
        let (candidates, first_stage, contracts) = tied_pair(3.0);
        let inputs: Vec<StackInput> = contracts
            .iter()
            .map(|(clause, bits)| StackInput {
                candidates: &candidates,
                logits: &first_stage,
                bits,
                clause: Some(clause),
                sections: None,
                dense: None,
            })
            .collect();
        let stage = SecondStage::train(&inputs, &StackOptions::default(), "synthetic");
        for right in 0..2 {
            let scores = stage.apply(&candidates, &first_stage, Some(&contracts[right].0), None);
            let wrong = 1 - right;
            assert!(
                scores[right][0] > 0.5 && scores[wrong][0] < 0.5 && scores[2][0] < 0.5,
                "right {right}: {:?}",
                scores.iter().map(|s| s[0]).collect::<Vec<_>>()
            );
        }
        // Without the classifier's logits both candidates look alike (up to their rank).
        let blind = stage.apply(&candidates, &first_stage, None, None);
        assert!((blind[0][0] - blind[1][0]).abs() < 0.2, "{blind:?}");
    }

    /// The heading and neighbour features of one candidate, checked against the text: which
    /// heading names the category, the previous and next sentence's logits, and the best other
    /// sentence of the same section (not the candidate itself, not another section's).
    #[test]
    fn tree_features_read_headings_and_neighbours() {
        let text = "ARTICLE IX INSURANCE\n9.1 Coverage. Licensee shall maintain insurance. It names Licensor.\n9.2 Exclusivity. During the term Licensor shall not appoint others. It applies worldwide.";
        let cands = crate::candidates::candidates(text);
        let sections = Sections::of(text, &cands);
        let sentence_at = |needle: &str| {
            let at = text.find(needle).expect("needle in text");
            cands
                .iter()
                .position(|c| c.kind == Kind::Sentence && c.span.contains(&at))
                .expect("a sentence holding the needle")
        };
        let (names, during, applies) = (
            sentence_at("It names"),
            sentence_at("During the term"),
            sentence_at("It applies"),
        );
        let insurance = precedent_cuad::category_index("Insurance").expect("a category");
        let exclusivity = precedent_cuad::category_index("Exclusivity").expect("a category");
        // The first stage is most sure of the other section's sentence, then of this one.
        let with = |values: [(usize, f32); 3]| -> Vec<[f32; N_CATEGORIES]> {
            let mut l = vec![[-3.0; N_CATEGORIES]; cands.len()];
            for (i, z) in values {
                l[i] = [z; N_CATEGORIES];
            }
            l
        };
        let first = with([(names, 6.0), (during, 2.0), (applies, 4.0)]);
        let clause = with([(names, 5.0), (during, 1.5), (applies, 0.5)]);
        let view = ContractView::new(&cands, &first, Some(&clause), Some(&sections), None);
        let x = view.dense(applies, exclusivity, 0.1, 0.0);
        assert_eq!((x[22], x[23]), (1.0, 0.0), "9.2 names Exclusivity");
        assert_eq!(
            (x[24], x[25]),
            (2.0, -LOGIT_CLIP),
            "previous sentence, none after"
        );
        assert_eq!((x[26], x[27]), (1.5, -LOGIT_CLIP), "the classifier's");
        assert_eq!((x[28], x[29]), (2.0, 1.5), "best other sentence of 9.2");
        let x = view.dense(applies, insurance, 0.1, 0.0);
        assert_eq!((x[22], x[23]), (0.0, 1.0), "ARTICLE IX names Insurance");
        let x = view.dense(during, exclusivity, 0.1, 0.0);
        assert_eq!((x[25], x[28]), (4.0, 4.0));
        // Without sections: no heading, no section; the neighbours stay.
        let blind = ContractView::new(&cands, &first, Some(&clause), None, None);
        let x = blind.dense(applies, exclusivity, 0.1, 0.0);
        assert_eq!((x[22], x[23], x[24]), (0.0, 0.0, 2.0));
        assert_eq!((x[28], x[29]), (-LOGIT_CLIP, -LOGIT_CLIP));
    }

    /// Where the first stage and its neighbours cannot tell two candidates apart but one sits
    /// under a heading naming the category, the second stage follows the heading (and without
    /// the sections it could not).
    #[test]
    fn reads_the_section_heading() {
        let k = precedent_cuad::category_index("Insurance").expect("a category");
        let candidates: Vec<Candidate> = (0..3).map(sentence).collect();
        let first_stage: Vec<[f32; N_CATEGORIES]> = [1.0f32, 1.0, -4.0]
            .iter()
            .map(|&z| {
                let mut l = [-8.0; N_CATEGORIES];
                l[k] = z;
                l
            })
            .collect();
        let mut insurance = [0.0; N_CATEGORIES];
        insurance[k] = 1.0;
        // Section 0 is headed "Insurance"; the right candidate sits in it, the other in section 1.
        let sections_for = |right: usize| Sections {
            section: (0..3)
                .map(|i| (i < 2).then_some(u32::from(i != right)))
                .collect(),
            naming: vec![[insurance, [0.0; N_CATEGORIES]], [[0.0; N_CATEGORIES]; 2]],
        };
        let contracts: Vec<(Sections, Vec<u64>)> = (0..300)
            .map(|c| {
                let right = c % 2;
                let mut bits = vec![0u64; 3];
                bits[right] = 1 << k;
                (sections_for(right), bits)
            })
            .collect();
        let inputs: Vec<StackInput> = contracts
            .iter()
            .map(|(sections, bits)| StackInput {
                candidates: &candidates,
                logits: &first_stage,
                bits,
                clause: None,
                sections: Some(sections),
                dense: None,
            })
            .collect();
        let stage = SecondStage::train(&inputs, &StackOptions::default(), "synthetic");
        assert!(stage.trees.as_ref().is_some_and(|t| t.rank.is_some()));
        for right in 0..2 {
            let scores = stage.apply(&candidates, &first_stage, None, Some(&sections_for(right)));
            let wrong = 1 - right;
            assert!(
                scores[right][k] > 0.5 && scores[wrong][k] < 0.5,
                "right {right}: {:?}",
                scores.iter().map(|s| s[k]).collect::<Vec<_>>()
            );
        }
        let blind = stage.apply(&candidates, &first_stage, None, None);
        assert!((blind[0][k] - blind[1][k]).abs() < 0.2, "{blind:?}");
    }

    /// Where only the sentence-embedding classifier tells two tied candidates apart, trees
    /// fitted with its logits follow it; the trees then have the extra features, and a stage
    /// fitted without them keeps main's width.
    #[test]
    fn trees_read_the_dense_classifier() {
        let (candidates, first_stage, contracts) = tied_pair(2.0);
        let inputs: Vec<StackInput> = contracts
            .iter()
            .map(|(dense, bits)| StackInput {
                candidates: &candidates,
                logits: &first_stage,
                bits,
                clause: None,
                sections: None,
                dense: Some(dense),
            })
            .collect();
        let stage = SecondStage::train(&inputs, &StackOptions::default(), "synthetic");
        let trees = stage.trees.as_ref().expect("trees");
        assert_eq!(trees.model.dim, FULL_TREE_DIM);
        for right in 0..2 {
            let d = &contracts[right].0;
            let scores = stage.apply_dense(&candidates, &first_stage, None, None, Some(d));
            assert!(
                scores[right][0] > 0.5 && scores[1 - right][0] < 0.5,
                "right {right}: {:?}",
                scores.iter().map(|s| s[0]).collect::<Vec<_>>()
            );
        }
        let plain: Vec<StackInput> = inputs
            .iter()
            .map(|i| StackInput { dense: None, ..*i })
            .collect();
        let stage = SecondStage::train(&plain, &StackOptions::default(), "synthetic");
        assert_eq!(stage.trees.as_ref().map(|t| t.model.dim), Some(TREE_DIM));
        assert!(SecondStage::from_json(&stage.to_json()).is_ok());
    }

    #[test]
    fn shipped_weights_load() {
        let stage = SecondStage::shipped();
        assert_eq!(stage.weights.len(), STACK_DIM);
        assert!(stage.rows > 0 && stage.positives > 0);
        let novelty = stage
            .novelty
            .as_ref()
            .expect("shipped with its novelty step");
        assert_eq!(novelty.weights.len(), crate::novelty::NOVELTY_DIM);
        let trees = stage.trees.as_ref().expect("shipped with its trees");
        assert_eq!(trees.model.dim, TREE_DIM);
        assert!(!trees.model.trees.is_empty());
        let rank = trees
            .rank
            .as_ref()
            .expect("shipped with its pairwise trees");
        assert_eq!(rank.dim, TREE_DIM);
        assert!(trees.stage.rank_weight > 0.0);
        // A version-3 file (linear stage only) is refused, naming the version it needs.
        let mut old = stage.clone();
        old.version = 3;
        old.trees = None;
        let refused = SecondStage::from_json(&old.to_json()).unwrap_err();
        assert!(
            refused
                .to_string()
                .contains(&format!("needs version {SECOND_STAGE_VERSION}")),
            "{refused}"
        );
        let again = SecondStage::from_json(&stage.to_json()).unwrap();
        assert_eq!(again, stage);
        let mut wrong = stage.clone();
        wrong.version += 1;
        assert!(SecondStage::from_json(&wrong.to_json()).is_err());
    }

    #[test]
    fn shipped_dense_stage_carries_its_view() {
        let stage = SecondStage::shipped_dense();
        let view = stage.dense.as_ref().expect("shipped with its dense view");
        assert!(
            view.model
                .starts_with("sentence-transformers/all-MiniLM-L6-v2@"),
            "{}",
            view.model
        );
        assert_eq!(view.max_tokens, crate::dense::SENTENCE_MAX_TOKENS);
        assert_eq!(view.classifier.dim, 384);
        let trees = stage.trees.as_ref().expect("shipped with its trees");
        assert_eq!(trees.model.dim, FULL_TREE_DIM);
        assert!(stage.novelty.is_some());
        // Trees that read the view are refused without it, and the word-only stage with one.
        let mut blind = stage.clone();
        blind.dense = None;
        let refused = SecondStage::from_json(&blind.to_json()).unwrap_err();
        assert!(
            refused
                .to_string()
                .contains("without a sentence-embedding view"),
            "{refused}"
        );
        let mut plain = SecondStage::shipped();
        plain.dense = stage.dense.clone();
        assert!(SecondStage::from_json(&plain.to_json()).is_err());
    }
}
