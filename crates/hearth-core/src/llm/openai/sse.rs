//! The stream a completion comes back in: server-sent events (`text/event-stream`) whose
//! `data:` fields carry OpenAI-style completion chunks (`choices[0].text`), or chat chunks
//! (`choices[0].delta`: `content`, and `tool_calls` pieces a server parsed natively, which
//! [`Calls`] gathers), as llama-cpp-python and llama.cpp's `llama-server` write them. A
//! delta's `reasoning_content` is never taken.
//!
//! [`Decoder`] takes the body's bytes as they arrive, in pieces of any size, and gives
//! [`Event`]s: each chunk's text with the reason the model stopped and the figures a server
//! adds (`usage`, llama-server's `timings`), `[DONE]`, or an error the server reports inside
//! the stream (an `event: error` event, llama-server's `error:` field, or a `data:` object
//! holding `error`). Lines end with `\n` (a `\r` before it is dropped); a field is
//! `name: value` (the space is optional); an event ends at a blank line; comment lines
//! (`: ping - …`, sse-starlette's keep-alive) are skipped.
//!
//! Unlike a browser, the decoder does not ignore fields it does not know: no server hearth
//! talks to writes any, and a body that is no stream of events (a proxy's error page, a JSON
//! body) is then caught at its first line, named in the error. Anything that is not a chunk
//! is garbage, said as what was sent (a snippet): the engine gives up on the request.
//!
//! Hand-written rather than a crate's: the event-stream crates (eventsource-stream and its
//! kin) adapt async byte streams, and a request here is blocking reads on a thread of its
//! own; the format is the few rules above.
//!
//! The corpus is `tests/corpus/openai_sse.jsonl`, one case per line: `id`; `source` (where
//! the stream comes from: recorded from llama-cpp-python 0.3.36, or written in a server's
//! shape); `stream`, the body as sent; `expect`: `text` (every chunk's text joined), `finish`
//! (the last `finish_reason`, or null), `done` (`[DONE]` came), `error` (a substring of the
//! error, reported or found, or null) and optionally `usage` and `calls` (the native calls:
//! `name` and `arguments` text; none when absent). Negatives (garbage, errors, a stream cut
//! short) are in the same file. Each case is decoded whole and split at every byte.

use serde_json::Value;

/// The longest line the decoder holds while waiting for its end (a chunk is ~300 bytes).
pub(crate) const MAX_LINE: usize = 1 << 20;

/// What one event of the stream says.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Event {
    /// A piece of the completion.
    Chunk(Chunk),
    /// `data: [DONE]`: the stream is complete.
    Done,
    /// The server reports an error in the stream (its message, or a snippet of it).
    Error(String),
}

/// One completion chunk (`choices[0].text`), or one of a chat completion
/// (`choices[0].delta`: its `content`, and pieces of the calls the server parsed natively).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Chunk {
    /// What the model wrote (may be empty: the last chunk often is).
    pub text: String,
    /// Pieces of native calls (a chat stream's `delta.tool_calls`).
    pub calls: Vec<CallPiece>,
    /// `finish_reason`: `stop` (end of turn or a stop string), `length` (max tokens), …
    pub finish: Option<String>,
    pub usage: Usage,
}

/// A piece of a native call as a chat stream sends it: the call's `index`, its name in the
/// first piece, its arguments' JSON text a fragment at a time.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct CallPiece {
    pub index: usize,
    pub name: Option<String>,
    pub arguments: String,
}

/// Native calls gathered from their pieces, in index order: (name, arguments' JSON text).
/// A call's name is its first piece's (llama-cpp-python repeats it in every piece; OpenAI
/// sends it once).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Calls(pub Vec<(String, String)>);

impl Calls {
    pub fn add(&mut self, pieces: Vec<CallPiece>) {
        for p in pieces {
            if self.0.len() <= p.index {
                self.0.resize(p.index + 1, Default::default());
            }
            let call = &mut self.0[p.index];
            if let (true, Some(name)) = (call.0.is_empty(), p.name) {
                call.0 = name;
            }
            call.1.push_str(&p.arguments);
        }
    }
}

/// The figures a server may add to a chunk (the last one, usually).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Usage {
    pub prompt_tokens: Option<usize>,
    pub completion_tokens: Option<usize>,
    /// Prompt tokens the server had cached (not evaluated again).
    pub cached_tokens: Option<usize>,
    /// The server's time evaluating the prompt.
    pub prompt_ms: Option<f64>,
}

impl Usage {
    fn is_empty(&self) -> bool {
        *self == Usage::default()
    }
}

