//! cpal's real ALSA path, without a sound card: the ALSA `file` PCM over `null` (see
//! NOTES.md, "Audio without a sound card"). Capture reads a fixture from the `infile`;
//! playback writes the raw samples it was given into a file.
//!
//! ALSA reads its configuration once per process from `ALSA_CONFIG_PATH`, so this file (its
//! own test process) writes one asoundrc and sets the variable before anything touches cpal;
//! every test here goes through [`alsa_setup`] first. The `plug` layers convert whatever the
//! stream cpal opens (rate, channels, sample format) to the files' S16_LE mono, so the files
//! have a known format whatever cpal picks. The PCM is not paced: capture runs as fast as
//! ALSA can read (looping the infile), playback writes silence as fast as it can when idle.

#![cfg(feature = "audio")]

use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Duration;

use hearth::audio::{
    resample, wav, Capture, CaptureArgs, CaptureMsg, CaptureSource, DeviceSpec, Playback,
    PlaybackArgs, PlaybackMsg, PlaybackSink,
};
use hearth::voice::{Captured, Pcm, PlaybackEvent, ReplyId};
use ractor::Actor;
use tokio::sync::mpsc;

const KITCHEN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/audio/kitchen.wav");

struct Alsa {
    outfile: PathBuf,
}

fn f32_bytes(samples: impl IntoIterator<Item = f32>) -> Vec<u8> {
    samples.into_iter().flat_map(|s| s.to_le_bytes()).collect()
}

fn alsa_setup() -> &'static Alsa {
    static SETUP: OnceLock<Alsa> = OnceLock::new();
    SETUP.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("hearth-audio-alsa-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let outfile = dir.join("OUT.raw");
        // the fixture as the two input files: FLOAT_LE mono at its own 22050 Hz, and FLOAT_LE
        // stereo at 48 kHz (both channels the same)
        let clip = wav::read_mono(KITCHEN).unwrap();
        assert_eq!(clip.rate, 22050);
        let in22 = dir.join("IN22.raw");
        std::fs::write(&in22, f32_bytes(clip.samples.iter().copied())).unwrap();
        let at48 = resample::resample(&clip.samples, 22050, 48000).unwrap();
        let in48 = dir.join("IN48.raw");
        std::fs::write(&in48, f32_bytes(at48.iter().flat_map(|&s| [s, s]))).unwrap();
        let asoundrc = dir.join("asoundrc");
        std::fs::write(
            &asoundrc,
            format!(
                r#"
pcm.!default {{ type asym; playback.pcm "playout"; capture.pcm "in48" }}
pcm.playout {{ type plug; slave {{ pcm "fileout"; format S16_LE; rate 22050; channels 1 }} }}
pcm.fileout {{ type file; slave.pcm "null"; file "{out}"; format "raw" }}
pcm.in48 {{ type file; slave.pcm "null"; file "/dev/null"; infile "{in48}"; format "raw" }}
pcm.in22 {{ type file; slave.pcm "null"; file "/dev/null"; infile "{in22}"; format "raw" }}
"#,
                out = outfile.display(),
                in48 = in48.display(),
                in22 = in22.display()
            ),
        )
        .unwrap();
        // SAFETY: set once, before any test of this process initialises ALSA (all go through
        // this OnceLock first), and nothing else here reads the environment concurrently.
        unsafe {
            std::env::set_var(
                "ALSA_CONFIG_PATH",
                format!("/usr/share/alsa/alsa.conf:{}", asoundrc.display()),
            );
        }
        Alsa { outfile }
    })
}

fn alsa(name: Option<&str>, rate: Option<u32>, channels: Option<u16>) -> DeviceSpec {
    DeviceSpec {
        host: Some("alsa".into()),
        name: name.map(String::from),
        rate,
        channels,
        buffer_ms: None,
    }
}

/// Normalised cross-correlation of `a` against `b` shifted by `lag`.
fn correlation(a: &[f32], b: &[f32], lag: isize) -> f64 {
    let mut ab = 0.0;
    let mut aa = 0.0;
    let mut bb = 0.0;
    for (i, &x) in a.iter().enumerate() {
        let j = i as isize + lag;
        if j < 0 || j as usize >= b.len() {
            continue;
        }
        let y = b[j as usize];
        ab += f64::from(x) * f64::from(y);
        aa += f64::from(x) * f64::from(x);
        bb += f64::from(y) * f64::from(y);
    }
    ab / (aa.sqrt() * bb.sqrt()).max(1e-12)
}

