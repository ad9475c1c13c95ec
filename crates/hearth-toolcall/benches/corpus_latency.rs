//! Per-case latency over the corpus in auto mode: median and p99 of each case, then the
//! distribution over cases, and the 1 MB adversarial inputs. Run with
//! `cargo bench --bench corpus_latency`.

#[path = "../tests/common/mod.rs"]
mod common;

use std::hint::black_box;
use std::time::Instant;

use hearth_toolcall::Parser;

fn pct(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn main() {
    // `cargo bench` passes --bench; under `cargo test --benches` run quickly.
    let quick = !std::env::args().any(|a| a == "--bench");
    let runs = if quick { 5 } else { 2000 };
    let parser = Parser::auto();
    let mut medians = Vec::new();
    let mut p99s = Vec::new();
    let mut worst: Vec<(f64, f64, String)> = Vec::new();
    for case in common::load() {
        for _ in 0..(runs / 10).max(1) {
            black_box(parser.parse(&case.raw, &case.tools));
        }
        let mut times: Vec<f64> = (0..runs)
            .map(|_| {
                let s = Instant::now();
                black_box(parser.parse(black_box(&case.raw), &case.tools));
                s.elapsed().as_nanos() as f64 / 1000.0
            })
            .collect();
        times.sort_by(f64::total_cmp);
        let (m, p) = (pct(&times, 0.5), pct(&times, 0.99));
        medians.push(m);
        p99s.push(p);
        worst.push((m, p, format!("{}:{}", case.file, case.id)));
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
    let tools = common::default_tools();
    println!("1 MB adversarial inputs (ms, best of 3):");
    for (name, input) in common::adversarial() {
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
