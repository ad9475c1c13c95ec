//! Streaming equals one-shot: for every corpus case, at every split point, and token by
//! token, the streamed reply and calls equal the one-shot parse. Plus property tests: any
//! input never panics, and random chunkings of random marker soup stream correctly.

mod common;

use hearth_toolcall::{known_tags, registry, ParseOutput, Parser, StreamEvent, ToolSet};
use proptest::prelude::*;

/// Stream `chunks` and return (concatenated text, calls, final output).
fn stream(parser: &Parser, tools: &ToolSet, chunks: &[&str]) -> (String, Vec<String>, ParseOutput) {
    let mut sp = parser.stream(tools);
    let mut text = String::new();
    let mut calls = Vec::new();
    let take = |evs: Vec<StreamEvent>, text: &mut String, calls: &mut Vec<String>| {
        for e in evs {
            match e {
                StreamEvent::Text(t) => text.push_str(&t),
                StreamEvent::Call(c) => calls.push(serde_json::to_string(&c).unwrap()),
            }
        }
    };
    for c in chunks {
        let evs = sp.push(c);
        take(evs, &mut text, &mut calls);
    }
    let (evs, out) = sp.finish();
    take(evs, &mut text, &mut calls);
    (text, calls, out)
}

fn expect_equal(
    parser: &Parser,
    tools: &ToolSet,
    raw: &str,
    chunks: &[&str],
) -> Result<(), String> {
    let one = parser.parse(raw, tools);
    let (text, calls, out) = stream(parser, tools, chunks);
    let one_calls: Vec<String> = one
        .calls
        .iter()
        .map(|c| serde_json::to_string(c).unwrap())
        .collect();
    if out != one {
        return Err(format!(
            "final output differs:\n  one-shot {one:?}\n  streamed {out:?}"
        ));
    }
    if text != one.reply {
        return Err(format!("streamed text {text:?} != reply {:?}", one.reply));
    }
    if calls != one_calls {
        return Err(format!("streamed calls {calls:?} != {one_calls:?}"));
    }
    Ok(())
}

fn char_splits(s: &str) -> Vec<usize> {
    s.char_indices().map(|(i, _)| i).skip(1).collect()
}

