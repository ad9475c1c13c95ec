//! Wyoming satellites, against the real `wyoming-satellite` 1.0.0 (a separate process each,
//! its microphone a script streaming in real time, its speaker a file): `hearth run
//! --no-audio` with `[[satellite]]` entries connects to them, hears the wake word in what they
//! stream, runs the turn through the same stages and agent as the local microphone, and
//! sends the reply back to the satellite that heard the request.
//!
//! Needs the real models (`scripts/fetch-models`) and the satellite's virtual environment
//! (`scripts/setup`). `HEARTH_SKIP_REAL_MODEL=1` skips locally; CI never sets it.
#![cfg(all(feature = "llm", feature = "tts"))]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use hearth_testkit::satellite::{self as sat, Hearth, Satellite};
use serde_json::Value;

/// A fresh scratch directory for one test.
fn scratch(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("hearth-sat-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The models and the satellite program are there, or None when skipping.
fn ready() -> Option<()> {
    hearth_testkit::model::voice_models()?;
    sat::available()
}

/// One hearth at a time (each loads the models; real time must not starve on 2 cores).
fn serial() -> MutexGuard<'static, ()> {
    static SERIAL: Mutex<()> = Mutex::new(());
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// `text` spoken by espeak-ng into `dir/name.wav`.
fn spoken(dir: &Path, name: &str, text: &str) -> PathBuf {
    let wav = dir.join(format!("{name}.wav"));
    let ok = Command::new("espeak-ng")
        .args(["-v", "en-us", "-s", "175", "-w"])
        .arg(&wav)
        .arg(text)
        .status()
        .expect("espeak-ng runs (scripts/setup installs it)");
    assert!(ok.success(), "espeak-ng failed for {text:?}");
    wav
}

fn config(sats: &[(&Satellite, &str)]) -> String {
    sats.iter()
        .map(|(s, room)| {
            format!(
                "[[satellite]]\nname = \"{}\"\nurl = \"{}\"\nroom = \"{room}\"\n",
                s.name,
                s.url()
            )
        })
        .collect()
}

/// The calls of a turn, as (name, arguments).
fn calls(turn: &Value) -> Vec<(String, Value)> {
    let hops = turn["turn"]["hops"].as_array().cloned().unwrap_or_default();
    hops.iter()
        .flat_map(|h| h["calls"].as_array().cloned().unwrap_or_default())
        .map(|c| {
            (
                c["name"].as_str().unwrap_or("").to_string(),
                c["arguments"].clone(),
            )
        })
        .collect()
}

/// Waits until hearth has connected to every satellite and each pipeline listens.
fn connected(hearth: &Hearth, n: usize) {
    hearth.wait_log("satellite connected", n, Duration::from_secs(120));
    hearth.wait_log(
        "capture started source=satellite",
        n,
        Duration::from_secs(120),
    );
    // the microphone pipe has been read for a moment: the wake word stage is warm
    std::thread::sleep(Duration::from_secs(2));
}

/// RMS of 16-bit samples.
fn rms(samples: &[i16]) -> f64 {
    let sum: f64 = samples.iter().map(|&s| f64::from(s) * f64::from(s)).sum();
    (sum / samples.len().max(1) as f64).sqrt()
}

/// "Okay Nabu, turn on the kitchen light." said to a satellite: hearth's wake word in its
/// stream, the intent's call, the reply's audio played by that satellite, which is told the
/// transcript; the turn says which satellite heard it. Then "turn on the light" there turns
/// on the light of the satellite's room.
#[test]
fn a_request_to_a_satellite_runs_its_tool_and_is_answered_there() {
    if ready().is_none() {
        return;
    }
    let _one = serial();
    let dir = scratch("one");
    let bedroom = Satellite::start(&dir, "bedroom", "Bedroom");
    let hearth = Hearth::start(&dir, &config(&[(&bedroom, "bedroom")]), &[]);
    connected(&hearth, 1);
    bedroom.say(&spoken(
        &dir,
        "kitchen",
        "Okay Nabu, turn on the kitchen light.",
    ));
    let turns = hearth.turns(1, Duration::from_secs(90));
    let t = &turns[0];
    assert_eq!(t["satellite"], "bedroom", "{t}");
    assert_eq!(
        calls(t),
        [(
            "set_light".to_string(),
            serde_json::json!({"room": "kitchen", "on": true})
        )],
        "{t}"
    );
    let light = std::fs::read_to_string(hearth.state.join("light-kitchen")).unwrap();
    assert_eq!(light.trim(), "on");
    // the reply reached the satellite's speaker: over a second of voice at 22,050 Hz
    let started = std::time::Instant::now();
    while bedroom.heard().len() < 22_050 && started.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(200));
    }
    let heard = bedroom.heard();
    assert!(
        heard.len() >= 22_050,
        "{} samples played:\n{}",
        heard.len(),
        bedroom.log()
    );
    assert!(
        rms(&heard) > 300.0,
        "the reply is silent: rms {}",
        rms(&heard)
    );
    // the satellite was told what was heard (it stops streaming on a transcript)
    let log = bedroom.log();
    assert!(log.contains("type='transcript'"), "{log}");
    assert!(
        hearth.log().contains("session=voice-bedroom-0"),
        "{}",
        hearth.log()
    );
    // a request that names no room is about the satellite's
    bedroom.say(&spoken(&dir, "light", "Okay Nabu, turn on the light."));
    let turns = hearth.turns(2, Duration::from_secs(90));
    assert_eq!(
        calls(&turns[1]),
        [(
            "set_light".to_string(),
            serde_json::json!({"room": "bedroom", "on": true})
        )],
        "{}",
        turns[1]
    );
    let light = std::fs::read_to_string(hearth.state.join("light-bedroom")).unwrap();
    assert_eq!(light.trim(), "on");
}

/// Two satellites spoken to at the same moment: both requests are answered, each by its own
/// satellite's turn, neither lost.
#[test]
fn two_satellites_speaking_at_once_are_both_answered() {
    if ready().is_none() {
        return;
    }
    let _one = serial();
    let dir = scratch("two");
    let bedroom = Satellite::start(&dir, "bedroom", "Bedroom");
    let hall = Satellite::start(&dir, "hall", "Hall");
    let hearth = Hearth::start(
        &dir,
        &config(&[(&bedroom, "bedroom"), (&hall, "hall")]),
        &[],
    );
    connected(&hearth, 2);
    let light = spoken(&dir, "kitchen", "Okay Nabu, turn on the kitchen light.");
    let lock = spoken(&dir, "lock", "Okay Nabu, lock the front door.");
    bedroom.say(&light);
    hall.say(&lock);
    let turns = hearth.turns(2, Duration::from_secs(120));
    let by = |name: &str| {
        turns
            .iter()
            .find(|t| t["satellite"] == name)
            .unwrap_or_else(|| panic!("no turn from {name}: {turns:?}"))
    };
    assert_eq!(
        calls(by("bedroom")),
        [(
            "set_light".to_string(),
            serde_json::json!({"room": "kitchen", "on": true})
        )],
        "{turns:?}"
    );
    assert_eq!(
        calls(by("hall")),
        [(
            "set_lock".to_string(),
            serde_json::json!({"door": "front", "locked": true})
        )],
        "{turns:?}"
    );
    for s in [&bedroom, &hall] {
        let started = std::time::Instant::now();
        while s.heard().len() < 22_050 && started.elapsed() < Duration::from_secs(20) {
            std::thread::sleep(Duration::from_millis(200));
        }
        assert!(
            s.heard().len() >= 22_050,
            "{} heard no reply:\n{}",
            s.name,
            s.log()
        );
    }
}
