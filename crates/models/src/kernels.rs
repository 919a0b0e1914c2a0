//! Fused CPU kernels for the parts of a BERT layer that are not big matmuls.
//!
//! Profiling candle's generic ops on MiniLM showed them taking about as long as the
//! projections: `gelu_erf` and `softmax` are single-threaded scalar loops, attention
//! is hundreds of tiny multithreaded GEMMs over padded sequences, and each bias add,
//! residual add and head transpose is a separate pass over memory. Here each step is
//! one parallel, vectorisable pass, and attention skips padding entirely. `exp` and
//! `erf` use polynomial approximations accurate to ~2e-7, far below the rounding
//! noise of the f32 matmuls, so outputs still match PyTorch to ~1e-6.

use candle_core::{CpuStorage, CustomOp1, CustomOp2, Layout, Result, Shape, Tensor};
use rayon::prelude::*;

/// Rows per rayon task: large enough to amortise scheduling, small enough to balance
/// two to a few dozen cores.
const PAR_MIN_ELEMS: usize = 16 * 1024;

fn contiguous<'a>(s: &'a CpuStorage, l: &Layout) -> Result<&'a [f32]> {
    let data = s.as_slice::<f32>()?;
    match l.contiguous_offsets() {
        Some((a, b)) => Ok(&data[a..b]),
        None => candle_core::bail!("fused kernel needs a contiguous f32 tensor"),
    }
}

fn rows_per_task(row_len: usize) -> usize {
    (PAR_MIN_ELEMS / row_len.max(1)).max(1)
}

/// e^x for x <= 0 (softmax after max subtraction, erf tail); branch-free so that
/// the compiler vectorises loops calling it.
#[inline(always)]
fn exp_neg(x: f32) -> f32 {
    let x = x.max(-87.0);
    const LOG2E: f32 = std::f32::consts::LOG2_E;
    // Round x*log2(e) to nearest via the 1.5*2^23 trick (no float->int round call).
    let t = x * LOG2E + 12_582_912.0;
    let n = t - 12_582_912.0;
    // Cody-Waite reduction: r = x - n*ln2 in two parts for accuracy.
    let r = x - n * 0.693_145_75 - n * 1.428_606_8e-6;
    // exp(r) on [-ln2/2, ln2/2], degree-6 Taylor/minimax (rel. error < 2e-7).
    let p = 1.0
        + r * (1.0
            + r * (0.5
                + r * (0.166_666_67
                    + r * (0.041_666_668 + r * (0.008_333_334 + r * 0.001_388_889)))));
    let bits = ((n as i32 + 127) as u32) << 23;
    p * f32::from_bits(bits)
}

/// erf(x) via Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7).
#[inline(always)]
fn erf(x: f32) -> f32 {
    let a = x.abs();
    let t = 1.0 / (1.0 + 0.327_591_1 * a);
    let y = 1.0
        - (((((1.061_405_4 * t - 1.453_152_1) * t) + 1.421_413_8) * t - 0.284_496_74) * t
            + 0.254_829_6)
            * t
            * exp_neg(-a * a);
    y.copysign(x)
}

#[inline(always)]
fn gelu_erf(x: f32) -> f32 {
    0.5 * x * (1.0 + erf(x * std::f32::consts::FRAC_1_SQRT_2))
}

#[inline(always)]
fn gelu_tanh(x: f32) -> f32 {
    // tanh(z) = 1 - 2/(e^{2z}+1), computed with e^{-2|z|} to stay in exp_neg's range.
    let z = 0.797_884_6 * (x + 0.044_715 * x * x * x);
    let e = exp_neg(-2.0 * z.abs());
    let th = ((1.0 - e) / (1.0 + e)).copysign(z);
    0.5 * x * (1.0 + th)
}

/// Eight independent accumulators: float reductions cannot be reordered by the
/// compiler, so a single accumulator serialises on add latency and never vectorises.
const LANES: usize = 8;

#[inline(always)]
fn lane_max(x: &[f32]) -> f32 {
    let mut acc = [f32::NEG_INFINITY; LANES];
    let mut it = x.chunks_exact(LANES);
    for c in &mut it {
        for i in 0..LANES {
            acc[i] = if c[i] > acc[i] { c[i] } else { acc[i] };
        }
    }
    let m = it
        .remainder()
        .iter()
        .fold(f32::NEG_INFINITY, |a, &b| a.max(b));
    acc.iter().fold(m, |a, &b| a.max(b))
}

#[inline(always)]
fn lane_sum(x: &[f32]) -> f32 {
    let mut acc = [0f32; LANES];
    let mut it = x.chunks_exact(LANES);
    for c in &mut it {
        for i in 0..LANES {
            acc[i] += c[i];
        }
    }
    it.remainder().iter().sum::<f32>() + acc.iter().sum::<f32>()
}

