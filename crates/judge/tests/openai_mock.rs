//! The OpenAI-compatible judge against a scripted server on loopback: retries and Retry-After,
//! cache hits, token and cost accounting, worker pool order, and clear errors for garbage.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use precedent_judge::{Judge, JudgeError, JudgementCache, OpenAiConfig, OpenAiJudge};

#[derive(Debug, Clone)]
struct Request {
    headers: Vec<String>,
    body: String,
}

struct Reply {
    status: u16,
    headers: Vec<(&'static str, String)>,
    body: String,
    /// Never answer (to exercise the client timeout).
    hang: bool,
}

fn reply(status: u16, body: impl Into<String>) -> Reply {
    Reply {
        status,
        headers: Vec::new(),
        body: body.into(),
        hang: false,
    }
}

fn completion(content: &str, prompt_tokens: u32, completion_tokens: u32) -> Reply {
    let body = serde_json::json!({
        "id": "cmpl-1", "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens, "total_tokens": prompt_tokens + completion_tokens}
    });
    reply(200, body.to_string())
}

type Log = Arc<Mutex<Vec<Request>>>;

/// Serves until the test ends; `respond(n, request)` scripts the n-th (0-based) reply.
fn serve(respond: impl Fn(usize, &Request) -> Reply + Send + Sync + 'static) -> (String, Log) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let log: Log = Arc::default();
    let respond = Arc::new(respond);
    let log2 = log.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            let (log, respond) = (log2.clone(), respond.clone());
            std::thread::spawn(move || handle(stream, &log, respond.as_ref()));
        }
    });
    (url, log)
}

fn handle(stream: TcpStream, log: &Log, respond: &(dyn Fn(usize, &Request) -> Reply + Sync)) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let line = line.trim_end().to_owned();
        if line.is_empty() {
            break;
        }
        headers.push(line);
    }
    let length = headers
        .iter()
        .find_map(|h| {
            let (k, v) = h.split_once(':')?;
            k.eq_ignore_ascii_case("content-length")
                .then(|| v.trim().parse::<usize>().ok())?
        })
        .unwrap_or(0);
    let mut body = vec![0u8; length];
    reader.read_exact(&mut body).unwrap();
    let request = Request {
        headers,
        body: String::from_utf8(body).unwrap(),
    };
    let n = {
        let mut log = log.lock().unwrap();
        log.push(request.clone());
        log.len() - 1
    };
    let r = respond(n, &request);
    if r.hang {
        std::thread::sleep(Duration::from_secs(5));
        return;
    }
    let mut out = format!(
        "HTTP/1.1 {} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n",
        r.status,
        r.body.len()
    );
    for (k, v) in &r.headers {
        out.push_str(&format!("{k}: {v}\r\n"));
    }
    out.push_str("\r\n");
    out.push_str(&r.body);
    let mut stream = stream;
    let _ = stream.write_all(out.as_bytes());
}

fn config(url: &str) -> OpenAiConfig {
    let mut c = OpenAiConfig::new(url, "test-model");
    c.backoff = Duration::from_millis(10);
    c.max_retries = 3;
    c.timeout = Duration::from_secs(5);
    c
}

const QUERY: &str = "liability cap is based on purchase price";
const CLAUSE: &str = "In no event shall either party's liability exceed the fees paid in the twelve months preceding the claim.";

