//! cpal's PulseAudio host (the `pulseaudio` feature, a pure-Rust client) against a real
//! PulseAudio server with a null sink, paced in real time: play a tone to `vsink`, capture
//! it back from `vsink.monitor`, and stop a reply mid-way.
//!
//! The test starts its own `pulseaudio` with a private `XDG_RUNTIME_DIR` and `HOME` and kills
//! it afterwards. The client finds the server through `PULSE_SERVER` and `PULSE_COOKIE`,
//! set once for this test process (its own process: env is process-wide). If `pulseaudio`
//! is not installed the test fails and says how to install it; only
//! `HEARTH_SKIP_AUDIO_SERVER=1` skips it, explicitly.

#![cfg(feature = "audio")]

use std::time::{Duration, Instant};

use hearth::audio::{
    Capture, CaptureArgs, CaptureMsg, CaptureSource, DeviceSpec, Playback, PlaybackArgs,
    PlaybackMsg, PlaybackSink,
};
use hearth::voice::{Captured, Pcm, PlaybackEvent, ReplyId};
use ractor::Actor;
use tokio::sync::mpsc;

use hearth_testkit::pulse::Pulse;

/// Starts the server with the null sink `vsink`; `None` when skipped on purpose.
fn start_server() -> Option<Pulse> {
    if std::env::var("HEARTH_SKIP_AUDIO_SERVER").as_deref() == Ok("1") {
        eprintln!("HEARTH_SKIP_AUDIO_SERVER=1: PulseAudio tests skipped");
        return None;
    }
    let server = Pulse::with_sinks("audio", &["vsink"]).unwrap_or_else(|e| {
        panic!("{e}; or set HEARTH_SKIP_AUDIO_SERVER=1 to skip these tests on purpose")
    });
    // SAFETY: this process's only test sets these before it creates any PulseAudio client.
    for (k, v) in &server.env {
        unsafe { std::env::set_var(k, v) };
    }
    Some(server)
}

fn pulse(name: &str) -> DeviceSpec {
    DeviceSpec {
        host: Some("pulseaudio".into()),
        name: Some(name.into()),
        rate: None,
        channels: None,
        // generous: CI machines are loaded (debug build, parallel jobs) and PulseAudio
        // stretches the audio on underruns
        buffer_ms: Some(100),
    }
}

fn tone(freq: f32, rate: u32, secs: f32) -> Vec<i16> {
    (0..(rate as f32 * secs) as usize)
        .map(|i| {
            let t = i as f32 / rate as f32;
            ((t * freq * std::f32::consts::TAU).sin() * 0.5 * 32767.0) as i16
        })
        .collect()
}

/// The strongest frequency in `samples` (16 kHz) among `candidates`, by Goertzel power.
fn power_at(samples: &[f32], freq: f32) -> f64 {
    let w = 2.0 * std::f64::consts::PI * f64::from(freq) / 16000.0;
    let coeff = 2.0 * w.cos();
    let (mut s1, mut s2) = (0.0f64, 0.0f64);
    for &x in samples {
        let s0 = f64::from(x) + coeff * s1 - s2;
        s2 = s1;
        s1 = s0;
    }
    (s1 * s1 + s2 * s2 - coeff * s1 * s2) / samples.len() as f64
}

struct Recorder {
    capture: ractor::ActorRef<CaptureMsg>,
    handle: tokio::task::JoinHandle<()>,
    rx: mpsc::Receiver<Captured>,
}

async fn record(name: &str) -> Recorder {
    let (out, rx) = mpsc::channel(256);
    let (capture, handle) = Actor::spawn(
        None,
        Capture,
        CaptureArgs {
            source: CaptureSource::device(pulse(name)),
            out,
        },
    )
    .await
    .unwrap();
    let info = ractor::call!(capture, CaptureMsg::Start).unwrap().unwrap();
    println!("capturing from {info:?}");
    Recorder {
        capture,
        handle,
        rx,
    }
}

