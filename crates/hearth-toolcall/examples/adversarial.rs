//! Parse one 1 MB adversarial input many times (for profiling):
//! `cargo run --release --example adversarial -- '<think>x</think>' 20`
use hearth_toolcall::{Parser, ToolSet};

fn main() {
    let mut args = std::env::args().skip(1);
    let unit = args.next().unwrap_or_else(|| "[f(".into());
    let n: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(10);
    let input = unit.repeat((1 << 20) / unit.len().max(1));
    let parser = Parser::auto();
    let tools = ToolSet::unrestricted();
    let t = std::time::Instant::now();
    for _ in 0..n {
        std::hint::black_box(parser.parse(&input, &tools));
    }
    println!(
        "{:.2} ms per parse",
        t.elapsed().as_secs_f64() * 1000.0 / n as f64
    );
}
