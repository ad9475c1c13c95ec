//! A turn that ends at the speaker's pause, end to end through `hearth run --realtime`: when
//! what was said before the first pause is a request a local intent answers, the turn ends
//! there instead of after the whole hangover; nothing said after that pause is lost (it is
//! the rest of the same request), and a pause inside a request no intent answers yet does
//! not end it.

use super::*;

/// Piper saying `text` the same way every time ([`steady_voice`]: whisper heard a random
/// take of "Set the thermostat" as "Set the firm a stat" now and then), its silence
/// after the last word trimmed off (so that a pause after it is the pause asked for; its
/// onset is kept whole), at 16 kHz.
pub(super) fn said(models: &Path, text: &str) -> Vec<f32> {
    let mut voice = hearth::tts::Voice::load(&steady_voice(models)).expect("the Piper voice loads");
    let pcm = voice.synthesize(text).expect("synthesis").pcm;
    let samples: Vec<f32> = pcm
        .samples
        .iter()
        .map(|&s| f32::from(s) / 32768.0)
        .collect();
    let clip = hearth::audio::resample::resample(&samples, pcm.rate, 16_000).unwrap();
    match clip.iter().rposition(|s| s.abs() > 0.01) {
        Some(end) => clip[..=end].to_vec(),
        None => panic!("Piper said nothing for {text:?}"),
    }
}

/// A recorded fixture (`../shared/audio/`), its silence after the last word trimmed off.
fn recorded(name: &str) -> Vec<f32> {
    let clip = hearth::audio::wav::read_16k_mono(shared().join("audio").join(name)).unwrap();
    let end = clip.iter().rposition(|s| s.abs() > 0.01).unwrap_or(0);
    clip[..=end].to_vec()
}

/// Each clip after its ms of silence, a second longer than [`HANGOVER_MS`] of silence after
/// (so that the hangover, not the end of the input, ends the last utterance: recognition at
/// its pause may take over 2 s on a busy machine), as a 16 kHz WAV in `dir`.
pub(super) fn scene(dir: &Path, parts: Vec<(usize, Vec<f32>)>) -> PathBuf {
    let mut samples = Vec::new();
    for (silence_ms, clip) in parts.into_iter().chain([(HANGOVER_MS + 1000, Vec::new())]) {
        samples.extend(std::iter::repeat_n(0.0f32, silence_ms * 16));
        samples.extend(clip);
    }
    let out = dir.join("scene.wav");
    let mut sink = hearth::audio::wav::WavSink::create(&out, 16_000).unwrap();
    sink.write_f32(&samples).unwrap();
    sink.finalize().unwrap();
    out
}

/// The hangover these scenes run with: long enough that recognition at the pause (about
/// 0.4 s in a debug build on an idle 2-core machine, 0.16 s in release, 2.3 s in a debug
/// build with a third process keeping one of the two cores busy) is in before a pause
/// inside the utterance ends. The pauses inside a request are shorter; the one between
/// requests is longer.
const HANGOVER_MS: usize = 4000;

/// `hearth run --realtime` on `wav` with [`HANGOVER_MS`].
fn realtime(wav: &Path, tag: &str) -> Run {
    realtime_with(wav, tag, "")
}

/// `hearth run --realtime` on `wav` with [`HANGOVER_MS`] and `[listen]` `extra` settings.
fn realtime_with(wav: &Path, tag: &str, extra: &str) -> Run {
    let config = wav.with_file_name("hearth.toml");
    let listen = format!("[listen]\nhangover_ms = {HANGOVER_MS}\n{extra}");
    std::fs::write(&config, listen).unwrap();
    hearth_run_with(
        wav.to_str().unwrap(),
        &format!("{tag}-run"),
        &["--realtime", "--config", config.to_str().unwrap()],
    )
}

fn ended_at_pause(run: &Run) -> usize {
    run.log
        .matches("a local intent at the pause: the turn ends there")
        .count()
}

/// "Turn on the kitchen light.": answered once, from its first pause (256 ms), not after
/// the hangover, on the plan made at the pause.
#[test]
fn a_local_intent_ends_its_turn_at_the_pause() {
    if ready().is_none() {
        return;
    }
    let _one = serial();
    let dir = scratch("early-intent");
    let wav = scene(&dir, vec![(1000, recorded("kitchen.wav"))]);
    let run = realtime(&wav, "early-intent");
    assert_eq!(run.turns.len(), 1, "answered once: {:?}", run.turns);
    let t = &run.turns[0];
    assert_eq!(
        calls(t),
        [(
            "set_light".to_string(),
            serde_json::json!({"room": "kitchen", "on": true})
        )],
        "{t}"
    );
    assert_eq!(ended_at_pause(&run), 1, "{}", run.log);
    // planned once: the plan the agent made of it at the pause is the one its turn acts on
    assert_eq!(
        run.log.matches("the plan made at the pause holds").count(),
        1,
        "{}",
        run.log
    );
    // the turn started once recognition at the pause was in and 448 ms of silence had
    // passed: well before the hangover
    let endpoint = t["timings_ms"]["endpoint"].as_f64().unwrap();
    assert!(
        (440.0..HANGOVER_MS as f64 - 200.0).contains(&endpoint),
        "the turn started {endpoint} ms after the speech: {t}"
    );
}

/// The silence a request a local intent answers waits for in
/// [`a_finished_request_that_may_go_on_ends_when_the_turn_model_hears_it`]: longer than
/// recognition at the pause takes even on a busy machine, so that only the end-of-turn
/// model's word can end the turn before it.
const LONG_INTENT_END_MS: usize = 3000;

