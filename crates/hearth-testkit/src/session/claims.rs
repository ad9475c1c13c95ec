// False claims: a reply that says a device changed or is in some state, or what the time or
// date is, when no call of its turn did that or read it; and fabricated readings, the claims
// among them that state a reading (a state, a number with a unit, a time, a date).

use serde::Serialize;
use serde_json::Value;

/// A call a turn made, as the turn reported it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Call {
    pub name: String,
    pub arguments: Value,
    /// `ok`, `empty` or `error`.
    pub status: String,
    /// The tool's output (its error message for `error`).
    pub result: String,
}

impl Call {
    /// A call that ran with status `ok` and printed `result`.
    pub fn ok(name: &str, arguments: Value, result: &str) -> Call {
        Call {
            name: name.into(),
            arguments,
            status: "ok".into(),
            result: result.into(),
        }
    }

    /// It ran (status `ok` or `empty`).
    pub fn ran(&self) -> bool {
        self.status == "ok" || self.status == "empty"
    }
}

/// What a sentence talks about.
#[derive(Debug, Clone, PartialEq)]
enum Device {
    /// A room's light (any word before "light": "office" too, which no tool knows).
    Light(String),
    /// A room named without "light" after it: whatever a call on it set or read ("the
    /// bedroom temperature", "turn on the kitchen and the bedroom light").
    Room(String),
    /// A door by its name ("front", "back", "garage", or any other word before "door").
    Door(String),
    Thermostat,
    Time,
    Date,
}

/// A state a sentence gives a device.
#[derive(Debug, Clone, Copy, PartialEq)]
enum State {
    On,
    Off,
    Locked,
    Unlocked,
    Open,
    Closed,
}

impl State {
    /// The states that exclude each other: a device is on, off, locked or unlocked; a door
    /// can be closed and locked at once.
    fn dimension(self) -> u8 {
        match self {
            State::On | State::Off | State::Locked | State::Unlocked => 0,
            State::Open | State::Closed => 1,
        }
    }
}

/// What one sentence claims: whether it claims anything, whether it states a reading, the
/// devices it names, the states and numbers (degrees, percent) it gives them.
#[derive(Debug, Default)]
struct Sentence {
    claims: bool,
    /// It states a reading: a state after a form of "to be" ("is on", "is now off", "has been
    /// switched off"), a number given a device, a time or a date. Not an action alone ("I
    /// turned on the light", "Done.").
    reads: bool,
    devices: Vec<Device>,
    states: Vec<State>,
    numbers: Vec<f64>,
}

const ROOMS: [&str; 3] = ["kitchen", "bedroom", "bathroom"];
const NEGATIONS: [&str; 17] = [
    "not",
    "no",
    "never",
    "nothing",
    "cant",
    "cannot",
    "couldnt",
    "dont",
    "didnt",
    "unable",
    "isnt",
    "arent",
    "wont",
    "wasnt",
    "doesnt",
    "sorry",
    "unfortunately",
];
/// Words that, right before a state word, say a device *is* in the state (a reading: "is
/// on", "are locked"), not that it was made so.
const BE_VERBS: [&str; 12] = [
    "is",
    "are",
    "now",
    "been",
    "was",
    "were",
    "stays",
    "remains",
    "still",
    "currently",
    "its",
    "theyre",
];
/// Words that, right before a state word, say it was made so ("turned off"): a claim, and a
/// reading only after one of [`BE_VERBS`] ("is turned off").
const MADE_VERBS: [&str; 4] = ["turned", "switched", "turning", "switching"];
/// Units a reading is given in.
const UNITS: [&str; 7] = [
    "degrees",
    "degree",
    "percent",
    "celsius",
    "centigrade",
    "fahrenheit",
    "kelvin",
];
/// Words a number after which is what a device reads: "the temperature is 22", "at 40".
const READ_AS: [&str; 3] = ["is", "at", "reads"];
/// After "I": a change claimed done ("I locked the door").
const DONE_VERBS: [&str; 13] = [
    "turned",
    "switched",
    "locked",
    "unlocked",
    "set",
    "dimmed",
    "changed",
    "put",
    "made",
    "adjusted",
    "raised",
    "lowered",
    "brightened",
];
/// Month names ("may" left out: it is more often a verb).
const MONTHS: [&str; 11] = [
    "january",
    "february",
    "march",
    "april",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];
