//! HNSW recall and behaviour against exact search.

use precedent_vectors::synth::{perturb, ClusterSpec, Rng};
use precedent_vectors::{FlatIndex, HnswIndex, HnswParams, Neighbor, RowSet, VectorIndex};

fn recall(truth: &[Neighbor], got: &[Neighbor]) -> f64 {
    let hits = got
        .iter()
        .filter(|g| truth.iter().any(|t| t.row == g.row))
        .count();
    hits as f64 / truth.len().max(1) as f64
}

fn queries(spec: &ClusterSpec, first: u64, n: usize, seed: u64) -> Vec<Vec<f32>> {
    let mut rng = Rng::new(seed);
    spec.generate(first, n)
        .chunks_exact(spec.dim)
        .map(|q| perturb(q, 0.02, &mut rng))
        .collect()
}

#[test]
fn hnsw_recall_at_10_on_20k_clustered() {
    let dim = 384;
    let n = 20_000;
    let spec = ClusterSpec::new(dim, 400, 7);
    let data = spec.generate(0, n);
    let exact = FlatIndex::from_vec(dim, data.clone()).unwrap();
    let params = HnswParams {
        m: 16,
        ef_construction: 100,
        ef_search: 64,
        ..Default::default()
    };
    let idx = HnswIndex::build(dim, params, data).unwrap();
    assert_eq!(idx.len(), n);
    let qs = queries(&spec, n as u64, 200, 1);
    let mut total = 0.0;
    for q in &qs {
        let truth = exact.search(q, 10).unwrap();
        let got = idx.search(q, 10).unwrap();
        assert_eq!(got.len(), 10);
        assert!(got.windows(2).all(|w| w[0].score >= w[1].score));
        total += recall(&truth, &got);
    }
    let r = total / qs.len() as f64;
    eprintln!("hnsw recall@10 (20k, M=16, efc=100, ef=64) = {r:.4}");
    assert!(r >= 0.95, "recall@10 = {r}");

    // Filtered search: only allowed rows, and good recall against a
    // filtered exact scan, both for a dense and a very sparse allow-list.
    let dense: RowSet = (0..n as u32).filter(|r| r % 2 == 0).collect();
    let sparse: RowSet = (0..n as u32).filter(|r| r % 97 == 0).collect();
    for f in [&dense, &sparse] {
        let mut total = 0.0;
        for q in qs.iter().take(50) {
            let truth = exact.search_filtered(q, 10, Some(f)).unwrap();
            let got = idx.search_filtered(q, 10, Some(f)).unwrap();
            assert!(got.iter().all(|g| f.contains(g.row)));
            total += recall(&truth, &got);
        }
        let r = total / 50.0;
        eprintln!("hnsw filtered recall@10 ({} allowed) = {r:.4}", f.len());
        assert!(r >= 0.95, "filtered recall = {r}");
    }
}

#[test]
fn hnsw_edge_cases() {
    let dim = 8;
    let idx = HnswIndex::new(dim, HnswParams::default()).unwrap();
    assert_eq!(idx.search(&[0.1; 8], 5).unwrap(), vec![]);
    assert!(idx.search(&[0.1; 9], 5).is_err());
    assert!(HnswIndex::new(
        dim,
        HnswParams {
            m: 1,
            ..Default::default()
        }
    )
    .is_err());

    // k = 0, k > n, single node.
    let mut idx = HnswIndex::new(dim, HnswParams::default()).unwrap();
    idx.add(&[1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]).unwrap();
    assert_eq!(idx.search(&[1.0; 8], 0).unwrap(), vec![]);
    assert_eq!(idx.search(&[1.0; 8], 10).unwrap().len(), 1);
    let none = RowSet::new();
    assert_eq!(
        idx.search_filtered(&[1.0; 8], 10, Some(&none)).unwrap(),
        vec![]
    );
}

