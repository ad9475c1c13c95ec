//! Capture and Playback on files and readers (no sound device): frame counts and starts, End,
//! stdin-style raw PCM, the WAV sink across replies, and Stop mid-reply.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use hearth::audio::{
    wav, Capture, CaptureArgs, CaptureMsg, CaptureSource, Playback, PlaybackArgs, PlaybackMsg,
    PlaybackSink,
};
use hearth::voice::{Captured, Frame, Pcm, PlaybackEvent, ReplyId, FRAME_SAMPLES};
use ractor::{Actor, ActorRef};
use tokio::sync::mpsc;

const KITCHEN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/audio/kitchen.wav");

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("hearth-audio-files-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// Receives frames until `End`.
async fn collect(rx: &mut mpsc::Receiver<Captured>) -> Vec<Frame> {
    let mut frames = Vec::new();
    loop {
        match tokio::time::timeout(Duration::from_secs(30), rx.recv()).await {
            Ok(Some(Captured::Frame(f))) => frames.push(f),
            Ok(Some(Captured::End)) => return frames,
            Ok(None) => panic!("channel closed before End"),
            Err(_) => panic!("no End after 30 s ({} frames)", frames.len()),
        }
    }
}

fn check_frames(frames: &[Frame], expected_samples: &[f32]) {
    let n = expected_samples.len();
    assert_eq!(
        frames.len(),
        n.div_ceil(FRAME_SAMPLES),
        "ceil({n} / 512) frames"
    );
    for (i, f) in frames.iter().enumerate() {
        assert_eq!(f.samples.len(), FRAME_SAMPLES);
        assert_eq!(f.start, (i * FRAME_SAMPLES) as u64);
    }
    let flat: Vec<f32> = frames
        .iter()
        .flat_map(|f| f.samples.iter().copied())
        .collect();
    assert_eq!(&flat[..n], expected_samples);
    // the last frame is padded with silence
    assert!(flat[n..].iter().all(|&s| s == 0.0));
}

#[tokio::test]
async fn capture_from_a_wav_file_gives_padded_frames_then_end() {
    let expected = wav::read_16k_mono(KITCHEN).unwrap();
    assert!(
        !expected.len().is_multiple_of(FRAME_SAMPLES),
        "the fixture ends mid-frame"
    );
    let (out, mut rx) = mpsc::channel(8); // small: the file source waits for room
    let source = CaptureSource::wav(KITCHEN, false);
    let (capture, handle) = Actor::spawn(None, Capture, CaptureArgs { source, out })
        .await
        .unwrap();
    let info = ractor::call!(capture, CaptureMsg::Start).unwrap().unwrap();
    assert_eq!((info.rate, info.channels), (22050, 1));
    let frames = collect(&mut rx).await;
    check_frames(&frames, &expected);
    let stats = ractor::call!(capture, CaptureMsg::Stats).unwrap();
    assert_eq!(stats.frames, frames.len() as u64);
    assert_eq!(stats.frames_dropped, 0);

    // a second Start replays the file from the beginning
    ractor::call!(capture, CaptureMsg::Start).unwrap().unwrap();
    let again = collect(&mut rx).await;
    assert_eq!(again.len(), frames.len());
    assert_eq!(again[0].start, 0);
    capture.stop(None);
    handle.await.unwrap();
}

#[tokio::test]
async fn realtime_wav_capture_is_paced_and_stop_sends_end() {
    // 0.5 s of audio: 16 frames, paced over ~0.5 s
    let path = tmp("half-second.wav");
    let mut sink = wav::WavSink::create(&path, 16000).unwrap();
    sink.write_i16(&vec![1000; 8000]).unwrap();
    sink.finalize().unwrap();
    let (out, mut rx) = mpsc::channel(64);
    let (capture, handle) = Actor::spawn(
        None,
        Capture,
        CaptureArgs {
            source: CaptureSource::wav(&path, true),
            out,
        },
    )
    .await
    .unwrap();
    let t0 = Instant::now();
    ractor::call!(capture, CaptureMsg::Start).unwrap().unwrap();
    let frames = collect(&mut rx).await;
    let took = t0.elapsed();
    assert_eq!(frames.len(), 16);
    assert!(took >= Duration::from_millis(450), "paced: {took:?}");

    // Stop in the middle: End follows, nothing after it
    let (out, mut rx) = mpsc::channel(64);
    let (capture2, handle2) = Actor::spawn(
        None,
        Capture,
        CaptureArgs {
            source: CaptureSource::wav(KITCHEN, true),
            out,
        },
    )
    .await
    .unwrap();
    ractor::call!(capture2, CaptureMsg::Start).unwrap().unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    capture2.cast(CaptureMsg::Stop).unwrap();
    let partial = collect(&mut rx).await;
    assert!(
        (3..=12).contains(&partial.len()),
        "about 6 frames in 200 ms: {}",
        partial.len()
    );
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(rx.try_recv().is_err(), "nothing after End");
    for c in [capture, capture2] {
        c.stop(None);
    }
    handle.await.unwrap();
    handle2.await.unwrap();
}

#[tokio::test]
async fn capture_from_raw_pcm_resamples_and_ends() {
    // 22050 Hz s16le, like `sox kitchen.wav -t raw - | hearth --stdin-rate 22050`
    let clip = wav::read_mono(KITCHEN).unwrap();
    let bytes: Vec<u8> = clip
        .samples
        .iter()
        .flat_map(|&s| hearth::voice::f32_to_i16(s).to_le_bytes())
        .collect();
    let expected = wav::read_16k_mono(KITCHEN).unwrap();
    // an odd-sized pipe buffer splits samples across reads
    let (mut writer, reader) = tokio::io::duplex(777);
    tokio::spawn(async move {
        use tokio::io::AsyncWriteExt;
        for chunk in bytes.chunks(1001) {
            writer.write_all(chunk).await.unwrap();
        }
    });
    let (out, mut rx) = mpsc::channel(16);
    let source = CaptureSource::reader("test pipe", reader, 22050);
    let (capture, handle) = Actor::spawn(None, Capture, CaptureArgs { source, out })
        .await
        .unwrap();
    ractor::call!(capture, CaptureMsg::Start).unwrap().unwrap();
    let frames = collect(&mut rx).await;
    assert_eq!(frames.len(), expected.len().div_ceil(FRAME_SAMPLES));
    let flat: Vec<f32> = frames
        .iter()
        .flat_map(|f| f.samples.iter().copied())
        .collect();
    let worst = flat
        .iter()
        .zip(&expected)
        .map(|(a, b)| (a - b).abs())
        .fold(0f32, f32::max);
    assert!(worst < 1e-3, "streamed == whole-file resampling: {worst}");
    // a reader is read once
    let again = ractor::call!(capture, CaptureMsg::Start).unwrap();
    let e = again.unwrap_err().to_string();
    assert!(
        e.contains("test pipe") && e.contains("already consumed"),
        "{e}"
    );
    capture.stop(None);
    handle.await.unwrap();
}

#[tokio::test]
async fn missing_wav_is_a_clear_start_error() {
    let (out, _rx) = mpsc::channel(4);
    let source = CaptureSource::wav("/nonexistent/input.wav", false);
    let (capture, handle) = Actor::spawn(None, Capture, CaptureArgs { source, out })
        .await
        .unwrap();
    let e = ractor::call!(capture, CaptureMsg::Start)
        .unwrap()
        .unwrap_err()
        .to_string();
    assert!(e.contains("/nonexistent/input.wav"), "{e}");
    capture.stop(None);
    handle.await.unwrap();
}

fn tone(freq: f32, rate: u32, secs: f32, amp: f32) -> Vec<i16> {
    (0..(rate as f32 * secs) as usize)
        .map(|i| {
            let t = i as f32 / rate as f32;
            ((t * freq * std::f32::consts::TAU + 0.7).sin() * amp * 32767.0) as i16
        })
        .collect()
}

async fn next_event(rx: &mut mpsc::UnboundedReceiver<PlaybackEvent>) -> PlaybackEvent {
    tokio::time::timeout(Duration::from_secs(10), rx.recv())
        .await
        .expect("a playback event within 10 s")
        .expect("events channel open")
}

/// Waits for `Stopped`, returning it and whether `Started` came first.
async fn until_stopped(rx: &mut mpsc::UnboundedReceiver<PlaybackEvent>) -> (PlaybackEvent, bool) {
    let mut started = false;
    loop {
        match next_event(rx).await {
            PlaybackEvent::Started { .. } => started = true,
            PlaybackEvent::Level { rms } => assert!((0.0..=1.0).contains(&rms)),
            stopped @ PlaybackEvent::Stopped { .. } => return (stopped, started),
        }
    }
}

/// A Playback actor writing a 16 kHz WAV at `path`, and its event receiver.
async fn wav_playback(
    path: &std::path::Path,
    realtime: bool,
) -> (
    ActorRef<PlaybackMsg>,
    tokio::task::JoinHandle<()>,
    mpsc::UnboundedReceiver<PlaybackEvent>,
) {
    wav_playback_at(path, realtime, Default::default()).await
}

/// [`wav_playback`] at `volume`.
async fn wav_playback_at(
    path: &std::path::Path,
    realtime: bool,
    volume: hearth::voice::Volume,
) -> (
    ActorRef<PlaybackMsg>,
    tokio::task::JoinHandle<()>,
    mpsc::UnboundedReceiver<PlaybackEvent>,
) {
    let (events, rx) = mpsc::unbounded_channel();
    let sink = PlaybackSink::Wav {
        path: path.to_path_buf(),
        rate: 16000,
        realtime,
    };
    let (playback, handle) = Actor::spawn(
        None,
        Playback,
        PlaybackArgs {
            sink,
            events,
            echo_tap: None,
            volume,
        },
    )
    .await
    .unwrap();
    (playback, handle, rx)
}

/// The volume scales what plays: level 8 is 6 dB down, and a change reaches the next chunk.
#[tokio::test]
async fn the_volume_scales_what_plays() {
    let rid = ReplyId::fresh();
    let path = tmp("volume.wav");
    let volume = hearth::voice::Volume::new(8);
    let (playback, handle, mut rx) = wav_playback_at(&path, false, volume.clone()).await;
    let tone_a = tone(440.0, 16000, 0.25, 0.5);
    let play = |samples: &[i16]| PlaybackMsg::Play {
        reply: rid,
        pcm: Pcm {
            samples: samples.to_vec().into(),
            rate: 16000,
        },
    };
    playback.cast(play(&tone_a)).unwrap();
    playback
        .cast(PlaybackMsg::EndOfReply { reply: rid })
        .unwrap();
    until_stopped(&mut rx).await;
    volume.set(10);
    let rid2 = ReplyId::fresh();
    playback
        .cast(PlaybackMsg::Play {
            reply: rid2,
            pcm: Pcm {
                samples: tone_a.clone().into(),
                rate: 16000,
            },
        })
        .unwrap();
    playback
        .cast(PlaybackMsg::EndOfReply { reply: rid2 })
        .unwrap();
    until_stopped(&mut rx).await;
    playback.stop(None);
    handle.await.unwrap();
    let got: Vec<i16> = hound::WavReader::open(&path)
        .unwrap()
        .samples::<i16>()
        .map(Result::unwrap)
        .collect();
    let peak = |s: &[i16]| s.iter().map(|x| i32::from(*x).abs()).max().unwrap() as f64;
    let (quiet, full) = got.split_at(tone_a.len());
    let db = 20.0 * (peak(quiet) / peak(full)).log10();
    assert!((db + 6.0).abs() < 0.1, "{db} dB");
    assert!((peak(full) - peak(&tone_a)).abs() <= 1.0);
}

#[tokio::test]
async fn wav_sink_appends_replies_resampled_and_finalizes() {
    let rid = ReplyId::fresh();
    let path = tmp("replies.wav");
    let (playback, handle, mut rx) = wav_playback(&path, false).await;
    // reply 1: 16 kHz, in two chunks (no resampling: exact samples)
    let first = tone(440.0, 16000, 0.5, 0.5);
    for half in first.chunks(4000) {
        playback
            .cast(PlaybackMsg::Play {
                reply: rid,
                pcm: Pcm {
                    samples: half.to_vec().into(),
                    rate: 16000,
                },
            })
            .unwrap();
    }
    playback
        .cast(PlaybackMsg::EndOfReply { reply: rid })
        .unwrap();
    let (stopped, started) = until_stopped(&mut rx).await;
    assert!(started);
    assert!(matches!(
        stopped,
        PlaybackEvent::Stopped {
            interrupted: false,
            ..
        }
    ));
    // reply 2: 22050 Hz, resampled to the file's 16 kHz
    let second = tone(1000.0, 22050, 1.0, 0.25);
    playback
        .cast(PlaybackMsg::Play {
            reply: rid,
            pcm: Pcm {
                samples: second.clone().into(),
                rate: 22050,
            },
        })
        .unwrap();
    playback
        .cast(PlaybackMsg::EndOfReply { reply: rid })
        .unwrap();
    let (stopped, _) = until_stopped(&mut rx).await;
    assert!(matches!(
        stopped,
        PlaybackEvent::Stopped {
            interrupted: false,
            ..
        }
    ));
    let stats = ractor::call!(playback, PlaybackMsg::Stats).unwrap();
    assert_eq!(stats.replies_finished, 2);
    assert_eq!(stats.rate, 16000);
    playback.stop(None);
    handle.await.unwrap();

    let mut r = hound::WavReader::open(&path).unwrap();
    assert_eq!(r.spec().sample_rate, 16000);
    assert_eq!(r.spec().channels, 1);
    let got: Vec<i16> = r.samples::<i16>().map(Result::unwrap).collect();
    assert_eq!(got.len(), 8000 + 16000, "0.5 s + 1 s at 16 kHz");
    let diff = got[..8000]
        .iter()
        .zip(&first)
        .map(|(a, b)| (i32::from(*a) - i32::from(*b)).abs())
        .max()
        .unwrap();
    assert!(diff <= 1, "reply 1 written as played: {diff}");
    let crossings = got[8000 + 1000..8000 + 15000]
        .windows(2)
        .filter(|w| w[0] < 0 && w[1] >= 0)
        .count();
    assert!(
        (crossings as i64 - 875).abs() <= 2,
        "1 kHz kept: {crossings}"
    );
}

#[tokio::test]
async fn stop_mid_reply_interrupts_and_nothing_follows() {
    let rid = ReplyId::fresh();
    let path = tmp("stopped.wav");
    let (playback, handle, mut rx) = wav_playback(&path, true).await;
    playback
        .cast(PlaybackMsg::Play {
            reply: rid,
            pcm: Pcm {
                samples: tone(440.0, 16000, 3.0, 0.5).into(),
                rate: 16000,
            },
        })
        .unwrap();
    playback
        .cast(PlaybackMsg::EndOfReply { reply: rid })
        .unwrap();
    assert!(matches!(
        next_event(&mut rx).await,
        PlaybackEvent::Started { .. }
    ));
    tokio::time::sleep(Duration::from_millis(300)).await;
    let stop_at = Instant::now();
    playback.cast(PlaybackMsg::Stop).unwrap();
    let (stopped, _) = until_stopped(&mut rx).await;
    let PlaybackEvent::Stopped {
        at,
        interrupted,
        reply,
    } = stopped
    else {
        unreachable!()
    };
    assert!(interrupted);
    assert_eq!(reply, rid, "the event names the reply stopped");
    let latency = at.duration_since(stop_at);
    let stats = ractor::call!(playback, PlaybackMsg::Stats).unwrap();
    println!(
        "WAV sink (real-time paced) stop latency: Stopped event after {:.1} ms, output acknowledged after {:.1} ms",
        latency.as_secs_f64() * 1e3,
        stats.last_stop_latency.unwrap().as_secs_f64() * 1e3
    );
    // deterministic part: the acknowledgement comes from the writer's next 10 ms block
    assert!(stats.last_stop_latency.unwrap() <= Duration::from_millis(100));
    assert_eq!(stats.replies_stopped, 1);
    // the writer, idle after the stop, brings the header up to date
    tokio::time::sleep(Duration::from_millis(50)).await;
    let at_stop = hound::WavReader::open(&path).unwrap().len() as usize;
    // ~0.3 s of the 3 s were played
    assert!(
        (3200..=9600).contains(&at_stop),
        "{at_stop} samples written before the stop"
    );
    // nothing more is written after the stop, not even the stopped reply's audio that
    // comes late (Tts finishing the sentence it was synthesising)
    playback
        .cast(PlaybackMsg::Play {
            reply: rid,
            pcm: Pcm {
                samples: tone(440.0, 16000, 1.0, 0.5).into(),
                rate: 16000,
            },
        })
        .unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    playback.stop(None);
    handle.await.unwrap();
    let at_end = hound::WavReader::open(&path).unwrap().len() as usize;
    assert_eq!(at_end, at_stop, "samples written after Stopped");
    // no more events
    assert!(rx.try_recv().is_err());
}

/// The earcon's way out: a cue plays with no events of its own, a reply queued behind it
/// starts once it has played, a cue during a reply is not played, and a stop that finds only
/// a cue cuts it without an event.
#[tokio::test]
async fn a_cue_plays_without_events_and_never_over_a_reply() {
    let rid = ReplyId::fresh();
    let path = tmp("cue.wav");
    let (playback, handle, mut rx) = wav_playback(&path, false).await;
    let cue = || Pcm {
        samples: tone(1000.0, 16000, 0.2, 0.2).into(),
        rate: 16000,
    };
    playback.cast(PlaybackMsg::Cue(cue())).unwrap();
    let reply = tone(440.0, 16000, 0.5, 0.5);
    playback
        .cast(PlaybackMsg::Play {
            reply: rid,
            pcm: Pcm {
                samples: reply.clone().into(),
                rate: 16000,
            },
        })
        .unwrap();
    // over the reply: dropped
    playback.cast(PlaybackMsg::Cue(cue())).unwrap();
    playback
        .cast(PlaybackMsg::EndOfReply { reply: rid })
        .unwrap();
    let (stopped, started) = until_stopped(&mut rx).await;
    assert!(started);
    assert!(matches!(
        stopped,
        PlaybackEvent::Stopped {
            interrupted: false,
            ..
        }
    ));
    // a cue alone, then a stop: no event
    playback.cast(PlaybackMsg::Cue(cue())).unwrap();
    playback.cast(PlaybackMsg::Stop).unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(rx.try_recv().is_err(), "a cue made an event");
    let stats = ractor::call!(playback, PlaybackMsg::Stats).unwrap();
    assert_eq!(stats.replies_finished, 1);
    assert_eq!(stats.replies_stopped, 0);
    playback.stop(None);
    handle.await.unwrap();
    let got: Vec<i16> = hound::WavReader::open(&path)
        .unwrap()
        .samples::<i16>()
        .map(Result::unwrap)
        .collect();
    // the first cue, then the reply as it was queued (the second cue never played); the
    // third cue, cut or not, comes after
    assert!(got.len() >= 3200 + 8000, "{}", got.len());
    let diff = got[3200..3200 + 8000]
        .iter()
        .zip(&reply)
        .map(|(a, b)| (i32::from(*a) - i32::from(*b)).abs())
        .max()
        .unwrap();
    assert!(
        diff <= 1,
        "the reply follows the first cue, unmixed: {diff}"
    );
    let cue_peak = got[..3200].iter().map(|s| s.unsigned_abs()).max().unwrap();
    assert!((5000..7000).contains(&cue_peak), "{cue_peak}");
}

#[cfg(not(feature = "audio"))]
#[tokio::test]
async fn devices_need_the_audio_feature() {
    let (out, _rx) = mpsc::channel(4);
    let source = CaptureSource::device(hearth::audio::DeviceSpec::default());
    let (capture, handle) = Actor::spawn(None, Capture, CaptureArgs { source, out })
        .await
        .unwrap();
    let e = ractor::call!(capture, CaptureMsg::Start)
        .unwrap()
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("--features audio") && e.contains("libasound2-dev"),
        "{e}"
    );
    capture.stop(None);
    handle.await.unwrap();
    let (events, _rx) = mpsc::unbounded_channel();
    let sink = PlaybackSink::Device(hearth::audio::DeviceSpec::default());
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
    assert!(e.contains("--features audio"), "{e}");
}

