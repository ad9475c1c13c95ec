//! Typed forms of the events a speech-to-text exchange uses, each convertible to and from an
//! [`Event`] through [`Eventable`]:
//!
//! ```text
//! client                                server
//! describe                       ──►
//!                                ◄──    info (asr programs, their models and languages)
//! transcribe (language, name)    ──►
//! audio-start (rate, width, channels)
//! audio-chunk (same + PCM payload) ...
//! audio-stop                     ──►
//!                                ◄──    transcript (text)   or   error (text, code)
//! ping                           ──►
//!                                ◄──    pong
//! ```
//!
//! Field names and optionality follow the reference implementation; unknown fields are ignored
//! when reading, so newer peers that send more stay readable.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::Error;
use crate::event::Event;

/// A typed event: its wire type, and conversion to and from [`Event`].
pub trait Eventable: Sized {
    /// The event type on the wire (`audio-chunk`, `transcript`, ...).
    const TYPE: &'static str;

    /// The event as it goes on the wire.
    fn to_event(&self) -> Event;

    /// The typed event; [`Error::WrongType`] if `event` is of another type,
    /// [`Error::BadEventData`] if a field is missing or of the wrong type.
    fn from_event(event: Event) -> Result<Self, Error>;

    /// True if `event` is of this type.
    fn is(event: &Event) -> bool {
        event.kind == Self::TYPE
    }
}

/// Serialises a data struct to an event's data map.
pub(crate) fn to_data<T: Serialize>(value: &T) -> Map<String, Value> {
    // The structs of this module are plain records with string keys: they always serialise to an
    // object, so the fallback is never taken.
    match serde_json::to_value(value) {
        Ok(Value::Object(map)) => map,
        _ => Map::new(),
    }
}

pub(crate) fn check_type(event: &Event, expected: &'static str) -> Result<(), Error> {
    if event.kind == expected {
        Ok(())
    } else {
        Err(Error::WrongType {
            expected,
            got: event.kind.clone(),
        })
    }
}

pub(crate) fn from_data<T: DeserializeOwned>(
    kind: &'static str,
    data: Map<String, Value>,
) -> Result<T, Error> {
    serde_json::from_value(Value::Object(data))
        .map_err(|source| Error::BadEventData { kind, source })
}

/// Events whose content is all in their data (also used by `satellite`).
macro_rules! data_event {
    ($ty:ty, $name:literal) => {
        impl Eventable for $ty {
            const TYPE: &'static str = $name;

            fn to_event(&self) -> Event {
                Event::new(Self::TYPE).with_data(to_data(self))
            }

            fn from_event(event: Event) -> Result<Self, Error> {
                check_type(&event, Self::TYPE)?;
                from_data(Self::TYPE, event.data)
            }
        }
    };
}

/// `describe`: asks a server what it offers; the answer is [`Info`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Describe {}
data_event!(Describe, "describe");

/// Who made a program or model, and where it comes from.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attribution {
    /// Who made it.
    pub name: String,
    /// Where it is from.
    pub url: String,
}

/// A speech recognition model a server offers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AsrModel {
    /// Unique name of the model.
    pub name: String,
    /// Who made the model.
    pub attribution: Attribution,
    /// True if the model is installed (ready to use).
    pub installed: bool,
    /// Human-readable description.
    #[serde(default)]
    pub description: Option<String>,
    /// Version of the model.
    #[serde(default)]
    pub version: Option<String>,
    /// Languages the model recognises (codes such as `en`).
    pub languages: Vec<String>,
}

/// A speech recognition program (server) and its models.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AsrProgram {
    /// Unique name of the program.
    pub name: String,
    /// Who made the program.
    pub attribution: Attribution,
    /// True if the program is installed (ready to use).
    pub installed: bool,
    /// Human-readable description.
    #[serde(default)]
    pub description: Option<String>,
    /// Version of the program.
    #[serde(default)]
    pub version: Option<String>,
    /// The models it offers.
    pub models: Vec<AsrModel>,
    /// True if it can stream partial transcripts (`transcript-chunk`).
    #[serde(default)]
    pub supports_transcript_streaming: bool,
    /// True if the client must detect the end of speech itself (send `audio-stop`).
    #[serde(default = "default_true")]
    pub requires_external_vad: bool,
    /// hearth's extension: true if it takes [`Phrases`] and `transcribe`'s `phrases`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub supports_phrases: bool,
}

fn default_true() -> bool {
    true
}

