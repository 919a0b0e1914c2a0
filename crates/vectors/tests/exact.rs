//! Exact indexes against a naive reference.

use precedent_vectors::kernels::dot_f32;
use precedent_vectors::synth::{ClusterSpec, Rng};
use precedent_vectors::{FlatIndex, Neighbor, QuantizedIndex, RowSet, VectorError, VectorIndex};

/// Reference: score every allowed row with the same kernel, sort by
/// (score desc, row asc), truncate.
fn naive(data: &[f32], dim: usize, q: &[f32], k: usize, filter: Option<&RowSet>) -> Vec<Neighbor> {
    let mut all: Vec<Neighbor> = data
        .chunks_exact(dim)
        .enumerate()
        .filter(|(r, _)| filter.is_none_or(|f| f.contains(*r as u32)))
        .map(|(r, v)| Neighbor {
            row: r as u32,
            score: dot_f32(q, v),
        })
        .collect();
    all.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.row.cmp(&b.row)));
    all.truncate(k);
    all
}

fn random_unit(n: usize, dim: usize, seed: u64) -> Vec<f32> {
    let mut rng = Rng::new(seed);
    let mut v: Vec<f32> = (0..n * dim).map(|_| rng.gaussian() as f32).collect();
    v.chunks_exact_mut(dim)
        .for_each(precedent_vectors::l2_normalize);
    v
}

/// Random data where every third row duplicates an earlier one, so exact
/// score ties are everywhere.
fn data_with_ties(n: usize, dim: usize, seed: u64) -> Vec<f32> {
    let mut v = random_unit(n, dim, seed);
    for r in (3..n).step_by(3) {
        let src = (r * 7919) % r;
        let (a, b) = v.split_at_mut(r * dim);
        b[..dim].copy_from_slice(&a[src * dim..(src + 1) * dim]);
    }
    v
}

#[test]
fn flat_matches_naive_including_ties_and_edge_ks() {
    let dim = 48;
    let n = 700;
    let data = data_with_ties(n, dim, 1);
    for parallel_min_rows in [usize::MAX, 64] {
        let mut idx = FlatIndex::from_vec(dim, data.clone()).unwrap();
        idx.set_parallel_min_rows(parallel_min_rows);
        for qi in 0..20 {
            // Half the queries are stored rows, which produces tied top hits.
            let q: Vec<f32> = if qi % 2 == 0 {
                data[(qi * 31 % n) * dim..][..dim].to_vec()
            } else {
                random_unit(1, dim, 100 + qi as u64)
            };
            for k in [0, 1, 5, 10, 100, n, n + 50, usize::MAX] {
                let got = idx.search(&q, k).unwrap();
                assert_eq!(got, naive(&data, dim, &q, k, None), "k={k} qi={qi}");
            }
        }
    }
}

#[test]
fn flat_filters_sparse_and_dense() {
    let dim = 32;
    let n = 2000;
    let data = data_with_ties(n, dim, 2);
    let mut idx = FlatIndex::from_vec(dim, data.clone()).unwrap();
    let q = random_unit(1, dim, 9);
    let sparse: RowSet = [5u32, 17, 1999, 3, 400, 5000].into_iter().collect();
    let dense: RowSet = (0..n as u32).filter(|r| r % 3 != 0).collect();
    let empty = RowSet::new();
    for parallel_min_rows in [usize::MAX, 100] {
        idx.set_parallel_min_rows(parallel_min_rows);
        for f in [&sparse, &dense, &empty] {
            for k in [0, 1, 3, 10, 5000] {
                let got = idx.search_filtered(&q, k, Some(f)).unwrap();
                assert_eq!(got, naive(&data, dim, &q, k, Some(f)));
                assert!(got.iter().all(|nb| f.contains(nb.row)));
            }
        }
    }
    // Out-of-range rows in the filter are ignored, not a panic.
    let got = idx.search_filtered(&q, 10, Some(&sparse)).unwrap();
    assert_eq!(got.len(), 5);
}

