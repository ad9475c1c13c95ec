//! `gemma`: Google Gemma 4's native tool calls, plus two looser Gemma forms.
//!
//! # Wire format
//!
//! Gemma 4 (E2B, E4B, 26B A4B, 31B) writes each call as one block between two special
//! tokens, with its own object notation inside (not JSON):
//!
//! ```text
//! <|tool_call>call:get_weather{location:<|"|>Paris<|"|>,unit:<|"|>celsius<|"|>}<tool_call|>
//! ```
//!
//! - `call:` then the function name (letters, digits, `_`, `-`, `.`), then `{…}`.
//! - Keys are bare (`location:`); the chat template's own declarations also quote keys with
//!   the string token (`{<|"|>3<|"|>:…}`), so a key quoted that way is accepted too.
//! - Strings are wrapped in the single token `<|"|>`; there is no escaping inside (the token
//!   cannot occur in a string). Numbers, `true`/`false` and `null` (Jinja renders Python's
//!   `None` as `None`) are bare. Objects `{k:v,…}` and lists `[v,…]` nest.
//! - Several calls are simply concatenated, one block each.
//! - After the last call the model emits `<|tool_response>`, where the engine stops it to
//!   run the tools; that token is part of the call and is included in the span. Run without
//!   that stop, it goes on to invent the answer, `response:NAME{…}<tool_response|>`; a
//!   complete invented answer right after a call joins the call's span (it is neither speech
//!   nor a call). Some Gemma 4 outputs close a call with `<turn|>` instead of
//!   `<tool_call|>` (seen by vLLM); that is accepted as the closer.
//!
//! Sources: the Gemma 4 chat template (`format_argument` macro and the `<|tool_call>call:`
//! rendering of assistant `tool_calls`), vLLM's `gemma4` tool parser and its tests
//! (`test_gemma4_tool_parser.py`, `test_gemma4_regex_and_bare_calls.py`), llama.cpp's
//! PEG `gemma4` format.
//!
//! # Decisions and edge cases
//!
//! - Fail closed: a bare word where a value belongs (`unit:celsius`), a trailing comma, a
//!   JSON-quoted string, a stray `:` after `<|tool_call>` are malformed (reported with the
//!   reason), never repaired. A block whose body is complete but whose closer is missing is
//!   accepted only at the end of the output (the server may have eaten the stop token);
//!   followed by other text it is malformed.
//! - A string value of a top-level argument whose tool schema declares a non-string type
//!   (`brightness:<|"|>50<|"|>` for an integer) is typed by the schema
//!   ([`scan::typed_value`]); without a schema, or for string parameters, it stays a string.
//! - A string never runs past the next `<|tool_call>`: an unterminated block is reported
//!   malformed up to the next block, which still parses.
//! - Streaming: an open block is `Pending` from its first byte.
//! - Not accepted (vLLM's lenient offline tier takes them): a stray colon,
//!   `<|tool_call>:call:f{…}` (malformed here), and `<call>f{…}` from a fragmented token
//!   (left as text).
//!
//! # Loose forms (found with `.loose()`: only allowlisted names run, only when no strict
//! format matched)
//!
//! - Bare `call:NAME{…}` without the `<|tool_call>` token, which Gemma 4 sometimes emits
//!   right after its thinking channel (`<channel|>call:bash{…}`) or on its own line. Only
//!   taken at the start of the text, after whitespace or right after `<channel|>`, and only
//!   when the whole `call:NAME{…}` parses; anything else is left as text.
//! - Gemma 3 has no tool tokens; one community prompt (popularised by Philipp Schmid's
//!   "Gemma function calling" guide) asks for a fenced block ```` ```tool_code ```` holding a
//!   Python call, `get_weather(location="Paris")`. Gemma 3's official prompts ask for a
//!   pythonic list `[f(a=1)]` or a JSON object instead, which the `pythonic` and `json`
//!   detectors handle. This detector takes a ```` ```tool_code ```` fence whose every
//!   non-blank line is exactly one keyword-argument call with literal values
//!   ([`pyliteral::parse_call`]); any other fence body (real code, `print(…)`, a list) is
//!   left alone. The fence masker lets `tool_code` fences through for this reason.
//!
//! The `call:NAME{…}` grammar is shared with `functiongemma` (same notation with `<escape>`
//! as the string token): see `shared::call_value`.

use serde_json::Value;

