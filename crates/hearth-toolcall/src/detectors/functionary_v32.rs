//! `functionary_v32`: MeetKai Functionary v3.2 recipient-prefixed messages.
//!
//! What it looks like (the `meetkai-functionary-medium-v3.2` chat template, llama.cpp's
//! `common_chat_parse_functionary_v3_2` and its tests in `tests/test-chat.cpp`):
//!
//! ```text
//! >>>all
//! Let me check the weather.
//! >>>get_weather
//! {"location": "Paris"}
//! >>>get_time
//! {}
//! ```
//!
//! - The assistant turn is a sequence of `>>>RECIPIENT\n` + content. The recipient `all`
//!   means "plain text to the user"; `python` means raw Python source for the built-in
//!   code interpreter; any other recipient is a function name followed by its JSON
//!   arguments.
//! - The generation prompt already ends with `>>>`, so the first recipient usually comes
//!   without it, right at the start of the output: `get_weather\n{"location": "Paris"}`,
//!   `all\nHello!`, `python\nprint(1)`. That start-only form is accepted only as the very
//!   first thing in the output (after leading whitespace), the call's JSON must follow on
//!   the next line and parse (otherwise the text is left alone). Such founds are strict
//!   like the marked ones: a reply that opens with an identifier line and a JSON object
//!   line is this format (and a loose found would be dropped next to the strict `>>>` calls
//!   that usually follow, or change kind as they stream in). While streaming, the first
//!   word and line are pending until they cannot be a recipient line any more, which is
//!   why the detector has no trigger and always runs.
//! - While streaming, a trailing `>` or `>>` is pending (it may become `>>>`), except the
//!   `>` that closes a tag or special token (`</think>`, `<|im_end|>`).
//! - Each `>>>NAME\n{json}` call is its own construct; the span runs from `>>>` to the end
//!   of the JSON plus any end tokens (`<|eom_id|>`, `<|eot_id|>`). Text may sit directly
//!   before `>>>` ("What's up?>>>get_time").
//! - `>>>all\ntext` is reply text: the recipient line `>>>all\n` (or `all\n` at the start)
//!   is reported as a construct holding no calls, so it leaves the reply while the text
//!   stays (an empty [`FoundKind::Calls`]).
//! - `>>>python\n<code>`: a call named `python` with `{"code": <source>}` (the source runs
//!   to the next `>>>` or the end; while streaming it is pending until one of those).
//! - `>>>NAME\n` followed by anything but a JSON object, or broken JSON, is malformed.
//! - `>>>` not followed directly by an identifier and a newline (Python REPL prompts
//!   `>>> x = 1`, e-mail quoting) is not this format.

use serde_json::json;

use super::shared::end_tokens::{skip_end_tokens, LLAMA_END_TOKENS};
use super::shared::json_finder::{args_end, ws, ArgsEnd, Finder};
use super::shared::json_object::guess_name;
use crate::detector::{Candidate, DetectCtx, Detector, Found, FoundKind, Strictness};
use crate::scan::{self, Scan};

pub struct FunctionaryV32;

const MARK: &str = ">>>";