/// `info`: what a server offers. Only the speech recognition part and a satellite's
/// description are typed here; other services in a peer's `info` (`tts`, `wake`, ...) are
/// ignored when reading.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Info {
    /// Speech recognition programs.
    #[serde(default)]
    pub asr: Vec<AsrProgram>,
    /// What a satellite says of itself (`None` from a server that is no satellite).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub satellite: Option<crate::satellite::SatelliteInfo>,
}
data_event!(Info, "info");

/// `transcribe`: asks for a transcript of the audio stream that follows (or is under way).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Transcribe {
    /// Name of the model to use (one listed in [`Info`]); the server's choice if `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Language of the speech (such as `en`); the server's default if `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    /// hearth's extension: the id of a phrase set (sent before with [`Phrases`]) to hold the
    /// transcript to where the audio supports it; other servers ignore it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phrases: Option<String>,
}
data_event!(Transcribe, "transcribe");

/// `phrases` (hearth's extension): a phrase set for later `transcribe` requests to name by
/// `id`. The payload is the set as JSON (hearth-phrases' `Grammar`); a server answers with
/// [`PhrasesLoaded`], or an `error` if it cannot use the set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Phrases {
    /// The set's id.
    pub id: String,
    /// The set as JSON.
    pub grammar: Vec<u8>,
}

#[derive(Serialize, Deserialize)]
struct PhrasesData {
    id: String,
}

impl Eventable for Phrases {
    const TYPE: &'static str = "phrases";

    fn to_event(&self) -> Event {
        Event::new(Self::TYPE)
            .with_data(to_data(&PhrasesData {
                id: self.id.clone(),
            }))
            .with_payload(self.grammar.clone())
    }

    fn from_event(event: Event) -> Result<Self, Error> {
        check_type(&event, Self::TYPE)?;
        let data: PhrasesData = from_data(Self::TYPE, event.data)?;
        Ok(Phrases {
            id: data.id,
            grammar: event.payload.unwrap_or_default(),
        })
    }
}

/// `phrases-loaded` (hearth's extension): the answer to [`Phrases`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PhrasesLoaded {
    /// The set's id.
    pub id: String,
    /// Its sentence forms.
    pub forms: usize,
}
data_event!(PhrasesLoaded, "phrases-loaded");

/// The format of PCM audio: what `audio-start` and every `audio-chunk` carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct AudioFormat {
    /// Samples per second per channel, in hertz.
    pub rate: u32,
    /// Bytes per sample (2 for 16-bit).
    pub width: u32,
    /// Interleaved channels (1 for mono).
    pub channels: u32,
}

impl AudioFormat {
    /// 16 kHz, 16-bit, mono: what speech recognisers usually want.
    pub const SPEECH: AudioFormat = AudioFormat {
        rate: 16_000,
        width: 2,
        channels: 1,
    };

    /// Bytes in one frame (one sample of every channel), saturating on absurd values.
    pub fn bytes_per_frame(&self) -> u64 {
        u64::from(self.width).saturating_mul(u64::from(self.channels))
    }
}

/// `audio-start`: an audio stream begins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct AudioStart {
    /// The stream's sample format.
    #[serde(flatten)]
    pub format: AudioFormat,
    /// Time of the start, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<u64>,
}
data_event!(AudioStart, "audio-start");

/// `audio-stop`: the audio stream ended; a recogniser now answers with a transcript.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AudioStop {
    /// Time of the end, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<u64>,
}
data_event!(AudioStop, "audio-stop");

/// `audio-chunk`: PCM audio, interleaved little-endian samples in the chunk's own format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AudioChunk {
    /// The format of `audio`.
    pub format: AudioFormat,
    /// Time of the chunk's start, in milliseconds.
    pub timestamp: Option<u64>,
    /// The samples (the event's payload).
    pub audio: Vec<u8>,
}

/// The data part of an `audio-chunk`.
#[derive(Serialize, Deserialize)]
struct AudioChunkData {
    #[serde(flatten)]
    format: AudioFormat,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    timestamp: Option<u64>,
}

impl Eventable for AudioChunk {
    const TYPE: &'static str = "audio-chunk";

    fn to_event(&self) -> Event {
        let data = AudioChunkData {
            format: self.format,
            timestamp: self.timestamp,
        };
        Event::new(Self::TYPE)
            .with_data(to_data(&data))
            .with_payload(self.audio.clone())
    }

    fn from_event(event: Event) -> Result<Self, Error> {
        check_type(&event, Self::TYPE)?;
        let data: AudioChunkData = from_data(Self::TYPE, event.data)?;
        Ok(AudioChunk {
            format: data.format,
            timestamp: data.timestamp,
            audio: event.payload.unwrap_or_default(),
        })
    }
}

