//! Fixed-point natural logarithm: log2 from the position of the top bit plus a table-corrected
//! linear fraction, converted to ln and scaled.

/// Fractional bits of the log2 computation.
const LOG_SCALE_BITS: u32 = 16;
/// Bits of the fraction used to pick a correction segment (128 segments).
const LOG_SEGMENT_BITS: u32 = 7;
/// ln(2) in Q16.
const LN2_Q16: u64 = 45426;

/// Correction, per segment of the fraction, from the linear guess `1 + f` to `log2(1 + f)`, in
/// Q16 (the last two entries are the end point and padding).
const LOG_CORRECTION: [u16; 130] = [
    0, 224, 442, 654, 861, 1063, 1259, 1450, 1636, 1817, 1992, 2163, 2329, 2490, 2646, 2797, 2944,
    3087, 3224, 3358, 3487, 3611, 3732, 3848, 3960, 4068, 4172, 4272, 4368, 4460, 4549, 4633, 4714,
    4791, 4864, 4934, 5001, 5063, 5123, 5178, 5231, 5280, 5326, 5368, 5408, 5444, 5477, 5507, 5533,
    5557, 5578, 5595, 5610, 5622, 5631, 5637, 5640, 5641, 5638, 5633, 5626, 5615, 5602, 5586, 5568,
    5547, 5524, 5498, 5470, 5439, 5406, 5370, 5332, 5291, 5249, 5203, 5156, 5106, 5054, 5000, 4944,
    4885, 4825, 4762, 4697, 4630, 4561, 4490, 4416, 4341, 4264, 4184, 4103, 4020, 3935, 3848, 3759,
    3668, 3575, 3481, 3384, 3286, 3186, 3084, 2981, 2875, 2768, 2659, 2549, 2437, 2323, 2207, 2090,
    1971, 1851, 1729, 1605, 1480, 1353, 1224, 1094, 963, 830, 695, 559, 421, 282, 142, 0, 0,
];

/// The Q16 fractional part of log2(x), given `log2x`, the index of x's top bit.
fn log2_fraction(x: u32, log2x: u32) -> u32 {
    let mut frac = (i64::from(x) - (1i64 << log2x)) as i32;
    if log2x < LOG_SCALE_BITS {
        frac <<= LOG_SCALE_BITS - log2x;
    } else {
        frac >>= log2x - LOG_SCALE_BITS;
    }
    let segment = (frac as u32 >> (LOG_SCALE_BITS - LOG_SEGMENT_BITS)) as usize;
    let segment_width = (1i32 << LOG_SCALE_BITS) >> LOG_SEGMENT_BITS;
    let c0 = i32::from(LOG_CORRECTION.get(segment).copied().unwrap_or(0));
    let c1 = i32::from(LOG_CORRECTION.get(segment + 1).copied().unwrap_or(0));
    let offset = frac - segment_width * segment as i32;
    let interpolated = ((c1 - c0) * offset) >> LOG_SCALE_BITS;
    (frac + c0 + interpolated) as u32
}

/// `ln(x) * 2^scale_shift`, rounded, for `x >= 1`.
fn ln_scaled(x: u32, scale_shift: u32) -> u32 {
    let integer = 31 - x.leading_zeros();
    let log2 = (integer << LOG_SCALE_BITS).wrapping_add(log2_fraction(x, integer));
    let round = 1u32 << (LOG_SCALE_BITS - 1);
    let ln = ((LN2_Q16 * u64::from(log2) + u64::from(round)) >> LOG_SCALE_BITS) as u32;
    (ln.wrapping_shl(scale_shift).wrapping_add(round)) >> LOG_SCALE_BITS
}

/// Scales each value by `2^correction_bits`, takes `ln(value) * 2^scale_shift` (0 for values
/// of at most 1) and saturates it to 16 bits.
pub(crate) fn apply(signal: &[u32], correction_bits: u32, scale_shift: u32, out: &mut [u16]) {
    for (slot, &value) in out.iter_mut().zip(signal) {
        let value = value.wrapping_shl(correction_bits);
        let logged = if value > 1 {
            ln_scaled(value, scale_shift)
        } else {
            0
        };
        *slot = logged.min(u32::from(u16::MAX)) as u16;
    }
}
