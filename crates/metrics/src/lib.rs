//! Retrieval metrics computed exactly as the field's reference tools compute them.
//!
//! Published ACORD numbers come from pytrec_eval (a binding of trec_eval), so ours must be the same
//! numbers, not "an NDCG". The rules that matter, all taken from trec_eval:
//! - **Ordering**: a run is re-sorted by score, descending; equal scores are broken by document id
//!   in *descending* byte order (`strcmp(b, a)` in trec_eval's `form_res_rels.c`). The rank column
//!   of a run file is ignored. [`sort_trec`] does this and every metric here calls it.
//! - **NDCG@k** (`ndcg_cut_k`): gain = the judged label (linear, not `2^l - 1`), discount
//!   `1 / log2(rank + 1)`; unjudged documents have gain 0; the ideal DCG takes the top k of *all*
//!   judged labels of the query (positive ones), whether retrieved or not. No relevant judgement →
//!   NDCG 0.
//! - A query contributes only if it has judgements (the evaluator iterates the qrels).
//!
//! ACORD adds two things on top: the **condensed** protocol (drop unjudged documents from the
//! ranking before scoring, see [`condense`]) and **k-star precision@5**.

use std::cmp::Ordering;
use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

pub mod classification;
pub mod spans;

pub use classification::balanced_accuracy;

/// A ranked (or to-be-ranked) document: id and retrieval score.
#[derive(Debug, Clone, PartialEq)]
pub struct Scored<'a> {
    pub doc: &'a str,
    pub score: f64,
}

/// trec_eval's order: score descending, then document id descending.
pub fn trec_order(a: &Scored, b: &Scored) -> Ordering {
    b.score
        .partial_cmp(&a.score)
        .unwrap_or(Ordering::Equal)
        .then_with(|| b.doc.cmp(a.doc))
}

/// Sorts a run the way trec_eval does before computing anything.
pub fn sort_trec(run: &mut [Scored]) {
    run.sort_by(trec_order);
}

/// Drops documents that have no judgement for the query (ACORD's condensed list).
pub fn condense<'a>(run: &[Scored<'a>], judged: &HashMap<String, i32>) -> Vec<Scored<'a>> {
    run.iter()
        .filter(|s| judged.contains_key(s.doc))
        .cloned()
        .collect()
}

fn dcg(gains: impl Iterator<Item = f64>) -> f64 {
    gains
        .enumerate()
        .map(|(i, g)| g / ((i + 2) as f64).log2())
        .sum()
}

/// NDCG@k exactly as trec_eval's `ndcg_cut.k` (and pytrec_eval).
pub fn ndcg_at_k(run: &[Scored], judged: &HashMap<String, i32>, k: usize) -> f64 {
    ndcg_sorted(&sorted_trec(run), judged, k)
}

fn sorted_trec<'a>(run: &[Scored<'a>]) -> Vec<Scored<'a>> {
    let mut sorted = run.to_vec();
    sort_trec(&mut sorted);
    sorted
}

/// NDCG@k of a run already in trec order.
fn ndcg_sorted(sorted: &[Scored], judged: &HashMap<String, i32>, k: usize) -> f64 {
    let gain = |doc: &str| judged.get(doc).copied().unwrap_or(0).max(0) as f64;
    let actual = dcg(sorted.iter().take(k).map(|s| gain(s.doc)));
    let mut ideal: Vec<i32> = judged.values().copied().filter(|&l| l > 0).collect();
    ideal.sort_unstable_by(|a, b| b.cmp(a));
    let ideal = dcg(ideal.into_iter().take(k).map(f64::from));
    if ideal > 0.0 {
        actual / ideal
    } else {
        0.0
    }
}

/// ACORD's k-star precision@5: of the top 5, how many have at least `stars` stars, divided by
/// `min(5, number of judged clauses with at least that many stars)`.
///
/// `stars` is 1..=5 and maps to label `stars - 1`. Returns `None` when the query has no clause
/// with that many stars: such queries are skipped from the mean, as in the paper.
pub fn k_star_precision_at_5(
    run: &[Scored],
    judged: &HashMap<String, i32>,
    stars: i32,
) -> Option<f64> {
    k_star_sorted(&sorted_trec(run), judged, stars)
}

fn k_star_sorted(sorted: &[Scored], judged: &HashMap<String, i32>, stars: i32) -> Option<f64> {
    let threshold = stars - 1;
    let available = judged.values().filter(|&&l| l >= threshold).count();
    if available == 0 {
        return None;
    }
    let hits = sorted
        .iter()
        .take(5)
        .filter(|s| judged.get(s.doc).is_some_and(|&l| l >= threshold))
        .count();
    Some(hits as f64 / available.min(5) as f64)
}

/// Recall@k of documents with label >= `min_label`; `None` when the query has none.
pub fn recall_at_k(
    run: &[Scored],
    judged: &HashMap<String, i32>,
    k: usize,
    min_label: i32,
) -> Option<f64> {
    recall_sorted(&sorted_trec(run), judged, k, min_label)
}

