//! Checks on what the model says in words before it is spoken: a reply must not claim what
//! no call did, state a reading no call returned, talk about its own tools instead of
//! answering, repeat an earlier reply to a different request, or say the request back.
//!
//! A small model with a conversation behind it learns the shape of the replies it sees
//! ("The kitchen light is on.") and starts giving that shape instead of the call: "The
//! office light is on." with no tool run. For a device that locks doors that is the worst
//! failure there is, so every sentence the model writes while no call has run in the turn
//! is checked here ([`ReplyCheck::check`]); the hop loop holds a flagged sentence back and
//! recovers (see the agent's module doc).
//!
//! What counts as a claim, for the tools of this session:
//! - the sentence has the shape of a tool's `say` confirmation: the template's literal words
//!   in order ("The {{ room }} light is …" → "the" … "light is");
//! - or it names something a tool acts on (a tool's noun, an enumerated value such as a room,
//!   a content word of a confirmation) and asserts a state or an action: "… is on", "… are
//!   locked", "I turned …", "Turning off …";
//! - or it is a bare "Done." / "All set.".
//!
//! A reading (`reading.rs`): a temperature, a time, a date, a level, a number with a unit, a
//! state of the home ("the bathroom is cold"), a yes or no to a question about the home.
//! Before any call it is a claim; after calls ([`ReplyCheck::after_calls`]) each number,
//! time, date and state must be one the turn's results carry.
//!
//! Tool talk: a tool's name, or words about functions, tools, APIs, JSON or parameters.
//! A repeat: the same words (at least four) as an earlier reply of the session whose
//! request was different.
//! An echo: the request said back ("Lock the front door." to "lock the front door"): its
//! words in order, fillers ("okay", "sure", "the") aside, with at most two words more, as
//! said or mirrored ("I had a long day." to "You had a long day."); or
//! the words of any earlier request of the session. A greeting said back is no echo
//! ("Good night!").

use std::collections::HashSet;

use hearth_phrases::normalize;
use serde_json::Value;

use super::reading::{states_reading, Carried, CLOCK};
use super::words::{request_parts, singular};
use crate::intent::is_length_unit;
use crate::llm::ChatMessage;
use crate::tools::{schema_strings, Listed, Registry};

/// Why a reply in words is not spoken as it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unfounded {
    /// It asserts an action or a device state that no call of this turn carried out.
    Claim,
    /// It talks about functions or tools instead of answering.
    ToolTalk,
    /// It repeats an earlier reply, word for word, to a different request.
    Repeat,
    /// Nothing in it can be spoken (a call to a tool that does not exist, bare JSON).
    NoAnswer,
    /// It is empty: the model ended its turn at once.
    Silent,
    /// It calls a tool that does not exist, named like one that does ("lock" for
    /// `set_lock`): a call was meant.
    Misnamed,
    /// It calls a tool about something the request (or the turn before it, when the request
    /// points back at it) did not name.
    Unasked,
    /// It states a reading (a temperature, a time, a date, a level, a state of the home)
    /// that no call of this turn returned.
    Reading,
    /// It says the request, or an earlier one, back instead of answering.
    Echo,
    /// It gives an order about the home ("Mark the bathroom light as on.", "Turn the
    /// living room light off.") instead of carrying it out.
    Order,
}

impl Unfounded {
    /// How the turn's report names it.
    pub fn label(self) -> &'static str {
        match self {
            Unfounded::Claim => "claimed an action no call carried out",
            Unfounded::ToolTalk => "talked about tools instead of answering",
            Unfounded::Repeat => "repeated an earlier reply",
            Unfounded::NoAnswer => "said nothing that can be spoken",
            Unfounded::Silent => "wrote nothing",
            Unfounded::Misnamed => "called a tool that does not exist",
            Unfounded::Unasked => "called a tool about something not asked for",
            Unfounded::Reading => "stated a reading no call returned",
            Unfounded::Echo => "said the request back",
            Unfounded::Order => "gave an order instead of carrying it out",
        }
    }
}

/// Words that carry no subject: never enough, alone, to tie a sentence to a tool.
const STOP: &[&str] = &[
    "the", "a", "an", "is", "are", "was", "were", "be", "been", "to", "at", "of", "in", "on",
    "off", "it", "its", "and", "or", "for", "now", "i", "you", "your", "my", "set", "has", "have",
    "with", "by", "this", "that", "s",
];

/// Forms of "to be" that assert a state ("it's" counts: see [`words`]).
const BE: &[&str] = &["is", "are", "was", "were", "been", "be"];

/// Words between "is" and the state that keep it an assertion: "is now on", "is not locked".
const BE_FILLER: &[&str] = &["now", "already", "still", "not", "all", "currently", "been"];

/// States a device is said to be in.
const STATES: &[&str] = &[
    "on",
    "off",
    "locked",
    "unlocked",
    "open",
    "opened",
    "closed",
    "shut",
    "set",
    "dimmed",
    "brightened",
    "turned",
    "switched",
    "activated",
    "deactivated",
    "started",
    "stopped",
    "running",
    "enabled",
    "disabled",
    "at",
    "up",
    "down",
    "pressed",
];

/// States that a sentence about "it" or "they" may claim: "It's on.", "They are locked."
const PLAIN_STATES: &[&str] = &[
    "on", "off", "locked", "unlocked", "open", "closed", "set", "done",
];

/// Words that stand for the device just talked about.
const PRONOUNS: &[&str] = &["it", "they", "both", "everything", "all"];

/// Parameter names that say nothing of what a tool is about.
const VAGUE_PARAMETERS: &[&str] = &[
    "value",
    "state",
    "name",
    "text",
    "message",
    "id",
    "data",
    "args",
    "arguments",
    "payload",
    "query",
    "input",
    "command",
    "action",
    "mode",
    "target",
    "entity",
];

