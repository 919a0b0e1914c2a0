//! What a lawyer and an operator see of an ingested contract's clauses, through the CLI and the
//! API alike: citations with the parent section and heading, clause-type names checked against
//! CUAD's with the usual aliases suggested, queries without words refused, the server's file
//! paths and library sizes kept from read keys, and a qrels export that stays one line per
//! rating.
//!
//! The library is built from a small corpus whose metadata is what `ingest` writes, so these
//! tests need neither the CUAD typer nor vectors.

mod support;

use std::path::{Path, PathBuf};

use serde_json::json;
use support::*;

/// Where the (made-up) contract file lived on the machine that ingested it.
const SERVER_PATH: &str = "/srv/private/contracts/NETGEAR_INGRAM_distributor.txt";

/// A library of three clauses of one distributor agreement, with ingest's metadata keys.
fn contract_library(dir: &Path) -> PathBuf {
    let meta = |section: &str, heading: &str, path: &[&str], types: &[&str]| {
        json!({
            "contract": "NETGEAR_INGRAM_distributor",
            "source_path": SERVER_PATH,
            "title": "Distribution Agreement",
            "document_type": "Distributor Agreement",
            "parties": ["NETGEAR, Inc.", "Ingram Micro Inc."],
            "date": "2010-04-01",
            "governing_law": "California",
            "section": section,
            "heading": heading,
            "path": path,
            "start": 0,
            "end": 10,
            "clause_types": types.iter().map(|t| json!({"category": t, "confidence": 0.9})).collect::<Vec<_>>(),
        })
    };
    let docs = [
        json!({"_id": "NETGEAR_INGRAM_distributor#1", "title": "B Insurance",
               "text": "Distributor shall maintain insurance coverage for general liability with limits of not less than two million dollars per occurrence.",
               "metadata": meta("B", "Insurance", &["16", "B"], &["Insurance"])}),
        json!({"_id": "NETGEAR_INGRAM_distributor#2", "title": "12 Limitation of Liability",
               "text": "In no event shall either party be liable for consequential damages, and liability shall not exceed the fees paid in the prior twelve months.",
               "metadata": meta("12", "Limitation of Liability", &["12"], &["Cap on Liability"])}),
        json!({"_id": "NETGEAR_INGRAM_distributor#3", "title": "20 Governing Law",
               "text": "This Agreement shall be governed by the laws of the State of California.",
               "metadata": meta("20", "Governing Law", &["20"], &["Governing Law"])}),
    ];
    let corpus = dir.join("contract.jsonl");
    let lines: Vec<String> = docs.iter().map(|d| d.to_string()).collect();
    std::fs::write(&corpus, lines.join("\n") + "\n").expect("write corpus");
    let lib = dir.join("contracts");
    let out = precedent(
        &[
            "index",
            "--corpus",
            s(&corpus),
            "--index",
            s(&lib),
            "--no-vectors",
        ],
        dir,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    lib
}

fn search(server: &Server, key: &str, body: serde_json::Value) -> Reply {
    call("POST", &server.url("/v1/search"), Some(key), Some(&body))
}

#[test]
fn citations_name_the_parent_section_and_heading_in_the_cli_and_the_api() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path();
    let lib = contract_library(p);
    let want = "Distributor Agreement, NETGEAR, Inc., 2010, § 16.B Insurance";

    let out = precedent(
        &[
            "search",
            "--index",
            s(&lib),
            "insurance coverage",
            "-k",
            "1",
        ],
        p,
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains(&format!("[{want}]")), "{stdout}");

    let key = create_key(&lib, "read");
    let server = Server::start(&[s(&lib).to_owned()], p);
    let reply = search(
        &server,
        &key,
        json!({"query": "insurance coverage", "k": 1}),
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    let citation = &reply.json()["hits"][0]["clause"]["citation"];
    assert_eq!(citation["text"], want, "{citation}");
    assert_eq!(citation["reference"], "16.B", "{citation}");
}

#[test]
fn an_unknown_clause_type_is_refused_with_the_cuad_names_by_the_cli_and_the_api() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path();
    let lib = contract_library(p);

    let out = precedent(
        &[
            "search",
            "--index",
            s(&lib),
            "liability",
            "--type",
            "Limitation of Liability",
        ],
        p,
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("did you mean \"Cap on Liability\"?"),
        "{stderr}"
    );

    let key = create_key(&lib, "read");
    let server = Server::start(&[s(&lib).to_owned()], p);
    let body = |clause_type: &str| json!({"query": "liability", "k": 5, "filters": {"clause_type": clause_type}});
    let problem = search(&server, &key, body("Limitation of Liability")).assert_problem(400);
    let detail = problem["detail"].as_str().unwrap_or("");
    assert!(detail.contains("Cap on Liability"), "{problem}");
    // The valid names are listed, all 39 kinds of clause.
    assert!(detail.contains("Third Party Beneficiary") && detail.contains("Anti-Assignment"));
    assert_eq!(
        problem["suggestions"],
        json!(["Cap on Liability"]),
        "{problem}"
    );
    // The same names as the CLI: a contract's parties are no clause type, in either.
    search(&server, &key, body("Parties")).assert_problem(400);
    let out = precedent(
        &[
            "search",
            "--index",
            s(&lib),
            "liability",
            "--type",
            "Parties",
        ],
        p,
    );
    assert!(!out.status.success());
    // A CUAD name, loosely written, is accepted and finds its clause.
    let reply = search(&server, &key, body("cap-on-liability"));
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(
        reply.json()["hits"][0]["clause"]["id"],
        "NETGEAR_INGRAM_distributor#2"
    );
}