fn recall_sorted(
    sorted: &[Scored],
    judged: &HashMap<String, i32>,
    k: usize,
    min_label: i32,
) -> Option<f64> {
    let relevant = judged.values().filter(|&&l| l >= min_label).count();
    if relevant == 0 {
        return None;
    }
    let found = sorted
        .iter()
        .take(k)
        .filter(|s| judged.get(s.doc).is_some_and(|&l| l >= min_label))
        .count();
    Some(found as f64 / relevant as f64)
}

/// The metrics Precedent reports for one query, as fractions in 0..=1.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct QueryMetrics {
    #[serde(rename = "ndcg@5")]
    pub ndcg5: f64,
    #[serde(rename = "ndcg@10")]
    pub ndcg10: f64,
    #[serde(rename = "p@5_3star")]
    pub p5_3star: Option<f64>,
    #[serde(rename = "p@5_4star")]
    pub p5_4star: Option<f64>,
    #[serde(rename = "p@5_5star")]
    pub p5_5star: Option<f64>,
    #[serde(rename = "recall@100")]
    pub recall100: Option<f64>,
}

/// ACORD's "relevant" threshold for recall: 3 stars and up, stored as label >= 2.
pub const RELEVANT_LABEL: i32 = 2;

impl QueryMetrics {
    /// All ACORD metrics of one query's ranking against its judgements. The caller decides the
    /// protocol (pass a [`condense`]d run for the condensed protocol).
    pub fn compute(run: &[Scored], judged: &HashMap<String, i32>) -> Self {
        // Sort once; every metric reads the same trec-ordered list.
        let sorted = sorted_trec(run);
        QueryMetrics {
            ndcg5: ndcg_sorted(&sorted, judged, 5),
            ndcg10: ndcg_sorted(&sorted, judged, 10),
            p5_3star: k_star_sorted(&sorted, judged, 3),
            p5_4star: k_star_sorted(&sorted, judged, 4),
            p5_5star: k_star_sorted(&sorted, judged, 5),
            recall100: recall_sorted(&sorted, judged, 100, RELEVANT_LABEL),
        }
    }
}

/// Means over queries. The optional metrics average over the queries where they are defined and
/// are `None` when no query defines them (e.g. 5-star precision in a category with no 5-star clause).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct MeanMetrics {
    #[serde(rename = "ndcg@5")]
    pub ndcg5: f64,
    #[serde(rename = "ndcg@10")]
    pub ndcg10: f64,
    #[serde(rename = "p@5_3star")]
    pub p5_3star: Option<f64>,
    #[serde(rename = "p@5_4star")]
    pub p5_4star: Option<f64>,
    #[serde(rename = "p@5_5star")]
    pub p5_5star: Option<f64>,
    #[serde(rename = "recall@100")]
    pub recall100: Option<f64>,
    pub queries: usize,
}

fn mean(values: impl Iterator<Item = f64>) -> Option<f64> {
    let (sum, n) = values.fold((0.0, 0usize), |(s, n), v| (s + v, n + 1));
    (n > 0).then(|| sum / n as f64)
}

impl MeanMetrics {
    pub fn of<'a>(per_query: impl IntoIterator<Item = &'a QueryMetrics> + Clone) -> Self {
        let it = || per_query.clone().into_iter();
        MeanMetrics {
            ndcg5: mean(it().map(|m| m.ndcg5)).unwrap_or(0.0),
            ndcg10: mean(it().map(|m| m.ndcg10)).unwrap_or(0.0),
            p5_3star: mean(it().filter_map(|m| m.p5_3star)),
            p5_4star: mean(it().filter_map(|m| m.p5_4star)),
            p5_5star: mean(it().filter_map(|m| m.p5_5star)),
            recall100: mean(it().filter_map(|m| m.recall100)),
            queries: it().count(),
        }
    }

    /// The unweighted mean of several means, e.g. of one query set's figures in several
    /// wordings: each counts once, and an optional figure averages the means that define it.
    /// `queries` is the largest count among them (the wordings share their queries).
    pub fn mean_of<'a>(means: impl IntoIterator<Item = &'a MeanMetrics> + Clone) -> Self {
        let as_queries: Vec<QueryMetrics> = means
            .clone()
            .into_iter()
            .map(|m| QueryMetrics {
                ndcg5: m.ndcg5,
                ndcg10: m.ndcg10,
                p5_3star: m.p5_3star,
                p5_4star: m.p5_4star,
                p5_5star: m.p5_5star,
                recall100: m.recall100,
            })
            .collect();
        MeanMetrics {
            queries: means.into_iter().map(|m| m.queries).max().unwrap_or(0),
            ..MeanMetrics::of(&as_queries)
        }
    }
}

