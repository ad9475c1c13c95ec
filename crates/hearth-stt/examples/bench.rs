//! Transcription time of the audio fixtures with the encoder window trimmed to the utterance and
//! with the full 30 s window, on the real model: what `audio_ctx` trimming saves.
//!
//! ```text
//! cargo run --release -p hearth-stt --example bench -- [--model PATH] [--audio-dir DIR]
//!     [--runs N] [--threads N] [--margins 0,32,64,...] [--prompt TEXT] [--pad-ms BEFORE,AFTER]
//!     [--phrases GRAMMAR.json] [--phrase-margin NATS] [--way-contrast NATS] [--trimmed-only]
//!     [FILE.wav ...]
//! ```
//!
//! Defaults: `$HEARTH_WHISPER_MODEL` or `../shared/models/ggml-tiny.en.bin`,
//! `$HEARTH_AUDIO_DIR` or `../shared/audio`, kitchen.wav and long.wav, 5 runs after one warm-up,
//! the default margin, no initial prompt, no padding (`--pad-ms 320,256` adds the silence
//! `hearth run` puts around a command: its pre-roll, and the pause after which it starts
//! recognising). Each row: the file, the window (frames), the median and fastest whisper
//! time, the time to decode and resample the WAV, and the text. With `--phrases` (a grammar as
//! `hearth phrases --grammar` prints it), each row also shows the phrase pass: the set's
//! likeliest request, both log-likelihoods, the decoder steps and the pass's own time
//! (`--phrase-margin`: how far below the open transcript it may be, 1.5 nats by default; a
//! large one shows how likely a phrase the pass would drop is; `--way-contrast`: how much
//! likelier than the other ways a phrase's way must be where whisper wrote none).
//! No assertions: figures only.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use hearth_stt::audio::Utterance;
use hearth_stt::recognizer::DEFAULT_AUDIO_CTX_MARGIN;
use hearth_stt::{Recognizer, RecognizerConfig};
use wyoming::AudioFormat;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../..");
    let mut model = std::env::var_os("HEARTH_WHISPER_MODEL")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("shared/models/ggml-tiny.en.bin"));
    let mut audio_dir = std::env::var_os("HEARTH_AUDIO_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("shared/audio"));
    let mut runs = 5usize;
    let mut threads = hearth_stt::recognizer::default_threads();
    let mut margins = vec![DEFAULT_AUDIO_CTX_MARGIN];
    let mut files = Vec::new();
    let mut prompt = None;
    let mut pad = (0usize, 0usize);
    let mut phrases = None;
    let mut phrase_margin = hearth_stt::recognizer::DEFAULT_PHRASE_MARGIN;
    let mut way_contrast = hearth_stt::recognizer::DEFAULT_WAY_CONTRAST;
    let mut full = true;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or(format!("{arg} needs a value"));
        match arg.as_str() {
            "--model" => model = value()?.into(),
            "--audio-dir" => audio_dir = value()?.into(),
            "--runs" => runs = value()?.parse()?,
            "--threads" => threads = value()?.parse()?,
            "--margins" => {
                margins = value()?
                    .split(',')
                    .map(str::parse)
                    .collect::<Result<_, _>>()?
            }
            "--prompt" => prompt = Some(value()?),
            "--phrases" => {
                let path = value()?;
                let text = std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))?;
                let grammar: hearth_phrases::Grammar = serde_json::from_str(&text)?;
                phrases = Some(hearth_phrases::Matcher::new(&grammar)?);
            }
            "--phrase-margin" => phrase_margin = value()?.parse()?,
            "--way-contrast" => way_contrast = value()?.parse()?,
            "--pad-ms" => {
                let v = value()?;
                let (a, b) = v.split_once(',').ok_or("--pad-ms BEFORE,AFTER")?;
                pad = (a.parse()?, b.parse()?);
            }
            "--trimmed-only" => full = false,
            "--bench" => {} // passed by `cargo bench`-style runners
            file => files.push(file.to_string()),
        }
    }
    if files.is_empty() {
        files = vec!["kitchen.wav".into(), "long.wav".into()];
    }

    whisper_rs::install_logging_hooks(); // whisper.cpp's logs go nowhere (no subscriber)
                                         // the recogniser's own warnings (a looped transcript and its retry) on stderr
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("HEARTH_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("hearth_stt=warn")),
        )
        .with_writer(std::io::stderr)
        .init();
    let mut recognizers = Vec::new();
    for margin in &margins {
        recognizers.push((format!("trimmed +{margin}"), true, *margin));
    }
    if full {
        recognizers.push(("full 30 s".to_string(), false, 0));
    }

    println!(
        "model {} · {threads} threads · {runs} runs after a warm-up",
        model.display()
    );
    println!(
        "{:<12} {:>6} {:<12} {:>8} {:>10} {:>9} {:>8}  text",
        "file", "audio", "window", "frames", "median ms", "min ms", "prep ms"
    );
    for file in &files {
        let path = audio_dir.join(file);
        let (mut samples, prep, seconds) = load(&path)?;
        let ms = |n: usize| n * 16;
        samples.splice(0..0, std::iter::repeat_n(0.0, ms(pad.0)));
        samples.extend(std::iter::repeat_n(0.0, ms(pad.1)));
        let seconds = seconds + (pad.0 + pad.1) as f64 / 1e3;
        for (label, trim, margin) in &recognizers {
            let mut recognizer = Recognizer::load(
                &model,
                RecognizerConfig {
                    threads,
                    trim_audio_ctx: *trim,
                    audio_ctx_margin: *margin,
                    prompt: prompt.clone(),
                    phrase_margin,
                    way_contrast,
                    ..RecognizerConfig::default()
                },
            )?;
            let warm = recognizer.transcribe(&samples, None, phrases.as_ref(), None)?;
            let mut times: Vec<Duration> = Vec::new();
            let mut pass_times: Vec<Duration> = Vec::new();
            for _ in 0..runs {
                let t = recognizer.transcribe(&samples, None, phrases.as_ref(), None)?;
                times.push(t.elapsed);
                pass_times.extend(t.phrase.map(|p| p.elapsed));
            }
            pass_times.sort();
            times.sort();
            let median = times.get(times.len() / 2).copied().unwrap_or(warm.elapsed);
            let min = times.first().copied().unwrap_or(warm.elapsed);
            println!(
                "{:<12} {:>5.2}s {:<12} {:>8} {:>10.0} {:>9.0} {:>8.1}  {}",
                file,
                seconds,
                label,
                warm.audio_ctx,
                median.as_secs_f64() * 1e3,
                min.as_secs_f64() * 1e3,
                prep.as_secs_f64() * 1e3,
                warm.text,
            );
            if let Some(p) = &warm.phrase {
                println!(
                    "{:<12} phrase pass: {} {:?} (open {:.2}, phrase {:.2}{}), {} steps, median {:.0} ms; open: {:?}",
                    "",
                    if p.taken { "took" } else { "left" },
                    p.phrase.as_deref().unwrap_or("-"),
                    p.open_logprob,
                    p.phrase_logprob,
                    p.way_contrast
                        .map(|c| format!(", its way {c:.2} over the others"))
                        .unwrap_or_default(),
                    p.steps,
                    pass_times
                        .get(pass_times.len() / 2)
                        .map_or(0.0, |d| d.as_secs_f64() * 1e3),
                    p.open,
                );
            }
            if warm.collapsed {
                println!("{:<12} (the trimmed window's transcript looped from its first word: kept once)", "");
            }
            if warm.retried {
                println!("{:<12} (the trimmed window's transcript looped: decoded again with a wider window)", "");
            }
        }
    }
    Ok(())
}

/// The WAV as whisper input, the time decoding and resampling took, and its length in seconds.
fn load(path: &Path) -> Result<(Vec<f32>, Duration, f64), Box<dyn std::error::Error>> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let reader = hound::WavReader::new(&bytes[..])?;
    let spec = reader.spec();
    let pcm: Vec<u8> = reader
        .into_samples::<i16>()
        .map(|s| s.map(i16::to_le_bytes))
        .collect::<Result<Vec<_>, _>>()?
        .concat();
    let start = Instant::now();
    let mut utterance = Utterance::new(600.0, usize::MAX);
    let format = AudioFormat {
        rate: spec.sample_rate,
        width: 2,
        channels: u32::from(spec.channels),
    };
    utterance.push(&format, &pcm)?;
    let seconds = utterance.seconds();
    let samples = utterance.into_whisper_input()?;
    Ok((samples, start.elapsed(), seconds))
}
