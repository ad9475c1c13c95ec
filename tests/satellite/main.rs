//! Wyoming satellites, against the real `wyoming-satellite` 1.0.0 (a separate process each,
//! its microphone a script streaming in real time, its speaker a file): `hearth run
//! --no-audio` with `[[satellite]]` entries connects to them, hears the wake word in what they
//! stream, runs the turn through the same stages and agent as the local microphone, and
//! sends the reply back to the satellite that heard the request.
//!
//! Needs the real models (`scripts/fetch-models`) and the satellite's virtual environment
//! (`scripts/setup`). `HEARTH_SKIP_REAL_MODEL=1` skips locally; CI never sets it.
#![cfg(all(feature = "llm", feature = "piper"))]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use hearth_testkit::satellite::{self as sat, espeak as spoken, Hearth, OpenWakeWord, Satellite};
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
    // the stages' own lines say which satellite too: the wake word heard in its stream
    let log = hearth.log();
    let wake = log
        .lines()
        .find(|l| l.contains("hearth::wake::stage: wake word"));
    assert!(
        wake.is_some_and(|l| l.contains("satellite{name=bedroom}")),
        "{wake:?}\n{log}"
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
    // both pipelines speak with one voice, loaded once
    assert_eq!(
        hearth.log().matches("Piper voice loaded").count(),
        1,
        "{}",
        hearth.log()
    );
}

/// A satellite that hears the wake word itself (wyoming-openwakeword's `ok_nabu`, run by
/// the satellite) and streams only what follows: `run-pipeline` from the `asr` stage opens
/// hearth's window, and the request is answered with no wake word in it.
#[test]
fn a_satellite_with_its_own_wake_word_is_answered() {
    if ready().is_none() {
        return;
    }
    let _one = serial();
    let dir = scratch("own-wake");
    let wake = OpenWakeWord::start(&dir);
    let hall = Satellite::start_waking(&dir, "hall", "Hall", &wake);
    let hearth = Hearth::start(&dir, &config(&[(&hall, "hall")]), &[]);
    connected(&hearth, 1);
    let nabu = spoken(&dir, "nabu", "Okay Nabu.");
    let lock = spoken(&dir, "lock", "Lock the front door.");
    // as a person does after the satellite's wake sound: a pause, then the request
    hall.say_after(&[&nabu, &lock], Duration::from_millis(1200));
    let turns = hearth.turns(1, Duration::from_secs(90));
    assert!(
        hearth.log().contains("start=Asr"),
        "the satellite did not start from its own wake word:\n{}",
        hall.log()
    );
    assert_eq!(
        calls(&turns[0]),
        [(
            "set_lock".to_string(),
            serde_json::json!({"door": "front", "locked": true})
        )],
        "{}",
        turns[0]
    );
    assert_eq!(turns[0]["satellite"], "hall");
}