/// Means per group (ACORD: per query category, the paper's Table D-1).
pub fn mean_by_group<'a>(
    per_query: impl IntoIterator<Item = (&'a str, &'a QueryMetrics)>,
) -> BTreeMap<String, MeanMetrics> {
    let mut groups: BTreeMap<String, Vec<&QueryMetrics>> = BTreeMap::new();
    for (group, m) in per_query {
        groups.entry(group.to_owned()).or_default().push(m);
    }
    groups
        .into_iter()
        .map(|(g, ms)| (g, MeanMetrics::of(ms.iter().copied())))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn judged(pairs: &[(&str, i32)]) -> HashMap<String, i32> {
        pairs.iter().map(|(d, l)| (d.to_string(), *l)).collect()
    }

    fn run<'a>(pairs: &[(&'a str, f64)]) -> Vec<Scored<'a>> {
        pairs
            .iter()
            .map(|&(doc, score)| Scored { doc, score })
            .collect()
    }

    #[test]
    fn perfect_ranking_scores_one() {
        let j = judged(&[("a", 4), ("b", 2), ("c", 0)]);
        let r = run(&[("a", 3.0), ("b", 2.0), ("c", 1.0)]);
        assert!((ndcg_at_k(&r, &j, 5) - 1.0).abs() < 1e-12);
    }

    #[test]
    fn hand_computed_ndcg_with_linear_gain() {
        // Ranking: c(0), a(4), b(2). DCG@3 = 0 + 4/log2(3) + 2/log2(4).
        let j = judged(&[("a", 4), ("b", 2), ("c", 0)]);
        let r = run(&[("c", 3.0), ("a", 2.0), ("b", 1.0)]);
        let dcg = 4.0 / 3f64.log2() + 2.0 / 2.0;
        let idcg = 4.0 + 2.0 / 3f64.log2();
        assert!((ndcg_at_k(&r, &j, 3) - dcg / idcg).abs() < 1e-12);
    }

    #[test]
    fn ties_break_by_descending_doc_id() {
        // Equal scores: trec_eval puts "b" before "a".
        let j = judged(&[("a", 4), ("b", 0)]);
        let r = run(&[("a", 1.0), ("b", 1.0)]);
        let expected = (4.0 / 3f64.log2()) / 4.0;
        assert!((ndcg_at_k(&r, &j, 2) - expected).abs() < 1e-12);
    }

    #[test]
    fn ideal_uses_unretrieved_judgements() {
        let j = judged(&[("a", 1), ("z", 4)]);
        let r = run(&[("a", 1.0)]);
        let expected = 1.0 / (4.0 + 1.0 / 3f64.log2());
        assert!((ndcg_at_k(&r, &j, 5) - expected).abs() < 1e-12);
    }

    #[test]
    fn no_relevant_judgement_gives_zero() {
        let j = judged(&[("a", 0)]);
        assert_eq!(ndcg_at_k(&run(&[("a", 1.0)]), &j, 5), 0.0);
    }

    #[test]
    fn k_star_precision_divides_by_available() {
        // Two 5-star clauses exist; one is in the top 5 → 1/2.
        let j = judged(&[("a", 4), ("b", 4), ("c", 3), ("d", 0)]);
        let r = run(&[("a", 9.0), ("c", 8.0), ("d", 7.0)]);
        assert_eq!(k_star_precision_at_5(&r, &j, 5), Some(0.5));
        // 4-star and up: a, b, c available (3); a and c retrieved → 2/3.
        assert_eq!(k_star_precision_at_5(&r, &j, 4), Some(2.0 / 3.0));
        assert_eq!(k_star_precision_at_5(&r, &judged(&[("a", 1)]), 3), None);
    }

    #[test]
    fn condense_drops_unjudged() {
        let j = judged(&[("a", 4), ("c", 0)]);
        let r = run(&[("x", 9.0), ("a", 5.0), ("c", 1.0)]);
        let condensed = condense(&r, &j);
        assert_eq!(condensed.len(), 2);
        assert!((ndcg_at_k(&condensed, &j, 5) - 1.0).abs() < 1e-12);
        assert!(ndcg_at_k(&r, &j, 5) < 1.0);
    }

    #[test]
    fn recall_counts_three_stars_and_up() {
        let j = judged(&[("a", 2), ("b", 1), ("c", 4)]);
        let r = run(&[("a", 2.0), ("b", 1.0)]);
        assert_eq!(recall_at_k(&r, &j, 100, RELEVANT_LABEL), Some(0.5));
    }

    #[test]
    fn means_skip_undefined_values() {
        let a = QueryMetrics {
            ndcg5: 1.0,
            p5_5star: Some(1.0),
            ..Default::default()
        };
        let b = QueryMetrics {
            ndcg5: 0.0,
            p5_5star: None,
            ..Default::default()
        };
        let m = MeanMetrics::of([&a, &b]);
        assert_eq!(m.ndcg5, 0.5);
        assert_eq!(m.p5_5star, Some(1.0));
        assert_eq!(m.p5_3star, None);
        assert_eq!(m.queries, 2);
    }
}