/// `transcript`: the text recognised in an audio stream.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Transcript {
    /// The recognised text.
    pub text: String,
    /// The language of the text, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    /// hearth's extension: how the phrase pass went, when the request named a phrase set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phrase_pass: Option<PhrasePass>,
}
data_event!(Transcript, "transcript");

/// How the phrase pass went (in [`Transcript`]): both texts, both log-likelihoods, which won.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PhrasePass {
    /// The open decode's transcript.
    pub open: String,
    /// The set's likeliest request, if one was found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phrase: Option<String>,
    /// The open transcript's log-likelihood (nats).
    pub open_logprob: f32,
    /// The phrase's (nats).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phrase_logprob: Option<f32>,
    /// When the phrase chooses a way the open transcript did not say: how much likelier
    /// (nats) the audio makes it than with the likeliest other way in its place.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub way_contrast: Option<f32>,
    /// Whether the transcript is the phrase.
    pub taken: bool,
    /// Whether the phrase, not taken, mends the transcript closely enough that a client may
    /// ask the person whether it is what they said.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub near: bool,
    /// Decoder steps the pass took.
    pub steps: usize,
    /// Milliseconds the pass took.
    pub ms: f64,
}

/// `error`: a request failed. (Named `ErrorEvent` to keep it apart from the codec's [`Error`].)
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorEvent {
    /// Human-readable message.
    pub text: String,
    /// Machine-readable code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
}
data_event!(ErrorEvent, "error");

/// `ping`: asks a peer to answer with [`Pong`] (a liveness check).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ping {
    /// Text to echo back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}
data_event!(Ping, "ping");

/// `pong`: the answer to [`Ping`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pong {
    /// The ping's text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}