/// Units of time longer than a timer's (whose units are [`is_length_unit`]'s).
const CALENDAR: &[&str] = &["day", "week"];

/// Words in a parameter's name that make it a time (see [`number_grounds`]).
const TIME_KEYS: &[&str] = &[
    "duration", "length", "delay", "time", "period", "interval", "after", "second", "minute",
    "hour", "day", "week", "clock", "alarm",
];

/// Verbs an order about the home begins with ([`ReplyCheck::orders`]).
const ORDER_VERBS: &[&str] = &[
    "mark",
    "set",
    "turn",
    "switch",
    "make",
    "lock",
    "unlock",
    "open",
    "close",
    "dim",
    "brighten",
    "put",
    "change",
    "adjust",
    "toggle",
    "start",
    "stop",
    "raise",
    "lower",
    "increase",
    "decrease",
    "activate",
    "deactivate",
    "enable",
    "disable",
    "arm",
    "disarm",
];

/// Past forms of actions: "I turned …", "… has been switched …" ("set" only after a
/// subject or "been": "I set …", "has been set", since "set" is also the present).
const DONE_VERBS: &[&str] = &[
    "turned",
    "switched",
    "locked",
    "unlocked",
    "opened",
    "closed",
    "dimmed",
    "brightened",
    "activated",
    "deactivated",
    "started",
    "stopped",
    "adjusted",
    "changed",
    "raised",
    "lowered",
    "increased",
    "decreased",
    "pressed",
];

/// Actions under way, at the start of a sentence: "Turning off the kitchen light."
const DOING_VERBS: &[&str] = &[
    "turning",
    "switching",
    "setting",
    "locking",
    "unlocking",
    "opening",
    "closing",
    "dimming",
    "activating",
    "pressing",
    "adjusting",
    "changing",
];

/// Whole sentences that claim completion with no subject.
const BARE_DONE: &[&str] = &[
    "done",
    "all done",
    "all set",
    "ok done",
    "okay done",
    "it's done",
];

/// Words about the machinery rather than the home.
const TOOL_WORDS: &[&str] = &[
    "function",
    "functions",
    "tool",
    "tools",
    "api",
    "json",
    "parameter",
    "parameters",
    "argument",
    "arguments",
    "schema",
];

/// Words by which a request points back at an earlier turn: "turn it off again", "and the
/// bedroom too", "do that once more". A request without one is about what it says itself.
/// ("that" and "this" are not among them: "that's all for now" points at nothing.)
const BACK_REFERENCES: &[&str] = &[
    "it", "its", "them", "they", "those", "there", "too", "also", "again", "same", "more", "less",
    "another", "other", "both", "one",
];

/// Whether `request` points back at an earlier turn ([`BACK_REFERENCES`]). Only such a
/// request's calls may be about what the turn before it named: "Never mind." after "lock the
/// back door" is about nothing, and a call on the back door then is a copy of the history.
///
/// Three of those words often point at nothing ([`points_at_nothing`]): "too" before the
/// word it makes more of ("it's too dark"), "it" that starts a statement ("It's cold in
/// here."), "there" that says something exists ("is there a timer?"). "It's too dark in the
/// hallway." once took a temperature from the turn before it to the thermostat.
pub(crate) fn refers_back(request: &str) -> bool {
    let words = words(request);
    (0..words.len())
        .any(|i| BACK_REFERENCES.contains(&words[i].as_str()) && !points_at_nothing(&words, i))
}

/// Verbs of being after which "it" or "there" starts a statement about the world, not about
/// a thing named before ("it is cold", "there are two timers").
const BEING: &[&str] = &[
    "is", "are", "was", "were", "feels", "looks", "seems", "gets",
];

/// Words after which a new clause starts.
const CLAUSE_START: &[&str] = &["and", "but", "because", "so", "now", "well", "oh"];

/// Whether `words[i]`, a back reference's word, here refers to nothing: "too" with a word
/// after it that is not a joiner or a polite ending ("too dark", not "the bedroom too,
/// please"); "it" that starts a clause before a verb of being ("It's too dark", not "is it
/// on?", not "make sure it is locked"); "there" beside a verb of being ("is there …", "there
/// are …").
fn points_at_nothing(words: &[String], i: usize) -> bool {
    let next = words.get(i + 1).map(String::as_str);
    let before = i.checked_sub(1).map(|j| words[j].as_str());
    match words[i].as_str() {
        "too" => next.is_some_and(|n| {
            !normalize::is_joiner(n) && !["please", "thanks", "as", "then"].contains(&n)
        }),
        "it" => {
            let starts_clause = before.is_none_or(|b| CLAUSE_START.contains(&b));
            starts_clause && next.is_some_and(|n| BEING.contains(&n))
        }
        "there" => {
            next.is_some_and(|n| BEING.contains(&n)) || before.is_some_and(|b| BEING.contains(&b))
        }
        _ => false,
    }
}

/// The least number of words a repeated reply has before it counts ("You're welcome."
/// twice is only polite).
const REPEAT_MIN_WORDS: usize = 4;

/// Words a reply may add to a request and still only say it back ("Okay, lock the front
/// door."), and the articles it may drop.
const ECHO_FILLER: &[&str] = &[
    "ok",
    "okay",
    "sure",
    "alright",
    "yes",
    "yeah",
    "please",
    "hey",
    "so",
    "well",
    "oh",
    "um",
    "uh",
    "hmm",
    "certainly",
    "now",
    "the",
    "a",
    "an",
];

