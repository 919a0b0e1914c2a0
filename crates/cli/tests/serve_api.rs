//! The HTTP API of `precedent serve`, over a real server process on loopback, on libraries
//! built from the real ACORD clauses: authentication and roles, search, clauses, similar,
//! compare, ratings (durable across kill -9), limits and problem details, OpenAPI, metrics.

mod support;

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;
use support::*;

#[test]
fn api_over_loopback_on_acord() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path();
    let acord_lib = build_library(p, "acord", None, false);
    let other_lib = build_library(p, "other", Some(200), false);
    let read = create_key(&acord_lib, "read");
    let rate = create_key(&acord_lib, "rate");
    let admin = create_key(&acord_lib, "admin");
    let other = create_key(&other_lib, "admin");
    let clause_classifier = small_clause_classifier(p);
    let mut serve_args = typer_args();
    serve_args.extend([
        "--clause-classifier".to_owned(),
        s(&clause_classifier).to_owned(),
    ]);
    let server = Server::start_with(
        &[
            format!("acord={}", s(&acord_lib)),
            format!("other={}", s(&other_lib)),
        ],
        &serve_args,
        p,
    );
    let url = |path: &str| server.url(path);
    let corpus = precedent_formats::read_corpus(&acord().join("corpus.jsonl")).expect("corpus");
    let qrels = precedent_formats::read_qrels(&acord().join("qrels/train.tsv")).expect("qrels");

    // Liveness and OpenAPI need no key; the health details need an admin key.
    let health = call("GET", &url("/healthz"), None, None);
    assert_eq!(health.status, 200);
    assert_eq!(health.json(), json!({"status": "ok"}));
    let health = call("GET", &url("/healthz"), Some(&admin), None);
    assert_eq!(health.status, 200);
    let health = health.json();
    assert_eq!(health["status"], "ok");
    assert_eq!(health["libraries"][0]["name"], "acord");
    assert_eq!(health["libraries"][0]["clauses"], corpus.len());
    assert_eq!(health["libraries"][0]["default_pipeline"], "bm25");
    // The review and classify models load on their first request.
    assert_eq!(health["models"]["clause_typer"]["state"], "not_loaded");
    assert_eq!(health["models"]["clause_classifier"]["state"], "not_loaded");
    assert_eq!(
        health["models"]["query_clause_types"]["state"],
        "not_loaded"
    );
    let openapi = call("GET", &url("/openapi.json"), None, None).json();
    for path in [
        "/v1/search",
        "/v1/similar",
        "/v1/clauses/{id}",
        "/v1/compare",
        "/v1/ratings",
        "/v1/review",
        "/v1/classify",
        "/healthz",
    ] {
        assert!(openapi["paths"][path].is_object(), "OpenAPI lacks {path}");
    }
    assert_eq!(
        openapi["components"]["securitySchemes"]["api_key"]["scheme"],
        "bearer"
    );
    assert!(openapi["components"]["schemas"]["SearchRequest"].is_object());
    // The review's metadata is described, not an opaque object.
    assert!(
        openapi["components"]["schemas"]["ContractMeta"]["properties"]["governing_law"].is_object(),
        "{}",
        openapi["components"]["schemas"]
    );

    // Authentication: none, garbage, revoked -> 401; other library or role -> 403.
    let search_body = json!({"query": "New York Governing Law", "k": 5});
    let no_key = call("POST", &url("/v1/search"), None, Some(&search_body));
    no_key.assert_problem(401);
    assert!(no_key
        .header("www-authenticate")
        .is_some_and(|v| v.starts_with("Bearer")));
    call(
        "POST",
        &url("/v1/search"),
        Some("prec_0000"),
        Some(&search_body),
    )
    .assert_problem(401);
    let wrong_library = json!({"query": "governing law", "library": "acord"});
    let problem = call(
        "POST",
        &url("/v1/search"),
        Some(&other),
        Some(&wrong_library),
    )
    .assert_problem(403);
    assert!(
        problem["detail"].as_str().unwrap_or("").contains("other"),
        "{problem}"
    );
    call(
        "POST",
        &url("/v1/search"),
        Some(&read),
        Some(&json!({"query": "x", "library": "nope"})),
    )
    .assert_problem(404);

    // Search: ranked ACORD clauses with highlights and stage scores.
    let reply = call("POST", &url("/v1/search"), Some(&read), Some(&search_body));
    assert_eq!(reply.status, 200, "{}", reply.body);
    let result = reply.json();
    assert_eq!(result["library"], "acord");
    assert_eq!(result["pipeline"], "bm25");
    let hits = result["hits"].as_array().expect("hits");
    assert_eq!(hits.len(), 5);
    // The same ranking as the CLI's `search` on the same library and pipeline.
    let cli = precedent(
        &[
            "search",
            "--index",
            s(&acord_lib),
            "New York Governing Law",
            "-k",
            "5",
            "--json",
        ],
        p,
    );
    let cli: serde_json::Value = serde_json::from_slice(&cli.stdout).expect("cli json");
    let cli_ids: Vec<&str> = cli["hits"]
        .as_array()
        .expect("hits")
        .iter()
        .filter_map(|h| h["id"].as_str())
        .collect();
    let api_ids: Vec<&str> = hits
        .iter()
        .filter_map(|h| h["clause"]["id"].as_str())
        .collect();
    assert_eq!(api_ids, cli_ids);
    // ACORD holds "13.1 Todos's Duty to Indemnify" twice (b0af77c86f, and 7e0917ea6a with
    // doubled quotes): one hit carries the other as a copy, unless keep_duplicates.
    let todos = json!({"query": "Todos Duty to Indemnify Reseller", "k": 5});
    let folded = call("POST", &url("/v1/search"), Some(&read), Some(&todos)).json();
    let folded = folded["hits"].as_array().expect("hits");
    assert_eq!(folded.len(), 5);
    let todos_hit = folded
        .iter()
        .find(|h| h["clause"]["id"] == "b0af77c86f" || h["clause"]["id"] == "7e0917ea6a")
        .expect("the Todos clause among the hits");
    let pair = [
        todos_hit["clause"]["id"].clone(),
        todos_hit["copies"][0].clone(),
    ];
    assert!(
        pair.contains(&"b0af77c86f".into()) && pair.contains(&"7e0917ea6a".into()),
        "{todos_hit}"
    );
    let kept =
        json!({"query": "Todos Duty to Indemnify Reseller", "k": 5, "keep_duplicates": true});
    let kept = call("POST", &url("/v1/search"), Some(&read), Some(&kept)).json();
    let kept_ids = hit_ids(&kept);
    assert!(
        kept_ids.contains(&"b0af77c86f") && kept_ids.contains(&"7e0917ea6a"),
        "{kept_ids:?}"
    );
    // And a sensible one: as ACORD scores it (unjudged clauses dropped), the first judged hit
    // is a 3+ star clause.
    let judged = qrels
        .judged("New York Governing Law")
        .expect("judged query");
    let first_judged = api_ids.iter().find_map(|id| judged.get(*id));
    assert!(
        first_judged.is_some_and(|&label| label >= 2),
        "{first_judged:?}"
    );
    for (i, hit) in hits.iter().enumerate() {
        assert_eq!(hit["rank"], i + 1);
        assert_eq!(hit["stages"][0]["stage"], "bm25");
        let text: Vec<char> = hit["clause"]["text"]
            .as_str()
            .expect("text")
            .chars()
            .collect();
        let spans = hit["highlights"].as_array().expect("highlights");
        assert!(!spans.is_empty(), "hit {i} has no highlight");
        for span in spans {
            let (a, b) = (
                span["start"].as_u64().unwrap_or(0) as usize,
                span["end"].as_u64().unwrap_or(0) as usize,
            );
            let word: String = text[a..b].iter().collect::<String>().to_lowercase();
            assert!(
                ["new", "york", "govern", "law"]
                    .iter()
                    .any(|w| word.starts_with(w)),
                "highlight {word:?} is not a query term"
            );
        }
        let id = hit["clause"]["id"].as_str().expect("id");
        let doc = corpus
            .iter()
            .find(|d| d.id == id)
            .expect("hit is a corpus clause");
        assert_eq!(hit["clause"]["text"], doc.text.as_str());
        assert_eq!(hit["clause"]["citation"]["text"], format!("Clause {id}"));
    }
    assert!(result["facets"]["candidates"].as_u64().unwrap_or(0) >= 5);

    // Bad searches are 4xx problems, never a crash.
    for (body, status) in [
        (json!({"query": "  "}), 400),
        (json!({"query": "law", "k": 0}), 400),
        (json!({"query": "law", "k": 101}), 400),
        (json!({"query": "law", "pipeline": "dense"}), 400),
        (json!({"query": "law", "pipeline": "learned"}), 400),
        (
            json!({"query": "law", "filters": {"date_from": "2020-13-45"}}),
            400,
        ),
        (json!({"query": "law", "rerank": true}), 400),
        (json!({"query": "x".repeat(20_001)}), 400),
        (json!({"query": "law", "colour": "red"}), 422),
        (json!({"query": 7}), 422),
    ] {
        call("POST", &url("/v1/search"), Some(&read), Some(&body)).assert_problem(status);
    }
    call_raw(
        "POST",
        &url("/v1/search"),
        Some(&read),
        "application/json",
        b"{\"query\": ",
    )
    .assert_problem(400);
    call_raw(
        "POST",
        &url("/v1/search"),
        Some(&read),
        "text/plain",
        b"query",
    )
    .assert_problem(415);
    let huge = format!("{{\"query\": \"{}\"}}", "a".repeat(2 * 1024 * 1024));
    post_oversized(
        &url("/v1/search"),
        &read,
        "application/json",
        huge.into_bytes(),
    )
    .assert_problem(413);
    call("GET", &url("/v1/nothing-here"), Some(&read), None).assert_problem(404);

    // Filters: ACORD clauses carry no contract metadata, so a party filter matches none.
    let filtered = call(
        "POST",
        &url("/v1/search"),
        Some(&read),
        Some(&json!({"query": "governing law", "filters": {"party": "acme"}})),
    )
    .json();
    assert_eq!(filtered["hits"].as_array().map(Vec::len), Some(0));

    // A clause by id; unknown ids are 404.
    let top_id = hits[0]["clause"]["id"].as_str().expect("id").to_owned();
    let clause = call(
        "GET",
        &url(&format!("/v1/clauses/{top_id}")),
        Some(&read),
        None,
    );
    assert_eq!(clause.status, 200, "{}", clause.body);
    let clause = clause.json();
    assert_eq!(clause["clause"]["id"], top_id.as_str());
    assert!(
        clause["context"].is_null(),
        "ACORD keeps no source contract"
    );
    call("GET", &url("/v1/clauses/no-such-clause"), Some(&read), None).assert_problem(404);

    // Similar: by clause id (the clause itself excluded) and by pasted text.
    let similar = call(
        "POST",
        &url("/v1/similar"),
        Some(&read),
        Some(&json!({"clause_id": top_id, "k": 5})),
    );
    assert_eq!(similar.status, 200, "{}", similar.body);
    let similar = similar.json();
    let ids = hit_ids(&similar);
    assert_eq!(ids.len(), 5);
    assert!(!ids.contains(&top_id.as_str()));
    let draft = json!({"text": "This Agreement shall be governed by the laws of the State of New York.", "k": 3});
    let by_text = call("POST", &url("/v1/similar"), Some(&read), Some(&draft)).json();
    assert_eq!(by_text["hits"].as_array().map(Vec::len), Some(3));
    call(
        "POST",
        &url("/v1/similar"),
        Some(&read),
        Some(&json!({"clause_id": top_id, "text": "both"})),
    )
    .assert_problem(400);
    // A word-for-word copy of the source clause is not a similar clause.
    let like_todos = json!({"clause_id": "b0af77c86f", "k": 5});
    let like_todos = call("POST", &url("/v1/similar"), Some(&read), Some(&like_todos)).json();
    let like_ids = hit_ids(&like_todos);
    assert_eq!(like_ids.len(), 5, "{like_todos}");
    assert!(!like_ids.contains(&"7e0917ea6a"), "{like_ids:?}");

    // Compare two clauses word by word; the ops spell both texts.
    let second_id = hits[1]["clause"]["id"].as_str().expect("id");
    let compared = call(
        "POST",
        &url("/v1/compare"),
        Some(&read),
        Some(&json!({"left": {"clause_id": top_id}, "right": {"clause_id": second_id}})),
    );
    assert_eq!(compared.status, 200, "{}", compared.body);
    let compared = compared.json();
    // Equal runs are matched ignoring case and spacing; such a run carries the right side's own
    // words in `right_text` when they are written differently.
    let spell = |keep: &str| -> String {
        compared["ops"]
            .as_array()
            .expect("ops")
            .iter()
            .filter(|o| o["op"] == "equal" || o["op"] == keep)
            .filter_map(|o| {
                if keep == "insert" && o["op"] == "equal" {
                    o["right_text"].as_str().or(o["text"].as_str())
                } else {
                    o["text"].as_str()
                }
            })
            .collect()
    };
    assert_eq!(
        spell("delete"),
        hits[0]["clause"]["text"].as_str().unwrap_or("")
    );
    assert_eq!(
        spell("insert"),
        hits[1]["clause"]["text"].as_str().unwrap_or("")
    );

    // Ratings: read keys may not rate; rate keys may; only admins export.
    let rating = json!({"query": "New York Governing Law", "clause_id": top_id, "stars": 5});
    call("POST", &url("/v1/ratings"), Some(&read), Some(&rating)).assert_problem(403);
    let stored = call("POST", &url("/v1/ratings"), Some(&rate), Some(&rating));
    assert_eq!(stored.status, 201, "{}", stored.body);
    assert_eq!(stored.json()["rating"]["stars"], 5);
    let low = json!({"query": "unqualified \"as is\" clause", "clause_id": second_id, "stars": 1});
    assert_eq!(
        call("POST", &url("/v1/ratings"), Some(&rate), Some(&low)).status,
        201
    );
    for bad in [
        json!({"query": "q", "clause_id": top_id, "stars": 0}),
        json!({"query": "q", "clause_id": top_id, "stars": 6}),
        json!({"query": "", "clause_id": top_id, "stars": 3}),
    ] {
        call("POST", &url("/v1/ratings"), Some(&rate), Some(&bad)).assert_problem(400);
    }
    call(
        "POST",
        &url("/v1/ratings"),
        Some(&rate),
        Some(&json!({"query": "q", "clause_id": "missing", "stars": 3})),
    )
    .assert_problem(404);
    call("GET", &url("/v1/ratings"), Some(&rate), None).assert_problem(403);
    let export = call("GET", &url("/v1/ratings?format=qrels"), Some(&admin), None);
    assert_eq!(export.status, 200, "{}", export.body);
    let qrels_path = p.join("ratings.tsv");
    std::fs::write(&qrels_path, &export.body).expect("write");
    let exported = precedent_formats::read_qrels(&qrels_path).expect("precedent_formats reads it");
    assert_eq!(
        exported
            .judged("New York Governing Law")
            .and_then(|j| j.get(&top_id)),
        Some(&4)
    );
    assert_eq!(
        exported
            .judged("unqualified \"as is\" clause")
            .and_then(|j| j.get(second_id)),
        Some(&0)
    );
    let queries = call(
        "GET",
        &url("/v1/ratings?format=queries"),
        Some(&admin),
        None,
    );
    assert_eq!(queries.body.lines().count(), 2);

    // Revoking a key takes effect on the running server.
    let list = precedent(&["keys", "list", "--index", s(&acord_lib), "--json"], p);
    let keys: serde_json::Value = serde_json::from_slice(&list.stdout).expect("keys json");
    assert_eq!(keys.as_array().map(Vec::len), Some(3));
    assert!(
        !String::from_utf8_lossy(&list.stdout).contains(&read),
        "tokens are never listed"
    );
    let read_id = keys
        .as_array()
        .and_then(|k| k.iter().find(|k| k["role"] == "read"))
        .and_then(|k| k["id"].as_str())
        .expect("read key id")
        .to_owned();
    let out = precedent(&["keys", "revoke", "--index", s(&acord_lib), &read_id], p);
    assert!(out.status.success());
    call("POST", &url("/v1/search"), Some(&read), Some(&search_body)).assert_problem(401);

    // Contract review: the same real contract as TXT (CUAD's own file), HTML, DOCX and PDF
    // (committed fixtures) comes back with its text, sections and the clause types found.
    let review_url = url("/v1/review");
    let franchise = cuad_contract(
        "RgcResourcesInc_20151216_8-K_EX-10.3_9372751_EX-10.3_Franchise Agreement.txt",
    );
    let uploads = [
        (
            "franchise.txt",
            std::fs::read(&franchise).expect("CUAD contract"),
            "txt",
        ),
        (
            "franchise.html",
            std::fs::read(contract_fixture("franchise.html")).expect("fixture"),
            "html",
        ),
        (
            "franchise.docx",
            std::fs::read(contract_fixture("franchise.docx")).expect("fixture"),
            "docx",
        ),
        (
            "franchise.pdf",
            std::fs::read(contract_fixture("franchise.pdf")).expect("fixture"),
            "pdf",
        ),
        // Page images only: read by OCR (setup installs tesseract and pdftoppm).
        (
            "franchise-scanned.pdf",
            std::fs::read(contract_fixture("franchise-scanned.pdf")).expect("fixture"),
            "pdf",
        ),
    ];
    for (name, bytes, format) in &uploads {
        let reply = upload(&review_url, &rate, name, bytes);
        assert_eq!(reply.status, 200, "{name}: {}", reply.body);
        let review = reply.json();
        assert_eq!(review["contract"], *name);
        assert_eq!(review["format"], *format);
        assert_eq!(review["ocr"], *name == "franchise-scanned.pdf", "{name}");
        if *name != "franchise-scanned.pdf" {
            // What the contract says about itself, as precedent-contracts reads it.
            assert_eq!(review["metadata"]["date"], "2015-11-17", "{name}");
            assert!(
                review["metadata"]["parties"]
                    .as_array()
                    .is_some_and(|p| p.iter().any(|p| p == "ROANOKE GAS COMPANY")),
                "{name}: {}",
                review["metadata"]
            );
        }
        let text: Vec<char> = review["text"].as_str().expect("text").chars().collect();
        assert!(
            review["sections"].as_array().is_some_and(|s| s.len() >= 8),
            "{name}"
        );
        let findings = review["findings"].as_array().expect("findings");
        for f in findings {
            let (a, b) = (
                f["start"].as_u64().expect("start") as usize,
                f["end"].as_u64().expect("end") as usize,
            );
            assert_eq!(
                text[a..b].iter().collect::<String>(),
                f["text"].as_str().expect("text"),
                "{name}: finding spans are char offsets into the text"
            );
            let confidence = f["confidence"].as_f64().expect("confidence");
            assert!((0.5..=1.0).contains(&confidence), "{name}: {f}");
        }
        // The franchise's term clause (§ 2) is its expiration date; the date it was signed is
        // the agreement date.
        let of = |category: &str| -> Vec<&serde_json::Value> {
            findings
                .iter()
                .filter(|f| f["category"] == category)
                .collect()
        };
        let term = of("Expiration Date");
        assert!(
            term.iter().any(|f| f["section"] == "2"
                && f["text"]
                    .as_str()
                    .unwrap_or("")
                    .contains("twenty (20) years")),
            "{name}: {term:?}"
        );
        assert!(
            of("Agreement Date")
                .iter()
                .any(|f| f["text"].as_str().unwrap_or("").contains("November")),
            "{name}: {findings:?}"
        );
    }
    // Bad uploads are problems, and review needs a key.
    let bytes = std::fs::read(&franchise).expect("CUAD contract");
    upload(&review_url, &admin, "services.exe", &bytes).assert_problem(415);
    upload(&review_url, &admin, "empty.txt", b"  \n").assert_problem(422);
    upload(&review_url, &admin, "broken.pdf", b"%PDF-1.4 not really").assert_problem(422);
    let scanned = std::fs::read(contract_fixture("scanned.pdf")).expect("fixture");
    upload(&review_url, &admin, "scanned.pdf", &scanned).assert_problem(422);
    call_raw("POST", &review_url, Some(&admin), "application/json", b"{}").assert_problem(400);
    upload(&review_url, "prec_nobody", "franchise.txt", &bytes).assert_problem(401);

    // A lone clause's CUAD types, as `precedent classify` answers: the categories reaching
    // their threshold, most confident first, one entry per text in the request's order.
    let classify_url = url("/v1/classify");
    let law = "This Agreement shall be governed by and construed in accordance with the laws of the State of New York, without regard to its conflict of laws principles.";
    let assign = "Neither party may assign this Agreement or any of its rights or obligations hereunder without the prior written consent of the other party.";
    let classify = |body: serde_json::Value| {
        let reply = call("POST", &classify_url, Some(&rate), Some(&body));
        assert_eq!(reply.status, 200, "{}", reply.body);
        reply.json()["clauses"].as_array().expect("clauses").clone()
    };
    let confidences = |types: &serde_json::Value| -> Vec<(String, f64, f64)> {
        types
            .as_array()
            .expect("types")
            .iter()
            .map(|t| {
                (
                    t["category"].as_str().expect("category").to_owned(),
                    t["confidence"].as_f64().expect("confidence"),
                    t["threshold"].as_f64().expect("threshold"),
                )
            })
            .collect()
    };
    let clauses = classify(json!({"texts": [law, assign]}));
    assert_eq!(clauses.len(), 2);
    for (clause, category) in clauses.iter().zip(["Governing Law", "Anti-Assignment"]) {
        let types = confidences(&clause["types"]);
        assert_eq!(types[0].0, category, "{clause}");
        assert!(types.iter().all(|(_, c, t)| c >= t), "{clause}");
        assert!(types.windows(2).all(|w| w[0].1 >= w[1].1), "{clause}");
        // Each type says whether it reads as likely: the server has the type gate (the
        // second stage's classifier), and its confidence comes with the answer.
        let top = &clause["types"][0];
        assert!(top["gate"].as_f64().is_some(), "{clause}");
        assert_eq!(
            top["likely"].as_bool(),
            Some(precedent_clause_types::clause_classifier::is_likely(
                top["confidence"].as_f64().unwrap_or_default() as f32,
                top["gate"].as_f64().map(|g| g as f32),
            )),
            "{clause}"
        );
    }
    // Every category with `all`; one cut for every category with `threshold`.
    let every = confidences(&classify(json!({"texts": [law], "all": true}))[0]["types"]);
    assert_eq!(every.len(), 41);
    assert!(every.iter().any(|(_, c, t)| c < t));
    let sure = confidences(&classify(json!({"texts": [law], "threshold": 0.9}))[0]["types"]);
    assert!(
        sure.iter().all(|(_, c, t)| *t == 0.9 && *c >= 0.9),
        "{sure:?}"
    );
    assert!(sure.len() < every.len());
    for bad in [
        json!({"texts": []}),
        json!({"texts": [law, " "]}),
        json!({"texts": [law], "threshold": 2}),
    ] {
        call("POST", &classify_url, Some(&rate), Some(&bad)).assert_problem(400);
    }
    // An unknown field is refused, not ignored.
    call(
        "POST",
        &classify_url,
        Some(&rate),
        Some(&json!({"text": law})),
    )
    .assert_problem(422);
    call("POST", &classify_url, None, Some(&json!({"texts": [law]}))).assert_problem(401);
    let models = call("GET", &url("/healthz"), Some(&admin), None).json()["models"].clone();
    assert_eq!(models["clause_typer"]["state"], "ready", "{models}");
    assert_eq!(models["clause_classifier"]["state"], "ready", "{models}");

    // The page and metrics.
    let page = call("GET", &url("/"), None, None);
    assert_eq!(page.status, 200);
    assert!(page.body.contains("<title>Precedent"));
    assert!(page.header("content-security-policy").is_some());
    assert_eq!(call("GET", &url("/app.js"), None, None).status, 200);
    let metrics = call("GET", &url("/metrics"), Some(&admin), None).body;
    assert!(
        metrics
            .lines()
            .any(|l| l.starts_with("precedent_http_requests_total")
                && l.contains("route=\"/v1/search\"")
                && l.contains("status=\"200\"")),
        "{metrics}"
    );
    assert!(metrics.contains("precedent_http_request_duration_seconds_bucket"));
}

