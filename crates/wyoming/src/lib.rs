//! The Wyoming protocol: the JSON-lines-plus-PCM event stream that Home Assistant's voice
//! services speak, on any byte stream (TCP, stdio, a Unix socket).
//!
//! - [`Event`]: one message (type, JSON data, optional binary payload).
//! - [`EventReader`] and [`write_event`]: the framing, with [`Limits`] on what is read.
//! - [`Eventable`] and the typed events of speech recognition: [`Describe`], [`Info`],
//!   [`Transcribe`], [`AudioStart`], [`AudioChunk`], [`AudioStop`], [`Transcript`],
//!   [`ErrorEvent`], [`Ping`], [`Pong`].
//! - The satellite's events (a microphone and speaker in a room whose pipeline a server
//!   runs): [`RunSatellite`], [`RunPipeline`], [`Detection`], [`VoiceStarted`],
//!   [`VoiceStopped`], [`Synthesize`], [`Played`], [`PauseSatellite`], and [`Info`]'s
//!   [`SatelliteInfo`].
//! - [`Error`]: everything that can go wrong, with [`Error::is_recoverable`] telling whether the
//!   stream is still in step.
//!
//! ```no_run
//! # async fn demo(
//! #     stream: impl tokio::io::AsyncRead + tokio::io::AsyncWrite,
//! # ) -> Result<(), wyoming::Error> {
//! use wyoming::{Describe, EventReader, Eventable, Info};
//! // `stream`: a TcpStream, a child's stdio, ...
//! let (read, mut write) = tokio::io::split(stream);
//! let mut events = EventReader::new(tokio::io::BufReader::new(read));
//! wyoming::write_event(&mut write, &Describe {}.to_event()).await?;
//! while let Some(event) = events.read_event().await? {
//!     if Info::is(&event) {
//!         let info = Info::from_event(event)?;
//!         println!("{:?}", info.asr);
//!         break;
//!     }
//! }
//! # Ok(())
//! # }
//! ```
//!
//! Pure Rust, no audio or ML dependencies: both hearth's Stt client and `hearth-stt` use it.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod codec;
mod error;
mod event;
#[macro_use]
mod events;
mod satellite;

pub use codec::{write_event, EventReader, Limits, PROTOCOL_VERSION};
pub use error::{Error, Part};
pub use event::Event;
pub use events::{
    AsrModel, AsrProgram, Attribution, AudioChunk, AudioFormat, AudioStart, AudioStop, Describe,
    ErrorEvent, Eventable, Info, PhrasePass, Phrases, PhrasesLoaded, Ping, Pong, Transcribe,
    Transcript,
};
pub use satellite::{
    Detection, PauseSatellite, PipelineStage, Played, RunPipeline, RunSatellite, SatelliteInfo,
    StreamingStarted, StreamingStopped, Synthesize, SynthesizeVoice, VoiceStarted, VoiceStopped,
};
