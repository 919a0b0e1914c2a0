//! What an LLM judge adds to the learned ranker, measured by cross-validation over ratings
//! (`precedent eval-judge`): out-of-fold learned scores, the judge's stars over each query's
//! learned top N, and the blend weight chosen inside the training folds.
//!
//! Why here: the folds, the weight grid, the blend and the figures are the measurement; the
//! CLI loads the judge it is asked for and prints the table.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result};
use precedent_engine::Report;
use precedent_judge::rerank::judge_stars;
use precedent_judge::{combine, Judge, JudgeMode, Usage};
use precedent_learn::cv::{assign_folds, out_of_fold_scores};
use precedent_learn::{RatedQuery, TrainOptions, TrainingData};
use precedent_library::Library;
use precedent_metrics::{MeanMetrics, QueryMetrics, Scored};
use serde::Serialize;

/// How the judge is cross-validated.
#[derive(Debug, Clone, Copy)]
pub struct JudgeCvPlan {
    /// Folds by query (the learned ranker and the judge weight are both refit per fold).
    pub folds: usize,
    pub seed: u64,
    /// Judge only every query whose position in id order is a multiple of this.
    pub every: usize,
    /// How many of the learned ranker's top clauses the judge reads.
    pub top: usize,
    pub mode: JudgeMode,
}

/// Weights tried for the blend (0 = learned order; the last ≈ the judge's order alone).
const WEIGHT_GRID: &[f32] = &[
    0.0, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 5.0, 1e4,
];

/// One judged query: its fold, and the judged head's labels and stars.
#[derive(Serialize)]
pub struct QueryReport {
    pub id: String,
    pub fold: usize,
    /// Labels (0..4) of the judged top N, in learned order, and the judge's stars for them.
    pub labels: Vec<i32>,
    pub stars: Vec<f32>,
    pub seconds: f64,
}

/// What a judge adds to the learned ranker, cross-validated (`precedent eval-judge`).
#[derive(Serialize)]
pub struct EvalJudgeReport {
    pub judge: String,
    pub mode: String,
    pub top: usize,
    pub folds: usize,
    pub queries: usize,
    pub learned: MeanMetrics,
    pub judge_alone: MeanMetrics,
    pub blended_cv: MeanMetrics,
    pub weights_per_fold: Vec<f32>,
    pub weight_on_all: f32,
    pub in_sample_by_weight: Vec<(f32, MeanMetrics)>,
    /// Spearman correlation of judge stars with the expert labels over all judged pairs.
    pub stars_label_spearman: f64,
    pub usage: Usage,
    pub seconds_per_query: f64,
    pub per_query: Vec<QueryReport>,
}