#[test]
fn keys_command_refuses_non_libraries_and_bad_roles() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path();
    let out = precedent(&["keys", "create", "--index", s(p), "--role", "read"], p);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a Precedent library"));
    let lib = build_library(p, "lib", Some(20), false);
    let out = precedent(
        &["keys", "create", "--index", s(&lib), "--role", "owner"],
        p,
    );
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("read, rate or admin"));
    let out = precedent(&["keys", "revoke", "--index", s(&lib), "deadbeef"], p);
    assert!(!out.status.success());
    let out = precedent(&["serve", "--index", s(p), "--addr", "127.0.0.1:0"], p);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a Precedent library"));
}

/// Ratings acknowledged with 201 are on disk even when the server is killed with SIGKILL in
/// the middle of a burst of concurrent writes, and the server restarts on the same log.
#[test]
fn ratings_survive_kill_9_during_a_burst() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path();
    let lib = build_library(p, "lib", Some(100), false);
    let key = create_key(&lib, "admin");
    let corpus = precedent_formats::read_corpus(&acord().join("corpus.jsonl")).expect("corpus");
    let ids: Vec<String> = corpus.iter().take(100).map(|d| d.id.clone()).collect();
    let mut server = Server::start(&[s(&lib).to_owned()], p);
    let acknowledged = Arc::new(Mutex::new(Vec::<String>::new()));
    let stop = Arc::new(AtomicBool::new(false));
    let writers: Vec<_> = (0..8)
        .map(|w| {
            let (url, key, ids) = (server.url("/v1/ratings"), key.clone(), ids.clone());
            let (acknowledged, stop) = (acknowledged.clone(), stop.clone());
            std::thread::spawn(move || {
                let agent = ureq::AgentBuilder::new()
                    .timeout(Duration::from_secs(10))
                    .build();
                for i in 0.. {
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    let query = format!("burst writer {w} rating {i}");
                    let body = json!({"query": query, "clause_id": ids[i % ids.len()], "stars": 1 + (i % 5)});
                    match agent
                        .post(&url)
                        .set("Authorization", &format!("Bearer {key}"))
                        .send_json(body)
                    {
                        Ok(r) if r.status() == 201 => {
                            acknowledged.lock().expect("lock").push(query)
                        }
                        Ok(r) => panic!("unexpected status {}", r.status()),
                        // The server was killed mid-request: not acknowledged.
                        Err(_) => break,
                    }
                }
            })
        })
        .collect();
    // Kill while writes are in flight, after a good number were acknowledged.
    let started = Instant::now();
    while acknowledged.lock().expect("lock").len() < 200
        && started.elapsed() < Duration::from_secs(60)
    {
        std::thread::sleep(Duration::from_millis(5));
    }
    server.child.kill().expect("kill -9");
    server.child.wait().expect("wait");
    stop.store(true, Ordering::Relaxed);
    for w in writers {
        w.join().expect("writer thread");
    }
    let acknowledged: Vec<String> = acknowledged.lock().expect("lock").clone();
    assert!(
        acknowledged.len() >= 200,
        "only {} ratings acknowledged",
        acknowledged.len()
    );

    let on_disk = precedent_server::ratings::read_ratings(&lib.join("ratings.jsonl"))
        .expect("the log reads back (a torn tail is skipped)");
    let stored: HashSet<&str> = on_disk.iter().map(|r| r.query.as_str()).collect();
    let lost: Vec<&String> = acknowledged
        .iter()
        .filter(|q| !stored.contains(q.as_str()))
        .collect();
    assert!(
        lost.is_empty(),
        "{} acknowledged ratings lost, e.g. {:?}",
        lost.len(),
        lost.first()
    );

    // Restart on the same library: old ratings are kept and new ones append cleanly.
    drop(server);
    let server = Server::start(&[s(&lib).to_owned()], p);
    let body = json!({"query": "after restart", "clause_id": ids[0], "stars": 4});
    let reply = call("POST", &server.url("/v1/ratings"), Some(&key), Some(&body));
    assert_eq!(reply.status, 201, "{}", reply.body);
    assert!(reply.json()["stored"].as_u64().unwrap_or(0) as usize > acknowledged.len());
    let export = call(
        "GET",
        &server.url("/v1/ratings?format=jsonl"),
        Some(&key),
        None,
    );
    let lines: HashSet<String> = export
        .body
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|v| v["query"].as_str().map(str::to_owned))
        .collect();
    assert!(lines.contains("after restart"));
    assert!(acknowledged.iter().all(|q| lines.contains(q)));
}

