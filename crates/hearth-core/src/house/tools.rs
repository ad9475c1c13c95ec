//! The tools the found things make: one per kind and action, for the things of that kind
//! that can do it ([`TABLE`]), each taking the things' names and aliases (`name`) and their
//! areas (`area`) as enums, so a call can only name what is there, and the intents derived
//! from a tool's shape say them ("turn on the night light", "turn off the lights in the
//! kitchen", "is the front door locked").

use std::sync::Arc;

use hearth_house::{Area, Kind, Measure, Thing};
use serde_json::{json, Map, Value};

use crate::intent::{IntentSpec, ToolIntents};
use crate::toolcall::ToolSpec;
use crate::tools::house::{Action, HouseSpec, EVERYWHERE};
use crate::tools::{Confirm, Executor, Tool};

/// The value a tool's action takes, besides where.
#[derive(Debug, Clone, Copy)]
enum Value_ {
    /// None: the action is all ("pause the kitchen").
    Nothing,
    /// A boolean: its name and what it means.
    Flag(&'static str, &'static str),
    /// A percentage: its name and what it means.
    Percent(&'static str, &'static str),
    /// A temperature, within the things' bounds.
    Temperature,
    /// One of the things' modes.
    Mode,
    /// One of [`COLORS`].
    Color,
}

/// Colour names every Home Assistant light takes (CSS names).
const COLORS: &[&str] = &[
    "red", "orange", "yellow", "green", "blue", "purple", "pink", "white",
];

/// Which things a tool is made for.
#[derive(Debug, Clone, Copy)]
enum For {
    /// Things of these kinds.
    Kinds(&'static [Kind]),
    /// Covers that let someone in (garage doors, gates, doors).
    WaysIn,
    /// Covers that do not.
    OtherCovers,
}

/// One row of [`TABLE`]: a tool made when some thing can do its action.
struct Made {
    name: &'static str,
    description: &'static str,
    noun: &'static str,
    of: For,
    action: Action,
    value: Value_,
    /// Calls with these arguments wait for a yes, and what is asked (a template).
    confirm: Option<(&'static str, bool, &'static str)>,
    /// Whether the model is shown it: the common requests' tools are; the rest (a colour, a
    /// fan's speed, the next track) are reached by their sentences only, so the prompt stays
    /// within a small model's context.
    for_model: bool,
    /// Whether the sentences its shape implies are made too (`crates/hearth-core/src/intent/derive.rs`). A level
    /// with a name and an area would imply tens of thousands of forms, over what the
    /// recogniser takes: those tools say their own, fewer.
    derive: bool,
    /// Sentences for the whole house ("turn off all the lights"): when there are any, `area`
    /// also takes [`EVERYWHERE`], and these make calls with it.
    everywhere: &'static [&'static str],
    /// Sentences besides the derived ones.
    sentences: &'static [&'static str],
    /// Sentences that say the flag's value themselves ("make the porch light brighter"):
    /// the value, and its sentences.
    flagged: &'static [(bool, &'static [&'static str])],
}

const LIGHTS: &[Kind] = &[Kind::Light];

