//! Builds a large synthetic clause library from the CUAD contracts, for the latency and memory
//! benchmark "1M-clause library (issue #3)" in BENCHMARKS.md. Reproduce with
//! `scripts/bench/one_million.sh`; by hand:
//!
//! ```text
//! cargo run --release -p precedent-tools --bin synth_library -- \
//!     --cuad ../shared/data/cuad/full_contract_txt --out .precedent/bench-1m/lib-hnsw \
//!     --artifacts .precedent/bench-1m --n 1000000 --embed 16000 --cache .precedent/bench-cache \
//!     --kind hnsw [--sigma S] [--calibrate 256] [--embed-only]
//!     [--recall-queries FILE]   # instead of building: recall of the built library's index
//! ```
//!
//! 1. **Segment.** Every contract is cut into passages: blocks separated by blank lines (lines
//!    inside a block joined), a new block also at a numbered heading (`1.`, `2.3`, `(a)`,
//!    `Section 4`, `ARTICLE V`); EDGAR `Source:` footers and page numbers dropped; a block that
//!    starts lower-case continues the previous one (page breaks); blocks under 20 words
//!    (headings, list items) are prepended to the next block until they reach 20 words; blocks
//!    over 400 words are cut at sentence ends into pieces of at most 300 words. Passages of
//!    20-400 words are kept, exact duplicates dropped. Metadata: contract file, passage index.
//! 2. **Embed.** A deterministic shuffle of the passages; the first `--embed` are embedded with
//!    the real model (all-MiniLM-L6-v2, truncation like sentence-transformers) through the
//!    on-disk embedding cache, so reruns are free. These are the *seed* passages; their vectors
//!    are also written raw (little-endian f32) to `<artifacts>/seeds.f32` for `vector_bench`.
//! 3. **Synthesize.** Row r < S (S seeds) is seed r itself, text and real vector unchanged.
//!    Row r >= S is a copy of seed `r % S`: its text lightly perturbed with a generator seeded
//!    by r (role names such as Licensee/Distributor swapped for other role names, consistently
//!    within the clause, in half of the rows; each number's digits redrawn with probability
//!    1/2; each word dropped with probability 3%; two random adjacent-word swaps), and its
//!    vector = the seed's real vector + N(0, sigma^2) per component, re-normalised. Sigma is
//!    calibrated (unless `--sigma` is given): the first `--calibrate` perturbed rows are really
//!    embedded, their mean cosine c to their seed's vector measured, and
//!    sigma = sqrt((1/c^2 - 1) / dim), which gives noisy vectors the same expected cosine to
//!    their seed as real embeddings of the perturbed texts have.
//! 4. **Build.** `Library::build` with the chosen vector index; stage times, on-disk size and a
//!    JSON summary (`<artifacts>/summary-<kind>.json`) are printed.
//!
//! With `--recall-queries FILE` nothing is built: the library in `--out` is opened, the queries
//! are embedded with the model, the exact top 100 by dot product is computed by a full scan over
//! the same 1M vectors (regenerated deterministically, never read back from the index), and
//! recall@10 / recall@100 of the library's own vector index (`search(q, k)`, as the dense
//! retriever calls it) against that exact list is printed, with the index's search latency.

use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use precedent_formats::CorpusDoc;
use precedent_library::{BuildOptions, ClauseVectors, IndexKind, Library, Progress, VectorsInfo};
use precedent_models::{EmbedOptions, Embedder, EmbeddingCache, LongTextPolicy, DEFAULT_MODEL};

const MIN_WORDS: usize = 20;
const MAX_WORDS: usize = 400;
const PIECE_WORDS: usize = 300;

struct Args {
    cuad: PathBuf,
    out: PathBuf,
    artifacts: PathBuf,
    n: usize,
    embed: usize,
    cache: PathBuf,
    kind: String,
    sigma: Option<f32>,
    calibrate: usize,
    embed_only: bool,
    shuffle_seed: u64,
    recall_queries: Option<PathBuf>,
}

