//! The energy detector against the Silero VAD, on the same audio: `cargo run --release
//! --example vad_compare` (needs `scripts/fetch-models vad tts` for the model and ONNX Runtime).
//!
//! Each scene is about a minute of 16 kHz audio: the three spoken fixtures ("turn on the
//! kitchen light", "what time is it? please switch off the lights in the living room",
//! "Alexa, turn on the kitchen light") between stretches of room sound, and in the gaps sounds
//! that are not speech (music-like chords, knocks, a vacuum cleaner switched on). Rooms range
//! from digital silence to white noise 8 dB under the speech. Both detectors run through the
//! same endpointer (onset, pre-roll, hangover, minimum length); only the per-frame decision
//! differs. Reported per scene and detector: the commands found (an utterance overlapping
//! them), whole (the utterance holds all of the command's speech), false utterances (over
//! no command), the median endpoint delay after the speech ends, and the time per frame.

use std::path::Path;
use std::time::Instant;

use hearth::audio::listen::{Endpointer, ListenConfig};
use hearth::audio::silero::{Silero, SILERO_FILE};
use hearth::voice::{Frame, ListenEvent, Utterance, FRAME_SAMPLES, SAMPLE_RATE};

const RATE: usize = SAMPLE_RATE as usize;

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> f32 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) as f32 / (1u64 << 31) as f32) * 2.0 - 1.0
    }
}

fn db(x: f32) -> f32 {
    10f32.powf(x / 20.0)
}

/// White noise at `dbfs` RMS.
fn noise(n: usize, dbfs: f32, rng: &mut Rng) -> Vec<f32> {
    let a = db(dbfs) * 3f32.sqrt();
    (0..n).map(|_| rng.next() * a).collect()
}

/// Chords of three tones, a new chord every 400 ms, at about `dbfs`.
fn music(n: usize, dbfs: f32) -> Vec<f32> {
    let chords = [
        [220.0, 277.2, 329.6],
        [246.9, 311.1, 370.0],
        [196.0, 246.9, 293.7],
        [261.6, 329.6, 392.0],
    ];
    let a = db(dbfs) * 2f32.sqrt() / 3f32.sqrt();
    (0..n)
        .map(|i| {
            let c = chords[(i / (RATE * 2 / 5)) % chords.len()];
            let t = i as f32 / RATE as f32;
            c.iter()
                .map(|f| (2.0 * std::f32::consts::PI * f * t).sin())
                .sum::<f32>()
                * a
        })
        .collect()
}

/// A knock (30 ms of decaying noise at `dbfs` peak) every 700 ms.
fn knocks(n: usize, dbfs: f32, rng: &mut Rng) -> Vec<f32> {
    let len = RATE * 3 / 100;
    (0..n)
        .map(|i| {
            let k = i % (RATE * 7 / 10);
            if k < len {
                rng.next() * db(dbfs) * (1.0 - k as f32 / len as f32)
            } else {
                0.0
            }
        })
        .collect()
}

/// A vacuum cleaner switched on: low-passed noise rising over 1 s to `dbfs`, then steady.
fn vacuum(n: usize, dbfs: f32, rng: &mut Rng) -> Vec<f32> {
    let mut y = 0.0f32;
    let raw: Vec<f32> = (0..n)
        .map(|_| {
            y = 0.9 * y + 0.1 * rng.next();
            y
        })
        .collect();
    let rms = (raw.iter().map(|s| s * s).sum::<f32>() / n as f32).sqrt();
    raw.iter()
        .enumerate()
        .map(|(i, s)| s / rms * db(dbfs) * (i as f32 / RATE as f32).min(1.0))
        .collect()
}

struct Scene {
    name: String,
    audio: Vec<f32>,
    /// Each command's speech: [first, last] sample above -40 dBFS.
    commands: Vec<(usize, usize)>,
}

fn scene(name: &str, room_dbfs: Option<f32>, fixtures: &[Vec<f32>], seed: u64) -> Scene {
    let mut rng = Rng(seed);
    let mut audio: Vec<f32> = Vec::new();
    let mut commands = Vec::new();
    let gap = |rng: &mut Rng, audio: &mut Vec<f32>, secs: f32, what: u32| {
        let n = (secs * RATE as f32) as usize;
        let extra = match what {
            1 => music(n, -28.0),
            2 => knocks(n, -12.0, rng),
            3 => vacuum(n, -32.0, rng),
            _ => vec![0.0; n],
        };
        audio.extend(extra);
    };
    gap(&mut rng, &mut audio, 3.0, 0);
    for (k, clip) in fixtures.iter().enumerate() {
        let at = audio.len();
        let first = clip.iter().position(|s| s.abs() > 0.01).unwrap_or(0);
        let last = clip
            .iter()
            .rposition(|s| s.abs() > 0.01)
            .unwrap_or(clip.len());
        commands.push((at + first, at + last));
        audio.extend(clip);
        gap(&mut rng, &mut audio, 3.0, 0);
        gap(&mut rng, &mut audio, 6.0, 1 + k as u32);
        gap(&mut rng, &mut audio, 3.0, 0);
    }
    if let Some(room) = room_dbfs {
        let bg = noise(audio.len(), room, &mut rng);
        audio.iter_mut().zip(bg).for_each(|(a, b)| *a += b);
    }
    Scene {
        name: name.to_string(),
        audio,
        commands,
    }
}