use crate::detector::{Candidate, DetectCtx, Detector, Found, Strictness};
use crate::pyliteral;
use crate::scan;

use super::shared::call_value::{
    absorb_trailer, marked_at, parse_call_body, swallow_invented_response, type_args, CallParse,
    Dialect, Step, BARE,
};
use super::shared::memo_find::Finder;

pub struct Gemma;

/// Gemma 4's string delimiter token.
pub(crate) const GEMMA4_QUOTE: &str = "<|\"|>";

const GEMMA4: Dialect = Dialect {
    open: "<|tool_call>",
    close: "<tool_call|>",
    alt_close: &["<turn|>"],
    trailer: &["<|tool_response>"],
    quote: GEMMA4_QUOTE,
    response_end: "<tool_response|>",
};

const FENCE: &str = "```tool_code";

impl Detector for Gemma {
    fn name(&self) -> &str {
        "gemma"
    }
    fn strictness(&self) -> Strictness {
        Strictness::Strict
    }
    fn triggers(&self) -> &[&str] {
        // "call:" for the bare form: a partial trigger at the end of a stream is held back,
        // so a bare call is never spoken before it is recognised (costs at most a token of
        // delay when prose ends in "c").
        &["<|tool_call>", "call:", "```tool_code"]
    }
    fn detect(&self, text: &str, ctx: &DetectCtx<'_>, out: &mut Vec<Found>) {
        let mut opens = Finder::new(text, GEMMA4.open);
        let mut closes = Finder::new(text, GEMMA4.close);
        let mut bares = Finder::new(text, BARE);
        let mut fences = Finder::new(text, FENCE);
        let mut response_ends = Finder::new(text, GEMMA4.response_end);
        let mut bare_on = true;
        // The filtered searches below skip rejected candidates; their answers are cached
        // (as `(from, answer)`) so no candidate is looked at twice.
        let mut bare_cache: Option<(usize, Option<usize>)> = None;
        let mut fence_cache: Option<(usize, Option<usize>)> = None;
        let mut pos = 0;
        while pos < text.len() {
            let m = opens.next(pos);
            let b = if bare_on {
                cached(&mut bare_cache, pos, |from| {
                    next_bare(text, &mut bares, from)
                })
            } else {
                None
            };
            let f = cached(&mut fence_cache, pos, |from| {
                next_fence(text, &mut fences, from)
            });
            let first = [m, b, f].into_iter().flatten().min();
            let Some(at) = first else { break };
            let step = if m == Some(at) {
                let step = marked_at(&GEMMA4, text, at, ctx, &mut opens, &mut closes);
                swallow_invented_response(&GEMMA4, text, step, &mut opens, &mut response_ends)
            } else if b == Some(at) {
                match bare_at(text, at, ctx, &mut opens) {
                    BareStep::Step(s) => s,
                    BareStep::GiveUp => {
                        bare_on = false;
                        Step::Next(None, at + BARE.len())
                    }
                }
            } else {
                fence_at(text, at, ctx)
            };
            match step {
                Step::Next(found, resume) => {
                    out.extend(found);
                    pos = resume.max(at + 1);
                    while pos < text.len() && !text.is_char_boundary(pos) {
                        pos += 1;
                    }
                }
                Step::Stop(found) => {
                    out.extend(found);
                    break;
                }
            }
        }
    }
}

/// Answer "first accepted candidate at or after `from`" from the cache when it still holds.
fn cached(
    cache: &mut Option<(usize, Option<usize>)>,
    from: usize,
    find: impl FnOnce(usize) -> Option<usize>,
) -> Option<usize> {
    if let Some((searched, answer)) = *cache {
        match answer {
            Some(p) if searched <= from && p >= from => return Some(p),
            None if searched <= from => return None,
            _ => {}
        }
    }
    let answer = find(from);
    *cache = Some((from, answer));
    answer
}

// ---------------------------------------------------------------------------------------
// Loose forms: bare `call:NAME{…}` and ```tool_code fences.
// ---------------------------------------------------------------------------------------

