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

/// Four tokens generated after `prompt`: the generation's figures.
async fn four_tokens(engine: &ActorRef<EngineMsg>, prompt: &str) -> hearth::llm::GenStats {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    engine
        .cast(EngineMsg::Generate(hearth::llm::GenRequest {
            chat: None,
            prompt: prompt.into(),
            grammar: None,
            lazy: None,
            halt: Default::default(),
            max_tokens: 4,
            stop: vec![],
            events: tx,
        }))
        .unwrap();
    loop {
        if let hearth::llm::GenEvent::Done(d) = rx.recv().await.unwrap() {
            return d.unwrap();
        }
    }
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

/// The prompt-cache file carries the warmed prefix (system prompt, tools) to the next
/// process, and nothing of a request: a generation never writes it.
#[test]
fn a_prompt_cache_file_carries_the_warmed_prefix_and_no_request() {
    let Some(s) = shared() else { return };
    let model = common_model::qwen_path().unwrap();
    let file = std::env::temp_dir().join(format!("hearth-kv-{}.kv", std::process::id()));
    let _ = std::fs::remove_file(&file);
    let prefix = "<|im_start|>system\nYou are hearth.<|im_end|>\n<|im_start|>user\n";
    let prompt = format!("{prefix}Say hi.<|im_end|>\n<|im_start|>assistant\n");
    let run = |warm: bool| {
        s.rt.block_on(async {
            let _turn = s.lock.lock().await;
            let mut cfg = hearth::llm::llama::LlamaConfig::new(model.clone());
            cfg.n_ctx = 1024;
            cfg.prompt_cache = Some(file.clone());
            let engine = hearth::llm::llama::LlamaEngine::spawn(cfg).await.unwrap();
            let warmed = if warm {
                let w = ractor::call!(engine, EngineMsg::Prefill, prefix.to_string())
                    .unwrap()
                    .unwrap();
                Some(w.prompt_tokens)
            } else {
                None
            };
            let stats = four_tokens(&engine, &prompt).await;
            engine.stop(None);
            (warmed, stats)
        })
    };
    // a process that only generates writes nothing
    let (_, cold) = run(false);
    assert_eq!(cold.cached_tokens, 0, "{cold:?}");
    assert!(!file.exists(), "a generation wrote the prompt cache");
    // one that warms first writes the prefix, and the request after it is not added
    let (warmed, stats) = run(true);
    let prefix_tokens = warmed.unwrap();
    assert_eq!(stats.cached_tokens, prefix_tokens, "{stats:?}");
    assert!(file.is_file(), "the warm-up writes the state file");
    // the next process finds the prefix, and only the prefix
    let (_, next) = run(false);
    assert_eq!(next.cached_tokens, prefix_tokens, "{next:?}");
    let _ = std::fs::remove_file(&file);
}

/// The model in process with an `n_ctx`-token context, for the cache's tests.
async fn engine_of(n_ctx: u32) -> ActorRef<EngineMsg> {
    let mut cfg = hearth::llm::llama::LlamaConfig::new(common_model::qwen_path().unwrap());
    cfg.n_ctx = n_ctx;
    hearth::llm::llama::LlamaEngine::spawn(cfg).await.unwrap()
}

/// `text` evaluated into the engine's cache.
async fn prefilled(engine: &ActorRef<EngineMsg>, text: String) -> hearth::llm::GenStats {
    ractor::call!(engine, EngineMsg::Prefill, text)
        .unwrap()
        .unwrap()
}

#[test]
fn retries_without_the_conversation_leave_it_cached() {
    // The engine's prompts as a long voice session makes them: the conversation, a retry
    // asked without it, the conversation again (the next turn), a second retry that shares
    // more with the first than with the conversation; then the history cut back (the
    // conversation goes on in the other sequence, the longer one before the cut left stale)
    // and a third retry. After each retry the conversation must still be cached: once, the
    // warm-up after a retry found 1583 of 2377 tokens gone and took 19.8 s, and once, after
    // a cut, a retry took the place of the shorter, live conversation (5.5 s).
    let Some(s) = shared() else { return };
    s.rt.block_on(async {
        let _turn = s.lock.lock().await;
        let engine = engine_of(2048).await;
        let prefill = |text: String| prefilled(&engine, text);
        let system = "<|im_start|>system\nYou are hearth.<|im_end|>\n";
        let turns = |rooms: &[&str]| {
            let mut text = system.to_string();
            for room in rooms {
                text.push_str(&format!(
                    "<|im_start|>user\nTurn on the {room} light.<|im_end|>\n\
                     <|im_start|>assistant\nThe {room} light is on.<|im_end|>\n"
                ));
            }
            text
        };
        let retry = |words: &str| format!("{system}<|im_start|>user\n{words}<|im_end|>\n");
        let rooms = ["kitchen", "hallway", "bedroom", "office", "garage", "porch"];
        let cached_after = |conversation: String, words: &'static str| async move {
            let retried = prefill(retry(words)).await;
            let again = prefill(conversation).await;
            assert_eq!(
                again.evaluated_tokens, 1,
                "the conversation is still cached after {words:?}: {again:?} ({retried:?})"
            );
        };
        let conversation = turns(&rooms);
        prefill(conversation.clone()).await;
        cached_after(conversation.clone(), "Lock the front door.").await;
        cached_after(conversation.clone(), "Lock the back door.").await;
        // the history cut back to its last two turns, evaluated beside the conversation
        let cut = turns(&rooms[4..]);
        let warmed = prefill(cut.clone()).await;
        assert!(warmed.cached_tokens > 0, "{warmed:?}");
        let next = prefill(turns(&rooms[4..]) + "<|im_start|>user\nHi.<|im_end|>\n").await;
        assert!(
            next.evaluated_tokens < 20,
            "the cut conversation goes on: {next:?}"
        );
        cached_after(
            cut + "<|im_start|>user\nHi.<|im_end|>\n",
            "Lock the garage door.",
        )
        .await;
        engine.stop(None);
    });
}

