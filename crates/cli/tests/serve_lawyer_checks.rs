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

/// The contract's file name; the file lives in a private folder of the server.
const CONTRACT_FILE: &str = "NETGEAR_INGRAM_distributor.txt";
/// The private folder's name (under the test's directory).
const PRIVATE_DIR: &str = "srv-private-contracts";

/// A library of three clauses of one distributor agreement, with ingest's metadata keys; the
/// contract file is written to `dir/PRIVATE_DIR/CONTRACT_FILE` and the clause spans point into
/// it, as `ingest` records them.
fn contract_library(dir: &Path) -> PathBuf {
    let clauses = [
        ("B", "Insurance", vec!["16", "B"], "Insurance",
         "16.B Insurance. Distributor shall maintain insurance coverage for general liability with limits of not less than two million dollars per occurrence."),
        ("12", "Limitation of Liability", vec!["12"], "Cap on Liability",
         "12. Limitation of Liability. In no event shall either party be liable for consequential damages, and liability shall not exceed the fees paid in the prior twelve months."),
        ("20", "Governing Law", vec!["20"], "Governing Law",
         "20. Governing Law. This Agreement shall be governed by the laws of the State of California."),
    ];
    let private = dir.join(PRIVATE_DIR);
    std::fs::create_dir_all(&private).expect("mkdir");
    let source = private.join(CONTRACT_FILE);
    let mut contract = String::from("DISTRIBUTION AGREEMENT\n\n");
    let mut docs = Vec::new();
    for (i, (section, heading, path, category, text)) in clauses.iter().enumerate() {
        let start = contract.chars().count();
        contract.push_str(text);
        let end = contract.chars().count();
        contract.push_str("\n\n");
        docs.push(json!({
            "_id": format!("NETGEAR_INGRAM_distributor#{}", i + 1),
            "title": format!("{section} {heading}"),
            "text": text,
            "metadata": {
                "contract": "NETGEAR_INGRAM_distributor",
                "source_path": s(&source),
                "title": "Distribution Agreement",
                "document_type": "Distributor Agreement",
                "parties": ["NETGEAR, Inc.", "Ingram Micro Inc."],
                "date": "2010-04-01",
                "governing_law": "California",
                "section": section,
                "heading": heading,
                "path": path,
                "start": start,
                "end": end,
                "clause_types": [{"category": category, "confidence": 0.9}],
            },
        }));
    }
    std::fs::write(&source, &contract).expect("write contract");
    library_of_docs(dir, "contracts", &docs)
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
    let problem = search(&server, &key, body("Parties")).assert_problem(400);
    assert!(
        problem["detail"]
            .as_str()
            .is_some_and(|d| d.contains("filters.party")),
        "{problem}"
    );
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
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--party"), "{stderr}");
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
    // Nor is a page of no clause, or a pipeline nobody built: each refused with what to type.
    let out = precedent(&["search", "--index", s(&lib), "-k", "0", "insurance"], p);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("must be 1 or more"), "{stderr}");
    let out = precedent(
        &[
            "search",
            "--index",
            s(&lib),
            "--pipeline",
            "foo",
            "insurance",
        ],
        p,
    );
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("unknown pipeline \"foo\"")
            && stderr.contains("learned")
            && stderr.contains("hybrid+types")
            && stderr.contains("learned+judge"),
        "{stderr}"
    );

    let key = create_key(&lib, "read");
    let server = Server::start(&[s(&lib).to_owned()], p);
    let problem = search(&server, &key, json!({"query": "?!...", "k": 5})).assert_problem(400);
    assert!(
        problem["detail"]
            .as_str()
            .is_some_and(|d| d.contains("query has no words")),
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
    // Nor is "!!!" a clause to type: refused before any classifier loads.
    let problem = call(
        "POST",
        &server.url("/v1/classify"),
        Some(&key),
        Some(&json!({"texts": ["!!!"]})),
    )
    .assert_problem(400);
    assert!(
        problem["detail"]
            .as_str()
            .is_some_and(|d| d.contains("texts[0] has no words")),
        "{problem}"
    );
    // A query with words still answers, punctuation and all.
    let reply = search(&server, &key, json!({"query": "insurance?!", "k": 1}));
    assert_eq!(reply.status, 200, "{}", reply.body);
}