#[derive(Default)]
struct Score {
    found: usize,
    whole: usize,
    false_utts: usize,
    delays_ms: Vec<f64>,
    us_per_frame: f64,
}

fn run(scene: &Scene, mut silero: Option<&mut Silero>) -> Score {
    if let Some(s) = silero.as_deref_mut() {
        s.reset();
    }
    let mut e = Endpointer::new(ListenConfig::default());
    let mut quiet = 0;
    let mut utts: Vec<Utterance> = Vec::new();
    let mut spent = 0.0;
    let mut frames = 0usize;
    let t0 = Instant::now();
    for (i, chunk) in scene.audio.chunks(FRAME_SAMPLES).enumerate() {
        let mut samples = chunk.to_vec();
        samples.resize(FRAME_SAMPLES, 0.0);
        let t = Instant::now();
        // as the Listen actor does: the model runs only on frames over the floor
        let prob = silero.as_deref_mut().map(|s| {
            hearth::audio::listen::score(&e, s, &mut quiet, &samples)
                .expect("Silero scores the frame")
        });
        let frame = Frame {
            samples: samples.into(),
            echo: None,
            start: (i * FRAME_SAMPLES) as u64,
            at: t0,
        };
        let events = e.push_scored(frame, prob);
        spent += t.elapsed().as_secs_f64();
        frames += 1;
        utts.extend(events.into_iter().filter_map(|ev| match ev {
            ListenEvent::Utterance(u) => Some(u),
            _ => None,
        }));
    }
    for ev in e.end() {
        if let ListenEvent::Utterance(u) = ev {
            utts.push(u);
        }
    }
    let mut score = Score {
        us_per_frame: spent / frames.max(1) as f64 * 1e6,
        ..Default::default()
    };
    for u in &utts {
        let (a, b) = (u.start as usize, u.start as usize + u.samples.len());
        if !scene.commands.iter().any(|&(s, t)| a <= t && s <= b) {
            score.false_utts += 1;
        }
    }
    for &(s, t) in &scene.commands {
        let hit = utts.iter().find(|u| {
            let (a, b) = (u.start as usize, u.start as usize + u.samples.len());
            a <= t && s <= b
        });
        if let Some(u) = hit {
            score.found += 1;
            let (a, b) = (u.start as usize, u.start as usize + u.samples.len());
            if a <= s && b >= t {
                score.whole += 1;
            }
            score
                .delays_ms
                .push((b as f64 - t as f64) / RATE as f64 * 1e3);
        }
    }
    score
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/audio");
    let fixtures: Vec<Vec<f32>> = ["kitchen.wav", "long.wav", "alexa.wav"]
        .iter()
        .map(|f| hearth::audio::wav::read_16k_mono(root.join(f)).expect("the fixture reads"))
        .collect();
    let models = hearth::models::model_dir().expect("a model directory");
    let library =
        hearth::onnx::find_library(None, |k| std::env::var_os(k), std::slice::from_ref(&models))
            .expect("libonnxruntime: run scripts/fetch-models tts");
    let mut silero = Silero::load(&models.join(SILERO_FILE), &library)
        .expect("the Silero model: run scripts/fetch-models vad");

    let scenes = [
        scene("silent room", None, &fixtures, 1),
        scene("quiet room (-60 dBFS)", Some(-60.0), &fixtures, 2),
        scene("fan (-40 dBFS)", Some(-40.0), &fixtures, 3),
        scene("loud fan (-30 dBFS)", Some(-30.0), &fixtures, 4),
        scene("very loud (-25 dBFS)", Some(-25.0), &fixtures, 5),
    ];
    println!(
        "each scene: 3 commands; between them music-like chords, knocks and a vacuum cleaner (not speech)"
    );
    println!(
        "{:<24} {:<8} {:>6} {:>6} {:>6} {:>16} {:>10}",
        "scene", "vad", "found", "whole", "false", "endpoint delay", "µs/frame"
    );
    for sc in &scenes {
        for (name, s) in [
            ("energy", run(sc, None)),
            ("silero", run(sc, Some(&mut silero))),
        ] {
            let mut d = s.delays_ms.clone();
            d.sort_by(|a, b| a.total_cmp(b));
            let med = d
                .get(d.len() / 2)
                .map_or("-".into(), |v| format!("{v:.0} ms"));
            println!(
                "{:<24} {:<8} {:>4}/3 {:>4}/3 {:>6} {:>16} {:>10.1}",
                sc.name, name, s.found, s.whole, s.false_utts, med, s.us_per_frame
            );
        }
    }
}
