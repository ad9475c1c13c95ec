//! The Silero VAD on the real model (`scripts/fetch-models vad tts`): the spoken fixtures are
//! speech and one utterance each, through the same endpointer as the energy gate;
//! music-like chords and knocks are not speech (where the energy gate starts utterances);
//! the Listen actor with the Silero detector endpoints a fixture; a missing model is an error
//! naming the fix. `HEARTH_SKIP_REAL_MODEL=1` skips locally; CI never sets it.
#![cfg(feature = "piper")]

use std::path::{Path, PathBuf};

use hearth::audio::listen::{Endpointer, Listen, ListenArgs, ListenConfig, ListenMsg, VadKind};
use hearth::audio::silero::{Silero, SILERO_FILE};
use hearth::voice::{Captured, Frame, ListenEvent, FRAME_SAMPLES};
use ractor::Actor;

fn paths() -> Option<(PathBuf, PathBuf)> {
    let dir = hearth::models::model_dir().expect("a model directory");
    let model = dir.join(SILERO_FILE);
    let lib = hearth::onnx::find_library(None, |k| std::env::var_os(k), &[dir]);
    match (model.is_file(), lib) {
        (true, Ok(lib)) => Some((model, lib)),
        (_, lib) => {
            if std::env::var("HEARTH_SKIP_REAL_MODEL").as_deref() == Ok("1") {
                eprintln!("skipping: the Silero model or ONNX Runtime is missing (HEARTH_SKIP_REAL_MODEL=1)");
                return None;
            }
            panic!(
                "{} or ONNX Runtime ({lib:?}) is missing: run scripts/fetch-models",
                model.display()
            );
        }
    }
}

fn fixture(name: &str) -> Vec<f32> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/audio")
        .join(name);
    hearth::audio::wav::read_16k_mono(p).unwrap()
}

fn frames(signal: &[f32]) -> Vec<Frame> {
    let at = std::time::Instant::now();
    signal
        .chunks(FRAME_SAMPLES)
        .enumerate()
        .map(|(i, c)| {
            let mut s = c.to_vec();
            s.resize(FRAME_SAMPLES, 0.0);
            Frame {
                samples: s.into(),
                echo: None,
                start: (i * FRAME_SAMPLES) as u64,
                at,
            }
        })
        .collect()
}

/// Utterances (start, end) found in `signal`, with the Silero VAD or the energy gate.
fn utterances(signal: &[f32], silero: Option<&mut Silero>) -> Vec<(u64, u64)> {
    let mut e = Endpointer::new(ListenConfig::default());
    let mut out = Vec::new();
    let mut silero = silero;
    if let Some(s) = silero.as_deref_mut() {
        s.reset();
    }
    let mut events = Vec::new();
    for f in frames(signal) {
        let p = silero
            .as_deref_mut()
            .map(|s| s.speech_prob(&f.samples).expect("a frame is scored"));
        events.extend(e.push_scored(f, p));
    }
    events.extend(e.end());
    for ev in events {
        if let ListenEvent::Utterance(u) = ev {
            out.push((u.start, u.start + u.samples.len() as u64));
        }
    }
    out
}

/// A quiet room, then music starts: three tones changing every 400 ms (about -25 dBFS),
/// and a knock every 700 ms.
fn not_speech(secs: usize) -> Vec<f32> {
    let n = secs * 16000;
    let mut quiet = vec![0.0; 32000];
    quiet.extend((0..n).map(|i| {
        let t = i as f32 / 16000.0;
        let chord = [[220.0, 277.2, 329.6], [196.0, 246.9, 293.7]][(i / 6400) % 2];
        let tones: f32 = chord
            .iter()
            .map(|f| (2.0 * std::f32::consts::PI * f * t).sin())
            .sum::<f32>()
            * 0.03;
        let k = i % 11200;
        let knock = if k < 480 {
            (((i * 7919) % 1000) as f32 / 500.0 - 1.0) * 0.25 * (1.0 - k as f32 / 480.0)
        } else {
            0.0
        };
        tones + knock
    }));
    quiet
}

#[test]
fn silero_finds_each_command_and_ignores_music_and_knocks() {
    let Some((model, lib)) = paths() else { return };
    let mut silero = Silero::load(&model, &lib).expect("Silero loads");
    for name in ["kitchen.wav", "long.wav", "alexa.wav"] {
        let clip = fixture(name);
        let mut signal = vec![0.0; 16000];
        let start = signal.len();
        signal.extend(&clip);
        signal.extend(vec![0.0; 32000]);
        let u = utterances(&signal, Some(&mut silero));
        assert_eq!(u.len(), 1, "{name}: {u:?}");
        let first = start + clip.iter().position(|s| s.abs() > 0.01).unwrap();
        let last = start + clip.iter().rposition(|s| s.abs() > 0.01).unwrap();
        assert!(
            u[0].0 <= first as u64 && u[0].1 >= last as u64,
            "{name}: {u:?} does not hold the speech {first}..{last}"
        );
    }
    let noise = not_speech(8);
    assert_eq!(utterances(&noise, Some(&mut silero)), vec![], "Silero");
    // where the energy gate does start utterances: why Silero is the default
    assert!(!utterances(&noise, None).is_empty(), "energy");
}

#[tokio::test]
async fn the_listen_actor_endpoints_with_silero_and_names_a_missing_model() {
    let Some((model, lib)) = paths() else { return };
    let mut config = ListenConfig {
        vad: VadKind::Silero {
            model,
            ort_library: Some(lib.clone()),
        },
        ..ListenConfig::default()
    };
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let (listen, handle) = Actor::spawn(
        None,
        Listen,
        ListenArgs {
            config: config.clone(),
            events: tx,
        },
    )
    .await
    .expect("Listen starts with Silero");
    let mut signal = vec![0.0; 8000];
    signal.extend(fixture("kitchen.wav"));
    for f in frames(&signal) {
        listen
            .cast(ListenMsg::Captured(Captured::Frame(f)))
            .unwrap();
    }
    listen.cast(ListenMsg::Captured(Captured::End)).unwrap();
    let mut utterances = 0;
    while let Some(ev) = rx.recv().await {
        match ev {
            ListenEvent::Utterance(_) => utterances += 1,
            ListenEvent::End => break,
            _ => {}
        }
    }
    assert_eq!(utterances, 1);
    listen.stop(None);
    handle.await.unwrap();

    let gone = std::env::temp_dir().join("hearth-no-such-silero.onnx");
    config.vad = VadKind::Silero {
        model: gone.clone(),
        ort_library: Some(lib),
    };
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    let err = Actor::spawn(None, Listen, ListenArgs { config, events: tx })
        .await
        .expect_err("a missing model fails the start");
    let msg = err.to_string();
    assert!(
        msg.contains(gone.to_str().unwrap()) && msg.contains("hearth models pull vad:silero"),
        "{msg}"
    );
}
