//! Dot-product kernels.
//!
//! Exact search spends >95% of its time here, so the kernels are written for
//! throughput: the portable versions keep 16 independent accumulators so LLVM
//! can vectorise them without `-ffast-math` (a single running sum is a serial
//! dependency chain it is not allowed to reassociate), and on x86_64 an
//! explicit AVX2+FMA version is picked at run time. Runtime detection (rather
//! than `-C target-cpu`) keeps release binaries portable to any x86_64; when
//! the crate *is* compiled with AVX2 enabled, `is_x86_feature_detected!`
//! folds to a constant and the check disappears.
//!
//! Results differ from a naive left-to-right sum in the last bits because the
//! summation order differs; callers must not compare scores across kernels
//! with `==`.

/// Dot product of two f32 slices (over the shorter length).
#[inline]
pub fn dot_f32(a: &[f32], b: &[f32]) -> f32 {
    #[cfg(target_arch = "x86_64")]
    {
        if x86::has_avx2_fma() {
            // SAFETY: the CPU supports AVX2 and FMA (checked just above).
            return unsafe { x86::dot_f32_avx2(a, b) };
        }
    }
    dot_f32_portable(a, b)
}

/// Scores `out.len()` consecutive rows of `block` (row-major, `dim` wide)
/// against `query`.
///
/// Exists so the CPU-feature check happens once per block rather than once
/// per row, and so the row loop is compiled inside the AVX2 function where
/// the dot product can be inlined.
pub fn dot_f32_block(query: &[f32], block: &[f32], dim: usize, out: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    {
        if x86::has_avx2_fma() {
            // SAFETY: the CPU supports AVX2 and FMA (checked just above).
            unsafe { x86::dot_f32_block_avx2(query, block, dim, out) };
            return;
        }
    }
    for (o, row) in out.iter_mut().zip(block.chunks_exact(dim)) {
        *o = dot_f32_portable(query, row);
    }
}

/// Dot product of two i8 slices, accumulated exactly in i32.
///
/// With codes clamped to [-127, 127] a 384-dim product is at most
/// 384 * 127^2 ≈ 6.2M, far from i32 overflow; dimensions up to ~130k are safe.
#[inline]
pub fn dot_i8(a: &[i8], b: &[i8]) -> i32 {
    #[cfg(target_arch = "x86_64")]
    {
        if x86::has_avx2() {
            // SAFETY: the CPU supports AVX2 (checked just above).
            return unsafe { x86::dot_i8_avx2(a, b) };
        }
    }
    dot_i8_portable(a, b)
}

/// Block version of [`dot_i8`]; see [`dot_f32_block`] for why it exists.
pub fn dot_i8_block(query: &[i8], block: &[i8], dim: usize, out: &mut [i32]) {
    #[cfg(target_arch = "x86_64")]
    {
        if x86::has_avx2() {
            // SAFETY: the CPU supports AVX2 (checked just above).
            unsafe { x86::dot_i8_block_avx2(query, block, dim, out) };
            return;
        }
    }
    for (o, row) in out.iter_mut().zip(block.chunks_exact(dim)) {
        *o = dot_i8_portable(query, row);
    }
}

/// Portable f32 dot product that LLVM auto-vectorises (SSE2 on baseline
/// x86_64, NEON on aarch64, AVX2/AVX-512 with `target-cpu=native`).
#[inline]
pub fn dot_f32_portable(a: &[f32], b: &[f32]) -> f32 {
    const LANES: usize = 16;
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut acc = [0.0f32; LANES];
    let ca = a.chunks_exact(LANES);
    let cb = b.chunks_exact(LANES);
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for i in 0..LANES {
            acc[i] += x[i] * y[i];
        }
    }
    let mut tail = 0.0f32;
    for (x, y) in ra.iter().zip(rb) {
        tail += x * y;
    }
    // Pairwise reduction keeps the rounding error balanced.
    let mut width = LANES / 2;
    while width > 0 {
        for i in 0..width {
            acc[i] += acc[i + width];
        }
        width /= 2;
    }
    acc[0] + tail
}

/// Portable i8 dot product. The i16 products of i8 values are exact, and
/// LLVM turns this shape into `pmaddwd`-style code.
#[inline]
pub fn dot_i8_portable(a: &[i8], b: &[i8]) -> i32 {
    const LANES: usize = 16;
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut acc = [0i32; LANES];
    let ca = a.chunks_exact(LANES);
    let cb = b.chunks_exact(LANES);
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for i in 0..LANES {
            acc[i] += i32::from(x[i]) * i32::from(y[i]);
        }
    }
    let mut sum: i32 = acc.iter().sum();
    for (x, y) in ra.iter().zip(rb) {
        sum += i32::from(*x) * i32::from(*y);
    }
    sum
}

