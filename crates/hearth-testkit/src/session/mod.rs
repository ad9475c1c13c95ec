// The continuous-session set and its scorer, shared by `benches/session.rs`,
// `tests/session.rs` and others: the sets (tests/session/*.jsonl), scoring
// hearth's turns against them, the Markdown tables, the tools without their sentences
// (`tools`), and (feature `tts`) speaking a set into one input WAV and running `hearth` on it.
// Their unit tests (`unit_tests.rs`) are this crate's own.

pub mod claims;
pub mod report;
#[cfg(feature = "piper")]
pub mod run;
pub mod score;
pub mod set;
pub mod text;
pub mod tools;
#[cfg(test)]
mod unit_tests;