/// Over contracts ingested with `precedent ingest` (real CUAD contracts, real extracted
/// metadata): filters narrow the hits, facets count the metadata, clauses open in context.
#[test]
fn filters_facets_and_context_on_ingested_cuad_contracts() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path();
    let contracts = p.join("contracts");
    std::fs::create_dir_all(&contracts).expect("mkdir");
    let names: Vec<String> = std::fs::read_dir(cuad_contract(""))
        .expect("CUAD folder")
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
        .filter(|n| n.ends_with(".txt"))
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .take(6)
        .collect();
    for name in &names {
        std::fs::copy(cuad_contract(name), contracts.join(name)).expect("copy");
    }
    let lib = p.join("cuad");
    let mut ingest = vec!["ingest", s(&contracts), "--index", s(&lib), "--no-vectors"];
    let typer = typer_args();
    ingest.extend(typer.iter().map(String::as_str));
    let out = precedent(&ingest, p);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let key = create_key(&lib, "read");
    let admin = create_key(&lib, "admin");
    // A classifier that cannot be loaded leaves the rest of the server working; preloaded, it
    // fails in the background and /healthz says why (to an admin) before anyone asks for it.
    let mut serve_args = typer.clone();
    serve_args.extend([
        "--clause-classifier".to_owned(),
        s(&p.join("missing.bin")).to_owned(),
        "--preload".to_owned(),
    ]);
    let server = Server::start_with(&[format!("cuad={}", s(&lib))], &serve_args, p);
    let waited = Instant::now();
    let models = loop {
        let models =
            call("GET", &server.url("/healthz"), Some(&admin), None).json()["models"].clone();
        let settled =
            |m: &serde_json::Value| !matches!(m["state"].as_str(), Some("loading" | "not_loaded"));
        if ["clause_typer", "clause_classifier", "query_clause_types"]
            .iter()
            .all(|m| settled(&models[m]))
        {
            break models;
        }
        assert!(waited.elapsed() < Duration::from_secs(120), "{models}");
        std::thread::sleep(Duration::from_millis(200));
    };
    assert_eq!(models["clause_typer"]["state"], "ready", "{models}");
    // The reader of queries naming a clause type was preloaded too, and /healthz says so.
    assert_eq!(models["query_clause_types"]["state"], "ready", "{models}");
    assert_eq!(models["clause_classifier"]["state"], "failed", "{models}");
    assert!(
        models["clause_classifier"]["reason"]
            .as_str()
            .is_some_and(|r| r.contains("missing.bin")),
        "{models}"
    );
    let missing = call(
        "POST",
        &server.url("/v1/classify"),
        Some(&key),
        Some(&json!({"texts": ["This Agreement is governed by the laws of Delaware."]})),
    )
    .assert_problem(503);
    assert!(
        missing["detail"]
            .as_str()
            .is_some_and(|d| d.contains("missing.bin")),
        "{missing}"
    );
    let search = |body: serde_json::Value| {
        let reply = call("POST", &server.url("/v1/search"), Some(&key), Some(&body));
        assert_eq!(reply.status, 200, "{}", reply.body);
        reply.json()
    };
    let all = search(json!({"query": "this agreement shall be governed by the laws of", "k": 50}));
    let laws = all["facets"]["governing_law"]
        .as_array()
        .expect("law facet")
        .clone();
    assert!(
        !laws.is_empty(),
        "ingested contracts have governing laws: {}",
        all["facets"]
    );
    let law = laws[0]["value"].as_str().expect("law").to_owned();
    let filtered = search(json!({
        "query": "this agreement shall be governed by the laws of", "k": 10,
        "filters": {"governing_law": law}
    }));
    let hits = filtered["hits"].as_array().expect("hits");
    assert!(!hits.is_empty());
    for hit in hits {
        let have = hit["clause"]["citation"]["governing_law"]
            .as_str()
            .unwrap_or("");
        assert!(
            have.to_lowercase().contains(&law.to_lowercase()),
            "{have} vs {law}"
        );
    }
    let unfiltered_laws: HashSet<&str> = all["hits"]
        .as_array()
        .expect("hits")
        .iter()
        .filter_map(|h| h["clause"]["citation"]["governing_law"].as_str())
        .collect();
    assert!(
        unfiltered_laws.len() > 1 || laws.len() == 1,
        "{unfiltered_laws:?}"
    );
    // Clause types written at ingest: a facet over the candidates, and a filter that keeps
    // only clauses typed so (at confidence 0.5 and up).
    let types = all["facets"]["clause_type"]
        .as_array()
        .expect("clause type facet");
    assert!(
        types.iter().any(|t| t["value"] == "Governing Law"),
        "{types:?}"
    );
    let typed = search(json!({
        "query": "this agreement shall be governed by the laws of", "k": 10,
        "filters": {"clause_type": "Governing Law"}
    }));
    let typed = typed["hits"].as_array().expect("hits");
    assert!(!typed.is_empty());
    for hit in typed {
        let types = hit["clause"]["clause_types"].as_array().expect("types");
        assert!(
            types.iter().any(|t| t["category"] == "Governing Law"
                && t["confidence"].as_f64().unwrap_or(0.0) >= 0.5),
            "{hit}"
        );
    }
    let party =
        search(json!({"query": "term", "k": 5, "filters": {"party": "no such party anywhere"}}));
    assert_eq!(party["hits"].as_array().map(Vec::len), Some(0));
    search(
        json!({"query": "term", "k": 5, "filters": {"date_from": "2000", "date_to": "2030-12"}}),
    );

    // Open the top clause: its context in the contract surrounds exactly the clause's span.
    let top = &hits[0]["clause"];
    let id = top["id"].as_str().expect("id");
    let encoded: String = id
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' => (b as char).to_string(),
            other => format!("%{other:02X}"),
        })
        .collect();
    let reply = call(
        "GET",
        &server.url(&format!("/v1/clauses/{encoded}")),
        Some(&key),
        None,
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    let clause = reply.json();
    let context = &clause["context"];
    assert!(
        context.is_object(),
        "ingested clauses have context: {clause}"
    );
    assert!(!context["before"].as_str().unwrap_or("").is_empty() || context["start"] == 0);
    let citation = top["citation"]["text"].as_str().expect("citation");
    assert!(
        citation.contains('§') || top["citation"]["section"].is_null(),
        "{citation}"
    );
}

