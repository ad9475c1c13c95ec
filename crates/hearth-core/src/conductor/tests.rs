//! The conductor driven by hand: a scripted Listen, Stt, agent, Tts and Playback, each
//! answer fed back as the input the driver would feed. No actor, no task, no model.

use std::time::{Duration, Instant};

use super::*;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use crate::agent::{Handled, Timings, Turn};
use hearth_phrases::Whole;

const S: u64 = SAMPLE_RATE as u64;

fn policy(once: bool) -> Policy {
    Policy {
        once,
        intent_end: Some(Duration::from_millis(300)),
        phrase_end: None,
        ask_finished: false,
        wake_check: true,
        conversation_idle: Duration::from_secs(120),
        muted: Arc::new(AtomicBool::new(false)),
        sessions: "voice".into(),
    }
}

/// Every utterance is a request (no wake words).
fn open_mic() -> Conductor {
    Conductor::new(policy(false), Attention::new(false, Duration::ZERO))
}

/// Wake words on, a five-second follow-up window.
fn with_wake_words() -> Conductor {
    Conductor::new(policy(false), Attention::new(true, Duration::from_secs(5)))
}

/// Speech from `start` s to `end` s on the input clock, which starts at `t0` on the wall
/// clock, endpointed after 0.64 s of hangover.
fn utterance(start: f64, end: f64, t0: Instant) -> Utterance {
    let (start, speech_end) = ((start * S as f64) as u64, (end * S as f64) as u64);
    Utterance {
        samples: vec![0.0; (speech_end - start + S * 64 / 100) as usize].into(),
        start,
        speech_end,
        endpointed_at: t0 + Duration::from_secs_f64(end + 0.64),
    }
}

/// `secs` on the wall clock after `t0`.
fn at(t0: Instant, secs: f64) -> Instant {
    t0 + Duration::from_secs_f64(secs)
}

fn heard(text: &str) -> Result<Heard, String> {
    heard_as(text, Whole::No)
}

/// Heard, standing against the house's phrase set as `whole`.
fn heard_as(text: &str, whole: Whole) -> Result<Heard, String> {
    Ok(Heard {
        text: text.into(),
        endpointed_at: Instant::now(),
        stt_ms: 120.0,
        phrase_pass: None,
        whole,
    })
}

fn answer(reply: &str) -> Result<Turn, String> {
    Ok(Turn {
        path: Handled::Intent,
        reply: reply.into(),
        hops: Vec::new(),
        timings_ms: Timings::default(),
        cancelled: false,
        unfounded: None,
    })
}

fn sentence(text: &str) -> Option<Speakable> {
    Speakable::sanitize(text)
}

fn done(reply: ReplyId, audio_secs: f64) -> Input {
    Input::Tts(TtsEvent::SentenceDone {
        reply,
        index: 0,
        chars: 10,
        audio_secs,
        synth_ms: 80.0,
        lead_ms: 5.0,
    })
}

fn started(reply: ReplyId, at: Instant) -> Input {
    Input::Playback(PlaybackEvent::Started { reply, at })
}

fn played(reply: ReplyId, at: Instant) -> Input {
    Input::Playback(PlaybackEvent::Stopped {
        reply,
        at,
        interrupted: false,
    })
}

/// "Hey Jarvis" ending at `end_s` on the input clock, detected then.
fn wake_word(end_s: f64, t0: Instant) -> Input {
    Input::Wake(WakeWord {
        name: "Hey Jarvis".into(),
        probability: 0.9,
        end: (end_s * S as f64) as u64,
        at: at(t0, end_s),
    })
}

/// The recognitions asked for: job, where the utterance starts (samples), hold.
fn recognitions(actions: &[Action]) -> Vec<(Job, u64, Hold)> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::Recognise {
                job,
                utterance,
                hold,
            } => Some((*job, utterance.start, *hold)),
            _ => None,
        })
        .collect()
}

/// The one agent turn asked for: job, request, held.
fn asked(actions: &[Action]) -> Option<(Job, String, bool)> {
    let asks: Vec<_> = actions
        .iter()
        .filter_map(|a| match a {
            Action::Ask {
                job, request, held, ..
            } => Some((*job, request.clone(), *held)),
            _ => None,
        })
        .collect();
    assert!(asks.len() <= 1, "one ask at a time: {actions:?}");
    asks.into_iter().next()
}

/// The sentences spoken, and the reply they belong to.
fn spoken(actions: &[Action]) -> Vec<(ReplyId, String)> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::Speak { reply, sentence } => Some((*reply, sentence.as_str().to_string())),
            _ => None,
        })
        .collect()
}

fn turns(actions: &[Action]) -> Vec<&VoiceTurn> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::Turn(t) => Some(&**t),
            _ => None,
        })
        .collect()
}

fn has(actions: &[Action], want: impl Fn(&Action) -> bool) -> bool {
    actions.iter().any(want)
}

fn activity(actions: &[Action]) -> Vec<Activity> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::Publish(Event::Activity { activity }) => Some(*activity),
            _ => None,
        })
        .collect()
}

