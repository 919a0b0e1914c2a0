//! Benchmark harnesses: run a pipeline over a benchmark's queries and score it exactly as the
//! reference tools do. This module is ACORD's; [`cuad`] cross-validates the clause typer on the
//! CUAD contracts as the CUAD paper scores it, [`clause_types`] the clause types ingest stores,
//! and [`legalbench`] tunes and scores LegalBench's
//! thresholds on that cross-validation's held-out clauses.
//!
//! ACORD protocol (Wang et al.): each query has ~1,100 judged clauses out of 3,931; unjudged pairs
//! are unknown. The pipeline ranks the *whole* corpus; the **condensed** protocol then drops the
//! clauses not judged for the query and computes the metrics on what remains. The **full**
//! protocol keeps them, counting unjudged clauses as irrelevant (what plain pytrec_eval on the run
//! file gives).
//!
//! The harness never learns from the qrels it scores against: it only reads them after the
//! pipeline has ranked.

pub mod bi_encoder_cv;
pub mod clause_types;
pub mod cuad;
pub mod cuad_run;
pub mod judge_cv;
pub mod latency;
pub mod legalbench;
pub mod legalbench_run;
pub mod library_qrels;
pub mod ranker_cv;
pub mod transfer;
pub mod wordings;

use std::collections::{BTreeMap, HashMap};

use precedent_formats::{Qrels, Query, RunEntry};
use precedent_library::{Library, Progress};
use precedent_metrics::{condense, mean_by_group, sort_trec, MeanMetrics, QueryMetrics, Scored};
use precedent_rank::{Pipeline, RankError};
use serde::Serialize;

#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    #[error(transparent)]
    Rank(#[from] RankError),
    #[error("query {query:?}: {source}")]
    Query {
        query: String,
        #[source]
        source: RankError,
    },
    #[error("no query of the qrels{where_} is in the queries file: nothing to evaluate")]
    NothingToEvaluate { where_: String },
}

/// How unjudged clauses are treated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Protocol {
    /// Drop unjudged clauses from each ranking before scoring (ACORD's protocol).
    Condensed,
    /// Score the ranking as is; unjudged clauses count as label 0.
    Full,
}

impl Protocol {
    /// The name `--protocol` takes.
    pub fn name(self) -> &'static str {
        match self {
            Protocol::Condensed => "condensed",
            Protocol::Full => "full",
        }
    }
}

impl std::str::FromStr for Protocol {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "condensed" => Ok(Protocol::Condensed),
            "full" => Ok(Protocol::Full),
            other => Err(format!("unknown protocol {other:?} (condensed or full)")),
        }
    }
}

/// One query's outcome.
#[derive(Debug, Clone, Serialize)]
pub struct QueryResult {
    pub query_id: String,
    pub category: String,
    pub judged: usize,
    pub retrieved: usize,
    pub metrics: QueryMetrics,
}

/// The outcome of a benchmark run.
#[derive(Debug, Clone, Serialize)]
pub struct Evaluation {
    pub pipeline: String,
    pub protocol: Protocol,
    pub overall: MeanMetrics,
    pub per_category: BTreeMap<String, MeanMetrics>,
    pub per_query: Vec<QueryResult>,
    /// The ranking that was scored, in trec order, full depth (before condensing).
    #[serde(skip)]
    pub run: Vec<RunEntry>,
    /// Warnings raised while evaluating (unknown query ids, judgements of absent clauses).
    pub warnings: Vec<String>,
}

/// Settings of an ACORD-style evaluation.
#[derive(Debug, Clone)]
pub struct EvalOptions {
    pub protocol: Protocol,
    /// How many clauses the pipeline ranks per query; `None` ranks the whole library, which the
    /// condensed protocol needs to be faithful.
    pub depth: Option<usize>,
}

impl Default for EvalOptions {
    fn default() -> Self {
        EvalOptions {
            protocol: Protocol::Condensed,
            depth: None,
        }
    }
}

const UNCATEGORIZED: &str = "(none)";

