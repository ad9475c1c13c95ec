//! Alarms and reminders as built-in tools: `set_alarm`, `set_reminder`, `cancel_alarm`,
//! `cancel_reminder`, `get_alarms`. They live beside the timers in the
//! [`crate::timers::Timers`] actor (the same file, the same crash safety, the same ring),
//! at a time of day in the system's time zone ([`crate::timers::next_ring`]: right across a
//! daylight-saving change).
//!
//! A time is a string of `"format": "clock"` ("7 am", "half past six": [`parse_clock`]). Said
//! without "am" or "pm", a one-off alarm or reminder is at the next time the clock shows it
//! ("wake me at 7" at 10 pm is 7 in the morning; "remind me at 6" at noon is 6 in the
//! evening); a repeating alarm is in the morning ("every weekday at 7": say "7 pm" for the
//! evening). The reply says which ("Alarm set for 7:00 AM tomorrow.").

use jiff::civil::{Date, Time, Weekday};
use jiff::Zoned;
use ractor::ActorRef;
use serde_json::{json, Map, Value};

use super::output::ToolStatus;
use crate::intent::{parse_clock, parse_length, say_length, say_time, Clock, IntentSpec};
use crate::timers::{next_ring, Alarm, Days, Kind, Timer, TimerError, TimersMsg};

/// One of the alarm tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AlarmTool {
    SetAlarm,
    SetReminder,
    CancelAlarm,
    CancelReminder,
    GetAlarms,
}

/// The days an alarm can repeat on, as its `days` parameter names them.
const DAYS: [&str; 10] = [
    "every day",
    "weekdays",
    "weekends",
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
];

impl AlarmTool {
    pub const ALL: [AlarmTool; 5] = [
        AlarmTool::SetAlarm,
        AlarmTool::SetReminder,
        AlarmTool::CancelAlarm,
        AlarmTool::CancelReminder,
        AlarmTool::GetAlarms,
    ];

