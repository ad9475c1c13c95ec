// Scenes of real audio for the wake-word detector and the spoken benches (`benches/wake.rs`,
// `benches/echo.rs`, `benches/answers.rs`, …): noise and music generators (`noise`), levels
// and mixing at a signal-to-noise ratio (`mix`), the texts (`text`, from tests/wake/*.txt),
// and (feature `tts`) speech from the Piper voice and espeak-ng, with a clip cache (`speak`).
// The benches' named speakers (`voices`: Piper, pitch-shifted Piper, espeak-ng and flite
// voices of both sexes and several accents) and the room (`room`: room noise at an SNR,
// reverberation), spoken and reverberated by `talk` (feature `tts`; sox, espeak-ng, flite).
// `ears` (feature `tts`): hearth-stt behind hearth's Stt actor, hearing a scene as `hearth run`
// does. Their unit tests (`unit_tests.rs`) are this crate's own: they need no model.

#[cfg(feature = "piper")]
pub mod ears;
pub mod mix;
pub mod noise;
pub mod room;
#[cfg(feature = "piper")]
pub mod speak;
#[cfg(feature = "piper")]
pub mod talk;
pub mod text;
#[cfg(test)]
mod unit_tests;
pub mod voices;