#[derive(Debug, Clone, Copy)]
pub(crate) enum Act {
    GeluErf,
    GeluTanh,
    Relu,
}

/// `act(x + bias)` over a `[rows, n]` matrix.
pub(crate) struct BiasAct<'a> {
    pub bias: &'a [f32],
    pub act: Act,
}

impl CustomOp1 for BiasAct<'_> {
    fn name(&self) -> &'static str {
        "bias-act"
    }

    fn cpu_fwd(&self, s: &CpuStorage, l: &Layout) -> Result<(CpuStorage, Shape)> {
        let x = contiguous(s, l)?;
        let n = self.bias.len();
        if n == 0 || x.len() % n != 0 {
            candle_core::bail!("bias-act: bias length {n} does not divide {}", x.len());
        }
        let mut out = vec![0f32; x.len()];
        let b = self.bias;
        let act = self.act;
        out.par_chunks_mut(n * rows_per_task(n))
            .zip(x.par_chunks(n * rows_per_task(n)))
            .for_each(|(o, x)| {
                for (o, x) in o.chunks_exact_mut(n).zip(x.chunks_exact(n)) {
                    match act {
                        Act::GeluErf => o
                            .iter_mut()
                            .zip(x.iter().zip(b))
                            .for_each(|(o, (x, b))| *o = gelu_erf(x + b)),
                        Act::GeluTanh => o
                            .iter_mut()
                            .zip(x.iter().zip(b))
                            .for_each(|(o, (x, b))| *o = gelu_tanh(x + b)),
                        Act::Relu => o
                            .iter_mut()
                            .zip(x.iter().zip(b))
                            .for_each(|(o, (x, b))| *o = (x + b).max(0.0)),
                    }
                }
            });
        Ok((CpuStorage::F32(out), l.shape().clone()))
    }
}

/// `LayerNorm(x + bias + residual)` over rows of length `bias.len()`.
pub(crate) struct BiasResidualNorm<'a> {
    pub bias: &'a [f32],
    pub gamma: &'a [f32],
    pub beta: &'a [f32],
    pub eps: f32,
}

impl CustomOp2 for BiasResidualNorm<'_> {
    fn name(&self) -> &'static str {
        "bias-residual-layernorm"
    }

    fn cpu_fwd(
        &self,
        s1: &CpuStorage,
        l1: &Layout,
        s2: &CpuStorage,
        l2: &Layout,
    ) -> Result<(CpuStorage, Shape)> {
        let x = contiguous(s1, l1)?;
        let r = contiguous(s2, l2)?;
        let n = self.bias.len();
        if n == 0 || x.len() != r.len() || x.len() % n != 0 {
            candle_core::bail!("bias-residual-layernorm: shape mismatch");
        }
        let mut out = vec![0f32; x.len()];
        let chunk = n * rows_per_task(n);
        out.par_chunks_mut(chunk)
            .zip(x.par_chunks(chunk).zip(r.par_chunks(chunk)))
            .for_each(|(o, (x, r))| {
                for (o, (x, r)) in o
                    .chunks_exact_mut(n)
                    .zip(x.chunks_exact(n).zip(r.chunks_exact(n)))
                {
                    for ((o, x), (r, b)) in o.iter_mut().zip(x).zip(r.iter().zip(self.bias)) {
                        *o = x + r + b;
                    }
                    let mean = lane_sum(o) / n as f32;
                    o.iter_mut().for_each(|v| *v -= mean);
                    let mut sq = [0f32; LANES];
                    let mut it = o.chunks_exact(LANES);
                    for c in &mut it {
                        for i in 0..LANES {
                            sq[i] += c[i] * c[i];
                        }
                    }
                    let var =
                        it.remainder().iter().map(|v| v * v).sum::<f32>() + sq.iter().sum::<f32>();
                    let inv = 1.0 / (var / n as f32 + self.eps).sqrt();
                    for ((o, g), b) in o.iter_mut().zip(self.gamma).zip(self.beta) {
                        *o = *o * inv * g + b;
                    }
                }
            });
        Ok((CpuStorage::F32(out), l1.shape().clone()))
    }
}

/// Softmax of one row in place.
#[inline(always)]
fn softmax_row(row: &mut [f32]) {
    let max = lane_max(row);
    row.iter_mut().for_each(|v| *v = exp_neg(*v - max));
    let inv = 1.0 / lane_sum(row);
    row.iter_mut().for_each(|v| *v *= inv);
}

