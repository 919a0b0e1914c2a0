//! Tuning LegalBench's per-category thresholds on a development set drawn from the CUAD
//! cross-validation's held-out clauses, and what they score there.

use std::collections::BTreeMap;

use serde::Serialize;

use precedent_clause_types::legalbench::{best_threshold, Thresholds};
use precedent_cuad::categories::CATEGORIES;
use precedent_metrics::balanced_accuracy;

use crate::cuad::HeldOutClause;

/// The development set of category `k`: held-out annotations of `k` are positives, held-out
/// annotations of other categories negatives (as LegalBench built its CUAD tasks); a clause
/// annotated under several categories only counts as a positive.
fn dev_pairs<'a>(
    clauses: &'a [HeldOutClause],
    k: usize,
    keep: impl Fn(&HeldOutClause) -> bool + 'a,
) -> impl Iterator<Item = (bool, f32)> + 'a {
    clauses
        .iter()
        .filter(move |c| keep(c))
        .map(move |c| (c.category == k, c.scores[k]))
}

/// Development results: per category, balanced accuracy with the threshold tuned on the other
/// half of the contracts (even/odd split, both ways), and the thresholds tuned on all of them.
#[derive(Debug, Clone, Serialize)]
pub struct DevReport {
    pub tasks: BTreeMap<String, f64>,
    pub mean: f64,
    pub positives: BTreeMap<String, usize>,
    pub thresholds: Thresholds,
}

pub fn tune_on_dev(clauses: &[HeldOutClause]) -> DevReport {
    let mut tasks = BTreeMap::new();
    let mut positives = BTreeMap::new();
    let mut thresholds = BTreeMap::new();
    for (k, category) in CATEGORIES.iter().enumerate() {
        let all: Vec<(bool, f32)> = dev_pairs(clauses, k, |_| true).collect();
        let n_pos = all.iter().filter(|p| p.0).count();
        if n_pos == 0 {
            continue;
        }
        let mut judged = Vec::new();
        for half in 0..2 {
            let tune: Vec<_> = dev_pairs(clauses, k, |c| c.contract % 2 != half).collect();
            let t = best_threshold(&tune);
            judged.extend(
                dev_pairs(clauses, k, |c| c.contract % 2 == half).map(|(g, s)| (g, s >= t)),
            );
        }
        let name = (*category).to_owned();
        tasks.insert(name.clone(), balanced_accuracy(judged).unwrap_or(0.0));
        positives.insert(name.clone(), n_pos);
        thresholds.insert(name, best_threshold(&all));
    }
    let mean = tasks.values().sum::<f64>() / tasks.len().max(1) as f64;
    DevReport {
        tasks,
        mean,
        positives,
        thresholds: Thresholds { thresholds },
    }
}
