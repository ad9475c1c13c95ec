//! The real test model, shared by the real-model tests.
//!
//! CI fetches the model (`scripts/fetch-models` in `.ci/run`); a missing model fails the test
//! with the fix. Locally, `HEARTH_SKIP_REAL_MODEL=1` skips (CI never sets it).

/// The Qwen2.5-Coder-0.5B GGUF path, or None when skipping is asked for.
pub fn qwen_path() -> Option<std::path::PathBuf> {
    let preset = hearth::preset::Preset::load("qwen2.5-coder").expect("the built-in preset");
    let source = preset
        .model
        .expect("the qwen2.5-coder preset names its model");
    or_skip(
        hearth::models::locate(&source),
        "a real-model test",
        "run scripts/fetch-models",
    )
}

/// What a real-component test needs, or None when it is missing and skipping is asked for
/// (`HEARTH_SKIP_REAL_MODEL=1`, which CI never sets); missing otherwise, the test fails with
/// the error and `fix`.
pub fn or_skip<T, E: std::fmt::Display>(found: Result<T, E>, what: &str, fix: &str) -> Option<T> {
    match found {
        Ok(t) => Some(t),
        Err(e) if std::env::var("HEARTH_SKIP_REAL_MODEL").as_deref() == Ok("1") => {
            eprintln!("skipping {what} (HEARTH_SKIP_REAL_MODEL=1): {e}");
            None
        }
        Err(e) => panic!("{e}\n({fix}, or set HEARTH_SKIP_REAL_MODEL=1 to skip locally)"),
    }
}

/// The default Piper voice (en_US-joe-medium) in the model directory, with the ONNX Runtime
/// library and espeak-ng data it needs all found ([`hearth::tts::TtsConfig::resolve`]), or None
/// when skipping is asked for. Like the GGUF: missing pieces fail the test with the fix.
pub fn piper_voice() -> Option<hearth::tts::TtsConfig> {
    let found = hearth::tts::TtsConfig::default_voice().and_then(|c| c.resolve().map(|_| c));
    or_skip(
        found,
        "a real-voice test",
        "run scripts/setup and scripts/fetch-models",
    )
}

/// The model directory when it holds everything `hearth run` needs (the GGUF, whisper tiny.en,
/// the Piper voice) and `hearth-stt` is built beside `hearth`, or None when skipping is asked
/// for. A missing piece fails the test with the fix.
pub fn voice_models() -> Option<std::path::PathBuf> {
    let dir = hearth::models::model_dir().expect("a model directory");
    let need = [
        "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        "ggml-tiny.en.bin",
        "en_US-joe-medium.onnx",
        "en_US-joe-medium.onnx.json",
    ];
    for n in need {
        if !dir.join(n).is_file() {
            if std::env::var("HEARTH_SKIP_REAL_MODEL").as_deref() == Ok("1") {
                eprintln!("skipping: {n} is missing (HEARTH_SKIP_REAL_MODEL=1)");
                return None;
            }
            panic!(
                "{} is missing: run scripts/fetch-models (or set HEARTH_SKIP_REAL_MODEL=1 locally)",
                dir.join(n).display()
            );
        }
    }
    let stt_bin = crate::hearth_exe().with_file_name("hearth-stt");
    assert!(
        stt_bin.is_file(),
        "{} is not built: run `cargo test --workspace` (or `cargo build -p hearth-stt`)",
        stt_bin.display()
    );
    Some(dir)
}