fn parse_args() -> Result<Args> {
    let mut a = Args {
        cuad: PathBuf::from("../shared/data/cuad/full_contract_txt"),
        out: PathBuf::from(".precedent/bench-1m/lib-hnsw"),
        artifacts: PathBuf::from(".precedent/bench-1m"),
        n: 1_000_000,
        embed: 16_000,
        cache: PathBuf::from(".precedent/bench-cache"),
        kind: "hnsw".into(),
        sigma: None,
        calibrate: 256,
        embed_only: false,
        shuffle_seed: 3,
        recall_queries: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        if flag == "--embed-only" {
            a.embed_only = true;
            continue;
        }
        let val = it.next().with_context(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--cuad" => a.cuad = val.into(),
            "--out" => a.out = val.into(),
            "--artifacts" => a.artifacts = val.into(),
            "--n" => a.n = val.parse()?,
            "--embed" => a.embed = val.parse()?,
            "--cache" => a.cache = val.into(),
            "--kind" => a.kind = val,
            "--sigma" => a.sigma = Some(val.parse()?),
            "--calibrate" => a.calibrate = val.parse()?,
            "--shuffle-seed" => a.shuffle_seed = val.parse()?,
            "--recall-queries" => a.recall_queries = Some(val.into()),
            other => bail!("unknown flag {other}"),
        }
    }
    Ok(a)
}

// ---------------------------------------------------------------------------------------------
// Deterministic randomness (no external crates).

fn mix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Rng(mix64(seed))
    }
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        mix64(self.0)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn gaussian(&mut self) -> f64 {
        let u1 = self.unit().max(1e-300);
        let u2 = self.unit();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }
}

// ---------------------------------------------------------------------------------------------
// Segmentation.

struct Passage {
    contract: String,
    index: usize,
    text: String,
}

fn is_noise(line: &str) -> bool {
    if line.starts_with("Source:") {
        return true;
    }
    // Page numbers and separators ("12", "- 3 -", "Page 4 of 9", "* * *").
    let lower = line.to_lowercase();
    line.len() <= 20
        && lower
            .split_whitespace()
            .filter(|w| *w != "page" && *w != "of")
            .all(|w| {
                w.chars()
                    .all(|c| c.is_ascii_digit() || c.is_ascii_punctuation())
            })
}

/// A numbered heading at the start of a line: `1. `, `2.3 `, `(a) `, `Section 4`, `ARTICLE V`.
fn starts_section(line: &str) -> bool {
    let b = line.as_bytes();
    // 1-2 digits, optional .digits groups, optional '.' or ')', whitespace, upper-case letter.
    let mut i = 0;
    while i < b.len() && i < 2 && b[i].is_ascii_digit() {
        i += 1;
    }
    if i > 0 && (i == b.len() || !b[i].is_ascii_digit()) {
        while i + 1 < b.len() && b[i] == b'.' && b[i + 1].is_ascii_digit() {
            i += 1;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
        }
        if i < b.len() && (b[i] == b'.' || b[i] == b')') {
            i += 1;
        }
        let ws = i;
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        if i > ws && i < b.len() && b[i].is_ascii_uppercase() {
            return true;
        }
    }
    if b.first() == Some(&b'(') {
        if let Some(close) = line
            .char_indices()
            .take(7)
            .find(|(_, c)| *c == ')')
            .map(|(i, _)| i)
        {
            let inner = &line[1..close];
            if !inner.is_empty()
                && inner.chars().all(|c| c.is_ascii_alphanumeric())
                && line[close + 1..].starts_with(' ')
            {
                return true;
            }
        }
    }
    ["Section ", "SECTION ", "Article ", "ARTICLE "]
        .iter()
        .any(|p| line.starts_with(p))
}

fn words(s: &str) -> usize {
    s.split_whitespace().count()
}

fn push_joined(dst: &mut String, s: &str) {
    for w in s.split_whitespace() {
        if !dst.is_empty() {
            dst.push(' ');
        }
        dst.push_str(w);
    }
}