#[test]
fn every_split_point_of_every_corpus_case() {
    let cases = common::load();
    let mut failures = Vec::new();
    for case in &cases {
        let parser = case.parser("auto");
        for at in char_splits(&case.raw) {
            let (a, b) = case.raw.split_at(at);
            if let Err(e) = expect_equal(&parser, &case.tools, &case.raw, &[a, b]) {
                failures.push(format!("{} split at {at}: {e}", case.label()));
                break;
            }
        }
        // token by token (here: char by char)
        let chars: Vec<String> = case.raw.chars().map(String::from).collect();
        let refs: Vec<&str> = chars.iter().map(String::as_str).collect();
        if let Err(e) = expect_equal(&parser, &case.tools, &case.raw, &refs) {
            failures.push(format!("{} char by char: {e}", case.label()));
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Inputs on which streaming once diverged from the one-shot parse (found by proptest and
/// cargo-fuzz): every split point, every think setting.
const REGRESSIONS: &[&str] = &[
    "{\"tool\": \"sfupction_call|>  no.</think>earch\", \"argumeenin g\u{13}hours\"no.<<|python_tag|>/thi\"tool\": \"sfupction_call|>  no.</think>earcn g\u{13}hourumeenin g\u{13}hours\"no.</think>earch\", \"argumeenin ghonk>earch\", \"argumeenin ghours\"}}",
    "gdtti-e()nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn=f_time\", \"arguments\": {}}\n</tool_call|>[{\"n\"a me\":get_time\", \"argumre.</think>It is about lunchtime where you a \"e\":get_time\", \"argumene\":get_time\", \"arguments\": {}}]<|/tool_call|> buld do</nnnnnnnnnnnnnnnnnnnnnnnnnenol_call|>[{\"namCalling <tool_call>\n<function=gt_iemte>\nfun/<ction>\n</tofl_call> i` overkill here.</think>It is about lunchtime where you a \"e\":get_time\", \"argumene\":get_time\", \"arguments\": {}}]<|/tool_call|> buld do</nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn",
    "Okay, the user wants the date. I have get_date.\n</think>\n\n<｜tool▁c=lls▁begin｜><｜tool▁call▁bef\u{4}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}wnction<｜tool▜tool▁sep｜>get_date\n`callon\n{get_dathi.e/<\ntnk>\n\n<｜tool▁calls▁begin｜><｜tool▁cal&time.[/THIol▁calls▁end｜>",
    "</tool_call>[get_time()]<|tool_call>[ARGS][ARGS][ARGS]<|channel|>commentary to=functions.get_time <|constrain|>json<|message|><tool_call><tool_call>[TOOL_CALLS]{\"name\": \"get_time\", \"arguments\": {}}",
    "{<|channel|>analysis<|message|>[/THINK][TOOL_CALLS]<｜tool▁call▁end｜><|end|><tool_call|><|im_end|>{{[set_light(room='x', on=True)] call:get_time{}<|im_end|>[/THINK]",
    "call:get_time{}[THINK][TOOL_CALLS]{\"name\": \"get_time\", \"arguments\": {}}{",
    "{\"name\": \"set_light\", \"arguments\": {\"room\": \"kitchen\", \"on\": true}}<function=get_time><|python_tag|>`<|tool_call>Action:Action:<｜tool▁calls▁begin｜><tool_call>Action:```json\n<tool_call>",
    "<|start|>assistant{\"name\": \"get_time\", \"arguments\": {}}<|start|>assistant",
];

#[test]
fn past_divergences_stream_equal_at_every_split() {
    let tools = common::default_tools();
    for think in [None, Some(false), Some(true)] {
        let parser = Parser::from_names(&registry(), &["auto"], known_tags(), think).unwrap();
        for raw in REGRESSIONS {
            for at in char_splits(raw) {
                let (a, b) = raw.split_at(at);
                if let Err(e) = expect_equal(&parser, &tools, raw, &[a, b]) {
                    panic!("{raw:?} split at {at}, think {think:?}: {e}");
                }
            }
        }
    }
}

#[test]
fn text_is_emitted_before_the_end_when_it_is_certain() {
    let parser = Parser::from_names(&registry(), &["auto"], known_tags(), Some(false)).unwrap();
    let tools = common::default_tools();
    let mut sp = parser.stream(&tools);
    let evs = sp.push("The kitchen light is on. ");
    let evs2 = sp.push("Anything else?");
    let text: String = evs
        .into_iter()
        .chain(evs2)
        .filter_map(|e| match e {
            StreamEvent::Text(t) => Some(t),
            _ => None,
        })
        .collect();
    assert!(text.starts_with("The kitchen light is on."), "{text:?}");
}

/// Fragments that exercise markers, think tags, JSON and pythonic syntax.
fn soup() -> impl Strategy<Value = String> {
    let frags = prop::sample::select(vec![
        "<tool_call>",
        "</tool_call>",
        "<think>",
        "</think>",
        "{\"name\": \"get_time\", \"arguments\": {}}",
        "{\"name\": \"set_light\", \"arguments\": {\"room\": \"kitchen\", \"on\": true}}",
        "[TOOL_CALLS]",
        "[ARGS]",
        "get_time",
        "[get_time()]",
        "[set_light(room='x', on=True)]",
        "<|python_tag|>",
        "<function=get_time>",
        "</function>",
        "<parameter=room>",
        "</parameter>",
        "```json\n",
        "```",
        "`",
        "<|im_end|>",
        "<|channel|>analysis<|message|>",
        "<|end|>",
        "<|start|>assistant",
        "<|channel|>commentary to=functions.get_time <|constrain|>json<|message|>",
        "<|call|>",
        "<｜tool▁calls▁begin｜>",
        "<｜tool▁call▁begin｜>",
        "<｜tool▁sep｜>",
        "<｜tool▁call▁end｜>",
        "<invoke name=\"get_time\">",
        "</invoke>",
        "{",
        "}",
        "[",
        "]",
        "(",
        ")",
        "\"",
        "'",
        ",",
        ":",
        " ",
        "\n",
        "Hello",
        "é☕",
        "functools",
        ">>>",
        "Action:",
        "<|tool_call>",
        "<tool_call|>",
        "call:get_time{}",
        "<|\"|>",
        "[THINK]",
        "[/THINK]",
        "\u{2726} tool_call: ",
        "get_time for ",
        "room 'x' ",
        "<use ",
        "<use_get_time",
        " room=\"x\"",
        ">",
        "</use>",
        "<tool_call>get_time\n",
        "<room>x</room>",
    ]);
    prop::collection::vec(frags, 0..24).prop_map(|v| v.concat())
}

proptest! {
    // PROPTEST_CASES raises the count for a longer local run
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(512),
        .. ProptestConfig::default()
    })]

    #[test]
    fn any_bytes_never_panic(s in any::<String>()) {
        let tools = common::default_tools();
        let out = Parser::auto().parse(&s, &tools);
        // the reply is made of the input's own characters
        prop_assert!(out.reply.len() <= s.len());
        let _ = hearth_toolcall::speech::Speakable::sanitize(&s);
    }

    #[test]
    fn marker_soup_never_panics_and_streams_equal(s in soup(), cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..6), think in prop::option::of(any::<bool>())) {
        let tools = common::default_tools();
        let parser = Parser::from_names(&registry(), &["auto"], known_tags(), think).unwrap();
        let mut points: Vec<usize> = cuts.iter().map(|i| i.index(s.len() + 1)).collect();
        points.sort();
        points.dedup();
        let mut chunks = Vec::new();
        let mut last = 0;
        for p in points {
            let mut p = p;
            while !s.is_char_boundary(p) { p -= 1; }
            if p > last { chunks.push(&s[last..p]); last = p; }
        }
        chunks.push(&s[last..]);
        if let Err(e) = expect_equal(&parser, &tools, &s, &chunks) {
            prop_assert!(false, "{e}\ninput: {s:?}\nchunks: {chunks:?}");
        }
    }

    #[test]
    fn corpus_cases_stream_equal_under_random_chunking(idx in any::<prop::sample::Index>(), cuts in prop::collection::vec(any::<prop::sample::Index>(), 1..8)) {
        let cases = common::load();
        prop_assume!(!cases.is_empty());
        let case = &cases[idx.index(cases.len())];
        let parser = case.parser("auto");
        let s = &case.raw;
        let mut points: Vec<usize> = cuts.iter().map(|i| i.index(s.len() + 1)).collect();
        points.sort();
        points.dedup();
        let mut chunks = Vec::new();
        let mut last = 0;
        for p in points {
            let mut p = p;
            while !s.is_char_boundary(p) { p -= 1; }
            if p > last { chunks.push(&s[last..p]); last = p; }
        }
        chunks.push(&s[last..]);
        if let Err(e) = expect_equal(&parser, &case.tools, s, &chunks) {
            prop_assert!(false, "{}: {e}", case.label());
        }
    }
}