impl Recorder {
    /// Frames (with their wall-clock times) until stopped.
    async fn finish(mut self) -> Vec<(f32, Instant)> {
        self.capture.cast(CaptureMsg::Stop).unwrap();
        let mut out = Vec::new();
        loop {
            match tokio::time::timeout(Duration::from_secs(5), self.rx.recv()).await {
                Ok(Some(Captured::Frame(f))) => {
                    out.extend(f.samples.iter().map(|&s| (s, f.at)));
                }
                Ok(Some(Captured::End)) => break,
                other => panic!("no End after Stop: {other:?}"),
            }
        }
        let stats = ractor::call!(self.capture, CaptureMsg::Stats).unwrap();
        assert_eq!(stats.frames_dropped, 0);
        assert_eq!(stats.samples_dropped, 0, "real-time capture keeps up");
        self.capture.stop(None);
        self.handle.await.unwrap();
        out
    }
}

async fn spawn_player() -> (
    ractor::ActorRef<PlaybackMsg>,
    tokio::task::JoinHandle<()>,
    mpsc::UnboundedReceiver<PlaybackEvent>,
) {
    let (events, rx) = mpsc::unbounded_channel();
    let (playback, handle) = Actor::spawn(
        None,
        Playback,
        PlaybackArgs {
            sink: PlaybackSink::Device(pulse("vsink")),
            events,
            echo_tap: None,
            volume: Default::default(),
        },
    )
    .await
    .unwrap();
    let stats = ractor::call!(playback, PlaybackMsg::Stats).unwrap();
    println!("playing to {} at {} Hz", stats.output, stats.rate);
    (playback, handle, rx)
}

async fn event(rx: &mut mpsc::UnboundedReceiver<PlaybackEvent>) -> PlaybackEvent {
    tokio::time::timeout(Duration::from_secs(10), rx.recv())
        .await
        .expect("a playback event within 10 s")
        .expect("events open")
}

/// One test (one server, killed at the end even on failure), two scenarios in turn.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pulseaudio_null_sink() {
    let Some(_server) = start_server() else {
        return;
    };
    tone_played_to_the_null_sink_is_captured_from_its_monitor().await;
    stop_mid_reply_silences_the_sink().await;
}

