//! Benchmark of the vector indexes on a synthetic clause library.
//!
//! ```text
//! cargo run --release -p precedent-tools --bin vector_bench -- \
//!     --n 1000000 --dim 384 --queries 1000 [--seed-vectors FILE] [--sigma 0.03]
//! ```
//!
//! Library vectors are either perturbed copies of real embeddings
//! (`--seed-vectors`, raw little-endian f32) or a clustered mixture that
//! mimics clause embeddings (see `precedent_vectors::synth`). Queries are
//! perturbed held-out vectors, never rows of the library, because querying
//! with stored rows makes every index look perfect.
//!
//! Options: --n, --dim, --queries, --seed-vectors FILE, --sigma (library
//! noise, seed mode), --query-sigma, --centroids, --m, --ef-construction,
//! --ef LIST (comma-separated ef_search values), --latency-queries (sample
//! size for flat/int8 latency, which scan everything), --kinds LIST
//! (flat,int8,hnsw), --out DIR (stores are written there), --reuse (open the
//! stores in --out instead of building them).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use precedent_vectors::synth::{mix64, normalize, perturb, ClusterSpec, Rng};
use precedent_vectors::{
    kernels, open, FlatIndex, HnswIndex, HnswParams, Neighbor, QuantizedIndex, VectorIndex,
};
use rayon::prelude::*;

const MODEL: &str = "bench/synthetic";

struct Args {
    n: usize,
    dim: usize,
    queries: usize,
    seed_vectors: Option<PathBuf>,
    sigma: f32,
    query_sigma: f32,
    centroids: usize,
    m: usize,
    ef_construction: usize,
    ef: Vec<usize>,
    latency_queries: usize,
    kinds: Vec<String>,
    out: PathBuf,
    reuse: bool,
}

fn parse_args() -> Result<Args, String> {
    let mut a = Args {
        n: 100_000,
        dim: 384,
        queries: 1000,
        seed_vectors: None,
        sigma: 0.03,
        query_sigma: 0.03,
        centroids: 4000,
        m: 16,
        ef_construction: 100,
        ef: vec![16, 32, 64, 128, 256],
        latency_queries: 100,
        kinds: vec!["flat".into(), "int8".into(), "hnsw".into()],
        out: std::env::temp_dir().join("precedent-vector-bench"),
        reuse: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        if flag == "--reuse" {
            a.reuse = true;
            continue;
        }
        let val = it.next().ok_or(format!("{flag} needs a value"))?;
        let num = |v: &str| v.parse::<usize>().map_err(|e| format!("{flag}: {e}"));
        let flt = |v: &str| v.parse::<f32>().map_err(|e| format!("{flag}: {e}"));
        match flag.as_str() {
            "--n" => a.n = num(&val)?,
            "--dim" => a.dim = num(&val)?,
            "--queries" => a.queries = num(&val)?,
            "--seed-vectors" => a.seed_vectors = Some(PathBuf::from(val)),
            "--sigma" => a.sigma = flt(&val)?,
            "--query-sigma" => a.query_sigma = flt(&val)?,
            "--centroids" => a.centroids = num(&val)?,
            "--m" => a.m = num(&val)?,
            "--ef-construction" => a.ef_construction = num(&val)?,
            "--ef" => a.ef = val.split(',').map(num).collect::<Result<_, _>>()?,
            "--latency-queries" => a.latency_queries = num(&val)?,
            "--kinds" => a.kinds = val.split(',').map(str::to_string).collect(),
            "--out" => a.out = PathBuf::from(val),
            _ => return Err(format!("unknown flag {flag}")),
        }
    }
    if a.dim == 0 || a.n == 0 || a.queries == 0 {
        return Err("--n, --dim and --queries must be > 0".into());
    }
    Ok(a)
}

fn proc_status(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse::<u64>().ok())
        })
        .map(|kb| kb * 1024)
        .unwrap_or(0)
}

fn rss() -> u64 {
    proc_status("VmRSS:")
}

fn mib(b: u64) -> String {
    format!("{:.0} MiB", b as f64 / (1024.0 * 1024.0))
}

fn signed_mib(b: i64) -> String {
    format!("{:+.0} MiB", b as f64 / (1024.0 * 1024.0))
}

fn dir_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .filter_map(|e| e.metadata().ok())
                .map(|m| m.len())
                .sum()
        })
        .unwrap_or(0)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

