// Scenes of real audio for the wake-word detector, shared by `benches/wake.rs` and
// `tests/wake.rs` (included with `#[path]`): noise and music generators (`noise`), levels
// and mixing at a signal-to-noise ratio (`mix`), the texts (`text`, from tests/wake/*.txt),
// and (feature `tts`) speech from the Piper voice and espeak-ng, with a clip cache (`speak`).
// The benches' named speakers (`voices`: Piper, pitch-shifted Piper, espeak-ng and flite
// voices of both sexes and several accents) and the room (`room`: room noise at an SNR,
// reverberation), spoken and reverberated by `talk` (feature `tts`; sox, espeak-ng, flite).
// `ears` (feature `tts`): hearth-stt behind hearth's Stt actor, hearing a scene as `hearth run`
// does. Their unit tests (`unit_tests.rs`) run in tests/wake.rs.
#![allow(dead_code)]

#[cfg(feature = "tts")]
pub mod ears;
pub mod mix;
pub mod noise;
pub mod room;
#[cfg(feature = "tts")]
pub mod speak;
#[cfg(feature = "tts")]
pub mod talk;
pub mod text;
pub mod voices;
