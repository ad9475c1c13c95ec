//! The Stt actor against the real `hearth-stt` (whisper.cpp, tiny.en) as its child: the
//! fixtures are heard, a killed child is restarted and the utterance under way and the next
//! one are still answered, and the health check reports the restart.
//!
//! `hearth-stt` is another package of the workspace: `cargo test --workspace` (what
//! `scripts/test` runs) builds it into the same target dir; a missing binary fails with the
//! fix. The model is `../shared/models/ggml-tiny.en.bin` (or `$HEARTH_WHISPER_MODEL`);
//! `HEARTH_SKIP_REAL_MODEL=1` skips locally (CI never sets it).

use std::path::{Path, PathBuf};
use std::time::Duration;

use hearth::stt::{self, Stt, SttConfig, SttServer};
use ractor::Actor;

fn skip(what: &str) -> bool {
    if std::env::var("HEARTH_SKIP_REAL_MODEL").as_deref() == Ok("1") {
        eprintln!("skipping: {what} (HEARTH_SKIP_REAL_MODEL=1)");
        return true;
    }
    false
}

fn shared() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared")
}

/// The real whisper model and the `hearth-stt` binary, or None when skipping.
fn server() -> Option<SttServer> {
    let model = std::env::var_os("HEARTH_WHISPER_MODEL")
        .map(PathBuf::from)
        .unwrap_or_else(|| shared().join("models/ggml-tiny.en.bin"));
    if !model.is_file() {
        if skip("the whisper model is missing") {
            return None;
        }
        panic!(
            "{} is missing: it is shared/models/ggml-tiny.en.bin beside the checkout \
             (or set HEARTH_WHISPER_MODEL)",
            model.display()
        );
    }
    // target/debug/deps/stt-HASH → target/debug/hearth-stt
    let program = std::env::current_exe()
        .ok()
        .and_then(|p| p.parent()?.parent().map(|d| d.join("hearth-stt")))
        .filter(|p| p.is_file());
    let Some(program) = program else {
        if skip("hearth-stt is not built") {
            return None;
        }
        panic!("hearth-stt is not built beside the tests: run `cargo test --workspace` (or `cargo build -p hearth-stt`) first");
    };
    Some(SttServer::Spawn {
        program,
        model,
        args: vec!["--threads".into(), "2".into()],
    })
}

use hearth_testkit::fixtures::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hears_the_fixtures_and_survives_a_killed_child() {
    let Some(server) = server() else { return };
    let mut config = SttConfig::new(server);
    config.health_every = Duration::ZERO; // the test asks for health itself
    config.backoff_min = Duration::from_millis(50);
    let (actor, handle) = Actor::spawn(None, Stt, config)
        .await
        .expect("hearth-stt starts");

    let heard = stt::transcribe(&actor, utterance("kitchen.wav"))
        .await
        .unwrap();
    assert!(
        words(&heard.text).contains("kitchen light"),
        "{:?}",
        heard.text
    );
    assert!(heard.stt_ms > 0.0);

    let before = stt::health(&actor).await.unwrap();
    assert_eq!(before.restarts, 0);
    assert_eq!(before.models, ["ggml-tiny.en"]);
    let pid = before.pid.expect("a spawned child has a pid");

    // kill the child while it works on an utterance: the actor restarts it and retries
    let long = utterance("long.wav");
    let busy = {
        let actor = actor.clone();
        tokio::spawn(async move { stt::transcribe(&actor, long).await })
    };
    tokio::time::sleep(Duration::from_millis(30)).await;
    // SAFETY-free: kill(2) on our own child's pid
    assert_eq!(unsafe { libc::kill(pid as i32, libc::SIGKILL) }, 0);
    let retried = busy
        .await
        .unwrap()
        .expect("the utterance under way is answered");
    assert!(!retried.text.is_empty(), "{retried:?}");

    // and the next utterance too, by the new child
    let next = stt::transcribe(&actor, utterance("kitchen.wav"))
        .await
        .unwrap();
    assert!(
        words(&next.text).contains("kitchen light"),
        "{:?}",
        next.text
    );
    let after = stt::health(&actor).await.unwrap();
    assert_eq!(after.restarts, 1, "{after:?}");
    assert_ne!(after.pid, Some(pid));

    // killed while idle: the health check notices and restarts
    let pid = after.pid.unwrap();
    assert_eq!(unsafe { libc::kill(pid as i32, libc::SIGKILL) }, 0);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let again = stt::health(&actor).await.unwrap();
    assert_eq!(again.restarts, 2, "{again:?}");

    actor.stop(None);
    handle.await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_child_that_dies_at_start_is_an_error_with_its_log() {
    let Some(SttServer::Spawn { program, .. }) = server() else {
        return;
    };
    // a file that is not a whisper model: hearth-stt exits with its own error
    let bogus = std::env::temp_dir().join(format!("hearth-bogus-{}.bin", std::process::id()));
    std::fs::write(&bogus, b"not a model").unwrap();
    let config = SttConfig::new(SttServer::Spawn {
        program,
        model: bogus.clone(),
        args: vec![],
    });
    let e = Actor::spawn(None, Stt, config)
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("went away") && e.contains("exited"), "{e}");
    assert!(
        e.contains(&bogus.display().to_string()),
        "the child's log names the file: {e}"
    );
    let _ = std::fs::remove_file(bogus);
}
