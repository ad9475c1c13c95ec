//! Intents a tool implies: the common shapes of a home read from a tool's name, description
//! and parameters, for every tool (manifests, built-ins and tools registered over D-Bus
//! alike), whether or not it declares `[[tool.intent]]` sentences (those add to these).
//!
//! A household writes `set_light(room, on)`, `lock_door(door, locked)`,
//! `set_thermostat(temperature)` or `get_temperature(room)` and no sentences; the requests
//! they get are a few shapes ("turn on the kitchen light", "lock the front door", "set the
//! thermostat to 21 degrees", "what is the temperature in the bedroom"). [`Shape::of`] reads
//! which shape a tool has; [`Shape::intents`] writes the sentence templates that shape is
//! asked with, compiled and matched as hand-written ones are (whole, unambiguous matches
//! only); [`Shape::say`] says what a call did, or what it read, when the tool has no `say`.
//!
//! What a tool is read as:
//! - its **noun**: the words of its name after a verb ("set_light" → "light",
//!   "get_room_temperature" → "room temperature"), or the whole name when it starts with
//!   none ("kitchen_light");
//! - its **places**: the string parameters with an `enum`, each a *location* (named room,
//!   area, zone, location, floor, place, space) or the device itself ("door": "the front
//!   door"; a parameter called `name` always names the device, and is said alone);
//! - what it does, from the one parameter left (or none):
//!   - a **switch**: a boolean, or an enum of two values, whose name or values say a
//!     direction ([`DIRECTIONS`]: on/off, lock/unlock, open/close, mute, start/stop, arm);
//!     a boolean named otherwise has no direction anyone can guess, and gets no intents;
//!   - a **level**: a number ("set the thermostat to 21 degrees"; "dim the kitchen light to
//!     40 percent" when it is a brightness; a step for "make it warmer"/"brighter");
//!   - a **choice**: any other enum of strings ("set the heating mode to eco",
//!     "activate the movie scene");
//!   - a **reading**: a tool whose name or description says it gets, checks or reads
//!     ("get_", "read_", "check_", "Get …", "Check whether …") and that takes only places;
//!   - an **action**: no parameter, a verb for a name ("ring_bell" → "ring the bell").
//!
//! Anything else (free-text parameters, objects, two numbers) gets no derived intents: the
//! model answers it. A derived sentence never guesses either: the same whole-match rule
//! holds, and two tools whose shapes give the same words to different calls match nothing.

use serde_json::{json, Map, Value};

use super::IntentSpec;

/// Words that name a place in a home rather than a device.
const LOCATIONS: &[&str] = &[
    "room", "area", "zone", "location", "floor", "place", "space",
];

/// Verbs a tool's name may start with; the words after it are the noun.
const NAME_VERBS: &[&str] = &[
    "set", "get", "turn", "switch", "toggle", "control", "change", "adjust", "read", "check", "is",
    "query", "fetch", "show", "report", "activate", "run", "trigger", "start", "stop", "open",
    "close", "lock", "unlock", "ring", "play", "pause", "call", "do", "make", "measure", "current",
    "send", "arm", "disarm", "mute", "unmute", "feed", "water", "press", "dim", "enable",
    "disable", "update", "apply", "select",
];

/// The first words of a name that read: "get_", "read_", …
const READ_VERBS: &[&str] = &[
    "get", "read", "check", "is", "query", "fetch", "show", "report", "measure", "current",
];

/// The first word of a description that says the tool reads.
const READ_DESCRIPTIONS: &[&str] = &[
    "get", "gets", "check", "checks", "read", "reads", "return", "returns", "report", "reports",
    "tell", "tells", "query", "queries", "whether", "what", "how", "show", "shows", "measure",
    "measures", "look",
];

/// Words at the end of a name that name no device ("light_control", "door_state").
const NAME_FILLER: &[&str] = &["control", "state", "status", "value", "setting", "settings"];

/// A direction a switch is said in.
#[derive(Debug)]
pub(super) struct Direction {
    /// Parameter names that mean it (a boolean `locked`, `on`, `open`).
    pub(super) names: &'static [&'static str],
    /// Enum values for the one way and the other (`["on", "off"]`, `["lock", "unlock"]`).
    yes_values: &'static [&'static str],
    no_values: &'static [&'static str],
    /// How each way is asked: `{S}` is the subject ("the kitchen light").
    yes: &'static [&'static str],
    no: &'static [&'static str],
    /// The state each way leaves the device in, as said ("on", "locked").
    yes_state: &'static str,
    no_state: &'static str,
}

impl Direction {
    /// The words that say one way (`yes`) or the other: "on", "lock", "locked", "close".
    pub(super) fn said_as(&self, yes: bool) -> Vec<&'static str> {
        let (values, state) = if yes {
            (self.yes_values, self.yes_state)
        } else {
            (self.no_values, self.no_state)
        };
        let mut words = values.to_vec();
        if !words.contains(&state) {
            words.push(state);
        }
        words
    }
}

/// Words that say which way a level goes.
const LEVEL_WAYS: &[&str] = &[
    "dim", "dimmer", "brighten", "brighter", "darker", "up", "down", "warmer", "cooler", "colder",
    "hotter", "raise", "lower", "increase", "decrease",
];