/// A request said from `start` s for 1.5 s, heard as `transcript` and asked as `request`:
/// the agent's job and the turn's reply id, once the agent has sent its first sentence.
fn ask_and_start_reply(
    c: &mut Conductor,
    t0: Instant,
    (transcript, request): (&str, &str),
    start: f64,
) -> (Job, ReplyId) {
    let u = utterance(start, start + 1.5, t0);
    let now = u.endpointed_at;
    let a = c.on(Input::Listen(ListenEvent::Utterance(u)), now);
    let [(stt, _, Hold::House)] = recognitions(&a)[..] else {
        panic!("the request is recognised: {a:?}");
    };
    let heard = heard(transcript);
    let a = c.on(Input::Heard { job: stt, heard }, now);
    let (job, asked_for, held) = asked(&a).expect("the agent is asked");
    assert_eq!((asked_for.as_str(), held), (request, false));
    let published =
        |a: &Action| matches!(a, Action::Publish(Event::Heard { text }) if text == request);
    assert!(has(&a, published));
    let sentence = sentence("It is on.");
    let a = c.on(Input::Sentence { job, sentence }, now);
    let [(reply, _)] = spoken(&a)[..] else {
        panic!("the sentence is spoken: {a:?}");
    };
    (job, reply)
}

/// The agent sends no more sentences and its turn ends with `turn`: what the conductor does.
fn agent_ends(
    c: &mut Conductor,
    job: Job,
    turn: Result<Turn, String>,
    now: Instant,
) -> Vec<Action> {
    let none = c.on(
        Input::Sentence {
            job,
            sentence: None,
        },
        now,
    );
    assert!(
        turns(&none).is_empty(),
        "the turn waits for the agent's end: {none:?}"
    );
    c.on(Input::Answered { job, turn }, now)
}

/// `paused`, reported at the speaker's pause, recognised as `transcript`: the job of the
/// check whether a local intent answers it.
fn heard_at_pause(c: &mut Conductor, t0: Instant, paused: &Utterance, transcript: &str) -> Job {
    heard_at_pause_as(c, t0, paused, transcript, Whole::No)
}

/// The same, the transcript standing against the house's phrase set as `whole`.
fn heard_at_pause_as(
    c: &mut Conductor,
    t0: Instant,
    paused: &Utterance,
    transcript: &str,
    whole: Whole,
) -> Job {
    let a = c.on(Input::Listen(ListenEvent::Pause(paused.clone())), t0);
    let [(stt, _, Hold::House)] = recognitions(&a)[..] else {
        panic!("recognition starts at the pause: {a:?}");
    };
    let heard = heard_as(transcript, whole);
    let a = c.on(Input::Heard { job: stt, heard }, t0);
    let Some(Action::CheckIntent { job, request, .. }) = a.first() else {
        panic!("the agent is asked whether an intent answers: {a:?}");
    };
    assert_eq!(request, transcript);
    *job
}

/// The same, and no local intent answers it: the agent turn asked at the pause, held.
fn speculate_at_pause(c: &mut Conductor, t0: Instant, paused: &Utterance, transcript: &str) -> Job {
    let check = heard_at_pause(c, t0, paused, transcript);
    let a = c.on(
        Input::Intent {
            job: check,
            intent: false,
            first: None,
            planned: None,
        },
        t0,
    );
    let (job, _, held) = asked(&a).expect("the model is asked at the pause");
    assert!(held, "a turn asked at the pause waits for its go-ahead");
    job
}

#[test]
fn a_request_is_recognised_answered_spoken_and_played_then_reported() {
    let (mut c, t0) = (open_mic(), Instant::now());
    assert_eq!(activity(&c.start()), [Activity::Listening]);
    let (job, reply) = ask_and_start_reply(
        &mut c,
        t0,
        ("turn on the kitchen light", "turn on the kitchen light"),
        1.0,
    );
    let a = agent_ends(&mut c, job, answer("It is on."), t0);
    // the reply is published (its pipeline's, not the agent's); Tts has not finished it
    assert!(
        matches!(&a[..], [Action::Publish(Event::Replied { text })] if text == "It is on."),
        "{a:?}"
    );
    let a = c.on(done(reply, 1.2), t0);
    assert!(
        matches!(a[..], [Action::EndOfReply(r)] if r == reply),
        "{a:?}"
    );
    let a = c.on(started(reply, t0 + Duration::from_millis(5)), t0);
    assert_eq!(activity(&a), [Activity::Speaking]);
    let a = c.on(played(reply, t0 + Duration::from_secs(2)), t0);
    let [t] = turns(&a)[..] else {
        panic!("the turn is reported once played: {a:?}");
    };
    assert_eq!(t.heard, "turn on the kitchen light");
    assert_eq!(t.turn.as_ref().map(|t| t.reply.as_str()), Some("It is on."));
    assert!(t.error.is_none() && !t.interrupted);
    assert!(t.timings_ms.first_audio.is_some() && t.timings_ms.first_tts_chunk.is_some());
    assert_eq!((t.start_s, t.end_s), (1.0, 2.5));
    assert_eq!(activity(&a), [Activity::Listening]);
    assert!(!c.is_over());
}

