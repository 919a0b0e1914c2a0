//! The threshold sweep behind the confidence at which `ingest` stores a clause type
//! (`precedent_clause_types::type_thresholds::STORED_TYPE_THRESHOLD`): per category, true and
//! false positives at a grid of thresholds over out-of-fold clause scores, and the rule that
//! picks one (the best F1 at a precision floor). Only `eval-cuad --clause-types` runs it; the
//! typer ships the threshold it chose.

/// The thresholds tried: 0.05 to 0.95 in steps of 0.05.
pub const GRID: [f32; 19] = [
    0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85,
    0.9, 0.95,
];

/// A category is stored only at thresholds where at least this share of what it stores is right.
pub const MIN_PRECISION: f64 = 0.5;

/// True and false positives of one category at each [`GRID`] threshold, and its positives.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GridCounts {
    pub true_positives: [usize; GRID.len()],
    pub false_positives: [usize; GRID.len()],
    pub positives: usize,
}

impl GridCounts {
    /// Counts one clause: its confidence for the category and whether it truly is of it.
    pub fn add(&mut self, confidence: f32, is: bool) {
        self.positives += usize::from(is);
        for (t, &threshold) in GRID.iter().enumerate() {
            if confidence >= threshold {
                if is {
                    self.true_positives[t] += 1;
                } else {
                    self.false_positives[t] += 1;
                }
            }
        }
    }

    /// Adds another set of counts (e.g. another fold's).
    pub fn merge(&mut self, other: &GridCounts) {
        self.positives += other.positives;
        for t in 0..GRID.len() {
            self.true_positives[t] += other.true_positives[t];
            self.false_positives[t] += other.false_positives[t];
        }
    }

    /// Precision, recall and F1 at grid index `t`.
    pub fn at(&self, t: usize) -> (f64, f64, f64) {
        let tp = self.true_positives[t] as f64;
        let predicted = tp + self.false_positives[t] as f64;
        let precision = if predicted > 0.0 { tp / predicted } else { 0.0 };
        let recall = if self.positives > 0 {
            tp / self.positives as f64
        } else {
            0.0
        };
        let f1 = if precision + recall > 0.0 {
            2.0 * precision * recall / (precision + recall)
        } else {
            0.0
        };
        (precision, recall, f1)
    }

    /// The grid index this category should be stored at: the best F1 among thresholds with
    /// precision at least [`MIN_PRECISION`] (the higher threshold on a tie), or `None` when no
    /// threshold stores anything at that precision.
    pub fn choose(&self) -> Option<usize> {
        let mut best: Option<(f64, usize)> = None;
        for t in 0..GRID.len() {
            let (precision, _, f1) = self.at(t);
            if self.true_positives[t] == 0 || precision < MIN_PRECISION {
                continue;
            }
            if best.is_none_or(|(f, _)| f1 >= f) {
                best = Some((f1, t));
            }
        }
        best.map(|(_, t)| t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use precedent_clause_types::type_thresholds::STORED_TYPE_THRESHOLD;

    #[test]
    fn the_stored_threshold_is_on_the_grid() {
        assert!(GRID.contains(&STORED_TYPE_THRESHOLD));
    }

    #[test]
    fn chooses_the_best_f1_above_the_precision_floor() {
        let mut counts = GridCounts::default();
        // Positives at 0.9, 0.7, 0.3; negatives at 0.8, 0.35, 0.2, 0.1.
        for (c, is) in [
            (0.9, true),
            (0.7, true),
            (0.3, true),
            (0.8, false),
            (0.35, false),
            (0.2, false),
            (0.1, false),
        ] {
            counts.add(c, is);
        }
        // At 0.3 (index 5): 3 TP, 2 FP: P 0.6, R 1, F1 0.75. At 0.4..0.7: 2 TP, 1 FP: F1 0.667.
        let t = counts.choose().unwrap();
        assert_eq!(GRID[t], 0.3);
        let (p, r, f1) = counts.at(t);
        assert!((p - 0.6).abs() < 1e-9 && (r - 1.0).abs() < 1e-9 && (f1 - 0.75).abs() < 1e-9);
    }

    #[test]
    fn a_category_that_is_never_precise_enough_is_not_stored() {
        let mut counts = GridCounts::default();
        counts.add(0.9, false);
        counts.add(0.8, false);
        counts.add(0.7, true);
        counts.add(0.1, false);
        // Best precision anywhere is 1/3.
        assert_eq!(counts.choose(), None);
        assert_eq!(GridCounts::default().choose(), None);
    }

    #[test]
    fn merging_adds_counts() {
        let mut a = GridCounts::default();
        a.add(0.5, true);
        let mut b = GridCounts::default();
        b.add(0.5, false);
        a.merge(&b);
        assert_eq!(a.positives, 1);
        assert_eq!(a.true_positives[9], 1);
        assert_eq!(a.false_positives[9], 1);
    }
}
