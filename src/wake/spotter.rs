//! [`Spotter`]: one wake-word model of either engine, as the Wake stage runs them ("spotter",
//! so that "detector" keeps its one meaning: a tool-call wire format's, in `hearth-toolcall`).

use super::OpenWakeWord;
use super::{Detection, MicroWakeWord, WakeError};

/// One wake-word model listening to a stream: microWakeWord (TF Lite) or openWakeWord (ONNX
/// Runtime; its pre-trained models are CC BY-NC-SA 4.0, non-commercial).
#[derive(Debug)]
pub enum Spotter {
    /// A microWakeWord model (`.tflite`).
    Micro(Box<MicroWakeWord>),
    /// An openWakeWord classifier (`.onnx`).
    Oww(Box<OpenWakeWord>),
}

impl Spotter {
    /// Feeds 16 kHz mono samples in any chunk sizes; the first detection they complete.
    pub fn process(&mut self, samples: &[i16]) -> Result<Option<Detection>, WakeError> {
        match self {
            Spotter::Micro(d) => d.process(samples),
            Spotter::Oww(d) => d.process(samples),
        }
    }

    /// Starts over as on a new stream.
    pub fn reset(&mut self) -> Result<(), WakeError> {
        match self {
            Spotter::Micro(d) => d.reset(),
            Spotter::Oww(d) => {
                d.reset();
                Ok(())
            }
        }
    }

    /// The phrase, for people ("Okay Nabu").
    pub fn wake_word(&self) -> &str {
        match self {
            Spotter::Micro(d) => &d.settings().wake_word,
            Spotter::Oww(d) => &d.settings().wake_word,
        }
    }

    /// What it must pass to fire: microWakeWord's window-mean cutoff, openWakeWord's score
    /// threshold.
    pub fn cutoff(&self) -> f32 {
        match self {
            Spotter::Micro(d) => d.settings().micro.probability_cutoff,
            Spotter::Oww(d) => d.settings().threshold,
        }
    }

    /// Fire over `cutoff` instead of the model's own.
    pub(crate) fn set_cutoff(&mut self, cutoff: f32) {
        match self {
            Spotter::Micro(d) => d.set_cutoff(cutoff),
            Spotter::Oww(d) => d.set_threshold(cutoff),
        }
    }
}

/// An openWakeWord model's phrase from its file name: "hey_jarvis" → "Hey Jarvis".
pub(crate) fn phrase(name: &str) -> String {
    name.split(['_', '-', ' '])
        .filter(|w| !w.is_empty())
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_uppercase().chain(c).collect::<String>())
                .unwrap_or_default()
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phrases_from_file_names() {
        assert_eq!(phrase("alexa"), "Alexa");
        assert_eq!(phrase("hey_jarvis"), "Hey Jarvis");
        assert_eq!(phrase("hey_mycroft"), "Hey Mycroft");
    }
}