const WEEKDAYS: [&str; 7] = [
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
];

/// Checks a reply against the calls its turn ran; `Some(why)` when a sentence claims what no
/// call did or read.
///
/// A sentence claims something when it gives a device a state ("is on", "is now off", "are
/// locked", "it's on", "is open", "turned on", "switching off", "has been unlocked"), a number
/// ("set to 21", "at 40 percent", "22 degrees", "75 Fahrenheit", "the temperature is 22"),
/// tells the time ("9:15", "8 pm", "9 a.m.", "o'clock", "noon", "half past 9") or the date (a
/// weekday or month name), or says it acted ("I've", "I have", "I locked", "done", "all
/// set"). Questions and negated sentences ("not", "can't", "sorry", "nothing", ...) claim
/// nothing. A claiming sentence is false when:
/// - no call ran in the turn at all;
/// - it names a device (a room's light, a door, the thermostat, the time or date) that no call
///   that ran set or read (a call naming the room or the door in an argument; a tool whose
///   name says thermostat, heating or temperature, time or date: [`touches`]);
/// - it names one device and gives it a state or number the call contradicts (it set the
///   light off, or read "front door unlocked", and the reply says on, or locked);
/// - it names no device and gives a state or number no call that ran set or read ("It's
///   on." when the only call locked a door).
///
/// A sentence a call that ran gave as its result, word for word, is founded on it: the
/// house's tools answer in sentences of what they did and of the live state ("The bed light
/// in the bedroom is on.", "The outside temperature is 15.6 °C.").
pub fn false_claim(reply: &str, calls: &[Call]) -> Option<String> {
    let ran: Vec<&Call> = calls.iter().filter(|c| c.ran()).collect();
    for text in sentences(reply) {
        let s = read_sentence(text);
        if !s.claims || in_a_result(text, &ran) {
            continue;
        }
        if let Some(why) = unsupported(&s, &ran) {
            return Some(format!("{:?}: {why}", text.trim()));
        }
    }
    None
}

/// Every sentence of a reply that states a reading no call of its turn read or set, each with
/// why: the false claims ([`false_claim`]) that say what a device is or reads (a state after
/// a form of "to be": "is on", "are locked", "is open", "has been switched off"; a number with
/// a unit or said to be a reading: "22 degrees Celsius", "at 40 percent", "is 21", "set to
/// 19"; a time: "9:15", "8 pm", "9 a.m.", "o'clock", "noon", "half past 9"; a date: a weekday
/// or month name), not those that only say hearth acted ("I turned it on.", "Done.").
pub fn fabricated_readings(reply: &str, calls: &[Call]) -> Vec<String> {
    let ran: Vec<&Call> = calls.iter().filter(|c| c.ran()).collect();
    sentences(reply)
        .into_iter()
        .filter_map(|text| {
            let s = read_sentence(text);
            if !s.reads || in_a_result(text, &ran) {
                return None;
            }
            unsupported(&s, &ran).map(|why| format!("{:?}: {why}", text.trim()))
        })
        .collect()
}

/// Whether a call that ran gave `sentence` in its result, word for word.
fn in_a_result(sentence: &str, ran: &[&Call]) -> bool {
    let said = super::text::words(sentence);
    !said.is_empty()
        && ran.iter().any(|c| {
            let result = super::text::words(&c.result);
            result.windows(said.len()).any(|w| w == said.as_slice())
        })
}

/// The sentences of a reply ([`super::text::sentences`]), questions left out.
fn sentences(reply: &str) -> Vec<&str> {
    let mut out = super::text::sentences(reply);
    out.retain(|s| !s.trim_end().ends_with('?'));
    out
}