/// The next `call:` at or after `from` that may start a bare call: at the start of the
/// text, after whitespace, or right after Gemma's `<channel|>`.
fn next_bare(text: &str, bares: &mut Finder<'_>, mut from: usize) -> Option<usize> {
    loop {
        let p = bares.next(from)?;
        let before = &text[..p];
        let ok = before.is_empty()
            || before.ends_with(|c: char| c.is_whitespace())
            || before.ends_with("<channel|>");
        // the name may not have arrived yet: a `call:` ending the text is still a start
        let name_follows = text
            .as_bytes()
            .get(p + BARE.len())
            .is_none_or(|c| c.is_ascii_alphabetic() || *c == b'_');
        if ok && name_follows {
            return Some(p);
        }
        from = p + BARE.len();
    }
}

enum BareStep {
    Step(Step),
    /// Incomplete at the end of the output: no more bare calls are looked for.
    GiveUp,
}

fn bare_at(text: &str, at: usize, ctx: &DetectCtx<'_>, opens: &mut Finder<'_>) -> BareStep {
    let limit = opens.next(at).unwrap_or(text.len());
    let limited = &text[..limit];
    match parse_call_body(limited, at, GEMMA4_QUOTE) {
        CallParse::Done { name, args, end } => {
            let cand = Candidate::new(name.clone(), type_args(ctx, &name, args));
            let q = scan::skip_ws(text, end);
            let span_end = if text[q..].starts_with(GEMMA4.close) {
                absorb_trailer(&GEMMA4, text, q + GEMMA4.close.len())
            } else {
                absorb_trailer(&GEMMA4, text, end)
            };
            BareStep::Step(Step::Next(
                Some(Found::call(at..span_end, cand).loose()),
                span_end,
            ))
        }
        CallParse::Incomplete { .. } if limit < text.len() => {
            BareStep::Step(Step::Next(None, limit))
        }
        CallParse::Incomplete { .. } => {
            if ctx.eof {
                BareStep::GiveUp
            } else {
                BareStep::Step(Step::Stop(Some(Found::pending(at..text.len()).loose())))
            }
        }
        CallParse::Invalid { at: stop, .. } => {
            BareStep::Step(Step::Next(None, stop.min(limit).max(at + BARE.len())))
        }
    }
}

/// The next ```` ```tool_code ```` opener at a line start, at or after `from`.
fn next_fence(text: &str, fences: &mut Finder<'_>, mut from: usize) -> Option<usize> {
    loop {
        let p = fences.next(from)?;
        if at_line_start(text, 0, p) {
            return Some(p);
        }
        from = p + FENCE.len();
    }
}

fn fence_at(text: &str, at: usize, ctx: &DetectCtx<'_>) -> Step {
    let info_start = at + FENCE.len();
    let Some(nl) = scan::find_from(text, "\n", info_start) else {
        return pending_or_skip(text, at, info_start, ctx.eof);
    };
    if !text[info_start..nl].trim().is_empty() {
        return Step::Next(None, nl);
    }
    let body_start = nl + 1;
    // The closing fence: ``` at the start of a line.
    let mut from = body_start;
    let close = loop {
        let Some(c) = scan::find_from(text, "```", from) else {
            break None;
        };
        if at_line_start(text, body_start, c) {
            break Some(c);
        }
        from = c + 3;
    };
    let Some(close) = close else {
        return pending_or_skip(text, at, body_start, ctx.eof);
    };
    let end = close + 3;
    let body = &text[body_start..close];
    let mut calls = Vec::new();
    for line in body.lines().filter(|l| !scan::is_blank(l)) {
        match pyliteral::parse_call(line) {
            Ok(c) => calls.push(Candidate::new(c.name, Value::Object(c.arguments))),
            Err(_) => return Step::Next(None, end),
        }
    }
    if calls.is_empty() {
        return Step::Next(None, end);
    }
    Step::Next(Some(Found::calls(at..end, calls).loose()), end)
}

/// True if only spaces or tabs stand between `p` and the start of its line (or `floor`).
/// Walks back over blanks only, so repeated calls stay linear.
fn at_line_start(text: &str, floor: usize, p: usize) -> bool {
    let b = text.as_bytes();
    let mut i = p;
    while i > floor && matches!(b[i - 1], b' ' | b'\t') {
        i -= 1;
    }
    i == floor || b[i - 1] == b'\n'
}