/// The words that decide which way a request goes: each direction's own words (those of one
/// way's sentences and not the other's: "lock"/"unlock", "on"/"off", "open"/"close"), the
/// values and states that say it, and the level words ("dim", "warmer"). A recogniser held
/// to the house's phrases never writes one that was not heard ([`super::PhraseSet::grammar`]).
pub(crate) fn direction_words() -> Vec<&'static str> {
    let words_of = |templates: &[&'static str]| -> Vec<&'static str> {
        templates
            .iter()
            .flat_map(|t| t.split(|c: char| !c.is_ascii_alphabetic()))
            .filter(|w| !w.is_empty() && *w != "S")
            .collect()
    };
    let mut out: Vec<&'static str> = LEVEL_WAYS.to_vec();
    for d in DIRECTIONS {
        let (yes, no) = (words_of(d.yes), words_of(d.no));
        out.extend(yes.iter().filter(|w| !no.contains(w)));
        out.extend(no.iter().filter(|w| !yes.contains(w)));
        out.extend(d.said_as(true));
        out.extend(d.said_as(false));
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// The directions a switch can have, the one place their words are written.
pub(super) const DIRECTIONS: &[Direction] = &[
    Direction {
        names: &[
            "on", "power", "powered", "state", "enabled", "enable", "active", "lit", "switch",
            "status", "is_on", "turn_on", "light_on",
        ],
        yes_values: &["on", "true", "enabled", "enable", "active"],
        no_values: &["off", "false", "disabled", "disable", "inactive"],
        yes: &[
            "(turn|switch|put) on {S}",
            "(turn|switch|put) {S} on",
            "{S} on",
        ],
        no: &[
            "(turn|switch|put) off {S}",
            "(turn|switch|put) {S} off",
            "{S} off",
        ],
        yes_state: "on",
        no_state: "off",
    },
    Direction {
        names: &["locked", "lock", "is_locked", "secure", "secured"],
        yes_values: &["lock", "locked", "secure", "secured"],
        no_values: &["unlock", "unlocked", "unsecure", "unsecured"],
        yes: &["lock {S}"],
        no: &["unlock {S}"],
        yes_state: "locked",
        no_state: "unlocked",
    },
    Direction {
        names: &["open", "opened", "is_open"],
        yes_values: &["open", "opened"],
        no_values: &["close", "closed", "shut"],
        yes: &["open {S}"],
        no: &["(close|shut) {S}"],
        yes_state: "open",
        no_state: "closed",
    },
    Direction {
        names: &["closed", "close", "shut", "is_closed"],
        yes_values: &["close", "closed", "shut"],
        no_values: &["open", "opened"],
        yes: &["(close|shut) {S}"],
        no: &["open {S}"],
        yes_state: "closed",
        no_state: "open",
    },
    Direction {
        names: &["muted", "mute", "is_muted"],
        yes_values: &["mute", "muted"],
        no_values: &["unmute", "unmuted"],
        yes: &["mute {S}"],
        no: &["unmute {S}"],
        yes_state: "muted",
        no_state: "unmuted",
    },
    Direction {
        names: &["running", "run", "start", "started", "is_running"],
        yes_values: &["start", "started", "running", "run"],
        no_values: &["stop", "stopped"],
        yes: &["start {S}"],
        no: &["stop {S}"],
        yes_state: "running",
        no_state: "stopped",
    },
    Direction {
        names: &["armed", "arm", "is_armed"],
        yes_values: &["arm", "armed"],
        no_values: &["disarm", "disarmed"],
        yes: &["arm {S}"],
        no: &["disarm {S}"],
        yes_state: "armed",
        no_state: "disarmed",
    },
];

/// A string parameter with an `enum` that says which one.
#[derive(Debug, Clone, PartialEq)]
struct Place {
    param: String,
    /// A room or area ("in the kitchen"), rather than the device ("the front door").
    location: bool,
    /// Whether a call may leave it out.
    required: bool,
}

/// What a unit is said as, after a number.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Unit {
    Degrees,
    Percent,
}

impl Unit {
    fn word(self) -> &'static str {
        match self {
            Unit::Degrees => "degrees",
            Unit::Percent => "percent",
        }
    }

    /// The unit's words as a template may take them after a number, left out or said.
    fn optional(self) -> &'static str {
        match self {
            Unit::Degrees => "[degrees] [celsius|fahrenheit|c|f]",
            Unit::Percent => "[percent]",
        }
    }
}

/// What a tool does with its one parameter that is not a place.
#[derive(Debug, Clone, PartialEq)]
enum Does {
    /// A boolean, or a two-valued enum, with a direction.
    Switch {
        param: String,
        direction: usize,
        yes: Value,
        no: Value,
    },
    /// A number; `step` is what "make it warmer"/"brighter" adds.
    Level {
        param: String,
        unit: Option<Unit>,
        brightness: bool,
        step: Option<f64>,
    },
    /// An enum of strings to choose from.
    Choice { param: String },
    /// It reads: what it reads is said back.
    Reading {
        unit: Option<Unit>,
        /// The states its description names ("on", "locked"), for yes/no questions.
        states: Vec<&'static str>,
    },
    /// No parameter: the name's verb.
    Action { verb: String },
}

/// The shape of one tool: what it acts on, where, and how.
#[derive(Debug, Clone, PartialEq)]
pub struct Shape {
    /// The noun's words ("light", "room temperature"); never empty.
    noun: Vec<String>,
    places: Vec<Place>,
    does: Does,
}

