//! The incremental parser: token chunks in, reply text and calls out as soon as they are
//! certain.
//!
//! After every chunk the whole buffer is analysed with `eof = false`
//! ([`Parser::analyze`](super::Parser)): that says which prefix is settled: no call, think
//! block or special token can still start or change inside it. Reply text and calls from
//! the settled prefix are emitted; at [`StreamParser::finish`] the buffer is analysed as a
//! complete output and whatever was held back is emitted. Because both use the same
//! analysis, the concatenated stream equals the one-shot parse (a property test checks
//! this at every split point).

use super::parse::{ParseOutput, Parser};
use super::validate::ToolCall;
use super::validate::ToolSet;

/// Something the stream can act on now.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamEvent {
    /// More reply text (append to what came before).
    Text(String),
    /// A complete, validated call.
    Call(ToolCall),
}

/// Streaming parse state for one model output.
pub struct StreamParser<'a> {
    parser: &'a Parser,
    tools: &'a ToolSet,
    buf: String,
    reply: String,
    calls: usize,
}

impl<'a> StreamParser<'a> {
    pub fn new(parser: &'a Parser, tools: &'a ToolSet) -> Self {
        StreamParser {
            parser,
            tools,
            buf: String::new(),
            reply: String::new(),
            calls: 0,
        }
    }

    /// Everything received so far.
    pub fn buffer(&self) -> &str {
        &self.buf
    }

    /// Add a chunk; returns what became certain.
    pub fn push(&mut self, chunk: &str) -> Vec<StreamEvent> {
        self.buf.push_str(chunk);
        let a = self.parser.analyze(&self.buf, self.tools, false);
        self.emit(a.reply, a.calls)
    }

    /// The output is complete: emit the rest and return the full parse, equal to
    /// `parser.parse(buffer)`.
    pub fn finish(mut self) -> (Vec<StreamEvent>, ParseOutput) {
        let out = self.parser.parse(&self.buf, self.tools);
        let events = self.emit(out.reply.clone(), out.calls.clone());
        (events, out)
    }

    fn emit(&mut self, reply: String, calls: Vec<ToolCall>) -> Vec<StreamEvent> {
        let mut events = Vec::new();
        for c in calls.into_iter().skip(self.calls) {
            self.calls += 1;
            events.push(StreamEvent::Call(c));
        }
        if reply.len() > self.reply.len() {
            match reply.strip_prefix(self.reply.as_str()) {
                Some(delta) => {
                    events.push(StreamEvent::Text(delta.to_string()));
                    self.reply = reply;
                }
                None => {
                    // The settled prefix changed: a detector broke the streaming contract.
                    // Emit nothing more than what is certain; finish() reports the rest.
                    tracing::warn!(
                        emitted = %self.reply,
                        now = %reply,
                        "streamed reply diverged from its settled prefix"
                    );
                }
            }
        }
        events
    }
}
