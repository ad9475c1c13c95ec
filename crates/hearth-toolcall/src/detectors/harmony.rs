//! `harmony`: OpenAI gpt-oss "Harmony" function calls.
//!
//! # Wire format
//!
//! gpt-oss writes a sequence of messages. Reasoning goes to the `analysis` channel, the
//! answer to `final`, and a function call is a message on the `commentary` channel
//! addressed to the function with `to=functions.NAME`, its JSON arguments as the body and
//! `<|call|>` as the terminator:
//!
//! ~~~text
//! <|channel|>analysis<|message|>Need the weather.<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"location":"Tokyo"}<|call|>
//! ~~~
//!
//! (The prompt ends with `<|start|>assistant`, so the first message of an output has no
//! `<|start|>`.) The header's parts vary between checkpoints and renderers:
//! - the recipient may come before the channel, in the role position:
//!   `<|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>`,
//!   or at the very start of the output (` to=functions.x<|channel|>commentary …`); outside
//!   a `<|start|>`/`<|channel|>` header only a `to=functions.…` recipient is recognised
//!   (it is also a trigger, so streaming holds it back from its first byte);
//! - `<|constrain|>json` may be written as a bare ` json`, or be missing;
//! - the message may end with `<|end|>` instead of `<|call|>`, or not be terminated at all
//!   at the end of the output (accepted only when the output is complete);
//! - calls may sit on the `analysis` channel too.
//!
//! # What this detector reports
//!
//! Each call message is one `Found` whose span is its header (including `<|start|>assistant`
//! when present), body and terminator. Analysis and final messages are not calls: the
//! framework's think handling and token stripping deal with them.
//!
//! A header is one line of words and the header tokens only; it never spans a message
//! terminator or other markup. The body runs to the message's terminator (or the next
//! message's `<|start|>` / `<|channel|>`), so spans do not move as a stream grows.
//!
//! Harmony's built-in tools (`to=browser.search`, `browser.open`, `browser.find`,
//! `to=python`, `to=container.exec`, …) are not function calls: they are reported
//! `Malformed` with a reason saying they are built-in tools not offered as functions. Any
//! other recipient outside the `functions.` namespace is `Malformed` as well. Bad JSON
//! arguments (or text after them) are `Malformed`; an unfinished call message (or header)
//! while streaming is `Pending`. A message from another role (a tool's output the model
//! echoed, `<|start|>functions.x to=assistant…`) is not a call and is left alone.
//!
//! Sources: the OpenAI Harmony response-format guide and gpt-oss chat template, llama.cpp
//! `common/chat.cpp` (`common_chat_parse_gpt_oss`: recipient before or after the channel,
//! optional `<|constrain|>`), vLLM's and SGLang's gpt-oss tool parsers.

use super::shared::token_blocks::settle;
use crate::detector::{Candidate, DetectCtx, Detector, Found, Strictness};
use crate::scan;

pub struct Harmony;

const START: &str = "<|start|>";
const CHANNEL: &str = "<|channel|>";
const MESSAGE: &str = "<|message|>";
const CALL: &str = "<|call|>";
const END: &str = "<|end|>";
const RETURN: &str = "<|return|>";

/// A recipient written outside a `<|start|>` / `<|channel|>` header only counts when it
/// names a function: this is also a trigger, so streaming holds it back from its first byte.
const FUNCTIONS_TO: &str = "to=functions.";

/// Longest header we accept (role, recipient, channel, content type).
const HEADER_MAX: usize = 512;