/// Bytes of an event stream in, [`Event`]s out.
#[derive(Debug, Default)]
pub(crate) struct Decoder {
    /// The line being received (bytes: a piece may end inside a character).
    line: Vec<u8>,
    /// The data of the event being received (its `data:` lines joined with `\n`).
    data: Option<String>,
    /// Its `event:` type.
    event: Option<String>,
}

impl Decoder {
    pub fn new() -> Self {
        Self::default()
    }

    /// The events `bytes` completes; an error names the garbage.
    pub fn push(&mut self, bytes: &[u8]) -> Result<Vec<Event>, String> {
        let mut out = Vec::new();
        let mut rest = bytes;
        while let Some(end) = rest.iter().position(|&b| b == b'\n') {
            self.line.extend_from_slice(&rest[..end]);
            rest = &rest[end + 1..];
            let line = std::mem::take(&mut self.line);
            self.on_line(&line, &mut out)?;
        }
        self.line.extend_from_slice(rest);
        if self.line.len() > MAX_LINE {
            return Err(format!(
                "sent a line of over {} KiB without an end: {}",
                MAX_LINE / 1024,
                snippet(&String::from_utf8_lossy(&self.line))
            ));
        }
        Ok(out)
    }

    /// The body has ended: a last line without its newline and a last event without its
    /// blank line still count.
    pub fn finish(&mut self) -> Result<Vec<Event>, String> {
        let mut out = Vec::new();
        let line = std::mem::take(&mut self.line);
        if !line.is_empty() {
            self.on_line(&line, &mut out)?;
        }
        self.dispatch(&mut out)?;
        Ok(out)
    }

    fn on_line(&mut self, raw: &[u8], out: &mut Vec<Event>) -> Result<(), String> {
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        let line = std::str::from_utf8(raw).map_err(|_| {
            format!(
                "sent a line that is not UTF-8: {}",
                snippet(&String::from_utf8_lossy(raw))
            )
        })?;
        if line.is_empty() {
            return self.dispatch(out);
        }
        if line.starts_with(':') {
            return Ok(());
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        match field {
            "data" => match &mut self.data {
                Some(d) => {
                    d.push('\n');
                    d.push_str(value);
                }
                None => self.data = Some(value.to_string()),
            },
            "event" => self.event = Some(value.to_string()),
            // llama-server's error inside a stream
            "error" => out.push(Event::Error(error_text(value))),
            "id" | "retry" => {}
            _ => {
                return Err(format!(
                    "sent {}, not a stream of events",
                    snippet(line).trim_end()
                ))
            }
        }
        Ok(())
    }

    /// The event received so far ends (a blank line).
    fn dispatch(&mut self, out: &mut Vec<Event>) -> Result<(), String> {
        let event = self.event.take();
        let Some(data) = self.data.take() else {
            return Ok(());
        };
        if event.as_deref() == Some("error") {
            out.push(Event::Error(error_text(&data)));
            return Ok(());
        }
        out.push(interpret(&data)?);
        Ok(())
    }
}

/// One event's data: `[DONE]`, an error object or a completion chunk.
fn interpret(data: &str) -> Result<Event, String> {
    let data = data.trim();
    if data == "[DONE]" {
        return Ok(Event::Done);
    }
    let v: Value = serde_json::from_str(data)
        .map_err(|_| format!("sent data that is not JSON: {}", snippet(data)))?;
    if let Some(e) = v.get("error") {
        return Ok(Event::Error(error_message(e)));
    }
    let choices = v
        .get("choices")
        .and_then(Value::as_array)
        .ok_or_else(|| format!("sent a chunk without choices: {}", snippet(data)))?;
    let usage = usage_of(&v);
    let Some(first) = choices.first() else {
        // OpenAI's last chunk under stream_options.include_usage: the figures only
        return Ok(Event::Chunk(Chunk {
            usage,
            ..Chunk::default()
        }));
    };
    let (text, calls) = match (first.get("text"), first.get("delta")) {
        (Some(Value::String(t)), _) => (t.clone(), Vec::new()),
        (None, Some(delta)) => chat_delta(delta, data)?,
        _ => {
            return Err(format!(
                "sent a chunk without choices[0].text or choices[0].delta: {}",
                snippet(data)
            ))
        }
    };
    let finish = first
        .get("finish_reason")
        .and_then(Value::as_str)
        .map(str::to_string);
    Ok(Event::Chunk(Chunk {
        text,
        calls,
        finish,
        usage,
    }))
}

/// A chat chunk's `delta`: its `content` (a `reasoning_content` is never taken: no thought
/// is spoken) and its `tool_calls` pieces.
fn chat_delta(delta: &Value, data: &str) -> Result<(String, Vec<CallPiece>), String> {
    let bad = |what: &str| format!("sent a chat chunk whose {what}: {}", snippet(data));
    let text = match delta.get("content") {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(t)) => t.clone(),
        Some(_) => return Err(bad("content is not text")),
    };
    let mut calls = Vec::new();
    let pieces = match delta.get("tool_calls") {
        None | Some(Value::Null) => &[][..],
        Some(Value::Array(a)) => a.as_slice(),
        Some(_) => return Err(bad("tool_calls is not a list")),
    };
    for (at, piece) in pieces.iter().enumerate() {
        let index = match piece.get("index") {
            None => at,
            Some(i) => i
                .as_u64()
                .and_then(|i| usize::try_from(i).ok())
                .ok_or_else(|| bad("call index is not a number"))?,
        };
        let function = piece.get("function");
        let text_of = |k: &str| -> Result<Option<String>, String> {
            match function.and_then(|f| f.get(k)) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.clone())),
                // a server that sends the arguments as an object, not as JSON text
                Some(v @ Value::Object(_)) if k == "arguments" => Ok(Some(v.to_string())),
                Some(_) => Err(bad(&format!("call {k} is not text"))),
            }
        };
        calls.push(CallPiece {
            index,
            name: text_of("name")?,
            arguments: text_of("arguments")?.unwrap_or_default(),
        });
    }
    Ok((text, calls))
}

