//! The Tts actor speaking through a Wyoming text-to-speech server (`[tts] server`), the voice
//! of a build without the `piper` feature: Home Assistant's own, `wyoming-piper` 2.5.2 on
//! loopback (`scripts/setup --test` installs it in a venv of its own) with the default Piper
//! voice from the model directory (`scripts/fetch-models`). No feature needed: this runs in
//! every build. Missing pieces fail the test with the fix; locally `HEARTH_SKIP_REAL_MODEL=1`
//! skips (CI never sets it).

use std::time::Duration;

use hearth::speech::Speakable;
use hearth::tts::{ServerConfig, TtsActor, TtsError, TtsMsg, VoiceSource};
use hearth::voice::{i16_to_f32, rms, Pcm, ReplyId, TtsEvent};
use hearth_testkit::peer::WyomingPiper;
use tokio::sync::mpsc;

/// Generous: the server's first sentence loads its voice, on a busy 2-core machine.
const SENTENCE_TIMEOUT: Duration = Duration::from_secs(60);

fn server(piper: &WyomingPiper, voice: Option<&str>) -> VoiceSource {
    VoiceSource::Server(ServerConfig {
        uri: piper.uri(),
        voice: voice.map(str::to_string),
    })
}

fn say(text: &str) -> Speakable {
    Speakable::sanitize(text).expect("speakable text")
}

/// The events up to and including sentence `index`'s last.
async fn events_until(rx: &mut mpsc::UnboundedReceiver<TtsEvent>, index: u64) -> Vec<TtsEvent> {
    let mut out = Vec::new();
    loop {
        let ev = tokio::time::timeout(SENTENCE_TIMEOUT, rx.recv())
            .await
            .expect("a TTS event in time")
            .expect("the TTS event channel is open");
        let last = matches!(ev, TtsEvent::SentenceDone { index: i, .. } | TtsEvent::Failed { index: i, .. } if i == index);
        out.push(ev);
        if last {
            return out;
        }
    }
}

