//! Loading the parser corpus (tests/corpus/*.jsonl) for the integration tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use hearth_toolcall::{known_tags, registry, Parser, ToolSet};
use serde_json::Value;

pub struct Case {
    pub file: String,
    pub line: usize,
    pub id: String,
    pub raw: String,
    pub tools: ToolSet,
    pub modes: Vec<String>,
    pub start_in_think: Option<bool>,
    pub expect: Value,
}

impl Case {
    pub fn label(&self) -> String {
        format!("{}:{} [{}]", self.file, self.line, self.id)
    }

    /// The parser for one mode: `auto` (every detector) or `own` (the file's detector).
    pub fn parser(&self, mode: &str) -> Parser {
        let names: Vec<String> = if mode == "own" {
            vec![self.file.clone()]
        } else {
            vec![mode.to_string()]
        };
        Parser::from_names(&registry(), &names, known_tags(), self.start_in_think)
            .unwrap_or_else(|e| panic!("{}: {e}", self.label()))
    }
}

pub fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus")
}

pub fn default_tools() -> ToolSet {
    let text =
        std::fs::read_to_string(corpus_dir().join("tools.json")).expect("tests/corpus/tools.json");
    ToolSet::from_openai_json(&text).expect("tests/corpus/tools.json is a valid tools list")
}

/// Corpus files that are not parser cases: `speakable.jsonl` feeds tests/speakable.rs.
const NOT_PARSER_CASES: &[&str] = &["speakable"];

/// Every case of every parser corpus file, in file order.
pub fn load() -> Vec<Case> {
    let tools = default_tools();
    let mut files: Vec<PathBuf> = std::fs::read_dir(corpus_dir())
        .expect("tests/corpus")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .filter(|p| {
            p.file_stem()
                .is_none_or(|s| !NOT_PARSER_CASES.iter().any(|n| s == *n))
        })
        .collect();
    files.sort();
    let mut out = Vec::new();
    for path in files {
        let file = path.file_stem().unwrap().to_string_lossy().to_string();
        let text = std::fs::read_to_string(&path).unwrap();
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let v: Value = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("{}:{}: not JSON: {e}", path.display(), i + 1));
            let case_tools = match v.get("tools") {
                Some(t) => ToolSet::from_openai_value(t)
                    .unwrap_or_else(|e| panic!("{}:{}: bad tools: {e}", path.display(), i + 1)),
                None => tools.clone(),
            };
            let modes = match v.get("modes") {
                Some(Value::Array(a)) => a
                    .iter()
                    .filter_map(|m| m.as_str().map(String::from))
                    .collect(),
                _ => vec!["auto".to_string(), "own".to_string()],
            };
            out.push(Case {
                file: file.clone(),
                line: i + 1,
                id: v
                    .get("id")
                    .and_then(Value::as_str)
                    .unwrap_or("?")
                    .to_string(),
                raw: v
                    .get("raw")
                    .and_then(Value::as_str)
                    .unwrap_or_else(|| panic!("{}:{}: no raw", path.display(), i + 1))
                    .to_string(),
                tools: case_tools,
                modes,
                start_in_think: v.get("start_in_think").and_then(Value::as_bool),
                expect: v.get("expect").cloned().unwrap_or(Value::Null),
            });
        }
    }
    out
}

/// 1 MB inputs built to defeat naive parsers (for the benchmarks).
pub fn adversarial() -> Vec<(&'static str, String)> {
    const MB: usize = 1 << 20;
    let fill = |unit: &str| unit.repeat(MB / unit.len());
    vec![
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
    ]
}
