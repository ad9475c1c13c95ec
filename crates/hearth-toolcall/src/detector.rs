//! The detector contract: one wire format turns raw model text into found call markup.
//!
//! A detector only *extracts*: it never decides whether a call may run. Validation
//! (`validate.rs`) alone turns a candidate into an executable call.

use std::ops::Range;

use serde_json::Value;

use super::validate::ToolSet;

/// How much a format can be trusted to mean "this is a tool call".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strictness {
    /// Delimited by markers that only a tool call uses (`<tool_call>`, `[TOOL_CALLS]`, …).
    Strict,
    /// Bare JSON, pythonic lists, inline calls: prose can look like these, so they are
    /// only consulted when no strict format matched, and only dispatch allowlisted names.
    Loose,
}

/// One call as the model wrote it, before validation.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    pub name: String,
    /// Usually an object; anything else fails validation with a clear reason.
    pub arguments: Value,
    /// An id the model emitted (Mistral's 9-character ids, Kimi's `functions.x:0`), verbatim.
    pub id: Option<String>,
}

impl Candidate {
    pub fn new(name: impl Into<String>, arguments: Value) -> Self {
        Candidate {
            name: name.into(),
            arguments,
            id: None,
        }
    }

    pub fn with_id(mut self, id: Option<String>) -> Self {
        self.id = id;
        self
    }
}

/// What a detector found at one place in the text.
#[derive(Debug, Clone, PartialEq)]
pub enum FoundKind {
    /// One construct holding its calls (`[a(), b()]` is one construct, two calls). An
    /// empty list is markup that says "no call" (Functionary's `>>>all`, xLAM's
    /// `{"tool_calls": []}`, Cohere's `directly_answer`): it leaves the reply and runs nothing.
    Calls(Vec<Candidate>),
    /// Markup of this format that does not parse. It is removed from the reply and
    /// reported as rejected; nothing runs.
    Malformed {
        name: Option<String>,
        reason: String,
    },
    /// The start of a construct that is not complete yet. Only returned while streaming
    /// (`DetectCtx::eof == false`); at end of input a detector decides: call, malformed,
    /// or not its format at all.
    Pending,
}

/// A span of the raw text claimed by a detector.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    /// Byte range of the whole markup (markers included); removed from the reply.
    pub span: Range<usize>,
    pub kind: FoundKind,
    /// Set by a strict detector for a part of its format that is bare (Llama 3.2's bare
    /// JSON without `<|python_tag|>`): the found is then treated as loose.
    pub loose: bool,
}

impl Found {
    pub fn calls(span: Range<usize>, calls: Vec<Candidate>) -> Self {
        Found {
            span,
            kind: FoundKind::Calls(calls),
            loose: false,
        }
    }

    pub fn call(span: Range<usize>, call: Candidate) -> Self {
        Self::calls(span, vec![call])
    }

    pub fn malformed(span: Range<usize>, name: Option<String>, reason: impl Into<String>) -> Self {
        Found {
            span,
            kind: FoundKind::Malformed {
                name,
                reason: reason.into(),
            },
            loose: false,
        }
    }

    pub fn pending(span: Range<usize>) -> Self {
        Found {
            span,
            kind: FoundKind::Pending,
            loose: false,
        }
    }

    /// Mark this found as loose (see [`Found::loose`]).
    pub fn loose(mut self) -> Self {
        self.loose = true;
        self
    }
}

/// What a detector may consult besides the text.
pub struct DetectCtx<'a> {
    /// True when the text is the whole model output. False while streaming: then an
    /// incomplete construct must be reported as [`FoundKind::Pending`], never guessed at.
    pub eof: bool,
    /// The tools on offer, for formats whose values are typed by the tool's JSON Schema
    /// (qwen3_coder, XML parameter formats). Never used to invent or fill arguments.
    pub tools: &'a ToolSet,
}

impl DetectCtx<'_> {
    /// The JSON Schema of one parameter of one tool, if the tool is known.
    pub fn param_schema(&self, tool: &str, param: &str) -> Option<&Value> {
        self.tools.param_schema(tool, param)
    }
}

/// One wire format.
///
/// Contract (checked by the corpus, the proptests and the fuzz target):
/// - `detect` never panics and runs in time linear in `text.len()` (never rescan from
///   every occurrence to the end; continue after a failed scan's stopping point).
/// - spans are in bounds, on char boundaries, and do not overlap each other.
/// - with `ctx.eof == false`, a construct that has started but is not complete is
///   reported as `Pending` from its first byte.
pub trait Detector: Send + Sync {
    /// The registered name, used by presets and `--parsers`.
    fn name(&self) -> &str;
    fn strictness(&self) -> Strictness;
    /// Substrings whose presence in the text makes this detector worth running (and whose
    /// partial presence at the end of a stream must be held back). Empty means "always run".
    fn triggers(&self) -> &[&str];
    /// Find every construct of this format in `text` and push it to `out`, in text order.
    fn detect(&self, text: &str, ctx: &DetectCtx<'_>, out: &mut Vec<Found>);
}
