//! hearth-stt: speech recognition for hearth, whisper.cpp (through whisper-rs) behind the Wyoming
//! protocol, in a process of its own (whisper.cpp and llama.cpp bundle different ggml copies that
//! cannot be linked into one binary; the split also keeps a ggml abort from taking the agent down).
//!
//! - [`audio`]: client PCM of any format to 16 kHz mono `f32`.
//! - [`recognizer`]: the model, loaded once; greedy, single-segment transcription with a trimmed
//!   encoder window and an initial prompt.
//! - [`server`]: Wyoming sessions on stdio or TCP, sharing one recogniser; on TCP, bounded in
//!   time, number and audio per connection (its module doc says how).
//! - `weighing`: the phrase pass on whisper's decoder: the decoder primed with the audio, and
//!   whether a phrase stands for the open transcript.
//! - [`conns`]: the TCP connections' table (which one to close for a newcomer) and the reader
//!   that gives up on a silent client.
//!
//! The binary (`src/main.rs`) is the command line around these.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod audio;
mod conns;
mod loop_guard;
mod phrase_pass;
pub mod recognizer;
pub mod server;
mod weighing;

pub use recognizer::{LoadError, Recognizer, RecognizerConfig, Transcription};
pub use server::{ServeUri, Server, ServerConfig};
