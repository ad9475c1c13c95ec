// Scoring: turns read from hearth's JSON, aligned to the cases, each case judged.

use serde::Serialize;
use serde_json::Value;

use super::claims::{fabricated_readings, false_claim, Call};
use super::set::{Case, Expect, Kind};
use super::text::{duplicated, echoed, misheard};

/// One turn as hearth reported it (a `hearth run --json` line, or a `Turn` with what was
/// typed as `heard`).
#[derive(Debug, Clone, Serialize)]
pub struct Observed {
    pub heard: String,
    pub reply: String,
    /// Every call of every hop, whatever its status.
    pub calls: Vec<Call>,
    /// End of speech → first audible reply sample (voice turns).
    pub first_voice_ms: Option<f64>,
    /// The endpoint (end of speech plus the endpointer's hangover) → first audible reply
    /// sample: what hearth itself takes once it knows the request is over (voice turns).
    pub after_endpoint_ms: Option<f64>,
    /// The agent's whole turn (request → reply decided).
    pub total_ms: Option<f64>,
    /// Each stage of a voice turn (`timings_ms`: endpoint, STT, first token, tool done, first
    /// TTS chunk, first audio, first voice), ms from the end of speech, in hearth's order.
    pub stages: Vec<(String, f64)>,
    /// How the turn was handled (`turn.path`, e.g. "intent" or "llm"), when hearth says.
    pub path: Option<String>,
    /// The utterance on the input clock (voice turns).
    pub start_s: Option<f64>,
    pub end_s: Option<f64>,
    pub interrupted: bool,
    pub error: Option<String>,
    /// The recogniser's phrase pass (`phrase_pass` of a voice turn), when it ran.
    pub phrase_pass: Option<Value>,
    /// The question the turn ended with, holding calls for a yes ("Shall I turn on the
    /// kitchen light?", "Unlock the front door?"), if it did.
    pub asked: Option<String>,
    /// The household's answer to a question hearth asked (the case's `answer`), not part of
    /// the request: said after it, whether or not hearth asked.
    pub answer: bool,
}

impl Observed {
    /// From a `VoiceTurn` as `hearth run --json` prints it.
    pub fn from_voice(v: &Value) -> Observed {
        let mut o = Observed::from_turn(v["heard"].as_str().unwrap_or(""), &v["turn"]);
        o.first_voice_ms = v["timings_ms"]["first_voice"].as_f64();
        o.stages = v["timings_ms"]
            .as_object()
            .map(|m| {
                m.iter()
                    .filter_map(|(k, t)| Some((k.clone(), t.as_f64()?)))
                    .collect()
            })
            .unwrap_or_default();
        o.after_endpoint_ms = o
            .first_voice_ms
            .zip(v["timings_ms"]["endpoint"].as_f64())
            .map(|(voice, endpoint)| voice - endpoint);
        o.start_s = v["start_s"].as_f64();
        o.end_s = v["end_s"].as_f64();
        o.interrupted = v["interrupted"].as_bool().unwrap_or(false);
        o.error = v["error"].as_str().map(str::to_string);
        o.path = o.path.or_else(|| v["path"].as_str().map(str::to_string));
        o.phrase_pass = v.get("phrase_pass").filter(|p| !p.is_null()).cloned();
        o
    }

    /// From an agent `Turn` (`hearth ask --json`, or the library's) for the text `heard`.
    pub fn from_turn(heard: &str, turn: &Value) -> Observed {
        Observed {
            heard: heard.to_string(),
            reply: turn["reply"].as_str().unwrap_or("").to_string(),
            calls: calls_of(turn),
            first_voice_ms: None,
            after_endpoint_ms: None,
            total_ms: turn["timings_ms"]["total"].as_f64(),
            stages: Vec::new(),
            path: turn["path"].as_str().map(str::to_string),
            start_s: None,
            end_s: None,
            interrupted: false,
            error: None,
            phrase_pass: None,
            asked: asked_of(turn),
            answer: false,
        }
    }

    /// The phrase pass's search, when it ran (the open transcript was not in the set).
    pub fn phrase_search(&self) -> Option<Search> {
        let p = self.phrase_pass.as_ref()?;
        if p["steps"].as_u64().unwrap_or(0) == 0 {
            return None;
        }
        Some(Search {
            open: p["open"].as_str().unwrap_or("").to_string(),
            phrase: p["phrase"].as_str().map(str::to_string),
            below: p["phrase_logprob"]
                .as_f64()
                .zip(p["open_logprob"].as_f64())
                .map(|(ph, op)| op - ph),
            way_contrast: p["way_contrast"].as_f64(),
            taken: p["taken"].as_bool().unwrap_or(false),
        })
    }
}

