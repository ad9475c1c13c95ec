//! The Listen actor fed a signal frame by frame, as Capture feeds it: the events and
//! utterances it makes.
//! For `tests/fast/end_of_turn.rs` and `benches/turn.rs`.

use hearth::audio::listen::{Listen, ListenArgs, ListenConfig, ListenMsg};
use hearth::voice::{Captured, Frame, ListenEvent, Utterance, FRAME_SAMPLES};
use ractor::Actor;

/// The utterances the Listen actor makes of `signal` (16 kHz mono), to its end.
pub async fn utterances(config: &ListenConfig, signal: &[f32]) -> Result<Vec<Utterance>, String> {
    let events = events(config, signal).await?;
    Ok((events.into_iter())
        .filter_map(|e| match e {
            ListenEvent::Utterance(u) => Some(u),
            _ => None,
        })
        .collect())
}

/// Every event the Listen actor reports on `signal` (16 kHz mono), in order, to its end
/// (`End` left out).
pub async fn events(config: &ListenConfig, signal: &[f32]) -> Result<Vec<ListenEvent>, String> {
    events_asking(config, signal, &[]).await
}

/// [`events`], with the end-of-turn model asked about the speech (`start`, `speech_end`)
/// right after the frame that holds sample `at`, for each `(at, start, speech_end)` of `asks`
/// ([`ListenMsg::AskFinished`], as the conductor asks it).
pub async fn events_asking(
    config: &ListenConfig,
    signal: &[f32],
    asks: &[(u64, u64, u64)],
) -> Result<Vec<ListenEvent>, String> {
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
        let frame_samples = (i * FRAME_SAMPLES) as u64..((i + 1) * FRAME_SAMPLES) as u64;
        for &(_, start, speech_end) in asks.iter().filter(|a| frame_samples.contains(&a.0)) {
            listen
                .cast(ListenMsg::AskFinished { start, speech_end })
                .map_err(|e| e.to_string())?;
        }
    }
    listen
        .cast(ListenMsg::Captured(Captured::End))
        .map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    while let Some(ev) = rx.recv().await {
        match ev {
            ListenEvent::End => break,
            ev => out.push(ev),
        }
    }
    listen.stop(None);
    let _ = handle.await;
    Ok(out)
}