#[test]
fn read_keys_see_the_contracts_name_never_the_servers_file_path() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path();
    let lib = contract_library(p);
    let key = create_key(&lib, "read");
    let server = Server::start(&[s(&lib).to_owned()], p);
    let reply = search(
        &server,
        &key,
        json!({"query": "insurance coverage", "k": 3}),
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert!(!reply.body.contains(PRIVATE_DIR), "{}", reply.body);
    let hit = &reply.json()["hits"][0]["clause"];
    assert_eq!(hit["citation"]["source"], CONTRACT_FILE, "{hit}");
    assert!(hit["metadata"].get("source_path").is_none(), "{hit}");

    let similar = call(
        "POST",
        &server.url("/v1/similar"),
        Some(&key),
        Some(&json!({"clause_id": "NETGEAR_INGRAM_distributor#1", "k": 3})),
    );
    assert_eq!(similar.status, 200, "{}", similar.body);
    assert!(!similar.body.contains(PRIVATE_DIR), "{}", similar.body);

    // The context is still read from the file, and named by the contract's file name.
    let reply = call(
        "GET",
        &server.url("/v1/clauses/NETGEAR_INGRAM_distributor%231"),
        Some(&key),
        None,
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert!(!reply.body.contains(PRIVATE_DIR), "{}", reply.body);
    let clause = reply.json();
    assert_eq!(clause["context"]["source"], CONTRACT_FILE, "{clause}");
    assert!(
        clause["context"]["clause"]
            .as_str()
            .is_some_and(|c| c.starts_with("16.B Insurance.")),
        "{clause}"
    );
}

#[test]
fn health_details_and_metrics_need_an_admin_key_unless_the_server_makes_them_public() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path();
    let lib = contract_library(p);
    let read = create_key(&lib, "read");
    let admin = create_key(&lib, "admin");
    let server = Server::start(&[format!("secret-deals={}", s(&lib))], p);

    // Without a key: alive, and nothing more.
    let health = call("GET", &server.url("/healthz"), None, None);
    assert_eq!(health.status, 200, "{}", health.body);
    assert_eq!(health.json(), json!({"status": "ok"}));
    call("GET", &server.url("/metrics"), None, None).assert_problem(401);
    // A read key is no operator's key.
    call("GET", &server.url("/healthz"), Some(&read), None).assert_problem(403);
    call("GET", &server.url("/metrics"), Some(&read), None).assert_problem(403);
    // An admin key sees the libraries, their sizes and the models.
    let health = call("GET", &server.url("/healthz"), Some(&admin), None);
    assert_eq!(health.status, 200, "{}", health.body);
    let health = health.json();
    assert_eq!(health["libraries"][0]["name"], "secret-deals", "{health}");
    assert_eq!(health["libraries"][0]["clauses"], 3, "{health}");
    assert!(
        health["models"]["clause_typer"]["state"].is_string(),
        "{health}"
    );
    let metrics = call("GET", &server.url("/metrics"), Some(&admin), None);
    assert_eq!(metrics.status, 200, "{}", metrics.body);
    assert!(metrics.body.contains("precedent_http_requests_total"));
    drop(server);

    // `serve --public-status` (a server kept on loopback, a monitor without keys) opens both.
    let server = Server::start_with(
        &[format!("secret-deals={}", s(&lib))],
        &["--public-status".to_owned()],
        p,
    );
    let health = call("GET", &server.url("/healthz"), None, None).json();
    assert_eq!(health["libraries"][0]["clauses"], 3, "{health}");
    assert_eq!(call("GET", &server.url("/metrics"), None, None).status, 200);
}

/// A pseudo-random text of `chars` characters from a small legal vocabulary: two texts from
/// different seeds share words but little order, the costliest case for a word diff.
fn draft_text(seed: u64, chars: usize) -> String {
    const WORDS: [&str; 24] = [
        "party",
        "shall",
        "liability",
        "agreement",
        "not",
        "exceed",
        "fees",
        "paid",
        "notice",
        "terminate",
        "breach",
        "damages",
        "consequential",
        "Distributor",
        "Company",
        "term",
        "written",
        "consent",
        "assign",
        "law",
        "governed",
        "months",
        "twelve",
        "indemnify",
    ];
    let mut state = seed;
    let mut text = String::new();
    while text.len() < chars {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        text.push_str(WORDS[(state >> 33) as usize % WORDS.len()]);
        text.push(' ');
    }
    text.truncate(chars);
    text
}

