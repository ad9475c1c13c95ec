//! The real `hearth-stt` binary with the real tiny.en model, over TCP (loopback, ephemeral port)
//! and over stdio: describe/info, transcripts of the fixtures sent at their own 22050 Hz, several
//! utterances on one connection, concurrent clients, bad input answered with `error` events
//! while the server keeps serving, and the start-up errors.

mod common;

use std::process::{Command, Stdio};

use common::{
    ask_with_phrases, error_code, phrases_event, transcript_and_pass, transcript_text, TcpServer,
    BIN,
};
use wyoming::{AudioChunk, AudioFormat, Describe, Eventable, Info, Ping, Transcribe};

fn lower(s: &str) -> String {
    s.to_lowercase()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tcp_describe_answers_info() {
    let Some(model) = common::model() else { return };
    let server = TcpServer::start(&model, &[]);
    let mut client = server.connect().await;
    client.send(&Describe {}.to_event()).await;
    let event = client.expect().await;
    assert_eq!(event.kind, "info");
    let info = Info::from_event(event).unwrap();
    assert_eq!(info.asr.len(), 1);
    let program = &info.asr[0];
    assert_eq!(program.name, "hearth-stt");
    assert!(program.installed);
    assert_eq!(program.models.len(), 1);
    assert_eq!(program.models[0].name, "ggml-tiny.en");
    assert_eq!(program.models[0].languages, ["en"]);
    assert!(
        program.models[0]
            .description
            .as_deref()
            .unwrap_or("")
            .contains("tiny"),
        "{:?}",
        program.models[0]
    );

    // ping → pong with the same text
    client
        .send(
            &Ping {
                text: Some("hi".into()),
            }
            .to_event(),
        )
        .await;
    let pong = client.expect().await;
    assert_eq!(pong.kind, "pong");
    assert_eq!(pong.data["text"], "hi");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tcp_transcribes_fixtures_one_after_another_on_one_connection() {
    let Some((model, [kitchen, long])) = common::fixtures(["kitchen.wav", "long.wav"]) else {
        return;
    };
    let server = TcpServer::start(&model, &[]);
    let mut client = server.connect().await;

    let text = transcript_text(client.transcribe_wav(&kitchen).await);
    assert!(
        lower(&text).contains("kitchen light"),
        "kitchen.wav: {text:?}"
    );

    let text = transcript_text(client.transcribe_wav(&long).await);
    assert!(lower(&text).contains("time"), "long.wav: {text:?}");

    // A third utterance, in another format (stereo: each sample twice), still on this connection.
    let (format, pcm) = common::read_wav(&kitchen);
    let stereo: Vec<u8> = pcm.chunks_exact(2).flat_map(|s| [s, s].concat()).collect();
    let stereo_format = AudioFormat {
        channels: 2,
        ..format
    };
    client.send_utterance(stereo_format, &stereo).await;
    let text = transcript_text(client.expect().await);
    assert!(lower(&text).contains("kitchen light"), "stereo: {text:?}");

    // The log says the window was trimmed to the utterance (1.24 s = 63 frames + the margin),
    // not the full 1500 frames.
    let log = server.wait_for_log(" audio_ctx=");
    let first_ctx: usize = log
        .split(" audio_ctx=")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no audio_ctx in the log:\n{log}"));
    let expected = 63 + hearth_stt::recognizer::DEFAULT_AUDIO_CTX_MARGIN;
    assert!(
        first_ctx.abs_diff(expected) <= 1,
        "audio_ctx {first_ctx}, expected {expected}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tcp_bad_input_gets_error_events_and_the_connection_keeps_working() {
    let Some((model, [kitchen])) = common::fixtures(["kitchen.wav"]) else {
        return;
    };
    let server = TcpServer::start(&model, &[]);
    let mut client = server.connect().await;

    // audio-chunk before audio-start: one error, later stray chunks are dropped silently.
    let stray = AudioChunk {
        format: AudioFormat::SPEECH,
        timestamp: None,
        audio: vec![0; 3200],
    };
    client.send(&stray.to_event()).await;
    assert_eq!(error_code(client.expect().await), "audio-not-started");
    client.send(&stray.to_event()).await;

    // A garbage line, a header without a type, a JSON array.
    client.send_raw(b"this is not json\n").await;
    client.send_raw(b"{\"data\":{}}\n").await;
    client.send_raw(b"[1,2,3]\n").await;
    // audio-stop ends the stray stream silently; a second one has nothing to stop.
    client.send(&wyoming::AudioStop::default().to_event()).await;
    client.send(&wyoming::AudioStop::default().to_event()).await;
    // audio-start without its format fields.
    client.send_raw(b"{\"type\":\"audio-start\"}\n").await;
    client.send(&wyoming::AudioStop::default().to_event()).await;
    // An unknown event type is ignored, as Wyoming peers do.
    client.send_raw(b"{\"type\":\"run-satellite\"}\n").await;

    let mut codes = Vec::new();
    for _ in 0..5 {
        codes.push(error_code(client.expect().await));
    }
    assert_eq!(
        codes,
        [
            "bad-event",
            "bad-event",
            "bad-event",
            "audio-not-started",
            "bad-request"
        ]
    );

    // A language the English-only model cannot do.
    client
        .send(
            &Transcribe {
                name: None,
                language: Some("de".into()),
                phrases: None,
            }
            .to_event(),
        )
        .await;
    let (format, pcm) = common::read_wav(&kitchen);
    client
        .send(
            &wyoming::AudioStart {
                format,
                timestamp: None,
            }
            .to_event(),
        )
        .await;
    client
        .send(
            &AudioChunk {
                format,
                timestamp: None,
                audio: pcm[..4410].to_vec(),
            }
            .to_event(),
        )
        .await;
    client.send(&wyoming::AudioStop::default().to_event()).await;
    assert_eq!(error_code(client.expect().await), "unsupported-language");

    // An unsupported sample width: refused at audio-start.
    client
        .send(
            &wyoming::AudioStart {
                format: AudioFormat {
                    rate: 16000,
                    width: 8,
                    channels: 1,
                },
                timestamp: None,
            }
            .to_event(),
        )
        .await;
    assert_eq!(error_code(client.expect().await), "bad-audio");
    client.send(&wyoming::AudioStop::default().to_event()).await;

    // After all that, the same connection still describes and transcribes.
    client.send(&Describe {}.to_event()).await;
    assert_eq!(client.expect().await.kind, "info");
    let text = transcript_text(client.transcribe_wav(&kitchen).await);
    assert!(lower(&text).contains("kitchen light"), "{text:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tcp_stream_out_of_step_closes_only_that_connection() {
    let Some(model) = common::model() else { return };
    let mut server = TcpServer::start(&model, &[]);
    let mut bad = server.connect().await;
    // A payload far over the limit: refused without reading or allocating it.
    bad.send_raw(b"{\"type\":\"audio-chunk\",\"payload_length\":1000000000000}\n")
        .await;
    assert_eq!(error_code(bad.expect().await), "bad-stream");
    assert!(bad.recv().await.is_none(), "the connection is closed");

    assert!(server.is_running());
    let mut good = server.connect().await;
    good.send(&Describe {}.to_event()).await;
    assert_eq!(good.expect().await.kind, "info");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tcp_clients_at_once_each_get_their_own_transcript() {
    let Some((model, [kitchen, long])) = common::fixtures(["kitchen.wav", "long.wav"]) else {
        return;
    };
    let server = TcpServer::start(&model, &[]);
    let mut a = server.connect().await;
    let mut b = server.connect().await;
    let (ta, tb) = tokio::join!(a.transcribe_wav(&kitchen), b.transcribe_wav(&long));
    let (ta, tb) = (lower(&transcript_text(ta)), lower(&transcript_text(tb)));
    assert!(
        ta.contains("kitchen light") && !ta.contains("time"),
        "{ta:?}"
    );
    assert!(tb.contains("time") && !tb.contains("kitchen"), "{tb:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_session_describes_and_transcribes_then_exits_cleanly() {
    let Some((model, [kitchen, long])) = common::fixtures(["kitchen.wav", "long.wav"]) else {
        return;
    };
    let mut child = tokio::process::Command::new(BIN)
        .arg("--model")
        .arg(&model)
        .args(["--uri", "stdio://", "--threads", "2"])
        .env("RUST_LOG", "debug") // lots of logging: none of it may reach stdout
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn hearth-stt");
    let stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut client = common::Client::new(stdout, stdin);

    client.send(&Describe {}.to_event()).await;
    let info = Info::from_event(client.expect().await).unwrap();
    assert_eq!(info.asr[0].name, "hearth-stt");
    let text = transcript_text(client.transcribe_wav(&kitchen).await);
    assert!(lower(&text).contains("kitchen light"), "{text:?}");
    client.send_raw(b"garbage\n").await;
    assert_eq!(error_code(client.expect().await), "bad-event");
    let text = transcript_text(client.transcribe_wav(&long).await);
    assert!(lower(&text).contains("time"), "{text:?}");

    // Closing stdin ends the session; nothing else was written to stdout.
    let common::Client { mut reader, writer } = client;
    drop(writer);
    assert!(reader.read_event().await.unwrap().is_none());
    let output = tokio::time::timeout(common::TIMEOUT, child.wait_with_output())
        .await
        .expect("hearth-stt exits after stdin closes")
        .unwrap();
    let log = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{:?}\n{log}", output.status);
    assert!(log.contains("transcribed"), "logs go to stderr:\n{log}");
}

#[test]
fn missing_model_exits_2_naming_the_file_and_the_fix() {
    let path = "/nonexistent/dir/ggml-tiny.en.bin";
    let out = Command::new(BIN)
        .args(["--model", path, "--uri", "tcp://127.0.0.1:0"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(path), "{err}");
    assert!(err.contains("no such file"), "{err}");
    assert!(
        err.contains("--model") && err.contains("shared/models"),
        "{err}"
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn unusable_model_and_bad_arguments_exit_2() {
    let dir = std::env::temp_dir().join(format!("hearth-stt-it-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let fake = dir.join("fake.bin");
    std::fs::write(&fake, b"GGUF not a whisper model").unwrap();
    let out = Command::new(BIN)
        .arg("--model")
        .arg(&fake)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("fake.bin") && err.contains("not a whisper.cpp ggml model"),
        "{err}"
    );
    // stdio mode: stdout stays clean even for the error.
    assert!(out.stdout.is_empty());

    let out = Command::new(BIN)
        .arg("--model")
        .arg(&fake)
        .args(["--uri", "unix:///tmp/x"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("tcp://HOST:PORT"));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A phrase set sent once, then named by `transcribe`: a transcript in the set is taken as it
/// is (no decoder step); one outside it is weighed against the set's likeliest request and
/// kept when that is far less likely; sets that cannot be used, or are not held, are errors
/// that name the fix, and the connection goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_phrase_set_holds_transcripts_to_the_house_where_the_audio_supports_it() {
    let Some((model, [kitchen])) = common::fixtures(["kitchen.wav"]) else {
        return;
    };
    let server = TcpServer::start(&model, &[]);
    let mut client = server.connect().await;
    let (format, pcm) = common::read_wav(&kitchen);
    let set = |forms: &[&str]| hearth_phrases::Grammar {
        lists: vec![vec!["kitchen".into(), "bedroom".into()]],
        forms: forms.iter().map(|f| f.to_string()).collect(),
        ..Default::default()
    };

    let house = set(&["turn on the {0} light", "turn off the {0} light"]);
    client.send(&phrases_event(&house).to_event()).await;
    let loaded = wyoming::PhrasesLoaded::from_event(client.expect().await).unwrap();
    assert_eq!((loaded.id.as_str(), loaded.forms), (house.id().as_str(), 2));
    client
        .send_request(ask_with_phrases(&house.id()), format, &pcm)
        .await;
    let (text, pass) = transcript_and_pass(client.expect().await);
    assert_eq!(text.to_lowercase(), "turn on the kitchen light.");
    assert!(pass.taken && pass.steps == 0, "{pass:?}");
    assert_eq!(pass.open, text);

    // a set that does not hold what was said: the open transcript stands
    let lamps = set(&["turn on the {0} lamp", "open the {0} door"]);
    client.send(&phrases_event(&lamps).to_event()).await;
    assert_eq!(client.expect().await.kind, "phrases-loaded");
    client
        .send_request(ask_with_phrases(&lamps.id()), format, &pcm)
        .await;
    let (text, pass) = transcript_and_pass(client.expect().await);
    assert_eq!(text.to_lowercase(), "turn on the kitchen light.");
    assert!(!pass.taken && pass.steps > 0, "{pass:?}");
    assert_eq!(pass.open, text);
    if let (Some(phrase), Some(lp)) = (&pass.phrase, pass.phrase_logprob) {
        assert!(
            phrase.to_lowercase().contains("lamp") || phrase.contains("door"),
            "{phrase}"
        );
        assert!(lp < pass.open_logprob, "{pass:?}");
    }

    // not JSON; an id that is not the contents'; a set not held
    client
        .send(
            &wyoming::Phrases {
                id: "x".into(),
                grammar: b"turn on the light".to_vec(),
            }
            .to_event(),
        )
        .await;
    assert_eq!(error_code(client.expect().await), "bad-phrases");
    let mut wrong = phrases_event(&house);
    wrong.id = "0000000000000000".into();
    client.send(&wrong.to_event()).await;
    assert_eq!(error_code(client.expect().await), "bad-phrases");
    client
        .send_request(ask_with_phrases("ffffffffffffffff"), format, &pcm)
        .await;
    assert_eq!(error_code(client.expect().await), "unknown-phrases");
    // and the connection still transcribes
    let text = transcript_text(client.transcribe_wav(&kitchen).await);
    assert_eq!(text.to_lowercase(), "turn on the kitchen light.");
}

/// A phrase set that carries the words to expect primes the decoder for the requests that
/// name it, in place of `--prompt`: a long one is cut to what the decoder holds, its first
/// phrases kept, and says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_phrase_sets_own_prompt_primes_its_requests() {
    let Some((model, [kitchen])) = common::fixtures(["kitchen.wav"]) else {
        return;
    };
    let server = TcpServer::start(&model, &["--prompt", "kitchen, light"]);
    let mut client = server.connect().await;
    let (format, pcm) = common::read_wav(&kitchen);
    // 150 phrases of rooms and lights: far over 223 tokens
    let words: Vec<String> = (1..=150)
        .map(|i| format!("room {i} ceiling light"))
        .collect();
    let house = hearth_phrases::Grammar {
        lists: vec![vec!["kitchen".into(), "bedroom".into()]],
        forms: vec!["turn on the {0} light".into()],
        prompt: Some(format!("kitchen, bedroom, {}", words.join(", "))),
        ..Default::default()
    };
    client.send(&phrases_event(&house).to_event()).await;
    assert_eq!(client.expect().await.kind, "phrases-loaded");
    client
        .send_request(ask_with_phrases(&house.id()), format, &pcm)
        .await;
    let (text, _) = transcript_and_pass(client.expect().await);
    // (the prompt's "room N" may even be written after it: whisper reads it)
    assert!(
        text.to_lowercase().starts_with("turn on the kitchen light"),
        "{text}"
    );
    let log = server.log();
    let cut = log
        .lines()
        .find(|l| l.contains("the prompt is longer than the decoder holds"))
        .unwrap_or_else(|| panic!("the set's prompt was not used:\n{log}"));
    assert!(cut.contains("phrases=152"), "{cut}");
    assert!(cut.contains("last_kept=\"room "), "{cut}");
}