/// Clauses committed while the server runs (`index --add`, as `ingest` does batch after batch)
/// are served without a restart; requests keep being answered while the new generation loads,
/// and keys and ratings carry over to it.
#[test]
fn serves_a_new_generation_without_a_restart() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path();
    let lib = build_library(p, "lib", Some(300), false);
    let key = create_key(&lib, "rate");
    // The clause count is read from /healthz, opened to callers without a key.
    let server = Server::start_with(
        &[format!("lib={}", s(&lib))],
        &[
            "--watch-secs".to_owned(),
            "0.2".to_owned(),
            "--public-status".to_owned(),
        ],
        p,
    );
    let search = |query: &str| {
        let reply = call(
            "POST",
            &server.url("/v1/search"),
            Some(&key),
            Some(&json!({"query": query, "k": 3})),
        );
        assert_eq!(reply.status, 200, "{}", reply.body);
        reply.json()
    };
    let clauses = || {
        call("GET", &server.url("/healthz"), None, None).json()["libraries"][0]["clauses"].clone()
    };
    assert_eq!(clauses(), 300);
    let query = "The source code shall be held in escrow in Zanzibar.";
    let before = search(query);
    assert!(before["hits"]
        .as_array()
        .is_some_and(|h| h.iter().all(|h| h["clause"]["id"] != "new-1")));

    let extra = p.join("extra.jsonl");
    std::fs::write(
        &extra,
        "{\"_id\": \"new-1\", \"title\": \"\", \"text\": \"The source code shall be held in escrow in Zanzibar.\"}\n",
    )
    .expect("write");
    let out = precedent(
        &["index", "--add", "--corpus", s(&extra), "--index", s(&lib)],
        p,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        // Every request in between is answered, by one generation or the other.
        let hits = search(query);
        if hits["hits"][0]["clause"]["id"] == "new-1" {
            break;
        }
        assert!(Instant::now() < deadline, "new clause not served: {hits}");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(clauses(), 301);
    // The key still works and a rating of the new clause is stored.
    let rated = call(
        "POST",
        &server.url("/v1/ratings"),
        Some(&key),
        Some(&json!({"query": query, "clause_id": "new-1", "stars": 5})),
    );
    assert_eq!(rated.status, 201, "{}", rated.body);
}

