//! End-to-end tests of the `precedent` binary on the real ACORD data in `../shared/data/acord`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod support;
use support::precedent;

fn acord() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/acord")
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn eval_bm25_on_train_matches_reference_and_independent_scorer() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (corpus, queries, qrels) = (
        acord().join("corpus.jsonl"),
        acord().join("queries.jsonl"),
        acord().join("qrels/train.tsv"),
    );
    let run = dir.path().join("run.tsv");
    let summary = dir.path().join("summary.json");
    let out = precedent(
        &[
            "eval",
            "--corpus",
            s(&corpus),
            "--queries",
            s(&queries),
            "--qrels",
            s(&qrels),
            "--pipeline",
            "bm25",
            "--run-out",
            s(&run),
            "--json-out",
            s(&summary),
        ],
        dir.path(),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(
        table.contains("Limitation of Liability") && table.contains("Overall"),
        "{table}"
    );
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&summary).expect("summary")).expect("json");
    assert_eq!(json["queries"], 51);
    let ndcg5 = json["overall"]["ndcg@5"].as_f64().expect("ndcg@5");
    let ndcg10 = json["overall"]["ndcg@10"].as_f64().expect("ndcg@10");
    // Lucene-style BM25 reference on train (condensed): about 54 / 56.
    assert!((0.52..=0.58).contains(&ndcg5), "ndcg@5 {ndcg5}");
    assert!((0.54..=0.60).contains(&ndcg10), "ndcg@10 {ndcg10}");
    for key in ["p@5_3star", "p@5_4star", "p@5_5star", "recall@100"] {
        assert!(json["overall"][key].is_number(), "{key}");
    }
    // The library was cached under .precedent/eval and is reused on the second run.
    assert!(dir.path().join(".precedent/eval").is_dir());
    let again = precedent(
        &[
            "eval",
            "--corpus",
            s(&corpus),
            "--queries",
            s(&queries),
            "--qrels",
            s(&qrels),
            "--pipeline",
            "bm25",
        ],
        dir.path(),
    );
    assert!(again.status.success(), "{}", stderr(&again));
    assert_eq!(again.stdout, out.stdout, "results are deterministic");

    // An independent scorer (pytrec_eval + Python) agrees with the JSON on the run file.
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scripts/score_run.py");
    let check = Command::new("python3")
        .arg(script)
        .args([
            "--qrels",
            s(&qrels),
            "--run",
            s(&run),
            "--queries",
            s(&queries),
        ])
        .args(["--compare", s(&summary)])
        .output()
        .expect("python3 (see .ci/run)");
    assert!(
        check.status.success(),
        "independent scorer disagrees: {}{}",
        String::from_utf8_lossy(&check.stdout),
        stderr(&check)
    );
}