/// One phrase pass's search, as the recogniser reported it.
#[derive(Debug, Clone, PartialEq)]
pub struct Search {
    /// What whisper wrote.
    pub open: String,
    /// The set's likeliest request, if one was found within the margin.
    pub phrase: Option<String>,
    /// How far below the open transcript it was (nats; negative: likelier).
    pub below: Option<f64>,
    /// When it chose a way whisper did not write: how much likelier than the other ways.
    pub way_contrast: Option<f64>,
    /// Whether it became the transcript.
    pub taken: bool,
}

/// The question a `Turn` ended with when a hop held its calls for a yes or a choice ("Which
/// room: …?"; its hook says so).
fn asked_of(turn: &Value) -> Option<String> {
    let hops = turn["hops"].as_array()?;
    let waits = hops.iter().any(|h| {
        h["hook"].as_str().is_some_and(|k| {
            k.starts_with("waiting for a yes") || k.starts_with("waiting for a choice")
        })
    });
    waits.then(|| turn["reply"].as_str().unwrap_or("").to_string())
}

/// How a case went where hearth asked before running ([`Scored::asked`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Asked {
    /// No question, or the one the case expects (an `asks` case: a tool's `confirm`).
    No,
    /// A question, and after the yes the right calls ran.
    ThenRight,
    /// A question, and the calls after the yes (or none, unanswered) were not the right ones.
    ThenWrong,
}

/// Every call of every hop of a `Turn`.
pub fn calls_of(turn: &Value) -> Vec<Call> {
    let hops = turn["hops"].as_array().map(Vec::as_slice).unwrap_or(&[]);
    hops.iter()
        .flat_map(|h| h["calls"].as_array().map(Vec::as_slice).unwrap_or(&[]))
        .map(|c| Call {
            name: c["name"].as_str().unwrap_or("").to_string(),
            arguments: c["arguments"].clone(),
            status: c["status"].as_str().unwrap_or("").to_string(),
            result: c["result"].as_str().unwrap_or("").to_string(),
        })
        .collect()
}

/// For each case's speech `[start, end]` on the input clock, the turns heard in it: each turn
/// goes to the case its utterance overlaps most, or, overlapping none, whose speech is
/// nearest. Turns without a position go nowhere.
pub fn align(windows: &[(f64, f64)], turns: &[Observed]) -> Vec<Vec<usize>> {
    let mut out = vec![Vec::new(); windows.len()];
    for (t, turn) in turns.iter().enumerate() {
        let (Some(s), Some(e)) = (turn.start_s, turn.end_s) else {
            continue;
        };
        let overlap = |&(ws, we): &(f64, f64)| (e.min(we) - s.max(ws)).max(0.0);
        let distance = |&(ws, we): &(f64, f64)| (ws - e).max(s - we).max(0.0);
        let best = windows
            .iter()
            .enumerate()
            .max_by(|a, b| {
                overlap(a.1)
                    .total_cmp(&overlap(b.1))
                    .then(distance(b.1).total_cmp(&distance(a.1)))
            })
            .map(|(i, _)| i);
        if let Some(i) = best {
            out[i].push(t);
        }
    }
    out
}

/// Marks the turns heard within `answers` (where the household's answers lie on the input
/// clock) as [`Observed::answer`].
pub fn mark_answers(observed: &mut [Observed], answers: &[(f64, f64)]) {
    for t in observed {
        let (Some(s), Some(e)) = (t.start_s, t.end_s) else {
            continue;
        };
        t.answer = answers.iter().any(|&(a, b)| s < b && a < e);
    }
}

/// Scores each case on the turns [`align`]ed to its window. Turns without a position (a
/// `hearth` older than `start_s`/`end_s`) are taken in order instead, with a warning.
pub fn score_all(cases: &[Case], windows: &[(f64, f64)], observed: Vec<Observed>) -> Vec<Scored> {
    let groups = if !observed.is_empty() && observed.iter().all(|t| t.start_s.is_none()) {
        eprintln!("session: this hearth reports no start_s/end_s: turns matched in order");
        (0..cases.len())
            .map(|i| if i < observed.len() { vec![i] } else { vec![] })
            .collect()
    } else {
        align(windows, &observed)
    };
    cases
        .iter()
        .zip(groups)
        .map(|(c, g)| score(c, g.into_iter().map(|i| observed[i].clone()).collect()))
        .collect()
}

/// How a case went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The calls that ran are exactly the expected ones.
    Right,
    /// A turn was heard but its calls are not the expected ones.
    Wrong,
    /// No turn was heard for it.
    Missed,
}

