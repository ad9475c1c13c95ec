//! The tool-call parser chain: detectors per wire format, think handling, validation,
//! streaming. See ARCHITECTURE.md for the rules.

pub mod detector;
pub mod detectors;
pub mod pyliteral;
pub mod registry;
pub mod scan;
pub mod validate;

pub use detector::{Candidate, DetectCtx, Detector, Found, FoundKind, Strictness};
pub use registry::{register_detector, registry, DetectorRegistry, RegistryError};
pub use validate::{ToolSet, ToolSpec, ToolsError, Verdict};