/// Every tool the house can make, in the order the model is shown them.
const TABLE: &[Made] = &[
    Made {
        name: "set_light",
        description: "Turn lights on or off, by name or by area.",
        noun: "light",
        of: For::Kinds(LIGHTS),
        action: Action::OnOff,
        value: Value_::Flag("on", "true for on, false for off"),
        confirm: None,
        for_model: true,
        derive: true,
        everywhere: &["(turn|switch) {on} all [of] the lights", "(turn|switch) all [of] the lights {on}", "(turn|switch) {on} the lights everywhere", "(turn|switch) {on} every light"],
        sentences: &[],
        flagged: &[],
    },
    Made {
        name: "set_light_brightness",
        description: "Set lights' brightness in percent, by name or by area.",
        noun: "light",
        of: For::Kinds(LIGHTS),
        action: Action::Brightness,
        value: Value_::Percent("brightness", "percent"),
        confirm: None,
        for_model: false,
        derive: false,
        everywhere: &[],
        sentences: &[
            "(set|dim|turn|put) [the] {name} [brightness] to {brightness} [percent]",
            "(set|dim|turn|put) the (light|lights) in the {area} to {brightness} [percent]",
            "(set|dim|turn|put) the {area} (light|lights) to {brightness} [percent]",
            "(brighten|dim) [the] {name} to {brightness} [percent]",
        ],
        flagged: &[],
    },
    Made {
        name: "brighten_light",
        description: "Make lights brighter or dimmer by a step, by name or by area.",
        noun: "light",
        of: For::Kinds(LIGHTS),
        action: Action::BrightnessStep,
        value: Value_::Flag("brighter", "true for brighter, false for dimmer"),
        confirm: None,
        for_model: true,
        derive: false,
        everywhere: &[],
        sentences: &[],
        flagged: &[
            (
                true,
                &[
                    "make [the] {name} [a (bit|little)] brighter",
                    "(brighten|turn up) [the] {name} [a (bit|little)]",
                    "make the (light|lights) in the {area} [a (bit|little)] brighter",
                    "(brighten|turn up) the (light|lights) in the {area} [a (bit|little)]",
                ],
            ),
            (
                false,
                &[
                    "make [the] {name} [a (bit|little)] dimmer",
                    "(dim|turn down) [the] {name} [a (bit|little)]",
                    "make the (light|lights) in the {area} [a (bit|little)] dimmer",
                    "(dim|turn down) the (light|lights) in the {area} [a (bit|little)]",
                ],
            ),
        ],
    },
    Made {
        name: "set_light_color",
        description: "Set lights' colour, by name or by area.",
        noun: "light",
        of: For::Kinds(LIGHTS),
        action: Action::Color,
        value: Value_::Color,
        confirm: None,
        for_model: false,
        derive: false,
        everywhere: &[],
        sentences: &[
            "(turn|make|set) [the] {name} {color}",
            "(turn|make|set) the lights in the {area} {color}",
        ],
        flagged: &[],
    },
    Made {
        name: "set_switch",
        description: "Turn switches and plugs on or off, by name or by area.",
        noun: "switch",
        of: For::Kinds(&[Kind::Switch]),
        action: Action::OnOff,
        value: Value_::Flag("on", "true for on, false for off"),
        confirm: None,
        for_model: true,
        derive: true,
        everywhere: &["(turn|switch) {on} all [of] the switches", "(turn|switch) all [of] the switches {on}"],
        sentences: &[],
        flagged: &[],
    },
    Made {
        name: "set_fan",
        description: "Turn fans on or off, by name or by area.",
        noun: "fan",
        of: For::Kinds(&[Kind::Fan]),
        action: Action::OnOff,
        value: Value_::Flag("on", "true for on, false for off"),
        confirm: None,
        for_model: true,
        derive: true,
        everywhere: &["(turn|switch) {on} all [of] the fans", "(turn|switch) all [of] the fans {on}"],
        sentences: &[],
        flagged: &[],
    },
    Made {
        name: "set_fan_speed",
        description: "Set fans' speed in percent, by name or by area.",
        noun: "fan",
        of: For::Kinds(&[Kind::Fan]),
        action: Action::Speed,
        value: Value_::Percent("speed", "percent"),
        confirm: None,
        for_model: false,
        derive: false,
        everywhere: &[],
        sentences: &[
            "(set|turn|put) [the] {name} [speed] to {speed} [percent]",
            "(set|turn|put) the (fan|fans) in the {area} to {speed} [percent]",
        ],
        flagged: &[],
    },
    Made {
        name: "set_cover",
        description: "Open or close blinds, curtains, windows and shades, by name or by area.",
        noun: "cover",
        of: For::OtherCovers,
        action: Action::OpenClose,
        value: Value_::Flag("open", "true to open, false to close"),
        confirm: None,
        for_model: true,
        derive: true,
        everywhere: &[],
        sentences: &[],
        flagged: &[],
    },
    Made {
        name: "set_garage_door",
        description: "Open or close a garage door or gate (opening asks for a yes first).",
        noun: "door",
        of: For::WaysIn,
        action: Action::OpenClose,
        value: Value_::Flag("open", "true to open, false to close"),
        confirm: Some((
            "open",
            true,
            "Shall I open the {{ name if name is defined else 'garage door' }}?",
        )),
        for_model: true,
        derive: true,
        everywhere: &[],
        sentences: &[],
        flagged: &[],
    },
    Made {
        name: "stop_cover",
        description: "Stop blinds, curtains or a door that is moving.",
        noun: "cover",
        of: For::Kinds(&[Kind::Cover]),
        action: Action::Stop,
        value: Value_::Nothing,
        confirm: None,
        for_model: false,
        derive: true,
        everywhere: &[],
        sentences: &["stop the {name}", "stop the {name} in the {area}"],
        flagged: &[],
    },
    Made {
        name: "set_cover_position",
        description: "Open blinds, curtains or windows part way, in percent open.",
        noun: "cover",
        of: For::Kinds(&[Kind::Cover]),
        action: Action::Position,
        value: Value_::Percent("position", "percent open"),
        confirm: None,
        for_model: false,
        derive: false,
        everywhere: &[],
        sentences: &[
            "(open|set|put|move) [the] {name} to {position} [percent]",
            "(open|set|put|move) the (blind|blinds|cover|covers|window|windows) in the {area} to {position} [percent]",
        ],
        flagged: &[],
    },
    Made {
        name: "set_lock",
        description: "Lock or unlock a door (unlocking asks for a yes first).",
        noun: "lock",
        of: For::Kinds(&[Kind::Lock]),
        action: Action::Lock,
        value: Value_::Flag("locked", "true to lock, false to unlock"),
        confirm: Some((
            "locked",
            false,
            "Shall I unlock the {{ name if name is defined else 'door' }}?",
        )),
        for_model: true,
        derive: true,
        everywhere: &[],
        sentences: &[],
        flagged: &[],
    },
    Made {
        name: "set_thermostat",
        description: "Set a thermostat's target temperature, by name or by area.",
        noun: "thermostat",
        of: For::Kinds(&[Kind::Climate]),
        action: Action::TargetTemperature,
        value: Value_::Temperature,
        confirm: None,
        for_model: true,
        derive: false,
        everywhere: &[],
        sentences: &[
            "set [the] {name} to {temperature} [degrees]",
            "set the (heating|thermostat|temperature) in the {area} to {temperature} [degrees]",
        ],
        flagged: &[],
    },
    Made {
        name: "set_thermostat_mode",
        description: "Set a thermostat's mode (heat, cool, auto, off), by name or by area.",
        noun: "thermostat",
        of: For::Kinds(&[Kind::Climate]),
        action: Action::Mode,
        value: Value_::Mode,
        confirm: None,
        for_model: false,
        derive: false,
        everywhere: &[],
        sentences: &[
            "(set|put|switch|turn) [the] {name} [to] {mode} [mode]",
            "(set|put|switch|turn) [the] {name} (in|into|on) {mode} mode",
        ],
        flagged: &[],
    },
    Made {
        name: "play_media",
        description: "Play or resume music or video on a media player.",
        noun: "media player",
        of: For::Kinds(&[Kind::MediaPlayer]),
        action: Action::Play,
        value: Value_::Nothing,
        confirm: None,
        for_model: true,
        derive: true,
        everywhere: &[],
        sentences: &[
            "(play|resume) [the] (music|media) [on the {name}]",
            "(play|resume) [the] (music|media) in the {area}",
            "resume [the] {name}",
        ],
        flagged: &[],
    },
    Made {
        name: "pause_media",
        description: "Pause the music or video on a media player.",
        noun: "media player",
        of: For::Kinds(&[Kind::MediaPlayer]),
        action: Action::Pause,
        value: Value_::Nothing,
        confirm: None,
        for_model: true,
        derive: true,
        everywhere: &[],
        sentences: &[
            "pause [the] (music|media) [on the {name}]",
            "pause [the] (music|media) in the {area}",
            "pause [the] {name}",
        ],
        flagged: &[],
    },
    Made {
        name: "next_track",
        description: "Skip to the next track on a media player.",
        noun: "media player",
        of: For::Kinds(&[Kind::MediaPlayer]),
        action: Action::Next,
        value: Value_::Nothing,
        confirm: None,
        for_model: false,
        derive: true,
        everywhere: &[],
        sentences: &[
            "skip to the next (track|song) [on the {name}]",
            "(next|skip) [the] (track|song) [on the {name}]",
            "(next|skip) [the] (track|song) in the {area}",
            "skip this (track|song) [on the {name}]",
        ],
        flagged: &[],
    },
    Made {
        name: "previous_track",
        description: "Go back to the previous track on a media player.",
        noun: "media player",
        of: For::Kinds(&[Kind::MediaPlayer]),
        action: Action::Previous,
        value: Value_::Nothing,
        confirm: None,
        for_model: false,
        derive: true,
        everywhere: &[],
        sentences: &[
            "go back to the previous (track|song) [on the {name}]",
            "(previous|last) (track|song) [on the {name}]",
            "go back a (track|song) [on the {name}]",
        ],
        flagged: &[],
    },
    Made {
        name: "set_media_volume",
        description: "Set a media player's volume in percent.",
        noun: "media player",
        of: For::Kinds(&[Kind::MediaPlayer]),
        action: Action::Volume,
        value: Value_::Percent("volume", "percent"),
        confirm: None,
        for_model: false,
        derive: false,
        everywhere: &[],
        sentences: &[
            "set [the] volume (of|on) the {name} to {volume} [percent]",
            "(set|turn) [the] {name} volume [up|down] to {volume} [percent]",
            "turn [the] volume (of|on) the {name} (up|down) to {volume} [percent]",
        ],
        flagged: &[],
    },
    Made {
        name: "mute_media",
        description: "Mute or unmute a media player.",
        noun: "media player",
        of: For::Kinds(&[Kind::MediaPlayer]),
        action: Action::Mute,
        value: Value_::Flag("muted", "true to mute, false to unmute"),
        confirm: None,
        for_model: false,
        derive: true,
        everywhere: &[],
        sentences: &[],
        flagged: &[],
    },
    Made {
        name: "activate_scene",
        description: "Activate a scene.",
        noun: "scene",
        of: For::Kinds(&[Kind::Scene]),
        action: Action::Activate,
        value: Value_::Nothing,
        confirm: None,
        for_model: true,
        derive: true,
        everywhere: &[],
        sentences: &["(activate|turn on|start) [the] {name} [scene]"],
        flagged: &[],
    },
    Made {
        name: "run_script",
        description: "Run a script.",
        noun: "script",
        of: For::Kinds(&[Kind::Script]),
        action: Action::Activate,
        value: Value_::Nothing,
        confirm: None,
        for_model: true,
        derive: true,
        everywhere: &[],
        sentences: &["(run|start) [the] {name} [script]"],
        flagged: &[],
    },
    Made {
        name: "start_vacuum",
        description: "Start a robot vacuum cleaning.",
        noun: "vacuum",
        of: For::Kinds(&[Kind::Vacuum]),
        action: Action::Start,
        value: Value_::Nothing,
        confirm: None,
        for_model: false,
        derive: true,
        everywhere: &[],
        sentences: &["start [the] {name} [vacuum]", "start [the] vacuum"],
        flagged: &[],
    },
    Made {
        name: "return_vacuum",
        description: "Send a robot vacuum back to its dock.",
        noun: "vacuum",
        of: For::Kinds(&[Kind::Vacuum]),
        action: Action::ReturnHome,
        value: Value_::Nothing,
        confirm: None,
        for_model: false,
        derive: true,
        everywhere: &[],
        sentences: &[
            "send [the] {name} [vacuum] (home|back to [its] (dock|base))",
            "send [the] vacuum (home|back to [its] (dock|base))",
        ],
        flagged: &[],
    },
    Made {
        name: "get_device_state",
        description: "Read what a device or sensor says now: a temperature, whether a door is open or locked, what is playing.",
        noun: "device",
        of: For::Kinds(&[
            Kind::Sensor,
            Kind::Lock,
            Kind::Cover,
            Kind::Light,
            Kind::Switch,
            Kind::Fan,
            Kind::Climate,
            Kind::MediaPlayer,
            Kind::Vacuum,
        ]),
        action: Action::Read,
        value: Value_::Nothing,
        confirm: None,
        for_model: true,
        derive: false,
        everywhere: &[],
        sentences: &[
            "(is|are) the {name} (open|closed|shut|locked|unlocked|on|off|running|playing)",
            "(what is|what's) [the] {name} [reading|at|set to|saying]",
            "(what is|what's) the state of the {name}",
            "(what is|what's) playing (on|in) the {name}",
            "(what is|what's) the {name} playing",
            "(check|read) the {name}",
        ],
        flagged: &[],
    },
];