#[derive(Clone, Copy, Default)]
struct Lat {
    p50: f64,
    p99: f64,
}

fn latencies(queries: &[Vec<f32>], mut f: impl FnMut(&[f32]) -> Vec<Neighbor>) -> Lat {
    let mut t: Vec<f64> = queries
        .iter()
        .map(|q| {
            let s = Instant::now();
            let r = f(q);
            let e = ms(s.elapsed());
            std::hint::black_box(r);
            e
        })
        .collect();
    t.sort_by(f64::total_cmp);
    let p = |x: usize| t[(t.len() * x / 100).min(t.len() - 1)];
    Lat {
        p50: p(50),
        p99: p(99),
    }
}

fn recall10(truth: &[Vec<Neighbor>], got: &[Vec<Neighbor>]) -> f64 {
    let total: f64 = truth
        .iter()
        .zip(got)
        .map(|(t, g)| {
            let hits = g
                .iter()
                .take(10)
                .filter(|x| t.iter().take(10).any(|y| y.row == x.row))
                .count();
            hits as f64 / t.len().clamp(1, 10) as f64
        })
        .sum();
    total / truth.len().max(1) as f64
}

fn read_seed_vectors(path: &Path, dim: usize) -> Result<Vec<f32>, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if bytes.len() % (4 * dim) != 0 {
        return Err(format!(
            "{}: size {} is not a multiple of 4*dim",
            path.display(),
            bytes.len()
        ));
    }
    let mut v: Vec<f32> = bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    if v.iter().any(|x| !x.is_finite()) {
        return Err("seed vectors contain non-finite values".into());
    }
    v.chunks_exact_mut(dim).for_each(normalize);
    Ok(v)
}

/// Library vectors (row-major), query vectors, and a description of both.
type Data = (Vec<f32>, Vec<Vec<f32>>, String);

fn make_data(a: &Args) -> Result<Data, String> {
    let dim = a.dim;
    if let Some(path) = &a.seed_vectors {
        let seeds = read_seed_vectors(path, dim)?;
        let s = seeds.len() / dim;
        if s < 2 {
            return Err("need at least 2 seed vectors".into());
        }
        // Hold out 10% of the real vectors: queries derive only from those,
        // so no query is a perturbed copy of a library row's source.
        let held = (s / 10).max(1);
        let train = s - held;
        let mut lib = vec![0f32; a.n * dim];
        lib.par_chunks_mut(dim).enumerate().for_each(|(i, v)| {
            let mut rng = Rng::new(mix64(i as u64 ^ 0xB1B));
            let src = if i < train {
                i
            } else {
                rng.below(train as u64) as usize
            };
            let p = perturb(&seeds[src * dim..(src + 1) * dim], a.sigma, &mut rng);
            v.copy_from_slice(&p);
        });
        let mut rng = Rng::new(99);
        let queries = (0..a.queries)
            .map(|j| {
                let src = train + j % held;
                perturb(&seeds[src * dim..(src + 1) * dim], a.query_sigma, &mut rng)
            })
            .collect();
        let desc = format!(
            "perturbed copies of {train} real vectors from {} (sigma {}), queries from {held} held-out vectors (sigma {})",
            path.display(),
            a.sigma,
            a.query_sigma
        );
        Ok((lib, queries, desc))
    } else {
        let spec = ClusterSpec::new(dim, a.centroids, 2024);
        let lib = spec.generate(0, a.n);
        let held = spec.generate(a.n as u64, a.queries);
        let mut rng = Rng::new(99);
        let queries = held
            .chunks_exact(dim)
            .map(|q| perturb(q, a.query_sigma, &mut rng))
            .collect();
        let desc = format!(
            "clustered mixture: {} centroids (skewed sizes, shared direction), sigma {}, {}% near-duplicates; queries = held-out rows + noise sigma {}",
            spec.centroids,
            spec.sigma,
            (spec.near_dup_fraction * 100.0) as u32,
            a.query_sigma
        );
        Ok((lib, queries, desc))
    }
}

struct Row {
    name: String,
    build: String,
    disk: String,
    mem: String,
    top10: Lat,
    top100: Lat,
    recall: String,
}