/// One case, judged.
#[derive(Debug, Clone, Serialize)]
pub struct Scored {
    pub line: usize,
    pub kind: Kind,
    pub say: String,
    /// The turns scored against it (their calls unioned).
    pub turns: Vec<Observed>,
    pub verdict: Verdict,
    /// The calls that ran (`name(arguments)`), identical ones once.
    pub ran: Vec<String>,
    /// Calls that were made but failed.
    pub failed: Vec<String>,
    /// Why a reply is a false claim ([`false_claim`]), if one is.
    pub false_claim: Option<String>,
    /// Each reply sentence that states a reading no call of its turn read or set
    /// ([`fabricated_readings`]), with why.
    pub fabricated: Vec<String>,
    /// The calls that ran (identical ones once) that the request did not ask for
    /// ([`unasked`]): a wrong argument, an extra call, any call on a `none` request.
    pub unasked: Vec<String>,
    /// A reply that is the request said back ([`echoed`]: what was typed or heard, or `say`),
    /// unless the request is small talk ([`hearth::agent::small_talk`]).
    pub echoed: bool,
    /// A `none` case that made calls (any status).
    pub calls_on_none: bool,
    /// The transcript holds the request twice ([`duplicated`]).
    pub duplicated: bool,
    /// The transcript is not the request ([`misheard`]); a duplicate is not also misheard.
    pub misheard: bool,
    /// Whether hearth asked back before running this request's calls, and how it ended.
    pub asked: Asked,
    /// The request wanted calls, none ran and nothing was asked: hearth refused.
    pub refused: bool,
}

impl Scored {
    pub fn heard(&self) -> String {
        join(self.turns.iter().map(|t| t.heard.as_str()))
    }

    /// The request was heard as more than one turn (the household's answer aside).
    pub fn split(&self) -> bool {
        self.turns.iter().filter(|t| !t.answer).count() > 1
    }

    pub fn reply(&self) -> String {
        join(self.turns.iter().map(|t| t.reply.as_str()))
    }
}

fn join<'a>(parts: impl Iterator<Item = &'a str>) -> String {
    parts.collect::<Vec<_>>().join(" / ")
}

/// Judges one case on the turns aligned to it.
pub fn score(case: &Case, turns: Vec<Observed>) -> Scored {
    let calls: Vec<Call> = turns.iter().flat_map(|t| t.calls.clone()).collect();
    let ran = distinct(calls.iter().filter(|c| c.ran()));
    let verdict = if turns.is_empty() {
        Verdict::Missed
    } else if fulfils(&case.expect, &ran) {
        Verdict::Right
    } else {
        Verdict::Wrong
    };
    // the answer to a question hearth asked back is not part of what was heard for the
    // request; its calls are the request's (and when nothing was asked, calls it should not
    // have made)
    let request_turns: Vec<&Observed> = turns.iter().filter(|t| !t.answer).collect();
    let asked_back =
        case.kind != Kind::Asks && request_turns.first().is_some_and(|t| t.asked.is_some());
    let heard = join(request_turns.iter().map(|t| t.heard.as_str()));
    let duplicated = request_turns
        .iter()
        .any(|t| duplicated(&t.heard, &case.say));
    let asked = match (asked_back, verdict) {
        (false, _) => Asked::No,
        (true, Verdict::Right) => Asked::ThenRight,
        (true, _) => Asked::ThenWrong,
    };
    let refused = !case.expect.is_empty() && !turns.is_empty() && ran.is_empty() && !asked_back;
    Scored {
        line: case.line,
        kind: case.kind,
        say: case.say.clone(),
        verdict,
        ran: ran.iter().map(|c| show_call(c)).collect(),
        failed: calls.iter().filter(|c| !c.ran()).map(show_call).collect(),
        false_claim: turns.iter().find_map(|t| false_claim(&t.reply, &t.calls)),
        fabricated: turns
            .iter()
            .flat_map(|t| fabricated_readings(&t.reply, &t.calls))
            .collect(),
        unasked: unasked(&case.expect, &ran)
            .into_iter()
            .map(show_call)
            .collect(),
        // a greeting answered in kind ("Good night!") is a reply, not the request said back
        echoed: !hearth::agent::small_talk(&case.say)
            && turns
                .iter()
                .any(|t| echoed(&t.reply, &t.heard) || echoed(&t.reply, &case.say)),
        calls_on_none: case.kind == Kind::None && !calls.is_empty(),
        duplicated,
        misheard: !turns.is_empty() && !duplicated && misheard(&heard, &case.say),
        asked,
        refused,
        turns,
    }
}

/// `name(arguments)` for the tables.
pub fn show_call(c: &Call) -> String {
    let args = match &c.arguments {
        Value::Object(m) if m.is_empty() => String::new(),
        a => a.to_string(),
    };
    format!("{}({args})", c.name)
}

