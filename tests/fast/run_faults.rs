//! `hearth run` with a piece missing: a clear error naming the file and the fix, a failing
//! exit code, and never a hang (each run has a deadline). The checks run before any model
//! is loaded, so these are quick; a bad ONNX Runtime library is only found when the voice
//! loads, after the LLM, and still fails instead of hanging.

#![cfg(feature = "piper")]

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

struct Failed {
    stderr: String,
    took: Duration,
}

/// Run `hearth run --once --input kitchen.wav --output …` plus `args`; it must fail within
/// `within`.
fn run_fails(tag: &str, args: &[&str], env: &[(&str, &str)], within: Duration) -> Failed {
    let tmp = std::env::temp_dir().join(format!("hearth-faults-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_hearth"));
    cmd.arg("run");
    // kitchen.wav holds no wake word: none, unless the test is about them
    if !args.contains(&"--wake") {
        cmd.args(["--wake", "none"]);
    }
    cmd.args(["--once", "--input"])
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../shared/audio/kitchen.wav"
        ))
        .arg("--output")
        .arg(tmp.join("reply.wav"))
        .args(args)
        .env("HEARTH_DEMO_STATE", tmp.join("state"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let started = Instant::now();
    let mut child = cmd.spawn().expect("hearth runs");
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let out = child.wait_with_output().unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
            assert!(!status.success(), "{tag}: hearth run succeeded:\n{stderr}");
            let _ = std::fs::remove_dir_all(&tmp);
            return Failed {
                stderr,
                took: started.elapsed(),
            };
        }
        if started.elapsed() > within {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "{tag}: hearth run still running after {within:?} (a hang):\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn missing(name: &str) -> PathBuf {
    std::env::temp_dir()
        .join(format!("hearth-faults-nothing-{}", std::process::id()))
        .join(name)
}

#[test]
fn a_missing_voice_is_named_with_the_fix() {
    let voice = missing("en_US-nobody-medium.onnx");
    let f = run_fails(
        "voice",
        &["--voice", voice.to_str().unwrap()],
        &[],
        Duration::from_secs(30),
    );
    assert!(
        f.stderr.contains(voice.to_str().unwrap()) && f.stderr.contains("missing"),
        "{}",
        f.stderr
    );
    assert!(f.took < Duration::from_secs(10), "{:?}", f.took);
}

#[test]
fn a_missing_wake_word_model_is_named_with_the_fix() {
    let model = missing("hey_nobody.tflite");
    for (wake, named) in [
        // a name: looked for in the model directory
        ("hey_nobody", "hey_nobody.tflite"),
        // a path
        (model.to_str().unwrap(), model.to_str().unwrap()),
    ] {
        let f = run_fails("wake", &["--wake", wake], &[], Duration::from_secs(30));
        assert!(
            f.stderr.contains(named)
                && f.stderr.contains("missing")
                && f.stderr.contains("hearth models pull"),
            "{}",
            f.stderr
        );
        assert!(f.took < Duration::from_secs(10), "{:?}", f.took);
    }
}

#[test]
fn a_missing_whisper_model_is_named_with_the_fix() {
    let model = missing("ggml-nothing.bin");
    let f = run_fails(
        "stt-model",
        &["--stt-model", model.to_str().unwrap()],
        &[],
        Duration::from_secs(30),
    );
    assert!(
        f.stderr.contains(model.to_str().unwrap())
            && f.stderr.contains("--stt-model")
            && f.stderr.contains("hearth models pull"),
        "{}",
        f.stderr
    );
}

#[test]
fn a_missing_llm_is_named_with_the_fix() {
    let model = missing("qwen-nothing.gguf");
    let f = run_fails(
        "llm",
        &["--model", model.to_str().unwrap()],
        &[],
        Duration::from_secs(60),
    );
    assert!(f.stderr.contains(model.to_str().unwrap()), "{}", f.stderr);
}

#[test]
fn a_missing_onnxruntime_is_named_with_the_fix() {
    let lib = missing("libonnxruntime.so.1.31.1");
    let f = run_fails(
        "ort-missing",
        &[],
        &[("ORT_DYLIB_PATH", lib.to_str().unwrap())],
        Duration::from_secs(30),
    );
    assert!(
        f.stderr.contains(lib.to_str().unwrap()) && f.stderr.contains("ONNX Runtime"),
        "{}",
        f.stderr
    );
    assert!(f.took < Duration::from_secs(10), "{:?}", f.took);
}

/// A file that is not a shared library where ONNX Runtime should be: ort itself would hang
/// on it; hearth tries it first and fails.
#[test]
fn a_broken_onnxruntime_fails_instead_of_hanging() {
    let models = hearth::models::model_dir().unwrap();
    if !models
        .join("qwen2.5-coder-0.5b-instruct-q4_k_m.gguf")
        .is_file()
    {
        if std::env::var("HEARTH_SKIP_REAL_MODEL").as_deref() == Ok("1") {
            eprintln!("skipping: the LLM is missing (HEARTH_SKIP_REAL_MODEL=1)");
            return;
        }
        panic!("the LLM is missing: run scripts/fetch-models (or set HEARTH_SKIP_REAL_MODEL=1 locally)");
    }
    let dir = std::env::temp_dir().join(format!("hearth-faults-badlib-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let lib = dir.join("libonnxruntime.so");
    std::fs::write(&lib, b"not a shared library").unwrap();
    let f = run_fails(
        "ort-broken",
        &[],
        &[("ORT_DYLIB_PATH", lib.to_str().unwrap())],
        Duration::from_secs(600),
    );
    assert!(
        f.stderr.contains(lib.to_str().unwrap()) && f.stderr.contains("cannot load"),
        "{}",
        f.stderr
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_missing_vad_model_is_named_with_the_fix() {
    let model = missing("silero_vad.onnx");
    let config = missing("vad.toml");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    std::fs::write(
        &config,
        format!("[listen]\nvad = \"silero\"\nsilero_model = {:?}\n", model),
    )
    .unwrap();
    let f = run_fails(
        "vad",
        &["--config", config.to_str().unwrap()],
        &[],
        Duration::from_secs(30),
    );
    assert!(
        f.stderr.contains(model.to_str().unwrap())
            && f.stderr.contains("hearth models pull vad:silero")
            && f.stderr.contains("vad = \"energy\""),
        "{}",
        f.stderr
    );
    assert!(f.took < Duration::from_secs(10), "{:?}", f.took);
}

#[test]
fn a_missing_end_of_turn_model_is_named_with_the_fix() {
    let model = missing("smart-turn-v3.2-cpu.onnx");
    let config = missing("turn.toml");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    std::fs::write(
        &config,
        format!(
            "[listen]\nend_of_turn = \"smart-turn\"\nsmart_turn_model = {:?}\n",
            model
        ),
    )
    .unwrap();
    let f = run_fails(
        "turn",
        &["--config", config.to_str().unwrap()],
        &[],
        Duration::from_secs(30),
    );
    assert!(
        f.stderr.contains(model.to_str().unwrap())
            && f.stderr.contains("hearth models pull turn:smart-turn-v3.2")
            && f.stderr.contains("end_of_turn = \"silence\""),
        "{}",
        f.stderr
    );
    assert!(f.took < Duration::from_secs(10), "{:?}", f.took);
}

#[test]
fn a_missing_earcon_is_named_with_the_fix() {
    let sound = missing("ding.wav");
    let config = missing("earcon.toml");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    std::fs::write(&config, format!("[listen]\nearcon = {:?}\n", sound)).unwrap();
    let f = run_fails(
        "earcon",
        &["--config", config.to_str().unwrap()],
        &[],
        Duration::from_secs(30),
    );
    assert!(
        f.stderr.contains("[listen] earcon")
            && f.stderr.contains(sound.to_str().unwrap())
            && f.stderr.contains("\"chime\""),
        "{}",
        f.stderr
    );
    assert!(f.took < Duration::from_secs(10), "{:?}", f.took);
}
