//! `precedent train-bi-encoder` and `cv-bi-encoder` on ACORD's real ratings and wordings, with
//! the tiny BERT fixture as the encoder so that they run in seconds: the folder written is a
//! sentence-transformers model a library can be embedded with, `eval` reuses that library without
//! `--model` and refuses to score it on the queries it learnt from, and the cross-validation
//! reports every wording.

use std::path::PathBuf;

mod support;
use support::{acord, precedent, s};

fn tiny_encoder() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../models/tests/fixtures/tiny-cross-encoder")
}

#[test]
fn fine_tune_embed_a_library_and_refusals() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cwd = dir.path();
    let corpus = support::rated_corpus(cwd);
    let (short, medium, long) = (
        acord().join("queries.jsonl"),
        acord().join("queries_medium.jsonl"),
        acord().join("queries_long.jsonl"),
    );
    let train = acord().join("qrels/train.tsv");
    let valid = acord().join("qrels/valid.tsv");
    let encoder = tiny_encoder();
    let wordings = [
        "--queries",
        s(&short),
        "--queries",
        s(&medium),
        "--queries",
        s(&long),
    ];
    let recipe = [
        "--base-model",
        s(&encoder),
        "--frozen-layers",
        "1",
        "--epochs",
        "1",
        "--max-len",
        "64",
        "--train-tokens",
        "32",
    ];

    // Train's 51 queries, three wordings each, one epoch.
    let model = cwd.join("tuned");
    let mut args = vec!["train-bi-encoder", "--corpus", s(&corpus)];
    args.extend(wordings);
    args.extend(["--qrels", s(&train), "--out", s(&model)]);
    args.extend(recipe);
    let out = precedent(&args, cwd);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("on 51 queries in 3 wording(s)") && stdout.contains("51 steps"),
        "{stdout}"
    );
    for file in ["modules.json", "1_Pooling/config.json", "model.safetensors"] {
        assert!(model.join(file).is_file(), "{file} missing");
    }
    let record: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(model.join("precedent-training.json")).expect("record"),
    )
    .expect("record json");
    assert_eq!(record["trained_on"].as_array().map(Vec::len), Some(51));

    // A library embedded with it is scored on valid's queries, which it never saw...
    let library = cwd.join("lib");
    let mut args = vec!["eval", "--corpus", s(&corpus), "--queries", s(&short)];
    args.extend(["--qrels", s(&valid), "--pipeline", "dense"]);
    args.extend(["--model", s(&model), "--index", s(&library)]);
    let out = precedent(&args, cwd);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Scored again without `--model`, the library is reused with the model that embedded it,
    // not taken for stale and rebuilt with the default encoder.
    let current = std::fs::read_to_string(library.join("CURRENT")).expect("CURRENT");
    let mut args = vec!["eval", "--corpus", s(&corpus), "--queries", s(&short)];
    args.extend([
        "--qrels",
        s(&valid),
        "--pipeline",
        "dense",
        "--index",
        s(&library),
    ]);
    let out = precedent(&args, cwd);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("rebuilding"), "{stderr}");
    assert_eq!(
        std::fs::read_to_string(library.join("CURRENT")).expect("CURRENT"),
        current
    );
    // ...and refused on train's, which it learnt from.
    let mut args = vec!["eval", "--corpus", s(&corpus), "--queries", s(&short)];
    args.extend(["--qrels", s(&train), "--pipeline", "dense"]);
    args.extend(["--model", s(&model), "--index", s(&library)]);
    let out = precedent(&args, cwd);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("was trained on 51 of the queries"),
        "{stderr}"
    );

    // Nothing above one star to learn from: refused, and the folder there is left whole.
    let flat = cwd.join("flat.tsv");
    std::fs::write(
        &flat,
        "query-id\tcorpus-id\tscore\nCovenant Not To Sue\t86f802f032\t0\n",
    )
    .unwrap();
    let before = std::fs::read(model.join("model.safetensors")).unwrap();
    let mut args = vec![
        "train-bi-encoder",
        "--corpus",
        s(&corpus),
        "--queries",
        s(&short),
    ];
    args.extend(["--qrels", s(&flat), "--out", s(&model)]);
    args.extend(recipe);
    let out = precedent(&args, cwd);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("above one star"), "{stderr}");
    assert_eq!(
        std::fs::read(model.join("model.safetensors")).unwrap(),
        before
    );
}

#[test]
fn cross_validation_reports_every_wording_and_their_mean() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cwd = dir.path();
    let corpus = support::rated_corpus(cwd);
    let encoder = tiny_encoder();
    let json = cwd.join("cv.json");
    let mut args = vec!["cv-bi-encoder", "--corpus", s(&corpus)];
    let (short, long) = (
        acord().join("queries.jsonl"),
        acord().join("queries_long.jsonl"),
    );
    args.extend(["--queries", s(&short), "--queries", s(&long)]);
    let valid = acord().join("qrels/valid.tsv");
    args.extend(["--qrels", s(&valid), "--folds", "2"]);
    args.extend(["--base-model", s(&encoder), "--frozen-layers", "1"]);
    args.extend(["--epochs", "1", "--max-len", "64", "--json-out", s(&json)]);
    let out = precedent(&args, cwd);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for row in ["short", "long", "mean", "fold 1:", "fold 2:"] {
        assert!(stdout.contains(row), "{row} missing: {stdout}");
    }
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).expect("json")).expect("parse");
    assert_eq!(report["queries"], 6);
    let folds = report["folds"].as_array().expect("folds");
    assert_eq!(folds.len(), 2);
    let held_out: u64 = folds
        .iter()
        .map(|f| f["held_out_queries"].as_u64().unwrap_or(0))
        .sum();
    assert_eq!(held_out, 6, "every query held out once");
    for key in ["base_mean", "tuned_mean"] {
        let ndcg5 = report[key]["ndcg@5"].as_f64().expect("ndcg@5");
        assert!((0.0..=1.0).contains(&ndcg5), "{report}");
    }

    // Scored on a library built from the same corpus: the library's judged clauses are the
    // corpus's, so the shipped encoder's figures are the same to the last digit.
    let library = cwd.join("lib");
    let out = precedent(
        &[
            "index",
            "--corpus",
            s(&corpus),
            "--index",
            s(&library),
            "--no-vectors",
        ],
        cwd,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let on_library = cwd.join("cv-library.json");
    let mut with_library = args.clone();
    with_library.pop();
    with_library.extend([
        s(&on_library),
        "--score-index",
        s(&library),
        "--score-qrels",
        s(&valid),
    ]);
    let out = precedent(&with_library, cwd);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let scored: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&on_library).expect("json")).expect("parse");
    assert_eq!(scored["queries"], 6);
    assert_eq!(scored["clauses"], report["clauses"]);
    for metric in ["ndcg@5", "ndcg@10"] {
        let (a, b) = (
            report["base_mean"][metric].as_f64().expect("metric"),
            scored["base_mean"][metric].as_f64().expect("metric"),
        );
        assert!((a - b).abs() < 1e-9, "{metric}: {a} against {b}");
    }

    // Ratings of clauses the library does not have leave nothing to score: a clear error.
    let empty = cwd.join("none.tsv");
    std::fs::write(
        &empty,
        "query-id\tcorpus-id\tscore\nCovenant Not To Sue\tnot-a-clause\t3\n",
    )
    .expect("write");
    let mut no_ratings = args.clone();
    no_ratings.extend(["--score-index", s(&library), "--score-qrels", s(&empty)]);
    let out = precedent(&no_ratings, cwd);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("names a clause of the library") && stderr.contains("none.tsv"),
        "{stderr}"
    );
}
