//! Measures barge-in: how long after a `PlaybackMsg::Stop` the output is silent.
//!
//! Plays a tone, stops it 300 ms in, and reports per run: when `Stopped { interrupted: true }`
//! arrived, when the output callback took the stop (the ring was flushed), and, with
//! `--monitor`, when the last loud frame was captured from a monitor of the sink (an upper
//! bound: it adds the monitor's own latency).
//!
//! Against a PulseAudio null sink (see NOTES.md, "Audio without a sound card"):
//!
//! ```text
//! pulseaudio --daemonize=yes --exit-idle-time=-1 -n --load=module-native-protocol-unix \
//!     --load="module-null-sink sink_name=vsink" --load=module-always-sink
//! cargo run --release --example audio_stop_latency -- --host pulseaudio --device vsink \
//!     --monitor vsink.monitor --buffer-ms 20 --runs 10
//! ```
//!
//! Without arguments it uses the default output device of the default host.

use std::time::{Duration, Instant};

use hearth::audio::{
    Capture, CaptureArgs, CaptureMsg, CaptureSource, DeviceSpec, Playback, PlaybackArgs,
    PlaybackMsg, PlaybackSink,
};
use hearth::voice::{Captured, Pcm, PlaybackEvent, ReplyId};
use ractor::Actor;
use tokio::sync::mpsc;

fn arg(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn summary(name: &str, mut v: Vec<f64>) {
    if v.is_empty() {
        return;
    }
    v.sort_by(f64::total_cmp);
    println!(
        "{name}: min {:.1} ms, median {:.1} ms, max {:.1} ms ({} runs)",
        v[0],
        v[v.len() / 2],
        v[v.len() - 1],
        v.len()
    );
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let spec = DeviceSpec {
        host: arg("--host"),
        name: arg("--device"),
        rate: None,
        channels: None,
        buffer_ms: arg("--buffer-ms").map(|s| s.parse()).transpose()?,
    };
    let runs: usize = arg("--runs").map(|s| s.parse()).transpose()?.unwrap_or(5);
    let monitor = arg("--monitor");

    let (frames_tx, mut frames) = mpsc::channel(1024);
    let capture = match &monitor {
        Some(name) => {
            let source = CaptureSource::device(DeviceSpec {
                name: Some(name.clone()),
                rate: None,
                channels: None,
                ..spec.clone()
            });
            let (capture, _) = Actor::spawn(
                None,
                Capture,
                CaptureArgs {
                    source,
                    out: frames_tx,
                },
            )
            .await?;
            ractor::call!(capture, CaptureMsg::Start)??;
            Some(capture)
        }
        None => None,
    };
    let (events, mut rx) = mpsc::unbounded_channel();
    let (playback, handle) = Actor::spawn(
        None,
        Playback,
        PlaybackArgs {
            sink: PlaybackSink::Device(spec),
            events,
            echo_tap: None,
            volume: Default::default(),
        },
    )
    .await?;
    let stats = ractor::call!(playback, PlaybackMsg::Stats)?;
    println!("output {} at {} Hz", stats.output, stats.rate);
    let tone: Vec<i16> = (0..44100)
        .map(|i| ((i as f32 * 440.0 * std::f32::consts::TAU / 22050.0).sin() * 16000.0) as i16)
        .collect();
    let (mut stopped_ms, mut ack_ms, mut heard_ms) = (Vec::new(), Vec::new(), Vec::new());
    for run in 0..runs {
        let rid = ReplyId::fresh();
        playback.cast(PlaybackMsg::Play {
            reply: rid,
            pcm: Pcm {
                samples: tone.clone().into(),
                rate: 22050,
            },
        })?;
        playback.cast(PlaybackMsg::EndOfReply { reply: rid })?;
        while !matches!(rx.recv().await, Some(PlaybackEvent::Started { .. }) | None) {}
        tokio::time::sleep(Duration::from_millis(300)).await;
        let stop_at = Instant::now();
        playback.cast(PlaybackMsg::Stop)?;
        let stopped = loop {
            match rx.recv().await {
                Some(PlaybackEvent::Stopped { at, .. }) => break at,
                Some(_) => {}
                None => return Err("playback ended".into()),
            }
        };
        let ack = ractor::call!(playback, PlaybackMsg::Stats)?
            .last_stop_latency
            .unwrap_or_default();
        // let the monitor catch up, then find the last loud frame
        tokio::time::sleep(Duration::from_millis(700)).await;
        let mut heard = None;
        while let Ok(Captured::Frame(f)) = frames.try_recv() {
            if hearth::voice::rms(&f.samples) > 0.05 && f.at > stop_at {
                heard = Some(f.at - stop_at);
            }
        }
        println!(
            "run {run}: Stopped after {:.1} ms, output took the stop after {:.1} ms{}",
            ms(stopped - stop_at),
            ms(ack),
            heard
                .map(|h| format!(", last loud monitor frame {:.1} ms after the Stop", ms(h)))
                .unwrap_or_default()
        );
        stopped_ms.push(ms(stopped - stop_at));
        ack_ms.push(ms(ack));
        if let Some(h) = heard {
            heard_ms.push(ms(h));
        }
    }
    summary("Stopped event", stopped_ms);
    summary("output took the stop", ack_ms);
    summary("last loud monitor frame (upper bound)", heard_ms);
    playback.stop(None);
    handle.await?;
    if let Some(c) = capture {
        c.stop(None);
    }
    Ok(())
}