/// Cuts a long block at sentence ends into pieces of at most PIECE_WORDS words.
fn split_long(block: &str) -> Vec<String> {
    let ws: Vec<&str> = block.split_whitespace().collect();
    let mut pieces = Vec::new();
    let mut start = 0;
    while start < ws.len() {
        if ws.len() - start <= MAX_WORDS {
            pieces.push(ws[start..].join(" "));
            break;
        }
        let limit = (start + PIECE_WORDS).min(ws.len());
        // Last sentence end in (start + MIN_WORDS, limit]; else a hard cut.
        let mut cut = limit;
        for j in (start + MIN_WORDS..limit).rev() {
            let w = ws[j];
            let next_upper = ws
                .get(j + 1)
                .and_then(|n| n.chars().next())
                .is_some_and(|c| c.is_uppercase() || c == '(');
            if (w.ends_with('.') || w.ends_with(';') || w.ends_with(':')) && next_upper {
                cut = j + 1;
                break;
            }
        }
        pieces.push(ws[start..cut].join(" "));
        start = cut;
    }
    pieces
}

fn segment(text: &str) -> Vec<String> {
    let mut blocks: Vec<String> = Vec::new();
    let mut cur = String::new();
    for line in text.lines() {
        let t = line.trim();
        if t.is_empty() {
            if !cur.is_empty() {
                blocks.push(std::mem::take(&mut cur));
            }
            continue;
        }
        if is_noise(t) {
            continue;
        }
        if starts_section(t) && !cur.is_empty() {
            blocks.push(std::mem::take(&mut cur));
        }
        push_joined(&mut cur, t);
    }
    if !cur.is_empty() {
        blocks.push(cur);
    }

    let mut merged: Vec<String> = Vec::new();
    let mut pending = String::new();
    for b in blocks {
        let lower = b.chars().next().is_some_and(|c| c.is_lowercase());
        if lower && pending.is_empty() && !merged.is_empty() {
            let last = merged.last_mut().expect("non-empty");
            push_joined(last, &b);
            continue;
        }
        if words(&pending) + words(&b) < MIN_WORDS {
            push_joined(&mut pending, &b);
            continue;
        }
        let mut full = std::mem::take(&mut pending);
        push_joined(&mut full, &b);
        merged.push(full);
    }
    if !pending.is_empty() {
        merged.push(pending);
    }
    merged
        .iter()
        .flat_map(|b| split_long(b))
        .filter(|p| (MIN_WORDS..=MAX_WORDS).contains(&words(p)))
        .collect()
}

fn read_passages(dir: &Path) -> Result<(Vec<Passage>, usize)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .collect();
    files.sort();
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for f in &files {
        let bytes = std::fs::read(f).with_context(|| format!("reading {}", f.display()))?;
        let text = String::from_utf8_lossy(&bytes);
        let name = f
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        for (index, p) in segment(&text).into_iter().enumerate() {
            if seen.insert(p.clone()) {
                out.push(Passage {
                    contract: name.clone(),
                    index,
                    text: p,
                });
            }
        }
    }
    Ok((out, files.len()))
}

// ---------------------------------------------------------------------------------------------
// Perturbation.

const ROLES: &[&str] = &[
    "Company",
    "Licensee",
    "Licensor",
    "Distributor",
    "Supplier",
    "Customer",
    "Franchisee",
    "Franchisor",
    "Contractor",
    "Consultant",
    "Client",
    "Vendor",
    "Purchaser",
    "Seller",
    "Buyer",
    "Provider",
    "Reseller",
    "Manufacturer",
    "Developer",
    "Publisher",
    "Sponsor",
    "Agent",
];

/// Split a word into (leading punctuation, core, trailing punctuation).
fn core(w: &str) -> (&str, &str, &str) {
    let start = w.find(|c: char| c.is_alphanumeric()).unwrap_or(w.len());
    let end = w.rfind(|c: char| c.is_alphanumeric()).map_or(start, |i| {
        i + w[i..].chars().next().map_or(1, char::len_utf8)
    });
    (&w[..start], &w[start..end.max(start)], &w[end.max(start)..])
}

