//! Built-in tools: `get_time` and `get_date`, local time in the system time zone, and the
//! timers ([`TimerTool`]).

use jiff::Zoned;
use ractor::ActorRef;

use super::alarm_tools::AlarmTool;
use super::device_tools::DeviceTool;
use super::timer_tools::TimerTool;
use serde_json::{json, Value};

use crate::intent::IntentSpec;
use crate::timers::TimersMsg;

/// A tool compiled into hearth.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Builtin {
    /// `get_time`: the local time as said aloud, `"2:05 PM"`.
    Time,
    /// `get_date`: the local date, `"Sunday, 22 November 2026"`.
    Date,
    /// A timer tool: set, cancel, add or take time, pause, resume, how long is left.
    Timer(TimerTool),
    /// An alarm or reminder tool.
    Alarm(AlarmTool),
    /// A control of hearth itself: the volume, the microphone.
    Device(DeviceTool),
}

impl Builtin {
    /// Every built-in, in registry order.
    pub fn all() -> impl Iterator<Item = Builtin> {
        [Builtin::Time, Builtin::Date]
            .into_iter()
            .chain(TimerTool::ALL.map(Builtin::Timer))
            .chain(AlarmTool::ALL.map(Builtin::Alarm))
            .chain(DeviceTool::ALL.map(Builtin::Device))
    }

    /// The tool name.
    pub fn name(self) -> &'static str {
        match self {
            Builtin::Time => "get_time",
            Builtin::Date => "get_date",
            Builtin::Timer(t) => t.name(),
            Builtin::Alarm(a) => a.name(),
            Builtin::Device(d) => d.name(),
        }
    }

    /// The description the model reads.
    pub fn description(self) -> &'static str {
        match self {
            Builtin::Time => "Get the current local time.",
            Builtin::Date => "Get today's date.",
            Builtin::Timer(t) => t.description(),
            Builtin::Alarm(a) => a.description(),
            Builtin::Device(d) => d.description(),
        }
    }

    /// The JSON Schema of its arguments.
    pub fn parameters(self) -> Value {
        match self {
            Builtin::Time | Builtin::Date => no_parameters(),
            Builtin::Timer(t) => t.parameters(),
            Builtin::Alarm(a) => a.parameters(),
            Builtin::Device(d) => d.parameters(),
        }
    }

    /// The built-in with this tool name.
    pub(crate) fn from_name(name: &str) -> Option<Builtin> {
        Self::all().find(|b| b.name() == name)
    }

    /// The spoken answer: the result itself. A small model asked to restate a time garbles
    /// it (Qwen2.5-Coder-0.5B turned "00:07" into "07:00"), so the built-ins speak their
    /// result and skip the second LLM hop: always right, and the answer comes sooner.
    /// The timers' results are their answers, said as they are.
    pub fn say(self) -> &'static str {
        match self {
            Builtin::Time => "It's {{ result }}.",
            Builtin::Date => "Today is {{ result }}.",
            Builtin::Timer(_) | Builtin::Alarm(_) | Builtin::Device(_) => "{{ result }}",
        }
    }

    /// Its local intents, as `[[tool.intent]]` tables would give them.
    pub fn intents(self) -> Vec<IntentSpec> {
        let sentences: &[&str] = match self {
            Builtin::Timer(t) => return t.intents(),
            Builtin::Alarm(a) => return a.intents(),
            Builtin::Device(d) => return d.intents(),
            Builtin::Time => &[
                "what time is it",
                "what's the time",
                "what is the time",
                "tell me the time",
                "what's the time please",
            ],
            Builtin::Date => &[
                "what's the date [today]",
                "what is the date [today]",
                "what day is it [today]",
                "(what's|what is) today's date",
                "tell me the date",
            ],
        };
        vec![super::builtin_parts::intent(
            sentences,
            serde_json::Map::new(),
        )]
    }

    /// Run a clock built-in now, in the system time zone (`None` for the timers, which
    /// run against the timers actor: [`TimerTool::run`]).
    pub fn run(self) -> Option<Result<String, jiff::Error>> {
        self.run_at(&Zoned::now())
    }

    /// The result it gives when it does as asked `at`, where that is known before it runs:
    /// the clock's time then, a new timer's, alarm's or reminder's confirmation, the
    /// timers' time left then ([`TimerTool::foreseen`], [`AlarmTool::foreseen`]); `None`
    /// for the others.
    pub async fn foreseen(
        self,
        arguments: &Value,
        timers: Option<&ActorRef<TimersMsg>>,
        at: &Zoned,
    ) -> Option<String> {
        match self {
            Builtin::Time | Builtin::Date => self.run_at(at)?.ok(),
            Builtin::Timer(t) => t.foreseen(arguments, timers, at).await,
            Builtin::Alarm(a) => a.foreseen(arguments, at),
            Builtin::Device(_) => None,
        }
    }

    /// Run a clock built-in at a given time (for tests and replays).
    pub(crate) fn run_at(self, now: &Zoned) -> Option<Result<String, jiff::Error>> {
        let format = match self {
            Builtin::Time => "%-I:%M %p",
            Builtin::Date => "%A, %-d %B %Y",
            Builtin::Timer(_) | Builtin::Alarm(_) | Builtin::Device(_) => return None,
        };
        Some(jiff::fmt::strtime::format(format, now))
    }
}

/// The schema of a tool without parameters.
pub fn no_parameters() -> Value {
    json!({"type": "object", "properties": {}, "additionalProperties": false})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        let z: Zoned = "2026-11-22T04:05:09+01:00[+01:00]".parse().unwrap();
        assert_eq!(Builtin::Time.run_at(&z).unwrap().unwrap(), "4:05 AM");
        let z: Zoned = "2026-11-22T00:07:00[UTC]".parse().unwrap();
        assert_eq!(Builtin::Time.run_at(&z).unwrap().unwrap(), "12:07 AM");
        let z: Zoned = "2026-11-22T12:30:00[UTC]".parse().unwrap();
        assert_eq!(Builtin::Time.run_at(&z).unwrap().unwrap(), "12:30 PM");
        let z: Zoned = "2026-11-22T23:59:00[UTC]".parse().unwrap();
        assert_eq!(Builtin::Time.run_at(&z).unwrap().unwrap(), "11:59 PM");
        assert_eq!(
            Builtin::Date.run_at(&z).unwrap().unwrap(),
            "Sunday, 22 November 2026"
        );
        let z: Zoned = "2026-03-01T23:59:00[UTC]".parse().unwrap();
        assert_eq!(
            Builtin::Date.run_at(&z).unwrap().unwrap(),
            "Sunday, 1 March 2026"
        );
    }

    #[test]
    fn get_time_returns_h_mm_am_pm_now() {
        let t = Builtin::Time.run().unwrap().unwrap();
        let (clock, half) = t.split_once(' ').unwrap();
        assert!(half == "AM" || half == "PM", "{t}");
        let (h, m) = clock.split_once(':').unwrap();
        let (h, m): (u8, u8) = (h.parse().unwrap(), m.parse().unwrap());
        assert!((1..=12).contains(&h) && m < 60 && clock.len() <= 5, "{t}");
    }

    #[test]
    fn every_built_in_s_sentences_compile() {
        for b in Builtin::all() {
            let compiled =
                crate::intent::ToolIntents::compile(b.name(), &b.intents(), &b.parameters());
            assert!(compiled.is_ok(), "{}: {:?}", b.name(), compiled.err());
        }
    }

    #[test]
    fn names() {
        assert_eq!(Builtin::from_name("get_date"), Some(Builtin::Date));
        assert_eq!(Builtin::from_name("get_weather"), None);
    }
}