/// Which kernel family `dot_f32`/`dot_i8` dispatch to on this machine, for
/// benchmark reports.
pub fn active_kernel() -> &'static str {
    #[cfg(target_arch = "x86_64")]
    {
        if x86::has_avx2_fma() {
            return "x86_64 avx2+fma (runtime-detected)";
        }
        "x86_64 portable (auto-vectorised)"
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        "portable (auto-vectorised)"
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    #[inline]
    pub fn has_avx2_fma() -> bool {
        std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma")
    }

    #[inline]
    pub fn has_avx2() -> bool {
        std::is_x86_feature_detected!("avx2")
    }

    /// # Safety
    /// The CPU must support AVX2 and FMA.
    #[target_feature(enable = "avx2,fma")]
    #[inline]
    pub unsafe fn dot_f32_avx2(a: &[f32], b: &[f32]) -> f32 {
        let n = a.len().min(b.len());
        let pa = a.as_ptr();
        let pb = b.as_ptr();
        let mut i = 0usize;
        // SAFETY: every load reads 8 floats at offset i with i + 8 <= n (or
        // i + 32 <= n for the unrolled loop), inside both slices.
        unsafe {
            let mut acc0 = _mm256_setzero_ps();
            let mut acc1 = _mm256_setzero_ps();
            let mut acc2 = _mm256_setzero_ps();
            let mut acc3 = _mm256_setzero_ps();
            while i + 32 <= n {
                acc0 =
                    _mm256_fmadd_ps(_mm256_loadu_ps(pa.add(i)), _mm256_loadu_ps(pb.add(i)), acc0);
                acc1 = _mm256_fmadd_ps(
                    _mm256_loadu_ps(pa.add(i + 8)),
                    _mm256_loadu_ps(pb.add(i + 8)),
                    acc1,
                );
                acc2 = _mm256_fmadd_ps(
                    _mm256_loadu_ps(pa.add(i + 16)),
                    _mm256_loadu_ps(pb.add(i + 16)),
                    acc2,
                );
                acc3 = _mm256_fmadd_ps(
                    _mm256_loadu_ps(pa.add(i + 24)),
                    _mm256_loadu_ps(pb.add(i + 24)),
                    acc3,
                );
                i += 32;
            }
            while i + 8 <= n {
                acc0 =
                    _mm256_fmadd_ps(_mm256_loadu_ps(pa.add(i)), _mm256_loadu_ps(pb.add(i)), acc0);
                i += 8;
            }
            let acc = _mm256_add_ps(_mm256_add_ps(acc0, acc1), _mm256_add_ps(acc2, acc3));
            let lo = _mm256_castps256_ps128(acc);
            let hi = _mm256_extractf128_ps::<1>(acc);
            let s = _mm_add_ps(lo, hi);
            let s = _mm_add_ps(s, _mm_movehl_ps(s, s));
            let s = _mm_add_ss(s, _mm_shuffle_ps::<0b01>(s, s));
            let mut sum = _mm_cvtss_f32(s);
            while i < n {
                sum += *pa.add(i) * *pb.add(i);
                i += 1;
            }
            sum
        }
    }

    /// # Safety
    /// The CPU must support AVX2 and FMA.
    #[target_feature(enable = "avx2,fma")]
    pub unsafe fn dot_f32_block_avx2(query: &[f32], block: &[f32], dim: usize, out: &mut [f32]) {
        for (o, row) in out.iter_mut().zip(block.chunks_exact(dim)) {
            // SAFETY: same target features as this function.
            *o = unsafe { dot_f32_avx2(query, row) };
        }
    }

    /// # Safety
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    #[inline]
    pub unsafe fn dot_i8_avx2(a: &[i8], b: &[i8]) -> i32 {
        let n = a.len().min(b.len());
        let pa = a.as_ptr();
        let pb = b.as_ptr();
        let mut i = 0usize;
        // SAFETY: every 128-bit load reads 16 bytes at offset i with
        // i + 16 <= n (i + 32 <= n in the unrolled loop).
        unsafe {
            let mut acc0 = _mm256_setzero_si256();
            let mut acc1 = _mm256_setzero_si256();
            while i + 32 <= n {
                let a0 = _mm256_cvtepi8_epi16(_mm_loadu_si128(pa.add(i) as *const __m128i));
                let b0 = _mm256_cvtepi8_epi16(_mm_loadu_si128(pb.add(i) as *const __m128i));
                let a1 = _mm256_cvtepi8_epi16(_mm_loadu_si128(pa.add(i + 16) as *const __m128i));
                let b1 = _mm256_cvtepi8_epi16(_mm_loadu_si128(pb.add(i + 16) as *const __m128i));
                acc0 = _mm256_add_epi32(acc0, _mm256_madd_epi16(a0, b0));
                acc1 = _mm256_add_epi32(acc1, _mm256_madd_epi16(a1, b1));
                i += 32;
            }
            while i + 16 <= n {
                let a0 = _mm256_cvtepi8_epi16(_mm_loadu_si128(pa.add(i) as *const __m128i));
                let b0 = _mm256_cvtepi8_epi16(_mm_loadu_si128(pb.add(i) as *const __m128i));
                acc0 = _mm256_add_epi32(acc0, _mm256_madd_epi16(a0, b0));
                i += 16;
            }
            let s = _mm256_add_epi32(acc0, acc1);
            let x = _mm_add_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256::<1>(s));
            let x = _mm_add_epi32(x, _mm_shuffle_epi32::<0b01_00_11_10>(x));
            let x = _mm_add_epi32(x, _mm_shuffle_epi32::<0b10_11_00_01>(x));
            let mut sum = _mm_cvtsi128_si32(x);
            while i < n {
                sum += i32::from(*pa.add(i)) * i32::from(*pb.add(i));
                i += 1;
            }
            sum
        }
    }

    /// # Safety
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    pub unsafe fn dot_i8_block_avx2(query: &[i8], block: &[i8], dim: usize, out: &mut [i32]) {
        for (o, row) in out.iter_mut().zip(block.chunks_exact(dim)) {
            // SAFETY: same target features as this function.
            *o = unsafe { dot_i8_avx2(query, row) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive_f32(a: &[f32], b: &[f32]) -> f64 {
        a.iter()
            .zip(b)
            .map(|(x, y)| f64::from(*x) * f64::from(*y))
            .sum()
    }

    #[test]
    fn kernels_agree_with_naive_for_all_lengths() {
        let mut rng = crate::synth::Rng::new(7);
        for n in 0..100 {
            let a: Vec<f32> = (0..n).map(|_| rng.gaussian() as f32).collect();
            let b: Vec<f32> = (0..n).map(|_| rng.gaussian() as f32).collect();
            let want = naive_f32(&a, &b);
            let tol = 1e-4 * (1.0 + n as f64);
            assert!((f64::from(dot_f32(&a, &b)) - want).abs() < tol, "n={n}");
            assert!((f64::from(dot_f32_portable(&a, &b)) - want).abs() < tol);

            let qa: Vec<i8> = (0..n).map(|i| ((i * 37 % 255) - 127) as i8).collect();
            let qb: Vec<i8> = (0..n).map(|i| ((i * 91 % 255) - 127) as i8).collect();
            let want: i32 = qa
                .iter()
                .zip(&qb)
                .map(|(x, y)| i32::from(*x) * i32::from(*y))
                .sum();
            assert_eq!(dot_i8(&qa, &qb), want, "n={n}");
            assert_eq!(dot_i8_portable(&qa, &qb), want);
        }
    }

    #[test]
    fn block_kernels_match_single() {
        let mut rng = crate::synth::Rng::new(3);
        let dim = 37;
        let q: Vec<f32> = (0..dim).map(|_| rng.gaussian() as f32).collect();
        let block: Vec<f32> = (0..dim * 5).map(|_| rng.gaussian() as f32).collect();
        let mut out = [0.0f32; 5];
        dot_f32_block(&q, &block, dim, &mut out);
        for (r, o) in out.iter().enumerate() {
            assert_eq!(*o, dot_f32(&q, &block[r * dim..(r + 1) * dim]));
        }
        let qi: Vec<i8> = (0..dim).map(|i| (i as i8).wrapping_mul(7)).collect();
        let bi: Vec<i8> = (0..dim * 5).map(|i| (i as i8).wrapping_mul(3)).collect();
        let mut outi = [0i32; 5];
        dot_i8_block(&qi, &bi, dim, &mut outi);
        for (r, o) in outi.iter().enumerate() {
            assert_eq!(*o, dot_i8(&qi, &bi[r * dim..(r + 1) * dim]));
        }
    }
}
