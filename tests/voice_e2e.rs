//! End to end through `hearth run`, all real: a fixture WAV in (Capture, Listen), `hearth-stt`
//! (whisper tiny.en) as a child, the agent on Qwen2.5-Coder-0.5B, the demo home's tools, the
//! Piper voice, and a reply WAV out, which `hearth-stt` then transcribes back.
//!
//! Needs `scripts/fetch-models` (LLM, whisper model, voice, onnxruntime) and `hearth-stt` built
//! beside `hearth` (`cargo test --workspace` does both builds). `HEARTH_SKIP_REAL_MODEL=1`
//! skips locally; CI never sets it.
#![cfg(all(feature = "llm", feature = "tts"))]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use hearth::stt::{self, Stt, SttConfig, SttServer};
use hearth::voice::Utterance;
use ractor::Actor;
use serde_json::Value;

fn shared() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared")
}

/// The model directory holds everything `hearth run` needs, or None when skipping.
fn ready() -> Option<PathBuf> {
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
    let stt_bin = Path::new(env!("CARGO_BIN_EXE_hearth")).with_file_name("hearth-stt");
    assert!(
        stt_bin.is_file(),
        "{} is not built: run `cargo test --workspace` (or `cargo build -p hearth-stt`)",
        stt_bin.display()
    );
    Some(dir)
}

struct Run {
    turns: Vec<Value>,
    state: PathBuf,
    reply_wav: PathBuf,
}

fn hearth_run(fixture: &str, tag: &str) -> Run {
    let tmp = std::env::temp_dir().join(format!("hearth-e2e-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).unwrap();
    let state = tmp.join("state");
    let reply_wav = tmp.join("reply.wav");
    let out = Command::new(env!("CARGO_BIN_EXE_hearth"))
        .args(["run", "--once", "--json", "--input"])
        .arg(shared().join("audio").join(fixture))
        .arg("--output")
        .arg(&reply_wav)
        .arg("--tools")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/tools"))
        .env("HEARTH_DEMO_STATE", &state)
        .env("HEARTH_LOG", "hearth=info")
        .output()
        .expect("hearth runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "hearth run failed:\n{stderr}");
    let turns: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON turn per line"))
        .collect();
    eprintln!("{}", String::from_utf8_lossy(&out.stdout));
    Run {
        turns,
        state,
        reply_wav,
    }
}

fn calls(turn: &Value) -> Vec<(String, Value)> {
    turn["turn"]["hops"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|h| h["calls"].as_array().cloned().unwrap_or_default())
        .map(|c| {
            (
                c["name"].as_str().unwrap_or("").to_string(),
                c["arguments"].clone(),
            )
        })
        .collect()
}

/// Transcribe a WAV through the real `hearth-stt`.
fn transcribe(wav: &Path) -> String {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = hearth::models::model_dir().unwrap();
        let program = Path::new(env!("CARGO_BIN_EXE_hearth")).with_file_name("hearth-stt");
        let mut config = SttConfig::new(SttServer::Spawn {
            program,
            model: dir.join("ggml-tiny.en.bin"),
            // the demo home's vocabulary, as hearth would prompt whisper from its tools:
            // tiny.en alone sometimes hears Piper's "light is" as "mighters"
            args: vec![
                "--prompt".into(),
                "kitchen, living room, bedroom, bathroom, light, thermostat".into(),
            ],
        });
        config.health_every = Duration::ZERO;
        let (actor, handle) = Actor::spawn(None, Stt, config).await.unwrap();
        let samples = hearth::audio::wav::read_16k_mono(wav).unwrap();
        let heard = stt::transcribe(&actor, Utterance::whole(samples))
            .await
            .unwrap();
        actor.stop(None);
        let _ = handle.await;
        heard.text
    })
}

#[test]
fn kitchen_wav_turns_the_light_on_and_says_so_out_loud() {
    if ready().is_none() {
        return;
    }
    let run = hearth_run("kitchen.wav", "kitchen");
    assert_eq!(run.turns.len(), 1, "{:?}", run.turns);
    let t = &run.turns[0];
    assert!(
        t["heard"]
            .as_str()
            .unwrap()
            .to_lowercase()
            .contains("kitchen light"),
        "{t}"
    );
    let calls = calls(t);
    assert_eq!(
        calls,
        [(
            "set_light".to_string(),
            serde_json::json!({"room": "kitchen", "on": true})
        )],
        "{t}"
    );
    let light = std::fs::read_to_string(run.state.join("light-kitchen")).unwrap();
    assert_eq!(light.trim(), "on");
    // timings: every stage reported
    for k in ["endpoint", "stt", "first_tts_chunk", "first_audio"] {
        assert!(
            t["timings_ms"][k].as_f64().is_some_and(|v| v > 0.0),
            "{k}: {t}"
        );
    }
    // the reply is real speech that says so
    let said = transcribe(&run.reply_wav).to_lowercase();
    assert!(
        said.contains("kitchen") && said.contains("light"),
        "{said:?}"
    );
}
