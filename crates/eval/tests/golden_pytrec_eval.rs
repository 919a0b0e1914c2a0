//! Golden test: our metrics equal pytrec_eval's (trec_eval's) to 1e-9 on fixtures built to hit the
//! corner cases: tied scores (broken by descending doc id), explicit zero judgements, unjudged
//! documents in the run, judged documents never retrieved, a query with no relevant document and
//! a query id that needs CSV quoting. Requires `python3` with `pytrec-eval-terrier` (installed by
//! `.ci/run`); a missing reference is a failure, not a skip.

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Command;

use precedent_formats::{write_run, Qrels, RunEntry};
use precedent_metrics::{condense, QueryMetrics, Scored};

/// Small deterministic generator so the fixture is the same on every machine.
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

struct Fixture {
    qrels: Qrels,
    qrels_rows: Vec<(String, String, i32)>,
    run: Vec<RunEntry>,
}

fn fixture() -> Fixture {
    let mut rng = Lcg(42);
    let mut qrels = Qrels::new();
    let mut qrels_rows = Vec::new();
    let mut run = Vec::new();
    let query_ids: Vec<String> = (0..24)
        .map(|i| match i {
            0 => "\"as is\" clause with carveouts".to_owned(),
            1 => "no relevant, only zeros".to_owned(),
            _ => format!("q{i:02}"),
        })
        .collect();
    for (qi, q) in query_ids.iter().enumerate() {
        for d in 0..40 {
            let doc = format!("d{:03}", (d * 7 + qi * 3) % 60);
            // ~30% of documents unjudged; query 1 judges everything 0.
            if rng.below(10) < 3 {
                continue;
            }
            let label = if qi == 1 { 0 } else { rng.below(5) as i32 };
            if qrels.insert(q, &doc, label).is_none() {
                qrels_rows.push((q.clone(), doc, label));
            }
        }
        let mut rank = 0;
        for d in 0..60 {
            if rng.below(3) == 0 {
                continue; // judged-but-not-retrieved documents exist too
            }
            rank += 1;
            // Coarse scores so that ties are frequent.
            let score = (rng.below(8) as f64) * 0.5;
            run.push(RunEntry {
                query_id: q.clone(),
                doc_id: format!("d{d:03}"),
                rank,
                score,
            });
        }
    }
    Fixture {
        qrels,
        qrels_rows,
        run,
    }
}

fn reference(fixture: &Fixture, protocol: &str) -> serde_json::Value {
    let dir = tempfile::tempdir().expect("tempdir");
    let qrels_path = dir.path().join("qrels.tsv");
    let mut w = csv::WriterBuilder::new()
        .delimiter(b'\t')
        .from_path(&qrels_path)
        .expect("qrels file");
    w.write_record(["query-id", "corpus-id", "score"])
        .expect("header");
    for (q, d, l) in &fixture.qrels_rows {
        w.write_record([q.as_str(), d.as_str(), &l.to_string()])
            .expect("row");
    }
    w.flush().expect("flush");
    let run_path = dir.path().join("run.tsv");
    write_run(&run_path, &fixture.run).expect("run file");
    let out_path = dir.path().join("reference.json");
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scripts/score_run.py");
    let output = Command::new("python3")
        .arg(&script)
        .args(["--qrels", qrels_path.to_str().expect("utf8")])
        .args(["--run", run_path.to_str().expect("utf8")])
        .args(["--protocol", protocol])
        .args(["--per-query-out", out_path.to_str().expect("utf8")])
        .output()
        .expect("python3 must be installed (see .ci/run)");
    assert!(
        output.status.success(),
        "reference scorer failed (is pytrec-eval-terrier installed? see .ci/run): {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&std::fs::read(out_path).expect("reference output")).expect("json")
}

fn ours(fixture: &Fixture, condensed: bool) -> HashMap<String, QueryMetrics> {
    let mut by_query: HashMap<&str, Vec<Scored>> = HashMap::new();
    for e in &fixture.run {
        by_query.entry(&e.query_id).or_default().push(Scored {
            doc: &e.doc_id,
            score: e.score,
        });
    }
    fixture
        .qrels
        .iter()
        .map(|(q, judged)| {
            let run = by_query.get(q).cloned().unwrap_or_default();
            let run = if condensed {
                condense(&run, judged)
            } else {
                run
            };
            (q.to_owned(), QueryMetrics::compute(&run, judged))
        })
        .collect()
}

fn compare(protocol: &str) {
    let fixture = fixture();
    assert!(fixture.run.len() > 500 && fixture.qrels.num_queries() == 24);
    let reference = reference(&fixture, protocol);
    let ours = ours(&fixture, protocol == "condensed");
    let per_query = reference["per_query"].as_object().expect("per_query");
    assert_eq!(per_query.len(), ours.len());
    let mut nonzero = 0;
    for (q, m) in &ours {
        let r = &per_query[q];
        let pairs = [
            ("ndcg@5", Some(m.ndcg5)),
            ("ndcg@10", Some(m.ndcg10)),
            ("p@5_3star", m.p5_3star),
            ("p@5_4star", m.p5_4star),
            ("p@5_5star", m.p5_5star),
            ("recall@100", m.recall100),
        ];
        for (name, value) in pairs {
            let expected = r[name].as_f64();
            match (value, expected) {
                (Some(a), Some(b)) => assert!(
                    (a - b).abs() <= 1e-9,
                    "{protocol} {q:?} {name}: ours {a} vs pytrec_eval {b}"
                ),
                (None, None) => {}
                other => panic!("{protocol} {q:?} {name}: defined differently {other:?}"),
            }
        }
        if m.ndcg5 > 0.0 && m.ndcg5 < 1.0 {
            nonzero += 1;
        }
    }
    assert!(
        nonzero > 10,
        "fixture must exercise non-trivial NDCG values"
    );
}

#[test]
fn ndcg_and_kstar_equal_pytrec_eval_full_protocol() {
    compare("full");
}

#[test]
fn ndcg_and_kstar_equal_pytrec_eval_condensed_protocol() {
    compare("condensed");
}
