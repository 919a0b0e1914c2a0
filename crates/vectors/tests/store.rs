//! Persistence: roundtrips, model checks, corruption and crash safety.

use std::fs;
use std::path::{Path, PathBuf};

use precedent_vectors::synth::ClusterSpec;
use precedent_vectors::{
    build, open, read_manifest, FlatIndex, HnswIndex, HnswParams, IndexKind, QuantizedIndex,
    VectorError, VectorIndex,
};

const MODEL: &str = "sentence-transformers/all-MiniLM-L6-v2";

fn kinds() -> [IndexKind; 3] {
    [
        IndexKind::Flat,
        IndexKind::Int8,
        IndexKind::Hnsw {
            m: 8,
            ef_construction: 40,
            ef_search: 32,
        },
    ]
}

fn data(n: usize, dim: usize) -> Vec<f32> {
    ClusterSpec::new(dim, 10, 1).generate(0, n)
}

fn file_of(dir: &Path, role: &str) -> PathBuf {
    let m = read_manifest(dir).unwrap();
    dir.join(&m.files.iter().find(|f| f.role == role).unwrap().name)
}

#[test]
fn save_reopen_roundtrip_all_kinds() {
    let dim = 24;
    let v = data(500, dim);
    for kind in kinds() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("vectors");
        let idx = build(kind, dim, v.clone()).unwrap();
        let m = idx.save(&dir, MODEL).unwrap();
        assert_eq!(
            (m.kind, m.dim, m.count, m.model_id.as_str()),
            (kind, dim, 500, MODEL)
        );
        assert_eq!(read_manifest(&dir).unwrap(), m);
        let back = open(&dir, MODEL, dim).unwrap();
        assert_eq!((back.kind(), back.dim(), back.len()), (kind, dim, 500));
        for r in [0usize, 123, 499] {
            let q = &v[r * dim..(r + 1) * dim];
            assert_eq!(
                back.search(q, 10).unwrap(),
                idx.search(q, 10).unwrap(),
                "{kind:?}"
            );
        }
        // Typed openers agree and reject the wrong kind.
        match kind {
            IndexKind::Flat => {
                FlatIndex::open(&dir, MODEL, dim).unwrap();
                assert!(QuantizedIndex::open(&dir, MODEL, dim).is_err());
            }
            IndexKind::Int8 => {
                QuantizedIndex::open(&dir, MODEL, dim).unwrap();
                assert!(HnswIndex::open(&dir, MODEL, dim).is_err());
            }
            IndexKind::Hnsw { .. } => {
                HnswIndex::open(&dir, MODEL, dim).unwrap();
                assert!(FlatIndex::open(&dir, MODEL, dim).is_err());
            }
        }
    }
}

#[test]
fn empty_store_roundtrips() {
    for kind in kinds() {
        let tmp = tempfile::tempdir().unwrap();
        let idx = build(kind, 8, Vec::new()).unwrap();
        idx.save(tmp.path(), MODEL).unwrap();
        let back = open(tmp.path(), MODEL, 8).unwrap();
        assert!(back.is_empty());
        assert_eq!(back.search(&[0.3; 8], 5).unwrap(), vec![]);
    }
}

#[test]
fn reopened_hnsw_accepts_adds() {
    let dim = 16;
    let v = data(1200, dim);
    let tmp = tempfile::tempdir().unwrap();
    let params = HnswParams {
        m: 8,
        ef_construction: 40,
        ef_search: 64,
        ..Default::default()
    };
    HnswIndex::build(dim, params, v[..600 * dim].to_vec())
        .unwrap()
        .save(tmp.path(), MODEL)
        .unwrap();
    let mut idx = HnswIndex::open(tmp.path(), MODEL, dim).unwrap();
    assert_eq!(idx.params().ef_search, 64);
    idx.add(&v[600 * dim..]).unwrap();
    let q = &v[1100 * dim..1101 * dim];
    assert_eq!(idx.search(q, 1).unwrap()[0].row, 1100);
    idx.save(tmp.path(), MODEL).unwrap();
    assert_eq!(open(tmp.path(), MODEL, dim).unwrap().len(), 1200);
}

