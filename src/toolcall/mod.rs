//! The tool-call parser chain: detectors per wire format, think handling, validation,
//! streaming. See ARCHITECTURE.md for the rules.

pub mod detector;
pub mod detectors;
pub mod fence;
pub mod parse;
pub mod pyliteral;
pub mod registry;
pub mod scan;
pub mod stream;
pub mod think;
pub mod tokens;
pub mod validate;

pub use detector::{Candidate, DetectCtx, Detector, Found, FoundKind, Strictness};
pub use parse::{ParseOutput, Parser, ParserError, Rejected, Telemetry, ToolCall};
pub use registry::{register_detector, registry, DetectorRegistry, RegistryError};
pub use stream::{StreamEvent, StreamParser};
pub use think::{known_tags, ThinkTags};
pub use validate::{ToolSet, ToolSpec, ToolsError, Verdict};