impl For {
    fn takes(self, thing: &Thing) -> bool {
        match self {
            For::Kinds(kinds) => kinds.contains(&thing.kind),
            For::WaysIn => thing.kind == Kind::Cover && thing.guards_a_way_in(),
            For::OtherCovers => thing.kind == Kind::Cover && !thing.guards_a_way_in(),
        }
    }
}

/// Every word in `words`, each once, in order.
fn unique<'a>(words: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for w in words {
        if !out.iter().any(|o| o == w) {
            out.push(w.to_owned());
        }
    }
    out
}

/// The JSON Schema of a tool over `things`: `name` and `area` enums, the action's value.
fn parameters(made: &Made, things: &[Thing]) -> Value {
    let names = unique(things.iter().flat_map(Thing::words));
    let areas = unique(
        things
            .iter()
            .filter_map(|t| t.area.as_ref())
            .flat_map(Area::words),
    );
    let mut properties = Map::new();
    properties.insert(
        "name".into(),
        json!({"type": "string", "enum": names, "description": format!("which {}", made.noun)}),
    );
    let mut areas = areas;
    if !made.everywhere.is_empty() {
        areas.push(EVERYWHERE.to_string());
    }
    if !areas.is_empty() {
        properties.insert(
            "area".into(),
            json!({"type": "string", "enum": areas, "description": "the room"}),
        );
    }
    let mut required = Vec::new();
    match made.value {
        Value_::Nothing => {}
        Value_::Flag(key, means) => {
            properties.insert(key.into(), json!({"type": "boolean", "description": means}));
            required.push(key);
        }
        Value_::Percent(key, means) => {
            properties.insert(
                key.into(),
                json!({"type": "integer", "minimum": 0, "maximum": 100, "description": means}),
            );
            required.push(key);
        }
        Value_::Temperature => {
            properties.insert(
                "temperature".into(),
                json!({"type": "number", "minimum": 5, "maximum": 35, "description": "degrees"}),
            );
            required.push("temperature");
        }
        Value_::Mode => {
            let modes = unique(
                things
                    .iter()
                    .flat_map(|t| t.modes.iter().map(String::as_str)),
            );
            properties.insert("mode".into(), json!({"type": "string", "enum": modes}));
            required.push("mode");
        }
        Value_::Color => {
            properties.insert("color".into(), json!({"type": "string", "enum": COLORS}));
            required.push("color");
        }
    }
    json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    })
}

