//! The mel filterbank: triangular, half-overlapping channels over the power spectrum, with
//! 12-bit weights, followed by an integer square root back to magnitude scale.

/// Fractional bits of the channel weights.
pub(crate) const FILTERBANK_BITS: u32 = 12;

/// The mel scale the channel centres are spaced on (single precision, as the reference does).
fn freq_to_mel(freq: f32) -> f32 {
    1127.0 * (freq / 700.0).ln_1p()
}

/// Channel layout and weights, computed once.
///
/// The spectrum bins from `start` to `end` are split into `num_channels + 1` contiguous runs; run
/// `c` starts at `run_starts[c]`. Each bin carries a rising weight for the run it belongs to and
/// the complementary falling weight (`unweight`) for the next one, so channel `c` sums the rising
/// edge of run `c + 1` and the falling edge of run `c`.
#[derive(Clone, Debug)]
pub(crate) struct Filterbank {
    start: usize,
    /// First bin of each run, plus the end bin as the last entry.
    run_starts: Vec<usize>,
    /// Indexed by bin minus `start`.
    weights: Vec<u16>,
    unweights: Vec<u16>,
    /// Per-run accumulators (`num_channels + 1` of them).
    work: Vec<u64>,
}

impl Filterbank {
    pub(crate) fn new(
        num_channels: usize,
        lower_hz: f32,
        upper_hz: f32,
        sample_rate: u32,
        spectrum_size: usize,
    ) -> Self {
        let runs = num_channels + 1;
        let mel_low = freq_to_mel(lower_hz);
        let mel_span = freq_to_mel(upper_hz) - mel_low;
        let spacing = mel_span / runs as f32;
        let centres: Vec<f32> = (0..runs)
            .map(|i| mel_low + spacing * (i + 1) as f32)
            .collect();

        // DC is never included.
        let hz_per_bin = 0.5 * sample_rate as f32 / (spectrum_size as f32 - 1.0);
        let start = (1.5 + lower_hz / hz_per_bin) as usize;

        let mut run_starts = Vec::with_capacity(runs + 1);
        let mut weights = Vec::new();
        let mut unweights = Vec::new();
        let mut bin = start;
        for (c, &centre) in centres.iter().enumerate() {
            run_starts.push(bin);
            let previous = if c == 0 { mel_low } else { centres[c - 1] };
            while bin < spectrum_size && freq_to_mel(bin as f32 * hz_per_bin) <= centre {
                let weight = (centre - freq_to_mel(bin as f32 * hz_per_bin)) / (centre - previous);
                let scale = (1u32 << FILTERBANK_BITS) as f32;
                weights.push((weight * scale + 0.5).floor() as u16);
                unweights.push(((1.0 - weight) * scale + 0.5).floor() as u16);
                bin += 1;
            }
        }
        run_starts.push(bin);

        Self {
            start,
            run_starts,
            weights,
            unweights,
            work: vec![0; runs],
        }
    }

    /// First and one-past-last spectrum bin the channels read.
    pub(crate) fn bins(&self) -> (usize, usize) {
        (
            self.start,
            self.run_starts.last().copied().unwrap_or(self.start),
        )
    }

    /// Accumulates the weighted energies (`energy[i]` is bin `start + i`) into the channels.
    pub(crate) fn accumulate(&mut self, energy: &[u32]) {
        let mut carried: u64 = 0;
        for (run, acc) in self.work.iter_mut().enumerate() {
            let (Some(&from), Some(&to)) = (self.run_starts.get(run), self.run_starts.get(run + 1))
            else {
                break;
            };
            let mut weighted = carried;
            let mut unweighted: u64 = 0;
            for bin in from..to {
                let i = bin - self.start;
                // The energy is a wrapped 32-bit signed value in the reference; widen it the same
                // way (sign extension into 64 bits, then modular arithmetic).
                let e = energy.get(i).copied().unwrap_or(0) as i32 as i64 as u64;
                let w = u64::from(self.weights.get(i).copied().unwrap_or(0));
                let u = u64::from(self.unweights.get(i).copied().unwrap_or(0));
                weighted = weighted.wrapping_add(w.wrapping_mul(e));
                unweighted = unweighted.wrapping_add(u.wrapping_mul(e));
            }
            *acc = weighted;
            carried = unweighted;
        }
    }

    /// Square roots of the channel sums, shifted right by `scale_down_shift`, into `out`.
    pub(crate) fn sqrt_into(&self, scale_down_shift: u32, out: &mut [u32]) {
        for (slot, &sum) in out.iter_mut().zip(self.work.iter().skip(1)) {
            *slot = sqrt64(sum) >> scale_down_shift;
        }
    }

    pub(crate) fn reset(&mut self) {
        self.work.fill(0);
    }
}

/// Rounded integer square root of a 32-bit value (digit-by-digit, two bits at a time).
fn sqrt32(mut num: u32) -> u32 {
    if num == 0 {
        return 0;
    }
    let mut res: u32 = 0;
    let top = (num.leading_zeros() | 1) as i32;
    let mut bit: u32 = 1 << (31 - top);
    let iterations = (31 - top) / 2 + 1;
    for _ in 0..iterations {
        if num >= res + bit {
            num -= res + bit;
            res = (res >> 1) + bit;
        } else {
            res >>= 1;
        }
        bit >>= 2;
    }
    if num > res && res != 0xFFFF {
        res += 1;
    }
    res
}

/// Rounded integer square root of a 64-bit value; values that fit in 32 bits take the 32-bit
/// path (which the reference does too, off by one near 2^32 included), and the result is
/// truncated to 32 bits.
fn sqrt64(mut num: u64) -> u32 {
    if num >> 32 == 0 {
        return sqrt32(num as u32);
    }
    let mut res: u64 = 0;
    let top = (num.leading_zeros() | 1) as i32;
    let mut bit: u64 = 1 << (63 - top);
    let iterations = (63 - top) / 2 + 1;
    for _ in 0..iterations {
        if num >= res + bit {
            num -= res + bit;
            res = (res >> 1) + bit;
        } else {
            res >>= 1;
        }
        bit >>= 2;
    }
    if num > res && res != 0xFFFF_FFFF {
        res += 1;
    }
    res as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn square_roots_round() {
        assert_eq!(sqrt64(0), 0);
        assert_eq!(sqrt64(1), 1);
        assert_eq!(sqrt64(16), 4);
        assert_eq!(sqrt64(20), 4);
        assert_eq!(sqrt64(21), 5);
        assert_eq!(sqrt64(1 << 40), 1 << 20);
        assert_eq!(sqrt64(u64::MAX), u32::MAX);
    }
}