fn perturb_text(text: &str, row: u64) -> String {
    let mut rng = Rng::new(row ^ 0x7E47);
    let swap_roles = rng.below(2) == 0;
    // A random permutation of the role names, used consistently inside this clause.
    let mut perm: Vec<usize> = (0..ROLES.len()).collect();
    for i in (1..perm.len()).rev() {
        perm.swap(i, rng.below(i as u64 + 1) as usize);
    }
    let mut out: Vec<String> = Vec::new();
    for w in text.split_whitespace() {
        if rng.below(100) < 3 {
            continue; // dropped word
        }
        let (pre, c, post) = core(w);
        let mut word = w.to_owned();
        if swap_roles {
            let base = c.strip_suffix("'s").unwrap_or(c);
            let plural =
                base.len() > 1 && base.ends_with('s') && ROLES.contains(&&base[..base.len() - 1]);
            let stem = if plural {
                &base[..base.len() - 1]
            } else {
                base
            };
            if let Some(i) = ROLES.iter().position(|r| *r == stem) {
                let rest = &c[stem.len()..];
                word = format!("{pre}{}{rest}{post}", ROLES[perm[i]]);
            }
        }
        if c.chars().any(|ch| ch.is_ascii_digit()) && rng.below(2) == 0 {
            let mut first = true;
            word = word
                .chars()
                .map(|ch| {
                    if ch.is_ascii_digit() {
                        let d = if first {
                            1 + rng.below(9)
                        } else {
                            rng.below(10)
                        };
                        first = false;
                        char::from(b'0' + d as u8)
                    } else {
                        ch
                    }
                })
                .collect();
        }
        out.push(word);
    }
    for _ in 0..2 {
        if out.len() > 2 {
            let i = rng.below(out.len() as u64 - 1) as usize;
            out.swap(i, i + 1);
        }
    }
    out.join(" ")
}

fn noisy(seed: &[f32], sigma: f32, row: u64) -> impl Iterator<Item = f32> + '_ {
    let mut rng = Rng::new(row ^ 0xB1B);
    let v: Vec<f32> = seed
        .iter()
        .map(|x| x + sigma * rng.gaussian() as f32)
        .collect();
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
    v.into_iter().map(move |x| x / norm)
}

/// The vector of library row `r`: seed `r` itself for the first S rows, else a noisy copy.
fn row_vector(seed_vecs: &[f32], dim: usize, s: usize, sigma: f32, r: usize) -> Vec<f32> {
    let src = r % s;
    let seed = &seed_vecs[src * dim..(src + 1) * dim];
    if r < s {
        seed.to_vec()
    } else {
        noisy(seed, sigma, r as u64).collect()
    }
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0f32; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for ((s, x), y) in acc.iter_mut().zip(x).zip(y) {
            *s += x * y;
        }
    }
    acc.iter().sum::<f32>() + ra.iter().zip(rb).map(|(x, y)| x * y).sum::<f32>()
}