/// The tools `things` make: a row of [`TABLE`] becomes a tool when some thing is of its kind
/// and can do its action; the tool knows only those things.
pub fn tools(things: &[Thing]) -> Vec<Tool> {
    TABLE
        .iter()
        .filter_map(|made| {
            let mine: Vec<Thing> = things
                .iter()
                .filter(|t| made.of.takes(t) && t.can(made.action.needs()))
                .cloned()
                .collect();
            (!mine.is_empty()).then(|| tool(made, mine))
        })
        .collect()
}

/// Whether every `{slot}` of `sentence` is one of `parameters`' properties (a house with no
/// areas makes tools without `area`, and their sentences without it).
fn slots_exist(sentence: &str, parameters: &Value) -> bool {
    sentence.split('{').skip(1).all(|rest| {
        let slot = rest.split('}').next().unwrap_or_default();
        parameters["properties"].get(slot).is_some()
    })
}

/// How a place is asked what it measures; `{P}` is the place.
fn asking(measure: Measure) -> &'static [&'static str] {
    match measure {
        Measure::Temperature => &[
            "how (warm|cold|hot) is it {P}",
            "(what is|what's) the temperature {P}",
            "how many degrees is it {P}",
        ],
        Measure::Humidity => &[
            "how (humid|damp|dry) is it {P}",
            "(what is|what's) the humidity {P}",
        ],
    }
}

