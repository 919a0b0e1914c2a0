//! Fine-tuning the bi-encoder on graded ratings: every wording of a query is pulled towards
//! its well-rated clauses and away from its poorly rated ones, one query (all its wordings,
//! one shared list of clauses) per step.
//!
//! Why listwise over one query's judged clauses: ACORD's ratings are graded (1 to 5 stars)
//! and the judged clauses of a query are already its hard cases (they were retrieved as
//! candidates), so the list teaches what separates a 5-star cap on liability from a 2-star
//! one; in-batch negatives from other queries would mostly teach the topic, which the base
//! encoder already knows. Why all wordings share a step: the model should place "liability
//! cap based on the purchase price" and "Clauses that cap liabilities at the purchase price"
//! alike, and scoring the same list under both asks exactly that.

use precedent_ml::SplitMix;
use precedent_models::{BiEncoderTrainer, FrozenState, ModelError};
use serde::Serialize;

/// One rated query as the trainer reads it: indices into the query states (one per wording)
/// and into the clause states.
#[derive(Debug, Clone)]
pub struct ListwiseQuery {
    pub id: String,
    /// The query's wordings, as indices into the query states.
    pub wordings: Vec<usize>,
    /// `(clause index, label 0..=4)` of every judged clause.
    pub judged: Vec<(usize, i32)>,
}

impl ListwiseQuery {
    /// Whether the query can teach anything: at least one clause rated above one star and
    /// one wording.
    pub fn trainable(&self) -> bool {
        !self.wordings.is_empty() && self.judged.iter().any(|&(_, l)| l > 0)
    }
}

/// How the lists are drawn and scored.
#[derive(Debug, Clone, Serialize)]
pub struct ListwisePlan {
    /// Passes over the training queries.
    pub epochs: usize,
    /// Clauses rated above one star in a query's list (drawn at random when it has more).
    pub positives: usize,
    /// One-star clauses in a query's list (drawn at random).
    pub negatives: usize,
    /// Cosines are divided by this before the softmax (0.05: sentence-transformers' scale 20).
    pub temperature: f32,
    /// Clauses are cut to their first this-many tokens while training (their states still
    /// computed with the whole window in view); scoring reads the whole window.
    pub train_tokens: usize,
    pub seed: u64,
}

impl Default for ListwisePlan {
    fn default() -> Self {
        Self {
            epochs: 4,
            positives: 16,
            negatives: 16,
            temperature: 0.05,
            train_tokens: 128,
            seed: 42,
        }
    }
}

/// The optimizer steps [`tune_listwise`] takes over `training`: one per trainable query per
/// epoch (the learning-rate schedule must be built for this many).
pub fn listwise_steps(training: &[&ListwiseQuery], plan: &ListwisePlan) -> usize {
    plan.epochs * training.iter().filter(|q| q.trainable()).count()
}

/// The wanted share of a clause rated `label` (0..=4, one to five stars) in its query's list:
/// the exponential gain `2^label - 1`, so a one-star clause wants none and each star doubles
/// the weight.
pub fn target_gain(label: i32) -> f32 {
    (2f32).powi(label.clamp(0, 4)) - 1.0
}

