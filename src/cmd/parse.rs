//! `hearth parse`: raw model output into tool calls, reply and reasoning (JSON out), one
//! input or one JSON object per line; and `hearth parsers`, the detectors.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use hearth::preset::Preset;
use hearth::toolcall::{known_tags, registry, Parser, Strictness, ToolSet};
use serde_json::{json, Value};

#[derive(clap::Args)]
pub struct Args {
    /// Detector chain: `auto` (every detector) or names in priority order, comma-separated.
    #[arg(long)]
    parsers: Option<String>,
    /// A preset name (see `hearth presets`) or a preset .toml file: its chain and think tags.
    #[arg(long)]
    preset: Option<String>,
    /// OpenAI-style tools list (JSON file): the allowlist and argument schemas.
    #[arg(long)]
    tools: Option<PathBuf>,
    /// Read one JSON object per stdin line: {"raw": "...", "tools": [...]}.
    #[arg(long)]
    jsonl: bool,
    /// Parse each input N times and report the median time as parse_us.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    repeat: u32,
}

/// `hearth parse`: stdin parsed whole (exit 0), or line by line with `--jsonl` (exit 1 when
/// a line was bad; its output line is `{"error": …}`).
pub fn run(args: Args) -> Result<ExitCode> {
    let parser = build_parser(&args)?;
    let default_tools = match &args.tools {
        Some(p) => load_tools(p)?,
        None => ToolSet::unrestricted(),
    };
    let mut input = Vec::new();
    std::io::stdin()
        .read_to_end(&mut input)
        .context("cannot read stdin")?;
    if !args.jsonl {
        let raw = match std::str::from_utf8(&input) {
            Ok(s) => s,
            Err(e) => bail!(
                "stdin is not valid UTF-8 (invalid byte at offset {}): hearth parse reads the model's text output as UTF-8",
                e.valid_up_to()
            ),
        };
        let v = run_one(&parser, &default_tools, raw, args.repeat);
        writeln!(std::io::stdout().lock(), "{v}")?;
        return Ok(ExitCode::SUCCESS);
    }
    run_jsonl(&input, &parser, &default_tools, args.repeat)
}

/// `hearth parsers`: each detector and whether it is strict or loose.
pub fn list_parsers() -> Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    for d in registry().all() {
        let kind = match d.strictness() {
            Strictness::Strict => "strict",
            Strictness::Loose => "loose",
        };
        writeln!(out, "{:<18} {kind}", d.name())?;
    }
    Ok(ExitCode::SUCCESS)
}

fn build_parser(args: &Args) -> Result<Parser> {
    let preset = match &args.preset {
        Some(p) => Some(Preset::load(p)?),
        None => None,
    };
    Ok(match (&args.parsers, &preset) {
        (Some(names), _) => {
            let names: Vec<&str> = names
                .split(',')
                .map(str::trim)
                .filter(|n| !n.is_empty())
                .collect();
            let (think, start) = match &preset {
                Some(p) => (p.think.clone(), p.start_in_think),
                None => (known_tags(), None),
            };
            Parser::from_names(&registry(), &names, think, start).context("--parsers")?
        }
        (None, Some(p)) => p.parser()?,
        (None, None) => Parser::auto(),
    })
}

fn load_tools(path: &Path) -> Result<ToolSet> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read tools file {}", path.display()))?;
    ToolSet::from_openai_json(&text).with_context(|| format!("tools file {}", path.display()))
}

/// Parse `raw` `repeat` times; the output object with the median time.
fn run_one(parser: &Parser, tools: &ToolSet, raw: &str, repeat: u32) -> Value {
    let mut times = Vec::with_capacity(repeat as usize);
    let mut out = None;
    for _ in 0..repeat {
        let t = Instant::now();
        let o = parser.parse(raw, tools);
        times.push(t.elapsed().as_secs_f64() * 1e6);
        out = Some(o);
    }
    times.sort_by(f64::total_cmp);
    let median = times.get(times.len() / 2).copied().unwrap_or(0.0);
    let mut v = serde_json::to_value(out).unwrap_or(Value::Null);
    if let Value::Object(m) = &mut v {
        m.insert("parse_us".into(), json!((median * 1000.0).round() / 1000.0));
    }
    v
}

/// `--jsonl`: one output line per input line; exit 1 when any line was bad.
fn run_jsonl(
    input: &[u8],
    parser: &Parser,
    default_tools: &ToolSet,
    repeat: u32,
) -> Result<ExitCode> {
    let mut stdout = std::io::stdout().lock();
    let mut failed = false;
    let mut tool_cache: HashMap<String, ToolSet> = HashMap::new();
    let mut lines: Vec<&[u8]> = input.split(|&b| b == b'\n').collect();
    if lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    for (i, line) in lines.iter().enumerate() {
        let n = i + 1;
        let v = match jsonl_line(line, n, parser, default_tools, &mut tool_cache, repeat) {
            Ok(v) => v,
            Err(msg) => {
                failed = true;
                json!({ "error": msg })
            }
        };
        writeln!(stdout, "{v}")?;
    }
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn jsonl_line(
    line: &[u8],
    n: usize,
    parser: &Parser,
    default_tools: &ToolSet,
    cache: &mut HashMap<String, ToolSet>,
    repeat: u32,
) -> std::result::Result<Value, String> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let text = std::str::from_utf8(line).map_err(|e| {
        format!(
            "line {n}: not valid UTF-8 (invalid byte at offset {})",
            e.valid_up_to()
        )
    })?;
    if text.trim().is_empty() {
        return Err(format!(
            "line {n}: empty line (expected {{\"raw\": \"…\", \"tools\": […]}})"
        ));
    }
    let v: Value =
        serde_json::from_str(text).map_err(|e| format!("line {n}: not valid JSON: {e}"))?;
    let raw = v.get("raw").and_then(Value::as_str).ok_or_else(|| {
        format!(
            "line {n}: missing string field \"raw\" (expected {{\"raw\": \"…\", \"tools\": […]}})"
        )
    })?;
    let tools = match v.get("tools") {
        None | Some(Value::Null) => default_tools.clone(),
        Some(t) => {
            let key = t.to_string();
            match cache.get(&key) {
                Some(ts) => ts.clone(),
                None => {
                    let ts = ToolSet::from_openai_value(t)
                        .map_err(|e| format!("line {n}: tools: {e}"))?;
                    cache.insert(key, ts.clone());
                    ts
                }
            }
        }
    };
    Ok(run_one(parser, &tools, raw, repeat))
}
