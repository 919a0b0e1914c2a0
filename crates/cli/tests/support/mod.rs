//! Shared by the server tests: libraries built from the real ACORD data, a `precedent serve`
//! child process on a loopback port, keys, and a small HTTP client.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::json;

pub fn acord() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/data/acord"
    ))
}

/// The `precedent` binary, embedding through the clone's [`embedding_cache`]: every test's
/// command starts here.
pub fn precedent_command() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_precedent"));
    cmd.env("PRECEDENT_EMBEDDING_CACHE", embedding_cache());
    cmd
}

pub fn precedent(args: &[&str], cwd: &Path) -> std::process::Output {
    precedent_command()
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("run precedent")
}

pub fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// Writes `dir/rated.jsonl`: the ACORD clauses that train or valid judge (2,291 of 3,931).
/// The condensed protocol scores only judged clauses, so the others change no figure, and
/// leaving them out keeps libraries (and their embedding) small.
pub fn rated_corpus(dir: &Path) -> PathBuf {
    let qrels: Vec<precedent_formats::Qrels> = ["train", "valid"]
        .iter()
        .map(|split| {
            precedent_formats::read_qrels(&acord().join(format!("qrels/{split}.tsv")))
                .expect("qrels")
        })
        .collect();
    let judged: std::collections::HashSet<&String> = qrels
        .iter()
        .flat_map(|qrels| qrels.query_ids().filter_map(|q| qrels.judged(q)))
        .flat_map(|labels| labels.keys())
        .collect();
    let rated: Vec<_> = precedent_formats::read_corpus(&acord().join("corpus.jsonl"))
        .expect("corpus")
        .into_iter()
        .filter(|d| judged.contains(&d.id))
        .collect();
    assert_eq!(rated.len(), 2291);
    let path = dir.join("rated.jsonl");
    precedent_formats::write_corpus(&path, &rated).expect("write corpus");
    path
}

/// Builds a library in `dir/name` from the first `limit` ACORD clauses (all when `None`).
pub fn build_library(dir: &Path, name: &str, limit: Option<usize>, vectors: bool) -> PathBuf {
    let corpus = acord().join("corpus.jsonl");
    let source = match limit {
        None => corpus,
        Some(n) => {
            let docs = precedent_formats::read_corpus(&corpus).expect("corpus");
            let path = dir.join(format!("{name}.jsonl"));
            precedent_formats::write_corpus(&path, &docs[..n.min(docs.len())]).expect("write");
            path
        }
    };
    let lib = dir.join(name);
    let mut args = vec!["index", "--corpus", s(&source), "--index", s(&lib)];
    if !vectors {
        args.push("--no-vectors");
    }
    let out = precedent(&args, dir);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    lib
}