#[test]
fn a_full_cache_empties_a_retry_before_the_conversation() {
    // The cache holds the conversation and a retry; a second retry finds no cells left. The
    // least recently used sequence (the first retry) is emptied, not the conversation: once,
    // every other sequence was, and a 3,000-token conversation was evaluated again (12 s,
    // three turns stalled, Home Assistant's house).
    let Some(s) = shared() else { return };
    s.rt.block_on(async {
        let _turn = s.lock.lock().await;
        let engine = engine_of(512).await;
        let prefill = |text: String| prefilled(&engine, text);
        let system = "<|im_start|>system\nYou are hearth.<|im_end|>\n";
        let mut conversation = system.to_string();
        for n in 1..=12 {
            conversation.push_str(&format!(
                "<|im_start|>user\nTurn on light number {n}.<|im_end|>\n\
                 <|im_start|>assistant\nLight {n} is on.<|im_end|>\n"
            ));
        }
        let retry = |door: &str| {
            let words = format!("Lock the {door} door and check it twice. ").repeat(14);
            format!("{system}<|im_start|>user\n{words}<|im_end|>\n")
        };
        let whole = prefill(conversation.clone()).await;
        let first = prefill(retry("front")).await;
        assert_eq!(prefill(conversation.clone()).await.evaluated_tokens, 1);
        let second = prefill(retry("back")).await;
        let shared_prefix = first.cached_tokens;
        assert!(
            whole.prompt_tokens + 2 * (first.prompt_tokens - shared_prefix) > 512,
            "the second retry does not fit beside the others: {whole:?} {first:?}"
        );
        assert!(
            whole.prompt_tokens + second.prompt_tokens - shared_prefix <= 512,
            "it fits beside the conversation alone: {whole:?} {second:?}"
        );
        let again = prefill(conversation.clone()).await;
        assert_eq!(
            again.evaluated_tokens, 1,
            "the conversation is still cached: {again:?} (second retry {second:?})"
        );
        engine.stop(None);
    });
}

#[test]
fn a_daemon_writes_its_prompt_cache_after_the_warm_up_only() {
    let Some(s) = shared() else { return };
    let model = common_model::qwen_path().unwrap();
    let file = std::env::temp_dir().join(format!("hearth-kv-daemon-{}.kv", std::process::id()));
    let _ = std::fs::remove_file(&file);
    s.rt.block_on(async {
        let _turn = s.lock.lock().await;
        let mut cfg = hearth::llm::llama::LlamaConfig::new(model.clone());
        cfg.n_ctx = 1024;
        cfg.prompt_cache = Some(file.clone());
        let engine = hearth::llm::llama::LlamaEngine::spawn(cfg).await.unwrap();
        let prefix = "<|im_start|>system\nYou are hearth.<|im_end|>\n<|im_start|>user\n";
        let warmed = ractor::call!(engine, EngineMsg::Prefill, prefix.to_string())
            .unwrap()
            .unwrap();
        assert_eq!(warmed.evaluated_tokens, warmed.prompt_tokens, "{warmed:?}");
        let written = std::fs::metadata(&file)
            .expect("written after the warm-up")
            .modified()
            .unwrap();
        let prompt = format!("{prefix}Say hi.<|im_end|>\n<|im_start|>assistant\n");
        let stats = four_tokens(&engine, &prompt).await;
        // the turn reused the warmed prefix, and left the file as the warm-up wrote it
        assert_eq!(stats.cached_tokens, warmed.prompt_tokens, "{stats:?}");
        assert_eq!(
            std::fs::metadata(&file).unwrap().modified().unwrap(),
            written
        );
        engine.stop(None);
    });
    let _ = std::fs::remove_file(&file);
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
