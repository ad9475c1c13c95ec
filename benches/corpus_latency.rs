//! Per-case latency over the corpus in auto mode: median and p99 of each case, then the
//! distribution over cases, and the 1 MB adversarial inputs. Run with
//! `cargo bench --bench corpus_latency`.

use std::hint::black_box;
use std::path::Path;
use std::time::Instant;

use hearth::toolcall::{Parser, ToolSet};
use serde_json::Value;

fn pct(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn main() {
    // `cargo bench` passes --bench; `cargo test --benches` passes nothing useful: run quickly then.
    let quick = !std::env::args().any(|a| a == "--bench");
    let runs = if quick { 5 } else { 2000 };
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let tools =
        ToolSet::from_openai_json(&std::fs::read_to_string(dir.join("tools.json")).unwrap())
            .unwrap();
    let parser = Parser::auto();
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    let mut medians = Vec::new();
    let mut p99s = Vec::new();
    let mut worst: Vec<(f64, f64, String)> = Vec::new();
    for f in files {
        let stem = f.file_stem().unwrap().to_string_lossy().to_string();
        for line in std::fs::read_to_string(&f)
            .unwrap()
            .lines()
            .filter(|l| !l.trim().is_empty())
        {
            let v: Value = serde_json::from_str(line).unwrap();
            let t = match v.get("tools") {
                Some(t) => ToolSet::from_openai_value(t).unwrap(),
                None => tools.clone(),
            };
            let raw = v["raw"].as_str().unwrap();
            for _ in 0..(runs / 10).max(1) {
                black_box(parser.parse(raw, &t));
            }
            let mut times: Vec<f64> = (0..runs)
                .map(|_| {
                    let s = Instant::now();
                    black_box(parser.parse(black_box(raw), &t));
                    s.elapsed().as_nanos() as f64 / 1000.0
                })
                .collect();
            times.sort_by(f64::total_cmp);
            let (m, p) = (pct(&times, 0.5), pct(&times, 0.99));
            medians.push(m);
            p99s.push(p);
            worst.push((m, p, format!("{stem}:{}", v["id"].as_str().unwrap_or("?"))));
        }
    }
    medians.sort_by(f64::total_cmp);
    p99s.sort_by(f64::total_cmp);
    println!(
        "corpus cases: {} ({} runs each, auto mode, all detectors)",
        medians.len(),
        runs
    );
    println!(
        "per-case median µs: median {:.2}  p90 {:.2}  max {:.2}",
        pct(&medians, 0.5),
        pct(&medians, 0.9),
        pct(&medians, 1.0)
    );
    println!(
        "per-case p99 µs:    median {:.2}  p90 {:.2}  max {:.2}",
        pct(&p99s, 0.5),
        pct(&p99s, 0.9),
        pct(&p99s, 1.0)
    );
    worst.sort_by(|a, b| b.0.total_cmp(&a.0));
    println!("slowest cases by median (median µs / p99 µs):");
    for (m, p, id) in worst.iter().take(8) {
        println!("  {m:8.2} {p:8.2}  {id}");
    }
    let mb = 1usize << 20;
    let fill = |unit: &str| unit.repeat(mb / unit.len());
    let adversarial = [
        ("pythonic_open [f(", fill("[f(")),
        ("unclosed <tool_call>", fill("<tool_call>")),
        ("deep {", fill("{")),
        ("deep [", fill("[")),
        ("json prefix", fill("{\"name\": ")),
        ("<think> open", fill("<think>")),
        ("<think>x</think>", fill("<think>x</think>")),
        ("[TOOL_CALLS]", fill("[TOOL_CALLS]")),
        ("<|", fill("<|")),
        ("backticks", fill("`a")),
        (
            "many calls",
            fill("<tool_call>{\"name\": \"get_time\", \"arguments\": {}}</tool_call>"),
        ),
        (
            "prose",
            fill("The kitchen light is on and the heating is set to twenty degrees. "),
        ),
    ];
    println!("1 MB adversarial inputs (ms, best of 3):");
    for (name, input) in adversarial {
        let best = (0..if quick { 1 } else { 3 })
            .map(|_| {
                let s = Instant::now();
                black_box(parser.parse(&input, &tools));
                s.elapsed().as_secs_f64() * 1000.0
            })
            .fold(f64::INFINITY, f64::min);
        println!("  {name:<24} {best:8.2}");
    }
}
