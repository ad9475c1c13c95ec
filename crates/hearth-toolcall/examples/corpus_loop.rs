//! Parse every corpus case in a loop (for profiling):
//! `cargo run --release --example corpus_loop -- 200`

#[path = "../tests/common/mod.rs"]
mod common;

use hearth_toolcall::Parser;

fn main() {
    let rounds: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(100);
    let cases = common::load();
    let parser = Parser::auto();
    let start = std::time::Instant::now();
    for _ in 0..rounds {
        for case in &cases {
            std::hint::black_box(parser.parse(&case.raw, &case.tools));
        }
    }
    let n = rounds * cases.len();
    println!(
        "{n} parses, {:.2} µs mean",
        start.elapsed().as_secs_f64() * 1e6 / n as f64
    );
}
