// Seeded sounds that are not speech, 16 kHz mono: room noise (pink and brown noise) and
// music-like audio (chords, a bass line, a little melody and a drum beat). The same seed gives
// the same samples on every machine (integer RNG, f64 maths, no platform randomness).

use std::f64::consts::TAU;

use super::mix::{rms, set_level, RATE};

/// A small seeded generator (splitmix64).
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in [-1, 1).
    pub fn signed(&mut self) -> f64 {
        self.unit() * 2.0 - 1.0
    }

    /// Uniform in `0..n` (0 for n = 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.unit() * n as f64) as usize % n.max(1)
    }
}

/// A seed mixed from several numbers (so nearby inputs give unrelated streams).
pub fn seed_of(parts: &[u64]) -> u64 {
    let mut r = Rng::new(0x5EED);
    for &p in parts {
        r.0 ^= p;
        r.next_u64();
    }
    r.next_u64()
}

/// What is playing in the room.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// Pink and brown noise: a fan, traffic, the rumble of a house.
    Room,
    /// Music-like audio: chords with a beat.
    Music,
}

impl Kind {
    pub fn label(self) -> &'static str {
        match self {
            Kind::Room => "room",
            Kind::Music => "music",
        }
    }

    /// `n` samples of this sound at RMS `dbfs`.
    pub fn generate(self, n: usize, dbfs: f64, seed: u64) -> Vec<f32> {
        match self {
            Kind::Room => room(n, dbfs, seed),
            Kind::Music => music(n, dbfs, seed),
        }
    }
}

/// Pink noise (power falling 3 dB an octave) at RMS `dbfs`: the sum of 16 random values, value
/// `k` drawn anew every 2^k samples, plus a fresh one every sample.
pub fn pink(n: usize, dbfs: f64, seed: u64) -> Vec<f32> {
    const ROWS: usize = 16;
    let mut rng = Rng::new(seed);
    let mut rows = [0f64; ROWS];
    for r in &mut rows {
        *r = rng.signed();
    }
    let mut sum: f64 = rows.iter().sum();
    let mut out: Vec<f32> = (1..=n as u64)
        .map(|i| {
            let k = i.trailing_zeros() as usize;
            if k < ROWS {
                sum -= rows[k];
                rows[k] = rng.signed();
                sum += rows[k];
            }
            (sum + rng.signed()) as f32
        })
        .collect();
    remove_dc(&mut out);
    set_level(&mut out, dbfs);
    out
}

/// Brown noise (power falling 6 dB an octave above ~13 Hz) at RMS `dbfs`: white noise through a
/// leaky integrator.
pub fn brown(n: usize, dbfs: f64, seed: u64) -> Vec<f32> {
    let mut rng = Rng::new(seed);
    let mut y = 0.0f64;
    let mut out: Vec<f32> = (0..n)
        .map(|_| {
            y = 0.995 * y + rng.signed();
            y as f32
        })
        .collect();
    remove_dc(&mut out);
    set_level(&mut out, dbfs);
    out
}

/// Room noise at RMS `dbfs`: brown noise with pink noise 3 dB under it.
pub fn room(n: usize, dbfs: f64, seed: u64) -> Vec<f32> {
    let b = brown(n, 0.0, seed_of(&[seed, 1]));
    let p = pink(n, -3.0, seed_of(&[seed, 2]));
    let mut out: Vec<f32> = b.iter().zip(&p).map(|(a, b)| a + b).collect();
    set_level(&mut out, dbfs);
    out
}

fn remove_dc(x: &mut [f32]) {
    if x.is_empty() {
        return;
    }
    let mean = x.iter().map(|&s| f64::from(s)).sum::<f64>() / x.len() as f64;
    for s in x {
        *s -= mean as f32;
    }
}

/// What a piece of [`music`] plays, drawn from its seed.
#[derive(Debug, Clone, PartialEq)]
pub struct Tune {
    /// Beats per minute.
    pub bpm: f64,
    /// The key's root, a MIDI note number (the chords are voiced an octave up).
    pub root: i32,
    /// One chord a bar (four beats), in semitones above the root, round and round.
    pub chords: Vec<[i32; 3]>,
}

/// Major and minor triads on the degrees of a major key.
const I: [i32; 3] = [0, 4, 7];
const II: [i32; 3] = [2, 5, 9];
const IV: [i32; 3] = [5, 9, 12];
const V: [i32; 3] = [7, 11, 14];
const VI: [i32; 3] = [9, 12, 16];

impl Tune {
    pub fn from_seed(seed: u64) -> Tune {
        let mut rng = Rng::new(seed_of(&[seed, 0x70E]));
        let progressions = [
            vec![I, V, VI, IV],
            vec![VI, IV, I, V],
            vec![I, VI, II, V],
            vec![I, IV, V, IV],
        ];
        Tune {
            bpm: 84.0 + rng.unit() * 48.0,
            root: 45 + rng.below(12) as i32,
            chords: progressions[rng.below(progressions.len())].clone(),
        }
    }

