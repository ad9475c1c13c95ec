//! Any bytes: parse (auto and streamed at a data-chosen split) and sanitise must never
//! panic, and streaming must equal the one-shot parse.
#![no_main]

use std::sync::OnceLock;

use hearth_toolcall::speech::Speakable;
use hearth_toolcall::{Parser, StreamEvent, ToolSet};
use libfuzzer_sys::fuzz_target;

fn tools() -> &'static ToolSet {
    static T: OnceLock<ToolSet> = OnceLock::new();
    T.get_or_init(|| {
        ToolSet::from_openai_json(include_str!(
            "../../crates/hearth-toolcall/tests/corpus/tools.json"
        ))
        .expect("tools.json")
    })
}

fn parser() -> &'static Parser {
    static P: OnceLock<Parser> = OnceLock::new();
    P.get_or_init(Parser::auto)
}

fuzz_target!(|data: &[u8]| {
    let Some((&cut, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let one = parser().parse(text, tools());
    let _ = Speakable::sanitize(text);

    let mut at = (cut as usize * text.len()) / 255;
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    let mut sp = parser().stream(tools());
    let mut streamed = String::new();
    let mut calls = Vec::new();
    let mut take = |evs: Vec<StreamEvent>| {
        for e in evs {
            match e {
                StreamEvent::Text(t) => streamed.push_str(&t),
                StreamEvent::Call(c) => calls.push(c),
            }
        }
    };
    take(sp.push(&text[..at]));
    take(sp.push(&text[at..]));
    let (evs, out) = sp.finish();
    take(evs);
    assert_eq!(out, one);
    assert_eq!(
        streamed, one.reply,
        "streamed reply differs for {text:?} split at {at}"
    );
    assert_eq!(
        calls, one.calls,
        "streamed calls differ for {text:?} split at {at}"
    );
});
