//! What a tool call gives back, shared by every executor: its status and its text; and the
//! values a call renders into templates ([`values`]).

pub(crate) mod values;

use serde::Serialize;

/// How a call went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolStatus {
    /// It ran and gave a result.
    Ok,
    /// It ran and gave nothing (exit 0, blank output).
    Empty,
    /// It did not run, failed, or timed out; the result is the message.
    Error,
}

impl ToolStatus {
    /// `"ok"`, `"empty"` or `"error"`, as serialised.
    pub fn as_str(self) -> &'static str {
        match self {
            ToolStatus::Ok => "ok",
            ToolStatus::Empty => "empty",
            ToolStatus::Error => "error",
        }
    }
}

/// What one run gave: the status and the text the model sees (for `error`, the message).
#[derive(Debug, Clone, PartialEq)]
pub struct ExecOutput {
    /// `ok`, `empty` or `error`.
    pub status: ToolStatus,
    /// Trimmed stdout (with a note when cut), or the error message.
    pub text: String,
}

impl ExecOutput {
    /// An `error` outcome; `text` names the tool and the problem.
    pub fn error(text: String) -> Self {
        ExecOutput {
            status: ToolStatus::Error,
            text,
        }
    }

    /// A finished call's output: `ok` with the trimmed text, `empty` when it is blank.
    pub fn done(text: impl Into<String>) -> Self {
        let text = text.into().trim().to_string();
        ExecOutput {
            status: if text.is_empty() {
                ToolStatus::Empty
            } else {
                ToolStatus::Ok
            },
            text,
        }
    }
}
