//! The Listen actor fed a signal frame by frame, as Capture feeds it: the utterances it makes.
//! For `tests/fast/end_of_turn.rs` and `benches/turn.rs`.

use hearth::audio::listen::{Listen, ListenArgs, ListenConfig, ListenMsg};
use hearth::voice::{Captured, Frame, ListenEvent, Utterance, FRAME_SAMPLES};
use ractor::Actor;

/// The utterances the Listen actor makes of `signal` (16 kHz mono), to its end.
pub async fn utterances(config: &ListenConfig, signal: &[f32]) -> Result<Vec<Utterance>, String> {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let args = ListenArgs {
        config: config.clone(),
        events: tx,
    };
    let (listen, handle) = Actor::spawn(None, Listen, args)
        .await
        .map_err(|e| format!("Listen does not start: {e}"))?;
    let at = std::time::Instant::now();
    for (i, c) in signal.chunks(FRAME_SAMPLES).enumerate() {
        let mut samples = c.to_vec();
        samples.resize(FRAME_SAMPLES, 0.0);
        let frame = Frame {
            samples: samples.into(),
            echo: None,
            start: (i * FRAME_SAMPLES) as u64,
            at,
        };
        listen
            .cast(ListenMsg::Captured(Captured::Frame(frame)))
            .map_err(|e| e.to_string())?;
    }
    listen
        .cast(ListenMsg::Captured(Captured::End))
        .map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    while let Some(ev) = rx.recv().await {
        match ev {
            ListenEvent::Utterance(u) => out.push(u),
            ListenEvent::End => break,
            _ => {}
        }
    }
    listen.stop(None);
    let _ = handle.await;
    Ok(out)
}
