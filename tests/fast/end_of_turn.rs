//! The end of a turn with Smart Turn v3.2 on the real model (`scripts/fetch-models vad turn
//! tts`), through the Listen actor as the daemon runs it (the Silero VAD, the end-of-turn
//! model asked at the first pause): a finished command ends at that pause instead of after
//! the whole hangover, and a pause inside a command does not end it.
//! `HEARTH_SKIP_REAL_MODEL=1` skips locally; CI never sets it.
#![cfg(feature = "piper")]

use std::path::Path;

use hearth::audio::listen::{ListenConfig, TurnModel, VadKind};
use hearth::audio::silero::SILERO_FILE;
use hearth::audio::smart_turn::SMART_TURN_FILE;
use hearth::voice::{ListenEvent, Utterance, SAMPLE_RATE};

/// The daemon's Listen config with both models, or `None` when they are missing and the
/// skip is asked for.
fn config(end_of_turn: bool) -> Option<ListenConfig> {
    let dir = hearth::models::model_dir().expect("a model directory");
    let (vad, turn) = (dir.join(SILERO_FILE), dir.join(SMART_TURN_FILE));
    let found = hearth::onnx::find_library(None, |k| std::env::var_os(k), &[dir])
        .map_err(|e| e.to_string())
        .and_then(|lib| match (vad.is_file(), turn.is_file()) {
            (true, true) => Ok(lib),
            _ => Err(format!(
                "{} or {} is missing",
                vad.display(),
                turn.display()
            )),
        });
    let lib =
        crate::common::model::or_skip(found, "an end-of-turn test", "run scripts/fetch-models")?;
    let config = ListenConfig {
        vad: VadKind::Silero {
            model: vad,
            ort_library: Some(lib.clone()),
        },
        ..ListenConfig::default()
    };
    Some(match end_of_turn {
        true => config.with_end_of_turn(TurnModel {
            model: turn,
            ort_library: Some(lib),
        }),
        false => config,
    })
}

fn kitchen() -> Vec<f32> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/audio/kitchen.wav");
    hearth::audio::wav::read_16k_mono(p).unwrap()
}

fn silence(ms: usize) -> Vec<f32> {
    vec![0.0; ms * SAMPLE_RATE as usize / 1000]
}

/// "Turn on the … kitchen light.": 400 ms of silence after "the" (0.62 s in: the gap before
/// the /k/ of "kitchen"), half a second of silence before, one and a half after.
fn paused_after_the() -> Vec<f32> {
    let speech = kitchen();
    let cut = 62 * SAMPLE_RATE as usize / 100;
    let mut signal = silence(500);
    signal.extend(&speech[..cut]);
    signal.extend(silence(400));
    signal.extend(&speech[cut..]);
    signal.extend(silence(1500));
    signal
}

/// The utterances the Listen actor makes of `signal`.
async fn utterances(config: ListenConfig, signal: &[f32]) -> Vec<Utterance> {
    crate::common::listen::utterances(&config, signal)
        .await
        .expect("Listen runs with both models")
}

/// The silence an utterance holds after its last voiced frame, ms: what was waited for.
fn waited_ms(u: &Utterance) -> u64 {
    (u.start + u.samples.len() as u64 - u.speech_end) * 1000 / u64::from(SAMPLE_RATE)
}

#[tokio::test]
async fn a_finished_command_ends_at_the_first_pause() {
    let (Some(with), Some(without)) = (config(true), config(false)) else {
        return;
    };
    let mut signal = silence(500);
    signal.extend(kitchen());
    signal.extend(silence(1500));
    let ended = utterances(with.clone(), &signal).await;
    assert_eq!(ended.len(), 1, "{} utterances", ended.len());
    // the pause at which the model is asked (early_ms), not the hangover
    assert!(
        waited_ms(&ended[0]) <= u64::from(with.early_ms) + 32,
        "waited {} ms",
        waited_ms(&ended[0])
    );
    let waited = utterances(without, &signal).await;
    assert!(
        waited_ms(&waited[0]) >= u64::from(with.hangover_ms),
        "waited {} ms",
        waited_ms(&waited[0])
    );
}

