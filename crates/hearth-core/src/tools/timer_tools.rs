//! The timers as built-in tools: `set_timer`, `cancel_timer`, `stop_timer`,
//! `add_timer_time`, `remove_timer_time`, `pause_timer`, `resume_timer`, `get_timers`. Each asks the
//! [`crate::timers::Timers`] actor and answers in the words hearth says; the usual
//! sentences are local intents, so "set a pasta timer for 8 minutes" never waits for the
//! model.
//!
//! A length is a string of `"format": "length"` ("10 minutes", "an hour and a half"): a
//! slot reads it from a request and the call check takes it as said in any words
//! ([`crate::intent::parse_length`]). A name is free words ("pasta"); "the", "my" before it
//! and "timer" after it are dropped.
//!
//! What the person asked that cannot be done as asked (no such timer, which of two, one
//! already paused) is the tool's answer, said as it is ("Which timer: pasta or eggs?"); only
//! a failure to save, or no timers in this process, is an error.

use std::time::Duration;

use ractor::ActorRef;
use serde_json::{json, Map, Value};

use super::output::ToolStatus;
use crate::intent::{parse_length, say_length, IntentSpec};
use crate::timers::{capitalised, now_ms, Kind, Run, Timer, TimerError, TimersMsg, Which};

/// One of the timer tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimerTool {
    Set,
    Cancel,
    /// Silence a timer ringing ("stop"); named and not ringing, cancel it.
    Stop,
    Add,
    Remove,
    Pause,
    Resume,
    Status,
}

/// Words that may stand before a timer's name in a sentence.
const THE: &str = "(the|my)";

/// "set an egg timer": the article after "set", with "in" and "and" as whisper tiny.en writes
/// "an" there ("set in, egg timer for 6 minutes").
const AN: &str = "(a|an|in|and)";

/// Names a kitchen gives its timers, given to the recogniser as words to expect (the
/// `examples` of `set_timer`'s name: never a limit on what a timer may be called).
const NAMES_HEARD: &[&str] = &[
    "tea", "egg", "pasta", "rice", "pizza", "bread", "cake", "roast", "oven", "laundry",
];

impl TimerTool {
    pub const ALL: [TimerTool; 8] = [
        TimerTool::Set,
        TimerTool::Cancel,
        TimerTool::Stop,
        TimerTool::Add,
        TimerTool::Remove,
        TimerTool::Pause,
        TimerTool::Resume,
        TimerTool::Status,
    ];