#[test]
fn model_and_dim_mismatch_are_clear_errors() {
    let tmp = tempfile::tempdir().unwrap();
    build(IndexKind::Flat, 384, data(3, 384))
        .unwrap()
        .save(tmp.path(), MODEL)
        .unwrap();
    let err = open(tmp.path(), "BAAI/bge-base-en-v1.5", 768)
        .err()
        .unwrap();
    assert!(matches!(err, VectorError::ModelMismatch { .. }));
    assert_eq!(
        err.to_string(),
        "index built by model sentence-transformers/all-MiniLM-L6-v2 (dim 384), but the query model is \
         BAAI/bge-base-en-v1.5 (dim 768): rebuild with `precedent index`"
    );
    // Same model name, different dim, and same dim, different model.
    assert!(matches!(
        open(tmp.path(), MODEL, 768),
        Err(VectorError::ModelMismatch { .. })
    ));
    assert!(matches!(
        open(tmp.path(), "other", 384),
        Err(VectorError::ModelMismatch { .. })
    ));
}

#[test]
fn missing_and_bad_manifest() {
    let tmp = tempfile::tempdir().unwrap();
    assert!(matches!(
        open(tmp.path(), MODEL, 8),
        Err(VectorError::MissingManifest(_))
    ));
    fs::write(tmp.path().join("manifest.json"), "{ not json").unwrap();
    assert!(matches!(
        open(tmp.path(), MODEL, 8),
        Err(VectorError::BadManifest { .. })
    ));

    build(IndexKind::Flat, 8, data(4, 8))
        .unwrap()
        .save(tmp.path(), MODEL)
        .unwrap();
    let text = fs::read_to_string(tmp.path().join("manifest.json")).unwrap();
    fs::write(
        tmp.path().join("manifest.json"),
        text.replace("\"format_version\": 1", "\"format_version\": 99"),
    )
    .unwrap();
    assert!(matches!(
        open(tmp.path(), MODEL, 8),
        Err(VectorError::UnsupportedVersion { found: 99, .. })
    ));
    // A manifest may not point outside its directory.
    let evil = text.replace("\"name\": \"vectors.", "\"name\": \"../vectors.");
    fs::write(tmp.path().join("manifest.json"), evil).unwrap();
    assert!(matches!(
        open(tmp.path(), MODEL, 8),
        Err(VectorError::BadManifest { .. })
    ));
}

#[test]
fn truncated_or_corrupt_files_error_without_panicking() {
    let dim = 16;
    let v = data(300, dim);
    for kind in kinds() {
        for role in ["vectors", "codes", "scales", "graph"] {
            let tmp = tempfile::tempdir().unwrap();
            build(kind, dim, v.clone())
                .unwrap()
                .save(tmp.path(), MODEL)
                .unwrap();
            if !read_manifest(tmp.path())
                .unwrap()
                .files
                .iter()
                .any(|f| f.role == role)
            {
                continue;
            }
            let path = file_of(tmp.path(), role);
            let bytes = fs::read(&path).unwrap();
            // Truncated by one byte, by half, and to nothing.
            for len in [bytes.len() - 1, bytes.len() / 2, 0] {
                fs::write(&path, &bytes[..len]).unwrap();
                let err = open(tmp.path(), MODEL, dim)
                    .err()
                    .expect("truncated file must fail");
                assert!(
                    matches!(err, VectorError::Corrupt { .. }),
                    "{kind:?}/{role}/{len}: {err}"
                );
                assert!(err.to_string().contains("corrupt"), "{err}");
            }
            // Missing file.
            fs::remove_file(&path).unwrap();
            assert!(matches!(
                open(tmp.path(), MODEL, dim),
                Err(VectorError::Io { .. })
            ));
        }
    }
}