/// Speech, not silence or noise: long enough for the words, loud enough, with peaks.
fn assert_speech(pcm: &Pcm, words: &str) {
    assert_eq!(pcm.rate, 22050, "the voice's own rate");
    let secs = pcm.secs();
    let least = words.split_whitespace().count() as f64 * 0.15;
    assert!((least..=8.0).contains(&secs), "{secs} s for {words:?}");
    let level = rms(&pcm
        .samples
        .iter()
        .map(|&s| i16_to_f32(s))
        .collect::<Vec<_>>());
    assert!(level > 0.02, "RMS {level}: not speech");
    let peak = pcm.samples.iter().map(|s| s.unsigned_abs()).max();
    assert!(peak > Some(3000), "peak {peak:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wyoming_piper_server_speaks_each_sentence_in_order() {
    let Some(piper) = WyomingPiper::start("order") else {
        return;
    };
    let (tx, mut rx) = mpsc::unbounded_channel();
    let (tts, handle) = TtsActor::spawn(server(&piper, Some(WyomingPiper::VOICE)), tx)
        .await
        .unwrap_or_else(|e| panic!("the server's voice loads: {e}\n{}", piper.log()));
    let info = ractor::call!(tts, TtsMsg::Info).expect("info");
    assert_eq!(
        info.sample_rate, 22050,
        "learnt from the word spoken at load"
    );

    let reply = ReplyId::fresh();
    let sentences = ["The kitchen light is on.", "The hallway is dark now."];
    for s in sentences {
        tts.cast(TtsMsg::Speak {
            reply,
            sentence: say(s),
        })
        .unwrap();
    }
    let events = events_until(&mut rx, 1).await;
    let spoken: Vec<(&Pcm, u64)> = events
        .windows(2)
        .filter_map(|w| match w {
            [TtsEvent::Audio { pcm, reply: r }, TtsEvent::SentenceDone { index, .. }]
                if *r == reply =>
            {
                Some((pcm, *index))
            }
            _ => None,
        })
        .collect();
    assert_eq!(spoken.len(), 2, "{events:?}\n{}", piper.log());
    for ((pcm, index), (words, want)) in spoken.into_iter().zip(sentences.iter().zip(0..)) {
        assert_eq!(index, want);
        assert_speech(pcm, words);
    }

    // a cancel drops what is queued: the next reply is spoken, nothing of the cancelled one
    let cancelled = ReplyId::fresh();
    for s in ["Lock the front door.", "Then the back door."] {
        tts.cast(TtsMsg::Speak {
            reply: cancelled,
            sentence: say(s),
        })
        .unwrap();
    }
    tts.cast(TtsMsg::Cancel).unwrap();
    let next = ReplyId::fresh();
    tts.cast(TtsMsg::Speak {
        reply: next,
        sentence: say("Good night."),
    })
    .unwrap();
    let events = events_until(&mut rx, 4).await;
    let of_next = events
        .iter()
        .filter(|e| matches!(e, TtsEvent::Audio { reply, .. } if *reply == next))
        .count();
    assert_eq!(of_next, 1, "{events:?}");
    assert!(
        events
            .iter()
            .all(|e| !matches!(e, TtsEvent::Audio { reply, .. } if *reply == cancelled)),
        "audio of a cancelled reply: {events:?}"
    );
    tts.stop(None);
    handle.await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_does_not_speak_fails_the_start_naming_it_and_the_fix() {
    let Some(piper) = WyomingPiper::start("refusals") else {
        return;
    };
    let start = |source: VoiceSource| async move {
        let (tx, _rx) = mpsc::unbounded_channel();
        match TtsActor::spawn(source, tx).await {
            Ok(_) => panic!("a voice that cannot speak started"),
            Err(e) => e,
        }
    };
    // nobody listens on the port
    let gone = hearth_testkit::services::free_port();
    let uri = format!("tcp://127.0.0.1:{gone}");
    let e = start(VoiceSource::Server(ServerConfig {
        uri: uri.clone(),
        voice: None,
    }))
    .await;
    assert!(matches!(e, TtsError::Server { .. }), "{e:?}");
    let text = e.to_string();
    assert!(
        text.contains(&uri) && text.contains("cannot connect") && text.contains("[tts] server"),
        "{text}"
    );
    // a voice the server does not have: its error, passed on
    let e = start(server(&piper, Some("xx_XX-nobody-low")))
        .await
        .to_string();
    assert!(
        e.contains(&piper.uri())
            && e.contains("it answered with an error: xx_XX-nobody-low")
            && e.contains("[tts] voice"),
        "{e}\n{}",
        piper.log()
    );
}

/// `hearth doctor` hears the configured server speak, and what the VAD and the end of turn
/// load is checked as with a Piper voice.
#[test]
fn doctor_hears_the_server_speak() {
    let Some(piper) = WyomingPiper::start("doctor") else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("hearth-tts-server-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("hearth.toml");
    std::fs::write(
        &config,
        format!(
            "[tts]\nserver = {:?}\nvoice = {:?}\n",
            piper.uri(),
            WyomingPiper::VOICE
        ),
    )
    .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_hearth"))
        .args(["doctor", "--config"])
        .arg(&config)
        .output()
        .expect("hearth doctor runs");
    let report = String::from_utf8_lossy(&out.stdout);
    let line = |name: &str| {
        report
            .lines()
            .find(|l| l.contains(&format!("] {name} ")))
            .unwrap_or_else(|| panic!("no {name} line in:\n{report}"))
            .to_string()
    };
    let voice = line("voice");
    assert!(
        voice.starts_with("[ ok ]") && voice.contains(&piper.uri()) && voice.contains("22050 Hz"),
        "{voice}\n{}",
        piper.log()
    );
    assert!(line("onnxruntime").starts_with("[ ok ]"), "{report}");
    assert!(
        !report.contains("espeak-ng"),
        "a server's voice needs no espeak-ng:\n{report}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