#[test]
fn index_search_and_add() {
    let dir = tempfile::tempdir().expect("tempdir");
    let lib = dir.path().join("lib");
    let corpus = acord().join("corpus.jsonl");
    let out = precedent(
        &[
            "index",
            "--no-vectors",
            "--corpus",
            s(&corpus),
            "--index",
            s(&lib),
        ],
        dir.path(),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("indexed 3931 clauses"),
        "{}",
        stderr(&out)
    );

    let out = precedent(
        &[
            "search",
            "--index",
            s(&lib),
            "governed by the laws of the State of New York",
            "-k",
            "3",
            "--json",
        ],
        dir.path(),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let hits = json["hits"].as_array().expect("hits");
    assert_eq!(hits.len(), 3);
    let top = hits[0]["text"].as_str().expect("text");
    assert!(top.contains("New York"), "{top}");
    assert!(hits[0]["score"].as_f64() >= hits[1]["score"].as_f64());

    let out = precedent(
        &[
            "search",
            "--index",
            s(&lib),
            "cap on liability",
            "--explain",
        ],
        dir.path(),
    );
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("found by: bm25 #1"));

    // A long clause that answers in its last section is previewed at the answer: ACORD's
    // a7107019d1 opens with "10. INDEMNITIES." and caps liability at the purchase prices
    // some 3,000 characters later.
    let out = precedent(
        &[
            "search",
            "--index",
            s(&lib),
            "liability cap is based on purchase price",
            "-k",
            "20",
        ],
        dir.path(),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let listing = String::from_utf8_lossy(&out.stdout);
    let entry = listing
        .split("\n\n")
        .find(|e| e.contains("a7107019d1"))
        .unwrap_or_else(|| panic!("a7107019d1 not in the top 20:\n{listing}"));
    let flat: String = entry.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(flat.contains("10. INDEMNITIES."), "{entry}");
    assert!(
        flat.contains("limited to the aggregate amount of the purchase prices"),
        "{entry}"
    );

    // Incremental add: new clauses become searchable; re-adding the same ids is refused.
    let extra = dir.path().join("extra.jsonl");
    std::fs::write(
        &extra,
        "{\"_id\": \"new-1\", \"text\": \"Zanzibar arbitration shall be final and binding.\"}\n",
    )
    .expect("write");
    let add = |corpus: &Path| {
        precedent(
            &["index", "--corpus", s(corpus), "--index", s(&lib), "--add"],
            dir.path(),
        )
    };
    let out = add(&extra);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = precedent(
        &["search", "--index", s(&lib), "Zanzibar", "--json"],
        dir.path(),
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(json["hits"][0]["id"], "new-1");
    let out = add(&extra);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("already in the library"),
        "{}",
        stderr(&out)
    );
    // The library still works after the refused add.
    let out = precedent(
        &["search", "--index", s(&lib), "Zanzibar", "--json"],
        dir.path(),
    );
    assert!(out.status.success());

    // A word-for-word copy (other case, spacing, punctuation, pieces joined with ACORD's
    // omission mark) is folded into the first hit with its words and listed there;
    // --keep-duplicates shows it as a hit of its own.
    let copy = dir.path().join("copy.jsonl");
    std::fs::write(
        &copy,
        "{\"_id\": \"new-2\", \"text\": \"ZANZIBAR arbitration shall be final.<omitted>and  binding\"}\n",
    )
    .expect("write");
    let out = add(&copy);
    assert!(out.status.success(), "{}", stderr(&out));
    let search = |extra: &[&str]| {
        let mut args = vec!["search", "--index", s(&lib), "Zanzibar", "--json"];
        args.extend(extra);
        let out = precedent(&args, dir.path());
        assert!(out.status.success(), "{}", stderr(&out));
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
        json["hits"].as_array().cloned().unwrap_or_default()
    };
    let folded = search(&[]);
    assert_eq!(folded.len(), 1, "{folded:?}");
    let ids = [
        folded[0]["id"].clone(),
        folded[0]["copies"][0]["id"].clone(),
    ];
    assert!(
        ids.contains(&"new-1".into()) && ids.contains(&"new-2".into()),
        "{folded:?}"
    );
    let kept = search(&["--keep-duplicates"]);
    assert_eq!(kept.len(), 2, "{kept:?}");
    assert!(kept
        .iter()
        .all(|h| h["copies"].as_array().is_some_and(Vec::is_empty)));
    let out = precedent(&["search", "--index", s(&lib), "Zanzibar"], dir.path());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("same words also in: new-"), "{text}");
}