/// A reply cut before any of its audio reached Playback (a barge-in while Tts was still
/// synthesising its first sentence): its audio that comes after is never played; the next
/// reply is.
#[tokio::test]
async fn a_reply_cut_before_its_audio_came_is_never_played() {
    let path = tmp("cut.wav");
    let (playback, handle, mut rx) = wav_playback(&path, false).await;
    let (cut, next) = (ReplyId::fresh(), ReplyId::fresh());
    let pcm = || Pcm {
        samples: tone(440.0, 16000, 0.5, 0.5).into(),
        rate: 16000,
    };
    playback.cast(PlaybackMsg::Cut(cut)).unwrap();
    playback
        .cast(PlaybackMsg::Play {
            reply: cut,
            pcm: pcm(),
        })
        .unwrap();
    playback
        .cast(PlaybackMsg::EndOfReply { reply: cut })
        .unwrap();
    playback
        .cast(PlaybackMsg::Play {
            reply: next,
            pcm: pcm(),
        })
        .unwrap();
    playback
        .cast(PlaybackMsg::EndOfReply { reply: next })
        .unwrap();
    let started = next_event(&mut rx).await;
    assert!(
        matches!(started, PlaybackEvent::Started { reply, .. } if reply == next),
        "{started:?}"
    );
    let (stopped, _) = until_stopped(&mut rx).await;
    assert!(
        matches!(stopped, PlaybackEvent::Stopped { reply, interrupted: false, .. } if reply == next),
        "{stopped:?}"
    );
    playback.stop(None);
    handle.await.unwrap();
    let written = hound::WavReader::open(&path).unwrap().len() as usize;
    assert_eq!(written, 8000, "only the second reply's half second");
}