#[test]
fn empty_index_and_bad_queries() {
    let idx = FlatIndex::new(8).unwrap();
    assert!(idx.is_empty());
    assert_eq!(idx.search(&[0.5; 8], 10).unwrap(), vec![]);
    assert!(matches!(
        idx.search(&[0.5; 7], 10),
        Err(VectorError::DimMismatch {
            expected: 8,
            got: 7
        })
    ));
    let mut q = [0.1f32; 8];
    q[3] = f32::NAN;
    assert!(matches!(
        idx.search(&q, 1),
        Err(VectorError::InvalidVector(_))
    ));
    let qi = QuantizedIndex::new(8).unwrap();
    assert_eq!(qi.search(&[0.5; 8], 10).unwrap(), vec![]);
    assert!(FlatIndex::new(0).is_err());
}

#[test]
fn incremental_add_then_search() {
    let dim = 16;
    let data = random_unit(300, dim, 5);
    let mut idx = FlatIndex::new(dim).unwrap();
    let mut q8 = QuantizedIndex::new(dim).unwrap();
    for (i, chunk) in data.chunks(100 * dim).enumerate() {
        let rows = idx.add(chunk).unwrap();
        assert_eq!(rows, (i as u32 * 100)..(i as u32 + 1) * 100);
        assert_eq!(q8.add(chunk).unwrap(), rows);
    }
    assert_eq!(idx.len(), 300);
    // A row finds itself first, including rows added in later batches.
    for r in [0usize, 150, 299] {
        let q = &data[r * dim..(r + 1) * dim];
        assert_eq!(idx.search(q, 1).unwrap()[0].row, r as u32);
        assert_eq!(q8.search(q, 1).unwrap()[0].row, r as u32);
    }
    // Invalid batches are rejected whole.
    assert!(idx.add(&[1.0; 15]).is_err());
    let mut bad = vec![0.1f32; 32];
    bad[20] = f32::INFINITY;
    assert!(idx.add(&bad).is_err());
    assert_eq!(idx.len(), 300);
}

#[test]
fn batch_search_equals_single() {
    let dim = 40;
    let data = data_with_ties(1000, dim, 11);
    let idx = FlatIndex::from_vec(dim, data.clone()).unwrap();
    let queries = random_unit(70, dim, 12);
    let batch = idx.search_batch(&queries, 7).unwrap();
    assert_eq!(batch.len(), 70);
    for (qi, got) in batch.iter().enumerate() {
        assert_eq!(
            *got,
            idx.search(&queries[qi * dim..(qi + 1) * dim], 7).unwrap()
        );
    }
}

fn recall_at(truth: &[Neighbor], got: &[Neighbor]) -> f64 {
    let hits = got
        .iter()
        .filter(|g| truth.iter().any(|t| t.row == g.row))
        .count();
    hits as f64 / truth.len().max(1) as f64
}

#[test]
fn int8_recall_at_10_vs_exact() {
    let dim = 384;
    let n = 20_000;
    let spec = ClusterSpec::new(dim, 200, 42);
    let data = spec.generate(0, n);
    let exact = FlatIndex::from_vec(dim, data.clone()).unwrap();
    let q8 = QuantizedIndex::from_vectors(dim, &data).unwrap();
    let mut rng = Rng::new(77);
    let held_out = spec.generate(n as u64, 100);
    let mut total = 0.0;
    let mut max_err = 0.0f32;
    for q in held_out.chunks_exact(dim) {
        let q = precedent_vectors::synth::perturb(q, 0.02, &mut rng);
        let truth = exact.search(&q, 10).unwrap();
        let got = q8.search(&q, 10).unwrap();
        total += recall_at(&truth, &got);
        for g in &got {
            let true_score = dot_f32(&q, exact.row(g.row).unwrap());
            max_err = max_err.max((true_score - g.score).abs());
        }
    }
    let recall = total / 100.0;
    eprintln!("int8 recall@10 = {recall:.4}, max |score error| = {max_err:.4}");
    assert!(recall >= 0.95, "int8 recall@10 = {recall}");
    assert!(max_err < 0.02, "int8 score error {max_err}");
    assert!(q8.memory_bytes() * 3 < exact.memory_bytes());
}
