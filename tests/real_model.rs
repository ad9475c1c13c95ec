//! The hop loop on the real Qwen2.5-Coder-0.5B model (llama.cpp in-process), with the demo
//! home's tools really running. CI fetches the model (`scripts/fetch-models`); a missing
//! model fails with the fix. Locally, `HEARTH_SKIP_REAL_MODEL=1` skips (CI never sets it).
//!
//! One engine serves every test here (one model load, one runtime), and the tests take
//! turns: the machine has two cores.
#![cfg(feature = "llm")]

use std::path::PathBuf;
use std::sync::OnceLock;

use hearth::agent::{Agent, AgentArgs, AgentConfig, AgentMsg, Ask, Turn};
use hearth::llm::EngineMsg;
use hearth::preset::{Preset, ToolChoicePolicy};
use hearth::supervisor::{start_text, TextOptions, TextRuntime};
use hearth::tools::ToolStatus;
use ractor::ActorRef;
use serde_json::json;

use hearth_testkit::model as common_model;

struct Shared {
    rt: tokio::runtime::Runtime,
    text: TextRuntime,
    state: PathBuf,
    lock: tokio::sync::Mutex<()>,
}

/// The demo home, with `get_light` answered by the model instead of its `say` (so a
/// question goes round trip through the model), in a directory beside `state`.
fn demo_without_get_light_say(state: &std::path::Path) -> PathBuf {
    let repo = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tools"));
    let dir = state.with_extension("tools");
    std::fs::create_dir_all(&dir).unwrap();
    let manifest = std::fs::read_to_string(repo.join("demo.toml")).unwrap();
    let say = "say = \"The {{ room }} light is {{ result.split()[-1] }}.\"\n";
    assert!(
        manifest.contains(say),
        "get_light's say changed: update this test"
    );
    let manifest = manifest.replacen(say, "", 1).replace(
        "\"./demo-home\"",
        &format!("{:?}", repo.join("demo-home").display().to_string()),
    );
    // without a say, get_light cannot keep its intents either
    let intent = "[[tool.intent]]\nsentences = [\n    \"(is|are) [the] {room} light[s] (on|off)\",\n    \"(is|are) [the] light[s] in the {room} (on|off)\",\n]\n";
    assert!(
        manifest.contains(intent),
        "get_light's intents changed: update this test"
    );
    let manifest = manifest.replacen(intent, "", 1);
    std::fs::write(dir.join("demo.toml"), manifest).unwrap();
    dir
}

static SHARED: OnceLock<Option<Shared>> = OnceLock::new();

/// Stops the shared engine, tools and agent when the test process exits. The static is never
/// dropped, and without this the engine's worker thread could still be warming the next
/// prompt while llama.cpp's own statics are destroyed at exit: the process then died of
/// SIGSEGV after every test had passed (seen once in a full run).
extern "C" fn stop_at_exit() {
    if let Some(Some(s)) = SHARED.get() {
        s.rt.block_on(s.text.stop());
    }
}

fn shared() -> Option<&'static Shared> {
    SHARED
        .get_or_init(|| {
            let model = common_model::qwen_path()?;
            let state = std::env::temp_dir().join(format!("hearth-real-{}", std::process::id()));
            std::fs::create_dir_all(&state).unwrap();
            // The demo home keeps its state here (read by tools/demo-home, a child process).
            std::env::set_var("HEARTH_DEMO_STATE", &state);
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .unwrap();
            let mut opts = TextOptions::new(Preset::load("qwen2.5-coder").unwrap());
            opts.tools_dir = Some(demo_without_get_light_say(&state));
            opts.model = Some(model);
            // these tests are about the model: the local intents would answer most of them
            opts.intents = false;
            let text = rt
                .block_on(start_text(opts))
                .expect("engine, tools and agent start");
            // registered after llama.cpp has initialised, so it runs before its statics go
            // SAFETY: `stop_at_exit` does not call exit, and a panic in an `extern "C"` fn aborts
            // rather than unwinding into libc
            let registered = unsafe { libc::atexit(stop_at_exit) };
            assert_eq!(registered, 0, "atexit registers the engine's stop");
            Some(Shared {
                rt,
                text,
                state,
                lock: tokio::sync::Mutex::new(()),
            })
        })
        .as_ref()
}