/// Recall of the built library's vector index against an exact scan, on real query embeddings.
fn recall(
    a: &Args,
    queries: &Path,
    embedder: &Embedder,
    seed_vecs: &[f32],
    s: usize,
    sigma: f32,
    log: &Log,
) -> Result<()> {
    const K: usize = 100;
    let dim = embedder.dim();
    let qs = precedent_formats::read_queries(queries)?;
    let library = Library::open(&a.out)?;
    if library.len() != a.n {
        bail!(
            "{} has {} clauses, --n is {}",
            a.out.display(),
            library.len(),
            a.n
        );
    }
    let index = library.vectors()?.context("the library has no vectors")?;
    // Embedded one by one, exactly as the dense retriever does.
    let mut qv: Vec<Vec<f32>> = Vec::with_capacity(qs.len());
    for q in &qs {
        qv.extend(embedder.embed(&[q.text.as_str()])?);
    }
    log.say(&format!(
        "embedded {} queries; exact scan over {} rows ...",
        qv.len(),
        a.n
    ));
    let t = Instant::now();
    // Per query: candidates above a running threshold, pruned to the top K now and then.
    let mut best: Vec<Vec<(f32, u32)>> = vec![Vec::with_capacity(4 * K); qv.len()];
    let mut floor = vec![f32::NEG_INFINITY; qv.len()];
    let prune = |list: &mut Vec<(f32, u32)>| {
        list.sort_by(|x, y| y.0.total_cmp(&x.0).then(x.1.cmp(&y.1)));
        list.truncate(K);
    };
    for r in 0..a.n {
        let v = row_vector(seed_vecs, dim, s, sigma, r);
        for (qi, q) in qv.iter().enumerate() {
            let d = dot(q, &v);
            if d > floor[qi] || best[qi].len() < K {
                best[qi].push((d, r as u32));
                if best[qi].len() >= 4 * K {
                    prune(&mut best[qi]);
                    floor[qi] = best[qi][K - 1].0;
                }
            }
        }
    }
    for list in &mut best {
        prune(list);
    }
    log.say(&format!("exact scan {:.1}s", t.elapsed().as_secs_f64()));
    let mut r10 = 0.0;
    let mut r100 = 0.0;
    let mut lat10 = Vec::new();
    let mut lat100 = Vec::new();
    let mut score_gap = 0f32;
    for (q, exact) in qv.iter().zip(&best) {
        let t = Instant::now();
        let got10 = index.search(q, 10)?;
        lat10.push(t.elapsed().as_secs_f64() * 1e3);
        let t = Instant::now();
        let got100 = index.search(q, K)?;
        lat100.push(t.elapsed().as_secs_f64() * 1e3);
        let truth10: HashSet<u32> = exact.iter().take(10).map(|x| x.1).collect();
        let truth100: HashSet<u32> = exact.iter().map(|x| x.1).collect();
        r10 += got10.iter().filter(|n| truth10.contains(&n.row)).count() as f64 / 10.0;
        r100 += got100.iter().filter(|n| truth100.contains(&n.row)).count() as f64 / K as f64;
        // Sanity: the index's score for its top row equals the regenerated vector's.
        if let Some(top) = got10.first() {
            let v = row_vector(seed_vecs, dim, s, sigma, top.row as usize);
            score_gap = score_gap.max((dot(q, &v) - top.score).abs());
        }
    }
    let nq = qv.len() as f64;
    let pct = |v: &mut Vec<f64>, p: f64| {
        v.sort_by(f64::total_cmp);
        v[((v.len() - 1) as f64 * p).round() as usize]
    };
    let summary = serde_json::json!({
        "library": a.out,
        "index": format!("{:?}", index.kind()),
        "queries": qv.len(),
        "recall_at_10": r10 / nq,
        "recall_at_100": r100 / nq,
        "search_k10_p50_ms": pct(&mut lat10, 0.5),
        "search_k10_p99_ms": pct(&mut lat10, 0.99),
        "search_k100_p50_ms": pct(&mut lat100, 0.5),
        "search_k100_p99_ms": pct(&mut lat100, 0.99),
        "max_abs_score_gap_index_vs_regenerated": score_gap,
    });
    println!("{}", serde_json::to_string_pretty(&summary)?);
    Ok(())
}

// ---------------------------------------------------------------------------------------------

struct Log {
    t0: Instant,
    stage: Mutex<Option<(String, Instant)>>,
    stages: Mutex<Vec<(String, f64)>>,
}

impl Log {
    fn new() -> Self {
        Log {
            t0: Instant::now(),
            stage: Mutex::new(None),
            stages: Mutex::new(Vec::new()),
        }
    }
    fn say(&self, msg: &str) {
        eprintln!("[{:7.1}s] {msg}", self.t0.elapsed().as_secs_f64());
    }
}

impl Progress for Log {
    fn start(&self, stage: &str, total: u64) {
        self.say(&format!("start: {stage} ({total})"));
        if let Ok(mut s) = self.stage.lock() {
            *s = Some((stage.to_owned(), Instant::now()));
        }
    }
    fn finish(&self) {
        let done = self.stage.lock().ok().and_then(|mut s| s.take());
        if let Some((stage, t)) = done {
            let secs = t.elapsed().as_secs_f64();
            self.say(&format!("done: {stage} in {secs:.1}s"));
            if let Ok(mut v) = self.stages.lock() {
                v.push((stage, secs));
            }
        }
    }
}

fn dir_bytes(p: &Path) -> u64 {
    let Ok(meta) = std::fs::symlink_metadata(p) else {
        return 0;
    };
    if meta.is_dir() {
        std::fs::read_dir(p)
            .map(|rd| rd.flatten().map(|e| dir_bytes(&e.path())).sum())
            .unwrap_or(0)
    } else {
        meta.len()
    }
}

fn vm_hwm_mb() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse::<f64>().ok())
        })
        .map_or(0.0, |kb| kb / 1024.0)
}

fn main() {
    if let Err(e) = run() {
        eprintln!("synth_library: {e:#}");
        std::process::exit(1);
    }
}