fn best_correlation(a: &[f32], b: &[f32], max_lag: isize) -> (isize, f64) {
    (-max_lag..=max_lag)
        .map(|lag| (lag, correlation(a, b, lag)))
        .fold((0, f64::MIN), |best, c| if c.1 > best.1 { c } else { best })
}

async fn capture_seconds(spec: DeviceSpec, secs: f32) -> (Vec<f32>, hearth::audio::CaptureInfo) {
    let (out, mut rx) = mpsc::channel(1024);
    let (capture, handle) = Actor::spawn(
        None,
        Capture,
        CaptureArgs {
            source: CaptureSource::device(spec),
            out,
        },
    )
    .await
    .unwrap();
    let info = ractor::call!(capture, CaptureMsg::Start).unwrap().unwrap();
    let want = (16000.0 * secs) as usize;
    let mut got = Vec::new();
    let mut expected_start = 0;
    while got.len() < want {
        match tokio::time::timeout(Duration::from_secs(10), rx.recv()).await {
            Ok(Some(Captured::Frame(f))) => {
                assert_eq!(f.start, expected_start, "no frame lost at the start");
                expected_start += f.samples.len() as u64;
                got.extend_from_slice(&f.samples);
            }
            other => panic!("capture stalled: {other:?}"),
        }
    }
    capture.cast(CaptureMsg::Stop).unwrap();
    // frames until End, then nothing
    loop {
        match tokio::time::timeout(Duration::from_secs(5), rx.recv()).await {
            Ok(Some(Captured::Frame(_))) => {}
            Ok(Some(Captured::End)) => break,
            other => panic!("no End after Stop: {other:?}"),
        }
    }
    let stats = ractor::call!(capture, CaptureMsg::Stats).unwrap();
    println!(
        "ALSA capture ({} Hz, {} ch): {} frames sent, {} frames dropped (channel full), {} samples dropped (ring full): the file PCM is not paced",
        info.rate, info.channels, stats.frames, stats.frames_dropped, stats.samples_dropped
    );
    capture.stop(None);
    handle.await.unwrap();
    got.truncate(want);
    (got, info)
}

#[tokio::test]
async fn capture_through_alsa_matches_the_fixture() {
    alsa_setup();
    let expected = wav::read_16k_mono(KITCHEN).unwrap();
    // 1. the default device in cpal's default configuration (F32 stereo 48 kHz on the file
    //    PCM): downmixed and resampled by us
    // 2. a named device at an asked rate and channel count (F32 mono 22050 Hz)
    // (a `plug` in front of the capture file PCM would let cpal pick any format, but then ALSA
    // drops every other period of the unpaced infile: the files are in cpal's format instead)
    // the 48 kHz file went through a second resampling (22050 -> 48000 to make it), hence the
    // looser bound: sub-sample phase and filter differences, not lost samples (lag 0)
    for (spec, rate, channels, min_corr) in [
        (alsa(None, None, None), 48000, 2, 0.99),
        (alsa(Some("in22"), Some(22050), Some(1)), 22050, 1, 0.9999),
    ] {
        let (got, info) = capture_seconds(spec, 1.0).await;
        assert_eq!((info.rate, info.channels), (rate, channels), "{info:?}");
        let n = got.len();
        let (lag, corr) = best_correlation(&got[..n], &expected[..n], 8);
        let rms_ratio = hearth::voice::rms(&got) / hearth::voice::rms(&expected[..n]);
        let worst = got
            .iter()
            .zip(&expected)
            .map(|(a, b)| (a - b).abs())
            .fold(0f32, f32::max);
        println!(
            "ALSA capture at {} Hz x{}: correlation {corr:.5} at lag {lag}, RMS ratio {rms_ratio:.4}, worst sample difference {worst:.5}",
            info.rate, info.channels
        );
        assert_eq!(lag, 0, "frames start at the input's first sample");
        assert!(corr > min_corr, "captured audio is the fixture: {corr}");
        assert!((0.98..1.02).contains(&rms_ratio), "{rms_ratio}");
    }
}

