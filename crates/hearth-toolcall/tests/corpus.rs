//! Every corpus case, under every mode it names: the calls, reply, reasoning and rejections
//! match what the case expects.

mod common;

use std::collections::BTreeMap;

use hearth_toolcall::registry;
use serde_json::Value;

fn check(case: &common::Case, mode: &str) -> Result<(), String> {
    let out = case.parser(mode).parse(&case.raw, &case.tools);
    let e = &case.expect;
    let want_calls = e
        .get("calls")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let got: Vec<Value> = out
        .calls
        .iter()
        .map(|c| serde_json::json!({"id": c.id(), "name": c.name(), "arguments": c.arguments()}))
        .collect();
    let calls_ok = want_calls.len() == got.len()
        && want_calls.iter().zip(&got).all(|(w, g)| {
            w.get("name") == g.get("name")
                && w.get("arguments").unwrap_or(&serde_json::json!({}))
                    == g.get("arguments").unwrap()
                && w.get("id").is_none_or(|id| Some(id) == g.get("id"))
        });
    let mut problems = Vec::new();
    if !calls_ok {
        problems.push(format!(
            "calls: want {}, got {} (rejected: {:?})",
            Value::Array(want_calls),
            Value::Array(got),
            out.rejected
        ));
    }
    if let Some(r) = e.get("reply") {
        if r.as_str() != Some(out.reply.as_str()) {
            problems.push(format!("reply: want {r}, got {:?}", out.reply));
        }
    }
    if let Some(r) = e.get("reasoning") {
        let got = out
            .reasoning
            .clone()
            .map(Value::String)
            .unwrap_or(Value::Null);
        if *r != got {
            problems.push(format!("reasoning: want {r}, got {got}"));
        }
    }
    if let Some(Value::Array(want)) = e.get("rejected") {
        let got: Vec<String> = out
            .rejected
            .iter()
            .map(|r| format!("{}: {}", r.name.as_deref().unwrap_or("?"), r.reason))
            .collect();
        for w in want {
            let w = w.as_str().unwrap_or("");
            if !got.iter().any(|g| g.contains(w)) {
                problems.push(format!(
                    "rejected: want an entry containing {w:?}, got {got:?}"
                ));
            }
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n    "))
    }
}

#[test]
fn corpus_cases_parse_as_expected() {
    let cases = common::load();
    assert!(!cases.is_empty(), "no corpus cases found");
    let mut failures = Vec::new();
    for case in &cases {
        for mode in &case.modes {
            if let Err(p) = check(case, mode) {
                failures.push(format!("{} mode={mode}\n    {p}", case.label()));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} corpus cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

#[test]
fn every_format_has_cases_and_negatives() {
    let cases = common::load();
    let mut per_file: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for c in &cases {
        let e = per_file.entry(c.file.clone()).or_default();
        e.0 += 1;
        let no_calls = c
            .expect
            .get("calls")
            .and_then(Value::as_array)
            .is_none_or(|a| a.is_empty());
        if no_calls {
            e.1 += 1;
        }
    }
    let names = registry().names();
    let mut problems = Vec::new();
    for f in per_file.keys() {
        if !names.contains(f) {
            problems.push(format!(
                "tests/corpus/{f}.jsonl names no registered detector"
            ));
        }
    }
    for n in &names {
        match per_file.get(n) {
            None => problems.push(format!("{n}: no corpus file")),
            Some((total, neg)) => {
                if *total < 8 {
                    problems.push(format!("{n}: only {total} cases (need 8)"));
                }
                if *neg < 3 {
                    problems.push(format!("{n}: only {neg} negative cases (need 3)"));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
