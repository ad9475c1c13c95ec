//! A Wyoming text-to-speech server as the voice (`[tts] server`): wyoming-piper, Home
//! Assistant's Piper add-on, or any server that answers `synthesize`.
//!
//! One connection per sentence, as Home Assistant makes them: `synthesize` (the text, and the
//! voice when one is named) goes out, `audio-start`, `audio-chunk`s and `audio-stop` come back,
//! and the sentence's speech goes on as one piece, as a Piper voice's does. The voice is
//! tried once when it loads (a word spoken and thrown away): a server that is not there, not
//! a text-to-speech server, or without the voice is an error at start, the server has loaded
//! its model before the first reply waits on it, and the speech's sample rate is known.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::io::BufReader;
use tokio::net::TcpStream;
use wyoming::{
    AudioChunk, AudioStart, AudioStop, ErrorEvent, EventReader, Eventable, Synthesize,
    SynthesizeVoice,
};

use super::{Synthesis, TtsError, VoiceInfo};
use crate::voice::Pcm;

/// How long connecting may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// How long one sentence's speech may take to arrive in full.
const SENTENCE_TIMEOUT: Duration = Duration::from_secs(30);
/// What the voice says when it is tried at load (the audio is thrown away).
const PROBE: &str = "Ready.";

/// A text-to-speech server, and the voice asked of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerConfig {
    /// `HOST:PORT` or `tcp://HOST:PORT`.
    pub uri: String,
    /// The server's name for the voice; `None`: its default voice.
    pub voice: Option<String>,
}

impl ServerConfig {
    /// The address to connect to.
    fn addr(&self) -> &str {
        self.uri.strip_prefix("tcp://").unwrap_or(&self.uri)
    }
}

/// A voice on a Wyoming text-to-speech server, tried once at load.
#[derive(Debug)]
pub struct ServerVoice {
    config: ServerConfig,
    info: VoiceInfo,
    /// The runtime the sentences' connections run on (the worker thread is not one of its
    /// threads, so it may block on them).
    runtime: tokio::runtime::Handle,
}

impl ServerVoice {
    /// Connect and speak a word: the server's voice, or the error naming the server and the
    /// fix. Called on the async runtime the voice then uses.
    pub async fn load(config: ServerConfig) -> Result<ServerVoice, TtsError> {
        let started = Instant::now();
        let probe = speak(&config, PROBE).await?;
        let info = VoiceInfo {
            model: config.uri.clone().into(),
            sample_rate: probe.rate,
            espeak_voice: config.voice.clone().unwrap_or_default(),
        };
        tracing::info!(
            server = %config.uri,
            voice = config.voice.as_deref().unwrap_or("(the server's default)"),
            rate = info.sample_rate,
            load_ms = started.elapsed().as_secs_f64() * 1000.0,
            "text-to-speech server answers"
        );
        Ok(ServerVoice {
            config,
            info,
            runtime: tokio::runtime::Handle::current(),
        })
    }

    /// What the voice is (its sample rate as the server's first answer gave it).
    pub fn info(&self) -> &VoiceInfo {
        &self.info
    }

    /// Speak `text` (blocking: call it off the async runtime, as the Tts worker does).
    pub fn synthesize(&self, text: &str) -> Result<Synthesis, TtsError> {
        let started = Instant::now();
        let pcm = self.runtime.block_on(speak(&self.config, text))?;
        Ok(Synthesis {
            pcm,
            synth_ms: started.elapsed().as_secs_f64() * 1000.0,
        })
    }
}

/// `text` spoken by the server, whole.
async fn speak(config: &ServerConfig, text: &str) -> Result<Pcm, TtsError> {
    let failed = |problem: String| TtsError::Server {
        uri: config.uri.clone(),
        problem,
    };
    let stream = tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect(config.addr()))
        .await
        .map_err(|_| failed(format!("no answer within {} s", CONNECT_TIMEOUT.as_secs())))?
        .map_err(|e| failed(format!("cannot connect: {e}")))?;
    let (read, mut write) = stream.into_split();
    let ask = Synthesize {
        text: text.to_string(),
        voice: config
            .voice
            .as_ref()
            .map(|name| SynthesizeVoice { name: name.clone() }),
    };
    wyoming::write_event(&mut write, &ask.to_event())
        .await
        .map_err(|e| failed(format!("cannot send the text: {e}")))?;
    let mut events = EventReader::new(BufReader::new(read));
    tokio::time::timeout(SENTENCE_TIMEOUT, receive(&mut events))
        .await
        .map_err(|_| {
            failed(format!(
                "the speech did not arrive within {} s",
                SENTENCE_TIMEOUT.as_secs()
            ))
        })?
        .map_err(failed)
}