    pub fn name(self) -> &'static str {
        match self {
            TimerTool::Set => "set_timer",
            TimerTool::Cancel => "cancel_timer",
            TimerTool::Stop => "stop_timer",
            TimerTool::Add => "add_timer_time",
            TimerTool::Remove => "remove_timer_time",
            TimerTool::Pause => "pause_timer",
            TimerTool::Resume => "resume_timer",
            TimerTool::Status => "get_timers",
        }
    }

    pub fn description(self) -> &'static str {
        match self {
            TimerTool::Set => "Start a countdown timer of a given length, with an optional name.",
            TimerTool::Cancel => "Cancel a running timer, or all of them.",
            TimerTool::Stop => "Stop a timer that is ringing.",
            TimerTool::Add => "Add time to a running timer.",
            TimerTool::Remove => "Take time off a running timer.",
            TimerTool::Pause => "Pause a running timer.",
            TimerTool::Resume => "Resume a paused timer.",
            TimerTool::Status => "Say which timers are running and how long each has left.",
        }
    }

    /// The JSON Schema of its arguments.
    pub fn parameters(self) -> Value {
        let mut name = json!({"type": "string", "description": "The timer's name, e.g. \"pasta\"; leave out for an unnamed timer."});
        if matches!(self, TimerTool::Set) {
            // what kitchens time, for the ear (the recogniser's words to expect): tiny.en
            // wrote "a t timer" for a tea timer, "pause to" for pasta, "rose" for roast
            name["examples"] = json!(NAMES_HEARD);
        }
        let length = json!({"type": "string", "format": "length", "description": "How long, as said: \"10 minutes\", \"an hour and a half\"."});
        let (properties, required) = match self {
            TimerTool::Set | TimerTool::Add | TimerTool::Remove => {
                (json!({"length": length, "name": name}), json!(["length"]))
            }
            TimerTool::Cancel => (
                json!({"name": name, "all": {"type": "boolean", "description": "Cancel every timer."}}),
                json!([]),
            ),
            TimerTool::Stop | TimerTool::Pause | TimerTool::Resume | TimerTool::Status => {
                (json!({"name": name}), json!([]))
            }
        };
        super::builtin_parts::object_schema(properties, required)
    }

    /// Its local intents.
    pub fn intents(self) -> Vec<IntentSpec> {
        let named = |s: &str| s.replace("{the}", THE).replace("{an}", AN);
        let intent = |sentences: &[&str], args: Map<String, Value>| {
            let sentences: Vec<String> = sentences.iter().map(|s| named(s)).collect();
            super::builtin_parts::intent(&sentences, args)
        };
        match self {
            TimerTool::Set => vec![intent(
                &[
                    "(set|start) [a|the] timer for {length}",
                    "[a|the] timer for {length}",
                    // as whisper tiny.en writes "set a" (no one says it otherwise)
                    "that timer for {length}",
                    "(set|start) {an} {length} timer",
                    "(a|an) {length} timer",
                    "{length} timer",
                    "(set|start) {an} {name} timer for {length}",
                    // whisper drops the article ("set roast timer for one hour")
                    "(set|start) {name} timer for {length}",
                    "(a|an) {name} timer for {length}",
                    "(set|start) {an} {length} {name} timer",
                    "(set|start) [a] timer for {length} for {the} {name}",
                    "(set|start) [a] timer (called|named) {name} for {length}",
                    "(set|start) [a] timer for {length} (called|named) {name}",
                ],
                Map::new(),
            )],
            TimerTool::Cancel => vec![
                intent(
                    &[
                        "(cancel|delete|remove|clear) [the|my] timer",
                        "(cancel|delete|remove|clear) {the} {name} timer",
                    ],
                    Map::new(),
                ),
                intent(
                    &[
                        "(cancel|stop|delete|remove|clear) all [of] [the|my] timers",
                        "(cancel|stop|delete|remove|clear) [the|my] timers",
                        "(cancel|stop|delete|remove|clear) every timer",
                    ],
                    Map::from_iter([("all".to_string(), Value::Bool(true))]),
                ),
            ],
            TimerTool::Stop => vec![intent(
                &[
                    "stop",
                    "stop (it|that)",
                    "stop [the] (ringing|alarm|beeping|noise)",
                    "stop [the|my] timer",
                    "stop {the} {name} timer",
                    "turn [the|my] timer off",
                    "turn off [the|my] timer",
                ],
                Map::new(),
            )],
            TimerTool::Add => vec![intent(
                &[
                    "add [another] {length} [to {the} timer]",
                    "add [another] {length} to {the} {name} timer",
                    // as whisper tiny.en writes "add" (the rest says what it is)
                    "at {length} to {the} [{name}] timer",
                    "(extend|increase) [the|my] timer by {length}",
                    "(extend|increase) {the} {name} timer by {length}",
                ],
                Map::new(),
            )],
            TimerTool::Remove => vec![intent(
                &[
                    "(take|knock) {length} off [{the} timer]",
                    "(take|knock) {length} off {the} {name} timer",
                    // as whisper tiny.en writes "knock" (the rest says what it is)
                    "not {length} off {the} [{name}] timer",
                    "(remove|subtract) {length} from {the} timer",
                    "(remove|subtract) {length} from {the} {name} timer",
                    "(reduce|shorten) [the|my] timer by {length}",
                    "(reduce|shorten) {the} {name} timer by {length}",
                ],
                Map::new(),
            )],
            TimerTool::Pause => vec![intent(
                &[
                    "(pause|hold|freeze) [the|my] timer",
                    "(pause|hold|freeze) {the} {name} timer",
                ],
                Map::new(),
            )],
            TimerTool::Resume => vec![intent(
                &[
                    "(resume|continue|unpause|restart) [the|my] timer",
                    "(resume|continue|unpause|restart) {the} {name} timer",
                    "start [the|my] timer again",
                    "start {the} {name} timer again",
                ],
                Map::new(),
            )],
            TimerTool::Status => vec![intent(
                &[
                    "how (long|much time) is left [on {the} timer]",
                    "how (long|much time) is left on {the} {name} timer",
                    "how (long|much time) (is|has) {the} {name} timer got [left]",
                    "how long (until|till|before) {the} timer (is done|goes off|rings|finishes)",
                    "how long (until|till|before) {the} {name} timer (is done|goes off|rings|finishes)",
                    "(what|which) timers (are|do i have) (running|set|on)",
                    "what timers do i have",
                    "how many timers (are|do i have) (running|set|on|there)",
                    "(do i have|are there) any timers [running|set|on]",
                    "is {the} timer running",
                    "is {the} {name} timer running",
                    "(list|show) [me] [the|my] timers",
                    "timer status",
                ],
                Map::new(),
            )],
        }
    }

    /// Run a call of it against the timers actor (`None`: this process keeps no timers);
    /// `room`: where it was asked (a satellite's), where a new timer rings.
    pub async fn run(
        self,
        arguments: &Value,
        room: Option<&str>,
        timers: Option<&ActorRef<TimersMsg>>,
    ) -> (ToolStatus, String) {
        let Some(timers) = timers else {
            return (ToolStatus::Error, NOT_HERE.into());
        };
        let name = name_said(arguments);
        let length = match self {
            TimerTool::Set | TimerTool::Add | TimerTool::Remove => {
                let said = arguments
                    .get("length")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                match parse_length(said) {
                    Some(d) => d,
                    None => {
                        return (
                            ToolStatus::Error,
                            format!("{}: {said:?} is not a length of time; give it as said, e.g. \"10 minutes\"", self.name()),
                        )
                    }
                }
            }
            _ => Duration::ZERO,
        };
        let all = arguments.get("all").and_then(Value::as_bool) == Some(true);
        let which = match (&name, all) {
            (_, true) => Which::All,
            (Some(n), false) => Which::Named(n.clone()),
            (None, false) => Which::Only,
        };
        let ms = length.as_millis().min(i64::MAX as u128) as i64;
        // "stop", "cancel the timer" while one rings: it stops ringing ("cancel all
        // timers" silences what rings and cancels what runs)
        if matches!(self, TimerTool::Stop | TimerTool::Cancel) {
            let all_cancelled = self == TimerTool::Cancel && which == Which::All;
            match ractor::call!(timers, TimersMsg::Silence, which.clone()) {
                Ok(_) if all_cancelled => {}
                Ok(stopped) if !stopped.is_empty() => return (ToolStatus::Ok, silenced(&stopped)),
                Ok(_) if self == TimerTool::Stop && name.is_none() => {
                    return (ToolStatus::Ok, "No timer is ringing.".into())
                }
                Ok(_) => {}
                Err(_) => return (ToolStatus::Error, NOT_HERE.into()),
            }
        }
        let asked = match self {
            TimerTool::Set => ractor::call!(timers, |reply| TimersMsg::Start {
                name: name.clone(),
                length,
                room: room.map(str::to_string),
                reminder: None,
                reply
            })
            .map(|r| r.map(|t| set(t.name.as_deref(), length))),
            TimerTool::Cancel | TimerTool::Stop => ractor::call!(timers, TimersMsg::Cancel, which)
                .map(|r| r.map(|gone| cancelled(&gone))),
            TimerTool::Add => ractor::call!(timers, TimersMsg::Adjust, which, ms)
                .map(|r| r.map(|t| left(&t, &format!("Added {}", say_length(length))))),
            TimerTool::Remove => ractor::call!(timers, TimersMsg::Adjust, which, -ms)
                .map(|r| r.map(|t| left(&t, &format!("Took off {}", say_length(length))))),
            TimerTool::Pause => ractor::call!(timers, TimersMsg::Pause, which).map(|r| {
                r.map(|t| {
                    format!(
                        "{} paused with {} left.",
                        capital(&t.called()),
                        say_left(&t, now_ms())
                    )
                })
            }),
            TimerTool::Resume => ractor::call!(timers, TimersMsg::Resume, which).map(|r| {
                r.map(|t| {
                    let left = say_left(&t, now_ms());
                    format!("{} resumed: {left} left.", capital(&t.called()))
                })
            }),
            TimerTool::Status => ractor::call!(timers, TimersMsg::List)
                .map(|all| status(&only_timers(all), name.as_deref(), now_ms())),
        };
        outcome(asked)
    }
}