/// Median wall time of `n` searches, in milliseconds.
fn median_search_ms(server: &Server, key: &str, n: usize) -> f64 {
    let mut times: Vec<f64> = (0..n)
        .map(|_| {
            let started = std::time::Instant::now();
            let reply = search(server, key, json!({"query": "insurance coverage", "k": 3}));
            assert_eq!(reply.status, 200, "{}", reply.body);
            started.elapsed().as_secs_f64() * 1000.0
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[n / 2]
}

#[test]
fn compare_under_load_leaves_search_fast_and_refuses_what_it_cannot_take() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path();
    let lib = contract_library(p);
    let key = create_key(&lib, "read");
    let server = Server::start(&[s(&lib).to_owned()], p);
    let idle = median_search_ms(&server, &key, 15);

    // Four clients post two 20,000-character drafts to /v1/compare, over and over; a client
    // told the server is busy waits a little, as a page would.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let compare_url = server.url("/v1/compare");
    let body =
        json!({"left": {"text": draft_text(1, 20_000)}, "right": {"text": draft_text(2, 20_000)}});
    let clients: Vec<_> = (0..4)
        .map(|_| {
            let (stop, url, key, body) =
                (stop.clone(), compare_url.clone(), key.clone(), body.clone());
            std::thread::spawn(move || {
                let mut statuses = Vec::new();
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let started = std::time::Instant::now();
                    let reply = call("POST", &url, Some(&key), Some(&body));
                    statuses.push((reply.status, started.elapsed()));
                    if reply.status != 200 {
                        std::thread::sleep(std::time::Duration::from_millis(50));
                    }
                }
                statuses
            })
        })
        .collect();
    std::thread::sleep(std::time::Duration::from_millis(500));
    let loaded = median_search_ms(&server, &key, 15);
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let statuses: Vec<(u16, std::time::Duration)> = clients
        .into_iter()
        .flat_map(|c| c.join().expect("client"))
        .collect();

    // Search keeps a core: within twice its idle latency, with slack for a busy machine.
    assert!(
        loaded <= 2.0 * idle + 250.0,
        "search took {loaded:.0} ms under compare load, {idle:.0} ms idle"
    );
    // Compares beyond the limit are refused at once (503, try again), not queued.
    let refused: Vec<_> = statuses.iter().filter(|(st, _)| *st == 503).collect();
    assert!(!refused.is_empty(), "{statuses:?}");
    assert!(
        refused.iter().all(|(_, took)| took.as_millis() < 1000),
        "{statuses:?}"
    );
    assert!(
        statuses.iter().all(|(st, _)| matches!(st, 200 | 503)),
        "{statuses:?}"
    );
}

#[test]
fn compare_ignores_case_and_spacing_by_default_and_shows_each_sides_own_text() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path();
    let lib = contract_library(p);
    let key = create_key(&lib, "read");
    let server = Server::start(&[s(&lib).to_owned()], p);
    let left =
        "THE SOFTWARE IS PROVIDED \"AS IS\", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED.";
    let right =
        "The software is provided \"as is\",  without warranty of any kind,\nexpress or implied.";
    let compare = |extra: serde_json::Value| {
        let mut body = json!({"left": {"text": left}, "right": {"text": right}});
        if let (Some(b), Some(e)) = (body.as_object_mut(), extra.as_object()) {
            b.extend(e.clone());
        }
        let reply = call("POST", &server.url("/v1/compare"), Some(&key), Some(&body));
        assert_eq!(reply.status, 200, "{}", reply.body);
        reply.json()
    };

    // By default the same words in other capitals and spacing are the same clause.
    let loose = compare(json!({}));
    assert_eq!(loose["similarity"], 1.0, "{loose}");
    let ops = loose["ops"].as_array().cloned().unwrap_or_default();
    assert!(ops.iter().all(|op| op["op"] == "equal"), "{loose}");
    // Each side still reads as written: equal runs carry the right side's own words.
    let spell = |side: &str| -> String {
        ops.iter()
            .filter(|op| op["op"] == "equal" || op["op"] == side)
            .map(|op| {
                let own = if side == "insert" {
                    op.get("right_text")
                } else {
                    None
                };
                own.or(op.get("text"))
                    .and_then(|t| t.as_str())
                    .unwrap_or("")
                    .to_owned()
            })
            .collect()
    };
    assert_eq!(spell("delete"), left);
    assert_eq!(spell("insert"), right);

    // Asked to, it tells capitals and spacing apart, as before.
    let exact = compare(json!({"ignore_case": false, "ignore_whitespace": false}));
    assert!(
        exact["similarity"].as_f64().is_some_and(|s| s < 0.6),
        "{exact}"
    );
    // Case alone: the double space and the line break are differences, the capitals not.
    let case_only = compare(json!({"ignore_case": true, "ignore_whitespace": false}));
    let sim = case_only["similarity"].as_f64().unwrap_or(0.0);
    assert!(sim > 0.8 && sim < 1.0, "{case_only}");
}

