//! Embedding cache: hits, persistence across instances, and robustness to damage.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use precedent_models::{EmbedOptions, Embedder, EmbeddingCache, LongTextPolicy};

fn embedder() -> &'static Embedder {
    static E: OnceLock<Embedder> = OnceLock::new();
    E.get_or_init(|| {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tiny-cross-encoder");
        Embedder::load(dir.to_str().unwrap()).unwrap()
    })
}

const TEXTS: &[&str] = &[
    "This Agreement shall be governed by the laws of Delaware.",
    "Notices shall be in writing.",
    "Notices shall be in writing.",
    "",
    "Either party may terminate for convenience.",
];

fn segments(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for ns in std::fs::read_dir(root).unwrap() {
        for f in std::fs::read_dir(ns.unwrap().path()).unwrap() {
            let p = f.unwrap().path();
            if p.extension().is_some_and(|e| e == "bin") {
                out.push(p);
            }
        }
    }
    out
}

#[test]
fn second_run_is_served_from_disk() {
    let tmp = tempfile::tempdir().unwrap();
    let opts = EmbedOptions::default();
    let direct = embedder().embed(TEXTS).unwrap();

    let cache = EmbeddingCache::open(tmp.path()).unwrap();
    let (first, s1) = cache
        .get_or_compute_stats(embedder(), TEXTS, &opts, &|_| {})
        .unwrap();
    assert_eq!(s1.hits, 0);
    assert_eq!(s1.computed, 4, "duplicate text computed once");
    assert_eq!(first, direct);

    // A fresh instance reads what the first one wrote.
    let cache = EmbeddingCache::open(tmp.path()).unwrap();
    let last = std::cell::Cell::new(0);
    let (second, s2) = cache
        .get_or_compute_stats(embedder(), TEXTS, &opts, &|n| last.set(n))
        .unwrap();
    assert_eq!(s2.hits, TEXTS.len());
    assert_eq!(second, direct);
    assert_eq!(last.get(), TEXTS.len());

    // Another policy is another namespace.
    let chunk = EmbedOptions {
        policy: LongTextPolicy::ChunkMean { overlap_tokens: 16 },
        ..EmbedOptions::default()
    };
    let (_, s3) = cache
        .get_or_compute_stats(embedder(), TEXTS, &chunk, &|_| {})
        .unwrap();
    assert_eq!(s3.hits, 0);
}

#[test]
fn corrupt_and_partial_files_are_ignored() {
    let tmp = tempfile::tempdir().unwrap();
    let opts = EmbedOptions::default();
    let direct = embedder().embed(TEXTS).unwrap();
    EmbeddingCache::open(tmp.path())
        .unwrap()
        .get_or_compute(embedder(), TEXTS, &opts, &|_| {})
        .unwrap();
    let segs = segments(tmp.path());
    assert_eq!(segs.len(), 1);
    let seg = &segs[0];
    let ns_dir = seg.parent().unwrap().to_path_buf();

    // Flip a byte inside the first record's vector, and leave debris of a crashed
    // writer (temp file) and a truncated segment next to it.
    let mut data = std::fs::read(seg).unwrap();
    data[16 + 40] ^= 0xff;
    std::fs::write(seg, &data).unwrap();
    std::fs::write(ns_dir.join(".tmp-crashed"), &data[..30]).unwrap();
    std::fs::write(ns_dir.join("seg-0-truncated.bin"), &data[..data.len() - 9]).unwrap();
    std::fs::write(ns_dir.join("seg-1-garbage.bin"), b"garbage").unwrap();

    let cache = EmbeddingCache::open(tmp.path()).unwrap();
    let (got, stats) = cache
        .get_or_compute_stats(embedder(), TEXTS, &opts, &|_| {})
        .unwrap();
    assert_eq!(got, direct, "damaged entries are recomputed, not returned");
    assert!(stats.hits >= 2 && stats.hits < TEXTS.len(), "{stats:?}");

    let cache = EmbeddingCache::open(tmp.path()).unwrap();
    let (got, stats) = cache
        .get_or_compute_stats(embedder(), TEXTS, &opts, &|_| {})
        .unwrap();
    assert_eq!(got, direct);
    assert_eq!(stats.hits, TEXTS.len());
}
