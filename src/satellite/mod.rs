//! Wyoming satellites: a microphone and a speaker in another room (`wyoming-satellite` on a
//! Pi Zero 2), whose pipeline hearth runs, as Home Assistant would.
//!
//! hearth connects to each satellite ([`SatelliteConfig`]) and keeps connecting, with a
//! backoff, for as long as it runs. A satellite is one more audio source and sink for the
//! voice pipeline, nothing beside it: [`start`] gives a [`CaptureSource`] that reads the
//! satellite's microphone (silence while it streams nothing, so the pipeline's clock keeps
//! time and an utterance cut off by a dropped connection ends), a [`PlaybackSink`] whose
//! audio goes back to the satellite as `audio-start`/`audio-chunk`/`audio-stop`, an event
//! stream the pipeline publishes on (what was heard goes back as `transcript`, the reply's
//! text as `synthesize`, a wake word as `detection`, and all of it on to hearth's own
//! stream), and the `Listen()` notifier a satellite that heard
//! its own wake word opens (`run-pipeline` from the `asr` stage). One conductor runs per
//! satellite (`pipeline::run`), with the same agent as every other.
//!
//! - `link`: the connection: handshake (`describe`/`info`, `run-satellite`), the events
//!   both ways, the silence, reconnecting.
//! - [`discover`]: zeroconf, for a satellite configured by name alone.

pub mod discover;
mod link;

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{mpsc, Notify};
use tokio::task::JoinHandle;

use crate::audio::{CaptureSource, PlaybackSink, StreamOut};
use crate::events::Events;

/// One `[[satellite]]` of the configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SatelliteConfig {
    /// Its name in logs, turns and events.
    pub name: String,
    /// Where it listens: `HOST:PORT` (from `tcp://HOST:PORT`); `None`: wherever it
    /// announces itself by zeroconf under `name` ([`discover`]).
    pub address: Option<String>,
    /// The room it is in (context for its requests; where announcements for that room go).
    pub room: Option<String>,
}

impl SatelliteConfig {
    /// A satellite at `url` (`tcp://HOST:PORT`), or found by zeroconf under `name`.
    pub fn new(
        name: impl Into<String>,
        url: Option<&str>,
        room: Option<String>,
    ) -> Result<Self, SatelliteError> {
        let name = name.into();
        let address =
            match url {
                None => None,
                Some(url) => Some(crate::config::satellite_address(url).ok_or_else(|| {
                    SatelliteError::Url {
                        name: name.clone(),
                        url: url.to_string(),
                    }
                })?),
            };
        Ok(SatelliteConfig {
            name,
            address,
            room,
        })
    }
}

/// What goes wrong with a satellite's configuration.
#[derive(Debug, thiserror::Error)]
pub enum SatelliteError {
    #[error("satellite {name:?}: url {url:?} is not tcp://HOST:PORT (wyoming-satellite's --uri, e.g. tcp://192.168.1.20:10700)")]
    Url { name: String, url: String },
    #[error("cannot browse for satellites by zeroconf ({0}): give each [[satellite]] its url")]
    Zeroconf(String),
}

/// A satellite as the voice pipeline sees it. Dropping `link` ends the connection.
pub struct SatelliteIo {
    pub name: String,
    pub room: Option<String>,
    /// Its microphone, 16 kHz mono.
    pub input: CaptureSource,
    /// Its speaker.
    pub output: PlaybackSink,
    /// Opened when the satellite heard its own wake word: the next utterance is a request.
    pub listen: Arc<Notify>,
    /// Where its pipeline publishes what it hears and says.
    pub events: Events,
    /// The connection's task.
    pub link: LinkTask,
}

/// The connection's task: aborted when dropped.
pub struct LinkTask(JoinHandle<()>);

impl Drop for LinkTask {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// The sample rate of the reply audio sent to satellites.
pub const REPLY_RATE: u32 = 22_050;

/// Connect to a satellite (in the background: it need not be up yet), at its address or
/// where `found` (zeroconf) says. What its pipeline publishes goes on to `global` (hearth's
/// own event stream). While `muted` (the D-Bus `Muted` property) it is paused
/// (`pause-satellite`: it streams nothing), and run again after.
pub fn start(
    config: SatelliteConfig,
    found: Option<discover::Found>,
    global: Option<Events>,
    muted: Arc<AtomicBool>,
) -> SatelliteIo {
    let (mic_reader, mic_writer) = tokio::io::simplex(MIC_PIPE_BYTES);
    let (blocks_tx, blocks_rx) = mpsc::unbounded_channel();
    let listen = Arc::new(Notify::new());
    let events = crate::events::channel();
    let name = config.name.clone();
    let room = config.room.clone();
    let ends = link::Ends {
        pipe: mic_writer,
        blocks: blocks_rx,
        listen: listen.clone(),
        events: events.subscribe(),
        global,
        found,
        muted,
    };
    let link = link::Link::new(config, ends);
    let task = tokio::spawn(link.run());
    SatelliteIo {
        input: CaptureSource::reader(format!("satellite {name}"), mic_reader, MIC_RATE),
        output: PlaybackSink::Stream(StreamOut {
            name: format!("satellite {name}"),
            rate: REPLY_RATE,
            blocks: blocks_tx,
        }),
        name,
        room,
        listen,
        events,
        link: LinkTask(task),
    }
}

/// The microphone's rate in the pipeline.
const MIC_RATE: u32 = 16_000;
/// The pipe between the link and Capture: about two seconds of audio.
const MIC_PIPE_BYTES: usize = 64 * 1024;
/// The first wait before connecting again; doubled after each failure up to [`MAX_BACKOFF`].
const MIN_BACKOFF: Duration = Duration::from_millis(500);
const MAX_BACKOFF: Duration = Duration::from_secs(30);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_satellite_url_is_tcp_host_port() {
        assert_eq!(
            crate::config::satellite_address("tcp://127.0.0.1:10700").as_deref(),
            Some("127.0.0.1:10700")
        );
        assert_eq!(
            crate::config::satellite_address("tcp://pi-zero.local:10700").as_deref(),
            Some("pi-zero.local:10700")
        );
        for bad in [
            "127.0.0.1:10700",
            "tcp://host",
            "tcp://:10700",
            "tcp://h:0",
            "tcp://h:x",
            "unix:///s",
        ] {
            assert_eq!(crate::config::satellite_address(bad), None, "{bad}");
        }
        let e = SatelliteConfig::new("bedroom", Some("http://x:1"), None).unwrap_err();
        assert!(e.to_string().contains("tcp://HOST:PORT"), "{e}");
    }
}