fn run() -> Result<()> {
    let a = parse_args()?;
    let log = Log::new();
    std::fs::create_dir_all(&a.artifacts)?;

    // 1. Segment.
    let t = Instant::now();
    let (passages, contracts) = read_passages(&a.cuad)?;
    let segment_s = t.elapsed().as_secs_f64();
    let total_words: usize = passages.iter().map(|p| words(&p.text)).sum();
    log.say(&format!(
        "segmented {contracts} contracts into {} passages ({} words, mean {:.0}) in {segment_s:.1}s",
        passages.len(),
        total_words,
        total_words as f64 / passages.len().max(1) as f64
    ));
    {
        let path = a.artifacts.join("passages.jsonl");
        let mut w = std::io::BufWriter::new(std::fs::File::create(&path)?);
        for p in &passages {
            let line =
                serde_json::json!({"contract": p.contract, "passage": p.index, "text": p.text});
            writeln!(w, "{line}")?;
        }
    }

    // 2. Embed a deterministic random subset (the seeds).
    let mut order: Vec<usize> = (0..passages.len()).collect();
    let mut rng = Rng::new(a.shuffle_seed);
    for i in (1..order.len()).rev() {
        order.swap(i, rng.below(i as u64 + 1) as usize);
    }
    let s = a.embed.min(passages.len());
    if s == 0 {
        bail!("no passages to embed");
    }
    let seeds: Vec<&Passage> = order[..s].iter().map(|&i| &passages[i]).collect();
    let embedder =
        Embedder::load_default().context("loading the default model (run scripts/setup.sh)")?;
    let cache = EmbeddingCache::open(&a.cache)?;
    let options = EmbedOptions {
        policy: LongTextPolicy::Truncate,
        ..EmbedOptions::default()
    };
    let dim = embedder.dim();
    let t = Instant::now();
    let mut seed_vecs: Vec<f32> = Vec::with_capacity(s * dim);
    let mut computed = 0usize;
    for chunk in seeds.chunks(1000) {
        let texts: Vec<&str> = chunk.iter().map(|p| p.text.as_str()).collect();
        let (vecs, stats) = cache.get_or_compute_stats(&embedder, &texts, &options, &|_| {})?;
        computed += stats.computed;
        for v in vecs {
            seed_vecs.extend_from_slice(&v);
        }
        let done = seed_vecs.len() / dim;
        let secs = t.elapsed().as_secs_f64();
        log.say(&format!(
            "embedded {done}/{s} seeds ({computed} computed, {:.1} computed/s)",
            computed as f64 / secs.max(1e-9)
        ));
    }
    let embed_s = t.elapsed().as_secs_f64();
    {
        let path = a.artifacts.join("seeds.f32");
        let mut w = std::io::BufWriter::new(std::fs::File::create(&path)?);
        for x in &seed_vecs {
            w.write_all(&x.to_le_bytes())?;
        }
        log.say(&format!("wrote {} ({s} x {dim} f32 LE)", path.display()));
    }

    // Calibrate the vector noise against real embeddings of perturbed texts.
    let cal = a.calibrate.min(s).min(a.n.saturating_sub(s));
    let mut cal_cos = None;
    if cal > 0 {
        let texts: Vec<String> = (0..cal)
            .map(|i| perturb_text(&seeds[i].text, (s + i) as u64))
            .collect();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let vecs = cache.get_or_compute(&embedder, &refs, &options, &|_| {})?;
        let mut cos: Vec<f32> = vecs
            .iter()
            .enumerate()
            .map(|(i, v)| {
                v.iter()
                    .zip(&seed_vecs[i * dim..(i + 1) * dim])
                    .map(|(x, y)| x * y)
                    .sum::<f32>()
            })
            .collect();
        cos.sort_by(f32::total_cmp);
        let mean = cos.iter().sum::<f32>() / cos.len() as f32;
        log.say(&format!(
            "calibration: cosine(real embedding of perturbed text, seed vector) over {cal} rows: mean {mean:.4}, min {:.4}, median {:.4}",
            cos[0],
            cos[cos.len() / 2]
        ));
        cal_cos = Some(mean);
    }
    let sigma = match (a.sigma, cal_cos) {
        (Some(x), _) => x,
        (None, Some(c)) => (((1.0 / (c * c)) - 1.0).max(0.0) / dim as f32).sqrt(),
        (None, None) => 0.01,
    };
    log.say(&format!(
        "sigma {sigma:.5} (expected cosine of a noisy copy to its seed {:.4})",
        1.0 / (1.0 + dim as f32 * sigma * sigma).sqrt()
    ));
    if a.embed_only {
        return Ok(());
    }
    if let Some(queries) = &a.recall_queries {
        return recall(&a, queries, &embedder, &seed_vecs, s, sigma, &log);
    }

    // 3. Synthesize.
    let kind = match a.kind.as_str() {
        "flat" => IndexKind::Flat,
        "int8" => IndexKind::Int8,
        "hnsw" => IndexKind::hnsw_default(),
        other => bail!("unknown --kind {other:?}"),
    };
    let t = Instant::now();
    let mut docs: Vec<CorpusDoc> = Vec::with_capacity(a.n);
    let mut data: Vec<f32> = Vec::with_capacity(a.n * dim);
    for r in 0..a.n {
        let src = r % s;
        let copy = r / s;
        let p = seeds[src];
        data.extend(row_vector(&seed_vecs, dim, s, sigma, r));
        let (id, text) = if copy == 0 {
            (format!("cuad-{src:06}"), p.text.clone())
        } else {
            (format!("syn-{r:07}"), perturb_text(&p.text, r as u64))
        };
        docs.push(CorpusDoc {
            id,
            title: None,
            text,
            metadata: serde_json::json!({"contract": p.contract, "passage": p.index, "copy": copy}),
        });
    }
    let synth_s = t.elapsed().as_secs_f64();
    let lib_words: usize = docs.iter().map(|d| words(&d.text)).sum();
    log.say(&format!(
        "synthesized {} clauses ({} words) in {synth_s:.1}s; VmHWM {:.0} MB",
        docs.len(),
        lib_words,
        vm_hwm_mb()
    ));

    // 4. Build.
    if Library::exists(&a.out) {
        std::fs::remove_dir_all(&a.out).with_context(|| format!("removing {}", a.out.display()))?;
    }
    let vectors = ClauseVectors {
        info: VectorsInfo {
            model_id: embedder.model_id().to_owned(),
            model_source: DEFAULT_MODEL.to_owned(),
            dim,
            kind,
            long_text: LongTextPolicy::Truncate.tag(),
        },
        data,
    };
    drop(embedder);
    let t = Instant::now();
    let library = Library::build(&a.out, &docs, &BuildOptions::default(), Some(vectors), &log)?;
    let build_s = t.elapsed().as_secs_f64();
    let clauses = library.len();
    drop(library);
    let disk = dir_bytes(&a.out);
    let mut parts = serde_json::Map::new();
    if let Ok(cur) = std::fs::read_to_string(a.out.join("CURRENT")) {
        let gen = a.out.join(cur.trim());
        if let Ok(rd) = std::fs::read_dir(&gen) {
            for e in rd.flatten() {
                parts.insert(
                    e.file_name().to_string_lossy().into_owned(),
                    serde_json::json!(dir_bytes(&e.path())),
                );
            }
        }
    }
    let stages: Vec<serde_json::Value> = log
        .stages
        .lock()
        .map(|v| {
            v.iter()
                .map(|(s, t)| serde_json::json!({"stage": s, "secs": t}))
                .collect()
        })
        .unwrap_or_default();
    let summary = serde_json::json!({
        "contracts": contracts,
        "passages": passages.len(),
        "passage_words": total_words,
        "seeds": s,
        "seeds_computed_this_run": computed,
        "embed_secs": embed_s,
        "calibration_mean_cosine": cal_cos,
        "sigma": sigma,
        "clauses": clauses,
        "library_words": lib_words,
        "kind": a.kind,
        "synth_secs": synth_s,
        "build_secs": build_s,
        "build_stages": stages,
        "disk_bytes": disk,
        "disk_parts": parts,
        "vm_hwm_mb": vm_hwm_mb(),
    });
    let path = a.artifacts.join(format!("summary-{}.json", a.kind));
    std::fs::write(&path, serde_json::to_string_pretty(&summary)?)?;
    println!("{}", serde_json::to_string_pretty(&summary)?);
    Ok(())
}
