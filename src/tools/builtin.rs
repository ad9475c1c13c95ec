//! Built-in tools: `get_time` and `get_date`, local time in the system time zone.

use jiff::Zoned;

/// A tool compiled into hearth.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Builtin {
    /// `get_time`: the local time as said aloud, `"2:05 PM"`.
    Time,
    /// `get_date`: the local date, `"Sunday, 22 November 2026"`.
    Date,
}

impl Builtin {
    /// Every built-in, in registry order.
    pub const ALL: [Builtin; 2] = [Builtin::Time, Builtin::Date];

    /// The tool name.
    pub fn name(self) -> &'static str {
        match self {
            Builtin::Time => "get_time",
            Builtin::Date => "get_date",
        }
    }

    /// The description the model reads.
    pub fn description(self) -> &'static str {
        match self {
            Builtin::Time => "Get the current local time.",
            Builtin::Date => "Get today's date.",
        }
    }

    /// The built-in with this tool name.
    pub(crate) fn from_name(name: &str) -> Option<Builtin> {
        Self::ALL.into_iter().find(|b| b.name() == name)
    }

    /// The spoken answer: the result itself. A small model asked to restate a time garbles
    /// it (Qwen2.5-Coder-0.5B turned "00:07" into "07:00"), so the built-ins speak their
    /// result and skip the second LLM hop: always right, and the answer comes sooner.
    pub fn say(self) -> &'static str {
        match self {
            Builtin::Time => "It's {{ result }}.",
            Builtin::Date => "Today is {{ result }}.",
        }
    }

    /// The sentences that ask for it, as `[[tool.intent]]` would give them.
    pub fn sentences(self) -> &'static [&'static str] {
        match self {
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
        }
    }

    /// Run it now, in the system time zone.
    pub fn run(self) -> Result<String, jiff::Error> {
        self.run_at(&Zoned::now())
    }

    /// Run it at a given time (for tests and replays).
    pub(crate) fn run_at(self, now: &Zoned) -> Result<String, jiff::Error> {
        let format = match self {
            Builtin::Time => "%-I:%M %p",
            Builtin::Date => "%A, %-d %B %Y",
        };
        jiff::fmt::strtime::format(format, now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        let z: Zoned = "2026-11-22T04:05:09+01:00[+01:00]".parse().unwrap();
        assert_eq!(Builtin::Time.run_at(&z).unwrap(), "4:05 AM");
        let z: Zoned = "2026-11-22T00:07:00[UTC]".parse().unwrap();
        assert_eq!(Builtin::Time.run_at(&z).unwrap(), "12:07 AM");
        let z: Zoned = "2026-11-22T12:30:00[UTC]".parse().unwrap();
        assert_eq!(Builtin::Time.run_at(&z).unwrap(), "12:30 PM");
        let z: Zoned = "2026-11-22T23:59:00[UTC]".parse().unwrap();
        assert_eq!(Builtin::Time.run_at(&z).unwrap(), "11:59 PM");
        assert_eq!(
            Builtin::Date.run_at(&z).unwrap(),
            "Sunday, 22 November 2026"
        );
        let z: Zoned = "2026-03-01T23:59:00[UTC]".parse().unwrap();
        assert_eq!(Builtin::Date.run_at(&z).unwrap(), "Sunday, 1 March 2026");
    }

    #[test]
    fn get_time_returns_h_mm_am_pm_now() {
        let t = Builtin::Time.run().unwrap();
        let (clock, half) = t.split_once(' ').unwrap();
        assert!(half == "AM" || half == "PM", "{t}");
        let (h, m) = clock.split_once(':').unwrap();
        let (h, m): (u8, u8) = (h.parse().unwrap(), m.parse().unwrap());
        assert!((1..=12).contains(&h) && m < 60 && clock.len() <= 5, "{t}");
    }

    #[test]
    fn names() {
        assert_eq!(Builtin::from_name("get_date"), Some(Builtin::Date));
        assert_eq!(Builtin::from_name("get_weather"), None);
    }
}
