//! Sound in and out: the Capture and Playback actors, WAV files and resampling.
//!
//! ```text
//! mic ─cpal callback─► ring (rtrb) ─► worker: downmix, resample to 16 kHz, cut 512 ─► Frame
//! WAV file / raw PCM on stdin ──────────► task:  downmix, resample to 16 kHz, cut 512 ─► Frame
//! Pcm ─► Playback actor: resample to the output rate ─► ring (rtrb) ─► cpal callback / WAV writer
//! ```
//!
//! - [`aec`]: acoustic echo cancellation (sonora's AEC3): the canceller, the render tap
//!   Playback's output writes what it plays into, and the filter the capture side runs.
//! - [`capture`]: the [`Capture`](capture::Capture) actor. Sources: a WAV file (as fast as
//!   possible or in real time), raw 16-bit little-endian mono PCM from stdin (or any reader),
//!   or a sound card through cpal. Emits [`Captured`](crate::voice::Captured) into a bounded
//!   `tokio::sync::mpsc` channel.
//! - [`playback`]: the [`Playback`](playback::Playback) actor. Sinks: a WAV file (mono i16 at
//!   a fixed rate) or a sound card. Emits [`PlaybackEvent`](crate::voice::PlaybackEvent)s.
//! - [`listen`]: the [`Listen`](listen::Listen) actor: voice activity (energy over an
//!   adaptive noise floor), end-of-utterance hangover, barge-in gated on the playback level.
//! - `silero` (feature `tts`, which brings ONNX Runtime): the Silero VAD, a neural voice
//!   activity detector (VAD) Listen can use instead of the energy gate (`[listen] vad = "silero"`).
//! - `smart_turn` (feature `tts`): Smart Turn v3.2, the probability that a speaker who paused
//!   has finished their turn, from the sound of the utterance so far.
//! - [`wav`]: read any common WAV as 16 kHz mono `f32`; the mono i16 WAV writer.
//! - [`resample`]: downmixing and rubato resampling, whole clips and streams.
//! - [`device`]: finding cpal hosts and devices by name (behind the `audio` feature: cpal
//!   needs libasound2-dev to build; without the feature the device sources and sinks are an
//!   error that says so, and everything else works).
//!
//! No audio callback ever blocks or allocates: the callbacks only move samples through a
//! preallocated lock-free ring and update atomics.

pub mod aec;
mod capture;
mod device;
pub mod earcon;
pub mod listen;
mod playback;
pub mod resample;
pub mod silero;
pub mod smart_turn;
pub mod wav;

use std::path::PathBuf;

pub use capture::{Capture, CaptureArgs, CaptureInfo, CaptureMsg, CaptureSource, CaptureStats};
pub(crate) use device::device_names;
pub use device::DeviceSpec;
pub use playback::{
    Playback, PlaybackArgs, PlaybackMsg, PlaybackSink, PlaybackStats, StreamBlock, StreamOut,
};

/// What went wrong with audio: each message names the file or device, the problem and the fix.
#[derive(Debug, thiserror::Error)]
pub enum AudioError {
    /// A file that could not be opened, read or created.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// A file that is not a WAV file at all.
    #[error("{path} is not a WAV file ({reason}): give a RIFF/WAVE file with PCM samples (e.g. `ffmpeg -i IN -ac 1 -ar 16000 OUT.wav`)")]
    NotWav {
        /// The file.
        path: PathBuf,
        /// What hound found wrong.
        reason: String,
    },
    /// A WAV file in a format this module does not read.
    #[error("{path}: unsupported WAV format ({reason}): use 8/16/24/32-bit integer or 32-bit float PCM (e.g. `ffmpeg -i IN -c:a pcm_s16le OUT.wav`)")]
    UnsupportedWav {
        /// The file.
        path: PathBuf,
        /// Which part of the format.
        reason: String,
    },
    /// Writing a WAV file failed.
    #[error("writing {path}: {reason}")]
    WavWrite {
        /// The file.
        path: PathBuf,
        /// hound's message.
        reason: String,
    },
    /// A sample rate out of range.
    #[error("unsupported sample rate {0} Hz: use {min} to {max} Hz", min = resample::MIN_RATE, max = resample::MAX_RATE)]
    Rate(u32),
    /// The resampler could not be built or failed.
    #[error("resampling {from} Hz to {to} Hz failed: {reason}")]
    Resample {
        /// Input rate.
        from: u32,
        /// Output rate.
        to: u32,
        /// rubato's message.
        reason: String,
    },
    /// Reading raw PCM (stdin) failed.
    #[error("reading raw PCM from {what}: {source}")]
    Raw {
        /// Where from (e.g. "stdin").
        what: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A source that can be started only once (a reader, stdin) was started again.
    #[error("the capture source {0} was already consumed by an earlier Start: spawn a new Capture for it")]
    SourceConsumed(String),
    /// No audio host of that name.
    #[error("no audio host named \"{name}\": available hosts: {available}")]
    HostNotFound {
        /// The name asked for.
        name: String,
        /// The hosts this build and machine have, comma-separated.
        available: String,
    },
    /// The audio host failed to start (e.g. PulseAudio not running).
    #[error("audio host {host} is unavailable: {reason}")]
    HostUnavailable {
        /// The host.
        host: String,
        /// cpal's message.
        reason: String,
    },
    /// No device of that name.
    #[error("no audio {direction} device named \"{name}\" on {host}: devices: {available}")]
    DeviceNotFound {
        /// "input" or "output".
        direction: &'static str,
        /// The name asked for.
        name: String,
        /// The host searched.
        host: String,
        /// The devices that exist, comma-separated (or "none").
        available: String,
    },
    /// No default device.
    #[error(
        "no default audio {direction} device on {host}: devices: {available}; name one explicitly"
    )]
    NoDefaultDevice {
        /// "input" or "output".
        direction: &'static str,
        /// The host searched.
        host: String,
        /// The devices that exist, comma-separated (or "none").
        available: String,
    },
    /// The device exists but the stream could not be configured or started.
    #[error("audio device {device}: {reason}")]
    Stream {
        /// The device.
        device: String,
        /// What failed.
        reason: String,
    },
    /// This build has no device support.
    #[error("this hearth was built without the `audio` feature, so it cannot open sound devices: rebuild with `--features audio` (needs libasound2-dev), or use a WAV file or stdin")]
    NoDeviceSupport,
    /// A worker thread could not be started or died.
    #[error("audio worker: {0}")]
    Worker(String),
}