#[test]
fn a_barge_in_stops_the_reply_and_its_speech_is_answered_next() {
    let (mut c, t0) = (open_mic(), Instant::now());
    let (job, reply) = ask_and_start_reply(&mut c, t0, ("tell me a story", "tell me a story"), 1.0);
    c.on(done(reply, 3.0), t0);
    c.on(started(reply, t0), t0);
    let a = c.on(Input::Listen(ListenEvent::BargeIn { at: t0 }), t0);
    assert!(has(&a, |a| matches!(a, Action::StopReply(_))), "{a:?}");
    let a = c.on(
        Input::Listen(ListenEvent::Utterance(utterance(5.0, 6.0, t0))),
        t0,
    );
    assert!(
        recognitions(&a).is_empty(),
        "heard during the turn: it waits: {a:?}"
    );
    let a = agent_ends(&mut c, job, Err("cancelled".into()), t0);
    let [t] = turns(&a)[..] else {
        panic!("an interrupted turn does not wait for its playback: {a:?}");
    };
    assert!(t.interrupted);
    let [(_, start, Hold::House)] = recognitions(&a)[..] else {
        panic!("the barge-in's speech is recognised next: {a:?}");
    };
    assert_eq!(start, 5 * S);
    // a late chunk's end of the stopped reply changes nothing
    assert!(c.on(done(reply, 1.0), t0).is_empty());
}

#[test]
fn with_wake_words_speech_over_a_reply_plays_on_and_a_wake_word_stops_it() {
    let (mut c, t0) = (with_wake_words(), Instant::now());
    let a = c.on(wake_word(1.0, t0), t0);
    assert!(has(&a, |a| matches!(a, Action::Cue(Cue::Earcon))));
    let (_, reply) = ask_and_start_reply(
        &mut c,
        t0,
        ("Hey Jarvis, what time is it?", "what time is it?"),
        0.9,
    );
    c.on(done(reply, 1.0), t0);
    let a = c.on(Input::Listen(ListenEvent::BargeIn { at: t0 }), t0);
    assert!(
        !has(&a, |a| matches!(a, Action::StopReply(_))),
        "the television talks: {a:?}"
    );
    let a = c.on(wake_word(5.0, t0), t0);
    assert!(has(&a, |a| matches!(a, Action::StopReply(_))), "{a:?}");
    assert!(has(&a, |a| matches!(a, Action::Cue(Cue::Earcon))));
}

#[test]
fn stop_said_at_a_pause_during_a_reply_stops_it() {
    let (mut c, t0) = (with_wake_words(), Instant::now());
    c.on(Input::ListenCalled, t0);
    let (_, reply) = ask_and_start_reply(&mut c, t0, ("tell me a story", "tell me a story"), 0.5);
    c.on(done(reply, 5.0), t0);
    let a = c.on(
        Input::Listen(ListenEvent::Pause(utterance(4.0, 4.5, t0))),
        t0,
    );
    let [(check, _, Hold::Open)] = recognitions(&a)[..] else {
        panic!("a short stretch of speech is checked for stop: {a:?}");
    };
    let a = c.on(
        Input::Heard {
            job: check,
            heard: heard("Stop."),
        },
        t0,
    );
    assert!(has(&a, |a| matches!(a, Action::StopReply(_))), "{a:?}");
}

#[test]
fn a_local_intent_heard_at_the_pause_ends_the_turn_there_and_is_answered_once() {
    let (mut c, t0) = (open_mic(), Instant::now());
    let paused = utterance(1.0, 2.5, t0);
    let check = heard_at_pause(&mut c, t0, &paused, "Turn on the kitchen light.");
    let plan = crate::agent::Planned::sample("Turn on the kitchen light.");
    let a = c.on(
        Input::Intent {
            job: check,
            intent: true,
            first: sentence("The kitchen light is on."),
            planned: Some(plan.clone()),
        },
        t0,
    );
    // its first words are made ready meanwhile; nothing is said yet
    assert!(
        matches!(&a[..], [Action::Prepare(s)] if s.as_str() == "The kitchen light is on."),
        "the turn waits for intent_end of silence: {a:?}"
    );
    let end = c.deadline().expect("a deadline at the end of intent_end");
    assert_eq!(end, at(t0, 2.5 + 0.3), "300 ms after the speech ended");
    let a = c.on(Input::Tick, end);
    assert!(
        recognitions(&a).is_empty(),
        "the early transcript is the turn's: {a:?}"
    );
    let (job, request, _) = asked(&a).expect("the turn starts at the pause");
    assert_eq!(request, "Turn on the kitchen light.");
    let planned = a.iter().find_map(|a| match a {
        Action::Ask { planned, .. } => Some(planned.clone()),
        _ => None,
    });
    assert_eq!(
        planned,
        Some(Some(plan)),
        "the plan made at the pause goes with the request"
    );
    // the same utterance, endpointed after the hangover with nothing more said
    let a = c.on(Input::Listen(ListenEvent::Utterance(paused)), end);
    assert!(a.is_empty(), "already answered: {a:?}");
    let a = agent_ends(&mut c, job, answer(""), end);
    assert_eq!(turns(&a).len(), 1);
    assert!(recognitions(&a).is_empty(), "nothing more to answer: {a:?}");
}