/// Runs `pipeline` for every query of `qrels` and scores it.
pub fn evaluate(
    pipeline: &Pipeline,
    library: &Library,
    queries: &[Query],
    qrels: &Qrels,
    options: &EvalOptions,
    progress: &dyn Progress,
) -> Result<Evaluation, EvalError> {
    let by_id: HashMap<&str, &Query> = queries.iter().map(|q| (q.id.as_str(), q)).collect();
    let mut warnings = Vec::new();
    let mut todo = Vec::new();
    for (query_id, judged) in qrels.iter() {
        match by_id.get(query_id) {
            Some(query) => todo.push((*query, judged)),
            None => warnings.push(format!(
                "{}: query id {query_id:?} is not in the queries file; skipped",
                qrels
                    .location(query_id)
                    .unwrap_or_else(|| "qrels".to_owned())
            )),
        }
    }
    if todo.is_empty() {
        return Err(EvalError::NothingToEvaluate {
            where_: qrels
                .source()
                .map(|p| format!(" ({})", p.display()))
                .unwrap_or_default(),
        });
    }
    let absent = qrels
        .iter()
        .flat_map(|(_, judged)| judged.keys())
        .filter(|doc| library.store().row(doc).is_none())
        .count();
    if absent > 0 {
        warnings.push(format!(
            "{absent} judgements name clauses that are not in the library; they count as never retrieved"
        ));
    }
    let depth = options.depth.unwrap_or(library.len()).max(1);
    progress.start("ranking queries", todo.len() as u64);
    let mut per_query = Vec::with_capacity(todo.len());
    let mut run = Vec::new();
    for (query, judged) in todo {
        let hits = pipeline
            .search(&query.text, depth)
            .map_err(|source| EvalError::Query {
                query: query.id.clone(),
                source,
            })?;
        let mut scored: Vec<Scored> = hits
            .iter()
            .filter_map(|h| {
                library.store().id(h.row).map(|doc| Scored {
                    doc,
                    score: f64::from(h.score),
                })
            })
            .collect();
        sort_trec(&mut scored);
        run.extend(scored.iter().enumerate().map(|(i, s)| RunEntry {
            query_id: query.id.clone(),
            doc_id: s.doc.to_owned(),
            rank: i + 1,
            score: s.score,
        }));
        let scored_for_metrics = match options.protocol {
            Protocol::Condensed => condense(&scored, judged),
            Protocol::Full => scored.clone(),
        };
        per_query.push(QueryResult {
            query_id: query.id.clone(),
            category: query
                .category
                .clone()
                .unwrap_or_else(|| UNCATEGORIZED.to_owned()),
            judged: judged.len(),
            retrieved: scored.len(),
            metrics: QueryMetrics::compute(&scored_for_metrics, judged),
        });
        progress.advance(1);
    }
    progress.finish();
    let overall = MeanMetrics::of(per_query.iter().map(|r| &r.metrics));
    let per_category = mean_by_group(per_query.iter().map(|r| (r.category.as_str(), &r.metrics)));
    Ok(Evaluation {
        pipeline: pipeline.name().to_owned(),
        protocol: options.protocol,
        overall,
        per_category,
        per_query,
        run,
        warnings,
    })
}

impl Evaluation {
    /// The JSON summary: metrics as fractions 0..1.
    pub fn summary_json(&self) -> serde_json::Value {
        serde_json::json!({
            "pipeline": self.pipeline,
            "protocol": self.protocol,
            "queries": self.per_query.len(),
            "overall": self.overall,
            "per_category": self.per_category,
            "per_query": self.per_query.iter().map(|q| (q.query_id.clone(), serde_json::json!({
                "category": q.category,
                "metrics": q.metrics,
            }))).collect::<serde_json::Map<_, _>>(),
        })
    }

    /// A paper-style table in percent: per category, then overall; per query on request.
    pub fn table(&self, per_query: bool) -> String {
        let mut out = String::new();
        let header = format!(
            "{:<42} {:>4} {:>7} {:>7} {:>7} {:>7} {:>7} {:>7}\n",
            "", "n", "NDCG@5", "NDCG@10", "3★P@5", "4★P@5", "5★P@5", "R@100"
        );
        let pct = |v: Option<f64>| match v {
            Some(v) => format!("{:>7.1}", 100.0 * v),
            None => format!("{:>7}", "–"),
        };
        let row = |name: &str, m: &MeanMetrics| {
            format!(
                "{:<42} {:>4} {} {} {} {} {} {}\n",
                truncate(name, 42),
                m.queries,
                pct(Some(m.ndcg5)),
                pct(Some(m.ndcg10)),
                pct(m.p5_3star),
                pct(m.p5_4star),
                pct(m.p5_5star),
                pct(m.recall100)
            )
        };
        out.push_str(&format!(
            "pipeline {} · {} protocol · {} queries\n",
            self.pipeline,
            match self.protocol {
                Protocol::Condensed => "condensed",
                Protocol::Full => "full",
            },
            self.per_query.len()
        ));
        out.push_str(&header);
        for (category, m) in &self.per_category {
            out.push_str(&row(category, m));
        }
        out.push_str(&row("Overall", &self.overall));
        if per_query {
            out.push('\n');
            out.push_str(&header);
            for q in &self.per_query {
                let m = MeanMetrics::of([&q.metrics]);
                out.push_str(&row(&q.query_id, &m));
            }
        }
        out
    }
}

fn truncate(s: &str, width: usize) -> String {
    if s.chars().count() <= width {
        s.to_owned()
    } else {
        let mut t: String = s.chars().take(width - 1).collect();
        t.push('…');
        t
    }
}
