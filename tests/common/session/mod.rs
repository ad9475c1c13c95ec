// The continuous-session set and its scorer, shared by `benches/session.rs` and
// `tests/session.rs` (included with `#[path]`): the sets (tests/session/*.jsonl), scoring
// hearth's turns against them, the Markdown tables, the tools without their sentences
// (`tools`), and (feature `tts`) speaking a set into one input WAV and running `hearth` on it.
#![allow(dead_code)]

pub mod claims;
pub mod report;
#[cfg(feature = "tts")]
pub mod run;
pub mod score;
pub mod set;
pub mod text;
pub mod tools;