/// A conductor whose whole requests that no longer one continues end 100 ms into the pause
/// (the others a local intent answers: 300 ms), and that asks the end-of-turn model about
/// those that may go on.
fn with_phrase_end() -> Conductor {
    let policy = Policy {
        phrase_end: Some(Duration::from_millis(100)),
        ask_finished: true,
        ..policy(false)
    };
    Conductor::new(policy, Attention::new(false, Duration::ZERO))
}

#[test]
fn the_intent_check_says_when_the_turn_would_end() {
    let t0 = Instant::now();
    let paused = utterance(1.0, 2.5, t0);
    let hangover_only = Policy {
        intent_end: None,
        ..policy(false)
    };
    let hangover_only = Conductor::new(hangover_only, Attention::new(false, Duration::ZERO));
    for (mut c, whole, ends_at) in [
        (open_mic(), Whole::No, Some(at(t0, 2.5 + 0.3))),
        (with_phrase_end(), Whole::Ends, Some(at(t0, 2.5 + 0.1))),
        (with_phrase_end(), Whole::MayGoOn, Some(at(t0, 2.5 + 0.3))),
        (hangover_only, Whole::Ends, None),
    ] {
        let a = c.on(Input::Listen(ListenEvent::Pause(paused.clone())), t0);
        let [(stt, _, Hold::House)] = recognitions(&a)[..] else {
            panic!("recognition starts at the pause: {a:?}");
        };
        let heard = heard_as("Set a timer for ten minutes.", whole);
        let a = c.on(Input::Heard { job: stt, heard }, t0);
        let Some(Action::CheckIntent { ends_at: said, .. }) = a.first() else {
            panic!("the agent is asked whether an intent answers: {a:?}");
        };
        assert_eq!(*said, ends_at, "{whole:?}");
    }
}

fn intent_checked(c: &mut Conductor, job: Job, now: Instant) -> Vec<Action> {
    let first = None;
    c.on(
        Input::Intent {
            job,
            intent: true,
            first,
            planned: None,
        },
        now,
    )
}

#[test]
fn a_request_that_may_go_on_ends_at_the_pause_when_the_turn_model_hears_it_finished() {
    let t0 = Instant::now();
    let paused = utterance(1.0, 2.5, t0);
    let finished = |u: &Utterance| {
        Input::Listen(ListenEvent::Finished {
            start: u.start,
            speech_end: u.speech_end,
        })
    };
    let asked_finished = |a: &[Action]| {
        (a.iter())
            .filter_map(|a| match a {
                Action::AskFinished { start, speech_end } => Some((*start, *speech_end)),
                _ => None,
            })
            .collect::<Vec<_>>()
    };
    let request = "Set a timer for ten minutes.";

    // a whole request a longer one may continue: the end-of-turn model is asked about its
    // speech, and the turn waiting for intent_end ends when it is heard finished
    let mut c = with_phrase_end();
    let check = heard_at_pause_as(&mut c, t0, &paused, request, Whole::MayGoOn);
    let a = intent_checked(&mut c, check, at(t0, 2.55));
    assert_eq!(
        asked_finished(&a),
        [(paused.start, paused.speech_end)],
        "{a:?}"
    );
    assert!(asked(&a).is_none());
    assert_eq!(c.deadline(), Some(at(t0, 2.5 + 0.3)));
    let a = c.on(finished(&paused), at(t0, 2.7));
    let (_, asked_for, _) = asked(&a).expect("the turn starts when it is heard finished");
    assert_eq!(asked_for, request);
    // the utterance, endpointed after the hangover, is not answered twice
    let a = c.on(
        Input::Listen(ListenEvent::Utterance(paused.clone())),
        at(t0, 3.2),
    );
    assert!(a.is_empty(), "already answered: {a:?}");

    // one that ends there, or is not a whole request of the set: nothing to ask
    for whole in [Whole::Ends, Whole::No] {
        let mut c = with_phrase_end();
        let check = heard_at_pause_as(&mut c, t0, &paused, request, whole);
        let a = intent_checked(&mut c, check, at(t0, 2.55));
        assert!(asked_finished(&a).is_empty(), "{whole:?}: {a:?}");
    }

    // without the end-of-turn model for the house's requests, nothing to ask either
    let policy = Policy {
        phrase_end: Some(Duration::from_millis(100)),
        ..policy(false)
    };
    let mut c = Conductor::new(policy, Attention::new(false, Duration::ZERO));
    let check = heard_at_pause_as(&mut c, t0, &paused, request, Whole::MayGoOn);
    let a = intent_checked(&mut c, check, at(t0, 2.55));
    assert!(asked_finished(&a).is_empty(), "{a:?}");

    // the word about another pause's speech changes nothing
    let mut c = with_phrase_end();
    let check = heard_at_pause_as(&mut c, t0, &paused, request, Whole::MayGoOn);
    intent_checked(&mut c, check, at(t0, 2.55));
    let a = c.on(finished(&utterance(1.0, 2.2, t0)), at(t0, 2.7));
    assert!(a.is_empty(), "{a:?}");
    assert_eq!(c.deadline(), Some(at(t0, 2.5 + 0.3)));
}