#[test]
fn corrupt_contents_of_right_size_are_detected() {
    let dim = 16;
    let v = data(300, dim);
    // Non-finite float in the vector file.
    let tmp = tempfile::tempdir().unwrap();
    build(IndexKind::Flat, dim, v.clone())
        .unwrap()
        .save(tmp.path(), MODEL)
        .unwrap();
    let path = file_of(tmp.path(), "vectors");
    let mut bytes = fs::read(&path).unwrap();
    bytes[40..44].copy_from_slice(&f32::NAN.to_le_bytes());
    fs::write(&path, &bytes).unwrap();
    assert!(matches!(
        open(tmp.path(), MODEL, dim),
        Err(VectorError::Corrupt { .. })
    ));

    // Graph: bad magic, out-of-range neighbour, oversized neighbour count.
    let hnsw = IndexKind::Hnsw {
        m: 8,
        ef_construction: 40,
        ef_search: 32,
    };
    build(hnsw, dim, v.clone())
        .unwrap()
        .save(tmp.path(), MODEL)
        .unwrap();
    let path = file_of(tmp.path(), "graph");
    let good = fs::read(&path).unwrap();
    let header = 32;
    let layer0 = header + 300; // after the per-node levels
    let cases: Vec<(usize, [u8; 4])> = vec![
        (0, *b"XXXX"),
        (layer0 + 4, 1_000_000u32.to_le_bytes()), // first link of node 0
        (layer0, 999u32.to_le_bytes()),           // count of node 0
    ];
    for (off, patch) in cases {
        let mut b = good.clone();
        b[off..off + 4].copy_from_slice(&patch);
        fs::write(&path, &b).unwrap();
        let err = open(tmp.path(), MODEL, dim)
            .err()
            .expect("corrupt graph must fail");
        assert!(matches!(err, VectorError::Corrupt { .. }), "{err}");
    }
    // An upper-layer link to a node that doesn't exist on that layer.
    let levels = &good[header..header + 300];
    let level0_node = levels.iter().position(|&l| l == 0).unwrap() as u32;
    let upper = layer0 + 300 * (2 * 8 + 1) * 4; // first upper list (first node with level >= 1)
    let mut b = good.clone();
    b[upper..upper + 4].copy_from_slice(&1u32.to_le_bytes());
    b[upper + 4..upper + 8].copy_from_slice(&level0_node.to_le_bytes());
    fs::write(&path, &b).unwrap();
    let err = open(tmp.path(), MODEL, dim)
        .err()
        .expect("bad upper link must fail");
    assert!(err.to_string().contains("without that layer"), "{err}");

    fs::write(&path, &good).unwrap();
    open(tmp.path(), MODEL, dim).unwrap();
}

#[test]
fn interrupted_save_leaves_previous_store_usable() {
    let dim = 8;
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let old = build(IndexKind::Flat, dim, data(10, dim)).unwrap();
    old.save(dir, MODEL).unwrap();
    let old_files = read_manifest(dir).unwrap().files;

    // Simulate a crash after new data files were written but before the
    // manifest was committed: stray temp and next-generation files.
    fs::write(dir.join("vectors.deadbeef-1-0.f32.tmp"), [1u8; 7]).unwrap();
    fs::write(
        dir.join("vectors.deadbeef-1-1.f32"),
        vec![0u8; 20 * dim * 4],
    )
    .unwrap();
    fs::write(dir.join("manifest.json.tmp"), "{ half written").unwrap();
    let back = open(dir, MODEL, dim).unwrap();
    assert_eq!(back.len(), 10);

    // The next successful save commits and sweeps leftovers, but keeps
    // files that aren't ours.
    fs::write(dir.join("README.txt"), "mine").unwrap();
    let new = build(IndexKind::Flat, dim, data(20, dim)).unwrap();
    new.save(dir, MODEL).unwrap();
    assert_eq!(open(dir, MODEL, dim).unwrap().len(), 20);
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    let m = read_manifest(dir).unwrap();
    assert_eq!(names.len(), 3, "{names:?}"); // manifest, README, current vectors file
    assert!(names.contains(&"README.txt".to_string()));
    assert!(names.contains(&m.files[0].name));
    assert!(!names.contains(&old_files[0].name));
}

#[test]
fn random_byte_corruption_never_panics() {
    // Flip random bytes anywhere in any data file: opening must either fail
    // cleanly or yield an index that can still be searched.
    let dim = 8;
    let v = data(200, dim);
    let mut rng = precedent_vectors::synth::Rng::new(5);
    for kind in kinds() {
        let tmp = tempfile::tempdir().unwrap();
        build(kind, dim, v.clone())
            .unwrap()
            .save(tmp.path(), MODEL)
            .unwrap();
        let m = read_manifest(tmp.path()).unwrap();
        for f in &m.files {
            let path = tmp.path().join(&f.name);
            let good = fs::read(&path).unwrap();
            for _ in 0..100 {
                let mut b = good.clone();
                let at = rng.below(b.len() as u64) as usize;
                b[at] ^= 1 << rng.below(8);
                fs::write(&path, &b).unwrap();
                if let Ok(idx) = open(tmp.path(), MODEL, dim) {
                    let _ = idx.search(&v[..dim], 5).unwrap();
                }
            }
            fs::write(&path, &good).unwrap();
        }
    }
}
