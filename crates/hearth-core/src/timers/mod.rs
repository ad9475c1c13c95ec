//! Timers that survive a restart: the first thing hearth keeps across time.
//!
//! A [`Timers`] actor owns every timer. Each change (start, cancel, add or take time,
//! pause, resume) is written to the state file ([`store`]: write, fsync, rename) *before*
//! it is acknowledged, so the set of timers after a crash, a SIGKILL or a power cut is
//! exactly the set last acknowledged to the person: none lost, none twice. At start the
//! file is read back; a timer that fell due while hearth was down fires at once, marked
//! late, unless it is older than [`MISSED_BOUND`] (then it is dropped with a log line).
//! A file that cannot be read as timers is kept aside (`timers.json.bad-UNIX`) with a log
//! line, and hearth starts with none: never a crash.
//!
//! **One sleep.** However many timers run, the actor holds one delayed message, for the
//! earliest deadline ([`ractor::ActorRef::send_after`]), replaced whenever the earliest
//! changes: a hundred timers cost what one does.
//!
//! **Time.** A running timer keeps its due time on the wall clock (Unix milliseconds), so
//! it means the same after a restart; a paused one keeps what is left. The delay to the
//! next deadline is taken from the wall clock each time it is armed.
//!
//! **Which timer.** A request that names none means the only one; with two or more running
//! it is [`TimerError::Which`], whose text asks which ("Which timer: pasta or eggs?").
//!
//! When an alarm rings next, across a daylight-saving change, is [`next_ring`] (the alarms
//! themselves come with their tools). Lengths as said ("an hour and a half") and said back ("1 hour and 30 minutes") are
//! [`parse_length`] and [`say_length`].
//!
//! What fires goes to every subscriber ([`TimersMsg::Subscribe`]) as [`Fired`], on an
//! unbounded channel: a firing is never dropped. The ringer ([`spawn_ringer`]) is the
//! daemon's subscriber: it says the ring in the timer's room until "stop".

mod actor;
mod alarm;
mod ring;
mod store;

pub use crate::intent::{parse_length, say_length};
pub use actor::{Timers, TimersArgs, TimersMsg};
pub use alarm::{next_ring, Days};
pub use ring::{ring_text, spawn_ringer, Ringing};
pub use store::state_dir_from;
pub use store::{state_dir, Store, StoreError, STATE_FILE};

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// A timer that fell due while hearth was down fires at start if it is at most this late;
/// an older one is dropped, with a log line.
pub const MISSED_BOUND: Duration = Duration::from_secs(60 * 60);

/// The longest timer: a day (longer is an alarm's business).
pub const LONGEST: Duration = Duration::from_secs(24 * 60 * 60);

/// One timer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Timer {
    /// Unique in this state file, never reused.
    pub id: u64,
    /// "pasta"; `None` for a timer set without a name.
    pub name: Option<String>,
    /// How long it was set for (time added or taken counts), in milliseconds.
    pub total_ms: u64,
    pub run: Run,
    /// The room it was set in (a satellite's), where it rings.
    pub room: Option<String>,
    /// An alarm: the time of day and the days it rings (a repeating one is set again for
    /// its next day each time it rings).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alarm: Option<Alarm>,
    /// A reminder: what to remind of (at the alarm's time, or when the countdown ends).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reminder: Option<String>,
}

/// What a [`Timer`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A countdown ("a pasta timer for 8 minutes").
    Timer,
    /// An alarm at a time of day ("wake me at 7").
    Alarm,
    /// A reminder, at a time of day or after a length of time ("remind me to call mum").
    Reminder,
}

/// When an alarm rings: a time of day on its days, in the system's time zone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Alarm {
    /// Minutes after midnight.
    pub minute: u16,
    pub days: Days,
}

impl Alarm {
    pub fn new(at: jiff::civil::Time, days: Days) -> Alarm {
        Alarm {
            minute: at.hour() as u16 * 60 + at.minute() as u16,
            days,
        }
    }