#[test]
fn the_rest_of_a_request_ended_at_its_pause_is_answered_unless_it_asks_nothing() {
    for (rest, asks) in [("Please.", false), ("and lock the front door", true)] {
        let (mut c, t0) = (open_mic(), Instant::now());
        let paused = utterance(1.0, 2.5, t0);
        let check = heard_at_pause(&mut c, t0, &paused, "Turn on the kitchen light.");
        let intent = Input::Intent {
            job: check,
            intent: true,
            first: None,
            planned: None,
        };
        assert!(c.on(intent, t0).is_empty(), "{rest}");
        let end = c.deadline().expect("a deadline at the end of intent_end");
        let (job, _, _) = asked(&c.on(Input::Tick, end)).expect("the turn starts at the pause");
        // the speaker went on: the same utterance ends later
        let whole = utterance(1.0, 3.5, t0);
        let now = whole.endpointed_at;
        let mut a = c.on(Input::Listen(ListenEvent::Utterance(whole)), now);
        a.extend(agent_ends(&mut c, job, answer(""), now));
        let [(stt, _, _)] = recognitions(&a)[..] else {
            panic!("{rest}: the rest is recognised: {a:?}");
        };
        let a = c.on(
            Input::Heard {
                job: stt,
                heard: heard(rest),
            },
            now,
        );
        assert_eq!(asked(&a).is_some(), asks, "{rest}: {a:?}");
        // what asks nothing is reported as heard, unanswered
        let reported = turns(&a)
            .iter()
            .any(|t| t.heard == rest && t.turn.is_none());
        assert_eq!(reported, !asks, "{rest}: {a:?}");
    }
}

#[test]
fn a_speculative_turn_stands_when_the_utterance_ends_with_the_same_words() {
    let (mut c, t0) = (open_mic(), Instant::now());
    let paused = utterance(1.0, 2.5, t0);
    let job = speculate_at_pause(&mut c, t0, &paused, "Tell me a joke.");
    // what it writes before it stands waits
    assert!(c
        .on(
            Input::Sentence {
                job,
                sentence: sentence("Why not.")
            },
            t0
        )
        .is_empty());
    let a = c.on(Input::Listen(ListenEvent::Utterance(paused)), t0);
    assert!(
        has(
            &a,
            |a| matches!(a, Action::GoAhead { job: j, go: true } if *j == job)
        ),
        "{a:?}"
    );
    assert!(asked(&a).is_none(), "not asked twice: {a:?}");
    assert_eq!(spoken(&a).len(), 1, "the sentence kept is spoken: {a:?}");
}

#[test]
fn speech_that_resumes_drops_the_speculative_turn() {
    let (mut c, t0) = (open_mic(), Instant::now());
    let job = speculate_at_pause(&mut c, t0, &utterance(1.0, 2.5, t0), "Tell me");
    let a = c.on(Input::Listen(ListenEvent::Resumed { start: S }), t0);
    assert!(
        has(
            &a,
            |a| matches!(a, Action::GoAhead { job: j, go: false } if *j == job)
        ),
        "{a:?}"
    );
    // the whole utterance is recognised afresh
    let a = c.on(
        Input::Listen(ListenEvent::Utterance(utterance(1.0, 4.0, t0))),
        t0,
    );
    assert_eq!(recognitions(&a).len(), 1, "{a:?}");
}

#[test]
fn utterances_dropped_during_a_long_turn_are_owned_up_to_then_the_latest_answered() {
    let (mut c, t0) = (open_mic(), Instant::now());
    let (job, reply) =
        ask_and_start_reply(&mut c, t0, ("run the long job", "run the long job"), 1.0);
    for i in 0..4 {
        let start = 3.0 + 2.0 * f64::from(i);
        c.on(
            Input::Listen(ListenEvent::Utterance(utterance(start, start + 1.0, t0))),
            t0,
        );
    }
    agent_ends(&mut c, job, answer("Done."), t0);
    c.on(done(reply, 1.0), t0);
    c.on(started(reply, t0), t0);
    let a = c.on(played(reply, t0), t0);
    assert_eq!(turns(&a).len(), 1);
    let [(notice, said)] = &spoken(&a)[..] else {
        panic!("one utterance of four was dropped: hearth says so: {a:?}");
    };
    assert_eq!(said, MISSED);
    assert!(
        !has(&a, |x| matches!(x, Action::Cue(_))),
        "a notice answers what was said: no bell: {a:?}"
    );
    assert!(
        recognitions(&a).is_empty(),
        "not before the notice has played: {a:?}"
    );
    let a = c.on(done(*notice, 1.0), t0);
    assert!(
        matches!(a[..], [Action::EndOfReply(r)] if r == *notice),
        "{a:?}"
    );
    let a = c.on(played(*notice, t0), t0);
    let [(_, start, _)] = recognitions(&a)[..] else {
        panic!("then the oldest kept is answered: {a:?}");
    };
    assert_eq!(start, 5 * S, "the first of four was dropped");
}