/// Words of greetings, thanks and small talk: a request of only these may be said back
/// ("Good night!" to "good night", "How are you?" to "how are you").
const SOCIAL: &[&str] = &[
    "hello",
    "hi",
    "hey",
    "good",
    "morning",
    "afternoon",
    "evening",
    "night",
    "thanks",
    "thank",
    "you",
    "bye",
    "goodbye",
    "welcome",
    "cheers",
    "see",
    "later",
    "sleep",
    "well",
    "sweet",
    "dreams",
    "take",
    "care",
    "have",
    "nice",
    "day",
    "weekend",
    "great",
    "happy",
    "birthday",
    "merry",
    "christmas",
    "new",
    "year",
    "congratulations",
    "sorry",
    "excuse",
    "me",
    "i",
    "love",
    "too",
    "same",
    "to",
    "and",
    "your",
    "how",
    "are",
    "is",
    "it",
    "doing",
    "going",
    "lot",
    "much",
    "very",
];

/// The fewest words (fillers aside) a request has before saying it back is an echo.
const ECHO_MIN_WORDS: usize = 2;

/// The most words a reply may add around the request and still only say it back ("I will
/// lock the front door.").
const ECHO_EXTRA: usize = 2;

/// What the session said before this turn, as the checks need it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Earlier {
    /// Each earlier request with the words the assistant last said to it.
    pub replies: Vec<(String, String)>,
    /// Every earlier request, in order.
    pub requests: Vec<String>,
}

impl Earlier {
    /// What `history` holds: its user requests (not the loop's own "(system: …)" messages),
    /// and each with the words the assistant last said to it (calls are not words).
    pub(super) fn of(history: &[ChatMessage]) -> Earlier {
        let mut earlier = Earlier::default();
        let mut request: Option<&str> = None;
        for m in history {
            match m.role.as_str() {
                "user" if !m.content.starts_with("(system:") => {
                    request = Some(&m.content);
                    earlier.requests.push(m.content.clone());
                }
                "assistant" if m.tool_calls.is_empty() && !m.content.contains("<tool_call>") => {
                    if let Some(r) = request {
                        earlier.replies.push((r.to_string(), m.content.clone()));
                    }
                }
                _ => {}
            }
        }
        earlier
    }
}

/// What the checks know about the session's tools: built once per tool set.
#[derive(Debug, Clone, Default)]
pub(crate) struct ReplyCheck {
    /// Per `say` template: its runs of literal words, in order.
    shapes: Vec<Vec<Vec<String>>>,
    /// Words that tie a sentence to a tool (nouns, enumerated values, confirmation words).
    subjects: HashSet<String>,
    /// The tools' names, lower case.
    names: HashSet<String>,
    /// The tools' parameters' names, lower case.
    parameters: HashSet<String>,
    /// The tools that read something (`get_time`, `get_thermostat`: named with a verb of
    /// [`READ_VERBS`]).
    readings: HashSet<String>,
}

/// The first words of a tool's name that say it reads.
const READ_VERBS: &[&str] = &["get", "read", "query"];

/// Words a request that asks for something begins with (after "please", "hey", "so").
const ASKING: &[&str] = &[
    "what", "when", "where", "which", "who", "how", "is", "are", "was", "were", "do", "does",
    "did", "can", "could", "would", "will", "tell", "give", "show", "check", "say", "read", "let",
    "any", "get", "remind",
];

/// Whether `request` asks for something: it ends with "?", or begins with a word of
/// [`ASKING`] ("what's the time", "tell me the date"). "Time flies when you're having fun"
/// and "long time no see" do not.
/// The words of `request` from its first that carries meaning: "please", "hey", "so",
/// "ok", "and", "now" before it left out.
pub(super) fn opening_words(request: &str) -> Vec<String> {
    let filler = |w: &String| {
        matches!(
            w.as_str(),
            "please" | "hey" | "so" | "ok" | "okay" | "and" | "now"
        )
    };
    words(request).into_iter().skip_while(filler).collect()
}

fn asks(request: &str) -> bool {
    if request.trim_end().ends_with('?') {
        return true;
    }
    let said = opening_words(request);
    let mut w = said.iter().map(String::as_str);
    match (w.next(), w.next()) {
        // "what a time to be alive" exclaims
        (Some("what"), Some("a" | "an")) => false,
        (Some(first), _) => ASKING.contains(&first),
        (None, _) => false,
    }
}

impl ReplyCheck {
    /// The checks for `registry`'s tools.
    pub fn new(registry: &Registry) -> ReplyCheck {
        let mut check = ReplyCheck::default();
        for tool in registry.tools() {
            let name = tool.spec.name.to_lowercase();
            for noun in name.split(['_', '-']).skip(1) {
                check.add_subject(noun);
            }
            if name
                .split(['_', '-'])
                .next()
                .is_some_and(|v| READ_VERBS.contains(&v))
            {
                check.readings.insert(name.clone());
            }
            if is_identifier(&tool.spec.name) {
                check.names.insert(name);
            } else {
                // a tool named with a plain word ("heating") is what it is about: saying the
                // word is no talk of tools ("I can turn the heating up.")
                check.add_subject(&name);
            }
            schema_strings(&tool.spec.parameters, Listed::Values, &mut |s| {
                for w in words(s) {
                    check.add_subject(&w);
                }
            });
            // what a parameter is about ("door", "room"), unless its name says nothing
            if let Some(props) = tool.spec.parameters["properties"].as_object() {
                for key in props.keys() {
                    check.parameters.insert(key.to_lowercase());
                    for w in key.to_lowercase().split(['_', '-']) {
                        if !VAGUE_PARAMETERS.contains(&w) {
                            check.add_subject(w);
                        }
                    }
                }
            }
            if let Some(say) = &tool.say {
                let runs = literal_runs(say);
                for w in runs.iter().flatten() {
                    check.add_subject(w);
                }
                let has_content = runs.iter().flatten().any(|w| !STOP.contains(&w.as_str()));
                if has_content {
                    check.shapes.push(runs);
                }
            }
        }
        check
    }

    fn add_subject(&mut self, word: &str) {
        let w = singular(word);
        if !STOP.contains(&w) && w.len() > 1 {
            self.subjects.insert(w.to_string());
        }
    }