/// Cross-validates the judge `load_judge` loads (once the learned scores are known, so a
/// long cross-validation is not held up by it) over the learned ranker's out-of-fold order of
/// `data`'s rated queries, as `plan` says.
pub fn judge_cv(
    library: &Arc<Library>,
    data: &TrainingData<'_>,
    load_judge: impl FnOnce() -> Result<Arc<dyn Judge>>,
    plan: &JudgeCvPlan,
    report: &dyn Report,
) -> Result<EvalJudgeReport> {
    let rated = data.rated;
    let options = TrainOptions {
        seed: plan.seed,
        ..TrainOptions::default()
    };
    // Out-of-fold learned scores, exactly as `train --cv` computes them.
    let learned_scores = out_of_fold_scores(library, data, plan.folds, &options, |stage| {
        report.note(stage)
    })?;
    // The same folds (same ids and seed) choose the judge's blend weight below.
    let ids: Vec<&str> = rated.iter().map(|q| q.id.as_str()).collect();
    let fold_of = assign_folds(&ids, plan.folds, plan.seed);

    // The judge over each (sampled) query's learned top N.
    let judge = load_judge()?;
    let top = plan.top;
    let mut sorted_ids: Vec<usize> = (0..rated.len()).collect();
    sorted_ids.sort_by(|&a, &b| rated[a].id.cmp(&rated[b].id));
    let sample: Vec<usize> = sorted_ids
        .into_iter()
        .enumerate()
        .filter(|(n, _)| n % plan.every.max(1) == 0)
        .map(|(_, i)| i)
        .collect();
    report.start("judging", sample.len() as u64);
    let mut judged: Vec<(usize, Vec<usize>, Vec<f32>, f64)> = Vec::new();
    for &i in &sample {
        let q = &rated[i];
        let order = learned_order(q, &learned_scores[i]);
        let head: Vec<usize> = order.iter().copied().take(top).collect();
        let clause_texts = head
            .iter()
            .map(|&r| {
                library
                    .store()
                    .clause(q.ratings[r].1)
                    .map(|c| precedent_library::indexed_text(&c))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let refs: Vec<&str> = clause_texts.iter().map(String::as_str).collect();
        let started = Instant::now();
        let stars = judge_stars(judge.as_ref(), plan.mode, &q.text, &refs)
            .with_context(|| format!("judging query {:?}", q.id))?;
        judged.push((i, order, stars, started.elapsed().as_secs_f64()));
        report.advance(1);
    }
    report.finish();

    // Metrics of one query when its judged head is blended with weight `w`.
    let metrics_at = |i: usize, order: &[usize], stars: &[f32], w: f32| -> QueryMetrics {
        let q = &rated[i];
        let n = stars.len();
        let run: Vec<Scored> = order
            .iter()
            .enumerate()
            .map(|(pos, &r)| Scored {
                doc: q.ratings[r].0.as_str(),
                score: if pos < n {
                    f64::from(combine(pos, n, stars[pos], w))
                } else {
                    -(pos as f64)
                },
            })
            .collect();
        let labels: HashMap<String, i32> =
            q.ratings.iter().map(|(d, _, l)| (d.clone(), *l)).collect();
        QueryMetrics::compute(&run, &labels)
    };
    let by_weight: Vec<Vec<QueryMetrics>> = WEIGHT_GRID
        .iter()
        .map(|&w| {
            judged
                .iter()
                .map(|(i, o, s, _)| metrics_at(*i, o, s, w))
                .collect()
        })
        .collect();
    let best_weight = |keep: &dyn Fn(usize) -> bool| -> f32 {
        let mut best = (f64::NEG_INFINITY, 0.0f32);
        for (wi, &w) in WEIGHT_GRID.iter().enumerate() {
            let chosen: Vec<&QueryMetrics> = judged
                .iter()
                .zip(&by_weight[wi])
                .filter(|((i, ..), _)| keep(*i))
                .map(|(_, m)| m)
                .collect();
            let score = MeanMetrics::of(chosen.iter().copied()).ndcg5;
            if score > best.0 + 1e-12 {
                best = (score, w);
            }
        }
        best.1
    };
    let mut weights_per_fold = Vec::new();
    let mut blended = Vec::new();
    for fold in 0..plan.folds {
        let w = best_weight(&|i| fold_of[&rated[i].id] != fold);
        weights_per_fold.push(w);
        for (i, o, s, _) in judged
            .iter()
            .filter(|(i, ..)| fold_of[&rated[*i].id] == fold)
        {
            blended.push(metrics_at(*i, o, s, w));
        }
    }
    let weight_on_all = best_weight(&|_| true);
    let learned = MeanMetrics::of(by_weight[0].iter());
    let judge_alone = MeanMetrics::of(by_weight[WEIGHT_GRID.len() - 1].iter());
    let blended_cv = MeanMetrics::of(blended.iter());
    let usage = judge.usage();
    let seconds: f64 = judged.iter().map(|j| j.3).sum();
    let mut pairs = Vec::new();
    let per_query: Vec<QueryReport> = judged
        .iter()
        .map(|(i, o, s, secs)| {
            let labels: Vec<i32> = o
                .iter()
                .take(s.len())
                .map(|&r| rated[*i].ratings[r].2)
                .collect();
            pairs.extend(
                labels
                    .iter()
                    .zip(s)
                    .map(|(l, s)| (f64::from(*l), f64::from(*s))),
            );
            QueryReport {
                id: rated[*i].id.clone(),
                fold: fold_of[&rated[*i].id],
                labels,
                stars: s.clone(),
                seconds: *secs,
            }
        })
        .collect();
    let report = EvalJudgeReport {
        judge: judge.name(),
        mode: format!("{:?}", plan.mode).to_lowercase(),
        top,
        folds: plan.folds,
        queries: judged.len(),
        learned,
        judge_alone,
        blended_cv,
        weights_per_fold,
        weight_on_all,
        in_sample_by_weight: WEIGHT_GRID
            .iter()
            .zip(&by_weight)
            .map(|(w, m)| (*w, MeanMetrics::of(m.iter())))
            .collect(),
        stars_label_spearman: spearman(&pairs),
        seconds_per_query: seconds / judged.len().max(1) as f64,
        usage,
        per_query,
    };
    Ok(report)
}

/// Positions into `q.ratings`, best learned score first, ties as trec_eval breaks them
/// (document id descending), so the judged head is exactly what the metrics see on top.
fn learned_order(q: &RatedQuery, scores: &[f32]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..q.ratings.len()).collect();
    order.sort_by(|&a, &b| {
        scores[b]
            .total_cmp(&scores[a])
            .then_with(|| q.ratings[b].0.cmp(&q.ratings[a].0))
    });
    order
}

/// Spearman's rank correlation (average ranks for ties).
fn spearman(pairs: &[(f64, f64)]) -> f64 {
    fn ranks(values: Vec<f64>) -> Vec<f64> {
        let mut idx: Vec<usize> = (0..values.len()).collect();
        idx.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
        let mut out = vec![0.0; values.len()];
        let mut start = 0;
        while start < idx.len() {
            let mut end = start;
            while end + 1 < idx.len() && values[idx[end + 1]] == values[idx[start]] {
                end += 1;
            }
            let rank = (start + end) as f64 / 2.0;
            for &i in &idx[start..=end] {
                out[i] = rank;
            }
            start = end + 1;
        }
        out
    }
    if pairs.len() < 2 {
        return 0.0;
    }
    let a = ranks(pairs.iter().map(|p| p.0).collect());
    let b = ranks(pairs.iter().map(|p| p.1).collect());
    let n = a.len() as f64;
    let (ma, mb) = (a.iter().sum::<f64>() / n, b.iter().sum::<f64>() / n);
    let cov: f64 = a.iter().zip(&b).map(|(x, y)| (x - ma) * (y - mb)).sum();
    let va: f64 = a.iter().map(|x| (x - ma).powi(2)).sum();
    let vb: f64 = b.iter().map(|y| (y - mb).powi(2)).sum();
    if va == 0.0 || vb == 0.0 {
        0.0
    } else {
        cov / (va * vb).sqrt()
    }
}

impl EvalJudgeReport {
    /// The report as `precedent eval-judge` prints it.
    pub fn table(&self) -> String {
        table_of(self)
    }
}

fn table_of(r: &EvalJudgeReport) -> String {
    let pct = |x: Option<f64>| x.map_or("    -".to_string(), |v| format!("{:5.1}", 100.0 * v));
    let row = |name: &str, m: &MeanMetrics| {
        format!(
            "{:<44} {} {} {} {}\n",
            name,
            pct(Some(m.ndcg5)),
            pct(Some(m.ndcg10)),
            pct(m.p5_4star),
            pct(m.p5_5star)
        )
    };
    let mut out = format!(
        "judge {} ({}, top {}) · {}-fold CV by query · {} queries judged · condensed protocol\n{:<44} {:>5} {:>5} {:>5} {:>5}\n",
        r.judge, r.mode, r.top, r.folds, r.queries, "ranking", "nDCG5", "nDC10", "4*P5", "5*P5"
    );
    out.push_str(&row("learned (out-of-fold)", &r.learned));
    out.push_str(&row(
        &format!("judge alone on the learned top {}", r.top),
        &r.judge_alone,
    ));
    out.push_str(&row(
        "learned + judge, weight chosen per fold",
        &r.blended_cv,
    ));
    out.push_str(&format!(
        "weights chosen per fold: {:?}; on all judged queries: {}\n",
        r.weights_per_fold, r.weight_on_all
    ));
    out.push_str(&format!(
        "judge stars vs expert labels on the judged clauses: Spearman {:.3}\n",
        r.stars_label_spearman
    ));
    let u = &r.usage;
    let calls = u.calls.max(1) as f64;
    out.push_str(&format!(
        "cost: {} model calls ({} from cache), {:.0} prompt tokens and {:.1} completion tokens per call, {:.2} calls/s, {:.1} s per query, ${:.4}\n",
        u.calls,
        u.cache_hits,
        u.tokens_in as f64 / calls,
        u.tokens_out as f64 / calls,
        if u.seconds > 0.0 { u.calls as f64 / u.seconds } else { 0.0 },
        r.seconds_per_query,
        u.cost_usd
    ));
    out.push_str("in-sample by weight (for reading only; not a result):\n");
    for (w, m) in &r.in_sample_by_weight {
        out.push_str(&format!(
            "  w {:<8} nDCG5 {} nDCG10 {}\n",
            w,
            pct(Some(m.ndcg5)),
            pct(Some(m.ndcg10))
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spearman_of_monotone_and_reversed_pairs() {
        let up: Vec<(f64, f64)> = (0..5).map(|i| (i as f64, (i * i) as f64)).collect();
        assert!((spearman(&up) - 1.0).abs() < 1e-12);
        let down: Vec<(f64, f64)> = (0..5).map(|i| (i as f64, -(i as f64))).collect();
        assert!((spearman(&down) + 1.0).abs() < 1e-12);
        assert_eq!(spearman(&[(1.0, 1.0), (1.0, 2.0)]), 0.0);
    }
}
