//! When an alarm rings next: a time of day on the days it repeats, in the system's time zone,
//! right across a daylight-saving change.
//!
//! An alarm is a wall-clock time ("7:00", "6 pm") and the days it rings ([`Days`]). Its next
//! ring after a moment is found on the civil calendar and only then made a moment in the
//! zone, so a change of offset neither skips nor doubles it: a time the clocks skip in
//! spring ("2:30" when 2:00 becomes 3:00) rings at the moment the clocks jump (3:00 there:
//! jiff's "compatible" rule, as most systems do), and a time that happens twice in autumn
//! rings once, at the first of the two.

use jiff::civil::{Time, Weekday};
use jiff::Zoned;

/// The days an alarm rings on (kept in the state file by name: "once", "every day",
/// "weekdays", "weekends", "monday" …).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum Days {
    /// The next time the clock shows it, then no more.
    Once,
    Every,
    /// Monday to Friday.
    Weekdays,
    /// Saturday and Sunday.
    Weekends,
    /// One day of the week.
    On(Weekday),
}

const WEEKDAYS: [(Weekday, &str); 7] = [
    (Weekday::Monday, "monday"),
    (Weekday::Tuesday, "tuesday"),
    (Weekday::Wednesday, "wednesday"),
    (Weekday::Thursday, "thursday"),
    (Weekday::Friday, "friday"),
    (Weekday::Saturday, "saturday"),
    (Weekday::Sunday, "sunday"),
];

impl From<Days> for String {
    fn from(d: Days) -> String {
        match d {
            Days::Once => "once",
            Days::Every => "every day",
            Days::Weekdays => "weekdays",
            Days::Weekends => "weekends",
            Days::On(w) => WEEKDAYS
                .iter()
                .find(|(x, _)| *x == w)
                .map_or("once", |(_, n)| n),
        }
        .to_string()
    }
}

impl TryFrom<String> for Days {
    type Error = String;
    fn try_from(s: String) -> Result<Days, String> {
        match s.as_str() {
            "once" => Ok(Days::Once),
            "every day" => Ok(Days::Every),
            "weekdays" => Ok(Days::Weekdays),
            "weekends" => Ok(Days::Weekends),
            other => WEEKDAYS
                .iter()
                .find(|(_, n)| *n == other)
                .map(|(w, _)| Days::On(*w))
                .ok_or_else(|| format!("{other:?} is no days an alarm rings on")),
        }
    }
}

impl Days {
    fn has(self, day: Weekday) -> bool {
        match self {
            Days::Once | Days::Every => true,
            Days::Weekdays => !matches!(day, Weekday::Saturday | Weekday::Sunday),
            Days::Weekends => matches!(day, Weekday::Saturday | Weekday::Sunday),
            Days::On(d) => d == day,
        }
    }
}

/// The first moment after `after` (exclusive) that the alarm at `at` on `days` rings, in
/// `after`'s time zone; `None` only if the calendar runs out.
pub fn next_ring(at: Time, days: Days, after: &Zoned) -> Option<Zoned> {
    let zone = after.time_zone();
    let mut date = after.date();
    // a week and a day covers every pattern
    for _ in 0..8 {
        if days.has(date.weekday()) {
            let ring = date.to_datetime(at).to_zoned(zone.clone()).ok()?;
            if ring.timestamp() > after.timestamp() {
                return Some(ring);
            }
        }
        date = date.tomorrow().ok()?;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::civil::time;

    fn at(s: &str) -> Zoned {
        s.parse().unwrap()
    }

    #[test]
    fn the_next_ring_follows_the_days() {
        // Friday 27 November 2026, 8 am in London
        let now = at("2026-11-27T08:00:00[Europe/London]");
        let seven = time(7, 0, 0, 0);
        let next = |days| next_ring(seven, days, &now).unwrap().to_string();
        assert_eq!(next(Days::Once), "2026-11-28T07:00:00+00:00[Europe/London]");
        assert_eq!(
            next(Days::Weekdays),
            "2026-11-30T07:00:00+00:00[Europe/London]"
        );
        assert_eq!(
            next(Days::Weekends),
            "2026-11-28T07:00:00+00:00[Europe/London]"
        );
        assert_eq!(
            next(Days::On(Weekday::Friday)),
            "2026-12-04T07:00:00+00:00[Europe/London]"
        );
        // later the same day
        let nine = next_ring(time(9, 0, 0, 0), Days::Every, &now).unwrap();
        assert_eq!(nine.to_string(), "2026-11-27T09:00:00+00:00[Europe/London]");
        // exactly now is not "after"
        let eight = next_ring(time(8, 0, 0, 0), Days::Every, &now).unwrap();
        assert_eq!(eight.date().to_string(), "2026-11-28");
    }

    /// New York's clocks jump from 2:00 to 3:00 on 8 March 2026 and fall back from 2:00 to
    /// 1:00 on 1 November 2026.
    #[test]
    fn a_daylight_saving_change_neither_skips_nor_doubles_an_alarm() {
        // every day at 7: the day after each change still at 7 on the wall clock
        let before_spring = at("2026-03-07T08:00:00[America/New_York]");
        let ring = next_ring(time(7, 0, 0, 0), Days::Every, &before_spring).unwrap();
        assert_eq!(
            ring.to_string(),
            "2026-03-08T07:00:00-04:00[America/New_York]"
        );
        // a time the clocks skip rings when they jump, once
        let ring = next_ring(time(2, 30, 0, 0), Days::Every, &before_spring).unwrap();
        assert_eq!(
            ring.to_string(),
            "2026-03-08T03:30:00-04:00[America/New_York]"
        );
        let after = next_ring(time(2, 30, 0, 0), Days::Every, &ring).unwrap();
        assert_eq!(
            after.to_string(),
            "2026-03-09T02:30:00-04:00[America/New_York]"
        );
        // a time that happens twice rings once, at the first
        let before_autumn = at("2026-10-31T12:00:00[America/New_York]");
        let first = next_ring(time(1, 30, 0, 0), Days::Every, &before_autumn).unwrap();
        assert_eq!(
            first.to_string(),
            "2026-11-01T01:30:00-04:00[America/New_York]"
        );
        let second = next_ring(time(1, 30, 0, 0), Days::Every, &first).unwrap();
        assert_eq!(
            second.to_string(),
            "2026-11-02T01:30:00-05:00[America/New_York]",
            "not again an hour later, at the second 1:30"
        );
        // and every day at 7 across it: 24 h apart before, 25 h across
        let saturday_dawn = at("2026-10-31T06:00:00[America/New_York]");
        let sat = next_ring(time(7, 0, 0, 0), Days::Every, &saturday_dawn).unwrap();
        assert_eq!(
            sat.to_string(),
            "2026-10-31T07:00:00-04:00[America/New_York]"
        );
        let sun = next_ring(time(7, 0, 0, 0), Days::Every, &sat).unwrap();
        assert_eq!(
            sun.to_string(),
            "2026-11-01T07:00:00-05:00[America/New_York]"
        );
        let hours = (sun.timestamp().as_second() - sat.timestamp().as_second()) / 3600;
        assert_eq!(hours, 25);
    }
}