data_event!(Pong, "pong");

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn data(event: &Event) -> Value {
        Value::Object(event.data.clone())
    }

    #[test]
    fn typed_events_round_trip() {
        let start = AudioStart {
            format: AudioFormat::SPEECH,
            timestamp: Some(12),
        };
        assert_eq!(AudioStart::from_event(start.to_event()).unwrap(), start);
        let chunk = AudioChunk {
            format: AudioFormat {
                rate: 22050,
                width: 2,
                channels: 2,
            },
            timestamp: None,
            audio: vec![1, 2, 3, 4],
        };
        let event = chunk.to_event();
        assert_eq!(event.payload.as_deref(), Some(&[1u8, 2, 3, 4][..]));
        assert_eq!(AudioChunk::from_event(event).unwrap(), chunk);
        let stop = AudioStop::default();
        assert_eq!(AudioStop::from_event(stop.to_event()).unwrap(), stop);
        let t = Transcribe {
            name: None,
            language: Some("en".into()),
            phrases: None,
        };
        assert_eq!(data(&t.to_event()), json!({"language": "en"}));
        assert_eq!(Transcribe::from_event(t.to_event()).unwrap(), t);
        let e = ErrorEvent {
            text: "no".into(),
            code: Some("bad".into()),
        };
        assert_eq!(ErrorEvent::from_event(e.to_event()).unwrap(), e);
        assert_eq!(e.to_event().kind, "error");
        assert!(Describe::is(&Describe {}.to_event()));
        assert!(Describe {}.to_event().data.is_empty());
        let p = Ping {
            text: Some("x".into()),
        };
        assert_eq!(Ping::from_event(p.to_event()).unwrap(), p);
        assert_eq!(
            Pong::from_event(Pong::default().to_event()).unwrap(),
            Pong::default()
        );
    }

    #[test]
    fn the_phrase_extension_round_trips_and_is_absent_when_unused() {
        let set = Phrases {
            id: "2e963e09bc93c86a".into(),
            grammar: br#"{"lists":[],"forms":["stop"]}"#.to_vec(),
        };
        let event = set.to_event();
        assert_eq!(data(&event), json!({"id": "2e963e09bc93c86a"}));
        assert_eq!(event.payload.as_deref(), Some(&set.grammar[..]));
        assert_eq!(Phrases::from_event(event).unwrap(), set);
        let loaded = PhrasesLoaded {
            id: set.id.clone(),
            forms: 1,
        };
        assert_eq!(
            PhrasesLoaded::from_event(loaded.to_event()).unwrap(),
            loaded
        );
        let t = Transcribe {
            name: None,
            language: None,
            phrases: Some(set.id.clone()),
        };
        assert_eq!(data(&t.to_event()), json!({"phrases": "2e963e09bc93c86a"}));
        let heard = Transcript {
            text: "is the back door locked.".into(),
            language: None,
            phrase_pass: Some(PhrasePass {
                open: "is the Mac door locked.".into(),
                phrase: Some("is the back door locked.".into()),
                open_logprob: -3.5,
                phrase_logprob: Some(-4.25),
                way_contrast: Some(3.5),
                taken: true,
                near: false,
                steps: 22,
                ms: 104.5,
            }),
        };
        assert_eq!(Transcript::from_event(heard.to_event()).unwrap(), heard);
        assert!(data(&heard.to_event())["phrase_pass"].get("near").is_none());
        // a phrase near enough to ask about says so
        let mut asked = heard.clone();
        if let Some(p) = asked.phrase_pass.as_mut() {
            (p.taken, p.near) = (false, true);
        }
        assert_eq!(data(&asked.to_event())["phrase_pass"]["near"], json!(true));
        assert_eq!(Transcript::from_event(asked.to_event()).unwrap(), asked);
        // a reference transcript (no extension) reads, and ours without it writes none
        let plain = Transcript {
            text: "hi".into(),
            language: None,
            phrase_pass: None,
        };
        assert_eq!(data(&plain.to_event()), json!({"text": "hi"}));
        // an id that is not a string is bad data
        let mut event = Event::new("phrases");
        event.data.insert("id".into(), json!(7));
        assert!(Phrases::from_event(event).is_err());
    }

    #[test]
    fn audio_data_is_what_the_reference_writes() {
        let start = AudioStart {
            format: AudioFormat::SPEECH,
            timestamp: None,
        };
        assert_eq!(
            data(&start.to_event()),
            json!({"rate": 16000, "width": 2, "channels": 1})
        );
        // The reference writes `timestamp: null`; it must read.
        let mut event = Event::new("audio-chunk");
        event.data = match json!({"rate": 16000, "width": 2, "channels": 1, "timestamp": null}) {
            Value::Object(m) => m,
            _ => unreachable!(),
        };
        let chunk = AudioChunk::from_event(event).unwrap();
        assert_eq!(chunk.format, AudioFormat::SPEECH);
        assert!(chunk.audio.is_empty());
    }

    #[test]
    fn reads_a_reference_info_and_ignores_other_services() {
        let text = r#"{"asr": [{"name": "faster-whisper", "attribution": {"name": "Guillaume Klein", "url": "https://github.com/guillaumekln/faster-whisper/"}, "installed": true, "description": "Faster Whisper transcription with CTranslate2", "version": "3.0.1", "models": [{"name": "tiny.en", "attribution": {"name": "rhasspy", "url": "https://github.com/rhasspy/models/"}, "installed": true, "description": "tiny.en", "version": null, "languages": ["en"]}], "supports_transcript_streaming": false, "requires_external_vad": true, "prefers_auto_gain_enabled": true, "prefers_noise_reduction_enabled": true}], "tts": [], "handle": [], "intent": [], "wake": [], "mic": [], "snd": []}"#;
        let event = Event::new("info").with_data(serde_json::from_str(text).unwrap());
        let info = Info::from_event(event).unwrap();
        assert_eq!(info.asr.len(), 1);
        assert_eq!(info.asr[0].name, "faster-whisper");
        assert_eq!(info.asr[0].models[0].languages, ["en"]);
        assert_eq!(info.asr[0].models[0].version, None);
        assert!(info.asr[0].requires_external_vad);
        assert!(!info.asr[0].supports_phrases);
        // And what we write has every field the reference requires.
        let written = data(&info.to_event());
        for field in [
            "name",
            "attribution",
            "installed",
            "description",
            "version",
            "models",
        ] {
            assert!(written["asr"][0].get(field).is_some(), "{field}");
        }
        for field in ["name", "attribution", "installed", "languages"] {
            assert!(
                written["asr"][0]["models"][0].get(field).is_some(),
                "{field}"
            );
        }
    }

    #[test]
    fn wrong_type_and_bad_data_are_named() {
        let err = Transcript::from_event(Event::new("transcribe")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "expected a `transcript` event, got `transcribe`"
        );
        let err = AudioStart::from_event(Event::new("audio-start")).unwrap_err();
        assert!(matches!(
            err,
            Error::BadEventData {
                kind: "audio-start",
                ..
            }
        ));
        assert!(err.to_string().contains("rate"), "{err}");
        let mut event = Event::new("audio-chunk");
        event.data.insert("rate".into(), json!("fast"));
        event.data.insert("width".into(), json!(2));
        event.data.insert("channels".into(), json!(1));
        let err = AudioChunk::from_event(event).unwrap_err();
        assert!(
            err.to_string().starts_with("bad `audio-chunk` event data"),
            "{err}"
        );
        assert!(err.is_recoverable());
    }
}
