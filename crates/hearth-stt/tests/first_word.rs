//! The real `hearth-stt` binary with the real tiny.en model and the demo home's words as
//! prompt, on commands whose first word whisper dropped while the prompt was an open list
//! ("…, thermostat, lock"): "Lock the front door." was heard as "the front door,". The prompt
//! is now closed as a sentence before whisper sees it (`recognizer::closed_prompt`), and the
//! first word is heard.
//!
//! The recordings are in `tests/audio/` (its README says how they were made).

mod common;

use common::{recording, transcript_text, words, TcpServer, DEMO_PROMPT};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_commands_first_word_is_heard_after_the_prompt() {
    let Some(model) = common::model() else { return };
    let server = TcpServer::start(&model, &["--prompt", DEMO_PROMPT]);
    let mut client = server.connect().await;
    // (recording, the words said)
    let cases = [
        ("lock-the-front-door.wav", "lock the front door"),
        ("lock-it-again.wav", "lock it again"),
        (
            "lock-the-back-and-the-garage-door.wav",
            "lock the back door and the garage door",
        ),
    ];
    let mut wrong = Vec::new();
    for (name, said) in cases {
        let text = transcript_text(client.transcribe_wav(&recording(name)).await);
        eprintln!("{name}: {text:?}");
        if words(&text) != words(said) {
            wrong.push(format!("{name}: heard {text:?}, said {said:?}"));
        }
    }
    assert!(
        wrong.is_empty(),
        "{}\nserver log:\n{}",
        wrong.join("\n"),
        server.log()
    );
}