impl Detector for Harmony {
    fn name(&self) -> &str {
        "harmony"
    }
    fn strictness(&self) -> Strictness {
        Strictness::Strict
    }
    fn triggers(&self) -> &[&str] {
        &[MESSAGE, CHANNEL, START, FUNCTIONS_TO]
    }
    fn detect(&self, text: &str, ctx: &DetectCtx<'_>, out: &mut Vec<Found>) {
        let mut pos = 0;
        while pos < text.len() {
            let Some(m) = scan::find_from(text, MESSAGE, pos) else {
                if !ctx.eof {
                    let hs = header_start(text, pos, text.len()).filter(|&hs| {
                        text.len() - hs <= HEADER_MAX
                            && header_ok(text.get(hs..).unwrap_or(""), true)
                    });
                    if let Some(hs) = hs {
                        let h = text.get(hs..).unwrap_or("");
                        let hdr = parse_header(h);
                        // A role still being written may become `assistant`.
                        let maybe_assistant = |r: &str| {
                            r == "assistant" || (h.ends_with(r) && "assistant".starts_with(r))
                        };
                        if hdr.role.is_none_or(maybe_assistant) {
                            out.push(Found::pending(hs..text.len()));
                        }
                    }
                }
                break;
            };
            let body = m + MESSAGE.len();
            let hs = header_start(text, pos, m).filter(|&hs| {
                m - hs <= HEADER_MAX && header_ok(text.get(hs..m).unwrap_or(""), false)
            });
            let Some(hs) = hs else {
                // A stray `<|message|>`: not ours.
                pos = body;
                continue;
            };
            let hdr = parse_header(text.get(hs..m).unwrap_or(""));
            let recipient = match hdr.recipient {
                Some(r) if hdr.role.is_none_or(|role| role == "assistant") => r,
                _ => {
                    // An ordinary message (analysis, final, a tool's output): skip its body.
                    pos = match body_end(text, body) {
                        Some((_, end)) => end,
                        None => text.len(),
                    };
                    continue;
                }
            };
            let found = call_message(text, hs, body, recipient, ctx.eof);
            pos = found.span.end.max(body);
            out.push(settle(found, text.len(), ctx.eof));
        }
    }
}

/// Where the header of a message whose `<|message|>` is at `m` starts, looking only at
/// `text[from..m]` (text after the previous message, and after any stray terminator in
/// it): at its `<|start|>`, else at its
/// `<|channel|>` (moved back over a `to=functions.…` written just before it), else at a
/// `to=functions.…` that opens the region.
fn header_start(text: &str, from: usize, m: usize) -> Option<usize> {
    let region = text.get(from..m)?;
    // A header never spans a message terminator: look only after the last one.
    let cut = [END, CALL, RETURN]
        .iter()
        .filter_map(|t| region.rfind(t).map(|p| p + t.len()))
        .max()
        .unwrap_or(0);
    let from = from + cut;
    let region = text.get(from..m)?;
    if let Some(s) = region.rfind(START) {
        return Some(from + s);
    }
    let lead = region.len() - region.trim_start().len();
    if let Some(c) = region.rfind(CHANNEL) {
        let before = region.get(..c)?.trim_end();
        let word_start = before
            .rfind(|ch: char| ch.is_whitespace() || ch == '>')
            .map(|p| p + 1)
            .unwrap_or(0);
        if before
            .get(word_start..)
            .is_some_and(|w| w.starts_with(FUNCTIONS_TO))
        {
            return Some(from + word_start);
        }
        return Some(from + c);
    }
    if region.trim_start().starts_with(FUNCTIONS_TO) {
        return Some(from + lead);
    }
    None
}

const CONSTRAIN: &str = "<|constrain|>";

/// A header is one line of words and the header tokens (`<|start|>`, `<|channel|>`,
/// `<|constrain|>`); any other markup in it means it is not a header. `at_end`: the text
/// may end inside one of those tokens (or `<|message|>`) while streaming.
fn header_ok(h: &str, at_end: bool) -> bool {
    if h.contains('\n') {
        return false;
    }
    let mut at = 0;
    while let Some(p) = h.get(at..).and_then(|r| r.find('<')).map(|p| p + at) {
        let rest = &h[p..];
        if let Some(t) = [START, CHANNEL, CONSTRAIN]
            .iter()
            .find(|t| rest.starts_with(**t))
        {
            at = p + t.len();
            continue;
        }
        return at_end
            && [START, CHANNEL, CONSTRAIN, MESSAGE]
                .iter()
                .any(|t| t.starts_with(rest));
    }
    true
}

#[derive(Debug, Default)]
struct Header<'a> {
    role: Option<&'a str>,
    recipient: Option<&'a str>,
}

fn word(s: &str) -> &str {
    let end = s
        .find(|c: char| c.is_whitespace() || c == '<')
        .unwrap_or(s.len());
    &s[..end]
}

fn parse_header(h: &str) -> Header<'_> {
    let mut out = Header::default();
    if let Some(r) = h.strip_prefix(START) {
        let role = word(r);
        if !role.is_empty() && !role.starts_with("to=") {
            out.role = Some(role);
        }
    }
    // `to=` at the start or after whitespace / a token.
    let mut at = 0;
    while let Some(p) = h.get(at..).and_then(|r| r.find("to=")).map(|p| p + at) {
        let ok = p == 0 || h[..p].ends_with(|c: char| c.is_whitespace() || c == '>');
        if ok {
            let r = word(&h[p + 3..]);
            if !r.is_empty() {
                out.recipient = Some(r);
            }
            break;
        }
        at = p + 3;
    }
    out
}

