//! Typed forms of the events between a satellite (a microphone and a speaker in a room,
//! `wyoming-satellite`) and the server that runs its pipeline (Home Assistant's role, or
//! hearth's):
//!
//! ```text
//! server                                satellite
//! describe                       ──►
//!                                ◄──    info (satellite: name, area)
//! run-satellite                  ──►
//!                                ◄──    run-pipeline (start stage: wake, or asr after its
//!                                       own wake word; end stage: tts when it can play)
//!                                ◄──    audio-chunk ... (the microphone)
//! detection, voice-started,
//! voice-stopped, transcript,
//! synthesize (the reply's text),
//! audio-start, audio-chunk ...,
//! audio-stop (the reply)         ──►
//!                                ◄──    played (newer satellites, once the reply has played)
//! pause-satellite                ──►    (stop streaming until run-satellite)
//! ```
//!
//! Field names and optionality follow the reference implementation (wyoming 1.4 to 1.7);
//! unknown fields are ignored when reading.

use serde::{Deserialize, Serialize};

use crate::error::Error;
use crate::event::Event;
use crate::events::{check_type, from_data, to_data, Attribution, AudioFormat, Eventable};

/// What a satellite says of itself in its `info`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SatelliteInfo {
    /// Its name.
    pub name: String,
    /// The room it is in, if it was told.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub area: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attribution: Option<Attribution>,
    #[serde(default)]
    pub installed: bool,
    /// Newer satellites: whether it detects speech itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub has_vad: Option<bool>,
    /// Newer satellites: the wake words it listens for itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_wake_words: Option<Vec<String>>,
}

/// `run-satellite`: the server is ready; the satellite starts its pipeline.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunSatellite {}
data_event!(RunSatellite, "run-satellite");

/// `pause-satellite`: stop streaming until the next [`RunSatellite`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PauseSatellite {}
data_event!(PauseSatellite, "pause-satellite");

/// A stage of a voice pipeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PipelineStage {
    /// Wake word detection (on the server, in the streamed audio).
    Wake,
    /// Speech recognition.
    Asr,
    /// Intent recognition.
    Intent,
    /// Handling the request (the answer as text).
    Handle,
    /// Speech synthesis: the answer comes back as audio.
    Tts,
}

/// `run-pipeline`: the satellite asks for a pipeline run on the audio it streams.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunPipeline {
    /// [`PipelineStage::Wake`]: the server listens for the wake word; [`PipelineStage::Asr`]:
    /// the satellite heard its own, and what follows is the request.
    pub start_stage: PipelineStage,
    /// [`PipelineStage::Tts`]: the satellite plays the answer; earlier: it has no speaker.
    pub end_stage: PipelineStage,
    /// The pipeline's name, if the satellite names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Newer satellites: run the pipeline again when it ends.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restart_on_end: Option<bool>,
    /// The format the satellite wants the answer's audio in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snd_format: Option<AudioFormat>,
}
data_event!(RunPipeline, "run-pipeline");

/// `detection`: a wake word was heard.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Detection {
    /// The wake word's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Where in the audio, milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<u64>,
}
data_event!(Detection, "detection");

/// `voice-started`: speech began (the server's voice activity detection).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct VoiceStarted {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<u64>,
}
data_event!(VoiceStarted, "voice-started");

/// `voice-stopped`: speech ended.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct VoiceStopped {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<u64>,
}
data_event!(VoiceStopped, "voice-stopped");

/// `synthesize`: text to speak. A satellite hears it as the answer about to be spoken; a
/// text-to-speech server answers it with the speech (`audio-start`, `audio-chunk`s,
/// `audio-stop`), in `voice` when one is named.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Synthesize {
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub voice: Option<SynthesizeVoice>,
}
data_event!(Synthesize, "synthesize");

/// The voice a `synthesize` asks for, by the server's name for it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SynthesizeVoice {
    pub name: String,
}

/// `played`: the satellite has played the answer's audio (newer satellites).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Played {}
data_event!(Played, "played");

/// `streaming-started`: the satellite streams its microphone.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StreamingStarted {}
data_event!(StreamingStarted, "streaming-started");