    /// Whether a sentence the model wrote while no call has run in the turn may be spoken:
    /// `None` when it may, else why not. `request` is the user's words; `earlier` what the
    /// session said before.
    pub fn check(&self, sentence: &str, request: &str, earlier: &Earlier) -> Option<Unfounded> {
        let w = words(sentence);
        if self.tool_talk(&w) || self.writes_arguments(sentence) {
            Some(Unfounded::ToolTalk)
        } else if self.claims(&w) {
            Some(Unfounded::Claim)
        } else if states_reading(sentence, request, &self.subjects) {
            Some(Unfounded::Reading)
        } else if repeats(&w, request, &earlier.replies) {
            Some(Unfounded::Repeat)
        } else if echoes(&w, request, &earlier.requests) {
            Some(Unfounded::Echo)
        } else if self.orders(&w) {
            Some(Unfounded::Order)
        } else {
            None
        }
    }

    /// Whether a sentence the model wrote after the turn's calls may be spoken: `None` when
    /// it may; [`Unfounded::Reading`] when it says a number, a time, a date or a state of
    /// the home that nothing in `carried` (the results, the request, the calls' arguments)
    /// carries; [`Unfounded::Echo`] when it says a request back.
    pub(super) fn after_calls(
        &self,
        sentence: &str,
        request: &str,
        earlier: &Earlier,
        carried: &Carried,
    ) -> Option<Unfounded> {
        if carried.lacks(sentence, request, &self.subjects) {
            Some(Unfounded::Reading)
        } else if echoes(&words(sentence), request, &earlier.requests) {
            Some(Unfounded::Echo)
        } else {
            None
        }
    }

    /// Whether `text`, even unfinished, talks of tools: a sentence with it would be held
    /// back whatever came after, so a words-only hop need not finish it.
    pub(super) fn talks_of_tools(&self, text: &str) -> bool {
        self.tool_talk(&words(text))
    }

    /// A sentence that names a tool by its identifier ("set_light") or talks of functions,
    /// tools, JSON.
    /// Whether `sentence` writes a call out: a parameter's name and a colon ("mount the
    /// front door, area: living room", `"name": "porch light"`), or an identifier, words
    /// joined by `_` ("post_lock"), which nobody says.
    fn writes_arguments(&self, sentence: &str) -> bool {
        sentence.split_whitespace().any(|t| {
            let word = t.trim_matches(|c: char| !c.is_alphanumeric() && c != '_');
            let identifier = word
                .split('_')
                .filter(|part| part.chars().any(char::is_alphabetic))
                .count()
                > 1;
            identifier || (t.ends_with(':') && self.parameters.contains(&word.to_lowercase()))
        })
    }

    fn tool_talk(&self, w: &[String]) -> bool {
        w.iter()
            .any(|x| self.names.contains(x) || TOOL_WORDS.contains(&x.as_str()))
    }

    /// An order about the home: a sentence that begins (after a softener: "please",
    /// "okay") with a verb of [`ORDER_VERBS`] and names a device, a room or a value of a
    /// tool.
    fn orders(&self, w: &[String]) -> bool {
        let mut rest = w
            .iter()
            .skip_while(|x| ECHO_FILLER.contains(&x.as_str()) || x.as_str() == "please");
        rest.next()
            .is_some_and(|verb| ORDER_VERBS.contains(&verb.as_str()))
            && w.iter().any(|x| self.subjects.contains(singular(x)))
    }

    fn claims(&self, w: &[String]) -> bool {
        if BARE_DONE.contains(&w.join(" ").as_str()) {
            return true;
        }
        if self.shapes.iter().any(|runs| has_runs(w, runs)) {
            return true;
        }
        let about_a_device = w.iter().any(|x| self.subjects.contains(singular(x)));
        let about_it = w.iter().any(|x| PRONOUNS.contains(&x.as_str()));
        (about_a_device && asserts_state_or_action(w))
            || (about_it && asserts_state(w, PLAIN_STATES))
    }

    /// Whether `call` is about something the request mentions: one of its string values
    /// ("kitchen"), one of its numbers ("21"), or, for a call without string values, the
    /// tool's noun ("time" for `get_time`, "thermostat"), and then, for a reading, only
    /// when the request asks ([`asks`]: "time flies" reads no clock). A call a retry
    /// forced must be; otherwise it is a guess and does not run.
    pub(crate) fn grounded(&self, tool: &str, arguments: &Value, request: &str) -> bool {
        let w = words(request);
        let said: HashSet<&str> = w.iter().map(|x| singular(x)).collect();
        let joined = format!(" {} ", w.join(" "));
        let mut strings = Vec::new();
        let mut numbers = Vec::new();
        if let Value::Object(m) = arguments {
            for (key, v) in m {
                match v {
                    Value::String(s) => strings.push(s.to_lowercase()),
                    Value::Number(n) => numbers.extend(n.as_f64().map(|n| (key, n))),
                    _ => {}
                }
            }
        }
        if !strings.is_empty() {
            return strings
                .iter()
                .any(|s| joined.contains(&format!(" {} ", words(s).join(" "))));
        }
        let number_said = numbers
            .iter()
            .any(|(key, n)| number_grounds(&w, &key.to_lowercase(), *n));
        if number_said {
            return true;
        }
        let tool = tool.to_lowercase();
        let noun_said = tool
            .split(['_', '-'])
            .skip(1)
            .any(|noun| said.contains(singular(noun)));
        noun_said && (!self.readings.contains(&tool) || asks(request))
    }
}

/// Whether the request's words `w` say `n` as the value of a parameter named `key`: the
/// number is said, and when a unit of time or a clock's word follows it ("20 seconds", "6
/// pm"), the key is named for time ([`TIME_KEYS`]): "a timer for 20 seconds" sets no
/// thermostat to 20.
fn number_grounds(w: &[String], key: &str, n: f64) -> bool {
    let timed = TIME_KEYS.iter().any(|k| key.contains(k));
    (0..w.len()).any(|i| {
        // in digits or in words ("23", "twenty three")
        let Some((x, len)) = crate::intent::number_at(&w[i..]) else {
            return false;
        };
        let of_time = w.get(i + len).is_some_and(|u| {
            is_length_unit(u) || CLOCK.contains(&u.as_str()) || CALENDAR.contains(&singular(u))
        });
        (x - n).abs() < 1e-9 && (timed || !of_time)
    })
}

