//! Find the first split point where streaming an output differs from parsing it at once:
//! `cargo run --example dbg_stream -- 'RAW OUTPUT' [true|false]` (the second argument is
//! whether the prompt opened a think block; absent means unknown). Uses
//! tests/corpus/tools.json as the tools.

use hearth_toolcall::{known_tags, registry, Parser, StreamEvent, ToolSet};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let raw = args
        .next()
        .ok_or("usage: dbg_stream 'RAW OUTPUT' [true|false]")?;
    let think = match args.next().as_deref() {
        Some("true") => Some(true),
        Some("false") => Some(false),
        _ => None,
    };
    let tools = ToolSet::from_openai_json(&std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/corpus/tools.json"
    ))?)?;
    let parser = Parser::from_names(&registry(), &["auto"], known_tags(), think)?;
    let one = parser.parse(&raw, &tools);
    println!("one-shot reply {:?}, calls {:?}", one.reply, one.calls);
    for (i, _) in raw.char_indices().skip(1) {
        let mut sp = parser.stream(&tools);
        let first = sp.push(&raw[..i]);
        let second = sp.push(&raw[i..]);
        let (last, _) = sp.finish();
        let text: String = first
            .iter()
            .chain(&second)
            .chain(&last)
            .filter_map(|e| match e {
                StreamEvent::Text(t) => Some(t.as_str()),
                StreamEvent::Call(_) => None,
            })
            .collect();
        if text != one.reply {
            println!(
                "diverges at split {i} {:?}: first push gave {first:?}",
                &raw[..i]
            );
            return Ok(());
        }
    }
    println!("every split point streams equal");
    Ok(())
}