    /// Its time of day.
    pub fn time(&self) -> jiff::civil::Time {
        jiff::civil::Time::new(
            (self.minute / 60 % 24) as i8,
            (self.minute % 60) as i8,
            0,
            0,
        )
        .unwrap_or(jiff::civil::Time::midnight())
    }

    /// When it rings next after `after_ms` (Unix milliseconds), in the system's zone.
    pub fn next_after(&self, after_ms: i64) -> Option<i64> {
        let after = jiff::Timestamp::from_millisecond(after_ms)
            .ok()?
            .to_zoned(jiff::tz::TimeZone::system());
        next_ring(self.time(), self.days, &after).map(|z| z.timestamp().as_millisecond())
    }
}

/// Whether a timer counts down.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Run {
    /// Due at this wall-clock time (Unix milliseconds).
    Running { due_ms: i64 },
    /// Paused with this much left.
    Paused { left_ms: u64 },
}

impl Kind {
    /// As D-Bus says it: `timer`, `alarm`, `reminder`.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Timer => "timer",
            Kind::Alarm => "alarm",
            Kind::Reminder => "reminder",
        }
    }
}

impl Timer {
    /// What it is called on D-Bus: a timer's name (`""` for none), an alarm's time ("7:00
    /// AM"), a reminder's words.
    pub fn what(&self) -> String {
        match (self.kind(), &self.alarm) {
            (Kind::Reminder, _) => self.reminder.clone().unwrap_or_default(),
            (Kind::Alarm, Some(a)) => crate::intent::say_time(a.time()),
            _ => self.name.clone().unwrap_or_default(),
        }
    }

    pub fn kind(&self) -> Kind {
        match (&self.reminder, &self.alarm) {
            (Some(_), _) => Kind::Reminder,
            (None, Some(_)) => Kind::Alarm,
            (None, None) => Kind::Timer,
        }
    }

    /// When it is due (Unix milliseconds); `None` while paused.
    pub fn due_ms(&self) -> Option<i64> {
        match self.run {
            Run::Running { due_ms } => Some(due_ms),
            Run::Paused { .. } => None,
        }
    }

    /// Milliseconds left at `now_ms` (0 once due).
    pub fn left_ms(&self, now_ms: i64) -> u64 {
        match self.run {
            Run::Running { due_ms } => u64::try_from(due_ms.saturating_sub(now_ms)).unwrap_or(0),
            Run::Paused { left_ms } => left_ms,
        }
    }

    /// How the timer is called aloud: "the pasta timer", "the timer".
    pub fn called(&self) -> String {
        match &self.name {
            Some(n) => format!("the {n} timer"),
            None => "the timer".into(),
        }
    }
}

/// A timer that rang.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fired {
    pub timer: Timer,
    /// How long after its due time it fired: about nothing when hearth ran, the time hearth
    /// was down when it fell due meanwhile.
    pub late_ms: u64,
}

/// Which timer a request means.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Which {
    /// The only one there is (none named).
    Only,
    /// The one with this name.
    Named(String),
    /// Every one.
    All,
}

/// Why a timer request was not carried out; each text can be said to the person.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TimerError {
    #[error("There is no timer running.")]
    None,
    #[error("There is no {0} timer.")]
    NoSuch(String),
    /// Two or more timers and none named: the names, for the question.
    #[error("Which timer: {}?", or_list(.0))]
    Which(Vec<String>),
    #[error("A {0} timer is already running.")]
    Taken(String),
    #[error("A timer can run for a second to a day.")]
    Length,
    #[error("{} is already paused.", capitalised(.0))]
    AlreadyPaused(String),
    #[error("{} is not paused.", capitalised(.0))]
    NotPaused(String),
    /// The state file could not be written: nothing was changed.
    #[error("Sorry, I couldn't save the timers, so nothing was changed.")]
    Store(String),
}