#[test]
fn hnsw_small_index_returns_everything_exactly() {
    // With ef >= n the beam covers the whole (connected) graph, so results
    // must equal exact search, ties included.
    let dim = 16;
    let spec = ClusterSpec::new(dim, 5, 3);
    let mut data = spec.generate(0, 300);
    let dup = data[..dim].to_vec();
    data.extend_from_slice(&dup); // row 300 duplicates row 0 exactly
    let exact = FlatIndex::from_vec(dim, data.clone()).unwrap();
    let idx = HnswIndex::build(
        dim,
        HnswParams {
            ef_search: 400,
            ..Default::default()
        },
        data.clone(),
    )
    .unwrap();
    for r in [0usize, 10, 299] {
        let q = &data[r * dim..(r + 1) * dim];
        assert_eq!(idx.search(q, 301).unwrap(), exact.search(q, 301).unwrap());
    }
    let top = idx.search(&data[..dim], 2).unwrap();
    assert_eq!((top[0].row, top[1].row), (0, 300));
}

#[test]
fn hnsw_incremental_add_keeps_recall() {
    let dim = 64;
    let spec = ClusterSpec::new(dim, 50, 9);
    let all = spec.generate(0, 6000);
    let params = HnswParams {
        ef_search: 100,
        ..Default::default()
    };
    let mut idx = HnswIndex::build(dim, params, all[..3000 * dim].to_vec()).unwrap();
    for chunk in all[3000 * dim..].chunks(1000 * dim) {
        idx.add(chunk).unwrap();
    }
    let exact = FlatIndex::from_vec(dim, all.clone()).unwrap();
    assert_eq!(idx.len(), 6000);
    // Rows from the last batches are found.
    for r in [3000usize, 4500, 5999] {
        let q = &all[r * dim..(r + 1) * dim];
        let got = idx.search(q, 3).unwrap();
        assert!(
            got.iter().any(|g| g.row == r as u32),
            "row {r} not found: {got:?}"
        );
    }
    let qs = queries(&spec, 6000, 100, 2);
    let r: f64 = qs
        .iter()
        .map(|q| recall(&exact.search(q, 10).unwrap(), &idx.search(q, 10).unwrap()))
        .sum::<f64>()
        / qs.len() as f64;
    eprintln!("recall@10 after incremental adds = {r:.4}");
    assert!(r >= 0.95, "recall after adds = {r}");
}

/// Contract libraries repeat boilerplate: many clauses are near-copies of each other, the hard
/// case for graph search (at 1M synthetic clauses built from copies, recall@10 at ef 64 fell to
/// 0.34-0.68; see BENCHMARKS.md). 300 base vectors with 40 tight copies each; queries are held-out
/// bases. Guards the current level (0.89-0.90, thread-order dependent) against regressions. "Keep pruned connections" raised
/// it to 0.94 here but lowered recall at 1M (0.68 → 0.61 at ef 64), so it is not used.
#[test]
fn hnsw_recall_on_near_duplicate_clusters() {
    let dim = 384;
    let spec = ClusterSpec::new(dim, 120, 11);
    let bases = spec.generate(0, 400);
    let mut rng = Rng::new(5);
    let mut data = Vec::new();
    for base in bases.chunks_exact(dim).take(300) {
        for _ in 0..40 {
            data.extend(perturb(base, 0.005, &mut rng));
        }
    }
    let n = data.len() / dim;
    let exact = FlatIndex::from_vec(dim, data.clone()).unwrap();
    let params = HnswParams {
        m: 16,
        ef_construction: 100,
        ef_search: 64,
        ..Default::default()
    };
    let idx = HnswIndex::build(dim, params, data).unwrap();
    assert_eq!(idx.len(), n);
    let qs: Vec<Vec<f32>> = bases
        .chunks_exact(dim)
        .skip(300)
        .map(|b| perturb(b, 0.02, &mut rng))
        .collect();
    let mut total = 0.0;
    for q in &qs {
        let truth = exact.search(q, 10).unwrap();
        let got = idx.search(q, 10).unwrap();
        total += recall(&truth, &got);
    }
    let r = total / qs.len() as f64;
    eprintln!("hnsw recall@10 on near-duplicate clusters = {r:.4}");
    assert!(r >= 0.85, "recall@10 = {r}");
}