impl Shape {
    /// The shape of a tool, if it has one of the common ones.
    pub fn of(name: &str, description: &str, parameters: &Value) -> Option<Shape> {
        let words = name_words(name);
        let (verb, rest) = match words.split_first() {
            Some((v, rest)) if NAME_VERBS.contains(&v.as_str()) => (Some(v.clone()), rest),
            _ => (None, &words[..]),
        };
        let mut noun: Vec<String> = rest.to_vec();
        while noun.len() > 1
            && noun
                .last()
                .is_some_and(|w| NAME_FILLER.contains(&w.as_str()))
        {
            noun.pop();
        }
        let schema = super::Schema::new(name, parameters);
        let (properties, required) = (&schema.properties, &schema.required);
        let description = description.to_lowercase();
        let reads = verb.as_deref().is_some_and(|v| READ_VERBS.contains(&v))
            || first_word(&description).is_some_and(|w| READ_DESCRIPTIONS.contains(&w));

        let mut places = Vec::new();
        let mut others: Vec<(&String, &Value)> = Vec::new();
        for (param, schema) in properties {
            let is_enum = string_enum(schema).is_some();
            let acts = is_action_enum(param, schema, properties.len(), verb.as_deref());
            if is_enum && (reads || !acts) {
                places.push(Place {
                    param: param.clone(),
                    location: LOCATIONS.contains(&param.as_str()),
                    required: required.contains(param),
                });
            } else {
                others.push((param, schema));
            }
        }
        if places.len() > 2 || places.iter().filter(|p| p.location).count() > 1 {
            return None;
        }
        if noun.is_empty() {
            // "toggle(fan, on)": the device place names it
            noun = vec![places.iter().find(|p| !p.location)?.param.to_lowercase()];
        }
        let does = match others.as_slice() {
            [] if reads => Does::Reading {
                unit: unit_of(&noun.join(" "), &description, &Value::Null),
                states: states_in(&description),
            },
            [] => Does::Action {
                verb: verb.filter(|v| !SET_VERBS.contains(&v.as_str()))?,
            },
            [(param, schema)] if !reads => doing(param, schema, &noun, &description)?,
            _ => return None,
        };
        Some(Shape { noun, places, does })
    }

    /// The intents this shape is asked with, as `[[tool.intent]]` tables.
    pub fn intents(&self) -> Vec<IntentSpec> {
        let subjects = self.subjects();
        let s = |forms: &[&str]| -> Vec<String> {
            forms
                .iter()
                .flat_map(|f| subjects.iter().map(move |s| f.replace("{S}", s)))
                .collect()
        };
        match &self.does {
            Does::Switch {
                param,
                direction,
                yes,
                no,
            } => {
                let d = &DIRECTIONS[*direction];
                vec![
                    spec(s(d.yes), [(param, yes.clone())]),
                    spec(s(d.no), [(param, no.clone())]),
                ]
            }
            Does::Level {
                param,
                unit,
                brightness,
                step,
            } => self.level_intents(param, *unit, *brightness, *step),
            Does::Choice { param } => {
                let named = format!("{{{param}}} [{}]", param.replace('_', " "));
                vec![spec(
                    s(&[
                        &format!("(set|switch|change|put|turn) {{S}} to [the] {named}"),
                        &format!("{{S}} to [the] {named}"),
                        &format!("(activate|start|run|play|turn on|switch on) [the] {named}"),
                    ]),
                    [],
                )]
            }
            Does::Reading { unit, states } => self.reading_intents(*unit, states),
            Does::Action { verb } => vec![spec(s(&[&format!("{verb} {{S}}")]), [])],
        }
    }

    /// The words a request names the device by: "[the] {room} light[s]", "[the] light[s]
    /// in the {room}", "[the] {door} [door]"; each place left out too when a call may.
    fn subjects(&self) -> Vec<String> {
        let noun = self.noun_phrase();
        let location = self.places.iter().find(|p| p.location);
        let device = self.places.iter().find(|p| !p.location);
        // what names the device itself: its place and the place's name, or the noun
        let things: Vec<String> = match device {
            Some(d) => {
                let name = d.param.replace('_', " ");
                // "{door} [door]": "the front door"; a `name` is said alone
                let mut t = vec![if d.param == "name" {
                    format!("{{{}}}", d.param)
                } else {
                    format!("{{{}}} [{name}]", d.param)
                }];
                if name != self.noun.join(" ") {
                    t.push(format!("{{{}}} {noun}", d.param));
                }
                if !d.required {
                    t.push(noun.clone());
                }
                t
            }
            None => vec![noun.clone()],
        };
        let mut out = Vec::new();
        for thing in &things {
            match location {
                Some(l) => {
                    out.push(format!("[the] {{{}}} {thing}", l.param));
                    out.push(format!("[the] {thing} (in|of|for) [the] {{{}}}", l.param));
                    if !l.required {
                        out.push(format!("[the] {thing}"));
                    }
                }
                None => out.push(format!("[the] {thing}")),
            }
        }
        out
    }

    /// The noun as a template: its last word may be plural; a word that is also a
    /// location's name may be left out ("[room] temperature").
    fn noun_phrase(&self) -> String {
        let last = self.noun.len().saturating_sub(1);
        let words: Vec<String> = self
            .noun
            .iter()
            .enumerate()
            .map(|(i, w)| {
                let plural = i == last && !w.ends_with('s') && w.chars().all(char::is_alphabetic);
                match (LOCATIONS.contains(&w.as_str()) && i < last, plural) {
                    (true, _) => format!("[{w}]"),
                    (false, true) => format!("{w}[s]"),
                    (false, false) => w.clone(),
                }
            })
            .collect();
        words.join(" ")
    }