/// "… is (now|not|…)* STATE", "I turned …", "has been set …", or a sentence that starts
/// with an action under way.
fn asserts_state_or_action(w: &[String]) -> bool {
    let starts_doing = w
        .iter()
        .find(|x| !matches!(x.as_str(), "ok" | "okay" | "sure" | "alright"))
        .is_some_and(|x| DOING_VERBS.contains(&x.as_str()));
    let did_set = w.windows(2).any(|p| {
        matches!(
            p[0].as_str(),
            "i" | "i've" | "we" | "have" | "has" | "been" | "just"
        ) && p[1] == "set"
    });
    if starts_doing || did_set || w.iter().any(|x| DONE_VERBS.contains(&x.as_str())) {
        return true;
    }
    asserts_state(w, STATES)
}

/// "… is (now|not|…)* STATE" for one of `states`.
fn asserts_state(w: &[String], states: &[&str]) -> bool {
    w.iter().enumerate().any(|(i, x)| {
        BE.contains(&x.as_str())
            && w[i + 1..]
                .iter()
                .find(|y| !BE_FILLER.contains(&y.as_str()))
                .is_some_and(|y| states.contains(&y.as_str()))
    })
}

/// Whether the sentence holds each run of words, in order.
fn has_runs(w: &[String], runs: &[Vec<String>]) -> bool {
    let mut at = 0;
    for run in runs.iter().filter(|r| !r.is_empty()) {
        match (at..=w.len().saturating_sub(run.len())).find(|&i| w[i..].starts_with(run)) {
            Some(i) if i + run.len() <= w.len() => at = i + run.len(),
            _ => return false,
        }
    }
    true
}

fn repeats(w: &[String], request: &str, earlier: &[(String, String)]) -> bool {
    if w.len() < REPEAT_MIN_WORDS {
        return false;
    }
    let asked = words(request);
    earlier.iter().any(|(req, reply)| {
        let said = words(reply);
        let first: Vec<String> = reply
            .split_inclusive(['.', '!', '?'])
            .next()
            .map(words)
            .unwrap_or_default();
        (said == w || first == w) && words(req) != asked
    })
}

/// Whether a tool's name reads as an identifier, not a word a person says: it holds `_`,
/// `-` or a digit, or a capital after a small letter ("setLight").
fn is_identifier(name: &str) -> bool {
    name.contains(['_', '-'])
        || name.chars().any(|c| c.is_ascii_digit())
        || name
            .chars()
            .zip(name.chars().skip(1))
            .any(|(a, b)| a.is_lowercase() && b.is_uppercase())
}

/// Whether `text` is greetings, thanks and small talk alone ("Good night.", "How are
/// you?"): a request that may be said back ("Good night!"), by the model and in the
/// session bench's scoring alike.
pub fn small_talk(text: &str) -> bool {
    let w = words(text);
    let asked = content(&w);
    !asked.is_empty() && all_social(&asked)
}

fn all_social(words: &[&str]) -> bool {
    words.iter().all(|x| SOCIAL.contains(x))
}

/// The words of `w` that are not fillers: what an echo is compared by.
fn content(w: &[String]) -> Vec<&str> {
    w.iter()
        .map(String::as_str)
        .filter(|x| !ECHO_FILLER.contains(x))
        .collect()
}

/// Whether the sentence `w` says `request` back (its words in order, with at most
/// [`ECHO_EXTRA`] more; the whole request or one of its parts), or says one of the
/// `earlier` requests (or parts) back word for word. Requests of greetings and small talk
/// alone, or of fewer than [`ECHO_MIN_WORDS`] words, may be said back.
fn echoes(w: &[String], request: &str, earlier: &[String]) -> bool {
    let said = content(w);
    let says_back = |asked: &str, extra: usize| {
        let asked_words = words(asked);
        let asked = content(&asked_words);
        if asked.len() < ECHO_MIN_WORDS || all_social(&asked) {
            return false;
        }
        let said_whole = |asked: &[&str]| {
            said.len() <= asked.len() + extra && said.windows(asked.len()).any(|run| run == asked)
        };
        // or mirrored: "I woke up at 7 today." to "You woke up at 7 today."
        let whole = said_whole(&asked) || said_whole(&mirrored(&asked));
        // the request less a word at one end: "The former staff to hunting the breeze." to
        // "Since the former staff to hunting the breeze."
        let clipped = said.len() >= ECHO_MIN_WORDS
            && said.len() + 1 == asked.len()
            && (asked.starts_with(&said) || asked.ends_with(&said));
        // a piece of the request and nothing else: "porch light" for "make the porch light
        // brighter, it's too dark out there", "Joe." for "help me a Joe" (the small model
        // writes one where it meant a call); unless the request offered a choice ("the sun
        // or the moon?": "The sun."), asked for words to be said ("say hi": "Hi."), or the
        // piece is a greeting
        let piece = extra > 0
            && !said.is_empty()
            && said.len() < asked.len()
            && !asked.contains(&"or")
            && !matches!(asked.first(), Some(&("say" | "repeat")))
            && !all_social(&said)
            && asked.windows(said.len()).any(|run| run == said.as_slice());
        whole || clipped || piece
    };
    let parts = |text: &'_ str| {
        let mut all = vec![text.to_string()];
        all.extend(request_parts(text).into_iter().map(str::to_string));
        all
    };
    parts(request).iter().any(|p| says_back(p, ECHO_EXTRA))
        || earlier
            .iter()
            .any(|e| parts(e).iter().any(|p| says_back(p, 0)))
}

