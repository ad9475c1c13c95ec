//! A big house found: `cargo bench --bench house [-- --entities N] [--areas N] [--rounds N]`.
//!
//! Home Assistant's answers for a house of N exposed entities (default 300) in M areas
//! (default 20) are made from a real Home Assistant's (the corpus of
//! `crates/hearth-house/tests/corpus/homeassistant/`): its lights, switches, covers, locks,
//! climate, fans, media players and sensors copied under new names ("kitchen lamp 2") and
//! areas, each with an alias. Then, as `hearth run` does it when the house is read and each
//! time it changes (an alias added):
//! - the answers read into things (`hearth_house::homeassistant::things`);
//! - the tools made and the registry built with their intents (`hearth::house::tools`,
//!   `Registry::with_house`): what a change costs before a new name is sayable;
//! - the phrase set made and written as the recogniser's grammar (`hearth::phrases::house_phrases`).
//!
//! Prints each step's median over `--rounds` (default 5) and the process's RSS before and
//! after, with the grammar's size, and checks that requests by a name, an alias and an area of
//! the big house are understood. Pure Rust: needs no model and no Home Assistant.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use hearth::tools::{Backends, Registry};
use hearth_house::homeassistant::{things, Answers};
use hearth_testkit::bench;
use serde_json::{json, Value};

const USAGE: &str = "usage: cargo bench --bench house [-- --entities N] [--areas N] [--rounds N]";

struct Options {
    entities: usize,
    areas: usize,
    rounds: usize,
}

fn parse_args(args: &[String]) -> Result<Options, String> {
    let mut o = Options {
        entities: 300,
        areas: 20,
        rounds: 5,
    };
    let mut f = bench::Flags::new(args);
    while let Some(a) = f.next_flag() {
        match a {
            "--entities" => o.entities = f.number(a)? as usize,
            "--areas" => o.areas = (f.number(a)? as usize).max(1),
            "--rounds" => o.rounds = (f.number(a)? as usize).max(1),
            _ => return Err(format!("unknown argument {a:?}")),
        }
    }
    Ok(o)
}

fn main() -> ExitCode {
    bench::main_of("house", USAGE, parse_args, run)
}

const AREAS: &[&str] = &[
    "kitchen",
    "living room",
    "bedroom",
    "office",
    "hallway",
    "garage",
    "bathroom",
    "dining room",
    "nursery",
    "guest room",
    "attic",
    "basement",
    "laundry",
    "porch",
    "garden",
    "study",
    "den",
    "playroom",
    "pantry",
    "landing",
];

/// The real corpus's answers.
fn corpus() -> Result<Value, String> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/crates/hearth-house/tests/corpus/homeassistant/demo-2024.3.3.json"
    );
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    serde_json::from_str(&text).map_err(|e| format!("{path}: {e}"))
}