/// Where people say a thing is when they ask its place what it measures: its area's words
/// ("in the kitchen"), and the words its name puts before the measure ("outside" in "outside
/// humidity", said as it is; "bathroom" in "bathroom temperature", said "in the bathroom").
fn places(thing: &Thing, measure: Measure) -> Vec<String> {
    let mut out: Vec<String> = thing
        .area
        .iter()
        .flat_map(Area::words)
        .map(|w| format!("in [the] {w}"))
        .collect();
    for name in thing.words() {
        let Some(before) = name.strip_suffix(measure.as_str()).map(str::trim) else {
            continue;
        };
        let place = match before {
            "" => continue,
            "outside" | "outdoor" | "outdoors" => "(outside|outdoors)".to_string(),
            room => format!("in [the] {room}"),
        };
        if !out.contains(&place) {
            out.push(place);
        }
    }
    out
}

/// The intents that ask a place what it measures ("how humid is it outside?", "what's the
/// temperature in the kitchen?"): a reading of the one thing there that measures it. A
/// sensor wins a place over a thermostat (which reads the room too); a place where two
/// sensors (or, with none, two thermostats) measure the same is left to the things' names.
fn asked_of_places(things: &[Thing], parameters: &Value) -> Vec<IntentSpec> {
    let mut specs = Vec::new();
    for measure in Measure::ALL {
        let placed: Vec<(&Thing, Vec<String>)> = things
            .iter()
            .filter(|t| t.measures().contains(&measure))
            .map(|t| (t, places(t, measure)))
            .collect();
        let mut every_place: Vec<&String> = Vec::new();
        for place in placed.iter().flat_map(|(_, p)| p) {
            if !every_place.contains(&place) {
                every_place.push(place);
            }
        }
        for place in every_place {
            let there = |climate: bool| -> Vec<&Thing> {
                placed
                    .iter()
                    .filter(|(t, p)| (t.kind == Kind::Climate) == climate && p.contains(place))
                    .map(|(t, _)| *t)
                    .collect()
            };
            let one = match (there(false).as_slice(), there(true).as_slice()) {
                ([sensor], _) => *sensor,
                ([], [thermostat]) => *thermostat,
                _ => continue,
            };
            let sentences = asking(measure).iter().map(|s| s.replace("{P}", place));
            let name = Value::String(one.name.clone());
            specs.extend(intent(sentences, Some(("name", name)), parameters));
        }
    }
    specs
}

/// An intent of `sentences` (those whose every slot the tool has: a house with no areas
/// makes tools without `area`) whose calls take `arg`, a parameter's fixed value (`area`
/// "everywhere" for "turn on all the lights"), when given; `None` when no sentence is left.
fn intent<S: AsRef<str>>(
    sentences: impl IntoIterator<Item = S>,
    arg: Option<(&str, Value)>,
    parameters: &Value,
) -> Option<IntentSpec> {
    let sentences: Vec<String> = sentences
        .into_iter()
        .filter(|s| slots_exist(s.as_ref(), parameters))
        .map(|s| s.as_ref().to_owned())
        .collect();
    let args: Map<String, Value> = arg.map(|(k, v)| (k.to_owned(), v)).into_iter().collect();
    (!sentences.is_empty()).then(|| IntentSpec {
        sentences,
        args,
        slots: Default::default(),
        step: Map::new(),
    })
}