impl Detector for FunctionaryV32 {
    fn name(&self) -> &str {
        "functionary_v32"
    }
    fn strictness(&self) -> Strictness {
        Strictness::Strict
    }
    fn triggers(&self) -> &[&str] {
        // Always run: the start-only form (`get_time\n{…}`) has no marker, and while
        // streaming its first line must be held back until it is known not to be a call.
        &[]
    }
    fn detect(&self, text: &str, ctx: &DetectCtx<'_>, out: &mut Vec<Found>) {
        let mut marks = Finder::new(MARK);
        let mut cursor = 0;
        if let Some(f) = start_form(text, ctx.eof, &mut marks) {
            let stop = matches!(f.kind, FoundKind::Pending);
            cursor = f.span.end;
            out.push(f);
            if stop {
                return;
            }
        }
        while let Some(m) = marks.next(text, cursor) {
            match recipient_at(text, m, ctx.eof, &mut marks) {
                Step::Skip(next) => cursor = next.max(m + 1),
                Step::Found(f) => {
                    let stop = matches!(f.kind, FoundKind::Pending);
                    cursor = f.span.end.max(m + 1);
                    out.push(f);
                    if stop {
                        return;
                    }
                }
            }
        }
        // While streaming, a trailing `>` or `>>` may become `>>>`; when the run follows a
        // tag or special token (`<|im_end|>`, `</think>>`), its first `>` closes that tag.
        if !ctx.eof {
            let run = text.len() - text.trim_end_matches('>').len();
            let before_run = text.len() - run;
            let n = if closes_tag(text, before_run) {
                run.saturating_sub(1)
            } else {
                run
            }
            .min(2);
            let start = text.len() - n;
            if n > 0 && start >= cursor {
                out.push(Found::pending(start..text.len()));
            }
        }
    }
}

enum Step {
    Skip(usize),
    Found(Found),
}

/// True if the `>` at `at` closes a tag or special token (`</think>`, `<|im_end|>`): a `<`
/// earlier in the same word is not closed yet.
fn closes_tag(text: &str, at: usize) -> bool {
    let before = &text.as_bytes()[..at.min(text.len())];
    // Tags are short: look at most 64 bytes back, so this stays constant-time.
    let window = &before[before.len().saturating_sub(64)..];
    let word = window
        .iter()
        .rposition(|c| c.is_ascii_whitespace())
        .map_or(0, |p| p + 1);
    let word = &window[word..];
    match word.iter().rposition(|&c| c == b'<') {
        Some(lt) => !word[lt..].contains(&b'>'),
        None => false,
    }
}

/// The end of a recipient name (`\w+`) starting at `j`.
fn name_end(b: &[u8], j: usize) -> usize {
    let mut k = j;
    while b
        .get(k)
        .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
    {
        k += 1;
    }
    k
}

/// The byte after a line break at `k` (`\n` or `\r\n`), if there is one.
fn after_newline(b: &[u8], k: usize) -> Option<usize> {
    match b.get(k) {
        Some(b'\n') => Some(k + 1),
        Some(b'\r') if b.get(k + 1) == Some(&b'\n') => Some(k + 2),
        _ => None,
    }
}

/// The first recipient, written without `>>>` at the start of the output.
fn start_form(text: &str, eof: bool, marks: &mut Finder) -> Option<Found> {
    let b = text.as_bytes();
    let lead = ws(text, 0);
    let k = name_end(b, lead);
    if k == lead || b[lead].is_ascii_digit() {
        return None;
    }
    // While streaming, the first word may still turn out to be a recipient line.
    let hold = !eof && (k >= b.len() || (b[k] == b'\r' && k + 1 == b.len()));
    if hold {
        return Some(Found::pending(lead..text.len()));
    }
    let content = after_newline(b, k)?;
    let name = &text[lead..k];
    match name {
        // Plain text follows: only the recipient line is markup (a found without calls).
        "all" => Some(Found::calls(lead..content, Vec::new())),
        "python" => Some(python_call(text, lead, content, eof, marks)),
        _ => {
            if content >= b.len() && !eof {
                return Some(Found::pending(lead..text.len()));
            }
            if b.get(content) != Some(&b'{') {
                return None;
            }
            match scan::balanced_end(text, content, false) {
                Scan::Complete(e) => {
                    let args = scan::parse_args_json(&text[content..e]).ok()?;
                    if !args.is_object() {
                        return None;
                    }
                    let end = skip_end_tokens(text, e, LLAMA_END_TOKENS);
                    Some(Found::call(lead..end, Candidate::new(name, args)))
                }
                Scan::Incomplete if !eof => Some(Found::pending(lead..text.len())),
                _ => None,
            }
        }
    }
}

