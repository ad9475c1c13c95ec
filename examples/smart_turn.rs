//! Smart Turn's cost per decision: `cargo run --release --no-default-features --features tts
//! --example smart_turn [-- --runs N] [WAV]` (needs `scripts/fetch-models turn tts`).
//!
//! The utterance is the WAV (default `../shared/audio/kitchen.wav`, "Turn on the kitchen
//! light.") followed by a 200 ms pause, as a voice-activity detector hands it over. Prints the
//! probability, the time to load the model, then the mean and median time per decision over N
//! runs (default 50): the features alone and the whole decision (features and model). The model always sees 8 s, so
//! the cost does not depend on the utterance's length.
//!
//! `--write-16k OUT` writes the WAV as hearth reads it (16 kHz mono, little-endian `f32`) to
//! OUT and exits: `scripts/smart-turn-reference.py` computes its reference from those samples.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use hearth::audio::smart_turn::{LogMel, SmartTurn, SMART_TURN_FILE};

/// The pause after the speech, in samples (200 ms).
const PAUSE: usize = 3_200;

struct Args {
    runs: usize,
    wav: PathBuf,
    write_16k: Option<PathBuf>,
}

fn args() -> Args {
    let mut out = Args {
        runs: 50,
        wav: Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/audio/kitchen.wav"),
        write_16k: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--runs" => out.runs = it.next().and_then(|n| n.parse().ok()).expect("--runs N"),
            "--write-16k" => out.write_16k = Some(it.next().expect("--write-16k OUT").into()),
            _ => out.wav = a.into(),
        }
    }
    out
}

/// Mean and median of `times`, in µs.
fn summary(mut times: Vec<Duration>) -> (f64, f64) {
    times.sort();
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    let mean = times.iter().map(|&d| us(d)).sum::<f64>() / times.len() as f64;
    (mean, us(times[times.len() / 2]))
}

fn time(runs: usize, mut f: impl FnMut()) -> (f64, f64) {
    f(); // warm up
    summary(
        (0..runs)
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed()
            })
            .collect(),
    )
}

fn main() {
    let args = args();
    let speech = hearth::audio::wav::read_16k_mono(&args.wav).expect("the WAV reads");
    if let Some(out) = args.write_16k {
        let bytes: Vec<u8> = speech.iter().flat_map(|s| s.to_le_bytes()).collect();
        std::fs::write(&out, bytes).expect("the samples are written");
        eprintln!("{} samples at 16 kHz → {}", speech.len(), out.display());
        return;
    }
    let mut audio = speech;
    audio.resize(audio.len() + PAUSE, 0.0);

    let models = hearth::models::model_dir().expect("a model directory");
    let library =
        hearth::onnx::find_library(None, |k| std::env::var_os(k), std::slice::from_ref(&models))
            .expect("libonnxruntime: run scripts/fetch-models tts");
    let loading = Instant::now();
    let mut turn = SmartTurn::load(&models.join(SMART_TURN_FILE), &library)
        .expect("the Smart Turn model: run scripts/fetch-models turn");
    let loaded = loading.elapsed();
    let p = turn.complete_prob(&audio).expect("a decision");
    println!("{}: P(complete) = {p:.4}", args.wav.display());
    println!("load:      {:8.0} µs", loaded.as_secs_f64() * 1e6);

    let mut features = LogMel::new();
    let (mean, median) = time(args.runs, || {
        features.compute(&audio).expect("features");
    });
    println!("features:  {mean:8.0} µs mean, {median:8.0} µs median");
    let (mean, median) = time(args.runs, || {
        turn.complete_prob(&audio).expect("a decision");
    });
    println!(
        "decision:  {mean:8.0} µs mean, {median:8.0} µs median ({} runs, one thread)",
        args.runs
    );
}
