//! The 16-bit fixed-point real FFT the frontend runs on each window: KissFFT's `FIXED_POINT=16`
//! arithmetic (Q15 twiddles, rounding shifts, a divide by the radix at every butterfly stage so
//! nothing overflows), reproduced step for step so the spectrum matches bit for bit.

/// A complex value in Q15, as KissFFT stores it.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub(crate) struct Cpx {
    pub re: i16,
    pub im: i16,
}

/// Largest Q15 value: the scale of twiddles and of the per-stage divisions.
const Q15_MAX: i32 = 32767;

/// Rounds a Q30 product sum back to Q15 and truncates it to 16 bits, as KissFFT's `sround` does.
#[inline]
fn round_q15(x: i32) -> i16 {
    (x.wrapping_add(1 << 14) >> 15) as i16
}

/// `a * b` in Q15.
#[inline]
fn mul_scalar(a: i16, b: i16) -> i16 {
    round_q15(i32::from(a).wrapping_mul(i32::from(b)))
}

#[inline]
fn cmul(a: Cpx, b: Cpx) -> Cpx {
    let (ar, ai, br, bi) = (
        i32::from(a.re),
        i32::from(a.im),
        i32::from(b.re),
        i32::from(b.im),
    );
    Cpx {
        re: round_q15((ar * br).wrapping_sub(ai * bi)),
        im: round_q15((ar * bi).wrapping_add(ai * br)),
    }
}

/// Divides both parts by `div` the fixed-point way (multiplying by `32767 / div`).
#[inline]
fn fixdiv(c: Cpx, div: i32) -> Cpx {
    let k = (Q15_MAX / div) as i16;
    Cpx {
        re: mul_scalar(c.re, k),
        im: mul_scalar(c.im, k),
    }
}

#[inline]
fn cadd(a: Cpx, b: Cpx) -> Cpx {
    Cpx {
        re: a.re.wrapping_add(b.re),
        im: a.im.wrapping_add(b.im),
    }
}

#[inline]
fn csub(a: Cpx, b: Cpx) -> Cpx {
    Cpx {
        re: a.re.wrapping_sub(b.re),
        im: a.im.wrapping_sub(b.im),
    }
}

/// A unit phasor in Q15, rounded the way KissFFT builds its tables (in double precision).
fn phasor(phase: f64) -> Cpx {
    Cpx {
        re: (0.5 + f64::from(Q15_MAX) * phase.cos()).floor() as i16,
        im: (0.5 + f64::from(Q15_MAX) * phase.sin()).floor() as i16,
    }
}

/// Most radix stages any supported size needs (2^2 per radix-4 stage, up to 2^31).
const MAX_STAGES: usize = 32;

/// A forward real FFT of a fixed power-of-two size, with its tables.
#[derive(Clone, Debug)]
pub(crate) struct RealFft {
    /// Half the real size: the length of the complex FFT run underneath.
    half: usize,
    /// Radix and remaining length per stage: powers of 4 first, then a single 2 if needed.
    stages: [(usize, usize); MAX_STAGES],
    num_stages: usize,
    /// Twiddles of the complex FFT of length `half`.
    twiddles: Vec<Cpx>,
    /// Twiddles that split the packed complex result into the real input's spectrum.
    super_twiddles: Vec<Cpx>,
    /// The complex FFT's output.
    scratch: Vec<Cpx>,
    /// The real input, paired up as complex values.
    packed: Vec<Cpx>,
}

impl RealFft {
    /// Tables for a real FFT of `size` points; `size` must be a power of two, at least 4.
    pub(crate) fn new(size: usize) -> Self {
        let half = (size / 2).max(2);
        let mut stages = [(1, 1); MAX_STAGES];
        let mut num_stages = 0;
        let mut n = half;
        while n > 1 && num_stages < MAX_STAGES {
            let p = if n.is_multiple_of(4) { 4 } else { 2 };
            n /= p;
            stages[num_stages] = (p, n);
            num_stages += 1;
        }
        let pi = std::f64::consts::PI;
        let twiddles = (0..half)
            .map(|i| phasor(-2.0 * pi * i as f64 / half as f64))
            .collect();
        let super_twiddles = (0..half / 2)
            .map(|i| phasor(-pi * ((i + 1) as f64 / half as f64 + 0.5)))
            .collect();
        Self {
            half,
            stages,
            num_stages,
            twiddles,
            super_twiddles,
            scratch: vec![Cpx::default(); half],
            packed: vec![Cpx::default(); half],
        }
    }

