//! One voice turn as `hearth run` reports it: what was heard, the agent's turn and the
//! stage timings.

use crate::agent::Turn;

/// Stage timings of one turn, ms from the end of speech in the input (the endpointer's
/// decision minus its hangover is where the speech ended).
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct TurnTimings {
    /// End of speech → the turn started: the hangover, or, for a request a local intent
    /// answers, its recognition at the pause and `[listen] intent_end_ms` of silence,
    /// whichever is later.
    pub endpoint: f64,
    /// Speech recognition: the recogniser's own time.
    pub stt: f64,
    /// Speech recognition after the endpoint: the wait for the transcript (less than `stt`
    /// when recognition started at a pause, before the hangover was over).
    pub stt_wait: f64,
    /// End of speech → the model's first token (of the turn's first hop).
    pub first_token: Option<f64>,
    /// End of speech → the first executed tool finished.
    pub tool_done: Option<f64>,
    /// End of speech → the first TTS audio chunk.
    pub first_tts_chunk: Option<f64>,
    /// End of speech → the first reply sample reached the output.
    pub first_audio: Option<f64>,
    /// End of speech → the first audible reply sample reached the output (`first_audio`
    /// plus the voice's leading silence).
    pub first_voice: Option<f64>,
}

/// One voice turn, as `hearth run` reports it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct VoiceTurn {
    /// What was heard.
    pub heard: String,
    /// The recogniser's phrase pass (both texts, both log-likelihoods, which was taken), when
    /// it held the transcript to the house's phrase set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub phrase_pass: Option<wyoming::PhrasePass>,
    /// The agent's turn (reply, hops, calls).
    pub turn: Option<Turn>,
    /// Why the turn failed, if it did.
    pub error: Option<String>,
    /// The user spoke over the reply (barge-in): its playback was stopped and what was
    /// still being generated or synthesised was cancelled.
    pub interrupted: bool,
    /// Stage timings.
    pub timings_ms: TurnTimings,
    /// Where the utterance began in the input, seconds on the input clock (the first sample
    /// Listen kept, its pre-roll included).
    pub start_s: f64,
    /// Where its speech ended in the input, seconds on the input clock (before the hangover).
    pub end_s: f64,
}
