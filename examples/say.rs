//! Speak a sentence into a WAV file with the Piper voice: `cargo run --release --example say --
//! [--length-scale X] "Turn on the kitchen light." request.wav [VOICE.onnx]`. `scripts/demo`
//! uses it to make a spoken request when the workplace's recorded fixtures are not beside the
//! checkout. `--length-scale` sets the speaking rate (the voice's own pace is 1.0; 0.8 is faster,
//! 1.25 slower), for test utterances at several speeds.

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut length_scale = None;
    if let Some(i) = args.iter().position(|a| a == "--length-scale") {
        let value = args.get(i + 1).and_then(|v| v.parse::<f32>().ok());
        match value {
            Some(v) if v.is_finite() && v > 0.0 => length_scale = Some(v),
            _ => {
                eprintln!("say: --length-scale takes a positive number, such as 0.8 or 1.25");
                return ExitCode::from(2);
            }
        }
        args.drain(i..i + 2);
    }
    let (Some(text), Some(out)) = (args.first(), args.get(1)) else {
        eprintln!("usage: say [--length-scale X] TEXT OUT.wav [VOICE.onnx]");
        return ExitCode::from(2);
    };
    let config = match args.get(2) {
        Some(v) => Ok(hearth::tts::TtsConfig::new(PathBuf::from(v))),
        None => hearth::tts::TtsConfig::default_voice(),
    };
    let result = config
        .map(|mut c| {
            c.length_scale = length_scale;
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
