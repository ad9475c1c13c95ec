//! The Stt actor against a third-party Wyoming ASR server: `wyoming-faster-whisper` (Home
//! Assistant's speech-to-text add-on, faster-whisper tiny.en) on loopback. It closes the
//! connection after each transcript and ignores `ping`, so this checks the actor speaks
//! Wyoming as other servers do, not only as `hearth-stt` does: several utterances in a row,
//! health probes, and a server that goes away and comes back.
//!
//! Needs `scripts/setup` (the Python server) and `scripts/fetch-models peer` (its weights).

use std::time::{Duration, Instant};

use hearth::stt::{self, Stt, SttConfig, SttError, SttServer};
use ractor::Actor;

use hearth_testkit::peer::*;

use hearth_testkit::fixtures::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_stt_actor_works_against_wyoming_faster_whisper() {
    let Some(mut peer) = FasterWhisper::start("actor") else {
        return;
    };
    let mut config = SttConfig::new(SttServer::Connect(peer.uri()));
    config.health_every = Duration::ZERO; // the test probes itself
    config.backoff_min = Duration::from_millis(50);
    config.backoff_max = Duration::from_millis(200);
    config.start_timeout = Duration::from_secs(5);
    let (actor, handle) = Actor::spawn(None, Stt, config)
        .await
        .expect("the actor connects and reads the server's info");

    // several utterances in a row: the server closes each connection after its transcript
    for (fixture, want) in [
        ("kitchen.wav", vec!["kitchen light"]),
        ("long.wav", vec!["what time", "living room"]),
        ("kitchen.wav", vec!["kitchen light"]),
    ] {
        let heard = stt::transcribe(&actor, utterance(fixture))
            .await
            .unwrap_or_else(|e| panic!("{fixture}: {e}\n{}", peer.log()));
        for w in want {
            assert!(
                words(&heard.text).contains(w),
                "{fixture}: {:?} lacks {w:?}",
                heard.text
            );
        }
    }

    // the health probe is `describe`, which every Wyoming server answers (this one ignores
    // `ping`); none of the above was a restart
    let health = stt::health(&actor)
        .await
        .expect("the server answers describe");
    assert_eq!(health.restarts, 0, "{health:?}");
    assert_eq!(health.pid, None);
    assert!(!health.models.is_empty(), "{health:?}");
    assert_eq!(health.server, peer.uri());

    // the server goes away: a clear error naming the address, promptly
    peer.kill();
    let t = Instant::now();
    let err = stt::transcribe(&actor, utterance("kitchen.wav"))
        .await
        .expect_err("nobody listens");
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    assert!(matches!(err, SttError::Connect { .. }), "{err:?}");
    assert!(err.to_string().contains(&peer.uri()[6..]), "{err}");

    // and comes back on the same port: the next utterance is answered
    peer.restart();
    let heard = stt::transcribe(&actor, utterance("kitchen.wav"))
        .await
        .unwrap_or_else(|e| panic!("after the server came back: {e}\n{}", peer.log()));
    assert!(
        words(&heard.text).contains("kitchen light"),
        "{:?}",
        heard.text
    );

    actor.stop(None);
    handle.await.unwrap();
}