/// "Set the thermostat to 19." (which "degrees" may follow in the house's phrase set) with
/// `end_of_turn = "smart-turn-house"`: Smart Turn hears it finished, so its turn ends as
/// soon as it is recognised, not after `intent_end_ms`; without it, it waits that long.
#[test]
fn a_finished_request_that_may_go_on_ends_when_the_turn_model_hears_it() {
    let Some(models) = ready() else { return };
    let _one = serial();
    let intent_end = format!("intent_end_ms = {LONG_INTENT_END_MS}\n");
    let endpoint = |end_of_turn: &str| {
        let tag = format!("early-{end_of_turn}");
        let dir = scratch(&tag);
        let wav = scene(
            &dir,
            vec![(1000, said(&models, "Set the thermostat to 19."))],
        );
        let extra = format!("{intent_end}end_of_turn = \"{end_of_turn}\"\n");
        let run = realtime_with(&wav, &tag, &extra);
        assert_eq!(run.turns.len(), 1, "answered once: {:?}", run.turns);
        let t = &run.turns[0];
        let set = (
            "set_thermostat".to_string(),
            serde_json::json!({"temperature": 19}),
        );
        assert_eq!(calls(t), [set], "{t}");
        assert_eq!(ended_at_pause(&run), 1, "{}", run.log);
        t["timings_ms"]["endpoint"].as_f64().unwrap()
    };
    let heard_finished = endpoint("smart-turn-house");
    assert!(
        heard_finished < LONG_INTENT_END_MS as f64 - 100.0,
        "the turn started {heard_finished} ms after the speech"
    );
    let silence = endpoint("silence");
    assert!(
        silence >= LONG_INTENT_END_MS as f64,
        "without the model the turn waits: {silence} ms"
    );
}

/// The pause between "Turn on the kitchen light" and "and lock the front door": the turn
/// ends at it only when recognition at the pause is in before speech goes on (otherwise
/// the whole is one request, answered once, which is right but not what this test is
/// about). Recognition at that pause took 0.9 s on the 2-core CI machine running the suite
/// (a 1 s pause was not split there once) and 2.2 s here with a third process keeping a core
/// busy (tiny.en loops on this clip to the token cap). Inside [`HANGOVER_MS`].
const REST_PAUSE_MS: usize = 3000;

/// "Turn on the kitchen light … and lock the front door.": the first part is answered at
/// the pause; what follows is the rest of the request (a follow-up the intents answer), not
/// lost and not the first part again.
#[test]
fn speech_after_the_pause_is_the_rest_of_the_request() {
    let Some(models) = ready() else { return };
    let _one = serial();
    let dir = scratch("early-rest");
    let wav = scene(
        &dir,
        vec![
            (1000, recorded("kitchen.wav")),
            (REST_PAUSE_MS, said(&models, "And lock the front door.")),
        ],
    );
    let run = realtime(&wav, "early-rest");
    // the rest ends at its own pause as well
    assert_eq!(ended_at_pause(&run), 2, "{}", run.log);
    assert_eq!(run.turns.len(), 2, "{:?}", run.turns);
    let first = calls(&run.turns[0]);
    let second = calls(&run.turns[1]);
    assert_eq!(
        first,
        [(
            "set_light".to_string(),
            serde_json::json!({"room": "kitchen", "on": true})
        )],
        "{:?}",
        run.turns
    );
    assert_eq!(
        second,
        [(
            "set_lock".to_string(),
            serde_json::json!({"door": "front", "locked": true})
        )],
        "{:?}",
        run.turns
    );
    let heard = run.turns[1]["heard"].as_str().unwrap().to_lowercase();
    assert!(!heard.contains("kitchen"), "answered twice: {heard:?}");
    let light = std::fs::read_to_string(run.state.join("light-kitchen")).unwrap();
    assert_eq!(light.trim(), "on");
}

/// "Set the thermostat … to 19 degrees.": what was said before the pause is no request an
/// intent answers, so the turn waits (a speculative turn the model started on it there is
/// dropped when speech goes on, having done nothing), and the whole request is answered.
#[test]
fn a_pause_inside_an_unfinished_request_does_not_end_it() {
    let Some(models) = ready() else { return };
    let _one = serial();
    let dir = scratch("early-unfinished");
    // the second request in a conversation, as a daemon hears it
    let wav = scene(
        &dir,
        vec![
            (1000, said(&models, "What time is it?")),
            (HANGOVER_MS + 1000, said(&models, "Set the thermostat")),
            (1000, said(&models, "to 19 degrees.")),
        ],
    );
    let run = realtime(&wav, "early-unfinished");
    // the first request ended at its pause (the second did too, unless heard as something
    // no intent answers: "Set the thermostat in 19 degrees" goes to the model)
    assert!(ended_at_pause(&run) >= 1, "{}", run.log);
    // the model may have started on "Set the thermostat" at the pause (when that was
    // recognised before speech went on): that turn was dropped, and did nothing
    let started = run
        .log
        .matches("a speculative turn starts at the pause")
        .count();
    let dropped = run.log.matches("the speculative turn is dropped").count();
    let stood = run.log.matches("the speculative turn stands").count();
    eprintln!("speculative turns: {started} started, {dropped} dropped, {stood} stood");
    assert_eq!(started, dropped + stood, "{}", run.log);
    assert!(stood <= 1, "{}", run.log);
    assert_eq!(run.turns.len(), 2, "{:?}", run.turns);
    assert_eq!(calls(&run.turns[0])[0].0, "get_time", "{:?}", run.turns);
    assert_eq!(
        calls(&run.turns[1]),
        [(
            "set_thermostat".to_string(),
            serde_json::json!({"temperature": 19})
        )],
        "{:?}",
        run.turns
    );
}
