//! The bounds on a TCP connection (the server module's doc lists them), on the real binary with
//! the real tiny.en model: connections left open and idle do not keep a client out, audio over
//! the byte limit is refused and that connection ends, a stream trickled to keep its slot loses
//! it once open longer than any utterance, and a client that sends nothing, stalls
//! inside an event or reads nothing is closed after the idle timeout, while the server goes on
//! serving the others.

mod common;

use std::time::{Duration, Instant};

use common::{error_code, transcript_text, TcpServer};
use tokio::io::BufReader;
use tokio::net::TcpStream;
use wyoming::{
    AudioChunk, AudioFormat, AudioStart, AudioStop, Describe, ErrorEvent, EventReader, Eventable,
    Ping,
};

/// How long a test waits for something that takes a second when it works.
const SOON: Duration = Duration::from_secs(15);

fn lower(s: &str) -> String {
    s.to_lowercase()
}

/// The review's case: 16 connections opened and left alone (a crashed client, a port scan)
/// once filled every slot, and the 17th client waited for ever. Now the one idle the longest
/// is closed for it, with an error saying why, and the 17th is answered at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sixteen_idle_connections_do_not_keep_a_seventeenth_client_out() {
    let Some((model, [kitchen])) = common::fixtures(["kitchen.wav"]) else {
        return;
    };
    // The idle timeout far longer than the client waits: only what the cap does with idle
    // connections can let it in.
    let server = TcpServer::start(
        &model,
        &["--max-connections", "16", "--idle-timeout", "600"],
    );
    let mut idle = Vec::new();
    for i in 0..16 {
        let mut c = server.connect().await;
        if i % 2 == 1 {
            // some have spoken once, then gone quiet
            c.send(&Describe {}.to_event()).await;
            assert_eq!(c.expect().await.kind, "info");
        }
        idle.push(c);
    }

    let mut seventeenth = server.connect().await;
    let answer = tokio::time::timeout(
        Duration::from_secs(60),
        seventeenth.transcribe_wav(&kitchen),
    )
    .await
    .unwrap_or_else(|_| {
        panic!(
            "the 17th client got no transcript within 60 s while 16 connections sat \
                 idle:\n{}",
            server.log()
        )
    });
    let text = transcript_text(answer);
    assert!(lower(&text).contains("kitchen light"), "{text:?}");

    // The first one (idle the longest) was closed for it, and told why.
    let first = &mut idle[0];
    let event = tokio::time::timeout(SOON, first.expect()).await.unwrap();
    assert_eq!(error_code(event.clone()), "server-busy");
    let why = ErrorEvent::from_event(event).unwrap().text;
    assert!(why.contains("--max-connections"), "{why}");
    assert!(first.recv().await.is_none(), "then closed");
    // The others were left alone.
    let last = idle.last_mut().unwrap();
    last.send(&Describe {}.to_event()).await;
    assert_eq!(last.expect().await.kind, "info");
    let log = server.wait_for_log("closing the one idle the longest");
    assert!(
        log.lines()
            .any(|l| l.contains(" INFO ") && l.contains("all 16 connections taken")),
        "{log}"
    );
}

