use hearth::toolcall::{known_tags, registry, Parser, ToolSet};
fn main() {
    let s = std::env::args().nth(1).unwrap();
    let tools =
        ToolSet::from_openai_json(&std::fs::read_to_string("tests/corpus/tools.json").unwrap())
            .unwrap();
    let think = match std::env::args().nth(2).as_deref() {
        Some("true") => Some(true),
        Some("false") => Some(false),
        _ => None,
    };
    let p = Parser::from_names(&registry(), &["auto"], known_tags(), think).unwrap();
    let one = p.parse(&s, &tools);
    println!("one-shot reply {:?}", one.reply);
    for (i, _) in s.char_indices().skip(1) {
        let mut sp = p.stream(&tools);
        let a = sp.push(&s[..i]);
        let b = sp.push(&s[i..]);
        let (c, _) = sp.finish();
        let text: String = a
            .iter()
            .chain(&b)
            .chain(&c)
            .filter_map(|e| match e {
                hearth::toolcall::StreamEvent::Text(t) => Some(t.clone()),
                _ => None,
            })
            .collect();
        if text != one.reply {
            println!("split {i} {:?}: first={:?}", &s[..i], a);
            break;
        }
    }
}