/// Defect 2: a clause that refers to other sections carries their text for search, but what
/// the lawyer reads, copies, cites and compares is the clause's own text; the referenced
/// sections come apart, under their numbers, in the API and in the CLI's JSON.
#[test]
fn referenced_sections_are_context_not_the_clause_text() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path();
    let own = "16.B Insurance. Distributor shall maintain insurance, except as set forth in Section 14.A.";
    let referenced = "14.A Exclusions. Nothing limits liability for fraud or gross negligence.";
    let doc = json!({
        "_id": "deal#1",
        "title": "16.B Insurance",
        "text": format!("{own}<omitted>{referenced}"),
        "metadata": {
            "contract": "deal",
            "document_type": "Distributor Agreement",
            "section": "B",
            "heading": "Insurance",
            "path": ["16", "B"],
            "refs": ["14.A"],
        },
    });
    let lib = library_of_docs(p, "refs-lib", &[doc]);
    // Found by what the referenced section says.
    let out = precedent(
        &[
            "search",
            "fraud gross negligence",
            "--index",
            s(&lib),
            "--json",
        ],
        p,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let cli: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let hit = &cli["hits"][0];
    assert_eq!(hit["id"], "deal#1");
    assert_eq!(hit["text"], own);
    assert_eq!(
        hit["references"],
        json!([{"section": "14.A", "text": referenced}])
    );

    let key = create_key(&lib, "read");
    let server = Server::start(&[format!("deals={}", s(&lib))], p);
    let reply = search(
        &server,
        &key,
        json!({"query": "fraud gross negligence", "k": 5}),
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    let api = reply.json();
    let clause = &api["hits"][0]["clause"];
    assert_eq!(
        clause["text"], own,
        "copied and cited: the clause's own text"
    );
    assert_eq!(
        clause["references"],
        json!([{"section": "14.A", "text": referenced}])
    );
    // Comparing the clause compares its own words.
    let compared = call(
        "POST",
        &server.url("/v1/compare"),
        Some(&key),
        Some(&json!({"left": {"clause_id": "deal#1"}, "right": {"text": own}})),
    );
    assert_eq!(compared.status, 200, "{}", compared.body);
    assert_eq!(compared.json()["similarity"], 1.0, "{}", compared.body);
}

/// Why it matched: the passage that answers the query (the clause's best sentence, as character
/// offsets) and plain reasons (the clause type asked for, the search words it mentions), the same
/// from the CLI and the API.
#[test]
fn each_hit_says_why_it_matched_with_its_answering_passage() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path();
    let lib = contract_library(p);
    let query = "cap on liability fees paid";
    let clause = "12. Limitation of Liability. In no event shall either party be liable for consequential damages, and liability shall not exceed the fees paid in the prior twelve months.";
    let answer = "In no event shall either party be liable for consequential damages, and liability shall not exceed the fees paid in the prior twelve months.";
    let check = |why: &serde_json::Value, text: &str| {
        let start = why["passage"]["start"].as_u64().expect("a passage") as usize;
        let end = why["passage"]["end"].as_u64().expect("a passage") as usize;
        let shown: String = text.chars().skip(start).take(end - start).collect();
        assert_eq!(shown, answer, "{why}");
        let reasons: Vec<&str> = why["reasons"]
            .as_array()
            .expect("reasons")
            .iter()
            .filter_map(|r| r.as_str())
            .collect();
        assert_eq!(
            reasons[0], "clause type Cap on Liability, as asked (confidence 90%)",
            "{why}"
        );
        assert!(
            reasons[1].starts_with("mentions ") && reasons[1].contains("fees"),
            "{why}"
        );
    };

    let out = precedent(
        &["search", "--index", s(&lib), query, "-k", "1", "--json"],
        p,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let cli: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(cli["hits"][0]["text"], clause);
    check(&cli["hits"][0]["why"], clause);
    let out = precedent(&["search", "--index", s(&lib), query, "-k", "1"], p);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("why: clause type Cap on Liability, as asked"),
        "{stdout}"
    );

    let key = create_key(&lib, "read");
    let server = Server::start(&[s(&lib).to_owned()], p);
    let reply = search(&server, &key, json!({"query": query, "k": 1}));
    assert_eq!(reply.status, 200, "{}", reply.body);
    let hit = &reply.json()["hits"][0];
    assert_eq!(hit["clause"]["text"], clause);
    check(&hit["why"], clause);
    assert_eq!(
        hit["why"], cli["hits"][0]["why"],
        "the CLI and the API say the same"
    );
}