/// `>>>python\n<code>` (or `python\n<code>` at the start): the code runs to the next
/// `>>>` or the end of the output.
fn python_call(text: &str, start: usize, content: usize, eof: bool, marks: &mut Finder) -> Found {
    let code_end = match marks.next(text, content) {
        Some(n) => n,
        None if !eof => return Found::pending(start..text.len()),
        None => text.len(),
    };
    let mut code = text[content..code_end].trim_end();
    // Trailing end tokens are not code.
    while let Some(rest) = LLAMA_END_TOKENS.iter().find_map(|t| code.strip_suffix(t)) {
        code = rest.trim_end();
    }
    let end = content + code.len();
    let end = skip_end_tokens(text, end, LLAMA_END_TOKENS).max(end);
    Found::call(
        start..end,
        Candidate::new("python", json!({ "code": code })),
    )
}

fn recipient_at(text: &str, m: usize, eof: bool, marks: &mut Finder) -> Step {
    let b = text.as_bytes();
    if closes_tag(text, m) {
        // `</think>>>…`: the first `>` ends the tag; a marker may start right after it.
        return Step::Skip(m + 1);
    }
    let r = m + MARK.len();
    let k = name_end(b, r);
    if k >= b.len() {
        // `>>>` or `>>>get_wea` at the end of a stream.
        return if !eof {
            Step::Found(Found::pending(m..text.len()))
        } else {
            Step::Skip(text.len())
        };
    }
    if k == r || b[r].is_ascii_digit() {
        return Step::Skip(m + 1);
    }
    if !eof && b[k] == b'\r' && k + 1 == b.len() {
        return Step::Found(Found::pending(m..text.len()));
    }
    let Some(content) = after_newline(b, k) else {
        return Step::Skip(m + 1);
    };
    let name = &text[r..k];
    match name {
        "all" => return Step::Found(Found::calls(m..content, Vec::new())),
        "python" => return Step::Found(python_call(text, m, content, eof, marks)),
        _ => {}
    }
    let malformed = |end: usize, reason: String| {
        Step::Found(Found::malformed(
            m..end,
            Some(name.to_string()),
            format!("malformed >>>{name} call: {reason}"),
        ))
    };
    let j = ws(text, content);
    match b.get(j) {
        None if !eof => return Step::Found(Found::pending(m..text.len())),
        None => return malformed(text.len(), "no arguments follow the recipient".into()),
        Some(b'{') => {}
        Some(_) => {
            let end = match marks.next(text, j) {
                Some(n) => n,
                // The text may go on; the malformed span is not known yet.
                None if !eof => return Step::Found(Found::pending(m..text.len())),
                None => text.len(),
            };
            let end = content + text[content..end].trim_end().len();
            return malformed(end.max(k), "the arguments are not a JSON object".into());
        }
    }
    match args_end(text, j, eof) {
        ArgsEnd::Complete(e) => {
            let end = skip_end_tokens(text, e, LLAMA_END_TOKENS);
            match scan::parse_args_json(&text[j..e]) {
                Ok(args) => Step::Found(Found::call(m..end, Candidate::new(name, args))),
                Err(reason) => Step::Found(Found::malformed(
                    m..end,
                    Some(name.to_string()).or_else(|| guess_name(&text[j..e])),
                    format!("malformed >>>{name} call: {reason}"),
                )),
            }
        }
        ArgsEnd::Pending => Step::Found(Found::pending(m..text.len())),
        ArgsEnd::Malformed(end, reason) => malformed(end, reason),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::testing::{detect_any, first_call as call, megabyte_of_each};

    fn run(text: &str, eof: bool) -> Vec<Found> {
        detect_any(&FunctionaryV32, text, eof)
    }

    #[test]
    fn text_then_calls() {
        let t = "all\nHello, world!\nWhat's up?>>>get_weather\n{\"location\": \"Paris\"}\n>>>get_time\n{}";
        let out = run(t, true);
        assert_eq!(out.len(), 3);
        assert_eq!(out[0], Found::calls(0..4, vec![]));
        let out = &out[1..];
        assert_eq!(
            call(&out[0]),
            ("get_weather".into(), json!({"location": "Paris"}))
        );
        assert_eq!(
            &t[out[0].span.clone()],
            ">>>get_weather\n{\"location\": \"Paris\"}"
        );
        assert_eq!(call(&out[1]).0, "get_time");
        assert!(!out[0].loose);
    }

    #[test]
    fn start_only_form() {
        let t = "get_weather\n{\"location\": \"Paris\"} \n";
        let out = run(t, true);
        assert_eq!(out.len(), 1);
        assert!(!out[0].loose);
        assert_eq!(call(&out[0]).1, json!({"location": "Paris"}));
        let t = "get_time\n{}>>>get_date\n{}<|eot_id|>";
        let out = run(t, true);
        assert_eq!(out.len(), 2);
        assert_eq!(out[1].span.end, t.len());
        assert_eq!(
            run("all\nJust text.", true),
            vec![Found::calls(0..4, vec![])]
        );
        assert!(run("Sure\n{not json}", true).is_empty());
    }

    #[test]
    fn python_recipient() {
        let t = "python\n# This is a program:\nprint('hey')";
        let out = run(t, true);
        assert_eq!(
            call(&out[0]),
            (
                "python".into(),
                json!({"code": "# This is a program:\nprint('hey')"})
            )
        );
        assert_eq!(run(t, false), vec![Found::pending(0..t.len())]);
        let t = ">>>python\nprint(1)\n>>>get_time\n{}";
        let out = run(t, true);
        assert_eq!(call(&out[0]).1, json!({"code": "print(1)"}));
        assert!(!out[0].loose);
        assert_eq!(call(&out[1]).0, "get_time");
    }

    #[test]
    fn malformed_and_not_ours() {
        let out = run(">>>get_weather\n{\"location\": Paris}", true);
        assert!(
            matches!(&out[0].kind, FoundKind::Malformed { name: Some(n), .. } if n == "get_weather")
        );
        let t = "ok>>>get_weather\nParis please\n>>>all\nbye";
        let out = run(t, true);
        assert_eq!(out.len(), 2);
        assert_eq!(&t[out[0].span.clone()], ">>>get_weather\nParis please");
        assert_eq!(&t[out[1].span.clone()], ">>>all\n");
        assert!(run(">>> import os\n>>> x = 1", true).is_empty());
    }

    #[test]
    fn streaming() {
        let all = Found::calls(0..4, vec![]);
        assert_eq!(
            run("all\nHi>>>get_wea", false),
            vec![all.clone(), Found::pending(6..16)]
        );
        assert_eq!(
            run("all\nHi>>>", false),
            vec![all.clone(), Found::pending(6..9)]
        );
        let t = "all\nHi>>>get_weather\n{\"loc";
        assert_eq!(run(t, false), vec![all, Found::pending(6..t.len())]);
        assert!(matches!(run(t, true)[1].kind, FoundKind::Malformed { .. }));
        assert_eq!(run("get_time\n{", false), vec![Found::pending(0..10)]);
    }

    #[test]
    fn trailing_gt_while_streaming() {
        assert_eq!(run("Hello there >>", false), vec![Found::pending(12..14)]);
        assert!(run("Hello there >>", true).is_empty());
        assert!(run("Done.<|im_end|>", false).is_empty());
        assert!(run("x </s>", false).is_empty());
        assert_eq!(run("a</think>>", false), vec![Found::pending(9..10)]);
        assert_eq!(run("a</think>>>", false), vec![Found::pending(9..11)]);
        assert!(run("a</think>>>get_time\n{}", true).is_empty());
        assert_eq!(run("a</think>>>>get_time\n{}", true)[0].span, 9..23);
    }

    #[test]
    fn adversarial_input_is_fast() {
        megabyte_of_each(
            &[">>>", ">>>a\n", ">>>a\n{", ">>>python\n", ">>>a\n{}", "\n{"],
            run,
        );
    }
}