async fn tone_played_to_the_null_sink_is_captured_from_its_monitor() {
    let rid = ReplyId::fresh();
    let recorder = record("vsink.monitor").await;
    let (playback, handle, mut rx) = spawn_player().await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    playback
        .cast(PlaybackMsg::Play {
            reply: rid,
            pcm: Pcm {
                samples: tone(440.0, 22050, 1.0).into(),
                rate: 22050,
            },
        })
        .unwrap();
    playback
        .cast(PlaybackMsg::EndOfReply { reply: rid })
        .unwrap();
    let mut started = None;
    let mut levels = Vec::new();
    let stopped_at = loop {
        match event(&mut rx).await {
            PlaybackEvent::Started { at, .. } => started = Some(at),
            PlaybackEvent::Level { rms } => levels.push(rms),
            PlaybackEvent::Stopped {
                at, interrupted, ..
            } => {
                assert!(!interrupted);
                break at;
            }
        }
    };
    let started = started.expect("Started before Stopped");
    let played_for = stopped_at - started;
    println!(
        "reply of 1.000 s: Started -> Stopped {:.3} s, {} Level events, mean level {:.3}",
        played_for.as_secs_f64(),
        levels.len(),
        levels.iter().sum::<f32>() / levels.len().max(1) as f32
    );
    assert!(
        played_for > Duration::from_millis(800),
        "paced: {played_for:?}"
    );
    assert!(!levels.is_empty());
    // a 0.5-amplitude sine has an RMS of 0.354
    assert!(
        levels.iter().any(|&l| (l - 0.354).abs() < 0.05),
        "{levels:?}"
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    playback.stop(None);
    handle.await.unwrap();

    let got = recorder.finish().await;
    let samples: Vec<f32> = got.iter().map(|&(s, _)| s).collect();
    // the loud part is the tone
    let loud: Vec<f32> = samples
        .chunks(512)
        .filter(|c| hearth::voice::rms(c) > 0.1)
        .flatten()
        .copied()
        .collect();
    let secs = loud.len() as f64 / 16000.0;
    println!(
        "captured {:.2} s, {secs:.2} s of it loud",
        samples.len() as f64 / 16000.0
    );
    assert!((0.8..1.2).contains(&secs), "about 1 s of tone: {secs}");
    let p440 = power_at(&loud, 440.0);
    for other in [220.0, 330.0, 550.0, 880.0, 1000.0] {
        assert!(
            p440 > 100.0 * power_at(&loud, other),
            "440 Hz dominates {other} Hz"
        );
    }
    let crossings = loud
        .windows(2)
        .filter(|w| w[0] < 0.0 && w[1] >= 0.0)
        .count();
    let peak = (380..=500)
        .map(|f| f as f32)
        .max_by(|a, b| power_at(&loud, *a).total_cmp(&power_at(&loud, *b)))
        .unwrap_or(0.0);
    println!(
        "captured tone: strongest at {peak} Hz (Goertzel, 1 Hz steps); {:.1} rising zero crossings a second",
        crossings as f64 / secs
    );
    let hz = f64::from(peak);
    assert!((hz - 440.0).abs() < 10.0, "{hz}");
}

async fn stop_mid_reply_silences_the_sink() {
    let rid = ReplyId::fresh();
    let recorder = record("vsink.monitor").await;
    let (playback, handle, mut rx) = spawn_player().await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    playback
        .cast(PlaybackMsg::Play {
            reply: rid,
            pcm: Pcm {
                samples: tone(440.0, 22050, 3.0).into(),
                rate: 22050,
            },
        })
        .unwrap();
    playback
        .cast(PlaybackMsg::EndOfReply { reply: rid })
        .unwrap();
    assert!(matches!(
        event(&mut rx).await,
        PlaybackEvent::Started { .. }
    ));
    tokio::time::sleep(Duration::from_millis(500)).await;
    let stop_at = Instant::now();
    playback.cast(PlaybackMsg::Stop).unwrap();
    let stopped = loop {
        match event(&mut rx).await {
            PlaybackEvent::Stopped {
                at, interrupted, ..
            } => {
                assert!(interrupted);
                break at;
            }
            PlaybackEvent::Level { .. } => {}
            e => panic!("unexpected {e:?}"),
        }
    };
    let stats = ractor::call!(playback, PlaybackMsg::Stats).unwrap();
    tokio::time::sleep(Duration::from_millis(1000)).await;
    playback.stop(None);
    handle.await.unwrap();
    let got = recorder.finish().await;
    // when did the tone end in the monitor's capture (wall clock of the frame)?
    let mut last_loud = None;
    for frame in got.chunks(512) {
        let s: Vec<f32> = frame.iter().map(|&(s, _)| s).collect();
        if hearth::voice::rms(&s) > 0.05 {
            last_loud = Some(frame[frame.len() - 1].1);
        }
    }
    let last_loud = last_loud.expect("the tone was captured");
    let silent_after = last_loud.saturating_duration_since(stop_at);
    println!(
        "PulseAudio stop: Stopped after {:.1} ms, callback acknowledged after {:.1} ms, last loud \
         monitor frame captured {:.1} ms after the Stop (includes the monitor's own latency)",
        (stopped - stop_at).as_secs_f64() * 1e3,
        stats.last_stop_latency.unwrap_or_default().as_secs_f64() * 1e3,
        silent_after.as_secs_f64() * 1e3
    );
    // deterministic: nothing of the 3 s tone plays on after the stop (the rest was 2.5 s)
    assert!(
        silent_after < Duration::from_millis(1000),
        "{silent_after:?}"
    );
    let tail: Vec<f32> = got
        .iter()
        .filter(|(_, at)| *at > stop_at + Duration::from_millis(400))
        .map(|&(s, _)| s)
        .collect();
    assert!(!tail.is_empty());
    assert!(hearth::voice::rms(&tail) < 0.01, "silent after the stop");
}