/// What the market says, from the CLI and the API alike: the formulations of a clause type with
/// their representative clause and contract counts, where a draft stands, and an alias refused
/// with the CUAD name.
#[test]
fn market_lists_formulations_and_places_a_draft_in_the_cli_and_the_api() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path();
    let lib = market_library(p);
    let draft = "Supplier's total liability shall not exceed the fees paid in the twelve months before the claim.";
    let draft_file = p.join("draft.txt");
    std::fs::write(&draft_file, draft).expect("draft");

    let out = precedent(
        &[
            "market",
            "--index",
            s(&lib),
            "--type",
            "cap on liability",
            "--draft",
            s(&draft_file),
            "--json",
        ],
        p,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let cli: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(cli["clauses"], 12);
    assert_eq!(cli["contracts"], 12);
    let formulations = cli["formulations"].as_array().expect("formulations");
    assert_eq!(formulations.len(), 2);
    let closest = cli["draft"]["closest"].as_u64().expect("closest") as usize;
    let near = &formulations[closest];
    assert!(
        near["representative"]["text"]
            .as_str()
            .is_some_and(|t| t.contains("fees paid")),
        "{near}"
    );
    assert_eq!(near["clauses"], 6);
    assert!(cli["draft"]["lacks"]
        .as_array()
        .is_some_and(|l| l.iter().any(|w| w == "confidentiality")));
    let text = precedent(
        &[
            "market",
            "--index",
            s(&lib),
            "--type",
            "Cap on Liability",
            "--draft",
            s(&draft_file),
        ],
        p,
    );
    let stdout = String::from_utf8_lossy(&text.stdout);
    assert!(
        stdout.contains("Cap on Liability: 12 clauses in 12 contracts, 2 formulations"),
        "{stdout}"
    );
    assert!(
        stdout.contains("Your draft is closest to formulation"),
        "{stdout}"
    );

    let key = create_key(&lib, "read");
    let server = Server::start(&[s(&lib).to_owned()], p);
    let reply = call(
        "POST",
        &server.url("/v1/market"),
        Some(&key),
        Some(&json!({"clause_type": "Cap on Liability", "draft": draft})),
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    let api = reply.json();
    assert_eq!(api["clauses"], 12);
    assert_eq!(api["draft"]["closest"], cli["draft"]["closest"]);
    assert_eq!(api["draft"]["lacks"], cli["draft"]["lacks"]);
    let api_near = &api["formulations"][closest];
    assert_eq!(api_near["representative_id"], near["representative"]["id"]);
    assert_eq!(api_near["distinctive_words"], near["distinctive_words"]);
    // An alias is refused with the CUAD name to use.
    let refused = call(
        "POST",
        &server.url("/v1/market"),
        Some(&key),
        Some(&json!({"clause_type": "Limitation of Liability"})),
    );
    let problem = refused.assert_problem(400);
    assert!(
        problem["suggestions"]
            .as_array()
            .is_some_and(|s| s.iter().any(|n| n == "Cap on Liability")),
        "{problem}"
    );
}