#[test]
fn a_wake_word_said_alone_whose_transcript_lacks_it_answers_nothing() {
    let (mut c, t0) = (with_wake_words(), Instant::now());
    c.on(wake_word(1.4, t0), t0);
    let a = c.on(
        Input::Listen(ListenEvent::Utterance(utterance(1.0, 1.5, t0))),
        t0,
    );
    let [(check, _, Hold::Open)] = recognitions(&a)[..] else {
        panic!("the wake word alone is checked: {a:?}");
    };
    // the request follows, in the window, while the check runs
    let a = c.on(
        Input::Listen(ListenEvent::Utterance(utterance(2.5, 4.0, t0))),
        t0,
    );
    assert!(recognitions(&a).is_empty(), "it waits for the check: {a:?}");
    let a = c.on(
        Input::Heard {
            job: check,
            heard: heard("Hey Travis."),
        },
        t0,
    );
    assert!(recognitions(&a).is_empty() && asked(&a).is_none(), "{a:?}");
    assert_eq!(activity(&a), [Activity::Listening]);
}

#[test]
fn a_wake_word_said_alone_that_stands_lets_the_request_through() {
    let (mut c, t0) = (with_wake_words(), Instant::now());
    c.on(wake_word(1.4, t0), t0);
    let a = c.on(
        Input::Listen(ListenEvent::Utterance(utterance(1.0, 1.5, t0))),
        t0,
    );
    let [(check, ..)] = recognitions(&a)[..] else {
        panic!("{a:?}")
    };
    c.on(
        Input::Listen(ListenEvent::Utterance(utterance(2.5, 4.0, t0))),
        t0,
    );
    let a = c.on(
        Input::Heard {
            job: check,
            heard: heard("Hey Jarvis."),
        },
        t0,
    );
    let [(_, start, Hold::House)] = recognitions(&a)[..] else {
        panic!("the request is recognised: {a:?}");
    };
    assert_eq!(start, (2.5 * S as f64) as u64);
}

#[test]
fn shutdown_cuts_the_reply_short_and_ends_the_run_once_the_agent_has_ended() {
    let (mut c, t0) = (open_mic(), Instant::now());
    let (job, reply) = ask_and_start_reply(&mut c, t0, ("tell me a story", "tell me a story"), 1.0);
    c.on(done(reply, 3.0), t0);
    let a = c.on(Input::Shutdown, t0);
    assert!(has(&a, |a| matches!(a, Action::StopReply(_))), "{a:?}");
    assert!(!c.is_over(), "the agent ends its turn first");
    let a = agent_ends(&mut c, job, Err("cancelled".into()), t0);
    assert_eq!(turns(&a).len(), 1);
    assert!(c.is_over());
}

#[test]
fn between_turns_shutdown_or_the_end_of_the_input_ends_the_run() {
    let (mut c, t0) = (open_mic(), Instant::now());
    c.on(Input::Shutdown, t0);
    assert!(c.is_over());
    let mut c = Conductor::new(policy(true), Attention::new(false, Duration::ZERO));
    c.on(Input::Listen(ListenEvent::End), t0);
    assert!(c.is_over(), "once: the input's end is the run's");
    let mut c = open_mic();
    c.on(Input::Listen(ListenEvent::End), t0);
    assert!(!c.is_over(), "a daemon's input may come back");
    c.on(Input::ListenClosed, t0);
    assert!(c.is_over());
}

#[test]
fn a_stage_that_dies_for_good_ends_the_turn_and_the_run() {
    let (mut c, t0) = (open_mic(), Instant::now());
    ask_and_start_reply(&mut c, t0, ("tell me a story", "tell me a story"), 1.0);
    let a = c.on(Input::Failed, t0);
    assert!(has(&a, |a| matches!(a, Action::CancelTurn)), "{a:?}");
    let [t] = turns(&a)[..] else { panic!("{a:?}") };
    assert!(t.error.is_some());
    assert!(c.is_over());
}

