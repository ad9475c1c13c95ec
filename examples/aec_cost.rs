//! The echo canceller (`hearth::audio::aec`) on a room of known echo: its ERLE and its cost
//! per 32 ms frame.
//!
//! The far end is hearth's own voice (`../shared/audio/long.wav`, Piper, repeated to 30 s with
//! 0.3 s gaps); the microphone hears it 60 ms later (40 ms of output buffer, 20 ms of air),
//! 3 dB down, with a reverberant tail decaying 60 dB over 250 ms, plus white noise at
//! −70 dBFS. Both streams go through the canceller frame by frame, as `hearth run` drives it.
//!
//! `cargo run --release --no-default-features --example aec_cost`
//!
//! Prints the ERLE of the cleaned and the linear output (over the echo's active frames, first
//! 5 s left out), and µs per 512-sample frame (median, p99) on this machine.

use std::path::Path;
use std::time::Instant;

use hearth::audio::aec::EchoCanceller;
use hearth::voice::{FRAME_SAMPLES, SAMPLE_RATE};

/// A small deterministic noise source (xorshift), uniform in [-1, 1).
struct Noise(u64);

impl Noise {
    fn next(&mut self) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 40) as f32 / (1u64 << 23) as f32 - 1.0
    }
}

fn energy(x: &[f32]) -> f64 {
    x.iter().map(|&s| f64::from(s) * f64::from(s)).sum()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let rate = SAMPLE_RATE as usize;
    let voice = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/audio/long.wav");
    let clip = hearth::audio::wav::read_16k_mono(&voice)?;
    let mut far = Vec::new();
    while far.len() < 30 * rate {
        far.extend_from_slice(&clip);
        far.extend(std::iter::repeat_n(0.0, rate * 3 / 10));
    }
    far.truncate(30 * rate);

    // the room: direct path after 60 ms at −3 dB, then a noise tail 6 dB under it
    let delay = rate * 60 / 1000;
    let tail = rate / 4;
    let mut noise = Noise(7);
    let mut h = vec![(delay, 0.708f32)];
    for k in 1..=tail {
        let decay = 10f32.powf(-3.0 * k as f32 / tail as f32);
        h.push((delay + k, 0.708 * 0.5 * 0.06 * decay * noise.next()));
    }
    let mut mic: Vec<f32> = (0..far.len())
        .map(|n| {
            h.iter()
                .filter(|(k, _)| *k <= n)
                .map(|(k, g)| g * far[n - k])
                .sum()
        })
        .collect();
    let mut room = Noise(11);
    for s in &mut mic {
        *s += 0.000_55 * room.next();
    }

    let mut aec = EchoCanceller::new();
    let mut costs = Vec::new();
    let (mut mic_e, mut out_e, mut lin_e) = (0.0, 0.0, 0.0);
    for (i, (f, m)) in far
        .chunks_exact(FRAME_SAMPLES)
        .zip(mic.chunks_exact(FRAME_SAMPLES))
        .enumerate()
    {
        let t = Instant::now();
        aec.render(f);
        let (clean, linear) = aec.process(m)?;
        costs.push(t.elapsed().as_secs_f64() * 1e6);
        // the echo's active frames, after 5 s
        let active = energy(m) / FRAME_SAMPLES as f64 > 1e-5;
        if i * FRAME_SAMPLES >= 5 * rate && active {
            mic_e += energy(m);
            out_e += energy(clean);
            lin_e += energy(linear);
        }
    }
    costs.sort_by(f64::total_cmp);
    let pct = |p: f64| costs[((costs.len() - 1) as f64 * p) as usize];
    println!(
        "ERLE (5-30 s, echo active): cleaned {:.1} dB, linear {:.1} dB",
        10.0 * (mic_e / out_e).log10(),
        10.0 * (mic_e / lin_e).log10()
    );
    println!(
        "cost per {FRAME_SAMPLES}-sample frame (32 ms): median {:.0} µs, p99 {:.0} µs ({} frames; {:.2} % of one core)",
        pct(0.5),
        pct(0.99),
        costs.len(),
        pct(0.5) / 32_000.0 * 100.0
    );
    Ok(())
}
