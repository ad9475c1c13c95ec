//! hearth-toolcall: the tool-call parser chain (a detector per wire format, think handling,
//! validation, streaming), the speakable-text sanitiser ([`speech::Speakable`]) and the model
//! presets ([`preset`]). Pure Rust: no audio, LLM, D-Bus or async runtime. See
//! docs/architecture.md for the rules.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod detector;
mod detectors;
mod fence;
mod parse;
pub mod preset;
mod pyliteral;
pub mod registry;
pub mod scan;
pub mod speech;
mod stream;
mod think;
mod tokens;
mod validate;

pub use detector::{Candidate, DetectCtx, Detector, Found, FoundKind, Strictness};
pub use parse::{ParseOutput, Parser, ParserError, Rejected, Telemetry};
pub use registry::{register_detector, registry, DetectorRegistry, RegistryError};
pub use stream::{StreamEvent, StreamParser};
pub use think::{known_tags, left_open, ThinkTags};
pub use validate::{Refused, ToolCall, ToolSet, ToolSpec, ToolsError, Verdict};