/// What the timers actor answered, as a tool's outcome: what could not be done as asked (no
/// such timer, which of two) is the answer, said as it is; a failed save, or no actor, is
/// an error.
pub(super) fn outcome(
    asked: Result<Result<String, TimerError>, ractor::RactorErr<TimersMsg>>,
) -> (ToolStatus, String) {
    match asked {
        Ok(Ok(said)) => (ToolStatus::Ok, said),
        Ok(Err(e @ TimerError::Store(_))) => (ToolStatus::Error, e.to_string()),
        Ok(Err(e)) => (ToolStatus::Ok, e.to_string()),
        Err(_) => (ToolStatus::Error, NOT_HERE.into()),
    }
}

/// The answer when this process keeps no timers.
pub(super) const NOT_HERE: &str =
    "Timers are not kept by this hearth process: ask the running hearth service.";

/// A name as said, without "the"/"my" before it or "timer" after it; `None` when nothing
/// is left.
fn timer_name(said: &str) -> Option<String> {
    let mut words: Vec<String> = crate::intent::words(said);
    while words
        .first()
        .is_some_and(|w| matches!(w.as_str(), "the" | "my" | "a" | "an"))
    {
        words.remove(0);
    }
    while words.last().is_some_and(|w| w == "timer") {
        words.pop();
    }
    (!words.is_empty()).then(|| words.join(" "))
}

impl TimerTool {
    /// The call's arguments as meant: a `name` that names no timer but sounds near one
    /// ([`crate::timers::named`]: "ros" for roast; for `stop_timer`, a ringing one first) is
    /// that timer's name, so the call that runs, and what is told of it ("what did you just
    /// do?", the trace), names the timer it acts on. A new timer's name stays as said, but
    /// for one letter, which is the word of [`NAMES_HEARD`] it sounds like ("t" for tea:
    /// [`crate::timers::spelt_as_a_letter`]).
    pub async fn meant(self, arguments: &Value, timers: Option<&ActorRef<TimersMsg>>) -> Value {
        let mut arguments = arguments.clone();
        let Some(said) = name_said(&arguments) else {
            return arguments;
        };
        let meant = match (self, timers) {
            (TimerTool::Set, _) => {
                crate::timers::spelt_as_a_letter(&said, NAMES_HEARD).map(str::to_string)
            }
            (_, Some(timers)) => self.running_named(timers, &said).await,
            (_, None) => None,
        };
        if let (Some(name), Some(fields)) = (meant, arguments.as_object_mut()) {
            if name != said {
                tracing::info!(heard = %said, meant = %name, "a timer's name as meant");
                fields.insert("name".into(), Value::String(name));
            }
        }
        arguments
    }

