//! Synthesis time and real-time factor of the Piper voice for a short sentence.
//!
//! ```text
//! cargo run --release --no-default-features --features tts --example tts_bench -- ["text"]
//! ```
//!
//! Needs the voice and ONNX Runtime (`scripts/fetch-models`) and espeak-ng data
//! (`scripts/setup`). `HEARTH_BENCH_RUNS` sets the timed runs (default 5; one warm-up run
//! before them is not counted). RTF is synthesis time over audio time: below 1 is faster
//! than real time.

use std::process::ExitCode;
use std::time::Instant;

use hearth::tts::{TtsConfig, TtsError, Voice};

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("tts_bench: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), TtsError> {
    let text = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "The kitchen light is on.".to_string());
    let runs: usize = std::env::var("HEARTH_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(5);
    let cfg = TtsConfig::default_voice()?;
    let started = Instant::now();
    let mut voice = Voice::load(&cfg)?;
    let load_ms = started.elapsed().as_secs_f64() * 1000.0;
    println!(
        "voice {} ({} Hz) loaded in {load_ms:.0} ms",
        cfg.model.display(),
        voice.info().sample_rate
    );
    let warm = voice.synthesize(&text)?;
    println!(
        "warm-up: {:.0} ms for {:.2} s of audio (RTF {:.3})",
        warm.synth_ms,
        warm.pcm.secs(),
        warm.rtf()
    );
    let mut times = Vec::with_capacity(runs);
    let mut audio = 0.0;
    for _ in 0..runs {
        let s = voice.synthesize(&text)?;
        times.push(s.synth_ms);
        audio = s.pcm.secs();
    }
    times.sort_by(f64::total_cmp);
    let median = times[times.len() / 2];
    println!(
        "{text:?}: {audio:.2} s of audio; synthesis over {runs} runs: min {:.0} ms, median {median:.0} ms, max {:.0} ms; RTF (median) {:.3}",
        times[0],
        times[times.len() - 1],
        median / 1000.0 / audio.max(f64::EPSILON)
    );
    Ok(())
}