/// Multi-head self-attention from a `[batch*len, 3*hidden]` QKV projection (bias not
/// yet added) to the `[batch*len, hidden]` context, one sequence per task.
///
/// Doing it per sequence lets each sequence use only its real length: padded query
/// rows and padded keys are never computed (no mask, no wasted FLOPs), the score
/// matrix stays in cache, and heads are read and written in place through strides,
/// so there are no transpose copies. Candle's batched matmul instead runs hundreds of
/// tiny multithreaded GEMMs, which is slow on few cores.
pub(crate) struct FusedAttention<'a> {
    pub bias: &'a [f32],
    pub lens: &'a [usize],
    pub len: usize,
    pub heads: usize,
    pub head_dim: usize,
}

impl CustomOp1 for FusedAttention<'_> {
    fn name(&self) -> &'static str {
        "fused-attention"
    }

    fn cpu_fwd(&self, s: &CpuStorage, l: &Layout) -> Result<(CpuStorage, Shape)> {
        let x = contiguous(s, l)?;
        let (len, nh, d) = (self.len, self.heads, self.head_dim);
        let h = nh * d;
        let b = self.lens.len();
        if len == 0 || x.len() != b * len * 3 * h || self.bias.len() != 3 * h {
            candle_core::bail!("fused-attention: shape mismatch");
        }
        let mut out = vec![0f32; b * len * h];
        out.par_chunks_mut(len * h)
            .zip(x.par_chunks(len * 3 * h))
            .zip(self.lens.par_iter())
            .for_each(|((o, x), &valid)| {
                let n = valid.clamp(1, len);
                let mut qkv = Vec::with_capacity(n * 3 * h);
                for row in x.chunks_exact(3 * h).take(n) {
                    qkv.extend(row.iter().zip(self.bias).map(|(a, b)| a + b));
                }
                let mut scores = vec![0f32; n * n];
                let w = (3 * h) as isize;
                for head in 0..nh {
                    // SAFETY: every index gemm touches is in bounds: rows < n of
                    // `qkv` (n x 3h) at columns < 3h, `scores` is n x n, and rows < n
                    // <= len of `o` (len x h) at columns head*d..head*d+d <= h.
                    unsafe {
                        gemm::gemm(
                            n,
                            n,
                            d,
                            scores.as_mut_ptr(),
                            1,
                            n as isize,
                            false,
                            qkv.as_ptr().add(head * d),
                            1,
                            w,
                            qkv.as_ptr().add(h + head * d),
                            w,
                            1,
                            0.0,
                            1.0,
                            false,
                            false,
                            false,
                            gemm::Parallelism::None,
                        );
                    }
                    scores.chunks_exact_mut(n).for_each(softmax_row);
                    unsafe {
                        gemm::gemm(
                            n,
                            d,
                            n,
                            o.as_mut_ptr().add(head * d),
                            1,
                            h as isize,
                            false,
                            scores.as_ptr(),
                            1,
                            n as isize,
                            qkv.as_ptr().add(2 * h + head * d),
                            1,
                            w,
                            0.0,
                            1.0,
                            false,
                            false,
                            false,
                            gemm::Parallelism::None,
                        );
                    }
                }
            });
        Ok((CpuStorage::F32(out), Shape::from((b * len, h))))
    }
}

/// Host copy of a small f32 parameter tensor, for use by the kernels above.
pub(crate) fn host(t: &Tensor) -> Result<Vec<f32>> {
    t.flatten_all()?.to_vec1::<f32>()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exp_matches_std() {
        let mut worst = 0f32;
        for i in 0..=100_000 {
            let x = -(i as f32) * 0.000_86;
            let rel = (exp_neg(x) - x.exp()).abs() / x.exp();
            worst = worst.max(rel);
        }
        assert!(worst < 5e-7, "{worst}");
        assert_eq!(exp_neg(-200.0), exp_neg(-87.0));
        assert!(exp_neg(-200.0) < 1e-37);
    }

    #[test]
    fn gelu_matches_reference() {
        // Reference values from torch.nn.functional.gelu (erf and tanh variants).
        let cases = [
            (-3.0f32, -0.004_050_23, -0.003_637_43),
            (-1.0, -0.158_655_26, -0.158_808),
            (-0.1, -0.046_017_22, -0.046_017_25),
            (0.0, 0.0, 0.0),
            (0.5, 0.345_731_23, 0.345_714),
            (2.0, 1.954_499_7, 1.954_597_7),
            (10.0, 10.0, 10.0),
        ];
        for (x, erf_ref, tanh_ref) in cases {
            assert!(
                (gelu_erf(x) - erf_ref).abs() < 2e-6,
                "erf gelu({x}) = {}",
                gelu_erf(x)
            );
            assert!(
                (gelu_tanh(x) - tanh_ref).abs() < 2e-6,
                "tanh gelu({x}) = {}",
                gelu_tanh(x)
            );
        }
    }
}
