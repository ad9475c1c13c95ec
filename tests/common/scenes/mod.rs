// Scenes of real audio for the wake-word detector, shared by `benches/wake.rs` and
// `tests/wake.rs` (included with `#[path]`): noise and music generators (`noise`), levels
// and mixing at a signal-to-noise ratio (`mix`), the texts (`text`, from tests/wake/*.txt),
// and (feature `tts`) speech from the Piper voice and espeak-ng, with a clip cache (`speak`).
// Their unit tests (`unit_tests.rs`) run in tests/wake.rs.
#![allow(dead_code)]

pub mod mix;
pub mod noise;
#[cfg(feature = "tts")]
pub mod speak;
pub mod text;