    /// Transforms `input` (the real signal, `2 * half` samples; missing ones count as zero) into
    /// `output[0..=half]`, the non-negative frequency bins.
    pub(crate) fn forward(&mut self, input: &[i16], output: &mut [Cpx]) {
        for (k, slot) in self.packed.iter_mut().enumerate() {
            *slot = Cpx {
                re: input.get(2 * k).copied().unwrap_or(0),
                im: input.get(2 * k + 1).copied().unwrap_or(0),
            };
        }
        let stages = &self.stages[..self.num_stages];
        work(
            &mut self.scratch,
            &self.packed,
            0,
            1,
            stages,
            &self.twiddles,
        );

        let n = self.half;
        if output.len() <= n {
            return;
        }
        let dc = fixdiv(self.scratch[0], 2);
        output[0] = Cpx {
            re: dc.re.wrapping_add(dc.im),
            im: 0,
        };
        output[n] = Cpx {
            re: dc.re.wrapping_sub(dc.im),
            im: 0,
        };
        for k in 1..=n / 2 {
            let fpk = fixdiv(self.scratch[k], 2);
            let mirror = self.scratch[n - k];
            let fpnk = fixdiv(
                Cpx {
                    re: mirror.re,
                    im: mirror.im.wrapping_neg(),
                },
                2,
            );
            let f1k = cadd(fpk, fpnk);
            let f2k = csub(fpk, fpnk);
            let tw = cmul(f2k, self.super_twiddles[k - 1]);
            let half_of = |x: i32| (x >> 1) as i16;
            let (f1r, f1i, twr, twi) = (
                i32::from(f1k.re),
                i32::from(f1k.im),
                i32::from(tw.re),
                i32::from(tw.im),
            );
            output[k] = Cpx {
                re: half_of(f1r + twr),
                im: half_of(f1i + twi),
            };
            output[n - k] = Cpx {
                re: half_of(f1r - twr),
                im: half_of(twi - f1i),
            };
        }
    }
}

/// One level of the decimation-in-time recursion: splits `input` (read from `offset` with
/// `stride`) into `p` interleaved sub-sequences, transforms each into its slice of `out`, then
/// recombines them with a radix-`p` butterfly.
fn work(
    out: &mut [Cpx],
    input: &[Cpx],
    offset: usize,
    stride: usize,
    stages: &[(usize, usize)],
    twiddles: &[Cpx],
) {
    let Some((&(p, m), rest)) = stages.split_first() else {
        return;
    };
    if m == 1 {
        for (k, slot) in out.iter_mut().take(p).enumerate() {
            *slot = input.get(offset + k * stride).copied().unwrap_or_default();
        }
    } else {
        for (k, chunk) in out.chunks_mut(m).take(p).enumerate() {
            work(
                chunk,
                input,
                offset + k * stride,
                stride * p,
                rest,
                twiddles,
            );
        }
    }
    match p {
        4 => butterfly4(out, stride, m, twiddles),
        _ => butterfly2(out, stride, m, twiddles),
    }
}

fn butterfly2(out: &mut [Cpx], stride: usize, m: usize, twiddles: &[Cpx]) {
    if out.len() < 2 * m {
        return;
    }
    let (lo, hi) = out.split_at_mut(m);
    for (k, (a, b)) in lo.iter_mut().zip(hi.iter_mut()).enumerate() {
        let x = fixdiv(*a, 2);
        let y = fixdiv(*b, 2);
        let t = cmul(y, twiddles.get(k * stride).copied().unwrap_or_default());
        *b = csub(x, t);
        *a = cadd(x, t);
    }
}

fn butterfly4(out: &mut [Cpx], stride: usize, m: usize, twiddles: &[Cpx]) {
    if out.len() < 4 * m {
        return;
    }
    let tw = |i: usize| twiddles.get(i).copied().unwrap_or_default();
    for k in 0..m {
        let f0 = fixdiv(out[k], 4);
        let f1 = fixdiv(out[k + m], 4);
        let f2 = fixdiv(out[k + 2 * m], 4);
        let f3 = fixdiv(out[k + 3 * m], 4);
        let s0 = cmul(f1, tw(k * stride));
        let s1 = cmul(f2, tw(2 * k * stride));
        let s2 = cmul(f3, tw(3 * k * stride));
        let s5 = csub(f0, s1);
        let f0 = cadd(f0, s1);
        let s3 = cadd(s0, s2);
        let s4 = csub(s0, s2);
        out[k + 2 * m] = csub(f0, s3);
        out[k] = cadd(f0, s3);
        out[k + m] = Cpx {
            re: s5.re.wrapping_add(s4.im),
            im: s5.im.wrapping_sub(s4.re),
        };
        out[k + 3 * m] = Cpx {
            re: s5.re.wrapping_sub(s4.im),
            im: s5.im.wrapping_add(s4.re),
        };
    }
}