/// The speech that follows a `synthesize`: `audio-start`, chunks, `audio-stop`; mono 16-bit
/// (the first channel of more).
async fn receive<R: tokio::io::AsyncBufRead + Unpin>(
    events: &mut EventReader<R>,
) -> Result<Pcm, String> {
    let mut rate = None;
    let mut samples: Vec<i16> = Vec::new();
    loop {
        let event = events
            .read_event()
            .await
            .map_err(|e| format!("its answer is not Wyoming: {e}"))?
            .ok_or("it closed the connection before the speech ended")?;
        match event.kind.as_str() {
            AudioStart::TYPE => {
                let start = AudioStart::from_event(event).map_err(|e| e.to_string())?;
                rate = Some(start.format.rate);
            }
            AudioChunk::TYPE => {
                let chunk = AudioChunk::from_event(event).map_err(|e| e.to_string())?;
                let format = chunk.format;
                if format.width != 2 || format.channels == 0 {
                    return Err(format!(
                        "its speech is {} bytes a sample in {} channels; hearth takes 16-bit audio",
                        format.width, format.channels
                    ));
                }
                rate.get_or_insert(format.rate);
                let frame = 2 * format.channels as usize;
                samples.extend(
                    chunk
                        .audio
                        .chunks_exact(frame)
                        .map(|f| i16::from_le_bytes([f[0], f[1]])),
                );
            }
            AudioStop::TYPE => break,
            ErrorEvent::TYPE => {
                let e = ErrorEvent::from_event(event).map_err(|e| e.to_string())?;
                return Err(format!("it answered with an error: {}", e.text));
            }
            // `synthesize-stopped` and what newer servers add: not speech
            _ => {}
        }
    }
    let rate = rate.ok_or("it sent no audio (is it a text-to-speech server?)")?;
    Ok(Pcm {
        samples: Arc::from(samples),
        rate,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use wyoming::{AudioFormat, Event};

    /// The events `events` as a server would write them, read back.
    async fn received(events: Vec<Event>) -> Result<Pcm, String> {
        let mut bytes = Vec::new();
        for e in &events {
            wyoming::write_event(&mut bytes, e).await.unwrap();
        }
        receive(&mut EventReader::new(BufReader::new(&bytes[..]))).await
    }

    fn chunk(channels: u32, samples: &[i16]) -> Event {
        AudioChunk {
            format: AudioFormat {
                rate: 22050,
                width: 2,
                channels,
            },
            timestamp: None,
            audio: samples.iter().flat_map(|s| s.to_le_bytes()).collect(),
        }
        .to_event()
    }

    fn start() -> Event {
        AudioStart {
            format: AudioFormat {
                rate: 22050,
                width: 2,
                channels: 1,
            },
            timestamp: None,
        }
        .to_event()
    }

    #[tokio::test]
    async fn the_speech_is_the_chunks_between_start_and_stop() {
        let pcm = received(vec![
            start(),
            chunk(1, &[1, 2, 3]),
            Event::new("something-newer"),
            chunk(1, &[-4]),
            AudioStop::default().to_event(),
        ])
        .await
        .unwrap();
        assert_eq!(pcm.rate, 22050);
        assert_eq!(&pcm.samples[..], [1, 2, 3, -4]);
    }

    #[tokio::test]
    async fn of_two_channels_the_first_is_kept() {
        let pcm = received(vec![
            start(),
            chunk(2, &[1, 9, 2, 9]),
            AudioStop::default().to_event(),
        ])
        .await
        .unwrap();
        assert_eq!(&pcm.samples[..], [1, 2]);
    }

    #[tokio::test]
    async fn what_is_not_speech_is_an_error_that_says_so() {
        let e = received(vec![ErrorEvent {
            text: "voice not found".into(),
            code: None,
        }
        .to_event()])
        .await
        .unwrap_err();
        assert_eq!(e, "it answered with an error: voice not found");
        let e = received(vec![start()]).await.unwrap_err();
        assert!(e.contains("closed the connection"), "{e}");
        let e = received(vec![AudioStop::default().to_event()])
            .await
            .unwrap_err();
        assert!(e.contains("no audio"), "{e}");
        let mut eight_bit = chunk(1, &[1]);
        eight_bit.data.insert("width".into(), 1.into());
        let e = received(vec![start(), eight_bit]).await.unwrap_err();
        assert!(e.contains("16-bit"), "{e}");
    }
}
