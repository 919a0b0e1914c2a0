//! Combining ranked lists from several retrievers (lexical and dense) into one.
//!
//! Two standard methods, because neither wins everywhere:
//! - **Reciprocal rank fusion** (Cormack et al. 2009): `sum_i w_i / (k + rank_i)`. Ignores score
//!   scales entirely, so it is robust when one retriever's scores are unbounded (BM25) and the
//!   other's are cosines.
//! - **Normalized-score fusion**: min-max normalise each list's scores to 0..1 and take the
//!   weighted sum; keeps the *margin* information RRF throws away.
//!
//! A clause missing from a list contributes nothing from that list (RRF) or 0 (normalized).

use std::collections::HashMap;

use crate::{Hit, StageScore};

/// How to fuse lists.
#[derive(Debug, Clone, PartialEq)]
pub enum FusionMethod {
    /// Reciprocal rank fusion with constant `k` (60 in the original paper).
    Rrf { k: f32 },
    /// Weighted sum of min-max normalised scores.
    Normalized,
}

/// Fuses `lists` (each best first) with per-list `weights`; returns the fused list, best first,
/// with the stage provenance of every input list merged into each hit.
pub fn fuse(lists: &[Vec<Hit>], weights: &[f32], method: &FusionMethod) -> Vec<Hit> {
    let mut fused: HashMap<u32, (f32, Vec<StageScore>)> = HashMap::new();
    for (list_index, list) in lists.iter().enumerate() {
        let weight = weights.get(list_index).copied().unwrap_or(1.0);
        let (lo, hi) = list
            .iter()
            .fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), h| {
                (lo.min(h.score), hi.max(h.score))
            });
        for (rank0, hit) in list.iter().enumerate() {
            let contribution = match method {
                FusionMethod::Rrf { k } => weight / (k + (rank0 + 1) as f32),
                FusionMethod::Normalized => {
                    let span = hi - lo;
                    let norm = if span > 0.0 {
                        (hit.score - lo) / span
                    } else {
                        1.0
                    };
                    weight * norm
                }
            };
            let entry = fused.entry(hit.row).or_insert((0.0, Vec::new()));
            entry.0 += contribution;
            entry.1.extend(hit.stages.iter().cloned());
        }
    }
    let mut out: Vec<Hit> = fused
        .into_iter()
        .map(|(row, (score, stages))| Hit { row, score, stages })
        .collect();
    // Deterministic order: score desc, then row asc.
    out.sort_by(|a, b| {
        b.score
            .partial_cmp(&a.score)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(a.row.cmp(&b.row))
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(stage: &str, rows_scores: &[(u32, f32)]) -> Vec<Hit> {
        rows_scores
            .iter()
            .enumerate()
            .map(|(i, &(row, score))| Hit {
                row,
                score,
                stages: vec![StageScore {
                    stage: stage.into(),
                    rank: i + 1,
                    score,
                }],
            })
            .collect()
    }

    #[test]
    fn rrf_rewards_agreement() {
        let a = list("bm25", &[(1, 30.0), (2, 20.0), (3, 10.0)]);
        let b = list("dense", &[(2, 0.9), (4, 0.8), (1, 0.1)]);
        let fused = fuse(&[a, b], &[1.0, 1.0], &FusionMethod::Rrf { k: 60.0 });
        assert_eq!(
            fused[0].row, 2,
            "second in one list and first in the other wins"
        );
        assert_eq!(fused[0].stages.len(), 2);
        let expected = 1.0 / 62.0 + 1.0 / 61.0;
        assert!((fused[0].score - expected).abs() < 1e-7);
        assert_eq!(fused.len(), 4);
    }

    #[test]
    fn normalized_fusion_uses_margins_and_weights() {
        let a = list("bm25", &[(1, 100.0), (2, 1.0), (3, 0.0)]);
        let b = list("dense", &[(2, 0.9), (1, 0.89), (3, 0.0)]);
        let fused = fuse(
            &[a.clone(), b.clone()],
            &[1.0, 1.0],
            &FusionMethod::Normalized,
        );
        assert_eq!(fused[0].row, 1);
        let dense_only = fuse(&[a, b], &[0.0, 1.0], &FusionMethod::Normalized);
        assert_eq!(dense_only[0].row, 2);
    }
}