    fn level_intents(
        &self,
        param: &str,
        unit: Option<Unit>,
        brightness: bool,
        step: Option<f64>,
    ) -> Vec<IntentSpec> {
        let mut subjects = self.subjects();
        let name = param.replace('_', " ");
        if !GENERIC_NUMBERS.contains(&name.as_str()) && name != self.noun.join(" ") {
            // "set the temperature to 21" for set_thermostat(temperature)
            subjects.extend(self.with_noun(&name));
        }
        if brightness {
            subjects.extend(self.with_noun("(light|lights|lamp|lamps)"));
        }
        if self.noun.iter().any(|w| HEATING.contains(&w.as_str())) {
            // the home's heating goes by any of its names
            subjects.extend(self.with_noun("(heating|heat|thermostat|temperature)"));
        }
        let value = match unit {
            Some(u) => format!("{{{param}}} {}", u.optional()),
            None => format!("{{{param}}}"),
        };
        let verbs = if brightness {
            "(set|turn|put|change|adjust|dim|brighten)"
        } else {
            "(set|turn|put|change|adjust)"
        };
        let mut sentences: Vec<String> = subjects
            .iter()
            .flat_map(|s| {
                [
                    format!("{verbs} {s} [up|down] (to|at) {value}"),
                    format!("{s} (to|at) {value}"),
                    format!("(i'd|i would) like {s} (at|on|to) {value}"),
                ]
            })
            .collect();
        if unit == Some(Unit::Degrees) && self.places.is_empty() {
            sentences.push(format!("make it {{{param}}} degrees"));
        }
        let mut out = vec![spec(sentences, [])];
        if let Some(step) = step {
            let (up, down) = if unit == Some(Unit::Degrees) {
                // "warm"/"cool" too: whisper often drops a last word's "-er"
                (
                    "(make it|make it a bit|make it a little) (warmer|hotter|warm)",
                    "(make it|make it a bit|make it a little) (cooler|colder|cool)",
                )
            } else if brightness {
                (
                    "(make it|make it a bit) brighter",
                    "(make it|make it a bit) (dimmer|darker)",
                )
            } else {
                ("turn it up", "turn it down")
            };
            let up_step = step_spec(vec![up.to_string()], param, step);
            let down_step = step_spec(vec![down.to_string()], param, -step);
            out.push(up_step);
            out.push(down_step);
        }
        out
    }

    /// The subjects with `noun` in place of the tool's noun.
    fn with_noun(&self, noun: &str) -> Vec<String> {
        let other = Shape {
            noun: vec![noun.to_string()],
            places: self.places.clone(),
            does: self.does.clone(),
        };
        other
            .subjects()
            .into_iter()
            .map(|s| s.replace(&format!("{noun}[s]"), noun))
            .collect()
    }

    fn reading_intents(&self, unit: Option<Unit>, states: &[&str]) -> Vec<IntentSpec> {
        let subjects = self.subjects();
        let tail = "[now|right now|currently|set to|at|please]";
        let mut sentences: Vec<String> = subjects
            .iter()
            .flat_map(|s| {
                [
                    format!("(what is|what's|what are|what're|tell me|check|read) {s} {tail}"),
                    format!("how is {s}"),
                ]
            })
            .collect();
        if !states.is_empty() {
            let said = states.join("|");
            for s in &subjects {
                sentences.push(format!("(is|are) {s} [still|currently] ({said})"));
            }
        }
        if unit == Some(Unit::Degrees) {
            let place = self.places.iter().find(|p| p.location);
            match place {
                Some(l) => {
                    let p = &l.param;
                    sentences.push(format!(
                        "how (warm|hot|cold|cool) is [it] [in] [the] {{{p}}} {tail}"
                    ));
                    sentences.push(format!(
                        "is it (warm|hot|cold|cool|chilly) in [the] {{{p}}} {tail}"
                    ));
                    sentences.push(format!(
                        "(what is|what's) the temperature (in|of) [the] {{{p}}} {tail}"
                    ));
                    sentences.push(format!("how (warm|hot|cold) is the {{{p}}} {tail}"));
                }
                None if self.places.is_empty() => {
                    sentences.push(format!("how (warm|hot|cold) is it [in here|inside] {tail}"));
                }
                None => {}
            }
        }
        vec![spec(sentences, [])]
    }

    /// What a call of this tool did, or read, in one sentence; `None` when its result is not
    /// something a sentence can carry (the caller says the result's words instead).
    pub fn say(&self, arguments: &Value, result: &str) -> Option<String> {
        let subject = self.spoken_subject(arguments);
        let sentence = match &self.does {
            Does::Switch {
                param,
                direction,
                yes,
                ..
            } => {
                let d = &DIRECTIONS[*direction];
                let value = arguments.get(param)?;
                let state = if value == yes {
                    d.yes_state
                } else {
                    d.no_state
                };
                format!("the {subject} is {state}")
            }
            Does::Level { param, unit, .. } => {
                let n = number_words(arguments.get(param)?)?;
                match unit {
                    Some(u) => format!("the {subject} is set to {n} {}", u.word()),
                    None => format!("the {subject} is set to {n}"),
                }
            }
            Does::Choice { param } => {
                let v = arguments.get(param)?.as_str()?;
                format!("the {subject} is set to {v}")
            }
            Does::Reading { unit, .. } => {
                let read = reading(result, &subject, arguments, *unit)?;
                format!("the {subject} is {read}")
            }
            Does::Action { verb } => match verb_state(verb) {
                Some(state) => format!("the {subject} is {state}"),
                None => {
                    let said = plain_result(result)?;
                    if said.is_empty() {
                        return Some("Done.".into());
                    }
                    said
                }
            },
        };
        Some(capitalised(&sentence) + ".")
    }