#[test]
fn bad_input_gives_clear_errors_naming_file_and_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path();
    let queries = acord().join("queries.jsonl");
    let qrels = acord().join("qrels/valid.tsv");

    // Missing file.
    let out = precedent(
        &[
            "index",
            "--no-vectors",
            "--corpus",
            "nope.jsonl",
            "--index",
            "lib",
        ],
        p,
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("nope.jsonl"), "{}", stderr(&out));
    assert!(!stderr(&out).contains("panicked"));

    // Malformed JSON line.
    let bad = p.join("bad.jsonl");
    std::fs::write(
        &bad,
        "{\"_id\": \"a\", \"text\": \"ok\"}\n{\"_id\": \"b\", \"text\": oops}\n",
    )
    .expect("write");
    let out = precedent(
        &[
            "index",
            "--no-vectors",
            "--corpus",
            s(&bad),
            "--index",
            "lib",
        ],
        p,
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("bad.jsonl:2"), "{}", stderr(&out));

    // Qrels naming a query that is not in the queries file: warning with file and line.
    let corpus = p.join("corpus.jsonl");
    std::fs::write(
        &corpus,
        "{\"_id\": \"c1\", \"text\": \"New York law governs.\"}\n",
    )
    .expect("write");
    let odd_qrels = p.join("qrels.tsv");
    std::fs::write(
        &odd_qrels,
        "query-id\tcorpus-id\tscore\nNew York Governing Law\tc1\t4\nNo Such Query\tc1\t1\n",
    )
    .expect("write");
    let out = precedent(
        &[
            "eval",
            "--corpus",
            s(&corpus),
            "--queries",
            s(&queries),
            "--qrels",
            s(&odd_qrels),
            "--pipeline",
            "bm25",
        ],
        p,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("qrels.tsv:3") && stderr(&out).contains("No Such Query"),
        "{}",
        stderr(&out)
    );

    // Empty query.
    let out = precedent(
        &[
            "index",
            "--no-vectors",
            "--corpus",
            s(&corpus),
            "--index",
            "lib",
        ],
        p,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let out = precedent(&["search", "--index", "lib", "   "], p);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("query is empty"), "{}", stderr(&out));

    // Queries file with an empty query text.
    let empty_q = p.join("queries.jsonl");
    std::fs::write(&empty_q, "{\"_id\": \"q\", \"text\": \"\"}\n").expect("write");
    let out = precedent(
        &[
            "eval",
            "--corpus",
            s(&corpus),
            "--queries",
            s(&empty_q),
            "--qrels",
            s(&qrels),
            "--pipeline",
            "bm25",
        ],
        p,
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("queries.jsonl:1"), "{}", stderr(&out));

    // Not a library.
    let out = precedent(&["search", "--index", "nowhere", "indemnity"], p);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("not a Precedent library"),
        "{}",
        stderr(&out)
    );
}