/// `s` with its first letter upper-case ("the pasta timer" → "The pasta timer").
pub(crate) fn capitalised(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// "pasta or eggs", "pasta, eggs or the unnamed one".
pub(crate) fn or_list(names: &[String]) -> String {
    match names.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// The timer a name heard means: the one of that name, else the only one whose name the
/// heard one sounds near ([`sounds_near`]); `None` when none is, or two are as near.
pub fn named<'a>(timers: &'a [Timer], said: &str) -> Option<&'a Timer> {
    let only = |near: fn(&str, &str) -> bool| {
        let mut found = timers
            .iter()
            .filter(|t| t.name.as_deref().is_some_and(|name| near(said, name)));
        match (found.next(), found.next()) {
            (Some(t), None) => Some(t),
            _ => None,
        }
    };
    only(|a, b| a == b).or_else(|| only(sounds_near))
}

/// Whether a name heard (`said`) is a timer's `name` misheard: the shorter is the longer
/// with letters left out, begins as it does, and has three letters or more and at least half
/// of them ("ros" for "roast"); or both have four or more and one letter differs ("pasto"
/// for "pasta"); or they sound alike ([`sound_key`]: "ed", "aid" and "8" for "egg"). The
/// answer then says the timer's real name, so the person hears which was meant.
fn sounds_near(said: &str, name: &str) -> bool {
    let (a, b) = (said.chars().count(), name.chars().count());
    let (short, long) = if a <= b { (said, name) } else { (name, said) };
    let clipped = a.min(b) >= 3
        && a.min(b) * 2 >= a.max(b)
        && short.chars().next() == long.chars().next()
        && letters_in_order(short, long);
    let one_off = a.min(b) >= 4 && strsim::levenshtein(said, name) <= 1;
    clipped || one_off || sound_key(said) == sound_key(name)
}

/// The word among `expected` that a name heard as one letter stands for: whisper writes a
/// word that sounds like a letter's name as the letter ("set a t timer" for a tea timer), and
/// no one names a timer with a letter. The one word that begins as the letter's name does
/// and sounds as it does ([`sound_key`]), if exactly one does.
pub fn spelt_as_a_letter<'a>(said: &str, expected: &[&'a str]) -> Option<&'a str> {
    const NAMES: [&str; 26] = [
        "ay",
        "bee",
        "see",
        "dee",
        "ee",
        "ef",
        "jee",
        "aitch",
        "eye",
        "jay",
        "kay",
        "el",
        "em",
        "en",
        "oh",
        "pee",
        "cue",
        "ar",
        "es",
        "tee",
        "you",
        "vee",
        "double you",
        "ex",
        "why",
        "zed",
    ];
    let mut letters = said.chars();
    let (Some(letter), None) = (letters.next(), letters.next()) else {
        return None;
    };
    let index = u32::from(letter.to_ascii_lowercase()).checked_sub(u32::from('a'))?;
    let name = NAMES.get(usize::try_from(index).ok()?)?;
    let (first, sound) = (name.chars().next(), sound_key(name));
    let mut found = expected
        .iter()
        .filter(|w| w.chars().next() == first && sound_key(w) == sound);
    match (found.next(), found.next()) {
        (Some(w), None) => Some(w),
        _ => None,
    }
}

/// How a name sounds, roughly, as a mishearing keeps it: each letter by its class (vowels
/// `a`, stops `t`, fricatives `s`, nasals `n`, liquids `l`; `h` and `w` only at the start,
/// where they are heard), repeats as one, digits as their words ("8" sounds as "eight").
/// "egg", "ed", "aid" and "8" are all `at`; "roast" is `last`, "toast" `tast`.
fn sound_key(name: &str) -> String {
    const DIGITS: [&str; 10] = [
        "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
    ];
    let spelled: String = name
        .chars()
        .map(|c| match c.to_digit(10) {
            Some(d) => DIGITS[d as usize].to_string(),
            None => c.to_lowercase().to_string(),
        })
        .collect();
    let mut key = String::new();
    for c in spelled.chars() {
        let class = match c {
            'a' | 'e' | 'i' | 'o' | 'u' | 'y' => 'a',
            'b' | 'd' | 'g' | 'p' | 't' | 'k' | 'c' | 'q' | 'j' => 't',
            'f' | 'v' | 's' | 'z' | 'x' => 's',
            'm' | 'n' => 'n',
            'l' | 'r' => 'l',
            'h' | 'w' if key.is_empty() => 'h',
            _ => continue,
        };
        if !key.ends_with(class) {
            key.push(class);
        }
    }
    key
}