    /// "kitchen light", "front door", "thermostat": the places' values, then the noun (the
    /// device place's name when there is one).
    fn spoken_subject(&self, arguments: &Value) -> String {
        let mut words = Vec::new();
        let location = self.places.iter().find(|p| p.location);
        let device = self.places.iter().find(|p| !p.location);
        for p in location.iter().chain(device.iter()) {
            if let Some(v) = arguments.get(&p.param).and_then(Value::as_str) {
                words.push(v.to_string());
            }
        }
        match device {
            Some(d) if arguments.get(&d.param).is_some() => {
                let name = d.param.replace('_', " ");
                if !words.last().is_some_and(|w| w.ends_with(&name)) {
                    words.push(name);
                }
            }
            _ => {
                // "bedroom temperature", not "bedroom room temperature"
                let placed = location.is_some_and(|l| arguments.get(&l.param).is_some());
                let noun: Vec<&str> = self
                    .noun
                    .iter()
                    .map(String::as_str)
                    .filter(|w| !(placed && LOCATIONS.contains(w)))
                    .collect();
                words.push(noun.join(" "));
            }
        }
        words.join(" ")
    }
}

/// Verbs of a name that say only that something is set, not what is done ("set_scene",
/// "activate_scene": the enum is what is chosen; "unlock_door": the enum is which door).
const SET_VERBS: &[&str] = &[
    "set", "get", "do", "make", "change", "select", "activate", "run", "play", "start", "apply",
    "switch", "turn", "toggle", "trigger", "control", "adjust", "update",
];

/// Names of a home's heating: a level tool named by one answers to all of them.
const HEATING: &[&str] = &[
    "heating",
    "heat",
    "thermostat",
    "temperature",
    "climate",
    "hvac",
    "heater",
];

/// Number parameters whose name says nothing a person would say ("set the value to 5").
const GENERIC_NUMBERS: &[&str] = &["value", "level", "amount", "number", "n", "x", "setpoint"];

/// What a tool with one parameter that is not a place does with it.
fn doing(param: &str, schema: &Value, noun: &[String], description: &str) -> Option<Does> {
    let name = param.to_lowercase();
    let kind = super::slot::kind(schema)?;
    match kind {
        "boolean" => {
            let direction = DIRECTIONS
                .iter()
                .position(|d| d.names.contains(&name.as_str()))?;
            Some(Does::Switch {
                param: param.into(),
                direction,
                yes: Value::Bool(true),
                no: Value::Bool(false),
            })
        }
        "string" => {
            let values = string_enum(schema)?;
            if let Some((direction, yes, no)) = two_ways(&values) {
                return Some(Does::Switch {
                    param: param.into(),
                    direction,
                    yes: json!(yes),
                    no: json!(no),
                });
            }
            Some(Does::Choice {
                param: param.into(),
            })
        }
        "number" | "integer" => {
            let noun = noun.join(" ");
            let unit = unit_of(&format!("{noun} {name}"), description, schema);
            let brightness = ["brightness", "dim", "dimmer", "bright"]
                .iter()
                .any(|w| noun.contains(w) || name.contains(w))
                || description.contains("dim ")
                || description.contains("brightness");
            let min = schema.get("minimum").and_then(Value::as_f64);
            let max = schema.get("maximum").and_then(Value::as_f64);
            let step = match (unit, brightness, min, max) {
                (Some(Unit::Degrees), _, _, _) => Some(1.0),
                (_, true, Some(lo), Some(hi)) => Some(((hi - lo) / 5.0).round().max(1.0)),
                (_, _, Some(lo), Some(hi)) => Some(((hi - lo) / 10.0).round().max(1.0)),
                _ => None,
            };
            Some(Does::Level {
                param: param.into(),
                unit,
                brightness,
                step,
            })
        }
        _ => None,
    }
}

/// Whether an enum parameter is what the tool sets (a two-way switch, or the one enum of a
/// tool whose only parameter it is) rather than a place.
fn is_action_enum(param: &str, schema: &Value, parameters: usize, verb: Option<&str>) -> bool {
    let values = string_enum(schema).unwrap_or_default();
    let sets = verb.is_none_or(|v| SET_VERBS.contains(&v));
    two_ways(&values).is_some()
        || DIRECTIONS.iter().any(|d| d.names.contains(&param))
        || (parameters == 1 && sets && !LOCATIONS.contains(&param) && param != "name")
        || [
            "mode", "scene", "preset", "setting", "program", "effect", "color", "colour",
        ]
        .contains(&param)
}

/// The values of a parameter that picks a device or a place: an enum of two or more
/// strings that is not a way it goes (a direction's name, or two values of one of
/// [`DIRECTIONS`]: `on`, `["lock", "unlock"]`).
pub(crate) fn device_choices(param: &str, schema: &Value) -> Option<Vec<String>> {
    let values = string_enum(schema)?;
    let way = two_ways(&values).is_some() || DIRECTIONS.iter().any(|d| d.names.contains(&param));
    (values.len() > 1 && !way).then_some(values)
}

/// The direction two enum values say, and which is which: `["on", "off"]` → on/off.
fn two_ways(values: &[String]) -> Option<(usize, String, String)> {
    if values.len() != 2 {
        return None;
    }
    DIRECTIONS.iter().enumerate().find_map(|(i, d)| {
        let yes = values
            .iter()
            .find(|v| d.yes_values.contains(&v.to_lowercase().as_str()))?;
        let no = values
            .iter()
            .find(|v| d.no_values.contains(&v.to_lowercase().as_str()))?;
        Some((i, yes.clone(), no.clone()))
    })
}

/// The unit a number or a reading is said in, from the words of its name and description.
fn unit_of(noun: &str, description: &str, schema: &Value) -> Option<Unit> {
    let text = format!("{noun} {description}");
    let has = |w: &str| text.split(|c: char| !c.is_alphanumeric()).any(|x| x == w);
    if has("temperature")
        || has("degrees")
        || has("celsius")
        || has("fahrenheit")
        || has("thermostat")
    {
        return Some(Unit::Degrees);
    }
    let max = schema.get("maximum").and_then(Value::as_f64);
    let percentish = has("percent") || has("percentage") || has("brightness") || has("volume");
    (percentish || (has("level") && max == Some(100.0))).then_some(Unit::Percent)
}