/// A person's words as said back to them: "i", "me", "my", "we" … as "you", "your" ….
fn mirrored<'a>(w: &[&'a str]) -> Vec<&'a str> {
    w.iter()
        .map(|&x| match x {
            "i" | "me" | "we" | "us" => "you",
            "my" | "our" => "your",
            "mine" | "ours" => "yours",
            "myself" => "yourself",
            "i'm" => "you're",
            "am" => "are",
            _ => x,
        })
        .collect()
}

/// The literal words of a `say` template, as runs cut at each `{{ … }}` or `{% … %}`.
fn literal_runs(template: &str) -> Vec<Vec<String>> {
    let mut runs = Vec::new();
    let mut rest = template;
    loop {
        let next = ["{{", "{%"].iter().filter_map(|open| rest.find(open)).min();
        let Some(start) = next else {
            runs.push(words(rest));
            break;
        };
        runs.push(words(&rest[..start]));
        let close = if rest[start..].starts_with("{{") {
            "}}"
        } else {
            "%}"
        };
        match rest[start..].find(close) {
            Some(end) => rest = &rest[start + end + 2..],
            None => break,
        }
    }
    runs.retain(|r| !r.is_empty());
    runs
}

/// Lower-case words: letters, digits, `_` and inner apostrophes; "it's" gives "it", "is".
pub(crate) fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for raw in text.split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '_' || c == '.')) {
        // a dot stays only inside a number ("21.5")
        for t in keep_decimal(raw) {
            let t = t.trim_matches('\'').to_lowercase();
            if t.is_empty() {
                continue;
            }
            match t.strip_suffix("'s") {
                Some(stem) if !stem.is_empty() => {
                    out.push(stem.to_string());
                    out.push("is".to_string());
                }
                _ => out.push(t),
            }
        }
    }
    out
}