#[tokio::test]
async fn a_pause_inside_a_command_does_not_end_it() {
    let Some(with) = config(true) else { return };
    let signal = paused_after_the();
    let heard = utterances(with, &signal).await;
    assert_eq!(
        heard.len(),
        1,
        "the pause ended the turn: {} utterances",
        heard.len()
    );
    let end = heard[0].start + heard[0].samples.len() as u64;
    assert!(
        end as usize >= signal.len() - silence(1500).len(),
        "the utterance stops before \"kitchen light\""
    );
}

#[tokio::test]
async fn for_the_house_requests_the_model_is_asked_and_its_word_ends_nothing() {
    let (Some(with), Some(without)) = (config(true), config(false)) else {
        return;
    };
    let Some(turn) = with.end_of_turn.clone() else {
        panic!("config(true) has the model")
    };
    let house = without.clone().with_house_end_of_turn(turn);
    assert_eq!(
        house.early_ms, without.early_ms,
        "recognition starts as before"
    );
    // Listen's word on the speech (start, end), asked `after_ms` into the pause after it
    let asked = |signal: Vec<f32>, (start, end): (u64, u64), after_ms: u64| {
        let house = house.clone();
        async move {
            let at = end + after_ms * u64::from(SAMPLE_RATE) / 1000;
            let events = crate::common::listen::events_asking(&house, &signal, &[(at, start, end)])
                .await
                .expect("Listen runs with both models");
            let finished: Vec<(u64, u64)> = (events.iter())
                .filter_map(|e| match e {
                    ListenEvent::Finished { start, speech_end } => Some((*start, *speech_end)),
                    _ => None,
                })
                .collect();
            (events, finished)
        }
    };
    let speech_of = |events: &[ListenEvent]| {
        let told = outline(events);
        let utterances: Vec<&Utterance> = (events.iter())
            .filter_map(|e| match e {
                ListenEvent::Utterance(u) => Some(u),
                _ => None,
            })
            .collect();
        match utterances[..] {
            [u] => (u.start, u.speech_end, waited_ms(u)),
            _ => panic!("one utterance: {told}"),
        }
    };

    // the finished command: asked 500 ms into the pause (recognition done), the model hears
    // it finished; asked at 100 ms, its word waits for the 200 ms it hears; never asked,
    // nothing; and the utterance still waits for the hangover each time
    let mut signal = silence(500);
    signal.extend(kitchen());
    signal.extend(silence(1500));
    let plain = crate::common::listen::events(&house, &signal)
        .await
        .unwrap();
    let (start, end, _) = speech_of(&plain);
    assert!(!plain
        .iter()
        .any(|e| matches!(e, ListenEvent::Finished { .. })));
    for after_ms in [500, 100] {
        let (events, finished) = asked(signal.clone(), (start, end), after_ms).await;
        assert_eq!(
            finished,
            [(start, end)],
            "asked {after_ms} ms in: {}",
            outline(&events)
        );
        let (_, _, waited) = speech_of(&events);
        assert!(waited >= u64::from(house.hangover_ms), "waited {waited} ms");
    }
    // asked about other speech, nothing
    let (events, finished) = asked(signal.clone(), (start, end - 512), 500).await;
    assert!(finished.is_empty(), "{}", outline(&events));

    // "Turn on the … kitchen light.": asked at the pause after "the", not finished
    let signal = paused_after_the();
    let plain = crate::common::listen::events(&house, &signal)
        .await
        .unwrap();
    let first_pause = (plain.iter())
        .find_map(|e| match e {
            ListenEvent::Pause(p) => Some((p.start, p.speech_end)),
            _ => None,
        })
        .unwrap_or_else(|| panic!("a pause after \"the\": {}", outline(&plain)));
    let (events, finished) = asked(signal, first_pause, 300).await;
    assert!(finished.is_empty(), "{}", outline(&events));
}

/// Listen's events in short: each with where its speech starts and ends (samples).
fn outline(events: &[ListenEvent]) -> String {
    let each = events.iter().map(|e| match e {
        ListenEvent::Pause(u) => format!("Pause {}..{}", u.start, u.speech_end),
        ListenEvent::Utterance(u) => format!("Utterance {}..{}", u.start, u.speech_end),
        ListenEvent::Finished { start, speech_end } => format!("Finished {start}..{speech_end}"),
        ListenEvent::Resumed { start } => format!("Resumed {start}"),
        other => format!("{other:?}"),
    });
    each.collect::<Vec<_>>().join(", ")
}