fn ask_with(agent: &ActorRef<AgentMsg>, s: &Shared, session: &str, text: &str) -> Turn {
    s.rt.block_on(async {
        let _turn = s.lock.lock().await;
        hearth::agent::ask(agent, Ask::new(session, text))
            .await
            .expect("the turn succeeds")
    })
}

fn all_calls(t: &Turn) -> Vec<&hearth::agent::CallReport> {
    t.hops.iter().flat_map(|h| &h.calls).collect()
}

#[test]
fn kitchen_light_runs_set_light_once_and_says_so() {
    let Some(s) = shared() else { return };
    let _ = std::fs::remove_file(s.state.join("light-kitchen"));
    let turn = ask_with(&s.text.agent, s, "kitchen", "turn on the kitchen light");
    let calls = all_calls(&turn);
    assert_eq!(calls.len(), 1, "{turn:#?}");
    assert_eq!(calls[0].name, "set_light");
    assert_eq!(calls[0].arguments, json!({"room": "kitchen", "on": true}));
    assert_eq!(calls[0].status, ToolStatus::Ok, "{turn:#?}");
    // the call's opener (`{"name": "` here, bare: `{"`, `name`, `":`, ` "`) was drafted
    // after its first token and found to be the model's own choice: evaluated in one batch
    let stats = &turn.hops[0].stats;
    assert!(stats.drafted_tokens >= 3, "{stats:?}");
    let reply = turn.reply.to_lowercase();
    assert!(
        reply.contains("kitchen") && reply.contains("on"),
        "{}",
        turn.reply
    );
    // the demo home really changed
    let state = std::fs::read_to_string(s.state.join("light-kitchen")).unwrap();
    assert_eq!(state.trim(), "on");
}

/// Said to a satellite in a room, a request the model answers: "turn on the light" is the
/// bedroom's; "turn off the kitchen light" said there is still the kitchen's.
#[test]
fn the_room_a_request_is_said_in_is_the_model_s_context() {
    let Some(s) = shared() else { return };
    let said_in = |text: &str| {
        s.rt.block_on(async {
            let _turn = s.lock.lock().await;
            let mut ask = Ask::new("bedroom-satellite", text);
            ask.room = Some("bedroom".into());
            hearth::agent::ask(&s.text.agent, ask)
                .await
                .expect("the turn succeeds")
        })
    };
    let _ = std::fs::remove_file(s.state.join("light-bedroom"));
    let turn = said_in("turn on the light");
    let calls = all_calls(&turn);
    assert_eq!(calls.len(), 1, "{turn:#?}");
    assert_eq!(calls[0].arguments, json!({"room": "bedroom", "on": true}));
    assert_eq!(calls[0].status, ToolStatus::Ok, "{turn:#?}");
    let state = std::fs::read_to_string(s.state.join("light-bedroom")).unwrap();
    assert_eq!(state.trim(), "on");
    std::fs::write(s.state.join("light-kitchen"), "on\n").unwrap();
    let turn = said_in("turn off the kitchen light");
    let calls = all_calls(&turn);
    assert_eq!(calls.len(), 1, "{turn:#?}");
    assert_eq!(calls[0].arguments, json!({"room": "kitchen", "on": false}));
    let state = std::fs::read_to_string(s.state.join("light-kitchen")).unwrap();
    assert_eq!(state.trim(), "off");
}

#[test]
fn what_time_runs_get_time_and_the_reply_holds_it() {
    let Some(s) = shared() else { return };
    let turn = ask_with(&s.text.agent, s, "time", "what time is it");
    let calls = all_calls(&turn);
    assert!(
        !calls.is_empty() && calls.iter().all(|c| c.name == "get_time"),
        "{turn:#?}"
    );
    let time = &calls[0].result;
    assert!(
        turn.reply.contains(time.as_str()),
        "reply {:?} lacks the time {time:?}: {turn:#?}",
        turn.reply
    );
}