/// Builds a library without vectors in `dir/name` from corpus documents (`{_id, title?, text,
/// metadata?}` JSON values), for tests that need clauses with metadata of their own.
pub fn library_of_docs(dir: &Path, name: &str, docs: &[serde_json::Value]) -> PathBuf {
    let corpus = dir.join(format!("{name}.jsonl"));
    let lines: Vec<String> = docs.iter().map(|d| d.to_string()).collect();
    std::fs::write(&corpus, lines.join("\n") + "\n").expect("write corpus");
    let lib = dir.join(name);
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

/// Creates a key with `role` on `lib` and returns the token.
pub fn create_key(lib: &Path, role: &str) -> String {
    let out = precedent(
        &[
            "keys",
            "create",
            "--index",
            s(lib),
            "--role",
            role,
            "--label",
            "test",
        ],
        lib,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .expect("utf-8")
        .trim()
        .to_owned()
}

/// A `precedent serve` process; killed (SIGKILL) when dropped.
pub struct Server {
    pub child: Child,
    pub base: String,
}

impl Server {
    /// Starts `precedent serve` with `libs` (each `DIR` or `NAME=DIR`) on a free loopback port.
    pub fn start(libs: &[String], cwd: &Path) -> Server {
        Server::start_with(libs, &[], cwd)
    }

    /// [`Server::start`] with more command-line arguments.
    pub fn start_with(libs: &[String], extra: &[String], cwd: &Path) -> Server {
        let mut cmd = precedent_command();
        cmd.arg("serve");
        for lib in libs {
            cmd.args(["--index", lib]);
        }
        cmd.args(extra);
        let mut child = cmd
            .args(["--addr", "127.0.0.1:0"])
            .current_dir(cwd)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn precedent serve");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let line = match rx.recv_timeout(Duration::from_secs(180)) {
            Ok(line) => line,
            Err(_) => {
                let _ = child.kill();
                panic!("precedent serve did not report its address within 180 s");
            }
        };
        let base = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
            .to_owned();
        Server { child, base }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.base, path)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A response: status, content type, body text.
pub struct Reply {
    pub status: u16,
    pub content_type: String,
    pub body: String,
    pub headers: Vec<(String, String)>,
}

impl Reply {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// Asserts a problem-details error with `status`.
    pub fn assert_problem(&self, status: u16) -> serde_json::Value {
        assert_eq!(self.status, status, "{}", self.body);
        assert!(
            self.content_type.starts_with("application/problem+json"),
            "{} {}",
            self.content_type,
            self.body
        );
        let json = self.json();
        assert_eq!(json["status"], status);
        assert!(
            json["detail"].as_str().is_some_and(|d| !d.is_empty()),
            "{json}"
        );
        json
    }
}

fn agent() -> ureq::Agent {
    ureq::AgentBuilder::new()
        .timeout(Duration::from_secs(120))
        .build()
}

fn reply(result: Result<ureq::Response, ureq::Error>) -> Reply {
    let response = match result {
        Ok(r) => r,
        Err(ureq::Error::Status(_, r)) => r,
        Err(e) => panic!("request failed: {e}"),
    };
    let status = response.status();
    let content_type = response.header("content-type").unwrap_or("").to_owned();
    let headers = response
        .headers_names()
        .into_iter()
        .map(|n| {
            let v = response.header(&n).unwrap_or("").to_owned();
            (n, v)
        })
        .collect();
    let body = response.into_string().unwrap_or_default();
    Reply {
        status,
        content_type,
        body,
        headers,
    }
}

/// Sends `method url` with an optional bearer key and JSON body.
pub fn call(method: &str, url: &str, key: Option<&str>, body: Option<&serde_json::Value>) -> Reply {
    let mut request = agent().request(method, url);
    if let Some(key) = key {
        request = request.set("Authorization", &format!("Bearer {key}"));
    }
    reply(match body {
        Some(b) => request.send_json(b.clone()),
        None => request.call(),
    })
}

/// Sends a raw body with a content type.
pub fn call_raw(
    method: &str,
    url: &str,
    key: Option<&str>,
    content_type: &str,
    body: &[u8],
) -> Reply {
    let mut request = agent()
        .request(method, url)
        .set("Content-Type", content_type);
    if let Some(key) = key {
        request = request.set("Authorization", &format!("Bearer {key}"));
    }
    reply(request.send_bytes(body))
}

/// Posts `bytes` as the `file` part of a multipart/form-data body named `file_name`.
pub fn upload(url: &str, key: &str, file_name: &str, bytes: &[u8]) -> Reply {
    let boundary = "precedent-test-boundary-7d1f";
    let mut body = format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{file_name}\"\r\nContent-Type: application/octet-stream\r\n\r\n"
    )
    .into_bytes();
    body.extend_from_slice(bytes);
    body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
    call_raw(
        "POST",
        url,
        Some(key),
        &format!("multipart/form-data; boundary={boundary}"),
        &body,
    )
}

pub fn cuad_contract(name: &str) -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/data/cuad/full_contract_txt"
    ))
    .join(name)
}

/// The shared CUAD folder.
pub fn cuad_dir() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/data/cuad"
    ))
}

/// The typer cache of this clone (`.precedent/cache/typer/`, as a user's commands use it), so
/// every test that needs the full CUAD clause typer shares one training (about 90 s, once per
/// clone; concurrent callers wait on the cache's lock instead of training twice).
pub fn typer_cache() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../.precedent/cache/typer"
    ))
}

/// The clause-classifier cache of this clone (`.precedent/cache/clause-classifier/`), shared the
/// same way (about a minute to train, once per clone).
pub fn classifier_cache() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../.precedent/cache/clause-classifier"
    ))
}

/// The embedding cache of this clone (`.precedent/cache/embeddings/`, keyed by model and text).
/// Every test command goes through it (`$PRECEDENT_EMBEDDING_CACHE`, set by
/// [`precedent_command`]), so an ACORD clause or CUAD type profile that one test binary embedded
/// is not embedded again by the next. The cache's segments are written whole and renamed into
/// place, so concurrent tests can share it.
pub fn embedding_cache() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../.precedent/cache/embeddings"
    ))
}

/// The UNFAIR-ToS model cache of this clone (`.precedent/cache/unfair-tos/`), shared the same
/// way: `cli_unfair_tos` trains the model fitted on the training rows (about a minute, once per
/// clone) and the page's test reviews terms of service with it.
pub fn unfair_cache() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../.precedent/cache/unfair-tos"
    ))
}