/// The calls with identical ones (same name and arguments) kept once.
fn distinct<'a>(calls: impl Iterator<Item = &'a Call>) -> Vec<&'a Call> {
    let mut out: Vec<&Call> = Vec::new();
    for c in calls {
        if !out
            .iter()
            .any(|o| o.name == c.name && same_value(&o.arguments, &c.arguments))
        {
            out.push(c);
        }
    }
    out
}

/// Whether the calls that ran are exactly the expected ones, in any order: as many, and each
/// expectation met by a different call.
pub fn fulfils(expect: &[Expect], ran: &[&Call]) -> bool {
    expect.len() == ran.len() && assign(expect, ran, &mut vec![false; ran.len()])
}

/// The calls that ran (identical ones once) left over when as many as can be are each given an
/// expectation they meet, a different one each (a maximum matching): the calls the request did
/// not ask for. A wrong argument (`set_light(living room, on)` for "turn off ... the living
/// room"), a second value (`set_thermostat(10)` after `set_thermostat(22.5)`), an extra call.
/// Of calls that could fill the same expectation, the later ones are left over.
pub fn unasked<'a>(expect: &[Expect], ran: &[&'a Call]) -> Vec<&'a Call> {
    let mut owner: Vec<Option<usize>> = vec![None; expect.len()];
    let matched: Vec<bool> = (0..ran.len())
        .map(|c| augment(c, expect, ran, &mut owner, &mut vec![false; expect.len()]))
        .collect();
    ran.iter()
        .zip(matched)
        .filter(|(_, m)| !m)
        .map(|(c, _)| *c)
        .collect()
}

/// Kuhn's augmenting path: gives call `c` an expectation it meets, moving the call that held
/// one to another if it can; `owner[e]` is the call expectation `e` went to.
fn augment(
    c: usize,
    expect: &[Expect],
    ran: &[&Call],
    owner: &mut [Option<usize>],
    seen: &mut [bool],
) -> bool {
    for e in 0..expect.len() {
        if seen[e] || !meets(&expect[e], ran[c]) {
            continue;
        }
        seen[e] = true;
        let held = owner[e];
        if held.is_none_or(|o| augment(o, expect, ran, owner, seen)) {
            owner[e] = Some(c);
            return true;
        }
    }
    false
}

/// Backtracking: each expectation in turn takes an unused call that meets it.
fn assign(expect: &[Expect], ran: &[&Call], used: &mut Vec<bool>) -> bool {
    let Some((first, rest)) = expect.split_first() else {
        return true;
    };
    for i in 0..ran.len() {
        if !used[i] && meets(first, ran[i]) {
            used[i] = true;
            if assign(rest, ran, used) {
                return true;
            }
            used[i] = false;
        }
    }
    false
}

/// Whether a call meets an expectation: same tool, the same argument names, each value equal
/// (numbers by value: 21 == 21.0), inside an expected `{"min", "max"}` range, or one of an
/// expected `{"one_of": [...]}` (the spellings of a free text that mean the same, in any
/// letter case: "call mum", "call mom", "call Mum").
pub fn meets(e: &Expect, c: &Call) -> bool {
    let Some(args) = c.arguments.as_object() else {
        return false;
    };
    e.name == c.name
        && args.len() == e.arguments.len()
        && e.arguments
            .iter()
            .all(|(k, want)| args.get(k).is_some_and(|got| value_meets(want, got)))
}

fn value_meets(want: &Value, got: &Value) -> bool {
    if let Some(any) = one_of(want) {
        return any.iter().any(|w| match (w.as_str(), got.as_str()) {
            (Some(w), Some(got)) => w.to_lowercase() == got.to_lowercase(),
            _ => same_value(w, got),
        });
    }
    match range(want) {
        Some((lo, hi)) => got.as_f64().is_some_and(|v| v >= lo && v <= hi),
        None => same_value(want, got),
    }
}

/// `{"one_of": [a, b]}` as the values it allows.
fn one_of(v: &Value) -> Option<&Vec<Value>> {
    let m = v.as_object()?;
    match (m.len(), m.get("one_of")) {
        (1, Some(Value::Array(any))) => Some(any),
        _ => None,
    }
}

/// `{"min": a, "max": b}` (either may be missing) as bounds.
fn range(v: &Value) -> Option<(f64, f64)> {
    let m = v.as_object()?;
    if m.is_empty() || m.keys().any(|k| k != "min" && k != "max") {
        return None;
    }
    let bound = |k: &str, default: f64| m.get(k).map_or(Some(default), Value::as_f64);
    Some((
        bound("min", f64::NEG_INFINITY)?,
        bound("max", f64::INFINITY)?,
    ))
}

/// JSON equality with numbers compared by value.
fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same_value(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_value(v, w)))
        }
        _ => a == b,
    }
}