/// A tool without a `say` confirmation: its result goes back to the model (the synthetic
/// user message, Qwen2.5-Coder's template has no tool role here) and the model answers
/// from it, in either state. Reading never changes the state.
#[test]
fn a_question_goes_round_trip_through_the_model() {
    let Some(s) = shared() else { return };
    for state in ["on", "off"] {
        std::fs::write(s.state.join("light-bedroom"), format!("{state}\n")).unwrap();
        let session = format!("bedroom-{state}");
        let turn = ask_with(&s.text.agent, s, &session, "is the bedroom light on");
        let calls = all_calls(&turn);
        assert!(
            !calls.is_empty()
                && calls
                    .iter()
                    .all(|c| c.name == "get_light" && c.arguments == json!({"room": "bedroom"})),
            "{turn:#?}"
        );
        assert_eq!(calls[0].result, format!("bedroom light {state}"));
        let words: Vec<String> = turn
            .reply
            .to_lowercase()
            .split(|c: char| !c.is_alphanumeric())
            .map(str::to_string)
            .collect();
        let other = if state == "on" { "off" } else { "on" };
        assert!(
            words.iter().any(|w| w == state) && !words.iter().any(|w| w == other),
            "reply {:?} should say the light is {state}: {turn:#?}",
            turn.reply
        );
        let now = std::fs::read_to_string(s.state.join("light-bedroom")).unwrap();
        assert_eq!(now.trim(), state, "a question never changes the state");
    }
}

#[test]
fn a_joke_runs_no_tool() {
    let Some(s) = shared() else { return };
    let turn = ask_with(&s.text.agent, s, "joke", "tell me a joke");
    assert!(all_calls(&turn).is_empty(), "{turn:#?}");
    assert!(!turn.reply.trim().is_empty());
    assert_ne!(turn.reply, hearth::agent::APOLOGY, "{turn:#?}");
}

#[test]
fn required_first_hop_always_yields_a_valid_call() {
    let Some(s) = shared() else { return };
    let mut cfg = AgentConfig::new(Preset::load("qwen2.5-coder").unwrap());
    cfg.preset.tool_choice_policy = ToolChoicePolicy::RequiredFirstHop;
    cfg.intents = false;
    let agent =
        s.rt.block_on(Agent::spawn(AgentArgs {
            cfg,
            engine: s.text.engine.clone(),
            tools: s.text.tools.clone(),
        }))
        .unwrap();
    for (i, text) in [
        "turn off the bedroom light",
        "what is the date today",
        "set the thermostat to 21 degrees",
        "tell me a joke",
    ]
    .iter()
    .enumerate()
    {
        let turn = ask_with(&agent, s, &format!("req{i}"), text);
        let hop0 = &turn.hops[0];
        assert_eq!(hop0.tool_choice, "required");
        assert!(hop0.stats.grammar);
        // the grammar always gives a valid call ...
        assert_eq!(
            hop0.telemetry.schema_validation, "pass",
            "{text}: {turn:#?}"
        );
        if *text == "tell me a joke" {
            // ... but one about nothing the request said is not run
            assert!(hop0.calls.is_empty(), "{text}: {turn:#?}");
            assert_eq!(
                hop0.hook.as_deref(),
                Some("called a tool about something not asked for: asked again for words"),
                "{turn:#?}"
            );
            assert!(all_calls(&turn).is_empty(), "{turn:#?}");
            continue;
        }
        assert!(!hop0.calls.is_empty(), "{text}: {turn:#?}");
        assert!(
            hop0.calls.iter().all(|c| c.status != ToolStatus::Error),
            "{text}: {turn:#?}"
        );
    }
}

#[test]
fn the_second_turn_reuses_the_cached_prefix() {
    let Some(s) = shared() else { return };
    let a = ask_with(&s.text.agent, s, "cache", "turn on the living room light");
    let b = ask_with(&s.text.agent, s, "cache2", "turn off the living room light");
    let first = &a.hops[0].stats;
    let second = &b.hops[0].stats;
    assert!(second.cached_tokens > 0, "{second:?}");
    assert!(
        second.evaluated_tokens * 5 <= second.prompt_tokens,
        "system prompt and tools are cached: {second:?} (first: {first:?})"
    );
}

