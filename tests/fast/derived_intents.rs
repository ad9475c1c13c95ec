//! The intents hearth derives from tools that carry no sentences (`crates/hearth-core/src/intent/derive.rs`),
//! measured on the session sets with no model at all: how many requests they answer, and
//! that every call they make is the one the request asked for. A derived intent that makes
//! a wrong call is the worst thing it could do (a door unlocked that should be locked), so
//! the count of wrong calls must be 0; what they do not answer goes to the model.

use std::path::Path;

use hearth::intent::{Before, IntentCall};
use hearth::tools::Registry;
use hearth_testkit::session;
use serde_json::Value;
use session::claims::Call;
use session::set::{Case, Kind};

/// The requests a set's derived intents answered, and how many of those were wrong.
#[derive(Debug, Default)]
struct Coverage {
    cases: usize,
    /// Requests an intent answered with calls (or, for `none`, rightly left to the model).
    answered: usize,
    /// Answered with calls other than those expected: must be 0.
    wrong: Vec<String>,
}

/// `tools` without their sentences and `say` (a household's tools as written), or as they are.
fn registry(tools: &Path, bare: bool) -> Registry {
    let loaded = Registry::load_dir(tools).expect("the tools load");
    let mut list: Vec<hearth::tools::Tool> = loaded.tools().to_vec();
    if bare {
        for t in list
            .iter_mut()
            .filter(|t| t.spec.name != "get_time" && t.spec.name != "get_date")
        {
            t.intents = None;
            t.say = None;
        }
    }
    Registry::new(list).expect("the same tools form a registry")
}

fn coverage(set: &str, registry: &Registry) -> Coverage {
    let cases = session::set::load(&session::set::set_path(set)).expect("the set loads");
    let intents = registry.intents();
    let mut before = Before::default();
    // a yes answers the agent's question (not an intent), and the request it answers asks
    // for its call too (which the agent holds for that yes)
    let mut c = Coverage {
        cases: cases.iter().filter(|c| c.kind != Kind::Confirm).count(),
        ..Coverage::default()
    };
    let mut asked: Vec<Case> = Vec::new();
    for (i, case) in cases.iter().enumerate() {
        if case.kind == Kind::Confirm {
            continue;
        }
        let mut case = case.clone();
        if case.kind == Kind::Asks {
            if let Some(yes) = cases.get(i + 1).filter(|n| n.kind == Kind::Confirm) {
                case.expect.extend(yes.expect.iter().cloned());
            }
        }
        asked.push(case);
    }
    for case in &asked {
        let found = intents
            .recognize(&case.say)
            .or_else(|| intents.follow_up(&case.say, &before));
        match &found {
            Some(calls) if right(case, calls) => c.answered += 1,
            Some(calls) => c.wrong.push(format!("{:?} → {calls:?}", case.say)),
            None if case.kind == Kind::None => c.answered += 1,
            None => eprintln!("  not answered: {:?}", case.say),
        }
        // the session goes on as if each request had been answered right
        before.record(found.unwrap_or_else(|| expected(case)));
    }
    c
}

fn right(case: &Case, calls: &[IntentCall]) -> bool {
    let ran: Vec<Call> = calls
        .iter()
        .map(|c| Call {
            name: c.tool.clone(),
            arguments: c.arguments.clone(),
            status: "ok".into(),
            result: String::new(),
        })
        .collect();
    let refs: Vec<&Call> = ran.iter().collect();
    session::score::fulfils(&case.expect, &refs)
}

/// A case's expected calls as calls (a range as its lower bound).
fn expected(case: &Case) -> Vec<IntentCall> {
    case.expect
        .iter()
        .map(|e| IntentCall {
            tool: e.name.clone(),
            arguments: Value::Object(
                e.arguments
                    .iter()
                    .map(|(k, v)| (k.clone(), v.get("min").cloned().unwrap_or(v.clone())))
                    .collect(),
            ),
        })
        .collect()
}

fn checkout(p: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(p)
}

#[test]
fn derived_intents_answer_the_demo_evening_on_bare_tools_and_never_wrongly() {
    let c = coverage("demo", &registry(&checkout("tools"), true));
    eprintln!(
        "demo, bare tools: {} of {} answered by derived intents",
        c.answered, c.cases
    );
    assert_eq!(c.wrong, Vec::<String>::new(), "wrong calls");
    assert!(c.answered >= 44, "{} of {} answered", c.answered, c.cases);
}

