//! Speak a sentence into a WAV file with the Piper voice: `cargo run --release --example say --
//! "Turn on the kitchen light." request.wav [VOICE.onnx]`. `scripts/demo` uses it to make a
//! spoken request when the workplace's recorded fixtures are not beside the checkout.

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(text), Some(out)) = (args.first(), args.get(1)) else {
        eprintln!("usage: say TEXT OUT.wav [VOICE.onnx]");
        return ExitCode::from(2);
    };
    let config = match args.get(2) {
        Some(v) => Ok(hearth::tts::TtsConfig::new(PathBuf::from(v))),
        None => hearth::tts::TtsConfig::default_voice(),
    };
    let result = config
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