#[test]
fn the_first_turn_after_start_evaluates_only_its_own_words() {
    // its own engine and agent: the shared ones have run turns already
    let Some(s) = shared() else { return };
    s.rt.block_on(async {
        let _turn = s.lock.lock().await;
        let mut opts = TextOptions::new(Preset::load("qwen2.5-coder").unwrap());
        opts.model = common_model::qwen_path();
        opts.intents = false;
        let text = start_text(opts)
            .await
            .expect("engine, tools and agent start");
        let turn = hearth::agent::ask(&text.agent, Ask::new("first", "turn on the kitchen light"))
            .await
            .expect("the turn succeeds");
        let stats = &turn.hops[0].stats;
        // the system prompt and the tools were evaluated at start; the turn evaluates
        // "turn on the kitchen light<|im_end|>\n<|im_start|>assistant\n" (12 tokens)
        assert!(stats.cached_tokens >= 200, "{stats:?}");
        assert!(stats.evaluated_tokens <= 14, "{stats:?}");
        text.agent.stop(None);
        text.engine.stop(None);
        text.tools.stop(None);
    });
}

#[test]
fn cancel_ends_a_generation_promptly() {
    let Some(s) = shared() else { return };
    s.rt.block_on(async {
        let _turn = s.lock.lock().await;
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        s.text
            .engine
            .cast(EngineMsg::Generate(hearth::llm::GenRequest {
                chat: None,
                prompt: "<|im_start|>user\nCount from one to five hundred in words.<|im_end|>\n<|im_start|>assistant\n".into(),
                grammar: None,
                lazy: None,
                halt: Default::default(),
                max_tokens: 400,
                stop: vec![],
                events: tx,
            }))
            .unwrap();
        // wait for the first text, then cancel
        if let hearth::llm::GenEvent::Done(d) = rx.recv().await.unwrap() {
            panic!("ended before any text: {d:?}");
        }
        let t = std::time::Instant::now();
        s.text.engine.cast(EngineMsg::Cancel).unwrap();
        let stats = loop {
            if let hearth::llm::GenEvent::Done(d) = rx.recv().await.unwrap() {
                break d.unwrap();
            }
        };
        let waited = t.elapsed();
        assert_eq!(stats.stop, Some(hearth::llm::StopReason::Cancelled));
        assert!(stats.generated_tokens < 400);
        eprintln!("cancel took {waited:?} (target ≤ 40 ms; measured in the bench)");
    });
}

#[test]
fn hearth_ask_json_follows_the_contract() {
    let Some(s) = shared() else { return };
    let model = common_model::qwen_path().unwrap();
    let state = std::env::temp_dir().join(format!("hearth-cli-state-{}", std::process::id()));
    let out = s.rt.block_on(async {
        let _turn = s.lock.lock().await;
        std::process::Command::new(env!("CARGO_BIN_EXE_hearth"))
            .args([
                "ask",
                "turn on the kitchen light",
                "--json",
                "--no-prompt-cache",
                "--tools",
            ])
            .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/tools"))
            .arg("--model")
            .arg(&model)
            .env("HEARTH_DEMO_STATE", &state)
            .output()
            .unwrap()
    });
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["reply"], "The kitchen light is on.");
    let call = &v["hops"][0]["calls"][0];
    assert_eq!(call["name"], "set_light");
    assert_eq!(call["arguments"], json!({"room": "kitchen", "on": true}));
    assert_eq!(call["status"], "ok");
    assert!(call["id"].is_string() && call["result"].is_string());
    assert!(v["hops"][0]["raw"].is_string() && v["hops"][0]["telemetry"]["parse_mode"].is_string());
    for k in ["prompt_eval", "generation", "tools", "total"] {
        assert!(v["timings_ms"][k].as_f64().unwrap() >= 0.0, "{k}");
    }
    assert_eq!(
        std::fs::read_to_string(state.join("light-kitchen"))
            .unwrap()
            .trim(),
        "on"
    );
    let _ = std::fs::remove_dir_all(&state);
}