#[test]
fn a_quiet_spell_starts_a_new_conversation() {
    let (mut c, t0) = (open_mic(), Instant::now());
    let session = |a: &[Action]| {
        a.iter()
            .find_map(|a| match a {
                Action::Ask { session, .. } => Some(session.clone()),
                _ => None,
            })
            .expect("asked")
    };
    let mut answered_at = t0;
    let mut sessions = Vec::new();
    for (i, later) in [0u64, 10, 300].into_iter().enumerate() {
        let at = answered_at + Duration::from_secs(later);
        let start = 10.0 * i as f64;
        let a = c.on(
            Input::Listen(ListenEvent::Utterance(utterance(start, start + 1.0, at))),
            at,
        );
        let [(stt, ..)] = recognitions(&a)[..] else {
            panic!("{a:?}")
        };
        let a = c.on(
            Input::Heard {
                job: stt,
                heard: heard("what time is it"),
            },
            at,
        );
        sessions.push(session(&a));
        let (job, ..) = asked(&a).expect("asked");
        agent_ends(&mut c, job, answer(""), at);
        answered_at = at;
    }
    assert_eq!(sessions, ["voice-0", "voice-0", "voice-1"]);
}

#[test]
fn muted_utterances_and_wake_words_are_dropped_unheard() {
    let (mut c, t0) = (with_wake_words(), Instant::now());
    c.policy.muted.store(true, Ordering::SeqCst);
    let a = c.on(wake_word(1.0, t0), t0);
    assert!(a.is_empty(), "{a:?}");
    let a = c.on(
        Input::Listen(ListenEvent::Utterance(utterance(0.5, 2.0, t0))),
        t0,
    );
    assert!(a.is_empty(), "{a:?}");
}

#[test]
fn a_failed_recognition_is_reported_and_nothing_is_asked() {
    let (mut c, t0) = (open_mic(), Instant::now());
    let a = c.on(
        Input::Listen(ListenEvent::Utterance(utterance(1.0, 2.0, t0))),
        t0,
    );
    let [(stt, ..)] = recognitions(&a)[..] else {
        panic!("{a:?}")
    };
    let a = c.on(
        Input::Heard {
            job: stt,
            heard: Err("whisper failed".into()),
        },
        t0,
    );
    let [t] = turns(&a)[..] else { panic!("{a:?}") };
    assert_eq!(t.error.as_deref(), Some("whisper failed"));
    assert!(asked(&a).is_none());
}

/// An announcement between turns is said at once, after the bell (no turn, nothing asked);
/// one that comes during a reply waits for it to have played, then is said; an utterance
/// heard while it is said is answered after it.
#[test]
fn an_announcement_waits_for_the_reply_under_way() {
    let t0 = Instant::now();
    let mut c = open_mic();
    let a = c.on(Input::Announce("Dinner is ready.".into()), t0);
    let [(first, ref text)] = spoken(&a)[..] else {
        panic!("said at once between turns: {a:?}");
    };
    assert_eq!(text, "Dinner is ready.");
    let bell = a.iter().position(|x| matches!(x, Action::Cue(Cue::Bell)));
    let words = a.iter().position(|x| matches!(x, Action::Speak { .. }));
    assert!(
        bell.is_some() && bell < words,
        "the bell before the words: {a:?}"
    );
    assert!(!has(&a, |x| matches!(x, Action::Cue(Cue::Earcon))), "{a:?}");
    assert!(asked(&a).is_none() && turns(&a).is_empty(), "{a:?}");
    let a = c.on(done(first, 1.0), at(t0, 0.2));
    assert!(
        has(&a, |x| matches!(x, Action::EndOfReply(r) if *r == first)),
        "{a:?}"
    );
    c.on(played(first, at(t0, 1.3)), at(t0, 1.3));
    // a turn's reply under way: the next announcement waits for it
    let (job, reply) = ask_and_start_reply(&mut c, t0, ("turn it on", "turn it on"), 2.0);
    let a = c.on(Input::Announce("The washing is done.".into()), at(t0, 4.3));
    assert!(spoken(&a).is_empty(), "said over the reply: {a:?}");
    let a = agent_ends(&mut c, job, answer("It is on."), at(t0, 4.4));
    assert!(spoken(&a).is_empty(), "{a:?}");
    c.on(done(reply, 1.0), at(t0, 4.5));
    let a = c.on(played(reply, at(t0, 5.5)), at(t0, 5.5));
    let [(second, ref text)] = spoken(&a)[..] else {
        panic!("said once the reply has played: {a:?}");
    };
    assert_eq!(text, "The washing is done.");
    assert_ne!(second, reply);
}

/// Once an announcement has played (a timer ringing), the follow-up window is open: "stop"
/// needs no wake word; without the announcement the same speech is not for hearth.
#[test]
fn an_announcement_opens_the_follow_up_window() {
    let t0 = Instant::now();
    let mut quiet = with_wake_words();
    let a = quiet.on(
        Input::Listen(ListenEvent::Utterance(utterance(2.0, 2.6, t0))),
        at(t0, 3.3),
    );
    assert!(
        recognitions(&a).is_empty(),
        "no wake word, no window: {a:?}"
    );

    let mut c = with_wake_words();
    ring_played(&mut c, t0);
    // "okay, stop" answers the announcement: the agent is asked "stop"
    assert_eq!(
        heard_alone(&mut c, t0, 2.0, "Okay, stop.").as_deref(),
        Some("stop")
    );
}

