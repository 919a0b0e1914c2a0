//! Answering LegalBench's yes/no CUAD questions ("is this clause of category X?"): the typer's
//! confidence for X against a per-category threshold. The thresholds are tuned on a development
//! set built from the shared contracts' annotations (held-out folds only, `precedent_eval`'s
//! `legalbench::tune_on_dev`) and shipped in `models/legalbench/thresholds.json`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use precedent_cuad::categories::CATEGORIES;
use precedent_metrics::balanced_accuracy;

/// Per-category decision thresholds on the typer's confidence.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Thresholds {
    pub thresholds: BTreeMap<String, f32>,
}

impl Thresholds {
    pub fn get(&self, category: usize) -> f32 {
        self.thresholds
            .get(CATEGORIES[category])
            .copied()
            .unwrap_or(0.5)
    }
}

/// Thresholds tuned on the CUAD development set by `precedent eval-cuad --json-out` (its
/// `legalbench_dev.thresholds`), shipped so that LegalBench runs need no development pass.
pub fn shipped_thresholds() -> Thresholds {
    serde_json::from_str(include_str!("../../../models/legalbench/thresholds.json")).unwrap_or(
        Thresholds {
            thresholds: BTreeMap::new(),
        },
    )
}

/// The threshold maximising balanced accuracy on `pairs` (midpoint between neighbouring scores).
pub fn best_threshold(pairs: &[(bool, f32)]) -> f32 {
    let mut scores: Vec<f32> = pairs.iter().map(|p| p.1).collect();
    scores.sort_by(f32::total_cmp);
    scores.dedup();
    let mut best = (f64::MIN, 0.5f32);
    for w in scores.windows(2) {
        let t = (w[0] + w[1]) / 2.0;
        let ba = balanced_accuracy(pairs.iter().map(|&(g, s)| (g, s >= t))).unwrap_or(0.0);
        if ba > best.0 {
            best = (ba, t);
        }
    }
    best.1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threshold_separates_classes() {
        let pairs = [
            (true, 0.9),
            (true, 0.7),
            (false, 0.4),
            (false, 0.1),
            (true, 0.35),
        ];
        // Between 0.4 and 0.7: TPR 2/3, TNR 1 (0.83) beats catching the 0.35 positive (0.75).
        let t = best_threshold(&pairs);
        assert!((t - 0.55).abs() < 1e-6, "{t}");
    }
}
