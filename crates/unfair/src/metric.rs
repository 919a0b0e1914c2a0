//! LexGLUE's UNFAIR-ToS score: F1 over nine columns, the eight labels plus a "none" column that
//! is 1 when a row has no label (in gold and prediction alike), computed as scikit-learn's
//! `f1_score(average="micro" | "macro")` does, with an undefined F1 (no gold, no predicted
//! positive in a column) counted as 0.
//!
//! Why the "none" column: LexGLUE adds it so that a row with no unfair term, correctly left
//! without label, counts as a true positive; without it, the ~89% of rows with no label would
//! not enter the score at all.

use serde::Serialize;

use crate::{LabelSet, LABELS, N_LABELS};

/// Columns of the score: the eight labels, then "none".
pub const N_COLUMNS: usize = N_LABELS + 1;

/// Name of column `c` ([`LABELS`], then "none").
pub fn column_name(c: usize) -> &'static str {
    LABELS.get(c).copied().unwrap_or("none")
}

/// Counts of one column.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    pub tp: u64,
    pub fp: u64,
    pub fn_: u64,
    /// Rows where the column is 1 in the gold labels.
    pub support: u64,
}

impl Counts {
    /// F1, 0 when undefined (scikit-learn's `zero_division` default).
    pub fn f1(&self) -> f64 {
        f1(self.tp, self.fp, self.fn_)
    }
}

fn f1(tp: u64, fp: u64, fn_: u64) -> f64 {
    let denominator = 2 * tp + fp + fn_;
    if denominator == 0 {
        0.0
    } else {
        (2 * tp) as f64 / denominator as f64
    }
}

/// LexGLUE's figures for a set of predictions (fractions in 0..=1).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Scores {
    pub micro_f1: f64,
    pub macro_f1: f64,
    /// F1 per column ([`column_name`] order: the eight labels, then "none").
    pub per_column_f1: Vec<f64>,
    pub counts: Vec<Counts>,
    pub rows: usize,
}

/// The nine columns of a label set: its eight bits, then 1 when it is empty.
fn columns(set: LabelSet) -> [bool; N_COLUMNS] {
    std::array::from_fn(|c| {
        if c < N_LABELS {
            set & (1 << c) != 0
        } else {
            set == 0
        }
    })
}

/// Scores `predicted` against `gold` (paired by position).
///
/// # Panics
/// If the two differ in length: pairing rows is the caller's job, and a silent truncation would
/// report a score of the wrong rows.
pub fn score(gold: &[LabelSet], predicted: &[LabelSet]) -> Scores {
    assert_eq!(
        gold.len(),
        predicted.len(),
        "gold and predicted rows differ"
    );
    let mut counts = vec![Counts::default(); N_COLUMNS];
    for (&g, &p) in gold.iter().zip(predicted) {
        for (c, (g, p)) in columns(g).into_iter().zip(columns(p)).enumerate() {
            let n = &mut counts[c];
            n.support += u64::from(g);
            match (g, p) {
                (true, true) => n.tp += 1,
                (false, true) => n.fp += 1,
                (true, false) => n.fn_ += 1,
                (false, false) => {}
            }
        }
    }
    let per_column_f1: Vec<f64> = counts.iter().map(Counts::f1).collect();
    let total = |f: fn(&Counts) -> u64| counts.iter().map(f).sum::<u64>();
    Scores {
        micro_f1: f1(total(|c| c.tp), total(|c| c.fp), total(|c| c.fn_)),
        macro_f1: per_column_f1.iter().sum::<f64>() / N_COLUMNS as f64,
        per_column_f1,
        counts,
        rows: gold.len(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn hand_computed_example() {
        // Rows: gold {0}, pred {0}; gold {}, pred {}; gold {1,2}, pred {1}; gold {}, pred {3}.
        let gold = [0b1, 0, 0b110, 0];
        let pred = [0b1, 0, 0b10, 0b1000];
        let s = score(&gold, &pred);
        // Columns: 0 tp1 -> 1; 1 tp1 -> 1; 2 fn1 -> 0; 3 fp1 -> 0; 4..7 undefined -> 0;
        // none: gold rows 2 and 4, predicted row 2 only -> tp1 fn1 -> 2/3.
        let expected = [1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 2.0 / 3.0];
        for (c, (&got, &want)) in s.per_column_f1.iter().zip(&expected).enumerate() {
            assert!(close(got, want), "column {c}: {got} vs {want}");
        }
        assert!(close(s.macro_f1, (2.0 + 2.0 / 3.0) / 9.0));
        // Micro: tp 3 (col 0, col 1, none), fp 1 (col 3), fn 2 (col 2, none) -> 6 / 9.
        assert!(close(s.micro_f1, 6.0 / 9.0));
    }

    #[test]
    fn predicting_none_everywhere() {
        // 9 rows without label, 1 with label 5: "none" everywhere.
        let mut gold = vec![0; 9];
        gold.push(1 << 5);
        let s = score(&gold, &[0; 10]);
        // none column: tp 9, fp 1 -> 18/19; label 5: fn 1 -> 0.
        assert!(close(s.per_column_f1[8], 18.0 / 19.0));
        assert!(close(s.macro_f1, 18.0 / 19.0 / 9.0));
        assert!(close(s.micro_f1, 18.0 / 20.0));
    }

    /// Numbers from scikit-learn 1.9.1 on `tests/fixtures/metric_fixture.json` (gold and
    /// predictions of 40 rows), as printed by `tests/fixtures/metric_fixture.py`.
    #[test]
    fn matches_sklearn_on_the_fixture() {
        let fixture: serde_json::Value =
            serde_json::from_str(include_str!("../tests/fixtures/metric_fixture.json"))
                .expect("fixture");
        let sets = |key: &str| -> Vec<LabelSet> {
            fixture[key]
                .as_array()
                .expect("rows")
                .iter()
                .map(|row| {
                    row.as_array()
                        .expect("ids")
                        .iter()
                        .map(|id| 1u8 << id.as_u64().expect("id"))
                        .fold(0, |a, b| a | b)
                })
                .collect()
        };
        let s = score(&sets("gold"), &sets("predicted"));
        let micro = fixture["sklearn_micro"].as_f64().expect("micro");
        let macro_ = fixture["sklearn_macro"].as_f64().expect("macro");
        assert!(
            (s.micro_f1 - micro).abs() < 1e-12,
            "{} vs {micro}",
            s.micro_f1
        );
        assert!(
            (s.macro_f1 - macro_).abs() < 1e-12,
            "{} vs {macro_}",
            s.macro_f1
        );
        let per = fixture["sklearn_per_column"]
            .as_array()
            .expect("per column");
        for (c, want) in per.iter().enumerate() {
            let want = want.as_f64().expect("f1");
            assert!((s.per_column_f1[c] - want).abs() < 1e-12, "column {c}");
        }
    }
}