/// Whether every letter of `short` is in `long`, in the same order.
fn letters_in_order(short: &str, long: &str) -> bool {
    let mut rest = long.chars();
    short.chars().all(|c| rest.any(|l| l == c))
}

/// Milliseconds since the Unix epoch, now.
pub fn now_ms() -> i64 {
    jiff::Timestamp::now().as_millisecond()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_letter_heard_for_a_name_is_the_word_it_sounds_like() {
        let expected = ["tea", "egg", "pasta", "cake"];
        assert_eq!(spelt_as_a_letter("t", &expected), Some("tea"));
        assert_eq!(spelt_as_a_letter("T", &expected), Some("tea"));
        assert_eq!(spelt_as_a_letter("c", &["sea", "cake"]), Some("sea"));
        // a word, a digit, or a letter that sounds like none of them stays as it is ("pee"
        // and "kay" sound as "tea" does to the rough key, but begin otherwise)
        for said in ["tea", "to", "8", "m", "p", "k", "", "é"] {
            assert_eq!(spelt_as_a_letter(said, &expected), None, "{said}");
        }
        // two words that sound alike: neither is chosen
        assert_eq!(spelt_as_a_letter("t", &["tea", "toe"]), None);
    }

    #[test]
    fn a_question_names_the_timers() {
        let e = TimerError::Which(vec!["pasta".into(), "eggs".into()]);
        assert_eq!(e.to_string(), "Which timer: pasta or eggs?");
        let e = TimerError::Which(vec!["pasta".into(), "eggs".into(), "tea".into()]);
        assert_eq!(e.to_string(), "Which timer: pasta, eggs or tea?");
        let e = TimerError::AlreadyPaused("the pasta timer".into());
        assert_eq!(e.to_string(), "The pasta timer is already paused.");
    }

    #[test]
    fn a_misheard_name_means_the_one_timer_it_sounds_near() {
        let timer = |id, name: &str| Timer {
            id,
            name: Some(name.into()),
            total_ms: 60_000,
            run: Run::Running { due_ms: 10_000 },
            room: None,
            alarm: None,
            reminder: None,
        };
        let all = [timer(1, "roast"), timer(2, "pasta"), timer(3, "pastry")];
        let id = |said| named(&all, said).map(|t| t.id);
        assert_eq!(id("roast"), Some(1));
        assert_eq!(id("ros"), Some(1), "a clipped name");
        assert_eq!(id("roasts"), Some(1));
        assert_eq!(id("pasta"), Some(2), "its own name, though pastry is near");
        assert_eq!(id("past"), None, "near two");
        assert_eq!(
            id("pastro"),
            Some(3),
            "one letter off pastry, two off pasta"
        );
        assert_eq!(id("ro"), None, "too short to tell");
        assert_eq!(id("rice"), None);
        assert_eq!(id("egg"), None);
        assert_eq!(id("boost"), None, "two letters off roast");

        let all = [timer(1, "egg"), timer(2, "roast")];
        let id = |said| named(&all, said).map(|t| t.id);
        for said in ["ed", "aid", "8", "eight", "egg"] {
            assert_eq!(id(said), Some(1), "{said}");
        }
        for said in ["head", "bed", "tea", "at home"] {
            assert_eq!(id(said), None, "{said}");
        }
    }

    #[test]
    fn what_is_left_counts_down_or_holds() {
        let mut t = Timer {
            id: 1,
            name: None,
            total_ms: 60_000,
            run: Run::Running { due_ms: 10_000 },
            room: None,
            alarm: None,
            reminder: None,
        };
        assert_eq!(t.left_ms(4_000), 6_000);
        assert_eq!(t.left_ms(12_000), 0);
        t.run = Run::Paused { left_ms: 5_000 };
        assert_eq!(t.left_ms(99_000), 5_000);
        assert_eq!(t.called(), "the timer");
    }
}
