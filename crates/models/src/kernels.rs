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
///
/// Below -87 it returns exactly 0, not e^-87: a masked attention key (score -10,000) would
/// otherwise get probability 1.6e-38, and its products in the attention matmuls and their
/// gradients are subnormal floats, which x86 multiplies about a hundred times slower. That
/// made a fine-tuning step over padded batches 5 to 30 times slower than over unpadded
/// ones (docs/experiments/unfair-tos.md).
#[inline(always)]
fn exp_neg(x: f32) -> f32 {
    let underflows = x < -87.0;
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
    let e = p * f32::from_bits(bits);
    if underflows {
        0.0
    } else {
        e
    }
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
    /// An additive bias on the scores that depends only on the key's offset from the
    /// query (MPNet's relative position bias), as `[heads, 2*len - 1]`: the entry for
    /// query `i`, key `j` of head `h` is at `h*(2*len-1) + (len-1) + j - i`. Indexing
    /// by offset keeps it one row per head instead of a `[heads, len, len]` copy per
    /// layer, and each query row's slice is contiguous.
    pub position_bias: Option<&'a [f32]>,
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
        let span = 2 * len - 1;
        if self.position_bias.is_some_and(|p| p.len() != nh * span) {
            candle_core::bail!("fused-attention: position bias shape mismatch");
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
                    if let Some(pb) = self.position_bias {
                        let table = &pb[head * span..(head + 1) * span];
                        for (i, row) in scores.chunks_exact_mut(n).enumerate() {
                            // Keys j = 0..n of query i sit at offsets (len-1) - i + j.
                            let from = len - 1 - i;
                            row.iter_mut()
                                .zip(&table[from..from + n])
                                .for_each(|(s, b)| *s += b);
                        }
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

/// Softmax over the last dimension with a backward pass, for training: candle-nn's fused
/// softmax has no gradient and its composed one makes five single-threaded passes over
/// the `[batch, heads, len, len]` scores, forward and again backward.
pub(crate) struct TrainableSoftmax;

impl CustomOp1 for TrainableSoftmax {
    fn name(&self) -> &'static str {
        "trainable-softmax"
    }

    fn cpu_fwd(&self, s: &CpuStorage, l: &Layout) -> Result<(CpuStorage, Shape)> {
        let x = contiguous(s, l)?;
        let n = l.dims().last().copied().unwrap_or(1).max(1);
        let mut out = x.to_vec();
        out.par_chunks_mut(n * rows_per_task(n))
            .for_each(|rows| rows.chunks_exact_mut(n).for_each(softmax_row));
        Ok((CpuStorage::F32(out), l.shape().clone()))
    }

    /// d softmax: grad_in = p · (grad_out − Σ grad_out·p), row by row.
    fn bwd(&self, _arg: &Tensor, res: &Tensor, grad_res: &Tensor) -> Result<Option<Tensor>> {
        let n = res.dims().last().copied().unwrap_or(1).max(1);
        let p = res.flatten_all()?.to_vec1::<f32>()?;
        let mut g = grad_res.flatten_all()?.to_vec1::<f32>()?;
        g.par_chunks_mut(n * rows_per_task(n))
            .zip(p.par_chunks(n * rows_per_task(n)))
            .for_each(|(g, p)| {
                for (g, p) in g.chunks_exact_mut(n).zip(p.chunks_exact(n)) {
                    let dot: f32 = g.iter().zip(p).map(|(a, b)| a * b).sum();
                    g.iter_mut().zip(p).for_each(|(g, p)| *g = p * (*g - dot));
                }
            });
        Ok(Some(Tensor::from_vec(g, res.shape(), res.device())?))
    }
}

/// GELU (erf form) with a backward pass, for training; one parallel pass each way
/// instead of candle's single-threaded `gelu_erf` and its composed gradient.
pub(crate) struct TrainableGelu;

impl CustomOp1 for TrainableGelu {
    fn name(&self) -> &'static str {
        "trainable-gelu"
    }

    fn cpu_fwd(&self, s: &CpuStorage, l: &Layout) -> Result<(CpuStorage, Shape)> {
        let x = contiguous(s, l)?;
        let mut out = vec![0f32; x.len()];
        out.par_chunks_mut(PAR_MIN_ELEMS)
            .zip(x.par_chunks(PAR_MIN_ELEMS))
            .for_each(|(o, x)| o.iter_mut().zip(x).for_each(|(o, &x)| *o = gelu_erf(x)));
        Ok((CpuStorage::F32(out), l.shape().clone()))
    }

    /// d gelu(x) / dx = Φ(x) + x·φ(x).
    fn bwd(&self, arg: &Tensor, _res: &Tensor, grad_res: &Tensor) -> Result<Option<Tensor>> {
        let x = arg.flatten_all()?.to_vec1::<f32>()?;
        let mut g = grad_res.flatten_all()?.to_vec1::<f32>()?;
        const INV_SQRT_2PI: f32 = 0.398_942_3;
        g.par_chunks_mut(PAR_MIN_ELEMS)
            .zip(x.par_chunks(PAR_MIN_ELEMS))
            .for_each(|(g, x)| {
                g.iter_mut().zip(x).for_each(|(g, &x)| {
                    let cdf = 0.5 * (1.0 + erf(x * std::f32::consts::FRAC_1_SQRT_2));
                    let pdf = INV_SQRT_2PI * exp_neg(-0.5 * x * x);
                    *g *= cdf + x * pdf;
                })
            });
        Ok(Some(Tensor::from_vec(g, arg.shape(), arg.device())?))
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
    fn trainable_ops_match_candle_forward_and_backward() {
        use candle_core::{Device, Var, D};
        let values: Vec<f32> = (0..6 * 40)
            .map(|i| ((i * 37 % 101) as f32 - 50.0) / 13.0)
            .collect();
        let weights: Vec<f32> = (0..6 * 40)
            .map(|i| ((i * 11 % 7) as f32 - 3.0) / 5.0)
            .collect();
        let x = Var::from_vec(values, (6, 40), &Device::Cpu).unwrap();
        let w = Tensor::from_vec(weights, (6, 40), &Device::Cpu).unwrap();
        let close = |a: &Tensor, b: &Tensor| {
            let d = (a - b).unwrap().abs().unwrap().max_all().unwrap();
            d.to_scalar::<f32>().unwrap()
        };
        let pairs: [(Tensor, Tensor); 2] = [
            (
                x.apply_op1(TrainableSoftmax).unwrap(),
                candle_nn::ops::softmax(x.as_tensor(), D::Minus1).unwrap(),
            ),
            (
                x.apply_op1(TrainableGelu).unwrap(),
                x.as_tensor().gelu_erf().unwrap(),
            ),
        ];
        for (ours, theirs) in pairs {
            assert!(close(&ours, &theirs) < 1e-5);
            let g1 = (ours * &w).unwrap().sum_all().unwrap().backward().unwrap();
            let g2 = (theirs * &w)
                .unwrap()
                .sum_all()
                .unwrap()
                .backward()
                .unwrap();
            let (g1, g2) = (g1.get(&x).unwrap(), g2.get(&x).unwrap());
            assert!(
                close(g1, g2) < 1e-5,
                "gradient differs by {}",
                close(g1, g2)
            );
        }
    }

    #[test]
    fn exp_matches_std() {
        let mut worst = 0f32;
        for i in 0..=100_000 {
            let x = -(i as f32) * 0.000_86;
            let rel = (exp_neg(x) - x.exp()).abs() / x.exp();
            worst = worst.max(rel);
        }
        assert!(worst < 5e-7, "{worst}");
        assert!(exp_neg(-87.0) >= f32::MIN_POSITIVE);
        assert_eq!(exp_neg(-87.5), 0.0);
        assert_eq!(exp_neg(-10_000.0), 0.0);
    }

    #[test]
    fn masked_softmax_gives_exact_zeros_not_subnormals() {
        let mut row = [0.5f32, -10_000.0, 1.0, -10_000.0, -90.0];
        softmax_row(&mut row);
        assert!(row.iter().all(|p| *p == 0.0 || p.is_normal()), "{row:?}");
        assert_eq!((row[1], row[3], row[4]), (0.0, 0.0, 0.0));
        assert!((row.iter().sum::<f32>() - 1.0).abs() < 1e-6);
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