    /// Seconds per beat.
    pub fn beat_s(&self) -> f64 {
        60.0 / self.bpm
    }
}

fn hz(midi: i32) -> f64 {
    440.0 * 2f64.powf(f64::from(midi - 69) / 12.0)
}

/// A struck note: harmonics `1..=harmonics` falling as 1/h, a 5 ms attack and an exponential
/// decay with time constant `decay_s`, `t` seconds after the strike.
fn note(f: f64, t: f64, harmonics: u32, decay_s: f64) -> f64 {
    if t < 0.0 {
        return 0.0;
    }
    let attack = (t / 0.005).min(1.0);
    let env = attack * (-t / decay_s).exp();
    if env < 1e-4 {
        return 0.0;
    }
    let mut v = 0.0;
    for h in 1..=harmonics {
        let fh = f * f64::from(h);
        if fh < 7_500.0 {
            v += (TAU * fh * t).sin() / f64::from(h);
        }
    }
    v * env
}

/// Music-like audio at RMS `dbfs`: the [`Tune`] of `seed` with a chord struck on beats 1 and 3
/// of every bar, a bass note on every beat, a melody of chord tones in eighth notes (some
/// rests), a kick drum on 1 and 3, a snare on 2 and 4 and a hi-hat on every eighth.
pub fn music(n: usize, dbfs: f64, seed: u64) -> Vec<f32> {
    let tune = Tune::from_seed(seed);
    let beat = tune.beat_s();
    let eighth = beat / 2.0;
    let rate = f64::from(RATE);
    let bars = n as f64 / rate / (4.0 * beat);
    // the melody: one chord tone (or a rest) per eighth note
    let mut rng = Rng::new(seed_of(&[seed, 0x3E1]));
    let eighths = (bars * 8.0).ceil() as usize + 1;
    let melody: Vec<Option<i32>> = (0..eighths)
        .map(|i| {
            let chord = tune.chords[(i / 8) % tune.chords.len()];
            (rng.unit() > 0.25).then(|| tune.root + 24 + chord[rng.below(3)])
        })
        .collect();
    // the drums' noise, drawn once
    let mut noise = Rng::new(seed_of(&[seed, 0xD2]));
    let mut hat_prev = 0.0;
    let mut out: Vec<f32> = (0..n)
        .map(|i| {
            let t = i as f64 / rate;
            let beat_i = (t / beat).floor();
            let in_beat = t - beat_i * beat;
            let beat_of_bar = beat_i as usize % 4;
            let bar = beat_i as usize / 4;
            let chord = tune.chords[bar % tune.chords.len()];
            // chord: struck on beats 1 and 3, ringing over the next two
            let since_strike = t - (beat_i - (beat_of_bar % 2) as f64) * beat;
            let chords: f64 = chord
                .iter()
                .map(|&s| note(hz(tune.root + 12 + s), since_strike, 4, 0.9))
                .sum();
            let bass = note(hz(tune.root - 12 + chord[0]), in_beat, 2, 0.25);
            let eighth_i = (t / eighth).floor();
            let lead = melody
                .get(eighth_i as usize)
                .copied()
                .flatten()
                .map_or(0.0, |m| {
                    let vibrato = 1.0 + 0.004 * (TAU * 5.5 * t).sin();
                    note(hz(m) * vibrato, t - eighth_i * eighth, 3, 0.2)
                });
            let kick = if beat_of_bar.is_multiple_of(2) {
                let f = 45.0 + 105.0 * (-in_beat / 0.03).exp();
                (TAU * f * in_beat).sin() * (-in_beat / 0.15).exp()
            } else {
                0.0
            };
            let white = noise.signed();
            let snare = if beat_of_bar % 2 == 1 {
                (0.7 * white + 0.3 * (TAU * 185.0 * in_beat).sin()) * (-in_beat / 0.08).exp()
            } else {
                0.0
            };
            // hi-hat: the noise's first difference (mostly high frequencies), short
            let hat = (white - hat_prev) * (-(t - eighth_i * eighth) / 0.025).exp();
            hat_prev = white;
            (0.5 * chords + 0.8 * bass + 0.6 * lead + 1.0 * kick + 0.5 * snare + 0.15 * hat) as f32
        })
        .collect();
    remove_dc(&mut out);
    set_level(&mut out, dbfs);
    out
}

/// The RMS of each 10 ms frame: how loud the sound is over time.
pub fn envelope(x: &[f32]) -> Vec<f64> {
    x.chunks(super::mix::FRAME).map(rms).collect()
}