/// A token split at dots, except a dot between digits ("21.5" stays whole).
fn keep_decimal(raw: &str) -> Vec<&str> {
    let bytes = raw.as_bytes();
    let mut parts = Vec::new();
    let mut from = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let decimal = i > 0
            && i + 1 < bytes.len()
            && bytes[i - 1].is_ascii_digit()
            && bytes[i + 1].is_ascii_digit();
        if b == b'.' && !decimal {
            parts.push(&raw[from..i]);
            from = i + 1;
        }
    }
    parts.push(&raw[from..]);
    parts.retain(|p| !p.is_empty());
    parts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::Registry;

    fn demo() -> ReplyCheck {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tools");
        ReplyCheck::new(&Registry::load_dir(dir).expect("the demo tools load"))
    }

    fn check(sentence: &str, request: &str) -> Option<Unfounded> {
        demo().check(sentence, request, &Earlier::default())
    }

    fn replied(pairs: &[(&str, &str)]) -> Earlier {
        Earlier {
            replies: pairs
                .iter()
                .map(|(q, a)| (q.to_string(), a.to_string()))
                .collect(),
            requests: pairs.iter().map(|(q, _)| q.to_string()).collect(),
        }
    }

    #[test]
    fn confirmations_and_state_assertions_without_a_call_are_claims() {
        for s in [
            "The office light is on.",
            "The garage door is locked.",
            "The kitchen light is now off.",
            "The thermostat is set to 22 degrees.",
            "I turned off the bedroom lights.",
            "Turning on the living room light.",
            "Okay, locking the front door.",
            "The front door has been unlocked.",
            "The bedroom light is at 40 percent.",
            "It's on.",
            "Done.",
            "The bathroom lights are not on.",
        ] {
            assert_eq!(
                check(s, "turn on the office light"),
                Some(Unfounded::Claim),
                "{s}"
            );
        }
    }

    #[test]
    fn ordinary_answers_are_not_claims() {
        for s in [
            "You're welcome!",
            "I'm doing well, thank you.",
            "Why did the scarecrow win an award? Because he was outstanding in his field.",
            "I can turn lights on and off, set the thermostat and lock doors.",
            "Good night, sleep well.",
            "Sorry, I can't help with that.",
            "It's up to you.",
            "I can set a timer for you? No, I can't.",
            "It is a lovely day.",
            "The capital of France is Paris.",
        ] {
            assert_eq!(check(s, "hello"), None, "{s}");
        }
    }

    #[test]
    fn a_tool_named_with_a_plain_word_is_a_subject_not_tool_talk() {
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/session/household");
        let c = ReplyCheck::new(&Registry::load_dir(dir).expect("the household's tools load"));
        let none = Earlier::default();
        // "heating" is the household's thermostat tool: naming it is no talk of tools
        assert_eq!(
            c.check(
                "I can turn the heating up or down.",
                "What can you do?",
                &none
            ),
            None
        );
        // its identifiers still are, and so is the word "tool"
        for s in ["Use door_lock for that.", "I have a tool for the heating."] {
            assert_eq!(
                c.check(s, "What can you do?", &none),
                Some(Unfounded::ToolTalk),
                "{s}"
            );
        }
        // and a claim about it is a claim
        assert_eq!(
            c.check("The heating is on.", "Is it warm?", &none),
            Some(Unfounded::Claim)
        );
        assert!(
            is_identifier("set_light") && is_identifier("setLight") && !is_identifier("heating")
        );
    }

    #[test]
    fn talk_about_functions_or_tool_names_is_no_answer() {
        for s in [
            "You may call the \"get_time\" function to get the current local time.",
            "Use the set_light tool.",
            "I need more parameters.",
            "Here is the JSON.",
            // a call's arguments written out
            "mount the front door, room: living room",
            "post_lock,",
            "{\"room\": \"kitchen\"}",
        ] {
            assert_eq!(
                check(s, "what time is it"),
                Some(Unfounded::ToolTalk),
                "{s}"
            );
        }
        assert_eq!(
            check("Fun fact: honey never spoils.", "tell me something"),
            None
        );
    }

    #[test]
    fn a_reply_repeated_to_a_different_request_is_flagged_and_to_the_same_one_not() {
        let c = demo();
        let earlier = replied(&[(
            "tell me a joke",
            "Why did the chicken cross the road? To get to the other side.",
        )]);
        let joke = "Why did the chicken cross the road?";
        assert_eq!(
            c.check(joke, "how are you", &earlier),
            Some(Unfounded::Repeat)
        );
        assert_eq!(c.check(joke, "Tell me a joke.", &earlier), None);
        // short polite replies may repeat
        let thanks = replied(&[("thanks", "You're welcome!")]);
        assert_eq!(c.check("You're welcome!", "thank you", &thanks), None);
    }

    #[test]
    fn readings_no_call_returned_are_flagged_and_claims_stay_claims() {
        for (s, request) in [
            (
                "The temperature in the bedroom is 22 degrees Celsius.",
                "What is the temperature in the bedroom?",
            ),
            (
                "The temperature in the office is 10 degrees Celsius.",
                "How warm is it in the office?",
            ),
            (
                "The bathroom is currently cold.",
                "Is it cold in the bathroom right now?",
            ),
            (
                "The current time is 10:00 AM and the temperature in the kitchen is 22 degrees.",
                "What time is it and how warm is it in the kitchen?",
            ),
            ("It's Monday.", "What day is it?"),
            ("Yes, it is.", "Is the garage door locked?"),
        ] {
            assert_eq!(check(s, request), Some(Unfounded::Reading), "{s}");
        }
        // a `say` shape or a device state is a claim first
        assert_eq!(
            check("The thermostat is set to 22 degrees.", "make it 22"),
            Some(Unfounded::Claim)
        );
        // what can be done is an offer, not a reading
        assert_eq!(
            check(
                "You can turn on the kitchen light, set the thermostat to 21.5 degrees, and lock the front door.",
                "What can you do?"
            ),
            None
        );
    }

    #[test]
    fn an_order_about_the_home_is_not_an_answer() {
        for s in [
            "Mark the bathroom light as on.",
            "Turn the living room light off.",
            "Please set the thermostat higher.",
            "Okay, lock the garage door.",
            "Mark the time as today.",
        ] {
            assert_eq!(check(s, "what now"), Some(Unfounded::Order), "{s}");
        }
        for s in [
            "Set a reminder in your calendar.",
            "Make yourself at home!",
            "Open your heart.",
            "I can turn the kitchen light on for you.",
        ] {
            assert_eq!(check(s, "what now"), None, "{s}");
        }
    }

    #[test]
    fn a_tool_with_no_say_is_known_by_its_parameters_too() {
        // the demo home stripped of every `say`: "door" is only a parameter's name
        let mut reg = Registry::load_dir(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tools"),
        )
        .expect("the demo tools load");
        let bare: Vec<_> = reg
            .tools()
            .iter()
            .cloned()
            .map(|mut t| {
                t.say = None;
                t
            })
            .collect();
        reg = Registry::new(bare).expect("the bare tools");
        let check = ReplyCheck::new(&reg);
        let none = Earlier::default();
        assert_eq!(
            check.check("Lock the door.", "unlock the garage door", &none),
            Some(Unfounded::Order)
        );
        assert_eq!(
            check.check("The door is locked.", "unlock the garage door", &none),
            Some(Unfounded::Claim)
        );
    }

    #[test]
    fn a_request_said_back_is_an_echo() {
        for (s, request) in [
            ("Lock the front door.", "lock the front door."),
            ("Turn off the hallway light.", "turn off the hallway light"),
            ("Okay, lock the front door.", "Lock the front door"),
            ("Sure, I will lock the front door.", "lock the front door"),
            (
                "What time is it?",
                "What time is it and how warm is it in the kitchen?",
            ),
            ("Tell me a joke.", "tell me a joke"),
            (
                "The former staff to hunting the breeze.",
                "Since the former staff to hunting the breeze.",
            ),
            // said back to the person: a remark is no reading of the home
            ("You woke up at 7 today.", "I woke up at 7 today."),
            ("You had a long day.", "I had a long day."),
            ("You're tired of waiting.", "I'm tired of waiting."),
            // a piece of the request alone
            (
                "porch light",
                "make the porch light brighter, it's too dark out there.",
            ),
            ("cool mode", "put the acrobian cool mode,"),
            ("Joe.", "help, help me, a Joe."),
        ] {
            assert_eq!(check(s, request), Some(Unfounded::Echo), "{s} / {request}");
        }
        // an earlier request of the session said back, word for word
        let earlier = replied(&[("lock the front door.", "")]);
        assert_eq!(
            demo().check("Lock the front door.", "what's the weather like", &earlier),
            Some(Unfounded::Echo)
        );
        assert_eq!(
            demo().check("Lock the front door.", "lock the front door.", &earlier),
            Some(Unfounded::Echo)
        );
        // greetings said back, and answers that only share words, are not echoes
        for (s, request) in [
            ("Good night!", "good night"),
            ("Hello!", "hello"),
            ("Thank you!", "thank you"),
            ("I'm fine. How are you?", "how are you"),
            ("I love you too!", "I love you"),
            ("Why did the lamp smile? It was lit.", "tell me a joke"),
            ("Yes.", "yes"),
            ("The kitchen is next to the hall.", "where is the kitchen"),
            ("The sun.", "Which is bigger, the sun or the moon?"),
            ("Blue.", "What colour is the sky?"),
            ("Hi.", "say hi"),
        ] {
            assert_eq!(check(s, request), None, "{s} / {request}");
        }
        let thanked = replied(&[("thanks a lot", "You're welcome!")]);
        assert_eq!(demo().check("Thanks a lot!", "bye", &thanked), None);
    }

    #[test]
    fn after_calls_only_what_the_results_carry_may_be_said() {
        let c = demo();
        let earlier = Earlier::default();
        let mut read = Carried::default();
        read.result("thermostat 21 degrees");
        read.said("What is the thermostat at?");
        let after = |s: &str| c.after_calls(s, "What is the thermostat at?", &earlier, &read);
        assert_eq!(after("The thermostat is at 21 degrees."), None);
        assert_eq!(after("It's twenty-one degrees."), None);
        assert_eq!(after("You're welcome!"), None);
        assert_eq!(
            after("The thermostat is at 22 degrees."),
            Some(Unfounded::Reading)
        );
        assert_eq!(after("It's 10:00 AM."), Some(Unfounded::Reading));
        assert_eq!(after("What is the thermostat at?"), Some(Unfounded::Echo));
    }

    #[test]
    fn earlier_holds_every_request_and_the_words_said_to_each() {
        let history = vec![
            ChatMessage::user("turn on the kitchen light"),
            ChatMessage::assistant(
                "<tool_call>\n{\"name\": \"set_light\", \"arguments\": {}}\n</tool_call>",
            ),
            ChatMessage::user("(system: tool results — ok)"),
            ChatMessage::user("tell me a joke"),
            ChatMessage::assistant("Why did the lamp smile? It was lit."),
        ];
        let earlier = Earlier::of(&history);
        assert_eq!(
            earlier.requests,
            ["turn on the kitchen light", "tell me a joke"]
        );
        assert_eq!(
            earlier.replies,
            [(
                "tell me a joke".to_string(),
                "Why did the lamp smile? It was lit.".to_string()
            )]
        );
    }

    #[test]
    fn say_shapes_come_from_the_literal_words() {
        assert_eq!(
            literal_runs("The {{ room }} light is {{ 'on' if on else 'off' }}."),
            vec![vec!["the".to_string()], vec!["light".into(), "is".into()]]
        );
        assert_eq!(
            literal_runs("{% if x %}Yes{% endif %} {{ scene | capitalize }} is on."),
            vec![vec!["yes".to_string()], vec!["is".into(), "on".into()]]
        );
    }

    #[test]
    fn a_request_points_back_only_with_a_word_for_it() {
        for r in [
            "Turn it off again.",
            "And the bedroom too.",
            "Do the same for the back door",
            "the other one",
        ] {
            assert!(refers_back(r), "{r}");
        }
        for r in [
            "Never mind.",
            "That's all for now.",
            "Thanks, that's all.",
            "but the kitchen might at 80%.",
            // words that point at nothing here
            "It's too dark in the hallway.",
            "It is way too cold in here",
            "Is there a timer running?",
            "There are too many lights on",
        ] {
            assert!(!refers_back(r), "{r}");
        }
        for r in [
            "The bedroom too, please.",
            "Is it on?",
            "Make sure it is locked.",
            "Turn it off in there",
            "Me too",
        ] {
            assert!(refers_back(r), "{r}");
        }
    }

    #[test]
    fn words_split_contractions_and_keep_decimals() {
        assert_eq!(words("It's 21.5 degrees."), ["it", "is", "21.5", "degrees"]);
        assert_eq!(words("get_time, now!"), ["get_time", "now"]);
    }

    #[test]
    fn a_forced_call_must_be_about_what_was_said() {
        let c = demo();
        let on = serde_json::json!({"room": "kitchen", "on": true});
        assert!(c.grounded("set_light", &on, "Turn on the kitchen light."));
        assert!(!c.grounded("set_light", &on, "Tell me a joke."));
        assert!(!c.grounded("set_light", &on, "Turn it off again."));
        let lr = serde_json::json!({"room": "living room", "on": false});
        assert!(c.grounded("set_light", &lr, "living room off"));
        let t = serde_json::json!({"temperature": 21.5});
        assert!(c.grounded("set_thermostat", &t, "make it 21.5"));
        assert!(!c.grounded("set_thermostat", &t, "make it warmer"));
        // a number said in words
        let warm = serde_json::json!({"temperature": 23});
        let freezing = "I'm freezing, make it twenty three degrees in here.";
        assert!(c.grounded("set_thermostat", &warm, freezing));
        assert!(c.grounded("set_thermostat", &t, "twenty one point five"));
        // a length of time is not a temperature; a parameter named for time takes it
        let twenty = serde_json::json!({"temperature": 20});
        assert!(!c.grounded("set_thermostat", &twenty, "Saturday, timer for 20 seconds."));
        assert!(!c.grounded("set_thermostat", &twenty, "a timer for twenty seconds"));
        assert!(c.grounded("set_thermostat", &twenty, "20, please"));
        let snooze = serde_json::json!({"minutes": 10});
        assert!(c.grounded("snooze", &snooze, "snooze for 10 minutes"));
        let delay = serde_json::json!({"delay_s": 30});
        assert!(c.grounded("snooze", &delay, "in 30 seconds"));
        let hour = serde_json::json!({"hour": 6});
        assert!(c.grounded("wake", &hour, "wake me at 6 am"));
        assert!(!c.grounded("set_volume", &serde_json::json!({"level": 6}), "at 6 pm"));
        assert!(c.grounded("get_time", &serde_json::json!({}), "what time is it"));
        assert!(!c.grounded("get_time", &serde_json::json!({}), "thank you"));
        // a reading only when asked: a remark that mentions time reads no clock
        let none = serde_json::json!({});
        assert!(c.grounded("get_time", &none, "Tell me the time."));
        assert!(c.grounded("get_time", &none, "Time now?"));
        assert!(!c.grounded("get_time", &none, "Time flies when you're having fun."));
        assert!(!c.grounded("get_time", &none, "long time, no see"));
        assert!(!c.grounded("get_time", &none, "It's about time."));
        assert!(!c.grounded("get_time", &none, "What a time to be alive."));
        assert!(c.grounded("get_time", &none, "what time is it"));
    }
}
