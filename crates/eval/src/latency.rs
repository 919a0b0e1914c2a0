//! Query latency and throughput of a pipeline over a library (`precedent bench`).
//!
//! Why here: what is timed (one warm-up pass first, so page cache and lazy loads do not count;
//! then every query `repeat` times on one thread) and which percentiles are reported are the
//! measurement; the CLI opens the library, builds the pipeline and prints.

use precedent_formats::Query;
use precedent_rank::{Pipeline, RankError};
use serde::Serialize;

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

/// Times `pipeline` over `queries` (top `k`, `repeat` passes after a warm-up pass) over a
/// library of `clauses` clauses opened in `open_ms`.
pub fn measure(
    pipeline: &Pipeline,
    queries: &[Query],
    k: usize,
    repeat: usize,
    clauses: usize,
    open_ms: f64,
) -> Result<LatencyReport, RankError> {
    // One warm-up pass so page cache and lazy loads do not count.
    for q in queries {
        pipeline.search(&q.text, k)?;
    }
    let mut latencies = Vec::with_capacity(queries.len() * repeat);
    let started = std::time::Instant::now();
    for _ in 0..repeat.max(1) {
        for q in queries {
            let t = std::time::Instant::now();
            pipeline.search(&q.text, k)?;
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
        pipeline: pipeline.name().to_owned(),
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