#[test]
fn a_rated_query_with_tabs_and_line_breaks_exports_on_one_qrels_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path();
    let lib = contract_library(p);
    let rate = create_key(&lib, "rate");
    let admin = create_key(&lib, "admin");
    let server = Server::start(&[s(&lib).to_owned()], p);
    let reply = call(
        "POST",
        &server.url("/v1/ratings"),
        Some(&rate),
        Some(
            &json!({"query": "liability\tcap\r\nfor fees ", "clause_id": "NETGEAR_INGRAM_distributor#2", "stars": 5}),
        ),
    );
    assert_eq!(reply.status, 201, "{}", reply.body);
    assert_eq!(reply.json()["rating"]["query"], "liability cap for fees");
    let qrels = call(
        "GET",
        &server.url("/v1/ratings?format=qrels"),
        Some(&admin),
        None,
    );
    assert_eq!(qrels.status, 200, "{}", qrels.body);
    let lines: Vec<&str> = qrels.body.lines().collect();
    assert_eq!(
        lines,
        [
            "query-id\tcorpus-id\tscore",
            "liability cap for fees\tNETGEAR_INGRAM_distributor#2\t4"
        ]
    );
}

#[test]
fn a_query_of_only_punctuation_is_refused_by_the_cli_and_the_api() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path();
    let lib = contract_library(p);

    let out = precedent(&["search", "--index", s(&lib), "?!..."], p);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(stderr.contains("the query has no words"), "{stderr}");

    let key = create_key(&lib, "read");
    let server = Server::start(&[s(&lib).to_owned()], p);
    let problem = search(&server, &key, json!({"query": "?!...", "k": 5})).assert_problem(400);
    assert!(
        problem["detail"]
            .as_str()
            .is_some_and(|d| d.contains("the query has no words")),
        "{problem}"
    );
    let problem = call(
        "POST",
        &server.url("/v1/similar"),
        Some(&key),
        Some(&json!({"text": "— … §§ ¶", "k": 5})),
    )
    .assert_problem(400);
    assert!(
        problem["detail"]
            .as_str()
            .is_some_and(|d| d.contains("has no words")),
        "{problem}"
    );
    // A query with words still answers, punctuation and all.
    let reply = search(&server, &key, json!({"query": "insurance?!", "k": 1}));
    assert_eq!(reply.status, 200, "{}", reply.body);
}