fn tool(made: &Made, things: Vec<Thing>) -> Tool {
    let parameters = parameters(made, &things);
    let mut specs: Vec<IntentSpec> = Vec::new();
    specs.extend(intent(made.sentences, None, &parameters));
    if let Value_::Flag(key, _) = made.value {
        for &(value, sentences) in made.flagged {
            specs.extend(intent(
                sentences,
                Some((key, Value::Bool(value))),
                &parameters,
            ));
        }
    }
    if made.action == Action::Read {
        specs.extend(asked_of_places(&things, &parameters));
    }
    let everywhere = Value::String(EVERYWHERE.into());
    specs.extend(intent(
        made.everywhere,
        Some(("area", everywhere)),
        &parameters,
    ));
    let intents = (!specs.is_empty())
        .then(|| {
            ToolIntents::compile(made.name, &specs, &parameters)
                .map_err(|e| {
                    tracing::warn!(tool = made.name, error = %e, "a house tool's sentences do not compile: only its derived ones are used");
                })
                .ok()
        })
        .flatten()
        .map(Arc::new);
    let confirm = made.confirm.map(|(key, value, ask)| {
        let mut when = Map::new();
        when.insert(key.into(), Value::Bool(value));
        Confirm {
            when,
            ask: Some(ask.into()),
        }
    });
    Tool {
        spec: ToolSpec {
            name: made.name.into(),
            description: made.description.into(),
            parameters,
        },
        say: Some("{{ result }}".into()),
        intents,
        confirm,
        inverse: None,
        for_model: made.for_model,
        executor: Executor::House(HouseSpec {
            derive: made.derive,
            noun: made.noun,
            action: made.action,
            things: things.into(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::Registry;
    use hearth_house::{Ability, Control, Source};

    fn thing(
        id: &str,
        kind: Kind,
        name: &str,
        aliases: &[&str],
        area: Option<(&str, &[&str])>,
        abilities: &[Ability],
    ) -> Thing {
        Thing {
            source: Source::HomeAssistant,
            id: id.into(),
            kind,
            name: name.into(),
            aliases: aliases.iter().map(|a| a.to_string()).collect(),
            area: area.map(|(n, a)| Area {
                name: n.into(),
                aliases: a.iter().map(|x| x.to_string()).collect(),
            }),
            class: None,
            abilities: abilities.to_vec(),
            modes: vec!["heat".into(), "off".into()],
            control: Control::HomeAssistant {
                entity_id: id.into(),
            },
        }
    }

    fn house() -> Vec<Thing> {
        use Ability::*;
        let light = [OnOff, Brightness, Color, Read];
        let mut garage = thing(
            "cover.garage_door",
            Kind::Cover,
            "garage door",
            &[],
            Some(("garage", &[])),
            &[OpenClose, Read],
        );
        garage.class = Some("garage".into());
        vec![
            thing(
                "light.bed_light",
                Kind::Light,
                "bed light",
                &["night light"],
                Some(("bedroom", &[])),
                &light,
            ),
            thing(
                "light.ceiling_lights",
                Kind::Light,
                "ceiling lights",
                &["big light"],
                Some(("living room", &["lounge"])),
                &light,
            ),
            thing(
                "light.kitchen_lights",
                Kind::Light,
                "kitchen lights",
                &[],
                Some(("kitchen", &[])),
                &light,
            ),
            thing(
                "lock.front_door",
                Kind::Lock,
                "front door",
                &[],
                None,
                &[Lock, Read],
            ),
            thing(
                "switch.fairy",
                Kind::Switch,
                "fairy lights",
                &[],
                Some(("living room", &["lounge"])),
                &[OnOff, Read],
            ),
            thing(
                "climate.heatpump",
                Kind::Climate,
                "heat pump",
                &["heating"],
                Some(("living room", &["lounge"])),
                &[TargetTemperature, Mode, Read],
            ),
            thing(
                "media_player.kitchen",
                Kind::MediaPlayer,
                "kitchen",
                &[],
                None,
                &[PlayPause, Track, Volume, Mute, Read],
            ),
            thing(
                "sensor.outside_temperature",
                Kind::Sensor,
                "outside temperature",
                &[],
                None,
                &[Read],
            ),
            garage,
        ]
    }

    fn call(registry: &Registry, text: &str) -> Option<(String, Value)> {
        let calls = registry.intents().recognize(text)?;
        let [c] = calls.as_slice() else { return None };
        Some((c.tool.clone(), c.arguments.clone()))
    }

    #[test]
    fn the_house_is_sayable_by_name_alias_and_area_with_no_sentence_written() {
        let registry = Registry::new(tools(&house())).unwrap();
        let cases: &[(&str, &str, Value)] = &[
            (
                "turn on the night light",
                "set_light",
                json!({"name": "night light", "on": true}),
            ),
            (
                "turn off the kitchen lights",
                "set_light",
                json!({"name": "kitchen lights", "on": false}),
            ),
            (
                "turn off the lights in the lounge",
                "set_light",
                json!({"area": "lounge", "on": false}),
            ),
            (
                "dim the big light to 30 percent",
                "set_light_brightness",
                json!({"name": "big light", "brightness": 30}),
            ),
            (
                "make the big light a bit brighter",
                "brighten_light",
                json!({"name": "big light", "brighter": true}),
            ),
            (
                "dim the lights in the kitchen",
                "brighten_light",
                json!({"area": "kitchen", "brighter": false}),
            ),
            (
                "lock the front door",
                "set_lock",
                json!({"name": "front door", "locked": true}),
            ),
            (
                "unlock the front door",
                "set_lock",
                json!({"name": "front door", "locked": false}),
            ),
            (
                "set the heating to 21 degrees",
                "set_thermostat",
                json!({"name": "heating", "temperature": 21}),
            ),
            (
                "pause the kitchen",
                "pause_media",
                json!({"name": "kitchen"}),
            ),
            (
                "what's playing on the kitchen",
                "get_device_state",
                json!({"name": "kitchen"}),
            ),
            (
                "put the heat pump in heat mode",
                "set_thermostat_mode",
                json!({"name": "heat pump", "mode": "heat"}),
            ),
            (
                "next track on the kitchen",
                "next_track",
                json!({"name": "kitchen"}),
            ),
            (
                "what is the outside temperature",
                "get_device_state",
                json!({"name": "outside temperature"}),
            ),
            (
                "is the front door locked",
                "get_device_state",
                json!({"name": "front door"}),
            ),
            (
                "open the garage door",
                "set_garage_door",
                json!({"name": "garage door", "open": true}),
            ),
            (
                "turn the bed light red",
                "set_light_color",
                json!({"name": "bed light", "color": "red"}),
            ),
            (
                "turn off all the lights",
                "set_light",
                json!({"area": "everywhere", "on": false}),
            ),
        ];
        let mut wrong = Vec::new();
        for (text, tool, args) in cases {
            let got = call(&registry, text);
            if got.as_ref().map(|(t, a)| (t.as_str(), a)) != Some((tool, args)) {
                wrong.push(format!("{text:?}: {got:?}, want {tool} {args}"));
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }

    /// What hearth says back when it asks "Shall I …?" about a call (a request heard
    /// unsurely, or a way nobody said): a request as a person would make it.
    #[test]
    fn a_call_is_said_back_as_a_request() {
        let registry = Registry::new(tools(&house())).unwrap();
        let said = |tool: &str, args: Value| registry.intents().said_as(tool, &args);
        let cases = [
            (
                "set_light",
                json!({"name": "night light", "on": true}),
                "turn on the night light",
            ),
            (
                "next_track",
                json!({"name": "kitchen"}),
                "skip to the next track on the kitchen",
            ),
            (
                "previous_track",
                json!({"name": "kitchen"}),
                "go back to the previous track on the kitchen",
            ),
            (
                "set_lock",
                json!({"name": "front door", "locked": false}),
                "unlock the front door",
            ),
            (
                "pause_media",
                json!({"name": "kitchen"}),
                "pause the music on the kitchen",
            ),
        ];
        for (tool, args, want) in cases {
            assert_eq!(said(tool, args).as_deref(), Some(want), "{tool}");
        }
    }

    #[test]
    fn a_place_is_asked_what_it_measures() {
        let sensor = |id: &str, name: &str, area: Option<(&str, &[&str])>, class: &str| {
            let mut t = thing(id, Kind::Sensor, name, &[], area, &[Ability::Read]);
            t.class = Some(class.into());
            t
        };
        let mut things = house();
        things.retain(|t| t.name != "outside temperature");
        let study = Some(("office", &["study"][..]));
        things.extend([
            sensor(
                "sensor.outside_t",
                "outside temperature",
                None,
                "temperature",
            ),
            sensor("sensor.outside_h", "outside humidity", None, "humidity"),
            sensor("sensor.bath_t", "bathroom temperature", None, "temperature"),
            // two in the study: neither is the study's
            sensor("sensor.study_a", "study a", study, "temperature"),
            sensor("sensor.study_b", "study b", study, "temperature"),
        ]);
        let registry = Registry::new(tools(&things)).unwrap();
        let read = |name: &str| Some(("get_device_state".to_string(), json!({ "name": name })));
        assert_eq!(
            call(&registry, "how humid is it outside"),
            read("outside humidity")
        );
        assert_eq!(
            call(&registry, "what's the temperature outdoors"),
            read("outside temperature")
        );
        assert_eq!(
            call(&registry, "how warm is it in the bathroom"),
            read("bathroom temperature")
        );
        // the heat pump reads the lounge's
        assert_eq!(
            call(&registry, "how cold is it in the lounge"),
            read("heat pump")
        );
        assert_eq!(call(&registry, "how warm is it in the study"), None);
        assert_eq!(call(&registry, "how humid is it in the kitchen"), None);
    }

    #[test]
    fn them_is_what_the_turn_before_named() {
        let registry = Registry::new(tools(&house())).unwrap();
        let mut before = crate::intent::Before::default();
        before.record(
            registry
                .intents()
                .recognize("turn on the lights in the bedroom")
                .unwrap(),
        );
        let calls = registry
            .intents()
            .follow_up("turn them off again", &before)
            .unwrap();
        assert_eq!(calls[0].tool, "set_light");
        assert_eq!(calls[0].arguments, json!({"area": "bedroom", "on": false}));
    }

    #[test]
    fn a_recogniser_mends_how_a_device_was_heard_never_which_way_it_goes() {
        let registry = Registry::new(tools(&house())).unwrap();
        let grammar = crate::phrases::house_phrases(&registry, &["stop"]).grammar();
        let m = hearth_phrases::Matcher::new(&grammar).unwrap();
        // either word reads the lock, or sets the level said
        assert_eq!(
            m.introduces("is the front door lock", "is the front door locked"),
            None
        );
        assert_eq!(
            m.introduces(
                "then the big light to 30 percent",
                "dim the big light to 30 percent"
            ),
            None
        );
        // here the word is the way
        assert_eq!(
            m.introduces("mock the front door", "lock the front door"),
            Some("lock".into())
        );
        assert_eq!(
            m.introduces("then the big light", "dim the big light"),
            Some("dim".into())
        );
        assert_eq!(
            m.introduces("turn of the big light", "turn off the big light"),
            Some("off".into())
        );
    }

    #[test]
    fn them_after_a_follow_up_is_what_the_follow_up_named() {
        use Ability::{OnOff, Read};
        let mut things = house();
        let bedroom = Some(("bedroom", &[][..]));
        things.push(thing(
            "switch.ac",
            Kind::Switch,
            "ac",
            &["air conditioner"],
            bedroom,
            &[OnOff, Read],
        ));
        things.push(thing(
            "fan.ceiling",
            Kind::Fan,
            "ceiling fan",
            &[],
            bedroom,
            &[OnOff, Read],
        ));
        things.push(thing(
            "cover.hall",
            Kind::Cover,
            "hall window",
            &[],
            Some(("hallway", &["hall"])),
            &[Ability::OpenClose, Ability::Stop, Read],
        ));
        let registry = Registry::new(tools(&things)).unwrap();
        let intents = registry.intents();
        let mut before = crate::intent::Before::default();
        before.record(
            intents
                .recognize("turn on the lights in the lounge")
                .unwrap(),
        );
        let too = intents.follow_up("and the bedroom too", &before).unwrap();
        assert_eq!(too[0].arguments, json!({"area": "bedroom", "on": true}));
        before.record(too);
        let calls = intents.follow_up("turn them off again", &before).unwrap();
        assert_eq!(calls[0].tool, "set_light");
        assert_eq!(calls[0].arguments, json!({"area": "bedroom", "on": false}));
    }

    #[test]
    fn a_manifest_wins_the_words_it_shares_with_the_house() {
        let manifest = r#"
[[tool]]
name = "kitchen_glow"
description = "The kitchen's strip lights."
say = "The strip is on."
[tool.exec]
argv = ["true"]
[[tool.intent]]
sentences = ["turn on the kitchen lights"]
"#;
        let mut all =
            crate::tools::parse_manifest(manifest, std::path::Path::new("k.toml")).unwrap();
        all.extend(tools(&house()));
        let registry = Registry::new(all).unwrap();
        assert_eq!(
            call(&registry, "turn on the kitchen lights").map(|c| c.0),
            Some("kitchen_glow".to_string())
        );
        // the house still has the words nobody else says
        assert_eq!(
            call(&registry, "turn off the kitchen lights").map(|c| c.0),
            Some("set_light".to_string())
        );
    }

    #[test]
    fn unlocking_and_opening_a_way_in_wait_for_a_yes() {
        let registry = Registry::new(tools(&house())).unwrap();
        let lock = registry.get("set_lock").unwrap().confirm.as_ref().unwrap();
        assert!(lock.applies(&json!({"name": "front door", "locked": false})));
        assert!(!lock.applies(&json!({"name": "front door", "locked": true})));
        let garage = registry
            .get("set_garage_door")
            .unwrap()
            .confirm
            .as_ref()
            .unwrap();
        assert!(garage.applies(&json!({"open": true})));
        assert!(
            registry.get("set_cover").is_none(),
            "no other cover: no tool"
        );
    }

    #[test]
    fn a_tool_knows_only_the_things_that_can_do_its_action() {
        let made = tools(&house());
        let names = |tool: &str| {
            made.iter()
                .find(|t| t.spec.name == tool)
                .map(|t| t.spec.parameters["properties"]["name"]["enum"].clone())
        };
        assert_eq!(names("set_lock"), Some(json!(["front door"])));
        assert_eq!(
            names("set_light"),
            Some(json!([
                "bed light",
                "night light",
                "ceiling lights",
                "big light",
                "kitchen lights"
            ]))
        );
        assert!(names("activate_scene").is_none());
    }
}