    /// What it answers when it does as asked `at`, where that is known before it runs: a
    /// new timer's confirmation ("Pasta timer set for 8 minutes.", its name as
    /// [`TimerTool::meant`] reads it), and how long each timer has left then (the timers as
    /// they are now: one set, paused or cancelled before `at` makes the call say something
    /// else, and what was foreseen is not used); `None` for the others, whose answers
    /// depend on what the call changes.
    pub async fn foreseen(
        self,
        arguments: &Value,
        timers: Option<&ActorRef<TimersMsg>>,
        at: &jiff::Zoned,
    ) -> Option<String> {
        let name = name_said(arguments);
        match self {
            TimerTool::Set => {
                let length = parse_length(arguments.get("length")?.as_str()?)?;
                let name = name.map(|n| {
                    crate::timers::spelt_as_a_letter(&n, NAMES_HEARD)
                        .map_or(n.clone(), str::to_string)
                });
                Some(set(name.as_deref(), length))
            }
            TimerTool::Status => {
                let all = ractor::call!(timers?, TimersMsg::List).ok()?;
                let at_ms = at.timestamp().as_millisecond();
                status(&only_timers(all), name.as_deref(), at_ms).ok()
            }
            _ => None,
        }
    }

    /// The name of the running timer `said` means ([`crate::timers::named`]; for
    /// `stop_timer`, a ringing one first).
    async fn running_named(self, timers: &ActorRef<TimersMsg>, said: &str) -> Option<String> {
        let ringing = match self {
            TimerTool::Stop => ractor::call!(timers, TimersMsg::Ringing).unwrap_or_default(),
            _ => Vec::new(),
        };
        let all = ractor::call!(timers, TimersMsg::List).unwrap_or_default();
        let timers = only_timers(all);
        crate::timers::named(&ringing, said)
            .or_else(|| crate::timers::named(&timers, said))
            .and_then(|t| t.name.clone())
    }
}

/// The timers of `all`, without the alarms and reminders.
fn only_timers(all: Vec<Timer>) -> Vec<Timer> {
    all.into_iter()
        .filter(|t| t.kind() == Kind::Timer)
        .collect()
}

/// The `name` argument of a call, as [`timer_name`] reads it.
fn name_said(arguments: &Value) -> Option<String> {
    arguments
        .get("name")
        .and_then(Value::as_str)
        .and_then(timer_name)
}

/// "the pasta timer", "the 10 minute timer".
fn label(t: &Timer) -> String {
    match &t.name {
        Some(_) => t.called(),
        // "10 minutes" before a noun is "10 minute"
        None => {
            let length = say_length(Duration::from_millis(t.total_ms));
            let singular = ["hours", "minutes", "seconds"]
                .iter()
                .fold(length, |s, unit| s.replace(unit, &unit[..unit.len() - 1]));
            format!("the {singular} timer")
        }
    }
}

/// "Pasta timer" from "the pasta timer".
fn capital(s: &str) -> String {
    capitalised(s.strip_prefix("the ").unwrap_or(s))
}

/// How long `t` has left at `now_ms`, said.
fn say_left(t: &Timer, now_ms: i64) -> String {
    say_length(Duration::from_millis(t.left_ms(now_ms)))
}

/// "Added 2 minutes: the pasta timer has 5 minutes left."
fn left(t: &Timer, done: &str) -> String {
    let now = now_ms();
    if t.left_ms(now) == 0 {
        return format!("{done}: {} is done.", t.called());
    }
    format!("{done}: {} has {} left.", t.called(), say_left(t, now))
}

/// "Pasta timer cancelled.", "All 3 timers cancelled."
fn cancelled(gone: &[Timer]) -> String {
    match gone {
        [one] => format!("{} cancelled.", capital(&label(one))),
        many => format!("All {} timers cancelled.", many.len()),
    }
}

/// "Pasta timer set for 8 minutes.", "Timer set for 10 minutes."
fn set(name: Option<&str>, length: Duration) -> String {
    let called = name.map_or("Timer".into(), |n| capital(&format!("{n} timer")));
    format!("{called} set for {}.", say_length(length))
}

/// "Stopped the pasta timer.", "Stopped 2 timers."
fn silenced(stopped: &[Timer]) -> String {
    match stopped {
        [one] => match (one.kind(), one.alarm) {
            (Kind::Reminder, _) => "Stopped the reminder.".into(),
            (Kind::Alarm, Some(a)) => {
                format!("Stopped the {} alarm.", crate::intent::say_time(a.time()))
            }
            _ => format!("Stopped {}.", label(one)),
        },
        many => format!("Stopped {} timers.", many.len()),
    }
}

/// How long each timer has left at `now_ms`, or the one named.
fn status(all: &[Timer], name: Option<&str>, now_ms: i64) -> Result<String, TimerError> {
    let one = |t: &Timer| {
        let paused = if matches!(t.run, Run::Paused { .. }) {
            ", paused"
        } else {
            ""
        };
        format!("{} has {} left{paused}", label(t), say_left(t, now_ms))
    };
    if let Some(n) = name {
        let t = all
            .iter()
            .find(|t| t.name.as_deref() == Some(n))
            .ok_or_else(|| TimerError::NoSuch(n.to_string()))?;
        return Ok(format!("{}.", capitalised(&one(t))));
    }
    match all {
        [] => Err(TimerError::None),
        [t] => Ok(format!("{}.", capitalised(&one(t)))),
        many => {
            let each: Vec<String> = many.iter().map(one).collect();
            Ok(format!("{} timers: {}.", many.len(), join_and(&each)))
        }
    }
}

