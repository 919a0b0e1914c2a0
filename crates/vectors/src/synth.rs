//! Deterministic synthetic embeddings for tests and benchmarks.
//!
//! Uniform random vectors are a poor stand-in for sentence embeddings: in 384
//! dimensions they are all nearly orthogonal, so every index looks perfect
//! (or uniformly terrible). Clause embeddings instead form topical clusters,
//! share a common direction (MiniLM embeddings of legal text have a positive
//! mean cosine), and contain many near-duplicates (boilerplate). The
//! generators here reproduce that structure. Everything is seeded per row, so
//! data is identical regardless of thread count.

use rayon::prelude::*;

/// SplitMix64: tiny, fast, and good enough for synthetic data; avoids a
/// `rand` dependency.
#[derive(Debug, Clone)]
pub struct Rng {
    state: u64,
    spare: Option<f64>,
}

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng {
            state: seed ^ 0x9E37_79B9_7F4A_7C15,
            spare: None,
        }
    }

    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        mix64(self.state)
    }

    /// Uniform in [0, 1).
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// Standard normal (Box–Muller).
    pub fn gaussian(&mut self) -> f64 {
        if let Some(s) = self.spare.take() {
            return s;
        }
        let u1 = 1.0 - self.next_f64(); // (0, 1]
        let u2 = self.next_f64();
        let r = (-2.0 * u1.ln()).sqrt();
        let t = std::f64::consts::TAU * u2;
        self.spare = Some(r * t.sin());
        r * t.cos()
    }
}

/// Finaliser of SplitMix64, also used to derive per-row seeds.
pub fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// L2-normalises in place (no-op for the zero vector).
pub fn normalize(v: &mut [f32]) {
    let norm = v
        .iter()
        .map(|x| f64::from(*x) * f64::from(*x))
        .sum::<f64>()
        .sqrt();
    if norm > 0.0 {
        let inv = (1.0 / norm) as f32;
        v.iter_mut().for_each(|x| *x *= inv);
    }
}

/// Parameters of the clustered mixture.
///
/// Sentence embeddings have a low *intrinsic* dimension: clauses vary along
/// a few dozen semantic directions, not all 384. So centroids and
/// within-cluster variation are drawn in a shared `intrinsic_dim`-dimensional
/// subspace (with decaying variance per direction), plus a little isotropic
/// noise. Isotropic Gaussian clusters would be the wrong benchmark: in 384
/// dimensions all members of such a cluster sit at almost the same distance
/// from a query, a pathologically hard case for any ANN index that real
/// embeddings don't exhibit.
#[derive(Debug, Clone)]
pub struct ClusterSpec {
    pub dim: usize,
    pub centroids: usize,
    /// Dimension of the shared semantic subspace.
    pub intrinsic_dim: usize,
    /// Scale of within-cluster variation inside the subspace (relative to
    /// the centroid spread, which is 1).
    pub spread: f32,
    /// Per-dimension isotropic noise added on top.
    pub sigma: f32,
    /// Weight of the direction shared by all vectors (anisotropy: MiniLM
    /// embeddings of legal text have a clearly positive mean cosine).
    pub shared: f32,
    /// Fraction of rows that are near-duplicates of an earlier row.
    pub near_dup_fraction: f64,
    pub seed: u64,
}

impl ClusterSpec {
    pub fn new(dim: usize, centroids: usize, seed: u64) -> Self {
        ClusterSpec {
            dim,
            centroids: centroids.max(1),
            intrinsic_dim: 48.min(dim),
            spread: 0.35,
            sigma: 0.01,
            shared: 0.6,
            near_dup_fraction: 0.1,
            seed,
        }
    }

    /// (basis of the subspace, row-major `intrinsic_dim x dim`; centroid
    /// coordinates `centroids x intrinsic_dim`; shared direction).
    fn tables(&self) -> (Vec<f32>, Vec<f32>, Vec<f32>) {
        let mut rng = Rng::new(self.seed ^ 0xC3A5_C85C_97CB_3127);
        let r = self.intrinsic_dim.max(1);
        let mut basis: Vec<f32> = (0..r * self.dim).map(|_| rng.gaussian() as f32).collect();
        basis.chunks_exact_mut(self.dim).for_each(normalize);
        let mut shared: Vec<f32> = (0..self.dim).map(|_| rng.gaussian() as f32).collect();
        normalize(&mut shared);
        let coords: Vec<f32> = (0..self.centroids * r)
            .map(|i| rng.gaussian() as f32 * self.scale(i % r))
            .collect();
        (basis, coords, shared)
    }

    /// Decaying variance per semantic direction (a few dominant topics).
    fn scale(&self, j: usize) -> f32 {
        1.0 / (1.0 + j as f32 / 8.0).sqrt()
    }

    fn base_row(&self, t: &(Vec<f32>, Vec<f32>, Vec<f32>), row: u64, out: &mut [f32]) {
        let (basis, coords, shared) = t;
        let r = self.intrinsic_dim.max(1);
        let mut rng = Rng::new(mix64(
            self.seed
                .wrapping_add(row.wrapping_mul(0x2545_F491_4F6C_DD1D)),
        ));
        // Skewed cluster sizes (density ∝ 1/sqrt(rank)): a few very common
        // clause types, a long tail of rare ones.
        let u = rng.next_f64();
        let c = ((u * u) * self.centroids as f64) as usize % self.centroids;
        let mut z: Vec<f32> = coords[c * r..(c + 1) * r].to_vec();
        for (j, zj) in z.iter_mut().enumerate() {
            *zj += self.spread * self.scale(j) * rng.gaussian() as f32;
        }
        for (o, s) in out.iter_mut().zip(shared) {
            *o = self.shared * s * (r as f32).sqrt() * 0.5
                + self.sigma * (r as f32).sqrt() * rng.gaussian() as f32;
        }
        for (zj, b) in z.iter().zip(basis.chunks_exact(self.dim)) {
            for (o, x) in out.iter_mut().zip(b) {
                *o += zj * x;
            }
        }
        normalize(out);
    }

    /// Generates rows `first..first + n` (row-major, normalised).
    pub fn generate(&self, first: u64, n: usize) -> Vec<f32> {
        let tables = self.tables();
        let dim = self.dim;
        let mut out = vec![0f32; n * dim];
        out.par_chunks_mut(dim).enumerate().for_each(|(i, v)| {
            let row = first + i as u64;
            let mut rng = Rng::new(mix64(row ^ self.seed.rotate_left(17)));
            if row > 0 && rng.next_f64() < self.near_dup_fraction {
                // Near-duplicate of an earlier row (boilerplate clause).
                let src = rng.below(row);
                self.base_row(&tables, src, v);
                for x in v.iter_mut() {
                    *x += 0.3 * self.sigma * rng.gaussian() as f32;
                }
                normalize(v);
            } else {
                self.base_row(&tables, row, v);
            }
        });
        out
    }
}

/// Returns a perturbed, re-normalised copy of `v`: `v + sigma * N(0, I)`.
pub fn perturb(v: &[f32], sigma: f32, rng: &mut Rng) -> Vec<f32> {
    let mut out: Vec<f32> = v
        .iter()
        .map(|x| x + sigma * rng.gaussian() as f32)
        .collect();
    normalize(&mut out);
    out
}
