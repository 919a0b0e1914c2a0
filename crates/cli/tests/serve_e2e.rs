//! End to end: the web page served by `precedent serve`, driven in headless Chromium through
//! chromedriver (Debian's `chromium` and `chromium-driver`, installed by scripts/setup.sh).
//! Enters a key, searches with the keyboard, filters, opens a clause's context, compares two
//! clauses and downloads their redline, rates one, reviews an uploaded contract and a terms of
//! service, classifies a pasted clause, and saves screenshots of the results, review and
//! classify pages to `target/tmp/e2e/results.png`, `review.png`, `review-tos.png` and
//! `classify.png`.

mod support;

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::{key::Key, Client, ClientBuilder, Locator};
use serde_json::json;
use support::*;

const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

struct Driver(Child);

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

fn start_chromedriver() -> (Driver, String) {
    for tool in [CHROMIUM, CHROMEDRIVER] {
        assert!(
            Path::new(tool).exists(),
            "{tool} is missing: run scripts/setup.sh (installs Debian's chromium and chromium-driver)"
        );
    }
    let port = free_port();
    let child = Command::new(CHROMEDRIVER)
        .args([
            format!("--port={port}"),
            "--allowed-ips=127.0.0.1".to_owned(),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start chromedriver");
    let driver = Driver(child);
    let url = format!("http://127.0.0.1:{port}");
    let started = Instant::now();
    loop {
        if ureq::get(&format!("{url}/status")).call().is_ok() {
            return (driver, url);
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "chromedriver did not start"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

async fn connect(webdriver: &str, profile: &Path) -> Client {
    let mut caps = serde_json::Map::new();
    caps.insert(
        "goog:chromeOptions".into(),
        json!({
            "binary": CHROMIUM,
            "args": [
                "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--no-first-run", "--window-size=1440,1000",
                format!("--user-data-dir={}", profile.display()),
            ]
        }),
    );
    ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
        .capabilities(caps)
        .connect(webdriver)
        .await
        .expect("a Chromium session through chromedriver")
}

/// Polls `check` (a JavaScript expression returning a truthy value when done) until it holds.
async fn wait_for(client: &Client, what: &str, check: &str) -> serde_json::Value {
    let started = Instant::now();
    loop {
        let value = client
            .execute(&format!("return ({check});"), vec![])
            .await
            .expect("execute script");
        let done = match &value {
            serde_json::Value::Null | serde_json::Value::Bool(false) => false,
            serde_json::Value::Number(n) => n.as_f64() != Some(0.0),
            serde_json::Value::String(s) => !s.is_empty(),
            _ => true,
        };
        if done {
            return value;
        }
        if started.elapsed() > Duration::from_secs(60) {
            let status = client
                .execute(
                    "return document.getElementById('status').textContent",
                    vec![],
                )
                .await
                .unwrap_or_default();
            panic!("timed out waiting for {what} ({check}); status line: {status}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn text_of(client: &Client, css: &str) -> String {
    client
        .find(Locator::Css(css))
        .await
        .unwrap_or_else(|e| panic!("{css}: {e}"))
        .text()
        .await
        .expect("text")
}

/// Opens the page and enters `key` at its prompt, as a lawyer does, until the app shows.
async fn sign_in(client: &Client, server: &Server, key: &str) {
    client.goto(&server.url("/")).await.expect("open page");
    wait_for(
        client,
        "key prompt",
        "!document.getElementById('key-panel').hidden",
    )
    .await;
    let input = client
        .find(Locator::Id("key-input"))
        .await
        .expect("key input");
    input.send_keys(key).await.expect("type key");
    input
        .send_keys(&Key::Enter.to_string())
        .await
        .expect("enter");
    wait_for(client, "the app", "!document.getElementById('app').hidden").await;
}

/// Chooses `file` in the review tab's file input and presses Review.
async fn review_file(client: &Client, file: &Path) {
    let path = file.canonicalize().expect("fixture");
    client
        .find(Locator::Id("review-file"))
        .await
        .expect("file input")
        .send_keys(s(&path))
        .await
        .expect("choose file");
    client
        .find(Locator::Id("review-button"))
        .await
        .expect("review button")
        .click()
        .await
        .expect("click review");
}

fn artifact_dir() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("e2e");
    std::fs::create_dir_all(&dir).expect("artifact dir");
    dir
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn page_searches_filters_opens_compares_and_rates_in_chromium() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path().to_owned();
    let (lib, key, admin, server) = tokio::task::spawn_blocking(move || {
        let lib = build_library(&p, "acord", Some(400), true);
        let key = create_key(&lib, "rate");
        let admin = create_key(&lib, "admin");
        let mut args = typer_args();
        args.extend(unfair_args());
        let classifier = small_clause_classifier(&p);
        args.extend([
            "--model-dir".to_owned(),
            s(&shipped_ranker()).to_owned(),
            "--clause-classifier".to_owned(),
            s(&classifier).to_owned(),
        ]);
        let server = Server::start_with(&[format!("acord={}", s(&lib))], &args, &p);
        (lib, key, admin, server)
    })
    .await
    .expect("setup");
    let (_driver, webdriver) = start_chromedriver();
    let profile = dir.path().join("chromium-profile");
    let client = connect(&webdriver, &profile).await;

    // The page asks for a key first; a wrong key is refused with the server's reason.
    client.goto(&server.url("/")).await.expect("open page");
    wait_for(
        &client,
        "key prompt",
        "!document.getElementById('key-panel').hidden",
    )
    .await;
    let input = client
        .find(Locator::Id("key-input"))
        .await
        .expect("key input");
    input.send_keys("prec_wrong").await.expect("type");
    input
        .send_keys(&Key::Enter.to_string())
        .await
        .expect("enter");
    let error = wait_for(
        &client,
        "key error",
        "document.getElementById('key-error').textContent",
    )
    .await;
    assert!(
        error
            .as_str()
            .unwrap_or("")
            .contains("unknown or revoked key"),
        "{error}"
    );
    let input = client
        .find(Locator::Id("key-input"))
        .await
        .expect("key input");
    input.send_keys(&key).await.expect("type key");
    input
        .send_keys(&Key::Enter.to_string())
        .await
        .expect("enter");
    wait_for(&client, "the app", "!document.getElementById('app').hidden").await;
    let library = text_of(&client, "#library-name").await;
    assert!(
        library.contains("acord") && library.contains("400 clauses"),
        "{library}"
    );
    let pipeline = client
        .execute("return document.getElementById('pipeline').value", vec![])
        .await
        .expect("pipeline");
    // The shipped learned ranker is offered, but a tenth of ACORD is not the library it was
    // trained on, so hybrid with the clause-type rule (no ratings needed) is the default.
    assert_eq!(
        pipeline, "hybrid+types",
        "hybrid+types is the default with vectors"
    );
    let offered = client
        .execute(
            "return Array.from(document.querySelectorAll('#pipeline option')).map((o) => o.value)",
            vec![],
        )
        .await
        .expect("pipelines");
    for name in [
        "bm25",
        "dense",
        "hybrid",
        "hybrid-norm",
        "hybrid+types",
        "learned",
    ] {
        assert!(
            offered
                .as_array()
                .is_some_and(|o| o.iter().any(|v| v == name)),
            "{name} not offered: {offered}"
        );
    }
    let learned = call(
        "POST",
        &server.url("/v1/search"),
        Some(&key),
        Some(&json!({"query": "New York Governing Law", "k": 5, "pipeline": "learned"})),
    );
    assert_eq!(learned.status, 200, "{}", learned.body);
    assert_eq!(learned.json()["pipeline"], "hybrid+learned");
    // A misspelt word is corrected against the library's words before ranking, and the answer
    // says what was searched for; `similar` ranks a clause's text as it is.
    let misspelt = call(
        "POST",
        &server.url("/v1/search"),
        Some(&key),
        Some(&json!({"query": "New York law govrened", "k": 5})),
    );
    assert_eq!(misspelt.status, 200, "{}", misspelt.body);
    assert_eq!(
        misspelt.json()["corrected_query"],
        "New York law governed",
        "{}",
        misspelt.body
    );
    let similar = call(
        "POST",
        &server.url("/v1/similar"),
        Some(&key),
        Some(&json!({"text": "This Agreement is govrened by the laws of New York.", "k": 3})),
    );
    assert_eq!(similar.status, 200, "{}", similar.body);
    assert!(
        similar.json()["corrected_query"].is_null(),
        "{}",
        similar.body
    );

    // Search with the keyboard only: the query box has focus, Enter submits.
    let focused = client
        .execute("return document.activeElement.id", vec![])
        .await
        .expect("focus");
    assert_eq!(focused, "query");
    let query = client.find(Locator::Id("query")).await.expect("query box");
    query
        .send_keys("New York Governing Law")
        .await
        .expect("type query");
    query
        .send_keys(&Key::Enter.to_string())
        .await
        .expect("enter");
    let hits = wait_for(
        &client,
        "results",
        "document.querySelectorAll('#results .hit').length",
    )
    .await;
    assert_eq!(hits, 20, "20 results by default");
    let first_cite = text_of(&client, "#results .hit .cite").await;
    assert!(first_cite.starts_with("Clause "), "{first_cite}");
    let marks = client
        .execute(
            "return document.querySelectorAll('#results .hit mark').length",
            vec![],
        )
        .await
        .expect("marks");
    assert!(
        marks.as_u64().unwrap_or(0) >= 20,
        "query terms are highlighted: {marks}"
    );
    let status = text_of(&client, "#status").await;
    assert!(status.contains("hybrid"), "{status}");
    // Why it matched: plain reasons under the citation, and the answering passage marked and
    // scrolled into view inside the clause's box.
    let why = text_of(&client, "#results .hit .why").await;
    assert!(
        why.starts_with("Why: ") && why.contains("mentions "),
        "{why}"
    );
    let passage_visible = client
        .execute(
            "const hit = document.querySelector('#results .hit'); const box = hit.querySelector('.clause-text'); const p = hit.querySelector('.clause-text .passage'); if (!p) return false; const b = box.getBoundingClientRect(), r = p.getBoundingClientRect(); return r.top < b.bottom && r.bottom > b.top;",
            vec![],
        )
        .await
        .expect("passage");
    assert_eq!(
        passage_visible, true,
        "the passage is shown in the clause box"
    );
    let screenshot = client.screenshot().await.expect("screenshot");
    let shot = artifact_dir().join("results.png");
    std::fs::write(&shot, &screenshot).expect("save screenshot");
    assert!(screenshot.starts_with(b"\x89PNG") && screenshot.len() > 20_000);

    // Filter: ACORD clauses carry no party metadata, so a party filter empties the list with
    // a message saying so, and clearing the filters brings the results back.
    client
        .find(Locator::Id("f-party"))
        .await
        .expect("party filter")
        .send_keys("Acme")
        .await
        .expect("type party");
    client
        .find(Locator::Id("apply-filters"))
        .await
        .expect("apply")
        .click()
        .await
        .expect("click apply");
    let status = wait_for(
        &client,
        "filtered status",
        "document.getElementById('status').textContent.includes('No clause matches') && document.getElementById('status').textContent",
    )
    .await;
    assert!(
        status.as_str().unwrap_or("").contains("party “Acme”"),
        "{status}"
    );
    client
        .find(Locator::Id("clear-filters"))
        .await
        .expect("clear")
        .click()
        .await
        .expect("click clear");
    wait_for(
        &client,
        "results again",
        "document.querySelectorAll('#results .hit').length === 20",
    )
    .await;

    // Open a clause with the keyboard: focus its Context button, press Enter.
    client
        .execute(
            "document.querySelector('#results .hit .context-button').focus()",
            vec![],
        )
        .await
        .expect("focus context");
    client
        .find(Locator::Css("#results .hit .context-button"))
        .await
        .expect("context button")
        .send_keys(&Key::Enter.to_string())
        .await
        .expect("enter");
    let context = wait_for(
        &client,
        "context",
        "document.querySelector('#results .hit .context').dataset.loaded && document.querySelector('#results .hit .context').textContent",
    )
    .await;
    assert!(
        context
            .as_str()
            .unwrap_or("")
            .contains("does not keep the source contract"),
        "{context}"
    );
    let expanded = client
        .execute("return document.querySelector('#results .hit .clause-text').classList.contains('clamped')", vec![])
        .await
        .expect("clamp");
    assert_eq!(expanded, false, "the full clause is shown");

    // Compare the first two results: the page switches to the comparison with marked words.
    for n in [1, 2] {
        client
            .find(Locator::Css(&format!(
                "#results .hit:nth-child({n}) .compare-add"
            )))
            .await
            .expect("compare button")
            .click()
            .await
            .expect("click compare");
    }
    wait_for(
        &client,
        "compare tab",
        "!document.getElementById('panel-compare').hidden",
    )
    .await;
    let diff = wait_for(
        &client,
        "differences",
        "document.querySelectorAll('#compare-result del, #compare-result ins').length",
    )
    .await;
    assert!(diff.as_u64().unwrap_or(0) > 0);
    let similarity = text_of(&client, "#compare-similarity").await;
    assert!(similarity.contains("% of words in common"), "{similarity}");
    // Compare a clause with one's own text: edit the right side.
    client
        .execute("document.getElementById('right-text').value = 'The laws of Delaware govern this Agreement.'", vec![])
        .await
        .expect("edit");
    client
        .find(Locator::Id("compare-button"))
        .await
        .expect("compare")
        .click()
        .await
        .expect("click");
    wait_for(
        &client,
        "diff with own text",
        "document.querySelector('#compare-result div:nth-child(2)') && document.querySelector('#compare-result div:nth-child(2)').textContent.includes('Delaware')",
    )
    .await;
    // The redline export: the page downloads the comparison as a DOCX (a zip, "PK") whose
    // tracked changes `cli_redline.rs` checks in LibreOffice.
    client
        .execute(
            "window.__downloads = []; const make = URL.createObjectURL; URL.createObjectURL = (b) => { b.arrayBuffer().then((a) => window.__downloads.push(String.fromCharCode(...new Uint8Array(a).slice(0, 2)) + ' ' + b.type + ' ' + b.size)); return make(b); };",
            vec![],
        )
        .await
        .expect("watch downloads");
    client
        .find(Locator::Id("compare-docx"))
        .await
        .expect("redline button")
        .click()
        .await
        .expect("click redline");
    let download = wait_for(&client, "redline download", "window.__downloads[0]").await;
    let download = download.as_str().unwrap_or_default().to_owned();
    assert!(
        download.starts_with(
            "PK application/vnd.openxmlformats-officedocument.wordprocessingml.document"
        ),
        "{download}"
    );
    let status = text_of(&client, "#compare-similarity").await;
    assert!(status.contains("Redline downloaded"), "{status}");
    client
        .find(Locator::Id("tab-search"))
        .await
        .expect("search tab")
        .click()
        .await
        .expect("click");

    // Rate the first result 4 stars with the mouse and the second 2 stars with the keyboard.
    let rated_id = client
        .execute(
            "return document.querySelector('#results .hit').dataset.id",
            vec![],
        )
        .await
        .expect("id");
    client
        .find(Locator::Css("#results .hit .stars button[data-stars='4']"))
        .await
        .expect("star")
        .click()
        .await
        .expect("click star");
    wait_for(
        &client,
        "rating stored",
        "document.querySelector('#results .hit .rated').textContent === 'rated 4★'",
    )
    .await;
    let second_id = client
        .execute(
            "return document.querySelector('#results .hit:nth-child(2)').dataset.id",
            vec![],
        )
        .await
        .expect("id");
    client
        .execute(
            "document.querySelector('#results .hit:nth-child(2) .copy-button').focus()",
            vec![],
        )
        .await
        .expect("focus");
    client
        .find(Locator::Css("#results .hit:nth-child(2) .copy-button"))
        .await
        .expect("copy button")
        .send_keys("2")
        .await
        .expect("press 2");
    wait_for(
        &client,
        "keyboard rating",
        "document.querySelector('#results .hit:nth-child(2) .rated').textContent === 'rated 2★'",
    )
    .await;

    // Review a contract: upload the DOCX of a real CUAD franchise; the clause types found are
    // highlighted in its text, and a finding in the list jumps to its highlight.
    client
        .find(Locator::Id("tab-review"))
        .await
        .expect("review tab")
        .click()
        .await
        .expect("click");
    review_file(&client, &contract_fixture("franchise.docx")).await;
    let highlighted = wait_for(
        &client,
        "highlighted findings",
        "document.querySelectorAll('#review-text mark.finding').length",
    )
    .await;
    assert!(highlighted.as_u64().unwrap_or(0) >= 3, "{highlighted}");
    let tags = client
        .execute(
            "return Array.from(document.querySelectorAll('#review-text mark .tag')).map((t) => t.textContent)",
            vec![],
        )
        .await
        .expect("tags");
    assert!(
        tags.as_array()
            .is_some_and(|t| t.iter().any(|t| t == "Expiration Date")),
        "{tags}"
    );
    let term = client
        .execute(
            "const b = Array.from(document.querySelectorAll('#review-findings button')).find((b) => b.textContent.startsWith('Expiration Date')); b.click(); return document.activeElement.tagName + ' ' + document.activeElement.textContent",
            vec![],
        )
        .await
        .expect("jump to finding");
    let term = term.as_str().unwrap_or("");
    assert!(
        term.starts_with("MARK") && term.contains("twenty (20) years"),
        "{term}"
    );
    // The checklist: all 41 CUAD types, those found first, those not found said in words; a
    // found type scrolls to its clause.
    let checklist = client
        .execute(
            "return [document.querySelectorAll('#review-checklist li.check').length, document.querySelectorAll('#review-checklist li.check.absent').length, Array.from(document.querySelectorAll('#review-checklist li.check.absent')).map((li) => li.textContent.trim())]",
            vec![],
        )
        .await
        .expect("checklist");
    assert_eq!(checklist[0], 41, "{checklist}");
    assert!(checklist[1].as_u64().unwrap_or(0) >= 1, "{checklist}");
    assert!(
        checklist[2].as_array().is_some_and(|a| a.iter().all(|t| t
            .as_str()
            .is_some_and(|t| t.starts_with("\u{2610} No ") && t.ends_with(" clause found")))),
        "{checklist}"
    );
    let jumped = client
        .execute(
            "const b = Array.from(document.querySelectorAll('#review-checklist .check-link')).find((b) => b.textContent.includes('Expiration Date')); b.click(); return document.activeElement.tagName + ' ' + document.activeElement.textContent",
            vec![],
        )
        .await
        .expect("jump from the checklist");
    let jumped = jumped.as_str().unwrap_or("");
    assert!(
        jumped.starts_with("MARK") && jumped.contains("Expiration Date"),
        "{jumped}"
    );
    // The report downloads as a Word document.
    client
        .execute(
            "window.__reports = []; const make = URL.createObjectURL; URL.createObjectURL = (b) => { b.arrayBuffer().then((a) => window.__reports.push(String.fromCharCode(...new Uint8Array(a).slice(0, 2)) + ' ' + b.size)); return make(b); };",
            vec![],
        )
        .await
        .expect("watch downloads");
    client
        .find(Locator::Id("review-docx"))
        .await
        .expect("report button")
        .click()
        .await
        .expect("click report");
    let report = wait_for(&client, "report download", "window.__reports[0]").await;
    assert!(
        report.as_str().is_some_and(|r| r.starts_with("PK ")),
        "{report}"
    );
    let screenshot = client.screenshot().await.expect("screenshot");
    std::fs::write(artifact_dir().join("review.png"), &screenshot).expect("save screenshot");

    // Terms of service: detected, the eight UNFAIR-ToS types as a checklist, and each finding
    // says why, in the sentence's own words.
    review_file(&client, &terms_of_service()).await;
    let checked = wait_for(
        &client,
        "the terms-of-service checklist",
        "document.getElementById('review-status').textContent.startsWith('Terms of service') && document.querySelectorAll('#review-checklist li.check').length",
    )
    .await;
    assert_eq!(checked, 8, "{checked}");
    let why = client
        .execute(
            "return Array.from(document.querySelectorAll('#review-findings button')).filter((b) => b.textContent.startsWith('Arbitration')).map((b) => b.querySelector('.evidence')?.textContent ?? '')",
            vec![],
        )
        .await
        .expect("arbitration findings");
    assert!(
        why.as_array().is_some_and(|w| w.iter().any(|t| t
            .as_str()
            .is_some_and(|t| t.starts_with(" why: ") && t.contains("arbitration")))),
        "{why}"
    );
    let screenshot = client.screenshot().await.expect("screenshot");
    std::fs::write(artifact_dir().join("review-tos.png"), &screenshot).expect("save screenshot");

    // One clause on its own: its CUAD types, most likely first; a type searches for
    // precedents like the clause, filtered to that type.
    client
        .find(Locator::Id("classify-text"))
        .await
        .expect("clause box")
        .send_keys("Neither party may assign this Agreement or any of its rights or obligations hereunder without the prior written consent of the other party.")
        .await
        .expect("type the clause");
    client
        .find(Locator::Id("classify-button"))
        .await
        .expect("classify button")
        .click()
        .await
        .expect("click classify");
    let first = wait_for(
        &client,
        "clause types",
        "document.querySelector('#classify-types button strong')?.textContent",
    )
    .await;
    assert_eq!(first, "Anti-Assignment");
    // Above an even chance it is listed as likely, apart from the possible types.
    let likely = client
        .execute(
            "return Array.from(document.querySelectorAll('#classify-types button.likely strong')).map((t) => t.textContent)",
            vec![],
        )
        .await
        .expect("likely types");
    assert_eq!(likely, serde_json::json!(["Anti-Assignment"]));
    let screenshot = client.screenshot().await.expect("screenshot");
    std::fs::write(artifact_dir().join("classify.png"), &screenshot).expect("save screenshot");
    client
        .execute(
            "document.querySelector('#classify-types button').click()",
            vec![],
        )
        .await
        .expect("search the type");
    let filtered = wait_for(
        &client,
        "search filtered by the type",
        "!document.getElementById('panel-search').hidden && document.getElementById('f-clause-type').value === 'Anti-Assignment' && document.getElementById('status').textContent.includes('Anti-Assignment') && document.getElementById('query').value.startsWith('Neither party may assign')",
    )
    .await;
    assert_eq!(filtered, true);
    client.close().await.expect("close browser");

    let export = call("GET", &server.url("/v1/ratings"), Some(&admin), None);
    assert_eq!(export.status, 200, "{}", export.body);
    let path = lib.join("exported.tsv");
    std::fs::write(&path, &export.body).expect("write");
    let qrels = precedent_formats::read_qrels(&path).expect("qrels");
    let judged = qrels
        .judged("New York Governing Law")
        .expect("the rated query");
    assert_eq!(judged.get(rated_id.as_str().unwrap_or("")), Some(&3));
    assert_eq!(judged.get(second_id.as_str().unwrap_or("")), Some(&1));
}

/// Stars rate a clause for the query whose results the lawyer is reading: a list of clauses
/// similar to another has no query, so it offers no stars (click or key), and a rating in a
/// search's list goes with that search's query even after another query is typed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stars_rate_only_for_the_query_that_listed_the_clause() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path().to_owned();
    let (key, admin, server) = tokio::task::spawn_blocking(move || {
        let lib = build_library(&p, "acord", Some(200), false);
        let key = create_key(&lib, "rate");
        let admin = create_key(&lib, "admin");
        let server = Server::start(&[format!("acord={}", s(&lib))], &p);
        (key, admin, server)
    })
    .await
    .expect("setup");
    let (_driver, webdriver) = start_chromedriver();
    let client = connect(&webdriver, &dir.path().join("chromium-profile")).await;
    sign_in(&client, &server, &key).await;

    let query = client.find(Locator::Id("query")).await.expect("query box");
    query.send_keys("governing law").await.expect("type query");
    query
        .send_keys(&Key::Enter.to_string())
        .await
        .expect("enter");
    wait_for(
        &client,
        "results",
        "document.querySelectorAll('#results .hit .stars').length",
    )
    .await;
    // Another query typed but not searched: the list on screen is still "governing law"'s.
    client
        .execute(
            "document.getElementById('query').value = 'termination for convenience'",
            vec![],
        )
        .await
        .expect("type another query");
    let rated_id = client
        .execute(
            "return document.querySelector('#results .hit').dataset.id",
            vec![],
        )
        .await
        .expect("id");
    client
        .find(Locator::Css("#results .hit .stars button[data-stars='4']"))
        .await
        .expect("star")
        .click()
        .await
        .expect("click star");
    wait_for(
        &client,
        "rating stored",
        "document.querySelector('#results .hit .rated').textContent === 'rated 4★'",
    )
    .await;

    // Similar clauses: no stars, and the 1-5 keys rate nothing.
    client
        .find(Locator::Css("#results .hit .similar-button"))
        .await
        .expect("similar button")
        .click()
        .await
        .expect("click similar");
    wait_for(
        &client,
        "similar list",
        "document.getElementById('status').textContent.includes('similar to') && document.querySelectorAll('#results .hit').length",
    )
    .await;
    let stars = client
        .execute(
            "return document.querySelectorAll('#results .hit .stars button').length",
            vec![],
        )
        .await
        .expect("stars");
    assert_eq!(stars, 0, "a list of similar clauses offers no stars");
    let note = text_of(&client, "#results .hit .hit-actions").await;
    assert!(note.contains("search to rate"), "{note}");
    client
        .execute(
            "document.querySelector('#results .hit .copy-button').focus()",
            vec![],
        )
        .await
        .expect("focus");
    client
        .find(Locator::Css("#results .hit .copy-button"))
        .await
        .expect("copy button")
        .send_keys("5")
        .await
        .expect("press 5");
    tokio::time::sleep(Duration::from_millis(500)).await;
    client.close().await.expect("close browser");

    let export = call(
        "GET",
        &server.url("/v1/ratings?format=jsonl"),
        Some(&admin),
        None,
    );
    assert_eq!(export.status, 200, "{}", export.body);
    let ratings: Vec<serde_json::Value> = export
        .body
        .lines()
        .map(|l| serde_json::from_str(l).expect("a rating"))
        .collect();
    assert_eq!(ratings.len(), 1, "{}", export.body);
    assert_eq!(ratings[0]["query"], "governing law", "{}", export.body);
    assert_eq!(ratings[0]["clause_id"], rated_id, "{}", export.body);
    assert_eq!(ratings[0]["stars"], 4, "{}", export.body);
}

/// A library of one clause of an ingested contract, with the metadata `ingest` writes: the
/// contract file holds 3,000 characters of recitals before the clause.
fn contract_with_long_preamble(dir: &Path) -> PathBuf {
    let mut contract = String::from("DISTRIBUTION AGREEMENT\n");
    for n in 1..=120 {
        contract.push_str(&format!("Recital {n}: background.\n"));
    }
    let text = "12. Limitation of Liability. In no event shall either party be liable for consequential damages.";
    let start = contract.chars().count();
    contract.push_str(text);
    let end = contract.chars().count();
    contract.push_str("\n13. Notices. Notices shall be in writing.\n");
    let source = dir.join("contract.txt");
    std::fs::write(&source, &contract).expect("write contract");
    let doc = json!({
        "_id": "contract#1",
        "title": "12 Limitation of Liability",
        "text": text,
        "metadata": {
            "contract": "contract", "source_path": s(&source), "title": "Distribution Agreement",
            "document_type": "Distribution Agreement", "parties": ["Acme Inc.", "Beta LLC"],
            "section": "12", "heading": "Limitation of Liability", "path": ["12"],
            "start": start, "end": end,
        },
    });
    library_of_docs(dir, "contracts", &[doc])
}

/// Context opens on the clause itself, highlighted, with the text before it above (scrolled
/// out of view) and the text after it below.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn context_opens_scrolled_to_the_clause() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path().to_owned();
    let (key, server) = tokio::task::spawn_blocking(move || {
        let lib = contract_with_long_preamble(&p);
        let key = create_key(&lib, "read");
        let server = Server::start(&[format!("deals={}", s(&lib))], &p);
        (key, server)
    })
    .await
    .expect("setup");
    let (_driver, webdriver) = start_chromedriver();
    let client = connect(&webdriver, &dir.path().join("chromium-profile")).await;
    sign_in(&client, &server, &key).await;
    let query = client.find(Locator::Id("query")).await.expect("query box");
    query
        .send_keys("consequential damages")
        .await
        .expect("type query");
    query
        .send_keys(&Key::Enter.to_string())
        .await
        .expect("enter");
    wait_for(
        &client,
        "results",
        "document.querySelectorAll('#results .hit').length",
    )
    .await;
    client
        .find(Locator::Css("#results .hit .context-button"))
        .await
        .expect("context button")
        .click()
        .await
        .expect("click context");
    wait_for(
        &client,
        "context",
        "document.querySelector('#results .hit .context .here')",
    )
    .await;
    let placed = wait_for(
        &client,
        "the clause in view in the context",
        "(() => { const box = document.querySelector('#results .hit .context').getBoundingClientRect(); const here = document.querySelector('#results .hit .context .here').getBoundingClientRect(); return document.querySelector('#results .hit .context').scrollTop > 0 && here.top >= box.top && here.bottom <= box.bottom && [here.top - box.top, box.bottom - here.bottom]; })()",
    )
    .await;
    assert!(placed.is_array(), "{placed}");
    let before = client
        .execute(
            "return document.querySelector('#results .hit .context').textContent.includes('Recital 100')",
            vec![],
        )
        .await
        .expect("before");
    assert_eq!(
        before, true,
        "the text before the clause is still there, above it"
    );
    client.close().await.expect("close browser");
}

/// On a phone-width window (420 px) the search box keeps room to type: the selects and the
/// button wrap below it instead of squeezing it to nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_search_box_keeps_its_width_on_a_narrow_window() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path().to_owned();
    let (key, server) = tokio::task::spawn_blocking(move || {
        let lib = contract_with_long_preamble(&p);
        let key = create_key(&lib, "read");
        let server = Server::start(&[format!("deals={}", s(&lib))], &p);
        (key, server)
    })
    .await
    .expect("setup");
    let (_driver, webdriver) = start_chromedriver();
    let client = connect(&webdriver, &dir.path().join("chromium-profile")).await;
    client.set_window_size(420, 900).await.expect("window size");
    sign_in(&client, &server, &key).await;
    let widths = client
        .execute(
            "const q = document.getElementById('query').getBoundingClientRect().width; return [q, document.documentElement.clientWidth];",
            vec![],
        )
        .await
        .expect("widths");
    let query = widths[0].as_f64().unwrap_or(0.0);
    let page = widths[1].as_f64().unwrap_or(0.0);
    assert!(page > 0.0 && page <= 440.0, "window width {page}");
    assert!(
        query >= 0.6 * page,
        "the search box is {query} px wide in a {page} px page"
    );
    client.close().await.expect("close browser");
}

/// What the market says: the Market tab lists a clause type's formulations, most common first,
/// and places a pasted draft among them; "Compare with my draft" opens the comparison.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_market_tab_shows_formulations_and_where_a_draft_stands() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path().to_owned();
    let (key, server) = tokio::task::spawn_blocking(move || {
        let lib = market_library(&p);
        let key = create_key(&lib, "read");
        let server = Server::start(&[format!("deals={}", s(&lib))], &p);
        (key, server)
    })
    .await
    .expect("setup");
    let (_driver, webdriver) = start_chromedriver();
    let client = connect(&webdriver, &dir.path().join("chromium-profile")).await;
    sign_in(&client, &server, &key).await;
    client
        .find(Locator::Id("tab-market"))
        .await
        .expect("market tab")
        .click()
        .await
        .expect("click");
    client
        .find(Locator::Id("market-type"))
        .await
        .expect("type box")
        .send_keys("Cap on Liability")
        .await
        .expect("type");
    client
        .find(Locator::Id("market-draft"))
        .await
        .expect("draft box")
        .send_keys("Supplier's total liability shall not exceed the fees paid in the twelve months before the claim.")
        .await
        .expect("draft");
    client
        .find(Locator::Id("market-button"))
        .await
        .expect("button")
        .click()
        .await
        .expect("click");
    let shown = wait_for(
        &client,
        "formulations",
        "document.querySelectorAll('#market-formulations .formulation').length",
    )
    .await;
    assert_eq!(shown, 2, "two formulations");
    let status = text_of(&client, "#market-status").await;
    assert!(
        status.contains("12 clauses in 12 contracts, 2 formulations"),
        "{status}"
    );
    let standing = text_of(&client, "#market-draft-standing").await;
    assert!(
        standing.contains("closest to formulation") && standing.contains("confidentiality"),
        "{standing}"
    );
    let closest = text_of(&client, "#market-formulations .formulation.closest").await;
    assert!(closest.contains("fees paid"), "{closest}");
    client
        .find(Locator::Css(
            "#market-formulations .formulation.closest button",
        ))
        .await
        .expect("compare button")
        .click()
        .await
        .expect("click");
    wait_for(
        &client,
        "comparison with the draft",
        "document.querySelectorAll('#compare-result ins, #compare-result del').length",
    )
    .await;
    // From the comparison, the draft itself searches for precedents like it.
    client
        .find(Locator::Id("compare-find"))
        .await
        .expect("find button")
        .click()
        .await
        .expect("click");
    wait_for(
        &client,
        "precedents like the draft",
        "!document.getElementById('panel-search').hidden && document.querySelectorAll('#results .hit').length",
    )
    .await;
    let query = client
        .execute("return document.getElementById('query').value", vec![])
        .await
        .expect("query");
    assert!(
        query
            .as_str()
            .is_some_and(|q| q.starts_with("Supplier's total liability")),
        "{query}"
    );
    let first = text_of(&client, "#results .hit .clause-text").await;
    assert!(first.contains("liability"), "{first}");
    client.close().await.expect("close browser");
}

/// Citations and Copy in the page: a clause of section 16.B that refers to 14.A is cited
/// "§ 16.B Insurance"; the referenced section shows apart, as context; Copy takes the clause's
/// own text and its citation, not the referenced section.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_cites_the_parent_section_and_copies_the_clauses_own_text() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path().to_owned();
    let own = "16.B Insurance. Distributor shall maintain insurance, except as set forth in Section 14.A.";
    let referenced = "14.A Exclusions. Nothing limits liability for fraud or gross negligence.";
    let (key, server) = tokio::task::spawn_blocking(move || {
        let lib = library_of_docs(
            &p,
            "refs-lib",
            &[json!({
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
            })],
        );
        let key = create_key(&lib, "read");
        let server = Server::start(&[format!("deals={}", s(&lib))], &p);
        (key, server)
    })
    .await
    .expect("setup");
    let (_driver, webdriver) = start_chromedriver();
    let client = connect(&webdriver, &dir.path().join("chromium-profile")).await;
    sign_in(&client, &server, &key).await;
    let query = client.find(Locator::Id("query")).await.expect("query box");
    query.send_keys("insurance").await.expect("type");
    query
        .send_keys(&Key::Enter.to_string())
        .await
        .expect("enter");
    wait_for(
        &client,
        "results",
        "document.querySelectorAll('#results .hit').length",
    )
    .await;
    let cite = text_of(&client, "#results .hit .cite").await;
    assert!(cite.contains("§ 16.B Insurance"), "{cite}");
    let shown = text_of(&client, "#results .hit .clause-text").await;
    assert_eq!(shown, own, "the clause's own text");
    let context = text_of(&client, "#results .hit .references").await;
    assert!(
        context.contains("§ 14.A") && context.contains("gross negligence"),
        "{context}"
    );
    client
        .execute(
            "window.__copied = null; navigator.clipboard.writeText = async (t) => { window.__copied = t; };",
            vec![],
        )
        .await
        .expect("watch the clipboard");
    client
        .find(Locator::Css("#results .hit .copy-button"))
        .await
        .expect("copy button")
        .click()
        .await
        .expect("click copy");
    let copied = wait_for(&client, "copied text", "window.__copied").await;
    let copied = copied.as_str().unwrap_or_default();
    assert!(copied.starts_with(own), "{copied}");
    assert!(copied.contains("§ 16.B Insurance"), "{copied}");
    assert!(!copied.contains("gross negligence"), "{copied}");
    client.close().await.expect("close browser");
}