#[test]
fn retries_a_429_then_caches_the_answer_with_tokens_and_cost() {
    let (url, log) = serve(|n, _| {
        if n == 0 {
            let mut r = reply(429, r#"{"error":{"message":"rate limited"}}"#);
            r.headers.push(("Retry-After", "0".into()));
            r
        } else {
            completion("4", 210, 1)
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let cache = Arc::new(JudgementCache::open(dir.path()).unwrap());
    let mut cfg = config(&url);
    cfg.api_key = Some("sk-test".into());
    cfg.price_in_per_1k = 0.5;
    cfg.price_out_per_1k = 2.0;
    let judge = OpenAiJudge::new(cfg.clone(), Some(cache.clone()));
    let j = judge.judge(QUERY, CLAUSE).unwrap();
    assert_eq!(
        (j.stars, j.raw.as_str(), j.tokens_in, j.tokens_out),
        (4.0, "4", 210, 1)
    );
    assert!(!j.cached);
    let usage = judge.usage();
    assert_eq!((usage.calls, usage.retries, usage.cache_hits), (1, 1, 0));
    assert_eq!((usage.tokens_in, usage.tokens_out), (210, 1));
    assert!((usage.cost_usd - (0.21 * 0.5 + 0.001 * 2.0)).abs() < 1e-12);

    // What the server saw: the model, the rubric, the query, the clause, the key.
    let requests = log.lock().unwrap().clone();
    assert_eq!(requests.len(), 2);
    let body: serde_json::Value = serde_json::from_str(&requests[1].body).unwrap();
    assert_eq!(body["model"], "test-model");
    assert_eq!(body["temperature"], 0);
    let user = body["messages"][1]["content"].as_str().unwrap();
    assert!(user.contains(QUERY) && user.contains(CLAUSE) && user.contains("5 = everything in 4"));
    assert!(requests[1]
        .headers
        .iter()
        .any(|h| h == "Authorization: Bearer sk-test"));

    // Asked again: from the cache, no request, no cost; also after reopening the cache.
    let again = judge.judge(QUERY, CLAUSE).unwrap();
    assert!(again.cached && again.stars == 4.0);
    assert_eq!(log.lock().unwrap().len(), 2);
    assert_eq!(judge.usage().cache_hits, 1);
    drop(judge);
    let reopened = Arc::new(JudgementCache::open(dir.path()).unwrap());
    let judge = OpenAiJudge::new(cfg, Some(reopened));
    assert!(judge.judge(QUERY, CLAUSE).unwrap().cached);
    assert_eq!(log.lock().unwrap().len(), 2);
    assert_eq!(judge.usage().cost_usd, 0.0);
}

#[test]
fn garbage_answers_fail_clearly() {
    let (url, log) = serve(|n, _| match n {
        0 => reply(200, "<html>gateway says hi</html>"),
        1 => completion("I cannot rate this clause.", 100, 6),
        2 => reply(400, r#"{"error":{"message":"model not found"}}"#),
        _ => reply(503, "overloaded"),
    });
    let judge = OpenAiJudge::new(config(&url), None);
    let err = judge.judge(QUERY, CLAUSE).unwrap_err();
    assert!(matches!(err, JudgeError::BadResponse { .. }), "{err}");
    assert!(err.to_string().contains("gateway says hi"), "{err}");

    let err = judge.judge(QUERY, CLAUSE).unwrap_err();
    assert!(matches!(err, JudgeError::Unparseable { .. }), "{err}");
    assert!(
        err.to_string().contains("I cannot rate this clause."),
        "{err}"
    );

    // A 400 is not retried.
    let err = judge.judge(QUERY, CLAUSE).unwrap_err().to_string();
    assert!(
        err.contains("HTTP 400") && err.contains("model not found"),
        "{err}"
    );
    assert_eq!(log.lock().unwrap().len(), 3);

    // A 503 is retried max_retries times, then reported.
    let err = judge.judge(QUERY, CLAUSE).unwrap_err().to_string();
    assert!(
        err.contains("HTTP 503") && err.contains("overloaded"),
        "{err}"
    );
    assert_eq!(log.lock().unwrap().len(), 3 + 4);
    assert_eq!(judge.usage().retries, 3);
}

#[test]
fn a_silent_server_times_out_after_retries() {
    let (url, log) = serve(|_, _| Reply {
        hang: true,
        ..reply(200, "")
    });
    let mut cfg = config(&url);
    cfg.timeout = Duration::from_millis(200);
    cfg.max_retries = 1;
    let judge = OpenAiJudge::new(cfg, None);
    let err = judge.judge(QUERY, CLAUSE).unwrap_err();
    assert!(
        matches!(err, JudgeError::Transport { attempts: 2, .. }),
        "{err}"
    );
    assert_eq!(log.lock().unwrap().len(), 2);
}

#[test]
fn a_batch_runs_on_the_worker_pool_and_keeps_its_order() {
    // The server rates each clause by the digit it contains, slowly, and records how many
    // requests were in flight at once.
    use std::sync::atomic::{AtomicUsize, Ordering};
    let in_flight = Arc::new(AtomicUsize::new(0));
    let most = Arc::new(AtomicUsize::new(0));
    let (f, m) = (in_flight.clone(), most.clone());
    let (url, log) = serve(move |_, r| {
        let now = f.fetch_add(1, Ordering::SeqCst) + 1;
        m.fetch_max(now, Ordering::SeqCst);
        std::thread::sleep(Duration::from_millis(50));
        f.fetch_sub(1, Ordering::SeqCst);
        let body: serde_json::Value = serde_json::from_str(&r.body).unwrap();
        let user = body["messages"][1]["content"].as_str().unwrap().to_owned();
        let clause = user.split("Clause:\n").nth(1).unwrap();
        let digit = clause.chars().find(|c| c.is_ascii_digit()).unwrap();
        completion(&digit.to_string(), 50, 1)
    });
    let mut cfg = config(&url);
    cfg.concurrency = 4;
    let judge = OpenAiJudge::new(cfg, None);
    let clauses: Vec<String> = (0..12)
        .map(|i| format!("clause number {}", i % 5 + 1))
        .collect();
    let refs: Vec<&str> = clauses.iter().map(String::as_str).collect();
    let judged = judge.judge_all(QUERY, &refs).unwrap();
    let stars: Vec<f32> = judged.iter().map(|j| j.stars).collect();
    let expected: Vec<f32> = (0..12).map(|i| (i % 5 + 1) as f32).collect();
    assert_eq!(stars, expected);
    assert_eq!(log.lock().unwrap().len(), 12);
    assert_eq!(judge.usage().tokens_in, 12 * 50);
    let most = most.load(Ordering::SeqCst);
    assert!((2..=4).contains(&most), "{most} requests in flight at once");
}

#[test]
fn pairwise_answers_name_the_better_clause() {
    let (url, log) = serve(|_, _| completion("B", 300, 1));
    let judge = OpenAiJudge::new(config(&url), None);
    let p = judge.prefer(QUERY, "clause one", "clause two").unwrap();
    assert_eq!(p.first_better, 0.0);
    let body: serde_json::Value = serde_json::from_str(&log.lock().unwrap()[0].body).unwrap();
    let user = body["messages"][1]["content"].as_str().unwrap();
    assert!(user.contains("Clause A:\nclause one") && user.contains("Clause B:\nclause two"));
}