/// The clause ids of a search or similar reply's hits, in rank order.
fn hit_ids(reply: &serde_json::Value) -> Vec<&str> {
    reply["hits"]
        .as_array()
        .expect("hits")
        .iter()
        .filter_map(|h| h["clause"]["id"].as_str())
        .collect()
}

/// Each hit of a search answer as (clause id, score, ids of the folded copies); `id` and
/// `copy_id` are JSON pointers into a hit and into a copy (the CLI lists copies as objects, the
/// API as ids).
fn hit_summaries(
    answer: &serde_json::Value,
    id: &str,
    copy_id: &str,
) -> Vec<(String, f64, Vec<String>)> {
    let text = |v: Option<&serde_json::Value>| {
        v.and_then(serde_json::Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    answer["hits"]
        .as_array()
        .expect("hits")
        .iter()
        .map(|h| {
            let copies = h["copies"]
                .as_array()
                .expect("copies")
                .iter()
                .map(|c| text(c.pointer(copy_id)))
                .collect();
            let score = h["score"].as_f64().unwrap_or(f64::NAN);
            (text(h.pointer(id)), score, copies)
        })
        .collect()
}

/// `precedent search --json` and `POST /v1/search` give the same answer to the same request,
/// because both ask the engine (`precedent_engine::search`) with the pipeline the engine
/// chooses for the library: the same clauses in the same order with the same scores and the
/// same folded copies, for training queries in every wording, with copies folded and kept.
#[test]
fn the_cli_and_the_api_answer_a_search_alike() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path();
    let lib = build_library(p, "acord", None, false);
    let read = create_key(&lib, "read");
    let server = Server::start(&[format!("acord={}", s(&lib))], p);
    let mut queries = Vec::new();
    for file in [
        "queries.jsonl",
        "queries_medium.jsonl",
        "queries_long.jsonl",
    ] {
        let wording = precedent_formats::read_queries(&acord().join(file)).expect("queries");
        queries.extend(wording.into_iter().step_by(6).map(|q| q.text));
    }
    assert!(queries.len() >= 27, "{} queries", queries.len());
    // A misspelt request: both faces treat it alike. This library has no vectors, so no
    // embedder vocabulary to tell ordinary words from typos: BM25 ranks the text as typed
    // (serve_e2e checks the correction on a library with vectors).
    queries.push("Most Favored Natoin clause with a price adjustmnet".to_owned());
    // A request in search syntax is read alike by both faces, with or without vectors.
    queries.push("\"most favored\" /s price AND NOT (customer OR buyer)".to_owned());
    let mut compared = 0;
    for query in &queries {
        for keep in [false, true] {
            let mut args = vec![
                "search",
                query.as_str(),
                "--index",
                s(&lib),
                "-k",
                "10",
                "--json",
            ];
            if keep {
                args.push("--keep-duplicates");
            }
            let out = precedent(&args, p);
            assert!(
                out.status.success(),
                "{query}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            let cli: serde_json::Value = serde_json::from_slice(&out.stdout).expect("cli json");
            let api = call(
                "POST",
                &server.url("/v1/search"),
                Some(&read),
                Some(&json!({"query": query, "k": 10, "keep_duplicates": keep})),
            );
            assert_eq!(api.status, 200, "{query}: {}", api.body);
            let api = api.json();
            assert_eq!(cli["pipeline"], api["pipeline"], "{query}");
            assert_eq!(cli["corrected_query"], api["corrected_query"], "{query}");
            if query.contains("Natoin") {
                assert!(api["corrected_query"].is_null(), "{api}");
            }
            if query.contains("/s") {
                assert_eq!(
                    api["corrected_query"],
                    "most favored price not including customer and not including buyer"
                );
                assert_eq!(api["corrected_how"], "search syntax read");
            }
            let cli_hits = hit_summaries(&cli, "/id", "/id");
            let api_hits = hit_summaries(&api, "/clause/id", "");
            // Ids and copies exactly; scores as numbers (each face prints its f32 in its own way).
            let strip = |hits: &[(String, f64, Vec<String>)]| -> Vec<(String, Vec<String>)> {
                hits.iter()
                    .map(|(id, _, c)| (id.clone(), c.clone()))
                    .collect()
            };
            assert_eq!(
                strip(&cli_hits),
                strip(&api_hits),
                "{query} (keep duplicates: {keep})"
            );
            for ((_, a, _), (_, b, _)) in cli_hits.iter().zip(&api_hits) {
                assert!(
                    (a - b).abs() <= 1e-4 * a.abs().max(1.0),
                    "{query}: {a} vs {b}"
                );
            }
            assert_eq!(cli_hits.len(), 10, "{query}");
            compared += 1;
        }
    }
    assert_eq!(compared, queries.len() * 2);
}

/// The review's checklist over the API: the JSON's `checklist` holds all 41 CUAD categories,
/// present ones with spans into the returned text and absent ones without, and `format=csv`
/// answers the same checklist as a CSV attachment; terms of service have no checklist CSV.
#[test]
fn review_checklist_as_json_and_csv() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path();
    let lib = build_library(p, "small", Some(50), false);
    let key = create_key(&lib, "read");
    let server = Server::start_with(&[format!("small={}", s(&lib))], &typer_args(), p);
    let franchise = cuad_contract(
        "RgcResourcesInc_20151216_8-K_EX-10.3_9372751_EX-10.3_Franchise Agreement.txt",
    );
    let bytes = std::fs::read(&franchise).expect("CUAD contract");

    let reply = upload(&server.url("/v1/review"), &key, "franchise.txt", &bytes);
    assert_eq!(reply.status, 200, "{}", reply.body);
    let review = reply.json();
    let text: Vec<char> = review["text"].as_str().expect("text").chars().collect();
    let rows = review["checklist"].as_array().expect("checklist");
    assert_eq!(
        rows.iter()
            .map(|r| r["category"].as_str().expect("category"))
            .collect::<Vec<_>>(),
        precedent_cuad::CATEGORIES.to_vec()
    );
    let present: Vec<&serde_json::Value> = rows.iter().filter(|r| r["present"] == true).collect();
    let absent: Vec<&serde_json::Value> = rows.iter().filter(|r| r["present"] == false).collect();
    assert!(!present.is_empty() && !absent.is_empty(), "{rows:?}");
    for row in &present {
        assert_eq!(row["band"], "likely", "{row}");
        let spans = row["spans"].as_array().expect("spans");
        assert!((1..=3).contains(&spans.len()), "{row}");
        for span in spans {
            let (a, b) = (
                span["start"].as_u64().expect("start") as usize,
                span["end"].as_u64().expect("end") as usize,
            );
            assert_eq!(
                text[a..b].iter().collect::<String>(),
                span["text"].as_str().expect("text")
            );
        }
    }
    for row in &absent {
        assert_ne!(row["band"], "likely", "{row}");
        assert_eq!(row["spans"], serde_json::json!([]), "{row}");
    }
    // The franchise's term clause makes Expiration Date present.
    assert!(
        present.iter().any(|r| r["category"] == "Expiration Date"),
        "{present:?}"
    );

    let reply = upload(
        &server.url("/v1/review?format=csv"),
        &key,
        "franchise.txt",
        &bytes,
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert!(
        reply.content_type.starts_with("text/csv"),
        "{}",
        reply.content_type
    );
    assert_eq!(
        reply.header("content-disposition"),
        Some("attachment; filename=\"franchise-checklist.csv\"")
    );
    let mut table = csv::Reader::from_reader(reply.body.as_bytes());
    assert_eq!(
        table.headers().expect("header").get(1),
        Some("status"),
        "{}",
        reply.body
    );
    let records: Vec<csv::StringRecord> = table.records().map(|r| r.expect("a CSV row")).collect();
    assert_eq!(records.len(), 41);
    for (record, row) in records.iter().zip(rows) {
        assert_eq!(&record[0], row["category"].as_str().expect("category"));
        let status = if row["present"] == true {
            "present"
        } else {
            "absent"
        };
        assert_eq!(&record[1], status, "{record:?}");
    }

    // Terms of service have no CUAD checklist.
    upload(
        &server.url("/v1/review?kind=tos&format=csv"),
        &key,
        "terms.txt",
        b"These Terms of Service govern your use of our website.",
    )
    .assert_problem(400);
}