/// A client that opens a stream and trickles a few bytes every 2 s is never quiet for the
/// 5 s that make a stream stalled, and used to keep its slot for as long as it liked. Once its
/// stream has been open longer than the longest utterance accepted (`--max-seconds` 1, plus
/// 5 s), a newcomer closes it and is answered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trickling_stream_loses_its_slot_once_longer_than_any_utterance() {
    let Some(model) = common::model() else { return };
    let server = TcpServer::start(
        &model,
        &[
            "--max-connections",
            "1",
            "--max-seconds",
            "1",
            "--idle-timeout",
            "600",
        ],
    );
    let mut trickle = server.connect().await;
    let format = AudioFormat::SPEECH;
    trickle
        .send(
            &AudioStart {
                format,
                timestamp: None,
            }
            .to_event(),
        )
        .await;
    // 64 bytes (2 ms of audio), sent every 2 s
    let drop_of = |n: u64| {
        AudioChunk {
            format,
            timestamp: Some(n * 2),
            audio: vec![0u8; 64],
        }
        .to_event()
    };
    let started = Instant::now();
    let mut chunks = 0u64;
    // for 8 s, past the 6 s a stream may stay open
    while started.elapsed() < Duration::from_secs(8) {
        trickle.send(&drop_of(chunks)).await;
        chunks += 1;
        tokio::time::sleep(Duration::from_secs(2)).await;
    }

    // the newcomer asks while the trickle goes on
    let port = server.port();
    let newcomer = tokio::spawn(async move {
        let stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        let (read, write) = stream.into_split();
        let mut c = common::Client::new(read, write);
        c.send(&Describe {}.to_event()).await;
        tokio::time::timeout(SOON, c.expect()).await
    });
    let mut next_chunk = Instant::now() + Duration::from_secs(2);
    while !newcomer.is_finished() {
        tokio::time::sleep(Duration::from_millis(250)).await;
        if !newcomer.is_finished() && Instant::now() >= next_chunk {
            next_chunk += Duration::from_secs(2);
            trickle.send(&drop_of(chunks)).await;
            chunks += 1;
        }
    }
    let answer = newcomer.await.unwrap().unwrap_or_else(|_| {
        panic!(
            "the newcomer waited {SOON:?} behind a trickling stream:\n{}",
            server.log()
        )
    });
    assert_eq!(answer.kind, "info");
    let event = tokio::time::timeout(SOON, trickle.expect()).await.unwrap();
    assert_eq!(error_code(event), "server-busy");
    assert!(trickle.recv().await.is_none(), "then closed");
    server.wait_for_log("closing the one stalled the longest");
}

/// The limit is in bytes whatever the announced format: 2 MiB (the default) is 10.9 s of
/// 48 kHz 16-bit stereo, well under the 60 s limit that was the only one before, which let a
/// client announce a format that made a minute of audio take gigabytes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn audio_over_the_byte_limit_gets_an_error_and_ends_that_connection_only() {
    let Some((model, [kitchen])) = common::fixtures(["kitchen.wav"]) else {
        return;
    };
    let server = TcpServer::start(&model, &[]);
    // A client connected all along, served after the other's overrun.
    let mut other = server.connect().await;
    other.send(&Describe {}.to_event()).await;
    assert_eq!(other.expect().await.kind, "info");

    let (read, mut write) = TcpStream::connect(&server.addr).await.unwrap().into_split();
    // 3 MiB in 100 ms chunks, sent while the answer is read (the server stops reading).
    let format = AudioFormat {
        rate: 48_000,
        width: 2,
        channels: 2,
    };
    let chunk = vec![0u8; 19_200];
    let chunks = 3 * 1024 * 1024 / chunk.len();
    let sender = tokio::spawn(async move {
        let start = AudioStart {
            format,
            timestamp: None,
        };
        wyoming::write_event(&mut write, &start.to_event()).await?;
        for _ in 0..chunks {
            let event = AudioChunk {
                format,
                timestamp: None,
                audio: chunk.clone(),
            };
            wyoming::write_event(&mut write, &event.to_event()).await?;
        }
        wyoming::write_event(&mut write, &AudioStop::default().to_event()).await
        // the write half is dropped here: the client's end of the stream
    });
    let mut reader = EventReader::new(BufReader::new(read));
    let event = tokio::time::timeout(Duration::from_secs(60), reader.read_event())
        .await
        .expect("an answer to the audio")
        .expect("a well-formed event")
        .expect("an event before the end of the stream");
    assert_eq!(error_code(event.clone()), "audio-too-long", "{event:?}");
    let why = ErrorEvent::from_event(event).unwrap().text;
    assert!(
        why.contains("2097152 bytes")
            && why.contains("--max-audio-bytes")
            && why.contains("closing the connection"),
        "{why}"
    );
    // Then the stream ends, cleanly: what the client still sent was read and dropped rather
    // than answered with a reset that could have destroyed the error event.
    let end = tokio::time::timeout(SOON, reader.read_event())
        .await
        .expect("the server closes the connection");
    assert!(matches!(end, Ok(None)), "{end:?}");
    let _ = sender.await.unwrap();

    let text = transcript_text(other.transcribe_wav(&kitchen).await);
    assert!(lower(&text).contains("kitchen light"), "{text:?}");
    server.wait_for_log("its utterance went over the audio limit");
}

