//! Speak a sentence into a WAV file with the Piper voice: `cargo run --release --example say --
//! [--length-scale X] [--noise-scale X] "Turn on the kitchen light." request.wav [VOICE.onnx]`.
//! `scripts/demo` uses it to make a spoken request when the workplace's recorded fixtures are
//! not beside the checkout. `--length-scale` sets the speaking rate (the voice's own pace is
//! 1.0; 0.8 is faster, 1.25 slower), `--noise-scale` how much each phoneme's sound varies (0 is
//! the same every time; the voice's own value is about 0.667), for test utterances at several
//! speeds and in several variants.

use std::path::PathBuf;
use std::process::ExitCode;

/// Takes `--flag VALUE` out of `args`: `Ok(None)` when absent, an error when the value is not a
/// number that `ok` accepts.
fn take_number(
    args: &mut Vec<String>,
    flag: &str,
    ok: fn(f32) -> bool,
    what: &str,
) -> Result<Option<f32>, String> {
    let Some(i) = args.iter().position(|a| a == flag) else {
        return Ok(None);
    };
    let value = args.get(i + 1).and_then(|v| v.parse::<f32>().ok());
    match value {
        Some(v) if v.is_finite() && ok(v) => {
            args.drain(i..i + 2);
            Ok(Some(v))
        }
        _ => Err(format!("{flag} takes {what}")),
    }
}

fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let numbers = take_number(
        &mut args,
        "--length-scale",
        |v| v > 0.0,
        "a positive number, such as 0.8 or 1.25",
    )
    .and_then(|length| {
        take_number(
            &mut args,
            "--noise-scale",
            |v| v >= 0.0,
            "a number from 0 up, such as 0 or 0.667",
        )
        .map(|noise| (length, noise))
    });
    let (length_scale, noise_scale) = match numbers {
        Ok(n) => n,
        Err(e) => {
            eprintln!("say: {e}");
            return ExitCode::from(2);
        }
    };
    let (Some(text), Some(out)) = (args.first(), args.get(1)) else {
        eprintln!("usage: say [--length-scale X] [--noise-scale X] TEXT OUT.wav [VOICE.onnx]");
        return ExitCode::from(2);
    };
    let config = match args.get(2) {
        Some(v) => Ok(hearth::tts::TtsConfig::new(PathBuf::from(v))),
        None => hearth::tts::TtsConfig::default_voice(),
    };
    let result = config
        .map(|mut c| {
            c.length_scale = length_scale;
            c.noise_scale = noise_scale;
            c
        })
        .and_then(|c| hearth::tts::Voice::load(&c))
        .and_then(|mut v| v.synthesize(text))
        .map_err(|e| e.to_string())
        .and_then(|said| {
            let mut sink = hearth::audio::wav::WavSink::create(out, said.pcm.rate)
                .map_err(|e| e.to_string())?;
            sink.write_i16(&said.pcm.samples)
                .and_then(|()| sink.finalize())
                .map_err(|e| e.to_string())
        });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("say: {e}");
            ExitCode::FAILURE
        }
    }
}