fn main() {
    let a = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("vector_bench: {e}");
            std::process::exit(2);
        }
    };
    let dim = a.dim;
    let load_start = loadavg();
    eprintln!("generating {} x {dim} library ...", a.n);
    let t = Instant::now();
    let (lib, queries, desc) = match make_data(&a) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("vector_bench: {e}");
            std::process::exit(2);
        }
    };
    eprintln!("  {:.1}s; RSS {}", t.elapsed().as_secs_f64(), mib(rss()));
    let lat_q: Vec<Vec<f32>> = queries.iter().take(a.latency_queries).cloned().collect();
    let flat_q: Vec<f32> = queries.concat();
    let mut rows: Vec<Row> = Vec::new();
    let mut notes: Vec<String> = Vec::new();
    std::fs::create_dir_all(&a.out).ok();

    // Ground truth (exact f32 top-10) via the blocked batch scan.
    let t = Instant::now();
    let truth = FlatIndex::from_vec(dim, lib.clone())
        .and_then(|f| f.search_batch(&flat_q, 10))
        .unwrap_or_else(|e| panic!("ground truth: {e}"));
    notes.push(format!(
        "exact ground truth for {} queries (blocked batch scan, {} threads): {:.1}s",
        queries.len(),
        rayon::current_num_threads(),
        t.elapsed().as_secs_f64()
    ));

    let kinds = a.kinds.clone();
    let mut lib = Some(lib);
    for kind in &kinds {
        let dir = a.out.join(kind);
        let rss0 = rss() as i64;
        let t = Instant::now();
        let built: Box<dyn VectorIndex> = if a.reuse {
            match open(&dir, MODEL, dim) {
                Ok(i) => i,
                Err(e) => panic!("--reuse: {e}"),
            }
        } else {
            let v = if kind == "hnsw" {
                lib.take().unwrap_or_default()
            } else {
                lib.as_ref().cloned().unwrap_or_default()
            };
            match kind.as_str() {
                "flat" => Box::new(FlatIndex::from_vec(dim, v).expect("flat")),
                "int8" => Box::new(QuantizedIndex::from_vectors(dim, &v).expect("int8")),
                "hnsw" => {
                    let p = HnswParams {
                        m: a.m,
                        ef_construction: a.ef_construction,
                        ..Default::default()
                    };
                    Box::new(HnswIndex::build(dim, p, v).expect("hnsw"))
                }
                other => panic!("unknown kind {other}"),
            }
        };
        let build_time = t.elapsed();
        let rss_delta = rss() as i64 - rss0;
        let heap = built.memory_bytes() as u64;
        let build = if a.reuse {
            format!("open {:.1}s", build_time.as_secs_f64())
        } else {
            format!("{:.1}s", build_time.as_secs_f64())
        };
        eprintln!(
            "{kind}: {build}, heap {}, RSS delta {}",
            mib(heap),
            signed_mib(rss_delta)
        );
        if !a.reuse {
            let t = Instant::now();
            built.save(&dir, MODEL).expect("save");
            let save = t.elapsed();
            // Re-open to measure load time and prove no rebuild is needed.
            let t = Instant::now();
            let reopened = open(&dir, MODEL, dim).expect("reopen");
            let load = t.elapsed();
            let same = queries
                .iter()
                .take(20)
                .all(|q| reopened.search(q, 10).ok() == built.search(q, 10).ok());
            notes.push(format!(
                "{kind}: save {:.1}s, reopen {:.1}s (results identical after reopen: {same})",
                save.as_secs_f64(),
                load.as_secs_f64()
            ));
            drop(reopened);
        }
        let disk = mib(dir_bytes(&dir));
        let mem = format!("{} (RSS {})", mib(heap), signed_mib(rss_delta));
        match kind.as_str() {
            "flat" | "int8" => {
                // Re-opened as the concrete type to toggle per-query parallelism.
                let mut typed_flat;
                let mut typed_q8;
                let idx: &mut dyn VectorIndexExt = if kind == "flat" {
                    typed_flat = FlatIndex::open(&dir, MODEL, dim).expect("open flat");
                    &mut typed_flat
                } else {
                    typed_q8 = QuantizedIndex::open(&dir, MODEL, dim).expect("open int8");
                    &mut typed_q8
                };
                drop(built);
                let recall = if kind == "int8" {
                    idx.set_threads(usize::MAX);
                    let ix: &dyn VectorIndex = idx.as_index();
                    let got: Vec<Vec<Neighbor>> = queries
                        .par_iter()
                        .map(|q| ix.search(q, 10).unwrap_or_default())
                        .collect();
                    format!("{:.4}", recall10(&truth, &got))
                } else {
                    "1.0000 (exact)".into()
                };
                for (label, threshold) in [("1 thread", usize::MAX), ("rayon", 0)] {
                    idx.set_threads(threshold);
                    let top10 =
                        latencies(&lat_q, |q| idx.as_index().search(q, 10).unwrap_or_default());
                    let top100 = latencies(&lat_q, |q| {
                        idx.as_index().search(q, 100).unwrap_or_default()
                    });
                    let threads = if threshold == 0 {
                        rayon::current_num_threads()
                    } else {
                        1
                    };
                    rows.push(Row {
                        name: format!("{kind} ({label}, {threads}t)"),
                        build: build.clone(),
                        disk: disk.clone(),
                        mem: mem.clone(),
                        top10,
                        top100,
                        recall: recall.clone(),
                    });
                }
            }
            _ => {
                // HNSW: query-time ef sweep on the same graph.
                let h = HnswIndex::open(&dir, MODEL, dim).expect("open hnsw");
                drop(built);
                for &ef in &a.ef {
                    let got: Vec<Vec<Neighbor>> = queries
                        .par_iter()
                        .map(|q| h.search_with_ef(q, 10, ef, None).unwrap_or_default())
                        .collect();
                    let recall = recall10(&truth, &got);
                    let top10 = latencies(&queries, |q| {
                        h.search_with_ef(q, 10, ef, None).unwrap_or_default()
                    });
                    let top100 = latencies(&queries, |q| {
                        h.search_with_ef(q, 100, ef, None).unwrap_or_default()
                    });
                    rows.push(Row {
                        name: format!("hnsw M={} efc={} ef={ef} (1t)", a.m, a.ef_construction),
                        build: build.clone(),
                        disk: disk.clone(),
                        mem: mem.clone(),
                        top10,
                        top100,
                        recall: format!("{recall:.4}"),
                    });
                }
                notes.push(
                    "hnsw top-100 uses ef = max(ef, 100) (the beam can't be narrower than k)"
                        .into(),
                );
            }
        }
    }

    println!("\n### precedent-vectors benchmark\n");
    println!(
        "- n = {}, dim = {dim}, queries = {} (flat/int8 latency on the first {}), {} rayon threads",
        a.n,
        queries.len(),
        lat_q.len(),
        rayon::current_num_threads()
    );
    println!("- data: {desc}");
    println!("- kernel: {}", kernels::active_kernel());
    println!("- cpu: {}", cpu_name());
    println!(
        "- load average at start / end: {} / {} (other processes compete for the cores when > threads)",
        load_start,
        loadavg()
    );
    println!(
        "- peak RSS (VmHWM) {}, final RSS {}",
        mib(proc_status("VmHWM:")),
        mib(rss())
    );
    for n in &notes {
        println!("- {n}");
    }
    println!();
    println!("| index | build | disk | memory (heap, RSS Δ) | top-10 p50 | top-10 p99 | top-100 p50 | top-100 p99 | recall@10 |");
    println!("|---|---|---|---|---|---|---|---|---|");
    for r in rows {
        println!(
            "| {} | {} | {} | {} | {:.3} ms | {:.3} ms | {:.3} ms | {:.3} ms | {} |",
            r.name,
            r.build,
            r.disk,
            r.mem,
            r.top10.p50,
            r.top10.p99,
            r.top100.p50,
            r.top100.p99,
            r.recall
        );
    }
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "n/a".into())
}

fn cpu_name() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into())
}

/// Lets the bench toggle per-query parallelism on the exact indexes.
trait VectorIndexExt {
    fn set_threads(&mut self, parallel_min_rows: usize);
    fn as_index(&self) -> &dyn VectorIndex;
}

impl VectorIndexExt for FlatIndex {
    fn set_threads(&mut self, r: usize) {
        self.set_parallel_min_rows(r)
    }
    fn as_index(&self) -> &dyn VectorIndex {
        self
    }
}

impl VectorIndexExt for QuantizedIndex {
    fn set_threads(&mut self, r: usize) {
        self.set_parallel_min_rows(r)
    }
    fn as_index(&self) -> &dyn VectorIndex {
        self
    }
}