/// The states a reading's description names: "Check whether the light is on." → on, off.
fn states_in(description: &str) -> Vec<&'static str> {
    let said: Vec<&str> = description
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    let mut out = Vec::new();
    for d in DIRECTIONS {
        if said.contains(&d.yes_state) || said.contains(&d.no_state) {
            for s in [d.yes_state, d.no_state] {
                if !out.contains(&s) {
                    out.push(s);
                }
            }
            if d.yes_state == "locked" {
                // whisper often drops the "-ed" of a question's last word
                out.push("lock");
            }
        }
    }
    out
}

/// What a reading's result says, as the end of "the {subject} is …": a number with its
/// unit, a Home Assistant state, or a few plain words with the subject's own words taken
/// off ("kitchen light on" → "on").
fn reading(result: &str, subject: &str, arguments: &Value, unit: Option<Unit>) -> Option<String> {
    let result = result.trim();
    if let Ok(Value::Object(m)) = serde_json::from_str::<Value>(result) {
        let state = m.get("state").and_then(scalar_words)?;
        let unit = m
            .get("attributes")
            .and_then(|a| a.get("unit_of_measurement"))
            .and_then(Value::as_str)
            .map(|u| {
                u.replace("°C", "degrees")
                    .replace("°F", "degrees")
                    .replace('%', "percent")
            });
        return Some(match unit {
            Some(u) => format!("{state} {u}"),
            None => state,
        });
    }
    let mut own: Vec<String> = super::words(subject);
    if let Value::Object(m) = arguments {
        for v in m.values().filter_map(Value::as_str) {
            own.extend(super::words(v));
        }
    }
    own.extend(["is", "are", "the", "at", "currently", "now"].map(String::from));
    let words: Vec<String> = result
        .split_whitespace()
        .map(|w| {
            w.trim_matches(|c: char| matches!(c, ',' | ';' | '!'))
                .to_string()
        })
        .filter(|w| !w.is_empty())
        .collect();
    let rest: Vec<&String> = words
        .iter()
        .skip_while(|w| own.contains(&w.to_lowercase().trim_end_matches(':').to_string()))
        .collect();
    // one value: a number and its unit, or a state in a word or two; a result of several
    // readings is for the model (or the result's own words) to say
    let numbers = rest
        .iter()
        .filter(|w| w.trim_end_matches('.').parse::<f64>().is_ok())
        .count();
    if rest.is_empty() || rest.len() > 4 || numbers > 1 || result.lines().count() > 1 {
        return None;
    }
    let mut text = rest
        .iter()
        .map(|w| w.as_str())
        .collect::<Vec<_>>()
        .join(" ");
    let text_end = text.trim_end_matches('.').to_string();
    text = text_end;
    let only_number = text.parse::<f64>().is_ok();
    match unit {
        Some(u) if only_number => Some(format!("{text} {}", u.word())),
        _ => Some(text),
    }
}

/// The state a verb leaves a device in: "unlock" → "unlocked".
fn verb_state(verb: &str) -> Option<&'static str> {
    DIRECTIONS.iter().find_map(|d| {
        if d.yes_values.contains(&verb) {
            Some(d.yes_state)
        } else if d.no_values.contains(&verb) {
            Some(d.no_state)
        } else {
            None
        }
    })
}

/// A plain result as a sentence's words: one short line, or nothing.
fn plain_result(result: &str) -> Option<String> {
    let result = result.trim();
    if result.lines().count() > 1 || result.split_whitespace().count() > 12 {
        return None;
    }
    if result.starts_with(['{', '[', '<']) {
        return None;
    }
    Some(result.trim_end_matches('.').to_string())
}

fn scalar_words(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => number_words(&Value::Number(n.clone())),
        Value::Bool(b) => Some(if *b { "on" } else { "off" }.into()),
        _ => None,
    }
}

/// A number as said: 21 not 21.0.
fn number_words(v: &Value) -> Option<String> {
    let x = v.as_f64()?;
    Some(if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        format!("{x}")
    })
}

fn capitalised(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// A string parameter's enum values.
fn string_enum(schema: &Value) -> Option<Vec<String>> {
    let values = schema.get("enum")?.as_array()?;
    values
        .iter()
        .map(|v| v.as_str().map(str::to_string))
        .collect()
}

/// A name's words, lower case: split at `_`, `-`, `.`, spaces and lower-to-upper case
/// changes (`set_light`, `currentTime`).
pub fn name_words(name: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        let cut = matches!(c, '_' | '-' | ' ' | '.') || (c.is_uppercase() && prev_lower);
        if cut && !word.is_empty() {
            out.push(std::mem::take(&mut word));
        }
        if c.is_alphanumeric() {
            word.extend(c.to_lowercase());
        }
        prev_lower = c.is_lowercase();
    }
    if !word.is_empty() {
        out.push(word);
    }
    out
}

fn first_word(text: &str) -> Option<&str> {
    text.split(|c: char| !c.is_alphanumeric())
        .find(|w| !w.is_empty())
}

fn spec<'a>(
    sentences: Vec<String>,
    args: impl IntoIterator<Item = (&'a String, Value)>,
) -> IntentSpec {
    IntentSpec {
        sentences,
        args: args.into_iter().map(|(k, v)| (k.clone(), v)).collect(),
        ..Default::default()
    }
}

