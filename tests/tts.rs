//! The Tts actor on the real Piper voice (en_US-joe-medium from `scripts/fetch-models`), and the
//! clear, quick errors for each missing piece (those need no real files).
#![cfg(feature = "piper")]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use hearth::onnx::OnnxError;
use hearth::speech::Speakable;
use hearth::tts::{TtsActor, TtsConfig, TtsError, TtsMsg};
use hearth::voice::{i16_to_f32, rms, Pcm, ReplyId, TtsEvent};
use tokio::sync::mpsc;

use hearth_testkit::model as common_model;

/// Generous: a debug build on a busy 2-core machine.
const SENTENCE_TIMEOUT: Duration = Duration::from_secs(60);
/// A missing piece must be reported at once (ort itself would hang forever).
const ERROR_TIMEOUT: Duration = Duration::from_secs(10);

fn say(text: &str) -> Speakable {
    Speakable::sanitize(text).expect("speakable text")
}

async fn next_event(rx: &mut mpsc::UnboundedReceiver<TtsEvent>) -> TtsEvent {
    tokio::time::timeout(SENTENCE_TIMEOUT, rx.recv())
        .await
        .expect("a TTS event in time")
        .expect("the TTS event channel is open")
}

/// Events up to and including the SentenceDone (or Failed) of sentence `index`.
async fn events_until(rx: &mut mpsc::UnboundedReceiver<TtsEvent>, index: u64) -> Vec<TtsEvent> {
    let mut out = Vec::new();
    loop {
        let ev = next_event(rx).await;
        let last = matches!(ev, TtsEvent::SentenceDone { index: i, .. } | TtsEvent::Failed { index: i, .. } if i == index);
        out.push(ev);
        if last {
            return out;
        }
    }
}

fn write_wav(path: &Path, pcm: &Pcm) {
    let spec = hound::WavSpec {
        channels: 1,
        sample_rate: pcm.rate,
        bits_per_sample: 16,
        sample_format: hound::SampleFormat::Int,
    };
    let mut w = hound::WavWriter::create(path, spec).expect("create the WAV file");
    for &s in pcm.samples.iter() {
        w.write_sample(s).expect("write a sample");
    }
    w.finalize().expect("finish the WAV file");
}