/// The shared UNFAIR-ToS rows.
pub fn unfair_data() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/data/unfair_tos"
    ))
}

/// The short terms of service written for the tests, in ordinary casing and punctuation.
pub fn terms_of_service() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/short_terms_of_service.txt"
    ))
}

/// `review` and `serve` arguments for the model of [`unfair_cache`]: fitted on the training rows
/// only, so that `eval-unfair-tos` can score it on the validation rows.
pub fn unfair_args() -> Vec<String> {
    vec![
        "--unfair-cache".to_owned(),
        s(&unfair_cache()).to_owned(),
        "--unfair-data".to_owned(),
        s(&unfair_data()).to_owned(),
        "--fit-on".to_owned(),
        "train".to_owned(),
    ]
}

/// A small word-only clause classifier (40 CUAD contracts, a few seconds to train) saved in
/// `dir`, for `classify --classifier` and `serve --clause-classifier`: the default one reads
/// MiniLM and takes minutes to train.
pub fn small_clause_classifier(dir: &Path) -> PathBuf {
    use precedent_clause_types::clause_classifier::{
        span_examples, ClassifierOptions, ClauseClassifier,
    };
    let data = precedent_cuad::load(&cuad_dir()).expect("CUAD data");
    let train: Vec<&_> = data.contracts.iter().take(40).collect();
    let model = ClauseClassifier::train(
        &span_examples(&train),
        &ClassifierOptions::default(),
        "test",
    )
    .expect("train the clause classifier");
    let path = dir.join("clause-classifier.bin");
    model.save(&path).expect("save the clause classifier");
    path
}

/// Makes sure the full typer and the clause classifier its second stage reads are trained and
/// cached, and returns the arguments that point a command (`serve`, `ingest`, `review`) at them.
pub fn typer_args() -> Vec<String> {
    precedent_clause_types::cache::load_or_train_classifier(
        &cuad_dir(),
        &classifier_cache(),
        &precedent_clause_types::clause_classifier::ClassifierOptions::for_second_stage(),
        || {
            eprintln!(
                "training the clause classifier into {}",
                classifier_cache().display()
            )
        },
    )
    .expect("the clause classifier");
    precedent_clause_types::cache::load_or_train(
        &cuad_dir(),
        &typer_cache(),
        &precedent_clause_types::TrainOptions::default(),
        || {
            eprintln!(
                "training the CUAD clause typer into {}",
                typer_cache().display()
            )
        },
    )
    .expect("the CUAD clause typer");
    vec![
        "--cuad".to_owned(),
        s(&cuad_dir()).to_owned(),
        "--typer-cache".to_owned(),
        s(&typer_cache()).to_owned(),
        "--classifier-cache".to_owned(),
        s(&classifier_cache()).to_owned(),
    ]
}

/// Contract files committed as fixtures of precedent-contracts (one CUAD contract as HTML,
/// DOCX and PDF, and a PDF without a text layer).
pub fn contract_fixture(name: &str) -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../contracts/tests/fixtures"
    ))
    .join(name)
}

/// The learned ranker the repository ships (trained on ACORD train + valid).
pub fn shipped_ranker() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../models/acord-ranker"
    ))
}

/// Posts a body larger than the server accepts, over a raw socket.
///
/// Why not `call_raw`: the server answers 413 as soon as the limit is crossed and closes the
/// connection with the rest of the body unread, so a client that writes the whole body before
/// reading (ureq does) races the close and sometimes fails with "broken pipe" instead of seeing
/// the 413. Here a writer thread sends the body and ignores write errors while this thread reads
/// the response, which is what a browser or curl does.
pub fn post_oversized(url: &str, key: &str, content_type: &str, body: Vec<u8>) -> Reply {
    use std::io::{Read, Write};
    let rest = url.strip_prefix("http://").expect("http URL");
    let (host, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let stream = std::net::TcpStream::connect(host).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .expect("read timeout");
    let mut writer = stream.try_clone().expect("clone socket");
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {key}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let sender = std::thread::spawn(move || {
        let _ = writer
            .write_all(head.as_bytes())
            .and_then(|()| writer.write_all(&body));
    });
    let mut raw = Vec::new();
    let mut reader = stream;
    let mut chunk = [0u8; 8192];
    loop {
        match reader.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => raw.extend_from_slice(&chunk[..n]),
            // A reset after the response arrived ends the exchange; what was read stands.
            Err(e) if !raw.is_empty() => {
                eprintln!("read ended with {e} after {} bytes", raw.len());
                break;
            }
            Err(e) => panic!("no response to the oversized request: {e}"),
        }
        if response_complete(&raw) {
            break;
        }
    }
    let _ = reader.shutdown(std::net::Shutdown::Both);
    let _ = sender.join();
    parse_response(&raw)
}

