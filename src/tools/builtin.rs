//! Built-in tools: `get_time` and `get_date`, local time in the system time zone.

use jiff::Zoned;

use super::manifest::no_parameters;
use super::registry::{Executor, Tool};
use crate::toolcall::ToolSpec;

/// A tool compiled into hearth.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Builtin {
    /// `get_time`: the local time, `"14:05"`.
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
    pub fn from_name(name: &str) -> Option<Builtin> {
        Self::ALL.into_iter().find(|b| b.name() == name)
    }

    /// The built-in as a registry tool (no parameters, no `say`).
    pub fn tool(self) -> Tool {
        Tool {
            spec: ToolSpec {
                name: self.name().into(),
                description: self.description().into(),
                parameters: no_parameters(),
            },
            say: None,
            executor: Executor::Builtin(self),
        }
    }

    /// Every built-in as a registry tool.
    pub fn tools() -> Vec<Tool> {
        Self::ALL.into_iter().map(Builtin::tool).collect()
    }

    /// Run it now, in the system time zone.
    pub fn run(self) -> Result<String, jiff::Error> {
        self.run_at(&Zoned::now())
    }

    /// Run it at a given time (for tests and replays).
    pub fn run_at(self, now: &Zoned) -> Result<String, jiff::Error> {
        let format = match self {
            Builtin::Time => "%H:%M",
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
        assert_eq!(Builtin::Time.run_at(&z).unwrap(), "04:05");
        assert_eq!(
            Builtin::Date.run_at(&z).unwrap(),
            "Sunday, 22 November 2026"
        );
        let z: Zoned = "2026-03-01T23:59:00[UTC]".parse().unwrap();
        assert_eq!(Builtin::Date.run_at(&z).unwrap(), "Sunday, 1 March 2026");
    }

    #[test]
    fn get_time_returns_hh_mm_now() {
        let t = Builtin::Time.run().unwrap();
        let b = t.as_bytes();
        assert_eq!(b.len(), 5, "{t}");
        assert!(b[0].is_ascii_digit() && b[1].is_ascii_digit() && b[2] == b':');
        assert!(b[3].is_ascii_digit() && b[4].is_ascii_digit());
        let (h, m): (u8, u8) = (t[..2].parse().unwrap(), t[3..].parse().unwrap());
        assert!(h < 24 && m < 60, "{t}");
    }

    #[test]
    fn names() {
        assert_eq!(Builtin::from_name("get_date"), Some(Builtin::Date));
        assert_eq!(Builtin::from_name("get_weather"), None);
        assert_eq!(Builtin::Time.tool().spec.name, "get_time");
    }
}
