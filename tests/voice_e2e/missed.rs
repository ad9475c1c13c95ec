//! What is said while hearth is busy and cannot all be answered: the person is told, end to
//! end through `hearth run --realtime`. Four requests said during a ten-second tool call are
//! one more than the conductor keeps; the three latest are answered after the call, and before
//! them hearth says "Sorry, I missed that." for the one it dropped.

use super::early::{said, scene};
use super::*;

/// `take_nap`: a local intent whose call takes ten seconds.
const NAP: &str = r#"[[tool]]
name = "take_nap"
description = "Rest for ten seconds."
say = "I had a nap."
[tool.parameters]
type = "object"
properties = {}
additionalProperties = false
[tool.exec]
argv = ["/bin/sleep", "10"]
timeout_ms = 15000
[[tool.intent]]
sentences = ["take a nap"]
"#;

#[test]
fn requests_dropped_while_busy_are_owned_up_to() {
    let Some(models) = ready() else { return };
    let _one = serial();
    let dir = scratch("missed");
    let tools = common::story::demo_tools_and(&dir, "nap", NAP).unwrap();
    let time = said(&models, "What time is it?");
    let wav = scene(
        &dir,
        vec![
            (1000, said(&models, "Take a nap.")),
            // said during the nap: one more than the conductor keeps
            (1500, time.clone()),
            (1500, time.clone()),
            (1500, time.clone()),
            (1500, time),
        ],
    );
    let run = hearth_run_with(
        wav.to_str().unwrap(),
        "missed-run",
        &["--realtime", "--tools", tools.to_str().unwrap()],
    );
    let names: Vec<String> = run
        .turns
        .iter()
        .map(|t| calls(t).first().map(|c| c.0.clone()).unwrap_or_default())
        .collect();
    assert_eq!(
        names,
        ["take_nap", "get_time", "get_time", "get_time"],
        "the nap, then the three latest requests: {:?}",
        run.turns
    );
    assert!(
        run.log
            .contains("utterances were dropped unanswered: saying so missed=1"),
        "{}",
        run.log
    );
    // and it was said, between the nap's reply and the first answer after it
    let heard = common::fixtures::words(&transcribe(&run.reply_wav));
    eprintln!("the replies were heard as {heard:?}");
    // (tiny.en hears Piper's "I had a nap" as "i had an app" now and then)
    let nap = heard.find("i had");
    let missed = heard.find("missed");
    // the first time said ("it's 9:05 am", "its 115pm": the test runs at any hour, and
    // whisper writes times either way)
    let time = ["its", "am", "pm"]
        .iter()
        .filter_map(|h| heard.find(h))
        .min();
    assert!(
        nap.is_some() && missed.is_some() && time.is_some() && nap < missed && missed < time,
        "the nap's reply, the notice, then the answers: {heard:?}"
    );
}