/// Dense and hybrid retrieval over a real slice of ACORD with the real all-MiniLM-L6-v2 model.
#[test]
fn hybrid_index_search_explain_and_model_checks() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path();
    let corpus = precedent_formats::read_corpus(&acord().join("corpus.jsonl")).expect("corpus");
    let qrels = precedent_formats::read_qrels(&acord().join("qrels/train.tsv")).expect("qrels");
    // Only clauses judged for the query, so "is the top hit relevant" has an answer: every
    // 3+-star clause, plus the first 300 lower-rated ones.
    let judged = qrels
        .judged("New York Governing Law")
        .expect("query judged in train");
    let good: std::collections::HashSet<&str> = judged
        .iter()
        .filter(|(_, &l)| l >= 2)
        .map(|(d, _)| d.as_str())
        .collect();
    let mut others = 0;
    let slice: Vec<_> = corpus
        .iter()
        .filter(|d| match judged.get(&d.id) {
            Some(&l) if l >= 2 => true,
            Some(_) if others < 300 => {
                others += 1;
                true
            }
            _ => false,
        })
        .cloned()
        .collect();
    let small = p.join("small.jsonl");
    precedent_formats::write_corpus(&small, &slice).expect("write");
    let lib = p.join("lib");
    let out = precedent(&["index", "--corpus", s(&small), "--index", s(&lib)], p);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("(BM25 + vectors)"),
        "{}",
        stderr(&out)
    );

    // `search --json` of `query` with `pipeline`, top 5; and the text of the default pipeline's
    // first hit.
    let search_json = |query: &str, pipeline: &str| -> serde_json::Value {
        let out = precedent(
            &[
                "search",
                "--index",
                s(&lib),
                query,
                "-k",
                "5",
                "--json",
                "--pipeline",
                pipeline,
            ],
            p,
        );
        assert!(out.status.success(), "{pipeline} {query}: {}", stderr(&out));
        serde_json::from_slice(&out.stdout).expect("json")
    };
    let search_text = |query: &str| -> String {
        let out = precedent(&["search", "--index", s(&lib), query, "-k", "1"], p);
        assert!(out.status.success(), "{query}: {}", stderr(&out));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    for pipeline in ["dense", "hybrid", "hybrid-norm"] {
        let json = search_json("New York Governing Law", pipeline);
        let top = json["hits"][0]["id"].as_str().expect("id");
        assert!(
            good.contains(top),
            "{pipeline}: top hit {top} is not a 3+-star clause"
        );
    }
    // A misspelt request is corrected against the library's words before ranking, says so, and
    // finds what the spelled request finds; a word of ordinary English is left alone.
    let json = search_json("New York law, govrened by it: Lwa clause", "hybrid");
    assert_eq!(json["query"], "New York law, govrened by it: Lwa clause");
    assert_eq!(
        json["corrected_query"],
        "New York law, governed by it: Lwa clause"
    );
    assert_eq!(json["corrections"][0]["from"], "govrened");
    let top = json["hits"][0]["id"].as_str().expect("id");
    assert!(
        good.contains(top),
        "misspelt: top hit {top} is not a 3+-star clause"
    );
    let text = search_text("New York law govrened");
    assert!(
        text.starts_with("Searched for: New York law governed (spelling corrected)"),
        "{text}"
    );
    // A request in Westlaw / Lexis syntax is read as the request it stands for: the truncated
    // root widened to the library's words, the negated term stated as an exclusion, operators
    // and connectors dropped; it says so and finds what the sentence finds.
    let json = search_json("\"New York\" /s govern* AND law NOT delaware", "hybrid");
    let read = json["corrected_query"].as_str().expect("read");
    assert!(
        read.starts_with("New York govern") && read.ends_with("law not including delaware"),
        "{read}"
    );
    assert!(!read.contains('*') && !read.contains("/s"), "{read}");
    assert_eq!(json["search_syntax_read"], true);
    let top = json["hits"][0]["id"].as_str().expect("id");
    assert!(
        good.contains(top),
        "search syntax: top hit {top} is not a 3+-star clause"
    );
    let text = search_text("law AND \"New York\"");
    assert!(
        text.starts_with("Searched for: law New York (search syntax read)"),
        "{text}"
    );
    // The default pipeline on this slice (which the ACORD ranker does not fit) is the contracts
    // ranker over hybrid retrieval, and --explain names both retrieval stages.
    // Without CUAD data (an empty folder named), the clause-type rule for the query's "Governing
    // Law" is skipped with a warning instead of training the CUAD classifier here.
    let out = Command::new(env!("CARGO_BIN_EXE_precedent"))
        .args([
            "search",
            "--index",
            s(&lib),
            "New York Governing Law",
            "-k",
            "3",
            "--explain",
        ])
        .current_dir(p)
        .env("PRECEDENT_CUAD_DIR", p)
        .output()
        .expect("run precedent");
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("bm25 #") && text.contains("dense #"),
        "{text}"
    );

    // A second index run reuses the embedding cache (much faster than the first). The cache is
    // the one `$PRECEDENT_EMBEDDING_CACHE` names (the clone's, shared by the test binaries), not
    // the working directory's default.
    let started = std::time::Instant::now();
    let out = precedent(
        &[
            "index",
            "--corpus",
            s(&small),
            "--index",
            s(&p.join("lib2")),
        ],
        p,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(started.elapsed().as_secs_f64() < 20.0, "cache not used?");
    assert!(!p.join(".precedent/cache/embeddings").exists());
    let segments = std::fs::read_dir(support::embedding_cache())
        .expect("the shared embedding cache")
        .count();
    assert!(segments > 0, "nothing in the shared embedding cache");

    // A query model that is not the library's model is refused with a clear error.
    let tiny = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../models/tests/fixtures/tiny-cross-encoder");
    let out = precedent(
        &[
            "search",
            "--index",
            s(&lib),
            "governing law",
            "--pipeline",
            "dense",
            "--model",
            s(&tiny),
        ],
        p,
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("was embedded by model"),
        "{}",
        stderr(&out)
    );

    // Cross-encoder reranking runs end to end (tiny random model: order is meaningless, the
    // plumbing is what is tested) and is reported by --explain.
    let out = precedent(
        &[
            "search",
            "--index",
            s(&lib),
            "governing law",
            "--explain",
            "-k",
            "3",
            "--rerank",
            "cross-encoder",
            "--rerank-model",
            s(&tiny),
            "--rerank-top",
            "10",
        ],
        p,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("cross-encoder #1"));

    // A library without vectors refuses dense retrieval with a clear message.
    let bm25_only = p.join("bm25");
    let out = precedent(
        &[
            "index",
            "--no-vectors",
            "--corpus",
            s(&small),
            "--index",
            s(&bm25_only),
        ],
        p,
    );
    assert!(out.status.success());
    let out = precedent(
        &[
            "search",
            "--index",
            s(&bm25_only),
            "governing law",
            "--pipeline",
            "hybrid",
        ],
        p,
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("has none"), "{}", stderr(&out));
}