fn pcm_rms(pcm: &Pcm) -> f32 {
    let f: Vec<f32> = pcm.samples.iter().map(|&s| i16_to_f32(s)).collect();
    rms(&f)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kitchen_sentence_is_speech_at_the_voice_rate() {
    let Some(cfg) = common_model::piper_voice() else {
        return;
    };
    let (tx, mut rx) = mpsc::unbounded_channel();
    let (tts, handle) = TtsActor::spawn(cfg, tx).await.expect("the voice loads");
    let reply = ReplyId::fresh();
    let info = ractor::call!(tts, TtsMsg::Info).expect("info");
    assert_eq!(info.sample_rate, 22050);
    assert_eq!(info.espeak_voice, "en-us");

    let started = Instant::now();
    tts.cast(TtsMsg::Speak {
        reply,
        sentence: say("The kitchen light is on."),
    })
    .unwrap();
    let events = events_until(&mut rx, 0).await;
    let wall = started.elapsed();
    let [TtsEvent::Audio { pcm, .. }, TtsEvent::SentenceDone {
        index: 0,
        chars,
        audio_secs,
        synth_ms,
        ..
    }] = events.as_slice()
    else {
        panic!("expected one Audio chunk then SentenceDone, got {events:?}");
    };
    assert_eq!(*chars, "The kitchen light is on.".len());
    assert_eq!(pcm.rate, 22050);
    let secs = pcm.secs();
    assert!((1.0..=4.0).contains(&secs), "{secs} s of audio");
    assert!((audio_secs - secs).abs() < 1e-9);
    let level = pcm_rms(pcm);
    assert!(level > 0.02, "RMS {level}: not speech");
    let peak = pcm
        .samples
        .iter()
        .map(|s| s.unsigned_abs())
        .max()
        .unwrap_or(0);
    assert!(peak > 3000, "peak {peak}");

    let wav = std::env::temp_dir().join("hearth-tts-kitchen.wav");
    write_wav(&wav, pcm);
    let back = hound::WavReader::open(&wav).expect("the WAV reads back");
    assert_eq!(back.spec().sample_rate, 22050);
    assert_eq!(back.len() as usize, pcm.samples.len());
    eprintln!(
        "\"The kitchen light is on.\": {secs:.2} s of audio, synthesised in {synth_ms:.0} ms (RTF {:.3}), first audio after {:.0} ms; RMS {level:.3}; written to {}",
        synth_ms / 1000.0 / secs,
        wall.as_secs_f64() * 1000.0,
        wav.display()
    );

    tts.stop(None);
    handle.await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sentences_come_out_in_order() {
    let Some(cfg) = common_model::piper_voice() else {
        return;
    };
    let (tx, mut rx) = mpsc::unbounded_channel();
    let (tts, handle) = TtsActor::spawn(cfg, tx).await.expect("the voice loads");
    let reply = ReplyId::fresh();
    let first = "The kitchen light is on.";
    let second = "The heating is set to twenty degrees, and the front door is locked.";
    tts.cast(TtsMsg::Speak {
        reply,
        sentence: say(first),
    })
    .unwrap();
    tts.cast(TtsMsg::Speak {
        reply,
        sentence: say(second),
    })
    .unwrap();
    let events = events_until(&mut rx, 1).await;
    let summary: Vec<(u64, usize, f64)> = events
        .iter()
        .filter_map(|e| match e {
            TtsEvent::SentenceDone {
                index,
                chars,
                audio_secs,
                ..
            } => Some((*index, *chars, *audio_secs)),
            _ => None,
        })
        .collect();
    assert_eq!(events.len(), 4, "{events:?}");
    assert!(matches!(events[0], TtsEvent::Audio { .. }));
    assert!(matches!(events[2], TtsEvent::Audio { .. }));
    assert_eq!(summary.len(), 2);
    assert_eq!((summary[0].0, summary[0].1), (0, first.len()));
    assert_eq!((summary[1].0, summary[1].1), (1, second.len()));
    // the longer sentence is the longer audio: the order is the sentences' order
    assert!(summary[1].2 > summary[0].2 + 1.0, "{summary:?}");
    tts.stop(None);
    handle.await.unwrap();
}

/// A confirmation said again is played from the audio kept when it was first spoken: the
/// same samples, no synthesis; a long sentence is synthesised each time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_short_sentence_said_again_is_not_synthesised_again() {
    let Some(cfg) = common_model::piper_voice() else {
        return;
    };
    let (tx, mut rx) = mpsc::unbounded_channel();
    let (tts, handle) = TtsActor::spawn(cfg, tx).await.expect("the voice loads");
    let reply = ReplyId::fresh();
    let short = "The kitchen light is on.";
    let long = "The kitchen light is on, the heating is at twenty degrees, and every door of the house is locked.";
    // one reply: only its first sentence loses its leading silence, so the short one said
    // again is the very audio kept
    for text in [long, short, long, short] {
        tts.cast(TtsMsg::Speak {
            reply,
            sentence: say(text),
        })
        .unwrap();
    }
    let events = events_until(&mut rx, 3).await;
    let said: Vec<(Pcm, f64)> = events
        .chunks(2)
        .map(|pair| match pair {
            [TtsEvent::Audio { pcm, .. }, TtsEvent::SentenceDone { synth_ms, .. }] => {
                (pcm.clone(), *synth_ms)
            }
            _ => panic!("expected Audio then SentenceDone: {pair:?}"),
        })
        .collect();
    assert_eq!(said.len(), 4, "{events:?}");
    assert!(
        said[0].1 > 0.0 && said[1].1 > 0.0 && said[2].1 > 0.0,
        "{:?}",
        said.iter().map(|s| s.1).collect::<Vec<_>>()
    );
    assert_eq!(said[3].1, 0.0, "the short sentence was synthesised again");
    assert!(std::sync::Arc::ptr_eq(
        &said[1].0.samples,
        &said[3].0.samples
    ));
    assert!(!std::sync::Arc::ptr_eq(
        &said[0].0.samples,
        &said[2].0.samples
    ));
    tts.stop(None);
    handle.await.unwrap();
}

/// A sentence prepared before its reply (a local intent's confirmation, while its turn waits
/// for the end of the pause) is synthesised, not sent, and plays at once when it is said.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prepared_sentence_plays_without_being_synthesised_again() {
    let Some(cfg) = common_model::piper_voice() else {
        return;
    };
    let (tx, mut rx) = mpsc::unbounded_channel();
    let (tts, handle) = TtsActor::spawn(cfg, tx).await.expect("the voice loads");
    let text = "The porch light is off.";
    tts.cast(TtsMsg::Prepare(say(text))).unwrap();
    let reply = ReplyId::fresh();
    tts.cast(TtsMsg::Speak {
        reply,
        sentence: say(text),
    })
    .unwrap();
    let events = events_until(&mut rx, 0).await;
    // nothing of the preparation is sent: the sentence's audio once, then its end
    let [TtsEvent::Audio { pcm, .. }, TtsEvent::SentenceDone { synth_ms, .. }] = events.as_slice()
    else {
        panic!("expected one Audio chunk then SentenceDone, got {events:?}");
    };
    assert_eq!(
        *synth_ms, 0.0,
        "the prepared sentence was synthesised again"
    );
    assert!(pcm.secs() > 0.5, "{} s of audio", pcm.secs());
    tts.stop(None);
    handle.await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_drops_queued_sentences() {
    let Some(cfg) = common_model::piper_voice() else {
        return;
    };
    let (tx, mut rx) = mpsc::unbounded_channel();
    let (tts, handle) = TtsActor::spawn(cfg, tx).await.expect("the voice loads");
    let reply = ReplyId::fresh();
    for _ in 0..4 {
        tts.cast(TtsMsg::Speak {
            reply,
            sentence: say("This is a long sentence that nobody will ever get to hear out loud."),
        })
        .unwrap();
    }
    tts.cast(TtsMsg::Cancel).unwrap();
    tts.cast(TtsMsg::Speak {
        reply,
        sentence: say("Done."),
    })
    .unwrap();
    let events = events_until(&mut rx, 4).await;
    // only the sentence after the cancel is spoken: the one being synthesised when the
    // cancel came has its audio discarded, the queued ones are never synthesised
    let [TtsEvent::Audio { pcm, .. }, TtsEvent::SentenceDone { index: 4, .. }] = events.as_slice()
    else {
        panic!("expected only the post-cancel sentence, got {events:?}");
    };
    assert!(pcm.secs() < 2.0, "{} s: not \"Done.\"", pcm.secs());
    // and nothing of the cancelled ones trails in later
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(rx.try_recv().is_err());
    tts.stop(None);
    handle.await.unwrap();
}

/// A scratch directory with a fake voice (files present, config valid, model not a model) and
/// a fake but complete espeak-ng data tree: the errors below need no real files.
fn scratch(name: &str) -> (PathBuf, TtsConfig) {
    let dir = std::env::temp_dir().join(format!("hearth-tts-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let data = dir.join("espeak").join("espeak-ng-data");
    std::fs::create_dir_all(&data).unwrap();
    for f in ["phontab", "phonindex", "phondata", "intonations", "en_dict"] {
        std::fs::write(data.join(f), b"fake").unwrap();
    }
    let model = dir.join("fake-voice.onnx");
    std::fs::write(&model, b"not an onnx model").unwrap();
    std::fs::write(
        dir.join("fake-voice.onnx.json"),
        r#"{"audio": {"sample_rate": 22050}, "espeak": {"voice": "en-us"},
            "inference": {"noise_scale": 0.667, "length_scale": 1.0, "noise_w": 0.8},
            "num_speakers": 1, "speaker_id_map": {}, "phoneme_id_map": {"_": [0], "^": [1], "$": [2]}}"#,
    )
    .unwrap();
    let mut cfg = TtsConfig::new(model);
    cfg.espeak_data = Some(dir.join("espeak"));
    (dir, cfg)
}

/// Spawn with `cfg`, which must fail quickly; the error.
async fn spawn_error(cfg: TtsConfig) -> TtsError {
    let (tx, _rx) = mpsc::unbounded_channel();
    let started = Instant::now();
    let out = tokio::time::timeout(ERROR_TIMEOUT, TtsActor::spawn(cfg, tx))
        .await
        .expect("an error in time, not a hang");
    let took = started.elapsed();
    assert!(took < Duration::from_secs(2), "took {took:?}");
    match out {
        Ok(_) => panic!("spawned without the missing piece"),
        Err(e) => e,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_onnxruntime_library_is_a_quick_clear_error() {
    let (dir, mut cfg) = scratch("no-ort");
    let lib = dir.join("lib").join("libonnxruntime.so.1.31.1");
    cfg.ort_library = Some(lib.clone());
    let err = spawn_error(cfg).await;
    let text = err.to_string();
    assert!(
        matches!(err, TtsError::Runtime(OnnxError::Missing { .. })),
        "{err:?}"
    );
    assert!(text.contains(&lib.display().to_string()), "{text}");
    assert!(
        text.contains("hearth models pull lib:onnxruntime"),
        "{text}"
    );
    assert!(text.contains("ORT_DYLIB_PATH"), "{text}");
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_library_that_is_not_onnxruntime_is_a_quick_clear_error() {
    // ort itself deadlocks on a library it cannot load: this must fail before ort sees it
    let (dir, mut cfg) = scratch("bad-ort");
    let lib = dir.join("libonnxruntime.so");
    std::fs::write(&lib, b"not a shared library").unwrap();
    cfg.ort_library = Some(lib.clone());
    let err = spawn_error(cfg).await;
    assert!(
        matches!(err, TtsError::Runtime(OnnxError::Load { .. })),
        "{err:?}"
    );
    assert!(
        err.to_string().contains(&lib.display().to_string()),
        "{err}"
    );

    // a real shared library without ONNX Runtime's entry point
    let (dir2, mut cfg) = scratch("not-ort");
    let libc_so = [
        "/lib/x86_64-linux-gnu/libc.so.6",
        "/lib/aarch64-linux-gnu/libc.so.6",
    ]
    .into_iter()
    .map(PathBuf::from)
    .find(|p| p.is_file());
    if let Some(libc_so) = libc_so {
        cfg.ort_library = Some(libc_so);
        let err = spawn_error(cfg).await;
        assert!(err.to_string().contains("OrtGetApiBase"), "{err}");
    }
    let _ = std::fs::remove_dir_all(dir);
    let _ = std::fs::remove_dir_all(dir2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_voice_file_is_a_quick_clear_error() {
    let (dir, _) = scratch("no-voice");
    let model = dir.join("en_US-joe-medium.onnx");
    let err = spawn_error(TtsConfig::new(&model)).await;
    let text = err.to_string();
    assert!(matches!(err, TtsError::VoiceMissing { .. }), "{err:?}");
    assert!(text.contains(&model.display().to_string()), "{text}");
    assert!(
        text.contains("hearth models pull voice:en_US-joe-medium"),
        "{text}"
    );

    // the .onnx is there, its .onnx.json is not
    std::fs::write(&model, b"x").unwrap();
    let err = spawn_error(TtsConfig::new(&model)).await;
    assert!(
        err.to_string()
            .contains("en_US-joe-medium.onnx.json is missing"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_espeak_data_is_a_quick_clear_error() {
    let (dir, mut cfg) = scratch("no-espeak");
    let empty = dir.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    cfg.espeak_data = Some(empty.clone());
    let err = spawn_error(cfg).await;
    let text = err.to_string();
    assert!(matches!(err, TtsError::EspeakMissing { .. }), "{err:?}");
    assert!(
        text.contains(&empty.join("espeak-ng-data").display().to_string()),
        "{text}"
    );
    assert!(text.contains("PIPER_ESPEAKNG_DATA_DIRECTORY"), "{text}");
    assert!(text.contains("espeak-ng-data package"), "{text}");
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broken_voice_model_is_an_error_not_a_panic() {
    // needs the real ONNX Runtime library; the voice itself is a fake
    let Some(real) = common_model::piper_voice() else {
        return;
    };
    let (dir, mut cfg) = scratch("broken-model");
    cfg.espeak_data = None; // the real data, found as for the real voice
    cfg.ort_library = Some(real.resolve().expect("resolved").ort_library);
    let err = spawn_error(cfg).await;
    assert!(matches!(err, TtsError::ModelLoad { .. }), "{err:?}");
    assert!(err.to_string().contains("fake-voice.onnx"), "{err}");
    let _ = std::fs::remove_dir_all(dir);
}
