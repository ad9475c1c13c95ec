//! The `hearth parse` contract that benchmarks drive.

use std::io::Write;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

fn hearth(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_hearth"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run hearth");
    // hearth may reject its arguments before reading stdin: a broken pipe is fine then
    let _ = child.stdin.take().unwrap().write_all(stdin);
    child.wait_with_output().unwrap()
}

fn tools_path() -> String {
    format!(
        "{}/crates/hearth-toolcall/tests/corpus/tools.json",
        env!("CARGO_MANIFEST_DIR")
    )
}

fn json_lines(out: &Output) -> Vec<Value> {
    String::from_utf8(out.stdout.clone())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect()
}

#[test]
fn one_output_object_with_every_field() {
    let raw = "<think>kitchen light</think><tool_call>\n{\"name\": \"set_light\", \"arguments\": {\"room\": \"kitchen\", \"on\": true}}\n</tool_call>";
    let out = hearth(
        &["parse", "--tools", &tools_path(), "--repeat", "3"],
        raw.as_bytes(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = &json_lines(&out)[0];
    assert_eq!(v["calls"][0]["name"], "set_light");
    assert_eq!(
        v["calls"][0]["arguments"],
        serde_json::json!({"room": "kitchen", "on": true})
    );
    assert_eq!(v["calls"][0]["id"], "set_light_0");
    assert_eq!(v["reply"], "");
    assert_eq!(v["reasoning"], "kitchen light");
    assert_eq!(v["rejected"], serde_json::json!([]));
    assert_eq!(v["telemetry"]["schema_validation"], "pass");
    assert_eq!(v["telemetry"]["fallback_used"], false);
    assert_eq!(v["telemetry"]["candidate_count"], 1);
    assert!(
        v["telemetry"]["parse_mode"]
            .as_str()
            .unwrap()
            .contains("qwen25")
            || v["telemetry"]["parse_mode"]
                .as_str()
                .unwrap()
                .contains("hermes")
    );
    assert!(v["parse_us"].as_f64().unwrap() > 0.0);
}

#[test]
fn jsonl_lines_in_order_with_errors_in_place() {
    let input = concat!(
        "{\"raw\": \"<tool_call>{\\\"name\\\": \\\"get_time\\\", \\\"arguments\\\": {}}</tool_call>\"}\n",
        "this is not json\n",
        "{\"raw\": \"[get_weather(location='Oslo')]\", \"tools\": [{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", \"parameters\": {\"type\": \"object\", \"properties\": {\"location\": {\"type\": \"string\"}}}}}]}\n",
        "{\"no_raw\": 1}\n",
    );
    let out = hearth(
        &["parse", "--jsonl", "--tools", &tools_path()],
        input.as_bytes(),
    );
    assert_eq!(out.status.code(), Some(1));
    let lines = json_lines(&out);
    assert_eq!(lines.len(), 4);
    assert_eq!(lines[0]["calls"][0]["name"], "get_time");
    assert!(lines[1]["error"].as_str().unwrap().contains("line 2"));
    assert_eq!(lines[2]["calls"][0]["arguments"]["location"], "Oslo");
    assert!(lines[3]["error"].as_str().unwrap().contains("\"raw\""));
}

#[test]
fn bad_input_gets_clear_errors() {
    let out = hearth(&["parse"], b"\xff\xfe");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("UTF-8"));

    let out = hearth(&["parse", "--parsers", "hermes,nonesuch"], b"x");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("nonesuch") && err.contains("hermes") && err.contains("mistral"),
        "{err}"
    );

    let out = hearth(&["parse", "--preset", "qwen99"], b"x");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("qwen2.5"));

    let dir = std::env::temp_dir().join(format!("hearth-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("tools.json");
    std::fs::write(
        &bad,
        "[{\"type\": \"function\", \"function\": {\"description\": \"no name\"}}]",
    )
    .unwrap();
    let out = hearth(&["parse", "--tools", bad.to_str().unwrap()], b"x");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no name"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn explicit_parser_chain_and_preset() {
    let raw = b"<tool_call>{\"name\": \"get_time\", \"arguments\": {}}</tool_call>";
    let out = hearth(
        &["parse", "--parsers", "mistral", "--tools", &tools_path()],
        raw,
    );
    assert!(out.status.success());
    assert_eq!(json_lines(&out)[0]["calls"], serde_json::json!([]));
    let out = hearth(
        &["parse", "--preset", "qwen3", "--tools", &tools_path()],
        raw,
    );
    assert_eq!(json_lines(&out)[0]["calls"][0]["name"], "get_time");
}

#[test]
fn phrases_counts_the_house_and_draws_from_it() {
    let config = std::env::temp_dir().join(format!("hearth-phrases-{}.toml", std::process::id()));
    std::fs::write(&config, "").unwrap();
    let tools = format!("{}/tools", env!("CARGO_MANIFEST_DIR"));
    let args = [
        "phrases",
        "--config",
        config.to_str().unwrap(),
        "--tools",
        &tools,
        "--sample",
        "20",
        "--seed",
        "5",
    ];
    let out = hearth(&args, b"");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let (counts, sample) = text.split_once("\n\n").expect("counts, then the sample");
    // a line per tool with intents (the timers and controls `hearth run` offers among
    // them), the stop words, and the whole
    let tools: Vec<&str> = counts
        .lines()
        .filter_map(|l| l.split_once(':').map(|(t, _)| t))
        .collect();
    let listed = [
        "set_light",
        "set_lock",
        "set_thermostat",
        "set_timer",
        "set_alarm",
        "change_volume",
        "stop",
        "in all",
    ];
    for tool in listed {
        assert!(tools.contains(&tool), "{tool} in {counts}");
    }
    let drawn: Vec<(&str, &str)> = sample.lines().filter_map(|l| l.split_once('\t')).collect();
    assert_eq!(drawn.len(), 20, "{sample}");
    assert!(drawn
        .iter()
        .all(|(t, s)| tools.contains(t) && !s.is_empty()));
    // the same seed draws the same sentences
    let again = hearth(&args, b"");
    assert_eq!(String::from_utf8(again.stdout).unwrap(), text);
    let _ = std::fs::remove_file(&config);
}