/// What a sentence claims, from its words.
fn read_sentence(text: &str) -> Sentence {
    let w = super::text::words(text);
    let mut s = Sentence {
        devices: devices(&w),
        ..Default::default()
    };
    if w.iter().any(|x| NEGATIONS.contains(&x.as_str())) {
        return s;
    }
    for (i, word) in w.iter().enumerate() {
        let before = |k: usize| i.checked_sub(k).map(|j| w[j].as_str());
        let be = |k: usize| before(k).is_some_and(|b| BE_VERBS.contains(&b));
        if let Some(state) = state_word(word) {
            if before(1).is_some_and(|b| BE_VERBS.contains(&b) || MADE_VERBS.contains(&b)) {
                s.claims = true;
                s.states.push(state);
                // "is on", "has been switched off"; not "I turned on"
                s.reads |= be(1) || be(2);
            }
        }
        if let Some(n) = claimed_number(&w, i) {
            s.claims = true;
            s.reads = true;
            s.numbers.push(n);
        }
        s.claims |= acted(&w, i);
    }
    let when = s
        .devices
        .iter()
        .any(|d| matches!(d, Device::Time | Device::Date));
    s.claims |= when;
    s.reads |= when;
    s
}

fn state_word(w: &str) -> Option<State> {
    match w {
        "on" => Some(State::On),
        "off" => Some(State::Off),
        "locked" => Some(State::Locked),
        "unlocked" => Some(State::Unlocked),
        "open" | "opened" => Some(State::Open),
        "closed" => Some(State::Closed),
        _ => None,
    }
}

/// Words that make what follows an offer or a possibility, not a claim ("you can set the
/// thermostat to 21 degrees").
const MODALS: [&str; 6] = ["can", "could", "may", "might", "would", "should"];

/// A number the sentence gives a device at word `i`: "N degrees", "N percent", "N Celsius",
/// "set to N", "is N", "at N", "reads N"; not after a modal ("you can set it to 21 degrees"
/// offers, it does not claim) unless a form of "to be" comes between ("I can confirm it is
/// 21 degrees"), and not a time's hour ("at 9 pm", "half past 9": the time is read as such).
fn claimed_number(w: &[String], i: usize) -> Option<f64> {
    let n: f64 = w[i].parse().ok()?;
    let modal = w[..i].iter().rposition(|x| MODALS.contains(&x.as_str()));
    if modal.is_some_and(|m| !w[m..i].iter().any(|x| BE_VERBS.contains(&x.as_str()))) {
        return None;
    }
    let next = w.get(i + 1).map(String::as_str);
    let prev = |k: usize| i.checked_sub(k).map(|j| w[j].as_str());
    if hour_of_time(w, i) {
        return None;
    }
    let unit = next.is_some_and(|n| UNITS.contains(&n));
    let set_to = prev(1) == Some("to") && prev(2) == Some("set");
    let read_as = prev(1).is_some_and(|p| READ_AS.contains(&p));
    (unit || set_to || read_as).then_some(n)
}

/// Whether the number at word `i` is the hour of a time: "9 pm", "9 a.m.", "9 o'clock",
/// "half past 9", "quarter to 10".
fn hour_of_time(w: &[String], i: usize) -> bool {
    let at = |j: usize| w.get(j).map(String::as_str);
    let prev = |k: usize| i.checked_sub(k).and_then(at);
    matches!(at(i + 1), Some("am" | "pm" | "oclock"))
        || (matches!(at(i + 1), Some("a" | "p")) && at(i + 2) == Some("m"))
        || (matches!(prev(1), Some("past" | "to")) && matches!(prev(2), Some("half" | "quarter")))
}

/// Whether word `i` says hearth acted: "I've", "I have done/set/...", "I locked", "done",
/// "all set" (not "you're done", "you're all set": the user is).
fn acted(w: &[String], i: usize) -> bool {
    let next = w.get(i + 1).map(String::as_str);
    match w[i].as_str() {
        "ive" | "weve" => true,
        "i" | "we" => {
            next.is_some_and(|n| DONE_VERBS.contains(&n))
                || (next == Some("have")
                    && w.get(i + 2)
                        .is_some_and(|n| n == "done" || DONE_VERBS.contains(&n.as_str())))
        }
        // "done", "it's done", "all done"; not "you're done" (the user is)
        "done" => !i
            .checked_sub(1)
            .is_some_and(|j| matches!(w[j].as_str(), "youre" | "you" | "are")),
        "all" => next == Some("set") && i.checked_sub(1).is_none_or(|j| w[j] != "youre"),
        _ => false,
    }
}