fn step_spec(sentences: Vec<String>, param: &str, step: f64) -> IntentSpec {
    let mut steps = Map::new();
    let value = match number_words(&json!(step)).and_then(|s| s.parse::<i64>().ok()) {
        Some(whole) => json!(whole),
        None => json!(step),
    };
    steps.insert(param.to_string(), value);
    IntentSpec {
        sentences,
        step: steps,
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::{json, Value};

    use super::Shape;
    use crate::intent::{Intents, ToolIntents};

    /// A household's tools, as they write them: no sentences, no `say`.
    fn household() -> Vec<(&'static str, &'static str, Value)> {
        let rooms = json!(["kitchen", "living room", "bedroom", "bathroom", "office"]);
        vec![
            (
                "set_light",
                "Turn a light on or off in one room.",
                json!({"type": "object", "required": ["room", "on"], "properties": {
                    "room": {"type": "string", "enum": rooms}, "on": {"type": "boolean"}}}),
            ),
            (
                "set_brightness",
                "Dim or brighten the light in one room, in percent.",
                json!({"type": "object", "required": ["room", "level"], "properties": {
                    "room": {"type": "string", "enum": rooms},
                    "level": {"type": "integer", "minimum": 0, "maximum": 100}}}),
            ),
            (
                "set_thermostat",
                "Set the thermostat temperature in degrees Celsius.",
                json!({"type": "object", "required": ["temperature"], "properties": {
                    "temperature": {"type": "number", "minimum": 10, "maximum": 30}}}),
            ),
            (
                "lock_door",
                "Lock or unlock a door.",
                json!({"type": "object", "required": ["door", "locked"], "properties": {
                    "door": {"type": "string", "enum": ["front", "back", "garage"]},
                    "locked": {"type": "boolean"}}}),
            ),
            (
                "get_temperature",
                "Read the temperature in a room.",
                json!({"type": "object", "required": ["room"], "properties": {
                    "room": {"type": "string", "enum": rooms}}}),
            ),
            (
                "fan",
                "The ceiling fan.",
                json!({"type": "object", "required": ["state"], "properties": {
                    "state": {"type": "string", "enum": ["on", "off"]}}}),
            ),
            (
                "activate_scene",
                "Activate a lighting scene.",
                json!({"type": "object", "required": ["scene"], "properties": {
                    "scene": {"type": "string", "enum": ["movie night", "dinner"]}}}),
            ),
            (
                "get_lock",
                "Check whether a door is locked.",
                json!({"type": "object", "required": ["door"], "properties": {
                    "door": {"type": "string", "enum": ["front", "back", "garage"]}}}),
            ),
        ]
    }

    fn intents(tools: &[(&str, &str, Value)]) -> Intents {
        Intents::new(
            tools
                .iter()
                .filter_map(|(name, description, params)| {
                    let shape = Shape::of(name, description, params)?;
                    let compiled = ToolIntents::compile(name, &shape.intents(), params);
                    Some(Arc::new(compiled.expect("derived intents compile")))
                })
                .collect(),
        )
    }

    fn heard(intents: &Intents, text: &str) -> Vec<(String, Value)> {
        intents
            .recognize(text)
            .unwrap_or_default()
            .into_iter()
            .map(|c| (c.tool, c.arguments))
            .collect()
    }

    #[test]
    fn a_households_tools_without_sentences_answer_the_common_requests() {
        let i = intents(&household());
        let cases: &[(&str, &str, Value)] = &[
            (
                "Turn on the kitchen light.",
                "set_light",
                json!({"room": "kitchen", "on": true}),
            ),
            (
                "Switch the bedroom lights off.",
                "set_light",
                json!({"room": "bedroom", "on": false}),
            ),
            (
                "Turn off the light in the office.",
                "set_light",
                json!({"room": "office", "on": false}),
            ),
            (
                "Could you switch on the living room light?",
                "set_light",
                json!({"room": "living room", "on": true}),
            ),
            (
                "Set the living room brightness to 40 percent.",
                "set_brightness",
                json!({"room": "living room", "level": 40}),
            ),
            (
                "Dim the bedroom light to 20%.",
                "set_brightness",
                json!({"room": "bedroom", "level": 20}),
            ),
            (
                "Put the kitchen light at eighty percent.",
                "set_brightness",
                json!({"room": "kitchen", "level": 80}),
            ),
            (
                "Set the thermostat to 21.5 degrees.",
                "set_thermostat",
                json!({"temperature": 21.5}),
            ),
            (
                "Set the temperature to 19.",
                "set_thermostat",
                json!({"temperature": 19}),
            ),
            (
                "Turn the heating to twenty two degrees.",
                "set_thermostat",
                json!({"temperature": 22}),
            ),
            (
                "Lock the front door.",
                "lock_door",
                json!({"door": "front", "locked": true}),
            ),
            (
                "Unlock the garage door please.",
                "lock_door",
                json!({"door": "garage", "locked": false}),
            ),
            (
                "Unlock the back.",
                "lock_door",
                json!({"door": "back", "locked": false}),
            ),
            (
                "What is the temperature in the bedroom?",
                "get_temperature",
                json!({"room": "bedroom"}),
            ),
            (
                "How warm is it in the office?",
                "get_temperature",
                json!({"room": "office"}),
            ),
            (
                "Is it cold in the bathroom right now?",
                "get_temperature",
                json!({"room": "bathroom"}),
            ),
            (
                "What's the kitchen temperature?",
                "get_temperature",
                json!({"room": "kitchen"}),
            ),
            ("Turn on the fan.", "fan", json!({"state": "on"})),
            ("Fan off.", "fan", json!({"state": "off"})),
            (
                "Activate the movie night scene.",
                "activate_scene",
                json!({"scene": "movie night"}),
            ),
            (
                "Is the front door locked?",
                "get_lock",
                json!({"door": "front"}),
            ),
            (
                "Is the back door lock?",
                "get_lock",
                json!({"door": "back"}),
            ),
        ];
        for (text, tool, args) in cases {
            assert_eq!(
                heard(&i, text),
                vec![(tool.to_string(), args.clone())],
                "{text}"
            );
        }
        // two commands in one, each a derived intent
        assert_eq!(
            heard(&i, "Turn off the kitchen and the living room lights."),
            vec![
                (
                    "set_light".to_string(),
                    json!({"room": "kitchen", "on": false})
                ),
                (
                    "set_light".to_string(),
                    json!({"room": "living room", "on": false})
                ),
            ]
        );
    }

    #[test]
    fn what_no_shape_says_matches_nothing() {
        let i = intents(&household());
        for text in [
            "Tell me a joke.",
            "Turn on the garden light.", // no such room
            "Make sure nobody can get into the back door.",
            "It's too dark in the hallway.",
            "Lock the kitchen light.",
            "Set the thermostat to 45 degrees.", // out of range
            "Thank you.",
            "What can you do?",
        ] {
            assert_eq!(heard(&i, text), vec![], "{text}");
        }
    }

    #[test]
    fn a_boolean_whose_name_says_no_direction_gets_no_intents() {
        let params = json!({"type": "object", "properties": {"flag": {"type": "boolean"}}});
        assert_eq!(Shape::of("set_heater", "Heater.", &params), None);
        let free = json!({"type": "object", "properties": {"message": {"type": "string"}}});
        assert_eq!(Shape::of("notify", "Send a notification.", &free), None);
    }

    #[test]
    fn a_shape_says_what_a_call_did_or_read() {
        let tools = household();
        let shape = |name: &str| {
            let (n, d, p) = tools
                .iter()
                .find(|t| t.0 == name)
                .expect("a household tool");
            Shape::of(n, d, p).expect("a shape")
        };
        let say = |name: &str, args: Value, result: &str| shape(name).say(&args, result);
        assert_eq!(
            say("set_light", json!({"room": "kitchen", "on": true}), "").as_deref(),
            Some("The kitchen light is on.")
        );
        assert_eq!(
            say("lock_door", json!({"door": "front", "locked": false}), "ok").as_deref(),
            Some("The front door is unlocked.")
        );
        assert_eq!(
            say("set_thermostat", json!({"temperature": 21.5}), "").as_deref(),
            Some("The thermostat is set to 21.5 degrees.")
        );
        assert_eq!(
            say(
                "set_brightness",
                json!({"room": "bedroom", "level": 40}),
                ""
            )
            .as_deref(),
            Some("The bedroom brightness is set to 40 percent.")
        );
        assert_eq!(
            say("get_temperature", json!({"room": "bedroom"}), "21.5\n").as_deref(),
            Some("The bedroom temperature is 21.5 degrees.")
        );
        assert_eq!(
            say(
                "get_temperature",
                json!({"room": "kitchen"}),
                "kitchen temperature 19 degrees"
            )
            .as_deref(),
            Some("The kitchen temperature is 19 degrees.")
        );
        assert_eq!(
            say(
                "get_temperature",
                json!({"room": "office"}),
                r#"{"state": "20.5", "attributes": {"unit_of_measurement": "°C"}}"#
            )
            .as_deref(),
            Some("The office temperature is 20.5 degrees.")
        );
        assert_eq!(
            say("get_lock", json!({"door": "back"}), "back door locked").as_deref(),
            Some("The back door is locked.")
        );
        // a result no sentence can carry: the caller says its words instead
        let long = "line one\nline two";
        assert_eq!(
            say("get_temperature", json!({"room": "office"}), long),
            None
        );
        let room_temperature = Shape::of(
            "room_temperature",
            "Read the temperature in a room.",
            &json!({"type": "object", "properties": {"room": {"type": "string", "enum": ["bedroom"]}}}),
        )
        .expect("a reading");
        assert_eq!(
            room_temperature
                .say(&json!({"room": "bedroom"}), "18.5")
                .as_deref(),
            Some("The bedroom temperature is 18.5 degrees.")
        );
        let two = "office 21 degrees, humidity 40 percent";
        assert_eq!(say("get_temperature", json!({"room": "office"}), two), None);
        assert_eq!(
            say("fan", json!({"state": "off"}), "").as_deref(),
            Some("The fan is off.")
        );
    }

    #[test]
    fn make_it_cool_as_whisper_hears_it_steps_the_heating_down() {
        let i = intents(&household());
        let mut before = crate::intent::Before::default();
        before.record(vec![crate::intent::IntentCall {
            tool: "set_thermostat".into(),
            arguments: json!({"temperature": 21}),
        }]);
        for (said, to) in [
            ("Make it cool.", 20),
            ("make it warm", 22),
            ("Make it a bit colder.", 20),
        ] {
            let calls = i.follow_up(said, &before).unwrap_or_default();
            let got: Vec<Value> = calls.into_iter().map(|c| c.arguments).collect();
            assert_eq!(got, vec![json!({"temperature": to})], "{said}");
        }
    }

    #[test]
    fn a_derived_step_follows_the_tools_latest_call() {
        let tools = household();
        let (n, d, p) = &tools[2];
        let shape = Shape::of(n, d, p).expect("the thermostat has a shape");
        let steps: Vec<_> = shape
            .intents()
            .into_iter()
            .filter(|s| !s.step.is_empty())
            .collect();
        assert_eq!(steps.len(), 2);
        assert_eq!(steps[0].step.get("temperature"), Some(&json!(1)));
        assert_eq!(steps[1].step.get("temperature"), Some(&json!(-1)));
    }
}
