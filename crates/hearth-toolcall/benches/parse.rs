//! Criterion benchmarks: the whole corpus in auto mode, and 1 MB adversarial inputs
//! (time must stay linear in input size).

#[path = "../tests/common/mod.rs"]
mod common;

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use hearth_toolcall::Parser;

fn bench(c: &mut Criterion) {
    let parser = Parser::auto();
    let cases = common::load();
    let tools = common::default_tools();
    let mut g = c.benchmark_group("corpus_auto");
    g.throughput(Throughput::Elements(cases.len() as u64));
    g.bench_function("all_cases", |b| {
        b.iter(|| {
            for case in &cases {
                black_box(parser.parse(black_box(&case.raw), &case.tools));
            }
        })
    });
    g.finish();

    let mut g = c.benchmark_group("adversarial_1mb");
    g.sample_size(10);
    for (name, input) in common::adversarial() {
        g.throughput(Throughput::Bytes(input.len() as u64));
        g.bench_with_input(BenchmarkId::from_parameter(name), &input, |b, input| {
            b.iter(|| black_box(parser.parse(black_box(input), &tools)))
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