/// A timer's announcement said at `t0`, played by 1.3 s.
fn ring_played(c: &mut Conductor, t0: Instant) {
    let a = c.on(Input::Announce("Your pasta timer is done.".into()), t0);
    let [(ring, _)] = spoken(&a)[..] else {
        panic!("said at once: {a:?}");
    };
    c.on(done(ring, 1.0), at(t0, 0.2));
    c.on(played(ring, at(t0, 1.3)), at(t0, 1.3));
}

/// `text` said alone from `start` s (0.6 s long) and heard: what the agent is asked, if
/// anything.
fn heard_alone(c: &mut Conductor, t0: Instant, start: f64, text: &str) -> Option<String> {
    let a = c.on(
        Input::Listen(ListenEvent::Utterance(utterance(start, start + 0.6, t0))),
        at(t0, start + 1.3),
    );
    let [(job, ..)] = recognitions(&a)[..] else {
        panic!("said in the window: {a:?}");
    };
    let a = c.on(
        Input::Heard {
            job,
            heard: heard(text),
        },
        at(t0, start + 1.5),
    );
    asked(&a).map(|(_, asked_text, _)| asked_text)
}

/// A stop phrase with nothing said before it is no request: the agent is not asked.
#[test]
fn a_stop_phrase_with_nothing_to_stop_asks_nothing() {
    let (mut c, t0) = (open_mic(), Instant::now());
    let a = c.on(
        Input::Listen(ListenEvent::Utterance(utterance(1.0, 1.5, t0))),
        at(t0, 2.2),
    );
    let [(job, ..)] = recognitions(&a)[..] else {
        panic!("{a:?}");
    };
    let a = c.on(
        Input::Heard {
            job,
            heard: heard("Stop."),
        },
        at(t0, 2.4),
    );
    assert!(asked(&a).is_none(), "{a:?}");
    assert_eq!(turns(&a).len(), 1, "reported as heard: {a:?}");
}

/// While a timer rings, "stop" answers it whatever was said since the last round ("thank
/// you" answered in between), and so does "spot", as whisper may write it; 20 s after the
/// last round, a stop phrase is no request again, and "spot" is a request of its own.
#[test]
fn a_stop_phrase_answers_a_ring_until_its_window_closes() {
    let t0 = Instant::now();
    let mut c = open_mic();
    ring_played(&mut c, t0);
    let (job, reply) = ask_and_start_reply(&mut c, t0, ("Thank you.", "Thank you."), 2.0);
    agent_ends(&mut c, job, answer("You're welcome."), at(t0, 4.4));
    c.on(done(reply, 1.0), at(t0, 4.5));
    c.on(played(reply, at(t0, 5.5)), at(t0, 5.5));
    assert_eq!(
        heard_alone(&mut c, t0, 7.0, "Stop.").as_deref(),
        Some("stop")
    );

    let mut jumbled = open_mic();
    ring_played(&mut jumbled, t0);
    assert_eq!(
        heard_alone(&mut jumbled, t0, 3.0, "Spot.").as_deref(),
        Some("stop")
    );

    let mut late = open_mic();
    ring_played(&mut late, t0);
    assert_eq!(
        heard_alone(&mut late, t0, 22.0, "Stop."),
        None,
        "the window has closed"
    );
    let mut late = open_mic();
    ring_played(&mut late, t0);
    assert_eq!(
        heard_alone(&mut late, t0, 22.0, "Spot.").as_deref(),
        Some("Spot."),
        "the window has closed"
    );
}

/// The recogniser's near phrase goes to the agent with the request only when it was near and
/// not taken, its wake word left out as the transcript's is.
#[test]
fn a_near_phrase_goes_with_the_request_only_when_it_was_not_taken() {
    let pass = |phrase: Option<&str>, taken: bool, near: bool| wyoming::PhrasePass {
        open: "turn on the ceiling pan".into(),
        phrase: phrase.map(str::to_string),
        open_logprob: -1.3,
        phrase_logprob: Some(-5.3),
        way_contrast: None,
        taken,
        near,
        steps: 40,
        ms: 200.0,
    };
    let fan = Some("turn on the ceiling fan,");
    let near = pass(fan, false, true);
    assert_eq!(
        near_phrase(Some(&near), None, false).as_deref(),
        Some("turn on the ceiling fan,")
    );
    assert_eq!(
        near_phrase(Some(&pass(fan, true, false)), None, false),
        None
    );
    assert_eq!(
        near_phrase(Some(&pass(fan, false, false)), None, false),
        None
    );
    assert_eq!(
        near_phrase(Some(&pass(None, false, true)), None, false),
        None
    );
    assert_eq!(near_phrase(None, None, false), None);
    // said after the wake word: the request after it
    let woken = pass(Some("hey jarvis turn on the ceiling fan"), false, true);
    assert_eq!(
        near_phrase(Some(&woken), Some("hey jarvis"), true).as_deref(),
        Some("turn on the ceiling fan")
    );
}
