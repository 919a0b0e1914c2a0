//! The judge as a pipeline stage: it rates the top N candidates of a base pipeline and blends
//! its stars with the base order.
//!
//! The blend is `(1 − position/N) + weight · (stars − 1)/4`: the base contributes its rank (its
//! own score scale is arbitrary, a learned ranker's especially), the judge at most `weight`.
//! `weight` 0 keeps the base order, a large weight sorts by the judge with the base order
//! breaking ties. The weight is a choice learned from ratings, so it is picked by
//! cross-validation over training queries (`precedent eval-judge`), never on the queries scored.

use std::str::FromStr;
use std::sync::Arc;

use precedent_library::Library;
use precedent_rank::{candidate_texts, rescore, Hit, RankError, Reranker};

use crate::{Judge, JudgeError};

/// How many of the base pipeline's candidates the judge reads by default.
pub const DEFAULT_JUDGE_TOP: usize = 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JudgeMode {
    /// One 1–5 rating per clause.
    Pointwise,
    /// Every pair of the top N compared (both orders, against position bias); a clause's stars
    /// are 1 + 4 × its share of wins. N·(N−1) judge calls: keep N small.
    Pairwise,
}

impl FromStr for JudgeMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "pointwise" => Ok(JudgeMode::Pointwise),
            "pairwise" => Ok(JudgeMode::Pairwise),
            other => Err(format!(
                "unknown judge mode {other:?} (pointwise or pairwise)"
            )),
        }
    }
}

/// The blended score of the candidate at 0-based `position` among `n` judged ones.
pub fn combine(position: usize, n: usize, stars: f32, weight: f32) -> f32 {
    let base = 1.0 - position as f32 / n.max(1) as f32;
    base + weight * (stars - 1.0) / 4.0
}

/// Stars for each clause of one query (`texts` in base order), by the chosen mode.
pub fn judge_stars(
    judge: &dyn Judge,
    mode: JudgeMode,
    query: &str,
    texts: &[&str],
) -> Result<Vec<f32>, JudgeError> {
    match mode {
        JudgeMode::Pointwise => Ok(judge
            .judge_all(query, texts)?
            .into_iter()
            .map(|j| j.stars)
            .collect()),
        JudgeMode::Pairwise => {
            let n = texts.len();
            let mut wins = vec![0f32; n];
            for i in 0..n {
                for j in i + 1..n {
                    let ij = judge.prefer(query, texts[i], texts[j])?.first_better;
                    let ji = judge.prefer(query, texts[j], texts[i])?.first_better;
                    let i_better = (ij + (1.0 - ji)) / 2.0;
                    wins[i] += i_better;
                    wins[j] += 1.0 - i_better;
                }
            }
            let games = (n.max(2) - 1) as f32;
            Ok(wins.into_iter().map(|w| 1.0 + 4.0 * w / games).collect())
        }
    }
}

pub struct JudgeReranker {
    stage: String,
    library: Arc<Library>,
    judge: Arc<dyn Judge>,
    mode: JudgeMode,
    weight: f32,
}

impl JudgeReranker {
    /// `stage` names the stage in pipeline names and `--explain` (e.g. `judge`, `llm`).
    pub fn new(
        stage: impl Into<String>,
        library: Arc<Library>,
        judge: Arc<dyn Judge>,
        mode: JudgeMode,
        weight: f32,
    ) -> Self {
        JudgeReranker {
            stage: stage.into(),
            library,
            judge,
            mode,
            weight,
        }
    }
}

impl Reranker for JudgeReranker {
    fn name(&self) -> &str {
        &self.stage
    }

    fn rerank(&self, query: &str, candidates: Vec<Hit>) -> Result<Vec<Hit>, RankError> {
        let texts = candidate_texts(&self.library, &candidates)?;
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let stars = judge_stars(self.judge.as_ref(), self.mode, query, &refs).map_err(|e| {
            RankError::Stage {
                stage: self.stage.clone(),
                message: e.to_string(),
            }
        })?;
        let n = candidates.len();
        let scores = stars
            .iter()
            .enumerate()
            .map(|(i, s)| combine(i, n, *s, self.weight))
            .collect();
        Ok(rescore(candidates, scores, &self.stage))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weight_zero_keeps_the_base_order_and_a_large_weight_follows_the_judge() {
        let stars = [2.0, 5.0, 3.0];
        let order = |w: f32| {
            let mut idx: Vec<usize> = (0..3).collect();
            idx.sort_by(|&a, &b| combine(b, 3, stars[b], w).total_cmp(&combine(a, 3, stars[a], w)));
            idx
        };
        assert_eq!(order(0.0), vec![0, 1, 2]);
        assert_eq!(order(100.0), vec![1, 2, 0]);
        // Equal stars: the base order breaks the tie whatever the weight.
        assert!(combine(0, 3, 4.0, 100.0) > combine(1, 3, 4.0, 100.0));
    }

    #[test]
    fn modes_parse() {
        assert_eq!("pairwise".parse(), Ok(JudgeMode::Pairwise));
        assert!("listwise".parse::<JudgeMode>().is_err());
    }
}
