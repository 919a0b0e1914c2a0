//! Query latency and throughput of a pipeline over a library (`precedent bench`).
//!
//! Why here: what is timed (opening the library; one warm-up pass, so page cache and lazy loads
//! do not count; then every query `repeat` times on one thread, spelling correction and the
//! pipeline as `search` runs them) and which percentiles are
//! reported are the measurement; the CLI names the library, queries and pipeline, and prints.

use std::path::Path;
use std::sync::Arc;

use anyhow::bail;
use precedent_engine::pipeline_choice::{build_command_pipeline, PipelineOptions};
use precedent_formats::Query;
use precedent_library::Library;
use serde::Serialize;

/// What `precedent bench` is asked to time: the pipeline `pipeline` (built with `options`) over
/// the library at `index`, the top `k` of each query of the file `queries`, `repeat` times.
pub struct BenchPlan<'a> {
    pub index: &'a Path,
    pub queries: &'a Path,
    pub pipeline: &'a str,
    pub options: &'a PipelineOptions<'a>,
    pub k: usize,
    pub repeat: usize,
}

/// Opens the library (timed), builds the pipeline and times it ([`measure`]). A file with no
/// query is refused before the library is opened: there would be nothing to time.
pub fn bench(plan: &BenchPlan<'_>) -> anyhow::Result<LatencyReport> {
    let queries = precedent_formats::read_queries(plan.queries)?;
    if queries.is_empty() {
        bail!("{}: no queries", plan.queries.display());
    }
    let open_started = std::time::Instant::now();
    let library = Arc::new(Library::open(plan.index)?);
    let open_ms = open_started.elapsed().as_secs_f64() * 1e3;
    let built = build_command_pipeline(plan.pipeline, library.clone(), plan.options)?;
    let clauses = library.len();
    // Each timed search is what `search` does: spelling first, then the pipeline.
    let embedder = built.embedder.clone();
    let search = |text: &str, k: usize| -> anyhow::Result<()> {
        let corrected =
            precedent_engine::spelling::corrected_query(&library, embedder.as_deref(), text)?;
        built.pipeline.search(&corrected.text, k)?;
        Ok(())
    };
    measure(
        built.pipeline.name(),
        &search,
        &queries,
        plan.k,
        plan.repeat,
        clauses,
        open_ms,
    )
}

/// What `bench` reports (milliseconds, queries per second). Its fields serialize in the order
/// `bench --json` prints them.
#[derive(Debug, Clone, Serialize)]
pub struct LatencyReport {
    pub pipeline: String,
    pub clauses: usize,
    /// Timed searches (queries × repeats).
    pub queries: usize,
    pub k: usize,
    /// Opening the library.
    pub open_ms: f64,
    pub qps: f64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
}

impl LatencyReport {
    /// The line `bench` prints: throughput, median and 99th-percentile latency, opening time.
    pub fn line(&self) -> String {
        format!(
            "{} over {} clauses, top {}: {} queries, {:.1} q/s (1 thread), p50 {:.3} ms, p99 {:.3} ms, open {:.0} ms",
            self.pipeline,
            self.clauses,
            self.k,
            self.queries,
            self.qps,
            self.p50_ms,
            self.p99_ms,
            self.open_ms
        )
    }
}

/// Times `search` (one query's top `k` with pipeline `pipeline`) over `queries` (`repeat`
/// passes after a warm-up pass) over a library of `clauses` clauses opened in `open_ms`.
pub fn measure(
    pipeline: &str,
    search: &dyn Fn(&str, usize) -> anyhow::Result<()>,
    queries: &[Query],
    k: usize,
    repeat: usize,
    clauses: usize,
    open_ms: f64,
) -> anyhow::Result<LatencyReport> {
    // One warm-up pass so page cache and lazy loads (vectors, the library's words) do not count.
    for q in queries {
        search(&q.text, k)?;
    }
    let mut latencies = Vec::with_capacity(queries.len() * repeat);
    let started = std::time::Instant::now();
    for _ in 0..repeat.max(1) {
        for q in queries {
            let t = std::time::Instant::now();
            search(&q.text, k)?;
            latencies.push(t.elapsed().as_secs_f64() * 1e3);
        }
    }
    let total = started.elapsed().as_secs_f64();
    latencies.sort_by(|a, b| a.total_cmp(b));
    let pct = |p: f64| {
        let last = latencies.len().saturating_sub(1);
        latencies
            .get((last as f64 * p).round() as usize)
            .copied()
            .unwrap_or(0.0)
    };
    Ok(LatencyReport {
        pipeline: pipeline.to_owned(),
        clauses,
        queries: latencies.len(),
        k,
        open_ms,
        qps: latencies.len() as f64 / total,
        p50_ms: pct(0.50),
        p99_ms: pct(0.99),
        max_ms: pct(1.0),
    })
}

#[cfg(test)]
mod tests {
    use precedent_engine::library_setup::RerankChoice;
    use precedent_engine::pipeline_choice::LearnedChoice;
    use precedent_judge::pipelines::JudgeSettings;
    use precedent_judge::JudgeMode;

    use super::*;

    #[test]
    fn a_query_file_without_queries_is_refused_before_any_library() {
        let dir = tempfile::tempdir().expect("tempdir");
        let queries = dir.path().join("queries.jsonl");
        std::fs::write(&queries, "").expect("write");
        let judge = JudgeSettings {
            top: 20,
            mode: JudgeMode::Pointwise,
            weight: 0.0,
            model: None,
            max_clause_tokens: 384,
            cache: None,
        };
        let options = PipelineOptions {
            model: None,
            rerank: RerankChoice::default(),
            learned: LearnedChoice {
                model_dir: None,
                learned_top: precedent_learn::LEARNED_TOP,
            },
            judge: &judge,
        };
        let plan = BenchPlan {
            index: &dir.path().join("no-library"),
            queries: &queries,
            pipeline: "bm25",
            options: &options,
            k: 10,
            repeat: 1,
        };
        let refused = bench(&plan).unwrap_err().to_string();
        assert!(refused.ends_with("queries.jsonl: no queries"), "{refused}");
    }
}
