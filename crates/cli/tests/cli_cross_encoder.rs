//! `precedent train-cross-encoder` on ACORD's real ratings, with the tiny BERT fixture as
//! the encoder so that it runs in seconds: the folder it writes is read by `eval --rerank
//! cross-encoder`, and rating files it cannot use are refused with a reason.

use std::path::PathBuf;

mod support;
use support::{acord, precedent, s};

fn tiny_encoder() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../models/tests/fixtures/tiny-cross-encoder")
}

#[test]
fn fine_tune_then_rerank_and_refusals() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cwd = dir.path();
    let queries = acord().join("queries.jsonl");
    let train = acord().join("qrels/train.tsv");
    let valid = acord().join("qrels/valid.tsv");
    let corpus = support::rated_corpus(cwd);

    // A few steps on train's ratings: this checks the plumbing, not what the model learns
    // (BENCHMARKS.md has the MiniLM figures).
    let model = cwd.join("cross");
    let encoder = tiny_encoder();
    let common = ["--corpus", s(&corpus), "--queries", s(&queries)];
    let mut args = vec!["train-cross-encoder"];
    args.extend(common);
    args.extend(["--qrels", s(&train), "--base-model", s(&encoder)]);
    args.extend(["--out", s(&model), "--steps", "4", "--batch-size", "8"]);
    args.extend(["--max-len", "64", "--learning-rate", "1e-3"]);
    let out = precedent(&args, cwd);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stderr}");
    // Every star level of train is drawn from, and the loss is logged at the last step.
    assert!(
        stderr.contains("drawn with every rating equally likely"),
        "{stderr}"
    );
    for level in ["1★", "2★", "3★", "4★", "5★"] {
        assert!(stderr.contains(level), "{level} missing: {stderr}");
    }
    assert!(stderr.contains("step 4/4: mean loss"), "{stderr}");
    assert!(
        stdout.contains("fine-tuned") && stdout.contains("32 pairs"),
        "{stdout}"
    );
    for file in ["config.json", "model.safetensors", "tokenizer.json"] {
        assert!(model.join(file).is_file(), "{file} missing");
    }
    let config: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(model.join("config.json")).unwrap())
            .expect("config");
    assert_eq!(config["architectures"][0], "BertForSequenceClassification");
    let record: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(model.join("precedent-training.json")).expect("record"),
    )
    .expect("record json");
    assert_eq!(record["trained_on"].as_array().map(Vec::len), Some(51));

    // `eval` reads the folder as a reranker, and the reranked order is scored.
    let summary = cwd.join("summary.json");
    let mut args = vec!["eval"];
    args.extend(common);
    args.extend(["--qrels", s(&valid), "--pipeline", "bm25"]);
    args.extend(["--rerank", "cross-encoder", "--rerank-model", s(&model)]);
    args.extend(["--rerank-top", "10", "--json-out", s(&summary)]);
    let out = precedent(&args, cwd);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&summary).expect("summary")).expect("json");
    let ndcg5 = json["overall"]["ndcg@5"].as_f64().expect("ndcg@5");
    assert!((0.0..=1.0).contains(&ndcg5), "{json}");

    // A cross-encoder fine-tuned on the queries being scored is refused, as the learned
    // ranker is.
    let seen = cwd.join("cross-valid");
    let mut args = vec!["train-cross-encoder"];
    args.extend(common);
    args.extend(["--qrels", s(&valid), "--base-model", s(&encoder)]);
    args.extend(["--out", s(&seen), "--steps", "1", "--batch-size", "4"]);
    args.extend(["--max-len", "64"]);
    let out = precedent(&args, cwd);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut args = vec!["eval"];
    args.extend(common);
    args.extend(["--qrels", s(&valid), "--pipeline", "bm25"]);
    args.extend(["--rerank", "cross-encoder", "--rerank-model", s(&seen)]);
    let out = precedent(&args, cwd);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("was trained on 6 of the queries"),
        "{stderr}"
    );

    // Ratings that name no known query or clause: nothing to train on, said plainly, and the
    // model folder already there is left as it was.
    let stray = cwd.join("stray.tsv");
    std::fs::write(
        &stray,
        "query-id\tcorpus-id\tscore\nno such query\tnope\t3\n",
    )
    .unwrap();
    let before = std::fs::read(model.join("model.safetensors")).unwrap();
    let mut args = vec!["train-cross-encoder"];
    args.extend(common);
    args.extend(["--qrels", s(&stray), "--base-model", s(&encoder)]);
    args.extend(["--out", s(&model), "--steps", "1"]);
    let out = precedent(&args, cwd);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("nothing to train on"), "{stderr}");
    assert_eq!(
        std::fs::read(model.join("model.safetensors")).unwrap(),
        before
    );

    // An empty rating file is refused as `train` refuses it.
    let empty = cwd.join("empty.tsv");
    std::fs::write(&empty, "query-id\tcorpus-id\tscore\n").unwrap();
    let mut args = vec!["train-cross-encoder"];
    args.extend(common);
    args.extend(["--qrels", s(&empty), "--out", s(&model)]);
    let out = precedent(&args, cwd);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("no ratings in this file"), "{stderr}");
}