#[tokio::test]
async fn playback_through_alsa_writes_what_was_played() {
    let rid = ReplyId::fresh();
    let setup = alsa_setup();
    let tone: Vec<i16> = (0..11025)
        .map(|i| {
            let t = i as f32 / 22050.0;
            ((t * 440.0 * std::f32::consts::TAU + 0.7).sin() * 0.5 * 32767.0) as i16
        })
        .collect();
    let _ = std::fs::remove_file(&setup.outfile);
    let (events, mut rx) = mpsc::unbounded_channel();
    let sink = PlaybackSink::Device(alsa(None, Some(22050), None));
    let (playback, handle) = Actor::spawn(
        None,
        Playback,
        PlaybackArgs {
            sink,
            events,
            echo_tap: None,
            volume: Default::default(),
        },
    )
    .await
    .unwrap();
    let stats = ractor::call!(playback, PlaybackMsg::Stats).unwrap();
    assert_eq!(stats.rate, 22050);
    playback
        .cast(PlaybackMsg::Play {
            reply: rid,
            pcm: Pcm {
                samples: tone.clone().into(),
                rate: 22050,
            },
        })
        .unwrap();
    playback
        .cast(PlaybackMsg::EndOfReply { reply: rid })
        .unwrap();
    let mut started = false;
    loop {
        match tokio::time::timeout(Duration::from_secs(10), rx.recv()).await {
            Ok(Some(PlaybackEvent::Started { .. })) => started = true,
            Ok(Some(PlaybackEvent::Level { .. })) => {}
            Ok(Some(PlaybackEvent::Stopped { interrupted, .. })) => {
                assert!(!interrupted);
                break;
            }
            other => panic!("no Stopped: {other:?}"),
        }
    }
    assert!(started);
    playback.stop(None);
    handle.await.unwrap();

    let raw = std::fs::read(&setup.outfile).unwrap();
    let samples: Vec<i16> = raw
        .chunks_exact(2)
        .map(|b| i16::from_le_bytes([b[0], b[1]]))
        .collect();
    println!("ALSA playback: OUT.raw holds {} samples", samples.len());
    let first = samples
        .iter()
        .position(|&s| s != 0)
        .expect("the tone reached OUT.raw");
    let played = &samples[first..];
    assert!(played.len() >= tone.len());
    let worst = played
        .iter()
        .zip(&tone)
        .map(|(a, b)| (i32::from(*a) - i32::from(*b)).abs())
        .max()
        .unwrap();
    assert!(
        worst <= 2,
        "OUT.raw holds the samples played: worst {worst}"
    );
    assert!(
        played[tone.len()..].iter().all(|&s| s == 0),
        "only silence after the reply"
    );
    let _ = std::fs::remove_file(&setup.outfile);
}

#[tokio::test]
async fn a_missing_device_lists_those_that_exist() {
    alsa_setup();
    let (out, _rx) = mpsc::channel(4);
    let (capture, handle) = Actor::spawn(
        None,
        Capture,
        CaptureArgs {
            source: CaptureSource::device(alsa(Some("no-such-mic"), None, None)),
            out,
        },
    )
    .await
    .unwrap();
    let e = ractor::call!(capture, CaptureMsg::Start)
        .unwrap()
        .unwrap_err()
        .to_string();
    println!("{e}");
    assert!(e.contains("no-such-mic") && e.contains("devices:"), "{e}");
    capture.stop(None);
    handle.await.unwrap();

    let (events, _rx) = mpsc::unbounded_channel();
    let sink = PlaybackSink::Device(DeviceSpec {
        host: Some("no-such-host".into()),
        name: None,
        rate: None,
        channels: None,
        buffer_ms: None,
    });
    let e = Actor::spawn(
        None,
        Playback,
        PlaybackArgs {
            sink,
            events,
            echo_tap: None,
            volume: Default::default(),
        },
    )
    .await
    .map(|_| ())
    .unwrap_err()
    .to_string();
    println!("{e}");
    assert!(e.contains("no-such-host") && e.contains("alsa"), "{e}");
}