/// "a, b and c".
fn join_and(items: &[String]) -> String {
    match items.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{}; and {last}", rest.join("; ")),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_lose_their_articles_and_the_word_timer() {
        assert_eq!(timer_name("the pasta timer").as_deref(), Some("pasta"));
        assert_eq!(timer_name("My Eggs").as_deref(), Some("eggs"));
        assert_eq!(timer_name("the timer"), None);
        assert_eq!(timer_name(""), None);
    }

    #[test]
    fn the_answers_say_what_was_done() {
        let t = |name: Option<&str>, total_ms, run| Timer {
            id: 1,
            name: name.map(str::to_string),
            total_ms,
            run,
            room: None,
            alarm: None,
            reminder: None,
        };
        let paused = t(Some("pasta"), 480_000, Run::Paused { left_ms: 200_000 });
        let plain = t(None, 600_000, Run::Paused { left_ms: 60_000 });
        assert_eq!(
            cancelled(std::slice::from_ref(&paused)),
            "Pasta timer cancelled."
        );
        assert_eq!(
            cancelled(std::slice::from_ref(&plain)),
            "10 minute timer cancelled."
        );
        assert_eq!(
            cancelled(&[paused.clone(), plain.clone()]),
            "All 2 timers cancelled."
        );
        assert_eq!(
            status(std::slice::from_ref(&paused), None, 0).unwrap(),
            "The pasta timer has 3 minutes and 20 seconds left, paused."
        );
        assert_eq!(
            status(&[paused.clone(), plain.clone()], None, 0).unwrap(),
            "2 timers: the pasta timer has 3 minutes and 20 seconds left, paused; and the 10 minute timer has 1 minute left, paused."
        );
        assert_eq!(status(&[], None, 0), Err(TimerError::None));
        assert_eq!(
            status(&[plain], Some("eggs"), 0),
            Err(TimerError::NoSuch("eggs".into()))
        );
    }
}

#[cfg(test)]
mod intent_tests {
    use serde_json::json;

    use crate::tools::{Registry, Tool};

    fn registry() -> Registry {
        let mut tools = Tool::builtins();
        tools.extend(Tool::timers());
        Registry::new(tools).unwrap()
    }

    /// What the built-ins' intents make of `text`: the one call, as `tool {args}`.
    fn heard(registry: &Registry, text: &str) -> Option<String> {
        let calls = registry.intents().recognize(text)?;
        let [call] = calls.as_slice() else {
            return Some(format!("{} calls", calls.len()));
        };
        Some(format!("{} {}", call.tool, call.arguments))
    }

    #[test]
    fn every_timer_sentence_form_is_a_local_intent() {
        let registry = registry();
        let cases: &[(&str, &str, serde_json::Value)] = &[
            (
                "Set a timer for ten minutes.",
                "set_timer",
                json!({"length": "10 minutes"}),
            ),
            (
                "timer for an hour and a half",
                "set_timer",
                json!({"length": "1 hour and 30 minutes"}),
            ),
            (
                "start a 5 minute timer",
                "set_timer",
                json!({"length": "5 minutes"}),
            ),
            (
                "a pasta timer for 8 minutes",
                "set_timer",
                json!({"length": "8 minutes", "name": "pasta"}),
            ),
            (
                "set a pasta timer for eight minutes please",
                "set_timer",
                json!({"length": "8 minutes", "name": "pasta"}),
            ),
            (
                "set in, egg timer for 6 minutes.",
                "set_timer",
                json!({"length": "6 minutes", "name": "egg"}),
            ),
            (
                // whisper dropped the article
                "set roast timer for one hour.",
                "set_timer",
                json!({"length": "1 hour", "name": "roast"}),
            ),
            (
                "set a ten minute eggs timer",
                "set_timer",
                json!({"length": "10 minutes", "name": "eggs"}),
            ),
            (
                "set a timer for 20 minutes for the roast",
                "set_timer",
                json!({"length": "20 minutes", "name": "roast"}),
            ),
            (
                "set a timer called tea for three minutes",
                "set_timer",
                json!({"length": "3 minutes", "name": "tea"}),
            ),
            (
                "half an hour timer",
                "set_timer",
                json!({"length": "30 minutes"}),
            ),
            (
                "the timer for half an hour.",
                "set_timer",
                json!({"length": "30 minutes"}),
            ),
            ("cancel the timer", "cancel_timer", json!({})),
            (
                "stop the pasta timer",
                "stop_timer",
                json!({"name": "pasta"}),
            ),
            (
                "cancel the pasta timer",
                "cancel_timer",
                json!({"name": "pasta"}),
            ),
            ("stop", "stop_timer", json!({})),
            ("okay, stop!", "stop_timer", json!({})),
            ("stop the alarm", "stop_timer", json!({})),
            ("stop the timer", "stop_timer", json!({})),
            ("cancel all timers", "cancel_timer", json!({"all": true})),
            (
                "delete all of my timers",
                "cancel_timer",
                json!({"all": true}),
            ),
            (
                "add two minutes to the timer",
                "add_timer_time",
                json!({"length": "2 minutes"}),
            ),
            (
                "add 5 minutes to the pasta timer",
                "add_timer_time",
                json!({"length": "5 minutes", "name": "pasta"}),
            ),
            (
                "add another minute",
                "add_timer_time",
                json!({"length": "1 minute"}),
            ),
            (
                "take a minute off the eggs timer",
                "remove_timer_time",
                json!({"length": "1 minute", "name": "eggs"}),
            ),
            (
                "knock thirty seconds off",
                "remove_timer_time",
                json!({"length": "30 seconds"}),
            ),
            // whisper tiny.en's "knock", "add" and "set a"
            (
                "not two minutes off the timer.",
                "remove_timer_time",
                json!({"length": "2 minutes"}),
            ),
            (
                "at 30 seconds to the egg timer",
                "add_timer_time",
                json!({"length": "30 seconds", "name": "egg"}),
            ),
            (
                "set the timer for 5 minutes",
                "set_timer",
                json!({"length": "5 minutes"}),
            ),
            (
                "That timer for an hour and a half.",
                "set_timer",
                json!({"length": "1 hour and 30 minutes"}),
            ),
            ("pause the timer", "pause_timer", json!({})),
            (
                "pause my pasta timer",
                "pause_timer",
                json!({"name": "pasta"}),
            ),
            ("resume the timer", "resume_timer", json!({})),
            (
                "continue the pasta timer",
                "resume_timer",
                json!({"name": "pasta"}),
            ),
            (
                "how long is left on the pasta timer?",
                "get_timers",
                json!({"name": "pasta"}),
            ),
            ("how much time is left", "get_timers", json!({})),
            ("what timers are running?", "get_timers", json!({})),
            (
                "how long until the eggs timer goes off",
                "get_timers",
                json!({"name": "eggs"}),
            ),
        ];
        for (text, tool, args) in cases {
            assert_eq!(
                heard(&registry, text),
                Some(format!("{tool} {args}")),
                "{text:?}"
            );
        }
    }

