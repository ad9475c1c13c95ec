//! The real `hearth-stt` binary with the real tiny.en model on short commands that whisper, in
//! the trimmed encoder window, decoded twice ("What time is it? What time is it?"): the
//! transcript holds the command once. Commands that were really said twice keep both.
//!
//! The recordings are in `tests/audio/` (its README says how they were made); the prompt is
//! the one `hearth run --tools tools` gave `hearth-stt` for the demo home when the copies
//! were seen.

mod common;

use common::{recording, transcript_text, TcpServer, DEMO_PROMPT};

/// Lower case, letters, digits and spaces only ("Goodnight" and "good night" both count as
/// one "night").
fn plain(text: &str) -> String {
    text.to_lowercase()
        .chars()
        .map(|c| if c.is_alphanumeric() { c } else { ' ' })
        .collect()
}

fn times(text: &str, word: &str) -> usize {
    plain(text).matches(word).count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_short_command_is_heard_once_and_a_repeated_one_twice() {
    let Some(model) = common::model() else { return };
    let server = TcpServer::start(&model, &["--prompt", DEMO_PROMPT]);
    let mut client = server.connect().await;
    // (recording, a word of the command, how many times it was said)
    let cases = [
        ("what-time-is-it.wav", "time", 1),
        ("what-time-is-it-slow-noisy.wav", "time", 1),
        ("thank-you-slow-noisy.wav", "thank", 1),
        ("good-night-fast.wav", "night", 1),
        ("too-dark-in-the-hallway-fast-noisy.wav", "dark", 1),
        ("thank-you-thank-you.wav", "thank", 2),
        ("good-night-good-night.wav", "night", 2),
    ];
    let mut wrong = Vec::new();
    for (name, word, said) in cases {
        let text = transcript_text(client.transcribe_wav(&recording(name)).await);
        eprintln!("{name}: {text:?}");
        if times(&text, word) != said {
            wrong.push(format!(
                "{name}: {text:?} has `{word}` {} times, said {said}",
                times(&text, word)
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "{}\nserver log:\n{}",
        wrong.join("\n"),
        server.log()
    );
}