/// With a 1 s idle timeout, a client that sends nothing, one stalled half-way through an event,
/// one stalled inside an audio stream and one quiet after a `describe` are each told and closed
/// after about a second; the server goes on, and logs it at debug level, not as a warning.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_and_stalled_connections_are_closed_after_the_idle_timeout() {
    let Some(model) = common::model() else { return };
    let server = TcpServer::start(&model, &["--idle-timeout", "1"]);
    let started = Instant::now();
    let silent = server.connect().await;
    let mut mid_event = server.connect().await;
    mid_event.send_raw(b"{\"type\": \"audio-chu").await;
    let mut mid_stream = server.connect().await;
    let start = AudioStart {
        format: AudioFormat::SPEECH,
        timestamp: None,
    };
    mid_stream.send(&start.to_event()).await;
    let mut quiet = server.connect().await;
    quiet.send(&Describe {}.to_event()).await;
    assert_eq!(quiet.expect().await.kind, "info");

    for (name, mut client, what) in [
        ("silent", silent, "no data from the client for 1 s"),
        (
            "mid-event",
            mid_event,
            "the rest of an event did not come within 1 s",
        ),
        ("mid-stream", mid_stream, "no data from the client for 1 s"),
        ("quiet", quiet, "no data from the client for 1 s"),
    ] {
        let event = tokio::time::timeout(SOON, client.recv())
            .await
            .unwrap_or_else(|_| panic!("{name}: still open after {SOON:?}"))
            .unwrap_or_else(|| panic!("{name}: closed without saying why"));
        assert_eq!(error_code(event.clone()), "timeout", "{name}");
        let why = ErrorEvent::from_event(event).unwrap().text;
        assert!(
            why.contains(what) && why.contains("--idle-timeout"),
            "{name}: {why}"
        );
        assert!(client.recv().await.is_none(), "{name}: then closed");
    }
    assert!(started.elapsed() >= Duration::from_millis(900));

    // Still serving.
    let mut fresh = server.connect().await;
    fresh.send(&Describe {}.to_event()).await;
    assert_eq!(fresh.expect().await.kind, "info");
    let log = server.wait_for_log("did not come within 1 s: connection closed");
    let closed: Vec<&str> = log
        .lines()
        .filter(|l| l.contains(": connection closed"))
        .collect();
    assert_eq!(closed.len(), 4, "{log}");
    assert!(closed.iter().all(|l| l.contains(" DEBUG ")), "{log}");
    assert!(
        !log.lines()
            .any(|l| l.contains(" WARN ") && l.contains("hearth_stt")),
        "{log}"
    );
}

/// A client that sends `ping`s and never reads the `pong`s: once the socket's buffers are
/// full the server's writes wait, and after the idle timeout the server gives up on it
/// instead of waiting for ever (it used to, holding the slot).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_reads_nothing_is_closed_after_the_idle_timeout() {
    let Some(model) = common::model() else { return };
    let server = TcpServer::start(&model, &["--idle-timeout", "1"]);
    let (_read, mut write) = TcpStream::connect(&server.addr).await.unwrap().into_split();
    // 4000 pings of 4 KiB: 16 MiB of pongs, more than the socket buffers hold.
    let ping = Ping {
        text: Some("x".repeat(4096)),
    }
    .to_event();
    let sender = tokio::spawn(async move {
        for _ in 0..4000 {
            wyoming::write_event(&mut write, &ping).await?;
        }
        Ok::<(), wyoming::Error>(())
    });
    let sent = tokio::time::timeout(Duration::from_secs(30), sender)
        .await
        .unwrap_or_else(|_| panic!("the server still reads from a client that reads nothing"))
        .unwrap();
    assert!(sent.is_err(), "the server closed the connection");
    server.wait_for_log("the client read nothing for 1 s: connection closed");

    let mut fresh = server.connect().await;
    fresh.send(&Describe {}.to_event()).await;
    assert_eq!(fresh.expect().await.kind, "info");
}

#[test]
fn impossible_bounds_exit_2_naming_the_flag() {
    for (flag, value) in [
        ("--idle-timeout", "0"),
        ("--idle-timeout", "-1"),
        ("--idle-timeout", "1e9"),
        ("--max-audio-bytes", "0"),
        ("--max-connections", "0"),
    ] {
        // Checked before the model is loaded: no model needed.
        let out = std::process::Command::new(common::BIN)
            .args(["--model", "/nonexistent/ggml-tiny.en.bin", "--uri"])
            .arg("tcp://127.0.0.1:0")
            .arg(format!("{flag}={value}"))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{flag} {value}: {err}");
        assert!(err.contains(flag), "{flag} {value}: {err}");
    }
}