/// The figures of a chunk: OpenAI's `usage`, llama-server's `timings`.
fn usage_of(v: &Value) -> Usage {
    let n = |v: Option<&Value>| {
        v.and_then(Value::as_u64)
            .and_then(|n| usize::try_from(n).ok())
    };
    let usage = v.get("usage");
    let timings = v.get("timings");
    fn at<'v>(v: Option<&'v Value>, k: &str) -> Option<&'v Value> {
        v.and_then(|v| v.get(k))
    }
    let cache_n = n(at(timings, "cache_n"));
    let prompt_n = n(at(timings, "prompt_n"));
    let u = Usage {
        prompt_tokens: n(at(usage, "prompt_tokens")).or(match (prompt_n, cache_n) {
            (Some(p), Some(c)) => Some(p + c),
            _ => None,
        }),
        completion_tokens: n(at(usage, "completion_tokens")),
        cached_tokens: n(at(at(usage, "prompt_tokens_details"), "cached_tokens")).or(cache_n),
        prompt_ms: at(timings, "prompt_ms").and_then(Value::as_f64),
    };
    if u.is_empty() {
        Usage::default()
    } else {
        u
    }
}

/// The message of an error a server sent (JSON with `message` somewhere, or text).
pub(crate) fn error_text(text: &str) -> String {
    match serde_json::from_str::<Value>(text.trim()) {
        Ok(v) => error_message(v.get("error").unwrap_or(&v)),
        Err(_) => snippet(text.trim()),
    }
}

fn error_message(e: &Value) -> String {
    match e {
        Value::String(s) => snippet(s),
        _ => e
            .get("message")
            .and_then(Value::as_str)
            .map(snippet)
            .unwrap_or_else(|| snippet(&e.to_string())),
    }
}