/// Answers for a house of `n` exposed entities in `areas` areas, each a copy of one of the
/// corpus's exposed entities (its state and attributes) under a new id, name, alias and area.
fn big_house(corpus: &Value, n: usize, areas: usize) -> Answers {
    let states = corpus["get_states"].as_array().cloned().unwrap_or_default();
    let exposed = &corpus["homeassistant/expose_entity/list"]["exposed_entities"];
    let models: Vec<&Value> = states
        .iter()
        .filter(|s| {
            let id = s["entity_id"].as_str().unwrap_or_default();
            exposed[id]["conversation"] == json!(true)
                && !id.starts_with("humidifier.")
                && !id.starts_with("water_heater.")
        })
        .collect();
    let areas: Vec<String> = (0..areas)
        .map(|i| match AREAS.get(i) {
            Some(a) => a.to_string(),
            None => format!("room {i}"),
        })
        .collect();
    let mut out_states = Vec::new();
    let mut entries = serde_json::Map::new();
    let mut exposed_out = serde_json::Map::new();
    for i in 0..n {
        let model = models[i % models.len()];
        let id = model["entity_id"].as_str().unwrap_or_default();
        let (domain, object) = id.split_once('.').unwrap_or(("light", "x"));
        let area = &areas[i % areas.len()];
        let object_name = object.replace('_', " ");
        let name = format!("{area} {object_name} {}", i / models.len() + 1);
        let entity_id = format!("{domain}.{}_{}", object, i);
        let mut state = model.clone();
        state["entity_id"] = json!(entity_id);
        state["attributes"]["friendly_name"] = json!(name);
        out_states.push(state);
        entries.insert(
            entity_id.clone(),
            json!({"entity_id": entity_id, "area_id": area.replace(' ', "_"), "device_id": null,
                   "disabled_by": null, "aliases": [format!("{object_name} number {i}")]}),
        );
        exposed_out.insert(entity_id, json!({"conversation": true}));
    }
    let area_list: Vec<Value> = areas
        .iter()
        .map(
            |a| json!({"area_id": a.replace(' ', "_"), "name": a, "aliases": [format!("the {a}")]}),
        )
        .collect();
    Answers {
        states: Value::Array(out_states),
        entities: Value::Object(entries),
        devices: json!([]),
        areas: Value::Array(area_list),
        exposed: json!({ "exposed_entities": exposed_out }),
    }
}

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse().ok()))
        })
        .unwrap_or(0)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn run(opts: &Options) -> Result<(), String> {
    let corpus = corpus()?;
    let base = Registry::builtins_with(Arc::new(Backends::none())).map_err(|e| e.to_string())?;
    let rss_before = rss_kib();
    let mut answers = big_house(&corpus, opts.entities, opts.areas);
    let (mut read, mut made, mut phrases) = (Vec::new(), Vec::new(), Vec::new());
    let mut kept = None;
    let mut grammar_bytes = 0;
    for round in 0..opts.rounds {
        if round > 0 {
            // a change: an alias added to the first entity
            if let Some((_, entry)) = answers
                .entities
                .as_object_mut()
                .and_then(|m| m.iter_mut().next())
            {
                if let Some(aliases) = entry["aliases"].as_array_mut() {
                    aliases.push(json!(format!("alias of round {round}")));
                }
            }
        }
        let t = Instant::now();
        let found = things(&answers).map_err(|e| e.to_string())?;
        read.push(t.elapsed().as_secs_f64() * 1e3);
        let t = Instant::now();
        let tools = hearth::house::tools(&found.things);
        let (registry, offered) = base.with_house(tools).map_err(|e| e.to_string())?;
        made.push(t.elapsed().as_secs_f64() * 1e3);
        let t = Instant::now();
        let grammar = serde_json::to_vec(&hearth::phrases::house_phrases(&registry, &[]).grammar())
            .map_err(|e| e.to_string())?;
        phrases.push(t.elapsed().as_secs_f64() * 1e3);
        grammar_bytes = grammar.len();
        if round == 0 {
            eprintln!(
                "house: {} things in {} areas, {offered} tools, {} left out",
                found.things.len(),
                found.areas.len(),
                found.left.len()
            );
        }
        kept = Some((registry, found));
    }
    let rss_after = rss_kib();
    let (registry, found) = kept.ok_or("no round ran")?;
    // the big house is sayable: a name, an alias, an area
    let first_light = found
        .things
        .iter()
        .find(|t| t.kind == hearth_house::Kind::Light)
        .ok_or("no light")?;
    let requests = [
        format!("turn on the {}", first_light.name),
        format!("turn off the {}", first_light.aliases[0]),
        format!("turn off the lights in the {}", AREAS[1]),
    ];
    let mut understood = 0;
    for r in &requests {
        let calls = registry.intents().recognize(r);
        println!("{r:?} → {calls:?}");
        understood += usize::from(calls.is_some());
    }
    println!();
    println!(
        "| entities | areas | read (ms) | tools + intents (ms) | phrase set + grammar (ms) | grammar (KB) | RSS before → after (MiB) | understood |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---|---:|");
    println!(
        "| {} | {} | {:.1} | {:.0} | {:.0} | {} | {:.0} → {:.0} | {understood}/{} |",
        opts.entities,
        opts.areas,
        median(read),
        median(made),
        median(phrases),
        grammar_bytes / 1024,
        rss_before as f64 / 1024.0,
        rss_after as f64 / 1024.0,
        requests.len()
    );
    println!(
        "(medians of {} rounds, a change each after the first; load {})",
        opts.rounds,
        bench::load_average().unwrap_or_else(|| "?".into())
    );
    if understood < requests.len() {
        return Err("the big house's requests are not all understood".into());
    }
    Ok(())
}