/// True once `raw` holds the head and the whole Content-Length body.
fn response_complete(raw: &[u8]) -> bool {
    let Some(split) = raw.windows(4).position(|w| w == b"\r\n\r\n") else {
        return false;
    };
    let head = String::from_utf8_lossy(&raw[..split]).to_ascii_lowercase();
    head.lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse::<usize>().ok())
        .is_some_and(|len| raw.len() >= split + 4 + len)
}

fn parse_response(raw: &[u8]) -> Reply {
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or_else(|| panic!("truncated response: {}", String::from_utf8_lossy(raw)));
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("bad status line in {head}"));
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_owned(), v.trim().to_owned()))
        .collect();
    let content_type = headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("content-type"))
        .map(|(_, v)| v.clone())
        .unwrap_or_default();
    Reply {
        status,
        content_type,
        body: String::from_utf8_lossy(&raw[split + 4..]).into_owned(),
        headers,
    }
}

/// Debian's LibreOffice (`libreoffice-writer-nogui`, installed by scripts/setup.sh).
pub const SOFFICE: &str = "/usr/bin/soffice";

/// A part of a DOCX (or ODT: both are zips) as text.
pub fn docx_part(docx: &[u8], name: &str) -> String {
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(docx)).expect("a DOCX is a zip");
    let mut out = String::new();
    std::io::Read::read_to_string(
        &mut zip
            .by_name(name)
            .unwrap_or_else(|e| panic!("{name} in the DOCX: {e}")),
        &mut out,
    )
    .expect("utf-8");
    out
}

/// Converts `input` with headless LibreOffice into `format` in `out_dir`, with a profile of its
/// own so that parallel tests do not share one.
pub fn soffice_convert(input: &Path, format: &str, out_dir: &Path) -> std::path::PathBuf {
    assert!(
        Path::new(SOFFICE).exists(),
        "{SOFFICE} is missing: run scripts/setup.sh (installs Debian's libreoffice-writer-nogui)"
    );
    let profile = out_dir.join(format!("lo-profile-{format}"));
    let status = Command::new(SOFFICE)
        .arg(format!(
            "-env:UserInstallation=file://{}",
            profile.display()
        ))
        .args([
            "--headless",
            "--norestore",
            "--convert-to",
            format,
            "--outdir",
        ])
        .arg(out_dir)
        .arg(input)
        .status()
        .expect("run soffice");
    assert!(status.success(), "soffice --convert-to {format} failed");
    let stem = input.file_stem().expect("a file name");
    let converted = out_dir.join(format!("{}.{format}", stem.to_string_lossy()));
    assert!(converted.is_file(), "{} not written", converted.display());
    converted
}

/// Twelve liability caps of twelve contracts in two wordings (a fees-paid cap, mutual, with a
/// carve-out; a fixed-sum cap, one-sided), typed as ingest types them, among twenty clauses of
/// another type (so that the caps' words are rare in the library).
pub fn market_library(dir: &Path) -> PathBuf {
    let mut docs = Vec::new();
    for i in 0..6 {
        for (stem, text) in [
            ("fees", format!("Neither party's aggregate liability shall exceed the fees paid in the twelve months preceding the claim, except for breach of confidentiality. Variant {i}.")),
            ("sum", format!("Supplier's total liability is limited to one million dollars (USD 1,000,000) in the aggregate. Schedule {i}.")),
        ] {
            docs.push(json!({
                "_id": format!("{stem}{i}#1"),
                "title": "Limitation of Liability",
                "text": text,
                "metadata": {
                    "contract": format!("{stem}{i}"),
                    "clause_types": [{"category": "Cap on Liability", "confidence": 0.9}],
                },
            }));
        }
    }
    // The rest of a library: clauses of another type, so that the caps' words are rare.
    for i in 0..20 {
        docs.push(json!({
            "_id": format!("law{i}#1"),
            "text": format!("This Agreement is governed by the laws of New York. Clause {i}."),
            "metadata": {
                "contract": format!("law{i}"),
                "clause_types": [{"category": "Governing Law", "confidence": 0.9}],
            },
        }));
    }
    library_of_docs(dir, "market-lib", &docs)
}