#[test]
fn derived_intents_answer_a_households_own_tools_and_never_wrongly() {
    let c = coverage(
        "household",
        &registry(&checkout("tests/session/household"), false),
    );
    eprintln!(
        "household: {} of {} answered by derived intents",
        c.answered, c.cases
    );
    assert_eq!(c.wrong, Vec::<String>::new(), "wrong calls");
    assert!(c.answered >= 34, "{} of {} answered", c.answered, c.cases);
}

#[test]
fn hand_written_sentences_add_to_the_derived_ones() {
    let bare = coverage("demo", &registry(&checkout("tools"), true));
    let declared = coverage("demo", &registry(&checkout("tools"), false));
    eprintln!(
        "demo: bare {} of {}, declared {} of {}",
        bare.answered, bare.cases, declared.answered, declared.cases
    );
    assert_eq!(declared.wrong, Vec::<String>::new(), "wrong calls");
    assert!(declared.answered >= bare.answered);
}

#[test]
fn derived_intents_on_requests_they_were_not_fitted_to_are_never_wrong() {
    let c = coverage(
        "household-unseen",
        &registry(&checkout("tests/session/household"), false),
    );
    eprintln!(
        "household, unseen requests: {} of {} answered by derived intents",
        c.answered, c.cases
    );
    assert_eq!(c.wrong, Vec::<String>::new(), "wrong calls");
}

/// "it" in the second part of a request is what the first part named, on a household's own
/// tools with no sentences: both calls run.
#[test]
fn a_second_part_with_it_is_about_the_first_parts_device() {
    let registry = registry(&checkout("tests/session/household"), false);
    let calls = registry
        .intents()
        .recognize("Turn on the bedroom light and set it to forty percent.")
        .unwrap_or_default();
    let made: Vec<(String, serde_json::Value)> =
        calls.into_iter().map(|c| (c.tool, c.arguments)).collect();
    assert_eq!(
        made,
        [
            (
                "switch_light".to_string(),
                serde_json::json!({"room": "bedroom", "power": true})
            ),
            (
                "dim_light".to_string(),
                serde_json::json!({"room": "bedroom", "brightness": 40})
            ),
        ]
    );
}

#[test]
fn every_shipped_tools_derived_sentences_compile() {
    let mut files = Vec::new();
    for dir in ["tools", "tools/examples", "tests/session/household"] {
        for entry in std::fs::read_dir(checkout(dir)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "toml") {
                files.push(path);
            }
        }
    }
    let mut shaped = 0;
    for path in &files {
        let manifest = std::fs::read_to_string(path).unwrap();
        for t in hearth::tools::parse_manifest(&manifest, path).unwrap() {
            let spec = &t.spec;
            let Some(shape) =
                hearth::intent::Shape::of(&spec.name, &spec.description, &spec.parameters)
            else {
                continue;
            };
            shaped += 1;
            if let Err(e) =
                hearth::intent::ToolIntents::compile(&spec.name, &shape.intents(), &spec.parameters)
            {
                panic!("{}: {}: {e}", path.display(), spec.name);
            }
        }
    }
    assert!(shaped >= 15, "{shaped} shipped tools have a shape");
}

/// The daily-use set typed, with the timer, alarm, reminder and control tools a daemon
/// offers (and "what did you just do?", which is no intent and calls nothing): every
/// request but the remarks about time is a local intent making exactly the call asked for
/// (100 % typed), and the remarks make none.
#[test]
fn every_daily_use_request_typed_is_its_local_intent() {
    let mut tools = hearth::tools::Tool::builtins();
    tools.extend(hearth::tools::Tool::timers());
    tools.extend(hearth::tools::Tool::controls());
    let c = coverage("daily", &Registry::new(tools).expect("the built-ins"));
    eprintln!(
        "daily: {} of {} answered by local intents",
        c.answered, c.cases
    );
    assert_eq!(c.wrong, Vec::<String>::new(), "wrong calls");
    assert_eq!(c.answered, c.cases);
}