/// A satellite that misbehaves, as a test-written Wyoming server on loopback: each time
/// hearth connects it answers `describe`, waits for `run-satellite`, then does one of
/// `faults` in turn (then closes the connection, and listens again).
struct BadSatellite {
    port: u16,
    connections: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

#[derive(Clone, Copy, Debug)]
enum Fault {
    /// Bytes that are no Wyoming event, then silence.
    Garbage,
    /// Half of a request (the wake word and "turn on the"), then the connection drops.
    CutOff,
    /// A whole request's audio and never an `audio-stop`, then the connection drops.
    NoStop,
}

impl BadSatellite {
    fn start(faults: Vec<Fault>, request: &Path) -> BadSatellite {
        use std::io::{BufRead, BufReader, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let pcm: Vec<u8> = hearth::audio::wav::read_16k_mono(request)
            .unwrap()
            .iter()
            .flat_map(|&s| hearth::voice::f32_to_i16(s).to_le_bytes())
            .collect();
        let connections = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let seen = connections.clone();
        std::thread::spawn(move || {
            for (i, stream) in listener.incoming().enumerate() {
                let Ok(mut stream) = stream else { return };
                seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let fault = faults[i % faults.len()];
                let mut lines = BufReader::new(stream.try_clone().unwrap());
                let mut line = String::new();
                // describe → info; run-satellite → the fault
                while lines.read_line(&mut line).is_ok_and(|n| n > 0) {
                    if line.contains("\"describe\"") {
                        let info = r#"{"type": "info", "data": {"satellite": {"name": "bad", "installed": true}}}"#;
                        let _ = writeln!(stream, "{info}");
                    }
                    if line.contains("\"run-satellite\"") {
                        break;
                    }
                    line.clear();
                }
                let chunk = |bytes: &[u8]| {
                    let mut e = format!(
                        "{{\"type\": \"audio-chunk\", \"data\": {{\"rate\": 16000, \"width\": 2, \"channels\": 1}}, \"payload_length\": {}}}\n",
                        bytes.len()
                    )
                    .into_bytes();
                    e.extend_from_slice(bytes);
                    e
                };
                let stream_pcm = |stream: &mut std::net::TcpStream, pcm: &[u8]| {
                    for piece in pcm.chunks(2048) {
                        if stream.write_all(&chunk(piece)).is_err() {
                            return;
                        }
                        std::thread::sleep(Duration::from_millis(64));
                    }
                };
                match fault {
                    Fault::Garbage => {
                        for _ in 0..20 {
                            let _ = stream.write_all(b"\x00\xff{not json at all\n\"type\"\n");
                        }
                        std::thread::sleep(Duration::from_secs(2));
                    }
                    Fault::CutOff => stream_pcm(&mut stream, &pcm[..(pcm.len() / 2) & !1]),
                    Fault::NoStop => stream_pcm(&mut stream, &pcm),
                }
                let _ = stream.shutdown(std::net::Shutdown::Both);
            }
        });
        BadSatellite { port, connections }
    }

    fn connections(&self) -> usize {
        self.connections.load(std::sync::atomic::Ordering::SeqCst)
    }
}

/// A satellite that sends garbage, one that drops its connection mid-utterance and one that
/// never sends `audio-stop`, beside a good one: each costs only its own turns. hearth
/// connects to the bad one again and again (with a backoff), keeps running, and the good
/// satellite's request, said while the bad one misbehaves, is answered.
#[test]
fn a_misbehaving_satellite_costs_only_its_own_turns() {
    if ready().is_none() {
        return;
    }
    let _one = serial();
    let dir = scratch("faults");
    let kitchen = spoken(&dir, "kitchen", "Okay Nabu, turn on the kitchen light.");
    let bad = BadSatellite::start(vec![Fault::Garbage, Fault::CutOff, Fault::NoStop], &kitchen);
    let bedroom = Satellite::start(&dir, "bedroom", "Bedroom");
    let config = format!(
        "{}[[satellite]]\nname = \"bad\"\nurl = \"tcp://127.0.0.1:{}\"\nroom = \"hall\"\n",
        config(&[(&bedroom, "bedroom")]),
        bad.port
    );
    let hearth = Hearth::start(&dir, &config, &[]);
    connected(&hearth, 2);
    // the bad satellite goes through its faults, reconnected after each
    hearth.wait_log("satellite disconnected", 3, Duration::from_secs(120));
    assert!(bad.connections() >= 3, "{}", hearth.log());
    let lock = spoken(&dir, "lock", "Okay Nabu, lock the front door.");
    bedroom.say(&lock);
    let turns = hearth.turns(1, Duration::from_secs(90));
    let good: Vec<&Value> = turns
        .iter()
        .filter(|t| t["satellite"] == "bedroom")
        .collect();
    let started = std::time::Instant::now();
    let good = if good.is_empty() {
        // the bad one's turns (the request it cut off, the one it never ended) came first
        loop {
            let turns = hearth.turns(1, Duration::from_secs(1));
            if let Some(t) = turns.iter().find(|t| t["satellite"] == "bedroom") {
                break t.clone();
            }
            assert!(
                started.elapsed() < Duration::from_secs(90),
                "{turns:?}\n{}",
                hearth.log()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    } else {
        good[0].clone()
    };
    assert_eq!(
        calls(&good),
        [(
            "set_lock".to_string(),
            serde_json::json!({"door": "front", "locked": true})
        )],
        "{good}"
    );
    let log = hearth.log();
    assert!(
        log.contains("could not be read"),
        "the garbage was not noticed:\n{log}"
    );
    assert!(!log.contains("panicked"), "{log}");
}

/// A `[[satellite]]` with a name and no url is found by zeroconf: the real satellite
/// announces itself (`_wyoming._tcp`, as it does unless `--no-zeroconf`), hearth connects
/// to where it is and answers it.
#[test]
fn a_satellite_named_without_an_address_is_found_by_zeroconf() {
    if ready().is_none() {
        return;
    }
    let _one = serial();
    let dir = scratch("zeroconf");
    // a name no other test's satellite announces, on a shared network
    let name = format!("attic-{}", std::process::id());
    let attic = Satellite::start_announced(&dir, &name, "Attic");
    let config = format!("[[satellite]]\nname = \"{name}\"\nroom = \"bedroom\"\n");
    let hearth = Hearth::start(&dir, &config, &[]);
    hearth.wait_log("satellite found by zeroconf", 1, Duration::from_secs(60));
    connected(&hearth, 1);
    attic.say(&spoken(&dir, "light", "Okay Nabu, turn off the light."));
    let turns = hearth.turns(1, Duration::from_secs(90));
    assert_eq!(turns[0]["satellite"], name.as_str());
    assert_eq!(
        calls(&turns[0]),
        [(
            "set_light".to_string(),
            serde_json::json!({"room": "bedroom", "on": false})
        )],
        "{}",
        turns[0]
    );
}

/// `Announce(text, room)` on D-Bus: said on the satellites of that room only, on every one
/// for `""`; a room no satellite is in is an error naming the rooms there are.
#[test]
fn an_announcement_is_said_in_its_room() {
    if ready().is_none() {
        return;
    }
    let _one = serial();
    let dir = scratch("announce");
    let bus = hearth_testkit::services::PrivateBus::start();
    let bedroom = Satellite::start(&dir, "bedroom", "Bedroom");
    let hall = Satellite::start(&dir, "hall", "Hall");
    let config = config(&[(&bedroom, "bedroom"), (&hall, "hall")]);
    let hearth = Hearth::start_on_bus(&dir, &config, &bus.address);
    connected(&hearth, 2);
    let announce = |text: &str, room: &str| {
        Command::new("busctl")
            .arg(format!("--address={}", bus.address))
            .args([
                "call",
                "io.hearth.Agent1",
                "/io/hearth/Agent",
                "io.hearth.Agent1",
            ])
            .args(["Announce", "ss", text, room])
            .output()
            .expect("busctl runs")
    };
    let out = announce("Dinner is ready.", "bedroom");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // half a second of speech at 22,050 Hz on the bedroom's speaker, nothing on the hall's
    let started = std::time::Instant::now();
    while bedroom.heard().len() < 11_025 && started.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(bedroom.heard().len() >= 11_025, "{}", hearth.log());
    assert!(rms(&bedroom.heard()) > 300.0);
    // the bell first: its first note, E5 (659.3 Hz), is most of the first 100 ms that sound
    let heard: Vec<f32> = bedroom
        .heard()
        .iter()
        .skip_while(|s| s.unsigned_abs() < 100)
        .take(2_205)
        .map(|&s| f32::from(s) / 32_768.0)
        .collect();
    let bell = hearth_testkit::tone::share_at(&heard, 22_050, 659.3);
    assert!(
        bell > 0.4,
        "the announcement began with {bell:.2} of the bell's note"
    );
    std::thread::sleep(Duration::from_secs(2));
    assert!(
        hall.heard().is_empty(),
        "the hall heard the bedroom's announcement"
    );
    // everywhere
    let out = announce("Lights out in five minutes.", "");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let started = std::time::Instant::now();
    while hall.heard().len() < 11_025 && started.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(hall.heard().len() >= 11_025, "{}", hearth.log());
    // nowhere: an error that names the rooms
    let out = announce("hello", "attic");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("bedroom") && err.contains("hall"),
        "{err}"
    );
    // an announcement is no turn
    assert!(hearth.turns_now().is_empty(), "{:?}", hearth.turns_now());
    // the face shows both satellites, and says which one heard a request
    let out = Command::new("busctl")
        .arg(format!("--address={}", bus.address))
        .args([
            "get-property",
            "io.hearth.Agent1",
            "/io/hearth/Agent",
            "io.hearth.Agent1",
        ])
        .arg("Satellites")
        .output()
        .expect("busctl runs");
    let shown = String::from_utf8_lossy(&out.stdout).replace('\\', "");
    for name in ["bedroom", "hall"] {
        let entry = format!("{{\"name\":\"{name}\",\"connected\":true,");
        assert!(
            shown.contains(&entry),
            "{name} not shown connected: {shown}"
        );
    }
    let (tx, rx) = std::sync::mpsc::channel();
    let address = bus.address.clone();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Runtime::new().unwrap();
        rt.block_on(async {
            use futures_util::StreamExt;
            let mut signals = hearth_testkit::services::agent_signals(&address).await;
            let _ = tx.send(None);
            while let Some(Ok(m)) = signals.next().await {
                let member = m
                    .header()
                    .member()
                    .map(|n| n.to_string())
                    .unwrap_or_default();
                if member == "Heard" || member == "Replied" {
                    let body = m.body().deserialize::<(String, String)>().unwrap();
                    let _ = tx.send(Some((member, body.0, body.1)));
                }
            }
        });
    });
    assert_eq!(
        rx.recv_timeout(Duration::from_secs(10)).unwrap(),
        None,
        "watching"
    );
    hall.say(&spoken(&dir, "lock", "Okay Nabu, lock the front door."));
    let mut seen = Vec::new();
    while let Ok(Some(s)) = rx.recv_timeout(Duration::from_secs(60)) {
        seen.push(s);
        if seen.iter().any(|(m, _, _)| m == "Replied") {
            break;
        }
    }
    let sources: Vec<(&str, &str)> = seen
        .iter()
        .map(|(m, _, s)| (m.as_str(), s.as_str()))
        .collect();
    assert_eq!(
        sources,
        [("Heard", "hall"), ("Replied", "hall")],
        "{seen:?}"
    );
    // muted on D-Bus: every satellite is paused (it streams nothing), then run again
    let mute = |on: &str| {
        let out = Command::new("busctl")
            .arg(format!("--address={}", bus.address))
            .args([
                "set-property",
                "io.hearth.Agent1",
                "/io/hearth/Agent",
                "io.hearth.Agent1",
            ])
            .args(["Muted", "b", on])
            .output()
            .expect("busctl runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    mute("true");
    hearth.wait_log("paused=true", 2, Duration::from_secs(10));
    mute("false");
    hearth.wait_log("paused=false", 2, Duration::from_secs(10));
}