    #[test]
    fn remarks_about_time_are_no_timer() {
        let registry = registry();
        for text in [
            "I had a long day",
            "what a time to be alive",
            "it's been a long time",
            "set a timer",
            "set a timer for my mum",
            // whisper's "set a pasta timer": the phrase pass mends it, no timer "it past a"
            "set it past a timer for 8 minutes",
            "add salt to the pasta",
            "cancel my dentist appointment",
            "how long is the film",
            "take the bins out",
            "timer",
            "not now",
            "at 5 minutes past 6",
            "that timer was too long",
        ] {
            assert_eq!(heard(&registry, text), None, "{text:?}");
        }
    }
}

#[cfg(test)]
mod run_tests {
    use std::sync::Arc;

    use jiff::Zoned;
    use ractor::Actor;
    use serde_json::json;

    use crate::timers::{Store, Timers, TimersArgs, TimersMsg};
    use crate::toolcall::ToolSet;
    use crate::tools::{Backends, Registry, ToolStatus};

    /// The timer tools of a registry whose backends keep timers in a fresh directory.
    async fn registry(tag: &str) -> (Registry, std::path::PathBuf) {
        let dir =
            std::env::temp_dir().join(format!("hearth-timer-tools-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let store = Store::in_dir(&dir);
        let (timers, _) = Actor::spawn(None, Timers, TimersArgs { store })
            .await
            .unwrap();
        let backends = Backends::none();
        backends.serve_timers(timers);
        (Registry::builtins_with(Arc::new(backends)).unwrap(), dir)
    }

    async fn say(r: &Registry, name: &str, args: serde_json::Value) -> (ToolStatus, String) {
        let call = ToolSet::unrestricted().call("c", name, args).unwrap();
        let o = r.call_in(&call, Some("kitchen")).await;
        (o.status, o.result)
    }

    #[tokio::test]
    async fn a_new_timers_answer_is_foreseen_as_it_is_then_said() {
        let (r, dir) = registry("foreseen").await;
        for args in [
            json!({"length": "8 minutes", "name": "pasta"}),
            json!({"length": "10 minutes"}),
            json!({"length": "90 seconds", "name": "the t timer"}),
            json!({"length": "an hour and a half", "name": "my Roast"}),
        ] {
            let call = ToolSet::unrestricted()
                .call("c", "set_timer", args.clone())
                .unwrap();
            let foreseen = r.foreseen_confirmation(&call, &Zoned::now()).await;
            let (status, said) = say(&r, "set_timer", args.clone()).await;
            assert_eq!(status, ToolStatus::Ok, "{said}");
            assert_eq!(foreseen.as_deref(), Some(said.as_str()), "{args}");
        }
        // what a call changes is not known before it runs
        for (name, args) in [
            (
                "add_timer_time",
                json!({"length": "2 minutes", "name": "pasta"}),
            ),
            ("cancel_timer", json!({"name": "pasta"})),
            ("pause_timer", json!({"name": "pasta"})),
        ] {
            let call = ToolSet::unrestricted().call("c", name, args).unwrap();
            let foreseen = r.foreseen_confirmation(&call, &Zoned::now()).await;
            assert_eq!(foreseen, None, "{name}");
        }
        // a length that is none foresees nothing (the call says what is wrong)
        let call = ToolSet::unrestricted()
            .call("c", "set_timer", json!({"length": "soon"}))
            .unwrap();
        assert_eq!(r.foreseen_confirmation(&call, &Zoned::now()).await, None);
        let _ = std::fs::remove_dir_all(dir);
    }

    #[tokio::test]
    async fn how_long_a_timer_has_left_is_foreseen_as_it_will_be_when_asked() {
        let (r, dir) = registry("foreseen-left").await;
        let get = |args: serde_json::Value| ToolSet::unrestricted().call("c", "get_timers", args);
        // no timer: nothing to foresee (the call says so)
        let none = get(json!({})).unwrap();
        assert_eq!(r.foreseen_confirmation(&none, &Zoned::now()).await, None);
        let (status, _) = say(
            &r,
            "set_timer",
            json!({"length": "8 minutes", "name": "pasta"}),
        )
        .await;
        assert_eq!(status, ToolStatus::Ok);
        // asked now, it says what the call says now
        let pasta = get(json!({"name": "pasta"})).unwrap();
        let now = r.foreseen_confirmation(&pasta, &Zoned::now()).await;
        let (_, said) = say(&r, "get_timers", json!({"name": "pasta"})).await;
        assert_eq!(said, "The pasta timer has 8 minutes left.");
        assert_eq!(now.as_deref(), Some(said.as_str()));
        // asked for two minutes on, it says what the call will say then
        let later = Zoned::now()
            .checked_add(std::time::Duration::from_secs(120))
            .unwrap();
        let then = r.foreseen_confirmation(&pasta, &later).await;
        assert_eq!(then.as_deref(), Some("The pasta timer has 6 minutes left."));
        // a name as heard is the timer it sounds like, as the call reads it
        let heard = get(json!({"name": "pasto"})).unwrap();
        let foreseen = r.foreseen_confirmation(&heard, &later).await;
        assert_eq!(foreseen, then);
        // a paused timer has as long left whenever it is asked
        say(&r, "pause_timer", json!({"name": "pasta"})).await;
        let all = get(json!({})).unwrap();
        let foreseen = r.foreseen_confirmation(&all, &later).await;
        let (_, said) = say(&r, "get_timers", json!({})).await;
        assert!(said.ends_with("left, paused."), "{said}");
        assert_eq!(foreseen.as_deref(), Some(said.as_str()));
        let _ = std::fs::remove_dir_all(dir);
    }

    #[tokio::test]
    async fn the_tools_set_ask_and_answer_through_the_timers() {
        let (r, dir) = registry("answers").await;
        assert!(r.get("set_timer").is_some() && r.get("get_timers").is_some());
        let ok = |s: &str| (ToolStatus::Ok, s.to_string());
        assert_eq!(
            say(&r, "get_timers", json!({})).await,
            ok("There is no timer running.")
        );
        assert_eq!(
            say(
                &r,
                "set_timer",
                json!({"length": "8 minutes", "name": "The Pasta timer"})
            )
            .await,
            ok("Pasta timer set for 8 minutes.")
        );
        assert_eq!(
            say(&r, "set_timer", json!({"length": "ten minutes"})).await,
            ok("Timer set for 10 minutes.")
        );
        assert_eq!(
            say(&r, "pause_timer", json!({})).await,
            ok("Which timer: pasta or the 10 minute one?")
        );
        let (status, said) = say(&r, "pause_timer", json!({"name": "pasta"})).await;
        assert_eq!(status, ToolStatus::Ok);
        assert!(
            [
                "Pasta timer paused with 8 minutes left.",
                "Pasta timer paused with 7 minutes and 59 seconds left."
            ]
            .contains(&said.as_str()),
            "{said}"
        );
        let (_, said) = say(
            &r,
            "add_timer_time",
            json!({"length": "2 minutes", "name": "pasta"}),
        )
        .await;
        assert!(
            said.starts_with("Added 2 minutes: the pasta timer has 10 minutes left")
                || said.starts_with("Added 2 minutes: the pasta timer has 9 minutes and 59"),
            "{said}"
        );
        // a name misheard ("pasto", "past") means the timer it sounds near, said by its name;
        // the call that ran names it too
        let call = ToolSet::unrestricted()
            .call("c", "get_timers", json!({"name": "the past timer"}))
            .unwrap();
        let ran = r.call_in(&call, None).await;
        assert!(
            ran.result.starts_with("The pasta timer has "),
            "{}",
            ran.result
        );
        assert_eq!(ran.arguments, json!({"name": "pasta"}));
        let (_, said) = say(&r, "get_timers", json!({"name": "past"})).await;
        assert!(said.starts_with("The pasta timer has "), "{said}");
        let (_, said) = say(&r, "resume_timer", json!({"name": "pasto"})).await;
        assert!(said.starts_with("Pasta timer resumed"), "{said}");
        // a new timer's name heard as a letter ("set a t timer") is the word it sounds like
        let call = ToolSet::unrestricted()
            .call(
                "c",
                "set_timer",
                json!({"name": "t", "length": "20 seconds"}),
            )
            .unwrap();
        let ran = r.call_in(&call, None).await;
        assert_eq!(ran.result, "Tea timer set for 20 seconds.");
        assert_eq!(
            ran.arguments,
            json!({"name": "tea", "length": "20 seconds"})
        );
        let (_, said) = say(&r, "cancel_timer", json!({"name": "tea"})).await;
        assert_eq!(said, "Tea timer cancelled.");
        let (_, said) = say(&r, "pause_timer", json!({"name": "pasto"})).await;
        assert!(said.starts_with("Pasta timer paused"), "{said}");
        assert_eq!(
            say(&r, "pause_timer", json!({"name": "past"})).await,
            ok("The pasta timer is already paused.")
        );
        let (_, said) = say(&r, "get_timers", json!({})).await;
        // soonest first: the two have about 10 minutes each, in either order
        assert!(said.starts_with("2 timers: the "), "{said}");
        assert!(said.contains("the pasta timer has "), "{said}");
        assert!(said.contains(" left, paused"), "{said}");
        assert!(said.contains("the 10 minute timer has "), "{said}");
        assert_eq!(
            say(&r, "cancel_timer", json!({"all": true})).await,
            ok("All 2 timers cancelled.")
        );
        // what the schema or the length refuses is an error the model can act on
        let (status, said) = say(&r, "set_timer", json!({"length": "a while"})).await;
        assert_eq!(status, ToolStatus::Error);
        assert!(
            said.contains("\"a while\" is not a length of time"),
            "{said}"
        );
        let _ = std::fs::remove_dir_all(dir);
    }

    /// A timer done rings in its room until "stop", at most `times` times, and is published.
    #[tokio::test]
    async fn a_timer_done_rings_in_its_room_until_stopped() {
        use std::time::Duration;
        let (r, dir) = registry("rings").await;
        let timers = r.backends().timers().unwrap().clone();
        let announcer = crate::announce::Announcer::new();
        let mut kitchen = announcer.subscribe(Some("kitchen".into()));
        let events = crate::events::channel();
        let mut published = events.subscribe();
        let ringing = crate::timers::Ringing {
            every: Duration::from_millis(300),
            times: 3,
        };
        crate::timers::spawn_ringer(timers, Some(announcer), Some(events), ringing);
        let (status, _) = say(
            &r,
            "set_timer",
            json!({"length": "1 second", "name": "tea"}),
        )
        .await;
        assert_eq!(status, ToolStatus::Ok);
        let said = tokio::time::timeout(Duration::from_secs(3), kitchen.recv()).await;
        assert_eq!(said.unwrap().as_deref(), Some("Your tea timer is done."));
        match published.recv().await.unwrap() {
            crate::events::Event::TimerFinished {
                kind,
                name,
                room,
                late_s,
            } => {
                let got = (kind.as_str(), name.as_str(), room.as_str(), late_s);
                assert_eq!(got, ("timer", "tea", "kitchen", 0));
            }
            other => panic!("{other:?}"),
        }
        // named as heard ("the tee timer"): the ringing timer it sounds like
        assert_eq!(
            say(&r, "stop_timer", json!({"name": "Tee"})).await,
            (ToolStatus::Ok, "Stopped the tea timer.".into())
        );
        let again = tokio::time::timeout(Duration::from_millis(700), kitchen.recv()).await;
        assert!(again.is_err(), "rang after stop: {again:?}");
        assert_eq!(
            say(&r, "stop_timer", json!({})).await,
            (ToolStatus::Ok, "No timer is ringing.".into())
        );
        // not stopped: it rings `times` times, then no more
        say(&r, "set_timer", json!({"length": "1 second"})).await;
        let mut rings = 0;
        while let Ok(Some(text)) =
            tokio::time::timeout(Duration::from_millis(1500), kitchen.recv()).await
        {
            assert_eq!(text, "Your timer is done.");
            rings += 1;
        }
        assert_eq!(rings, 3);
        let _ = std::fs::remove_dir_all(dir);
    }

    /// "Cancel all timers" while one rings: it stops ringing, and the running ones go too.
    #[tokio::test]
    async fn cancel_all_silences_what_rings_and_cancels_what_runs() {
        let (r, dir) = registry("cancel-all").await;
        let timers = r.backends().timers().unwrap().clone();
        say(
            &r,
            "set_timer",
            json!({"length": "1 second", "name": "tea"}),
        )
        .await;
        say(&r, "set_timer", json!({"length": "1 hour"})).await;
        tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
        let ringing = ractor::call!(timers, TimersMsg::Ringing).unwrap();
        assert_eq!(ringing.len(), 1, "the tea timer rings");
        assert_eq!(
            say(&r, "cancel_timer", json!({"all": true})).await,
            (ToolStatus::Ok, "1 hour timer cancelled.".into())
        );
        assert!(ractor::call!(timers, TimersMsg::Ringing)
            .unwrap()
            .is_empty());
        assert!(ractor::call!(timers, TimersMsg::List).unwrap().is_empty());
        let _ = std::fs::remove_dir_all(dir);
    }
}