/// At most 160 characters of `s`, for an error message.
pub(crate) fn snippet(s: &str) -> String {
    const MAX: usize = 160;
    match s.char_indices().nth(MAX) {
        Some((at, _)) => format!("{:?}…", &s[..at]),
        None => format!("{s:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a stream came to, read as the engine reads it: up to `[DONE]`, an error, or
    /// garbage.
    #[derive(Debug, Default, PartialEq)]
    struct Outcome {
        text: String,
        finish: Option<String>,
        done: bool,
        error: Option<String>,
        usage: Usage,
        /// Native calls, their pieces joined.
        calls: Calls,
    }

    fn read(pieces: &[&[u8]]) -> Outcome {
        let mut d = Decoder::new();
        let mut o = Outcome::default();
        let take = |events: Result<Vec<Event>, String>, o: &mut Outcome| -> bool {
            match events {
                Err(e) => {
                    o.error = Some(e);
                    true
                }
                Ok(events) => {
                    for e in events {
                        match e {
                            Event::Chunk(c) => {
                                o.text.push_str(&c.text);
                                o.calls.add(c.calls);
                                if c.finish.is_some() {
                                    o.finish = c.finish;
                                }
                                if !c.usage.is_empty() {
                                    o.usage = c.usage;
                                }
                            }
                            Event::Done => {
                                o.done = true;
                                return true;
                            }
                            Event::Error(e) => {
                                o.error = Some(e);
                                return true;
                            }
                        }
                    }
                    false
                }
            }
        };
        for p in pieces {
            if take(d.push(p), &mut o) {
                return o;
            }
        }
        take(d.finish(), &mut o);
        o
    }

    fn corpus() -> Vec<Value> {
        include_str!("../../../../../tests/corpus/openai_sse.jsonl")
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    fn check(case: &Value, got: &Outcome, how: &str) -> Option<String> {
        let id = case["id"].as_str().unwrap();
        let want = &case["expect"];
        let mut bad = Vec::new();
        if want["text"].as_str() != Some(got.text.as_str()) {
            bad.push(format!("text {:?}, want {}", got.text, want["text"]));
        }
        if want["finish"].as_str() != got.finish.as_deref() {
            bad.push(format!("finish {:?}, want {}", got.finish, want["finish"]));
        }
        if want["done"].as_bool() != Some(got.done) {
            bad.push(format!("done {}, want {}", got.done, want["done"]));
        }
        match (want["error"].as_str(), &got.error) {
            (None, None) => {}
            (Some(w), Some(g)) if g.contains(w) => {}
            (w, g) => bad.push(format!("error {g:?}, want one containing {w:?}")),
        }
        let calls: Vec<(String, String)> = want
            .get("calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|c| {
                let s = |k: &str| c[k].as_str().unwrap_or_default().to_string();
                (s("name"), s("arguments"))
            })
            .collect();
        if calls != got.calls.0 {
            bad.push(format!("calls {:?}, want {calls:?}", got.calls.0));
        }
        if let Some(u) = want.get("usage") {
            let n = |k: &str| u.get(k).and_then(Value::as_u64).map(|n| n as usize);
            let expected = Usage {
                prompt_tokens: n("prompt_tokens"),
                completion_tokens: n("completion_tokens"),
                cached_tokens: n("cached_tokens"),
                prompt_ms: u.get("prompt_ms").and_then(Value::as_f64),
            };
            if expected != got.usage {
                bad.push(format!("usage {:?}, want {expected:?}", got.usage));
            }
        }
        (!bad.is_empty()).then(|| format!("{id} ({how}): {}", bad.join("; ")))
    }

    #[test]
    fn the_corpus_decodes_whole_and_split_at_every_byte() {
        let cases = corpus();
        assert!(cases.len() >= 20, "{} cases", cases.len());
        let negatives = cases
            .iter()
            .filter(|c| c["expect"]["done"] == Value::Bool(false))
            .count();
        assert!(negatives >= 8, "only {negatives} negatives");
        let mut failures = Vec::new();
        for case in &cases {
            let bytes = case["stream"].as_str().unwrap().as_bytes();
            failures.extend(check(case, &read(&[bytes]), "whole"));
            for at in 1..bytes.len() {
                let (a, b) = bytes.split_at(at);
                if let Some(f) = check(case, &read(&[a, b]), &format!("split at {at}")) {
                    failures.push(f);
                    break;
                }
            }
            let bytewise: Vec<&[u8]> = bytes.chunks(1).collect();
            failures.extend(check(case, &read(&bytewise), "byte by byte"));
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }

    #[test]
    fn garbage_that_is_no_text_is_named() {
        let o = read(&[b"data: {\"choices\":[{\"text\":\"a\xff\"}]}\n\n"]);
        assert!(o.error.unwrap().contains("not UTF-8"));
        let long = vec![b'x'; MAX_LINE + 1];
        let o = read(&[b"data: ", &long]);
        assert!(o.error.unwrap().contains("without an end"));
        // a character split between two reads is whole once its line is
        let o = read(&[
            b"data: {\"choices\":[{\"text\":\"\xc2",
            b"\xb0\",\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n",
        ]);
        assert_eq!((o.text.as_str(), o.done), ("°", true), "{o:?}");
    }

    #[test]
    fn error_messages_come_out_of_any_shape() {
        assert_eq!(error_text(r#"{"error":{"message":"boom"}}"#), "\"boom\"");
        assert_eq!(error_text(r#"{"message":"bang","code":500}"#), "\"bang\"");
        assert_eq!(error_text("plain words"), "\"plain words\"");
        assert_eq!(error_text(r#"{"error":"short"}"#), "\"short\"");
        let long = "é".repeat(400);
        assert!(snippet(&long).ends_with('…') && snippet(&long).chars().count() < 170);
    }
}