/// The devices a sentence names, in order of first mention.
fn devices(w: &[String]) -> Vec<Device> {
    let mut out: Vec<Device> = Vec::new();
    let mut add = |d: Device| {
        if !out.contains(&d) {
            out.push(d);
        }
    };
    for (i, word) in w.iter().enumerate() {
        let next = w.get(i + 1).map(String::as_str);
        let prev = i.checked_sub(1).map(|j| w[j].as_str());
        match word.as_str() {
            r if ROOMS.contains(&r) => add(room(r, next)),
            "living" if next == Some("room") => {
                add(room("living room", w.get(i + 2).map(String::as_str)))
            }
            "light" | "lights" | "lamp" => {
                if let Some(p) =
                    prev.filter(|p| !is_filler(p) && !ROOMS.contains(p) && *p != "room")
                {
                    add(Device::Light(p.to_string()));
                }
            }
            "door" | "doors" => {
                if let Some(p) = prev.filter(|p| !is_filler(p)) {
                    add(Device::Door(p.to_string()));
                }
            }
            "thermostat" | "temperature" | "heating" | "degrees" => add(Device::Thermostat),
            t if is_clock_time(t) => add(Device::Time),
            "noon" | "midnight" => add(Device::Time),
            _ if word.parse::<f64>().is_ok() && hour_of_time(w, i) => add(Device::Time),
            d if MONTHS.contains(&d) || WEEKDAYS.contains(&d) => add(Device::Date),
            _ => {}
        }
    }
    out
}

/// A room named in a sentence: its light when "light" follows, else the room.
fn room(name: &str, next: Option<&str>) -> Device {
    if matches!(next, Some("light" | "lights" | "lamp")) {
        Device::Light(name.to_string())
    } else {
        Device::Room(name.to_string())
    }
}

/// Words before "light"/"door" that do not name one.
fn is_filler(w: &str) -> bool {
    matches!(
        w,
        "the"
            | "a"
            | "an"
            | "all"
            | "your"
            | "my"
            | "that"
            | "this"
            | "its"
            | "every"
            | "and"
            | "both"
            | "of"
            | "on"
            | "off"
            | "turn"
            | "turned"
            | "switch"
            | "switched"
            | "lock"
            | "unlock"
    )
}

/// "9:15", "21:30".
fn is_clock_time(w: &str) -> bool {
    match w.split_once(':') {
        Some((h, m)) => {
            !h.is_empty()
                && h.len() <= 2
                && m.len() == 2
                && h.chars().chain(m.chars()).all(|c| c.is_ascii_digit())
        }
        None => false,
    }
}

/// Why a claiming sentence has no call behind it, if it has none.
fn unsupported(s: &Sentence, ran: &[&Call]) -> Option<String> {
    if ran.is_empty() {
        return Some("no call ran in this turn".into());
    }
    for d in &s.devices {
        if !ran.iter().any(|c| touches(c, d)) {
            return Some(format!("no call set or read {d:?}"));
        }
    }
    match s.devices.as_slice() {
        [d] => contradiction(s, d, ran),
        [] => unbacked(s, ran),
        _ => None,
    }
}

/// A sentence that names no device ("It's on.", "It's 22 degrees."): each state and number it
/// gives must be one a call that ran set or read.
fn unbacked(s: &Sentence, ran: &[&Call]) -> Option<String> {
    for state in &s.states {
        if !ran
            .iter()
            .any(|c| said_state(c, state.dimension()) == Some(*state))
        {
            return Some(format!("says {state:?} but no call set or read it"));
        }
    }
    for n in &s.numbers {
        if !ran
            .iter()
            .any(|c| numbers_of(c).iter().any(|v| same(*v, *n)))
        {
            return Some(format!("says {n} but no call set or read it"));
        }
    }
    None
}