/// Trains `trainer` on the training queries' lists (see the module docs) for
/// [`ListwisePlan::epochs`] passes in a seeded order; `on_step(step, loss)` is called after
/// every step. Returns each epoch's mean loss.
pub fn tune_listwise(
    trainer: &mut BiEncoderTrainer,
    query_states: &[FrozenState],
    clause_states: &[FrozenState],
    training: &[&ListwiseQuery],
    plan: &ListwisePlan,
    on_step: &mut dyn FnMut(usize, f32),
) -> Result<Vec<f32>, ModelError> {
    let trainable: Vec<&ListwiseQuery> =
        training.iter().copied().filter(|q| q.trainable()).collect();
    if trainable.is_empty() {
        return Err(ModelError::InvalidOptions(
            "no training query has a clause rated above one star".into(),
        ));
    }
    let out_of_range = |i: usize, n: usize| {
        ModelError::InvalidOptions(format!("state index {i} out of range ({n} states)"))
    };
    let mut rng = SplitMix(plan.seed ^ 0xB1E0_C0DE);
    let mut epoch_losses = Vec::with_capacity(plan.epochs);
    for _ in 0..plan.epochs {
        let mut order: Vec<usize> = (0..trainable.len()).collect();
        rng.shuffle(&mut order);
        let mut sum = 0.0;
        for &k in &order {
            let query = trainable[k];
            let list = draw_list(query, plan, &mut rng);
            let mut clauses = Vec::with_capacity(list.len());
            for &(i, _) in &list {
                let state = clause_states
                    .get(i)
                    .ok_or_else(|| out_of_range(i, clause_states.len()))?;
                clauses.push(state.truncated(plan.train_tokens)?);
            }
            let clause_refs: Vec<&FrozenState> = clauses.iter().collect();
            let queries = query
                .wordings
                .iter()
                .map(|&i| {
                    query_states
                        .get(i)
                        .ok_or_else(|| out_of_range(i, query_states.len()))
                })
                .collect::<Result<Vec<_>, _>>()?;
            let row: Vec<f32> = list.iter().map(|&(_, l)| target_gain(l)).collect();
            let targets = vec![row; queries.len()];
            let loss =
                trainer.train_step_listwise(&queries, &clause_refs, &targets, plan.temperature)?;
            sum += loss;
            on_step(trainer.steps_done(), loss);
        }
        epoch_losses.push(sum / trainable.len() as f32);
    }
    Ok(epoch_losses)
}

/// One query's list for a step: up to `positives` clauses rated above one star and up to
/// `negatives` one-star clauses, each drawn without replacement.
fn draw_list(query: &ListwiseQuery, plan: &ListwisePlan, rng: &mut SplitMix) -> Vec<(usize, i32)> {
    let mut pos: Vec<(usize, i32)> = query
        .judged
        .iter()
        .copied()
        .filter(|&(_, l)| l > 0)
        .collect();
    let mut neg: Vec<(usize, i32)> = query
        .judged
        .iter()
        .copied()
        .filter(|&(_, l)| l <= 0)
        .collect();
    rng.shuffle(&mut pos);
    rng.shuffle(&mut neg);
    pos.truncate(plan.positives);
    neg.truncate(plan.negatives);
    pos.extend(neg);
    pos
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gains_double_with_each_star_and_one_star_wants_nothing() {
        let gains: Vec<f32> = (0..=4).map(target_gain).collect();
        assert_eq!(gains, vec![0.0, 1.0, 3.0, 7.0, 15.0]);
        assert_eq!(target_gain(9), 15.0);
    }

    #[test]
    fn lists_hold_at_most_the_asked_positives_and_negatives() {
        let query = ListwiseQuery {
            id: "q".into(),
            wordings: vec![0, 1],
            judged: (0..40)
                .map(|i| (i, if i % 4 == 0 { 3 } else { 0 }))
                .collect(),
        };
        let plan = ListwisePlan {
            positives: 5,
            negatives: 7,
            ..ListwisePlan::default()
        };
        let list = draw_list(&query, &plan, &mut SplitMix(1));
        assert_eq!(list.iter().filter(|(_, l)| *l > 0).count(), 5);
        assert_eq!(list.iter().filter(|(_, l)| *l == 0).count(), 7);
        let mut ids: Vec<usize> = list.iter().map(|(i, _)| *i).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), 12, "drawn without replacement");
        assert!(query.trainable());
        let all_one_star = ListwiseQuery {
            judged: vec![(0, 0), (1, 0)],
            ..query.clone()
        };
        assert!(!all_one_star.trainable());
        assert_eq!(listwise_steps(&[&query, &all_one_star], &plan), plan.epochs);
    }
}