fn pending_or_skip(text: &str, at: usize, resume: usize, eof: bool) -> Step {
    if eof {
        Step::Next(None, resume)
    } else {
        Step::Stop(Some(Found::pending(at..text.len()).loose()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detector::FoundKind;
    use crate::scan::testing::{
        check_spans, detect_any, megabyte_of_each, named_args as calls, reason,
    };
    use crate::validate::ToolSet;
    use serde_json::json;

    fn tools() -> ToolSet {
        ToolSet::from_openai_json(
            r#"[{"type":"function","function":{"name":"set_light","parameters":{"type":"object",
            "properties":{"room":{"type":"string"},"on":{"type":"boolean"},
            "brightness":{"type":"integer"}}}}}]"#,
        )
        .unwrap()
    }

    fn run(text: &str, eof: bool) -> Vec<Found> {
        let out = detect_any(&Gemma, text, eof);
        check_spans(text, &out);
        out
    }

    /// None of `texts` holds a call once the output is complete.
    fn no_call_at_end(texts: &[&str]) {
        for t in texts {
            assert!(run(t, true).is_empty(), "{t}");
        }
    }

    /// `t` is pending while streaming and yields nothing at the end.
    fn pending_then_nothing(t: &str) {
        assert_eq!(run(t, false)[0].kind, FoundKind::Pending);
        assert!(run(t, true).is_empty());
    }

    #[test]
    fn single_call() {
        let t = r#"Let me check. <|tool_call>call:get_weather{location:<|"|>Paris, France<|"|>}<tool_call|>"#;
        let out = run(t, true);
        assert_eq!(out.len(), 1);
        assert_eq!(&t[out[0].span.clone()], &t[14..]);
        assert!(!out[0].loose);
        assert_eq!(
            calls(&out[0]),
            vec![("get_weather".into(), json!({"location": "Paris, France"}))]
        );
    }

    #[test]
    fn typed_values_and_nesting() {
        let t = r#"<|tool_call>call:f{n:42,x:-3.5,e:1e-05,ok:true,no:false,z:null,w:None,o:{inner:<|"|>v<|"|>,<|"|>3<|"|>:<|"|>three<|"|>},l:[<|"|>a]b<|"|>,1,[true]],empty:{},el:[]}<tool_call|>"#;
        let out = run(t, true);
        assert_eq!(
            calls(&out[0])[0].1,
            json!({"n":42,"x":-3.5,"e":1e-05,"ok":true,"no":false,"z":null,"w":null,
                   "o":{"inner":"v","3":"three"},"l":["a]b",1,[true]],"empty":{},"el":[]})
        );
    }

    #[test]
    fn strings_are_verbatim() {
        let t = "<|tool_call>call:send{text:<|\"|>Say \"hi\", {ok}: [1]\n\\n<|\"|>}<tool_call|>";
        let out = run(t, true);
        assert_eq!(
            calls(&out[0])[0].1,
            json!({"text": "Say \"hi\", {ok}: [1]\n\\n"})
        );
    }

    #[test]
    fn parallel_calls_and_trailer() {
        let t =
            "<|tool_call>call:a{}<tool_call|><|tool_call>call:b{x:1}<tool_call|><|tool_response>";
        let out = run(t, true);
        assert_eq!(out.len(), 2);
        assert_eq!(out[1].span.end, t.len());
        assert_eq!(calls(&out[1]), vec![("b".into(), json!({"x": 1}))]);
    }

    #[test]
    fn invented_response_joins_the_call() {
        let t = "<|tool_call>call:get_time{}<tool_call|><|tool_response>response:get_time{value:<|\"|>noon<|\"|>}<tool_response|>It is noon.";
        let out = run(t, true);
        assert_eq!(out.len(), 1);
        assert_eq!(&t[out[0].span.end..], "It is noon.");
    }

    #[test]
    fn whitespace_and_turn_closer() {
        let t = "<|tool_call>\ncall:get_time{ }\n<turn|>";
        let out = run(t, true);
        assert_eq!(out[0].span, 0..t.len());
        assert_eq!(calls(&out[0]), vec![("get_time".into(), json!({}))]);
        let t = "<|tool_call>call:a{ k : 1 , j:<|\"|>v<|\"|> }<tool_call|>";
        assert_eq!(calls(&run(t, true)[0])[0].1, json!({"k":1,"j":"v"}));
    }

    #[test]
    fn names_with_dots_and_dashes() {
        let t = "<|tool_call>call:fs.read-file{path:<|\"|>/a<|\"|>}<tool_call|>";
        assert_eq!(calls(&run(t, true)[0])[0].0, "fs.read-file");
    }

    #[test]
    fn schema_types_string_numbers() {
        let ts = tools();
        let ctx = DetectCtx {
            eof: true,
            tools: &ts,
        };
        let mut out = Vec::new();
        let t = r#"<|tool_call>call:set_light{room:<|"|>42<|"|>,on:<|"|>true<|"|>,brightness:<|"|>50<|"|>}<tool_call|>"#;
        Gemma.detect(t, &ctx, &mut out);
        assert_eq!(
            calls(&out[0])[0].1,
            json!({"room":"42","on":true,"brightness":50})
        );
        // without a schema a quoted number stays a string
        assert_eq!(
            calls(&run(r#"<|tool_call>call:x{n:<|"|>5<|"|>}<tool_call|>"#, true)[0])[0].1,
            json!({"n":"5"})
        );
    }

    #[test]
    fn unclosed_at_end() {
        let t = r#"<|tool_call>call:get_time{}"#;
        let out = run(t, true);
        assert_eq!(calls(&out[0]), vec![("get_time".into(), json!({}))]);
        let out = run(t, false);
        assert_eq!(out[0].kind, FoundKind::Pending);
        // partial closer at the end
        let t = "<|tool_call>call:get_time{}<tool_ca";
        assert_eq!(run(t, false)[0].kind, FoundKind::Pending);
        assert_eq!(run(t, true)[0].span, 0..t.len());
        // other text after the body: malformed
        let t = "<|tool_call>call:get_time{} and more";
        let out = run(t, true);
        assert!(reason(&out[0]).contains("missing <tool_call|>"));
        assert_eq!(out[0].span.end, 27);
    }

    #[test]
    fn streaming_pending() {
        for t in [
            "Hi <|tool_call>",
            "Hi <|tool_call>ca",
            "Hi <|tool_call>call:get_wea",
            "Hi <|tool_call>call:get_weather{location:<|\"|>Par",
            "Hi <|tool_call>call:get_weather{location:<|\"",
            "Hi <|tool_call>call:f{n:12",
            "Hi <|tool_call>call:f{n:[1,{a:",
        ] {
            let out = run(t, false);
            assert_eq!(out.len(), 1, "{t}");
            assert_eq!(out[0].kind, FoundKind::Pending, "{t}");
            assert_eq!(out[0].span, 3..t.len());
            let out = run(t, true);
            assert!(reason(&out[0]).contains("unterminated"), "{t}");
        }
    }

    #[test]
    fn malformed_reasons() {
        let cases = [
            (
                "<|tool_call>call:get_weather{location:Paris}<tool_call|>",
                "unquoted value `Paris`",
            ),
            (
                "<|tool_call>call:f{a:\"x\"}<tool_call|>",
                "JSON-quoted string",
            ),
            ("<|tool_call>call:f{a:1,}<tool_call|>", "trailing `,`"),
            (
                "<|tool_call>call:f{a:1 b:2}<tool_call|>",
                "expected `,` or `}`",
            ),
            ("<|tool_call>call:f{a:1,a:2}<tool_call|>", "given twice"),
            ("<|tool_call>call:f{a}<tool_call|>", "expected `:`"),
            (
                "<|tool_call>call:f{a:}<tool_call|>",
                "missing value for key `a`",
            ),
            (
                "<|tool_call>:call:f{}<tool_call|>",
                "expected `call:NAME{…}`",
            ),
            ("<|tool_call>call:{a:1}<tool_call|>", "function name"),
            ("<|tool_call>call:f(a=1)<tool_call|>", "expected `{`"),
            (
                "<|tool_call>{\"name\":\"f\"}<tool_call|>",
                "expected `call:NAME{…}`",
            ),
        ];
        for (t, want) in cases {
            let out = run(t, true);
            assert_eq!(out.len(), 1, "{t}");
            assert_eq!(out[0].span, 0..t.len(), "{t}");
            let r = reason(&out[0]);
            assert!(r.contains(want), "{t}: {r}");
        }
    }

    #[test]
    fn malformed_block_does_not_swallow_the_next() {
        let t =
            "<|tool_call>call:a{x:<|\"|>oops<tool_call|> then <|tool_call>call:b{y:1}<tool_call|>";
        let out = run(t, true);
        assert_eq!(out.len(), 2);
        assert!(reason(&out[0]).contains("unterminated"));
        assert_eq!(calls(&out[1]), vec![("b".into(), json!({"y": 1}))]);
        let t = "<|tool_call>call:a{x:bad}<tool_call|> ok <|tool_call>call:b{}<tool_call|>";
        let out = run(t, true);
        assert_eq!(out.len(), 2);
        assert_eq!(
            &t[out[0].span.clone()],
            "<|tool_call>call:a{x:bad}<tool_call|>"
        );
    }

    #[test]
    fn invalid_without_closer_while_streaming_is_pending() {
        let t = "<|tool_call>call:a{x:bad";
        assert_eq!(run(t, false)[0].kind, FoundKind::Pending);
        let t = "<|tool_call>call:a{x:bad,";
        assert_eq!(run(t, false)[0].kind, FoundKind::Pending);
        assert!(reason(&run(t, true)[0]).contains("unquoted"));
    }

    #[test]
    fn bare_calls_are_loose() {
        let t = "<|channel>thought\nNeed the file.<channel|>call:bash{command:<|\"|>ls -la<|\"|>}";
        let out = run(t, true);
        assert_eq!(out.len(), 1);
        assert!(out[0].loose);
        assert_eq!(
            calls(&out[0]),
            vec![("bash".into(), json!({"command": "ls -la"}))]
        );
        let t = "Sure.\ncall:get_time{}";
        let out = run(t, true);
        assert!(out[0].loose);
        assert_eq!(&t[out[0].span.clone()], "call:get_time{}");
    }

    #[test]
    fn bare_prose_is_not_a_call() {
        no_call_at_end(&[
            "Please call: 555-1234 {today}",
            "I will call:you{later}",
            "recall:x{}",
            "Use call:f{a:b} maybe",
            "<start_function_call>call:get_time{}<end_function_call>",
        ]);
        // incomplete bare call: pending while streaming, nothing at the end
        pending_then_nothing("ok call:get_weather{location:<|\"|>Par");
    }

    #[test]
    fn tool_code_fence() {
        let t = "Checking.\n```tool_code\nget_weather(location=\"Paris\", days=2)\n```\nDone.";
        let out = run(t, true);
        assert_eq!(out.len(), 1);
        assert!(out[0].loose);
        assert_eq!(
            &t[out[0].span.clone()],
            "```tool_code\nget_weather(location=\"Paris\", days=2)\n```"
        );
        assert_eq!(
            calls(&out[0]),
            vec![(
                "get_weather".into(),
                json!({"location": "Paris", "days": 2})
            )]
        );
        let t = "```tool_code\nget_time()\nget_date()\n```";
        assert_eq!(calls(&run(t, true)[0]).len(), 2);
        no_call_at_end(&[
            "```tool_code\nprint(default_api.get_time())\n```",
            "```tool_code\nimport os\nos.system('x')\n```",
            "```tool_code\nf(1)\n```",
            "```tool_codex\nf()\n```",
            "x ```tool_code\nf()\n```",
        ]);
        pending_then_nothing("```tool_code\nget_time(");
    }

    #[test]
    fn unicode_everywhere() {
        let t = "Ça va ☕ <|tool_call>call:send{text:<|\"|>héllo ☕<|\"|>,to:<|\"|>Zoë<|\"|>}<tool_call|> ✓";
        let out = run(t, true);
        assert_eq!(calls(&out[0])[0].1, json!({"text":"héllo ☕","to":"Zoë"}));
        // truncated at every char boundary: never panics, spans valid
        for (i, _) in t.char_indices() {
            run(&t[..i], false);
            run(&t[..i], true);
        }
    }

    #[test]
    fn deep_nesting_is_malformed() {
        let t = format!(
            "<|tool_call>call:f{{a:{}1{}}}<tool_call|>",
            "[".repeat(500),
            "]".repeat(500)
        );
        let out = run(&t, true);
        assert!(reason(&out[0]).contains("nested too deeply"));
    }

    #[test]
    fn adversarial_megabyte_is_fast() {
        let pieces = [
            "<|tool_call>",
            "<|tool_call>call:f{a:<|\"|>",
            "call:x{a:<|\"|>",
            "<|tool_call>call:f{a:[{b:",
            "<tool_call|>",
            " call:f{",
            "```tool_code\n",
            "<|\"|>",
            "{[",
        ];
        megabyte_of_each(&pieces, run);
        let mixed: String = pieces.iter().cycle().take(200_000).copied().collect();
        run(&mixed, true);
        run(&mixed, false);
    }
}