/// `streaming-stopped`: the satellite stopped streaming.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StreamingStopped {}
data_event!(StreamingStopped, "streaming-stopped");

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::*;
    use crate::events::Info;

    fn data(event: &Event) -> Value {
        Value::Object(event.data.clone())
    }

    fn event(kind: &str, data: Value) -> Event {
        match data {
            Value::Object(m) => Event::new(kind).with_data(m),
            _ => Event::new(kind),
        }
    }

    #[test]
    fn a_reference_satellite_info_reads() {
        // what wyoming-satellite 1.0.0 answers to `describe` (its `--name`, `--area`)
        let info = Info::from_event(event(
            "info",
            json!({"asr": [], "tts": [], "handle": [], "intent": [], "wake": [],
                   "satellite": {"name": "bedroom", "attribution": {"name": "", "url": ""},
                                 "installed": true, "description": "bedroom", "version": null,
                                 "area": "Bedroom"}}),
        ))
        .unwrap();
        let sat = info.satellite.unwrap();
        assert_eq!(sat.name, "bedroom");
        assert_eq!(sat.area.as_deref(), Some("Bedroom"));
        // a server that is no satellite has none, and writes none
        let asr = Info::from_event(event("info", json!({"asr": []}))).unwrap();
        assert!(asr.satellite.is_none());
        assert_eq!(data(&asr.to_event()), json!({"asr": []}));
    }

    #[test]
    fn run_pipeline_reads_as_the_reference_writes_it() {
        let run = RunPipeline::from_event(event(
            "run-pipeline",
            json!({"start_stage": "asr", "end_stage": "tts",
                   "snd_format": {"rate": 22050, "width": 2, "channels": 1}}),
        ))
        .unwrap();
        assert_eq!(run.start_stage, PipelineStage::Asr);
        assert_eq!(run.end_stage, PipelineStage::Tts);
        assert_eq!(run.snd_format.map(|f| f.rate), Some(22050));
        assert_eq!(RunPipeline::from_event(run.to_event()).unwrap(), run);
        // a stage the protocol does not have is bad data, named
        let bad = RunPipeline::from_event(event(
            "run-pipeline",
            json!({"start_stage": "dance", "end_stage": "tts"}),
        ));
        assert!(matches!(
            bad,
            Err(Error::BadEventData {
                kind: "run-pipeline",
                ..
            })
        ));
        // and another event is not this one
        assert!(matches!(
            RunPipeline::from_event(RunSatellite {}.to_event()),
            Err(Error::WrongType { .. })
        ));
    }

    #[test]
    fn the_server_events_round_trip() {
        assert_eq!(RunSatellite {}.to_event().kind, "run-satellite");
        assert!(RunSatellite {}.to_event().data.is_empty());
        assert_eq!(PauseSatellite {}.to_event().kind, "pause-satellite");
        let d = Detection {
            name: Some("okay_nabu".into()),
            timestamp: Some(1200),
        };
        assert_eq!(
            data(&d.to_event()),
            json!({"name": "okay_nabu", "timestamp": 1200})
        );
        assert_eq!(Detection::from_event(d.to_event()).unwrap(), d);
        let s = Synthesize {
            text: "The kitchen light is on.".into(),
            voice: None,
        };
        assert_eq!(
            data(&s.to_event()),
            json!({"text": "The kitchen light is on."})
        );
        assert_eq!(Synthesize::from_event(s.to_event()).unwrap(), s);
        // a voice by name, as a text-to-speech server reads it
        let with_voice = event("synthesize", json!({"text": "hi", "voice": {"name": "x"}}));
        let read = Synthesize::from_event(with_voice).unwrap();
        assert_eq!(read.voice.map(|v| v.name).as_deref(), Some("x"));
        assert!(Played::is(&Played {}.to_event()));
        assert_eq!(VoiceStarted::default().to_event().kind, "voice-started");
        assert_eq!(VoiceStopped::default().to_event().kind, "voice-stopped");
        assert_eq!(StreamingStarted {}.to_event().kind, "streaming-started");
        assert_eq!(StreamingStopped {}.to_event().kind, "streaming-stopped");
    }
}