    pub fn name(self) -> &'static str {
        match self {
            AlarmTool::SetAlarm => "set_alarm",
            AlarmTool::SetReminder => "set_reminder",
            AlarmTool::CancelAlarm => "cancel_alarm",
            AlarmTool::CancelReminder => "cancel_reminder",
            AlarmTool::GetAlarms => "get_alarms",
        }
    }

    pub fn description(self) -> &'static str {
        match self {
            AlarmTool::SetAlarm => "Set an alarm at a time of day, once or on repeating days.",
            AlarmTool::SetReminder => {
                "Remind the person of something at a time of day, or after a length of time."
            }
            AlarmTool::CancelAlarm => "Cancel an alarm, or all of them.",
            AlarmTool::CancelReminder => "Cancel a reminder, or all of them.",
            AlarmTool::GetAlarms => "Say which alarms and reminders are set.",
        }
    }

    /// The JSON Schema of its arguments.
    pub fn parameters(self) -> Value {
        let time = json!({"type": "string", "format": "clock", "description": "The time of day, as said: \"7 am\", \"half past six\"."});
        let all =
            |what: &str| json!({"type": "boolean", "description": format!("Cancel every {what}.")});
        let (properties, required) = match self {
            AlarmTool::SetAlarm => (
                json!({"time": time, "days": {"type": "string", "enum": DAYS, "description": "The days it repeats on; leave out for once."}}),
                json!(["time"]),
            ),
            AlarmTool::SetReminder => (
                json!({
                    "text": {"type": "string", "description": "What to remind of, e.g. \"call mum\"."},
                    "time": time,
                    "length": {"type": "string", "format": "length", "description": "Or after how long, as said: \"10 minutes\"."}
                }),
                json!(["text"]),
            ),
            AlarmTool::CancelAlarm => (json!({"time": time, "all": all("alarm")}), json!([])),
            AlarmTool::CancelReminder => (json!({"all": all("reminder")}), json!([])),
            AlarmTool::GetAlarms => (json!({}), json!([])),
        };
        super::builtin_parts::object_schema(properties, required)
    }

    /// Its local intents.
    pub fn intents(self) -> Vec<IntentSpec> {
        let intent = super::builtin_parts::intent;
        let all = || Map::from_iter([("all".to_string(), Value::Bool(true))]);
        match self {
            AlarmTool::SetAlarm => vec![IntentSpec {
                slots: [("days".to_string(), day_phrases())].into(),
                ..intent(
                    &[
                        // "4": whisper tiny.en writes "for" so before a time
                        "set [an|and|in] alarm (for|at|4) {time}",
                        "set [an|and|in] alarm (for|at|4) {time} {days}",
                        "set [an|and|in] alarm {days} (for|at|4) {time}",
                        "[an] alarm (for|at) {time}",
                        "wake me [up] at {time}",
                        "wake me [up] at {time} {days}",
                        "wake me [up] {days} at {time}",
                    ],
                    Map::new(),
                )
            }],
            AlarmTool::SetReminder => vec![intent(
                &[
                    "remind me to {text} at {time}",
                    "remind me at {time} to {text}",
                    "remind me to {text} in {length}",
                    "remind me in {length} to {text}",
                    "set a reminder to {text} at {time}",
                    "set a reminder to {text} in {length}",
                ],
                Map::new(),
            )],
            AlarmTool::CancelAlarm => vec![
                intent(
                    &[
                        "(cancel|delete|remove|turn off) [the|my] alarm",
                        "(cancel|delete|remove|turn off) [the|my] {time} alarm",
                        "(cancel|delete|remove|turn off) [the|my] alarm (for|at) {time}",
                    ],
                    Map::new(),
                ),
                intent(
                    &["(cancel|delete|remove|turn off) (all|all of) [the|my] alarms"],
                    all(),
                ),
            ],
            AlarmTool::CancelReminder => vec![
                intent(&["(cancel|delete|remove) [the|my] reminder"], Map::new()),
                intent(
                    &["(cancel|delete|remove) (all|all of) [the|my] reminders"],
                    all(),
                ),
            ],
            AlarmTool::GetAlarms => vec![intent(
                &[
                    "what alarms (do i have|are set)",
                    "(list|show) [me] [the|my] alarms",
                    "what reminders (do i have|are set)",
                    "(list|show) [me] [the|my] reminders",
                    "what are my (alarms|reminders)",
                    "when is my alarm [set for]",
                    "is my alarm set",
                    "do i have any (alarms|reminders) [set]",
                ],
                Map::new(),
            )],
        }
    }

    /// What it answers when it does as asked at `now`, where that is known before it runs:
    /// a new alarm's or reminder's confirmation, which reads only its arguments and the
    /// clock ("Alarm set for 7:00 AM tomorrow.", "I'll remind you to call mum in 10
    /// minutes."); `None` for the others, whose answers read the alarms.
    pub fn foreseen(self, arguments: &Value, now: &Zoned) -> Option<String> {
        let text = |k: &str| arguments.get(k).and_then(Value::as_str);
        let ringing = |clock: Clock, days: Days| {
            let at = pick_time(clock, days, now);
            let due = next_ring(at, days, now).map(|z| z.date());
            rings(&Alarm::new(at, days), due, now)
        };
        match self {
            AlarmTool::SetAlarm => {
                let clock = parse_clock(text("time")?)?;
                let days = days_of(text("days"));
                Some(format!("Alarm set for {}.", ringing(clock, days)))
            }
            AlarmTool::SetReminder => {
                let what = reminder_text(text("text")?);
                if what.is_empty() {
                    return None;
                }
                match (text("time"), text("length")) {
                    (Some(time), None) => Some(format!(
                        "I'll remind you to {what} at {}.",
                        ringing(parse_clock(time)?, Days::Once)
                    )),
                    (None, Some(length)) => Some(format!(
                        "I'll remind you to {what} in {}.",
                        say_length(parse_length(length)?)
                    )),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// Run a call of it against the timers actor (`None`: this process keeps none);
    /// `room`: where it was asked, where it rings.
    pub async fn run(
        self,
        arguments: &Value,
        room: Option<&str>,
        timers: Option<&ActorRef<TimersMsg>>,
    ) -> (ToolStatus, String) {
        let Some(timers) = timers else {
            return (ToolStatus::Error, super::timer_tools::NOT_HERE.into());
        };
        let text = |k: &str| arguments.get(k).and_then(Value::as_str);
        let time = match text("time").map(|t| (t, parse_clock(t))) {
            Some((_, Some(c))) => Some(c),
            Some((said, None)) => return bad(self, "time", said, "\"7 am\""),
            None => None,
        };
        let room = room.map(str::to_string);
        let now = Zoned::now();
        let answer = match self {
            AlarmTool::SetAlarm => {
                let days = days_of(text("days"));
                let Some(clock) = time else {
                    return bad(self, "time", "", "\"7 am\"");
                };
                let at = pick_time(clock, days, &now);
                ractor::call!(timers, |reply| TimersMsg::StartAlarm {
                    at,
                    days,
                    reminder: None,
                    room,
                    reply
                })
                .map(|r| r.map(|t| format!("Alarm set for {}.", when(&t, &now))))
            }
            AlarmTool::SetReminder => {
                let what = reminder_text(text("text").unwrap_or(""));
                if what.is_empty() {
                    return bad(self, "text", "", "what to remind of, \"call mum\"");
                }
                match (time, text("length")) {
                    (Some(clock), None) => {
                        let at = pick_time(clock, Days::Once, &now);
                        ractor::call!(timers, |reply| TimersMsg::StartAlarm {
                            at,
                            days: Days::Once,
                            reminder: Some(what.clone()),
                            room,
                            reply
                        })
                        .map(|r| r.map(|t| format!("I'll remind you to {what} at {}.", when(&t, &now))))
                    }
                    (None, Some(said)) => {
                        let Some(length) = parse_length(said) else {
                            return bad(self, "length", said, "\"10 minutes\"");
                        };
                        ractor::call!(timers, |reply| TimersMsg::Start {
                            name: None,
                            length,
                            room,
                            reminder: Some(what.clone()),
                            reply
                        })
                        .map(|r| {
                            r.map(|_| format!("I'll remind you to {what} in {}.", say_length(length)))
                        })
                    }
                    _ => {
                        return (
                            ToolStatus::Error,
                            "set_reminder: give either a time of day (\"time\") or a length of time (\"length\"), one of them".into(),
                        )
                    }
                }
            }
            AlarmTool::CancelAlarm | AlarmTool::CancelReminder => {
                let all = arguments.get("all").and_then(Value::as_bool) == Some(true);
                let kind = if self == AlarmTool::CancelAlarm {
                    Kind::Alarm
                } else {
                    Kind::Reminder
                };
                cancel(timers, kind, time, all).await
            }
            AlarmTool::GetAlarms => {
                ractor::call!(timers, TimersMsg::List).map(|all| Ok(listed(&all, &now)))
            }
        };
        super::timer_tools::outcome(answer)
    }
}

/// A value of `param` that is not one: an error the model can act on.
fn bad(tool: AlarmTool, param: &str, said: &str, like: &str) -> (ToolStatus, String) {
    (
        ToolStatus::Error,
        format!(
            "{}: {param} {said:?} is not one; give it as said, e.g. {like}",
            tool.name()
        ),
    )
}

/// The phrases of the `days` slot beyond its values: "every weekday", "on mondays".
fn day_phrases() -> std::collections::BTreeMap<String, Value> {
    let mut out = std::collections::BTreeMap::new();
    let mut add = |said: String, value: &str| {
        out.insert(said, Value::String(value.to_string()));
    };
    for said in ["every day", "daily", "each day", "every morning"] {
        add(said.into(), "every day");
    }
    for said in ["every weekday", "on weekdays", "during the week"] {
        add(said.into(), "weekdays");
    }
    for said in [
        "every weekend",
        "on weekends",
        "at weekends",
        "at the weekend",
    ] {
        add(said.into(), "weekends");
    }
    for day in &DAYS[3..] {
        add(format!("on {day}"), day);
        add(format!("on {day}s"), day);
        add(format!("every {day}"), day);
        add(format!("{day}s"), day);
    }
    out
}

/// The `days` parameter's value as [`Days`] (its values are the names `Days` is kept by;
/// absent or unknown: once).
fn days_of(said: Option<&str>) -> Days {
    said.and_then(|d| Days::try_from(d.to_string()).ok())
        .unwrap_or(Days::Once)
}

/// The time a clock said means: with "am"/"pm", that one; without, for a one-off, the one
/// that comes first; for a repeating alarm, the morning's.
fn pick_time(clock: Clock, days: Days, now: &Zoned) -> Time {
    let times = clock.times();
    let first = times.first().copied().unwrap_or(Time::midnight());
    if days != Days::Once {
        return first;
    }
    times
        .into_iter()
        .min_by_key(|t| next_ring(*t, Days::Once, now).map(|z| z.timestamp()))
        .unwrap_or(first)
}

/// "call mum" from "to call mum", "Call mum."
fn reminder_text(said: &str) -> String {
    let t = said.trim().trim_end_matches(['.', '!', '?']);
    let t = t.strip_prefix("to ").unwrap_or(t);
    t.to_string()
}

/// When an alarm or reminder rings, as the reply says it: "7:00 AM tomorrow", "7:00 AM on
/// weekdays".
fn when(t: &Timer, now: &Zoned) -> String {
    let Some(alarm) = &t.alarm else {
        return String::new();
    };
    let due = jiff::Timestamp::from_millisecond(t.due_ms().unwrap_or(0))
        .ok()
        .map(|ts| ts.to_zoned(now.time_zone().clone()).date());
    rings(alarm, due, now)
}

/// [`when`] of `alarm`, which rings once on `due` (its date, if known) or on its days.
fn rings(alarm: &Alarm, due: Option<Date>, now: &Zoned) -> String {
    let at = say_time(alarm.time());
    match alarm.days {
        Days::Once => {
            let today = now.date();
            match due {
                Some(d) if d == today => format!("{at} today"),
                Some(d) if today.tomorrow().ok() == Some(d) => format!("{at} tomorrow"),
                Some(d) => format!("{at} on {}", d.strftime("%A")),
                None => at,
            }
        }
        Days::Every => format!("{at} every day"),
        Days::Weekdays => format!("{at} on weekdays"),
        Days::Weekends => format!("{at} at weekends"),
        Days::On(d) => format!("{at} on {}s", weekday_name(d)),
    }
}

fn weekday_name(d: Weekday) -> &'static str {
    match d {
        Weekday::Monday => "Monday",
        Weekday::Tuesday => "Tuesday",
        Weekday::Wednesday => "Wednesday",
        Weekday::Thursday => "Thursday",
        Weekday::Friday => "Friday",
        Weekday::Saturday => "Saturday",
        Weekday::Sunday => "Sunday",
    }
}

/// Cancel the alarms (or reminders) meant: at `time` (either half when said without), all,
/// or the only one.
async fn cancel(
    timers: &ActorRef<TimersMsg>,
    kind: Kind,
    time: Option<Clock>,
    all: bool,
) -> Result<Result<String, TimerError>, ractor::RactorErr<TimersMsg>> {
    let what = if kind == Kind::Alarm {
        "alarm"
    } else {
        "reminder"
    };
    let listed = ractor::call!(timers, TimersMsg::List)?;
    let of_kind: Vec<&Timer> = listed.iter().filter(|t| t.kind() == kind).collect();
    let meant: Vec<&Timer> = match time {
        Some(c) => {
            let times = c.times();
            of_kind
                .iter()
                .copied()
                .filter(|t| t.alarm.as_ref().is_some_and(|a| times.contains(&a.time())))
                .collect()
        }
        None => of_kind.clone(),
    };
    let label = |t: &Timer| match (&t.reminder, &t.alarm) {
        (Some(r), _) => r.clone(),
        (None, Some(a)) => say_time(a.time()),
        (None, None) => what.to_string(),
    };
    match (meant.as_slice(), time, all) {
        ([], Some(c), _) => return Ok(Ok(format!("There is no {} {what}.", c.say()))),
        ([], None, _) => return Ok(Ok(format!("There is no {what} set."))),
        ([_, _, ..], _, false) => {
            let names: Vec<String> = meant.iter().map(|t| label(t)).collect();
            return Ok(Ok(format!(
                "Which {what}: {}?",
                crate::timers::or_list(&names)
            )));
        }
        _ => {}
    }
    let ids: Vec<u64> = meant.iter().map(|t| t.id).collect();
    let gone = ractor::call!(timers, TimersMsg::CancelIds, ids)?;
    Ok(gone.map(|gone| match gone.as_slice() {
        [one] => format!("The {} {what} is cancelled.", label(one)),
        many => format!("All {} {what}s cancelled.", many.len()),
    }))
}

/// "Alarms: 7:00 AM on weekdays. Reminders: call mum at 6:00 PM today."
fn listed(all: &[Timer], now: &Zoned) -> String {
    let alarms: Vec<String> = all
        .iter()
        .filter(|t| t.kind() == Kind::Alarm)
        .map(|t| when(t, now))
        .collect();
    let reminders: Vec<String> = all
        .iter()
        .filter(|t| t.kind() == Kind::Reminder)
        .map(|t| {
            let what = t.reminder.clone().unwrap_or_default();
            match &t.alarm {
                Some(_) => format!("{what} at {}", when(t, now)),
                None => format!(
                    "{what} in {}",
                    say_length(std::time::Duration::from_millis(
                        t.left_ms(crate::timers::now_ms())
                    ))
                ),
            }
        })
        .collect();
    let mut out = Vec::new();
    match alarms.as_slice() {
        [] => {}
        [one] => out.push(format!("One alarm, {one}.")),
        many => out.push(format!("{} alarms: {}.", many.len(), many.join("; "))),
    }
    match reminders.as_slice() {
        [] => {}
        [one] => out.push(format!("One reminder: {one}.")),
        many => out.push(format!("{} reminders: {}.", many.len(), many.join("; "))),
    }
    if out.is_empty() {
        return "There are no alarms or reminders.".into();
    }
    out.join(" ")
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use ractor::Actor;
    use serde_json::json;

    use super::*;
    use crate::timers::{Store, Timers, TimersArgs};
    use crate::toolcall::ToolSet;
    use crate::tools::{Backends, Registry, Tool};

    fn heard(registry: &Registry, text: &str) -> Option<String> {
        let calls = registry.intents().recognize(text)?;
        let [call] = calls.as_slice() else {
            return Some(format!("{} calls", calls.len()));
        };
        Some(format!("{} {}", call.tool, call.arguments))
    }

    #[test]
    fn alarm_and_reminder_sentences_are_local_intents() {
        let mut tools = Tool::builtins();
        tools.extend(Tool::timers());
        let r = Registry::new(tools).unwrap();
        let cases: &[(&str, &str, Value)] = &[
            (
                "Wake me up at 7 a.m.",
                "set_alarm",
                json!({"time": "7:00 AM"}),
            ),
            ("wake me at seven", "set_alarm", json!({"time": "7:00"})),
            (
                "Set an alarm for 6:30 every weekday.",
                "set_alarm",
                json!({"time": "6:30", "days": "weekdays"}),
            ),
            (
                "set and alarm for half, pass 6,",
                "set_alarm",
                json!({"time": "6:30"}),
            ),
            (
                "set and alarm, 4 half past 6,",
                "set_alarm",
                json!({"time": "6:30"}),
            ),
            (
                "set an alarm for half past six on saturdays",
                "set_alarm",
                json!({"time": "6:30", "days": "saturday"}),
            ),
            (
                "wake me up every day at 7 am",
                "set_alarm",
                json!({"time": "7:00 AM", "days": "every day"}),
            ),
            (
                "Remind me to call mum at 6 pm.",
                "set_reminder",
                json!({"text": "call mum", "time": "6:00 PM"}),
            ),
            (
                "remind me at noon to feed the cat",
                "set_reminder",
                json!({"text": "feed the cat", "time": "12:00 PM"}),
            ),
            (
                "remind me to take the bins out in ten minutes",
                "set_reminder",
                json!({"text": "take the bins out", "length": "10 minutes"}),
            ),
            ("cancel my alarm", "cancel_alarm", json!({})),
            (
                "cancel the 7 am alarm",
                "cancel_alarm",
                json!({"time": "7:00 AM"}),
            ),
            // "six thirty" as whisper tiny.en wrote it
            (
                "cancel the 6th 30 alarm,",
                "cancel_alarm",
                json!({"time": "6:30"}),
            ),
            ("turn off all alarms", "cancel_alarm", json!({"all": true})),
            ("cancel the reminder", "cancel_reminder", json!({})),
            ("what alarms do I have?", "get_alarms", json!({})),
            ("what are my reminders", "get_alarms", json!({})),
        ];
        for (text, tool, args) in cases {
            assert_eq!(heard(&r, text), Some(format!("{tool} {args}")), "{text:?}");
        }
        for text in [
            "I woke up at 7",
            "my alarm clock is broken",
            "remind me",
            "what a time",
        ] {
            assert_eq!(heard(&r, text), None, "{text:?}");
        }
    }

    /// The built-ins of a registry whose timers actor keeps its alarms in `dir` (emptied
    /// first), and that actor.
    async fn served(
        dir: &std::path::Path,
    ) -> (Registry, ractor::ActorRef<crate::timers::TimersMsg>) {
        let _ = std::fs::remove_dir_all(dir);
        let (timers, _) = Actor::spawn(
            None,
            Timers,
            TimersArgs {
                store: Store::in_dir(dir),
            },
        )
        .await
        .unwrap();
        let backends = Backends::none();
        backends.serve_timers(timers.clone());
        (Registry::builtins_with(Arc::new(backends)).unwrap(), timers)
    }

    #[tokio::test]
    async fn a_new_alarms_and_reminders_answer_is_foreseen_as_it_is_then_said() {
        let dir =
            std::env::temp_dir().join(format!("hearth-alarm-foreseen-{}", std::process::id()));
        let (r, _) = served(&dir).await;
        for (name, args) in [
            ("set_alarm", json!({"time": "7 am", "days": "weekdays"})),
            ("set_alarm", json!({"time": "9:30 pm"})),
            ("set_alarm", json!({"time": "6 am"})),
            (
                "set_alarm",
                json!({"time": "half past six", "days": "every day"}),
            ),
            (
                "set_reminder",
                json!({"text": "to call mum", "time": "6 pm"}),
            ),
            (
                "set_reminder",
                json!({"text": "Take the bins out.", "length": "10 minutes"}),
            ),
        ] {
            let call = ToolSet::unrestricted()
                .call("c", name, args.clone())
                .unwrap();
            let foreseen = r.foreseen_confirmation(&call, &Zoned::now()).await;
            let o = r.call_in(&call, Some("bedroom")).await;
            assert_eq!(o.status, ToolStatus::Ok, "{}", o.result);
            assert_eq!(
                foreseen.as_deref(),
                Some(o.result.as_str()),
                "{name} {args}"
            );
        }
        // what reads the alarms is not known before it runs; nor is a time that is none
        for (name, args) in [
            ("get_alarms", json!({})),
            ("cancel_alarm", json!({"time": "7 am"})),
            ("set_alarm", json!({"time": "soon"})),
        ] {
            let call = ToolSet::unrestricted().call("c", name, args).unwrap();
            let foreseen = r.foreseen_confirmation(&call, &Zoned::now()).await;
            assert_eq!(foreseen, None, "{name}");
        }
        let _ = std::fs::remove_dir_all(dir);
    }

    #[tokio::test]
    async fn alarms_and_reminders_are_set_listed_cancelled_and_rung() {
        let dir = std::env::temp_dir().join(format!("hearth-alarm-tools-{}", std::process::id()));
        let (r, timers) = served(&dir).await;
        let say = |name: &'static str, args: Value| {
            let r = &r;
            async move {
                let call = ToolSet::unrestricted().call("c", name, args).unwrap();
                let o = r.call_in(&call, Some("bedroom")).await;
                (o.status, o.result)
            }
        };
        let (status, said) = say("set_alarm", json!({"time": "7 am", "days": "weekdays"})).await;
        assert_eq!(
            (status, said.as_str()),
            (ToolStatus::Ok, "Alarm set for 7:00 AM on weekdays.")
        );
        let (_, said) = say("set_alarm", json!({"time": "9:30 pm"})).await;
        assert!(
            said == "Alarm set for 9:30 PM today." || said == "Alarm set for 9:30 PM tomorrow.",
            "{said}"
        );
        let (_, said) = say(
            "set_reminder",
            json!({"text": "to call mum", "time": "6 pm"}),
        )
        .await;
        assert!(
            said.starts_with("I'll remind you to call mum at 6:00 PM "),
            "{said}"
        );
        let (_, said) = say("get_alarms", json!({})).await;
        assert!(said.starts_with("2 alarms: "), "{said}");
        assert!(
            said.contains("7:00 AM on weekdays") && said.contains("9:30 PM "),
            "{said}"
        );
        assert!(said.contains("One reminder: call mum at 6:00 PM"), "{said}");
        // the timers know nothing of them
        let (_, said) = say("get_timers", json!({})).await;
        assert_eq!(said, "There is no timer running.");
        let which = say("cancel_alarm", json!({})).await.1;
        assert!(
            [
                "Which alarm: 7:00 AM or 9:30 PM?",
                "Which alarm: 9:30 PM or 7:00 AM?"
            ]
            .contains(&which.as_str()),
            "{which}"
        );
        assert_eq!(
            say("cancel_alarm", json!({"time": "8"})).await.1,
            "There is no 8:00 alarm."
        );
        assert_eq!(
            say("cancel_alarm", json!({"time": "7"})).await.1,
            "The 7:00 AM alarm is cancelled."
        );
        assert_eq!(
            say("cancel_reminder", json!({})).await.1,
            "The call mum reminder is cancelled."
        );
        // a reminder after a length rings in its room with its words
        let announcer = crate::announce::Announcer::new();
        let mut bedroom = announcer.subscribe(Some("bedroom".into()));
        crate::timers::spawn_ringer(
            timers.clone(),
            Some(announcer),
            None,
            crate::timers::Ringing::default(),
        );
        let (_, said) = say(
            "set_reminder",
            json!({"text": "feed the cat", "length": "1 second"}),
        )
        .await;
        assert_eq!(said, "I'll remind you to feed the cat in 1 second.");
        let rang = tokio::time::timeout(std::time::Duration::from_secs(3), bedroom.recv()).await;
        assert_eq!(rang.unwrap().as_deref(), Some("Reminder: feed the cat."));
        assert_eq!(
            say("stop_timer", json!({})).await.1,
            "Stopped the reminder."
        );
        // kept across a restart: what the file holds is what was acknowledged
        timers.stop(None);
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        let left = Store::in_dir(&dir).load();
        assert_eq!(left.timers.len(), 1);
        assert_eq!(left.timers[0].kind(), Kind::Alarm);
        let _ = std::fs::remove_dir_all(dir);
    }
}