/// The end of a message body starting at `from`: `(body end, message end)`, where the
/// message end includes an `<|end|>` / `<|call|>` / `<|return|>` terminator, and stops
/// before a `<|start|>` / `<|channel|>` that begins the next message.
fn body_end(text: &str, from: usize) -> Option<(usize, usize)> {
    let mut at = from;
    while let Some(p) = scan::find_from(text, "<|", at) {
        let rest = text.get(p..).unwrap_or("");
        for t in [CALL, END, RETURN] {
            if rest.starts_with(t) {
                return Some((p, p + t.len()));
            }
        }
        if rest.starts_with(START) || rest.starts_with(CHANNEL) {
            return Some((p, p));
        }
        at = p + 2;
    }
    None
}

/// Harmony's built-in tool namespaces.
fn builtin(recipient: &str) -> bool {
    let ns = recipient.split('.').next().unwrap_or(recipient);
    matches!(ns, "browser" | "python" | "container" | "web" | "image_gen")
}

/// One message addressed to `recipient`, header at `hs`, body at `body`.
fn call_message(text: &str, hs: usize, body: usize, recipient: &str, eof: bool) -> Found {
    let len = text.len();
    let to_end = |reason: String, name: Option<String>| {
        // Malformed through the message's terminator (or the end of the text).
        match body_end(text, body) {
            Some((_, e)) => Found::malformed(hs..e.max(body), name, reason),
            None if !eof => Found::pending(hs..len),
            None => Found::malformed(hs..len, name, reason),
        }
    };
    let Some(name) = recipient.strip_prefix("functions.") else {
        let reason = if builtin(recipient) {
            format!(
                "`{recipient}` is a Harmony built-in tool, not a function offered to the model \
                 (function calls are addressed `to=functions.NAME`)"
            )
        } else {
            format!(
                "recipient `{recipient}` is not a function (Harmony function calls are addressed \
                 `to=functions.NAME`)"
            )
        };
        return to_end(reason, Some(recipient.to_string()));
    };
    if !scan::is_ident(name) {
        return to_end(
            format!("invalid function name `{name}` in `to={recipient}`"),
            Some(name.to_string()),
        );
    }
    let named = Some(name.to_string());
    // The body runs to the message's terminator (or the next message): cutting there, not
    // at a balanced bracket, keeps the span the same however much of the output has arrived.
    let (be, me) = match body_end(text, body) {
        Some(x) => x,
        None if !eof => return Found::pending(hs..len),
        // Unterminated at the end of the output: the rest is the body.
        None => (len, len),
    };
    let raw = text.get(body..be).unwrap_or("");
    match scan::parse_args_json(raw) {
        Ok(args) => Found::call(hs..me, Candidate::new(name, args)),
        Err(e) => Found::malformed(
            hs..me.max(body),
            named,
            format!("Harmony call `{name}`: {e}"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detector::FoundKind;
    use crate::detectors::shared::token_blocks::tests::{calls, reason, run};
    use serde_json::json;

    const FULL: &str = "<|channel|>analysis<|message|>User wants weather in Tokyo. Use get_weather.<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"location\":\"Tokyo\"}<|call|>";

    #[test]
    fn canonical_call_after_analysis() {
        let out = run(&Harmony, FULL, true);
        assert_eq!(out.len(), 1);
        assert_eq!(
            calls(&out[0]),
            vec![("get_weather".into(), json!({"location": "Tokyo"}))]
        );
        assert_eq!(
            &FULL[out[0].span.clone()],
            &FULL[FULL.find("<|start|>").unwrap()..]
        );
    }

    #[test]
    fn header_variants() {
        for t in [
            "<|start|>assistant to=functions.get_time<|channel|>commentary json<|message|>{}<|call|>",
            "<|channel|>commentary to=functions.get_time<|message|>{}<|call|>",
            "<|channel|>commentary to=functions.get_time <|constrain|>json<|message|>{}<|end|>",
            " to=functions.get_time<|channel|>commentary json<|message|>{}<|call|>",
            "<|start|>assistant<|channel|>analysis to=functions.get_time code<|message|>{}<|call|>",
        ] {
            let out = run(&Harmony, t, true);
            assert_eq!(out.len(), 1, "{t}");
            assert_eq!(calls(&out[0]), vec![("get_time".into(), json!({}))], "{t}");
            assert_eq!(t[..out[0].span.start].trim(), "", "{t}");
            assert_eq!(out[0].span.end, t.len(), "{t}");
        }
    }

    #[test]
    fn two_calls_and_final() {
        let t = "<|start|>assistant<|channel|>commentary to=functions.set_light <|constrain|>json<|message|>{\"room\":\"kitchen\",\"on\":true}<|call|><|start|>assistant<|channel|>commentary to=functions.get_time <|constrain|>json<|message|>{}<|call|><|start|>assistant<|channel|>final<|message|>Done.<|return|>";
        let out = run(&Harmony, t, true);
        assert_eq!(out.len(), 2);
        assert_eq!(
            calls(&out[0]),
            vec![("set_light".into(), json!({"room": "kitchen", "on": true}))]
        );
        assert_eq!(calls(&out[1]), vec![("get_time".into(), json!({}))]);
        assert!(t[out[1].span.end..].starts_with("<|start|>assistant<|channel|>final"));
    }

    #[test]
    fn unterminated_at_end() {
        let t = "<|channel|>commentary to=functions.get_date <|constrain|>json<|message|>{}";
        assert_eq!(
            calls(&run(&Harmony, t, true)[0]),
            vec![("get_date".into(), json!({}))]
        );
        assert_eq!(run(&Harmony, t, false)[0].kind, FoundKind::Pending);
    }

    #[test]
    fn builtin_tools_are_malformed() {
        for (t, r) in [
            ("<|start|>assistant<|channel|>analysis to=browser.search code<|message|>{\"query\":\"tokyo weather\"}<|call|>", "browser.search"),
            ("<|channel|>analysis to=python code<|message|>print(1+1)<|call|>", "python"),
            ("<|channel|>commentary to=container.exec <|constrain|>json<|message|>{\"cmd\":[\"ls\"]}<|call|>", "container.exec"),
        ] {
            let out = run(&Harmony, t, true);
            assert_eq!(out.len(), 1, "{t}");
            let why = reason(&out[0]);
            assert!(why.contains("built-in") && why.contains(r), "{why}");
            assert_eq!(out[0].span, 0..t.len());
        }
        let out = run(
            &Harmony,
            "<|channel|>commentary to=get_weather<|message|>{}<|call|>",
            true,
        );
        assert!(reason(&out[0]).contains("not a function"));
    }

    #[test]
    fn malformed_json() {
        let t = "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"location\":Tokyo}<|call|>More.";
        let out = run(&Harmony, t, true);
        assert!(reason(&out[0]).contains("malformed JSON"));
        assert_eq!(&t[out[0].span.end..], "More.");
        let t = "<|channel|>commentary to=functions.get_weather<|message|>{\"location\":\"Tokyo\"} please<|call|>";
        assert!(reason(&run(&Harmony, t, true)[0]).contains("trailing characters"));
    }

    #[test]
    fn non_calls_produce_nothing() {
        for t in [
            "<|channel|>analysis<|message|>Thinking about functions.<|end|><|start|>assistant<|channel|>final<|message|>Hello!<|return|>",
            "<|start|>functions.get_weather to=assistant<|channel|>commentary<|message|>{\"temp\":20}<|end|>",
            "Just text that says to=functions.get_time in passing.",
            "a <|message|> b",
        ] {
            assert!(run(&Harmony, t, true).is_empty(), "{t}");
        }
    }

    #[test]
    fn streaming_prefixes_are_pending() {
        let start = FULL.find("<|start|>").unwrap();
        for cut in start + START.len()..FULL.len() {
            let out = run(&Harmony, &FULL[..cut], false);
            assert_eq!(out.len(), 1, "{:?}", &FULL[..cut]);
            assert_eq!(out[0].kind, FoundKind::Pending, "{:?}", &FULL[..cut]);
            assert_eq!(out[0].span, start..cut);
        }
        let out = run(&Harmony, FULL, false);
        assert!(matches!(out[0].kind, FoundKind::Calls(_)));
    }

    #[test]
    fn adversarial_input_is_fast() {
        for p in [
            "<|message|>",
            "<|channel|>commentary to=functions.a<|message|>{",
            "<|start|>assistant<|channel|>commentary to=functions.a<|message|>{]<|call|>",
            "<|start|>",
            "<|channel|>",
            "to=functions.x ",
            "<|",
        ] {
            let t = p.repeat(1_000_000 / p.len());
            let _ = run(&Harmony, &t, true);
            let _ = run(&Harmony, &t, false);
        }
    }
}