fn same(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

/// Whether `call` set or read device `d`, by what the call names, whatever the tool's own
/// name: a room's light or a door by a string argument that names it; the thermostat, the
/// time and the date by a word of the tool's name ([`name_says`]).
fn touches(call: &Call, d: &Device) -> bool {
    let names = |what: &str| {
        call.arguments
            .as_object()
            .is_some_and(|m| m.values().any(|v| v.as_str() == Some(what)))
    };
    match d {
        Device::Light(room) => names(room) && !name_says(call, HEATING),
        Device::Room(room) => names(room),
        Device::Door(door) => names(door),
        Device::Thermostat => name_says(call, HEATING),
        // an alarm or a reminder is set and read at a time of day, on days
        Device::Time => name_says(call, &["time", "clock", "alarm", "alarms", "reminder"]),
        Device::Date => name_says(
            call,
            &["date", "time", "day", "alarm", "alarms", "reminder"],
        ),
    }
}

/// Words of a tool's name that make it the thermostat's.
const HEATING: &[&str] = &["thermostat", "heating", "heat", "temperature", "climate"];

/// Whether a word of the call's tool name ([`hearth::intent::name_words`]) is one of `words`.
fn name_says(call: &Call, words: &[&str]) -> bool {
    hearth::intent::name_words(&call.name)
        .iter()
        .any(|w| words.contains(&w.as_str()))
}

/// The sentence gives its one device a state or number that every call on it contradicts.
fn contradiction(s: &Sentence, d: &Device, ran: &[&Call]) -> Option<String> {
    let on_it: Vec<&&Call> = ran.iter().filter(|c| touches(c, d)).collect();
    for state in &s.states {
        if !on_it.iter().any(|c| state_fits(c, *state)) {
            return Some(format!(
                "says {state:?} but its calls did or read otherwise"
            ));
        }
    }
    for n in &s.numbers {
        if !on_it.iter().any(|c| number_fits(c, *n)) {
            return Some(format!("says {n} but its calls did or read otherwise"));
        }
    }
    None
}

/// Whether a call set or read `state` (a call that says nothing about it does not contradict).
fn state_fits(c: &Call, state: State) -> bool {
    said_state(c, state.dimension()).is_none_or(|s| s == state)
}

/// The state of dimension `dim` ([`State::dimension`]) a call set or read, if it says one:
/// a level set turns a light on; a boolean argument is locked/unlocked when its name or the
/// tool's is about a lock, else on/off; a string argument that is a state word ("lock",
/// "off"); else the words of its result.
fn said_state(c: &Call, dim: u8) -> Option<State> {
    if name_says(c, &["brightness", "dim", "level"]) {
        return (dim == 0).then_some(State::On);
    }
    let lockish = |key: &str| key.contains("lock") || c.name.contains("lock");
    let args = c.arguments.as_object();
    let from_args = args.into_iter().flatten().find_map(|(k, v)| match v {
        Value::Bool(b) if lockish(k) => Some(if *b { State::Locked } else { State::Unlocked }),
        Value::Bool(b) => Some(if *b { State::On } else { State::Off }),
        Value::String(s) => match s.as_str() {
            "lock" => Some(State::Locked),
            "unlock" => Some(State::Unlocked),
            "close" => Some(State::Closed),
            other => state_word(other),
        },
        _ => None,
    });
    match from_args {
        Some(s) => (s.dimension() == dim).then_some(s),
        None => super::text::words(&c.result)
            .iter()
            .filter_map(|w| state_word(w))
            .find(|s| s.dimension() == dim),
    }
}

/// Whether a call set or read the number `n` (a call with no number does not contradict).
fn number_fits(c: &Call, n: f64) -> bool {
    let values = numbers_of(c);
    values.is_empty() || values.iter().any(|v| same(*v, n))
}

/// The numbers a call set (its numeric arguments) or, setting none, read (its result).
fn numbers_of(c: &Call) -> Vec<f64> {
    let values: Vec<f64> = c
        .arguments
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(|(_, v)| v.as_f64())
        .collect();
    if !values.is_empty() {
        return values;
    }
    super::text::words(&c.result)
        .iter()
        .filter_map(|w| w.parse().ok())
        .collect()
}
