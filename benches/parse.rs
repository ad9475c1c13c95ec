//! Criterion benchmarks: the whole corpus in auto mode, and 1 MB adversarial inputs
//! (time must stay linear in input size).

use std::hint::black_box;
use std::path::Path;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use hearth::toolcall::{Parser, ToolSet};
use serde_json::Value;

fn corpus() -> (Vec<(String, ToolSet)>, ToolSet) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let tools =
        ToolSet::from_openai_json(&std::fs::read_to_string(dir.join("tools.json")).unwrap())
            .unwrap();
    let mut cases = Vec::new();
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    for f in files {
        for line in std::fs::read_to_string(f)
            .unwrap()
            .lines()
            .filter(|l| !l.trim().is_empty())
        {
            let v: Value = serde_json::from_str(line).unwrap();
            let t = match v.get("tools") {
                Some(t) => ToolSet::from_openai_value(t).unwrap(),
                None => tools.clone(),
            };
            cases.push((v["raw"].as_str().unwrap().to_string(), t));
        }
    }
    (cases, tools)
}

/// 1 MB inputs built to defeat naive parsers.
pub fn adversarial() -> Vec<(&'static str, String)> {
    const MB: usize = 1 << 20;
    let fill = |unit: &str| unit.repeat(MB / unit.len());
    vec![
        ("pythonic_open", fill("[f(")),
        ("unclosed_tool_call", fill("<tool_call>")),
        ("deep_braces", fill("{")),
        ("deep_brackets", fill("[")),
        ("json_prefix", fill("{\"name\": ")),
        ("think_open", fill("<think>")),
        ("think_pairs", fill("<think>x</think>")),
        ("mistral_markers", fill("[TOOL_CALLS]")),
        ("special_token_open", fill("<|")),
        ("backticks", fill("`a")),
        (
            "many_calls",
            fill("<tool_call>{\"name\": \"get_time\", \"arguments\": {}}</tool_call>"),
        ),
        (
            "prose",
            fill("The kitchen light is on and the heating is set to twenty degrees. "),
        ),
    ]
}

fn bench(c: &mut Criterion) {
    let parser = Parser::auto();
    let (cases, tools) = corpus();
    let mut g = c.benchmark_group("corpus_auto");
    g.throughput(Throughput::Elements(cases.len() as u64));
    g.bench_function("all_cases", |b| {
        b.iter(|| {
            for (raw, t) in &cases {
                black_box(parser.parse(black_box(raw), t));
            }
        })
    });
    g.finish();

    let mut g = c.benchmark_group("adversarial_1mb");
    g.sample_size(10);
    for (name, input) in adversarial() {
        g.throughput(Throughput::Bytes(input.len() as u64));
        g.bench_with_input(BenchmarkId::from_parameter(name), &input, |b, input| {
            b.iter(|| black_box(parser.parse(black_box(input), &tools)))
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
