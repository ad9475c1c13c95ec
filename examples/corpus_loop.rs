//! Parse every corpus case in a loop (for profiling):
//! `cargo run --release --example corpus_loop -- 200`
use hearth::toolcall::{Parser, ToolSet};
use serde_json::Value;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let rounds: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(100);
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let tools = ToolSet::from_openai_json(&std::fs::read_to_string(dir.join("tools.json"))?)?;
    let mut cases = Vec::new();
    for e in std::fs::read_dir(&dir)? {
        let p = e?.path();
        if p.extension().is_some_and(|x| x == "jsonl") {
            for line in std::fs::read_to_string(&p)?
                .lines()
                .filter(|l| !l.trim().is_empty())
            {
                let v: Value = serde_json::from_str(line)?;
                let t = match v.get("tools") {
                    Some(t) => ToolSet::from_openai_value(t)?,
                    None => tools.clone(),
                };
                cases.push((v["raw"].as_str().unwrap_or_default().to_string(), t));
            }
        }
    }
    let parser = Parser::auto();
    let start = std::time::Instant::now();
    for _ in 0..rounds {
        for (raw, t) in &cases {
            std::hint::black_box(parser.parse(raw, t));
        }
    }
    let n = rounds * cases.len();
    println!(
        "{n} parses, {:.2} µs mean",
        start.elapsed().as_secs_f64() * 1e6 / n as f64
    );
    Ok(())
}
