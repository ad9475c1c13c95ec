//! The hop loop's logic, driven by the scripted engine (fixed model outputs): the structured
//! and synthetic round trips, call ids, spoken confirmations, the small-model hooks,
//! grammar per policy, history trimming and cancellation. The real-model tests are in
//! tests/real_model.rs; these complement them, never replace them.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use hearth::agent::{
    Agent, AgentArgs, AgentConfig, AgentError, AgentMsg, Ask, Turn, APOLOGY, QUEUE_LIMIT,
};
use hearth::llm::scripted::{Recorded, Script, ScriptedEngine};
use hearth::preset::{Preset, ToolChoicePolicy};
use hearth::tools::{Registry, ToolStatus, ToolsActor};
use ractor::{Actor, ActorRef};

pub(crate) const CHATML: &str = include_str!("../templates/chatml-tools.jinja");
const NO_TOOL_ROLE: &str = include_str!("../templates/no-tool-role.jinja");

fn temp_dir(tag: &str) -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let d = std::env::temp_dir().join(format!(
        "hearth-agent-{tag}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
    ));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A tools dir: set_light (with `say`, appends to a log so executions can be counted) and
/// check_mail (no `say`). Also the remote engine's tests' ([`super::remote`]).
pub(crate) fn tools_dir() -> (PathBuf, PathBuf) {
    tools_dir_with("")
}

/// The same tools, with `intents` (`[[tool.intent]]` tables) added to set_light.
pub(crate) fn tools_dir_with(intents: &str) -> (PathBuf, PathBuf) {
    let dir = temp_dir("tools");
    let log = dir.join("calls.log");
    let manifest = format!(
        r#"
[[tool]]
name = "set_light"
description = "Turn a light on or off."
say = "The {{{{ room }}}} light is {{{{ 'on' if on else 'off' }}}}."
[tool.parameters]
type = "object"
required = ["room", "on"]
additionalProperties = false
[tool.parameters.properties.room]
type = "string"
enum = ["kitchen", "living room"]
[tool.parameters.properties.on]
type = "boolean"
[tool.exec]
argv = ["sh", "-c", "echo \"$0 $1\" >> {log}; echo \"$0 light $1\"", "{{{{ room }}}}", "{{{{ 'on' if on else 'off' }}}}"]
{intents}

[[tool]]
name = "check_mail"
description = "Count unread mail."
[tool.parameters]
type = "object"
additionalProperties = false
[tool.parameters.properties]
[tool.exec]
argv = ["sh", "-c", "echo mail >> {log}; echo '{{\"unread\": 3}}'"]
"#,
        log = log.display(),
    );
    std::fs::write(dir.join("home.toml"), manifest).unwrap();
    (dir, log)
}

pub(crate) fn executions(log: &PathBuf) -> Vec<String> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

pub(crate) struct Rig {
    pub(crate) agent: ActorRef<AgentMsg>,
    pub(crate) recorded: std::sync::Arc<std::sync::Mutex<Vec<Recorded>>>,
    pub(crate) log: PathBuf,
}

pub(crate) async fn rig(
    outputs: &[&str],
    preset: &str,
    template: &str,
    tweak: impl FnOnce(&mut AgentConfig, &mut Script),
) -> Rig {
    // the hop loop's tests: every request goes to the model (the tools' shapes would answer
    // "turn on the kitchen light" with a derived intent); a test may turn intents back on
    let hop_loop = |cfg: &mut AgentConfig, script: &mut Script| {
        cfg.intents = false;
        tweak(cfg, script);
    };
    rig_in(tools_dir(), outputs, preset, template, hop_loop).await
}

pub(crate) async fn rig_in(
    (dir, log): (PathBuf, PathBuf),
    outputs: &[&str],
    preset: &str,
    template: &str,
    tweak: impl FnOnce(&mut AgentConfig, &mut Script),
) -> Rig {
    let registry = Registry::load_dir(&dir).unwrap();
    let (tools, _) = Actor::spawn(None, ToolsActor, std::sync::Arc::new(registry))
        .await
        .unwrap();
    let mut script = Script::new(outputs.iter().copied());
    script.chat_template = Some(template.to_string());
    let mut cfg = AgentConfig::new(Preset::load(preset).unwrap());
    tweak(&mut cfg, &mut script);
    let recorded = script.recorded.clone();
    let engine = ScriptedEngine::spawn(script).await.unwrap();
    let agent = Agent::spawn(AgentArgs { cfg, engine, tools })
        .await
        .unwrap();
    Rig {
        agent,
        recorded,
        log,
    }
}

pub(crate) async fn ask(agent: &ActorRef<AgentMsg>, text: &str) -> Result<Turn, AgentError> {
    ask_in(agent, "s", text).await
}

pub(crate) async fn ask_in(
    agent: &ActorRef<AgentMsg>,
    session: &str,
    text: &str,
) -> Result<Turn, AgentError> {
    hearth::agent::ask(agent, Ask::new(session, text)).await
}

pub(crate) const KITCHEN_CALL: &str = "<tool_call>\n{\"name\": \"set_light\", \"arguments\": {\"room\": \"kitchen\", \"on\": true}}\n</tool_call>";
pub(crate) const MAIL_CALL: &str =
    "<tool_call>\n{\"name\": \"check_mail\", \"arguments\": {}}\n</tool_call>";

#[tokio::test]
async fn confirmation_is_spoken_and_skips_the_second_hop() {
    let r = rig(
        &[KITCHEN_CALL, "never generated"],
        "qwen2.5",
        CHATML,
        |_, _| {},
    )
    .await;
    let turn = ask(&r.agent, "turn on the kitchen light").await.unwrap();
    assert_eq!(turn.reply, "The kitchen light is on.");
    assert_eq!(turn.hops.len(), 1);
    assert_eq!(turn.hops[0].calls.len(), 1);
    let c = &turn.hops[0].calls[0];
    assert_eq!((c.name.as_str(), c.status), ("set_light", ToolStatus::Ok));
    assert_eq!(
        c.arguments,
        serde_json::json!({"room": "kitchen", "on": true})
    );
    assert_eq!(c.result, "kitchen light on");
    assert_eq!(executions(&r.log), vec!["kitchen on"]);
    assert_eq!(r.recorded.lock().unwrap().len(), 1, "no second LLM hop");
    assert!(turn.timings_ms.text_to_tool.is_some());
}

#[tokio::test]
async fn structured_round_trip_carries_the_call_id_in_the_tool_message() {
    // Mistral-style output with its own 9-character id, through a template with a tool role.
    let out = r#"[TOOL_CALLS][{"name": "check_mail", "arguments": {}, "id": "a1B2c3D4e"}]"#;
    let r = rig(
        &[out, "You have three unread mails."],
        "mistral",
        CHATML,
        |_, _| {},
    )
    .await;
    let turn = ask(&r.agent, "any mail?").await.unwrap();
    assert_eq!(turn.reply, "You have three unread mails.");
    assert_eq!(turn.hops[0].calls[0].id, "a1B2c3D4e");
    let rec = r.recorded.lock().unwrap();
    assert_eq!(rec.len(), 2);
    assert!(
        rec[1]
            .prompt
            .contains("<tool_response id=\"a1B2c3D4e\">\n{\"unread\": 3}\n</tool_response>"),
        "{}",
        rec[1].prompt
    );
    assert!(!rec[1].prompt.contains("(system: tool results"));
}

#[tokio::test]
async fn without_a_tool_role_results_go_back_as_a_synthetic_user_message() {
    let r = rig(
        &[MAIL_CALL, "Three unread."],
        "qwen2.5",
        NO_TOOL_ROLE,
        |_, _| {},
    )
    .await;
    let turn = ask(&r.agent, "any mail?").await.unwrap();
    assert_eq!(turn.reply, "Three unread.");
    let rec = r.recorded.lock().unwrap();
    assert!(
        rec[1].prompt.contains("<|user|>\n(system: tool results — check_mail -> \"{\\\"unread\\\": 3}\". Now answer the previous request in one short sentence.)"),
        "{}",
        rec[1].prompt
    );
}

#[tokio::test]
async fn a_loose_call_uses_the_synthetic_path_and_synthesised_ids() {
    // A fenced JSON call (what Qwen2.5-Coder-0.5B writes): not native markup.
    let out = "```json\n{\"name\": \"check_mail\", \"arguments\": {}}\n```";
    let r = rig(&[out, "Three."], "qwen2.5-coder", CHATML, |_, _| {}).await;
    let turn = ask(&r.agent, "mail?").await.unwrap();
    assert_eq!(turn.hops[0].calls[0].id, "check_mail_0");
    assert!(r.recorded.lock().unwrap()[1]
        .prompt
        .contains("(system: tool results — check_mail ->"));
    assert_eq!(turn.reply, "Three.");
}

#[tokio::test]
async fn a_repeated_call_gets_a_hint_then_stops_and_runs_once() {
    let r = rig(
        &[MAIL_CALL, MAIL_CALL, MAIL_CALL, "unused"],
        "qwen2.5",
        CHATML,
        |_, _| {},
    )
    .await;
    let turn = ask(&r.agent, "mail?").await.unwrap();
    assert_eq!(executions(&r.log), vec!["mail"], "executed once");
    assert_eq!(turn.hops.len(), 3);
    assert!(turn.hops[1].hook.as_deref().unwrap().contains("nudged"));
    assert_eq!(
        turn.hops[2].tool_choice, "reply",
        "the nudged hop may only answer"
    );
    assert!(turn.hops[2].hook.as_deref().unwrap().contains("stopped"));
    assert!(r.recorded.lock().unwrap()[2]
        .prompt
        .contains("already made"));
    // words from the result, not the JSON
    assert_eq!(turn.reply, "Unread: 3.");
    assert!(!turn.reply.contains('{'), "{}", turn.reply);
}

#[tokio::test]
async fn an_echoed_payload_is_never_spoken() {
    let r = rig(
        &[
            MAIL_CALL,
            "{\"unread\": 3}",
            "<tool_response>{\"unread\": 3}</tool_response>",
        ],
        "qwen2.5",
        CHATML,
        |_, _| {},
    )
    .await;
    let turn = ask(&r.agent, "mail?").await.unwrap();
    assert!(turn.hops[1].hook.as_deref().unwrap().contains("nudged"));
    assert!(turn.hops[2].hook.as_deref().unwrap().contains("stopped"));
    assert!(
        !turn.reply.contains('{') && !turn.reply.contains("tool_response"),
        "{}",
        turn.reply
    );
    assert!(!turn.reply.is_empty());
}

#[tokio::test]
async fn invalid_arguments_re_ask_once_under_that_tools_grammar_then_stop() {
    let bad = "<tool_call>\n{\"name\": \"set_light\", \"arguments\": {}}\n</tool_call>";
    let echo = "<tool_call>\n{\"name\": \"set_light\", \"arguments\": {\"type\": \"object\", \"properties\": {}}}\n</tool_call>";
    let r = rig(&[bad, echo, KITCHEN_CALL], "qwen2.5", CHATML, |_, _| {}).await;
    let turn = ask(&r.agent, "light").await.unwrap();
    assert!(executions(&r.log).is_empty(), "nothing invalid runs");
    assert_eq!(turn.reply, APOLOGY);
    assert_eq!(turn.hops.len(), 2);
    let rec = r.recorded.lock().unwrap();
    assert!(rec[0].grammar.is_none());
    let g = rec[1]
        .grammar
        .as_deref()
        .expect("the re-ask is held to set_light's grammar");
    assert!(g.contains("set_light") && !g.contains("check_mail"), "{g}");
}

#[tokio::test]
async fn hop_exhaustion_apologises() {
    let other = "<tool_call>\n{\"name\": \"set_light\", \"arguments\": {\"room\": \"living room\", \"on\": false}}\n</tool_call>";
    let r = rig(&[MAIL_CALL, other], "qwen2.5", NO_TOOL_ROLE, |cfg, _| {
        cfg.max_hops = 1;
    })
    .await;
    let turn = ask(&r.agent, "do things").await.unwrap();
    assert_eq!(turn.reply, APOLOGY);
    assert_eq!(turn.hops.len(), 1);
}

#[tokio::test]
async fn required_first_hop_constrains_hop_zero_only() {
    let r = rig(
        &[MAIL_CALL, "Three unread."],
        "qwen2.5",
        CHATML,
        |cfg, _| {
            cfg.preset.tool_choice_policy = ToolChoicePolicy::RequiredFirstHop;
        },
    )
    .await;
    let turn = ask(&r.agent, "mail?").await.unwrap();
    assert_eq!(turn.hops[0].tool_choice, "required");
    assert_eq!(turn.hops[1].tool_choice, "auto");
    let rec = r.recorded.lock().unwrap();
    let g = rec[0].grammar.as_deref().unwrap();
    assert!(
        g.contains("\"<tool_call>\\n\"") && g.contains("set_light") && g.contains("check_mail")
    );
    assert!(rec[1].grammar.is_none());
}

#[tokio::test]
async fn a_plain_answer_runs_no_tool_and_think_is_never_spoken() {
    let r = rig(&["<think>the user wants a joke; secret plan</think>Why did the lamp go out? It was tired."], "qwen3", CHATML, |_, _| {}).await;
    let turn = ask(&r.agent, "tell me a joke").await.unwrap();
    assert!(turn.hops[0].calls.is_empty());
    assert_eq!(turn.reply, "Why did the lamp go out? It was tired.");
    assert!(executions(&r.log).is_empty());
}

#[tokio::test]
async fn cancel_stops_generation_and_no_tool_runs() {
    let long = format!("{}{}", "blah ".repeat(200), KITCHEN_CALL);
    let r = rig(&[long.as_str()], "qwen2.5", CHATML, |_, s| {
        s.chunk_delay = Duration::from_millis(5);
    })
    .await;
    let agent = r.agent.clone();
    let pending = tokio::spawn(async move { ask(&agent, "light").await });
    tokio::time::sleep(Duration::from_millis(60)).await;
    // A second turn while one runs is refused.
    assert!(matches!(
        ask(&r.agent, "again").await,
        Err(AgentError::Busy)
    ));
    r.agent.cast(AgentMsg::Cancel).unwrap();
    let turn = pending.await.unwrap().unwrap();
    assert!(turn.cancelled);
    assert_eq!(turn.reply, "");
    assert!(executions(&r.log).is_empty());
}

/// A stop on one satellite cancels its own session's turn only: another source's turn, the
/// one running, goes on; a request of the stopped session that was waiting never runs.
#[tokio::test]
async fn cancelling_a_session_stops_only_its_own_turns() {
    let long = format!("{}Done.", "blah ".repeat(40));
    let r = rig(&[long.as_str(), KITCHEN_CALL], "qwen2.5", CHATML, |_, s| {
        s.chunk_delay = Duration::from_millis(5);
    })
    .await;
    let agent = r.agent.clone();
    let hall = tokio::spawn(async move { ask_in(&agent, "voice-hall-0", "tell me a joke").await });
    tokio::time::sleep(Duration::from_millis(60)).await;
    // the bedroom's request waits behind the hall's turn
    let agent = r.agent.clone();
    let bedroom = tokio::spawn(async move {
        let ask = Ask::new("voice-bedroom-0", "light").wait_up_to(Duration::from_secs(30));
        hearth::agent::ask(&agent, ask).await
    });
    tokio::time::sleep(Duration::from_millis(30)).await;
    r.agent
        .cast(AgentMsg::CancelSession("voice-bedroom-0".into()))
        .unwrap();
    assert!(matches!(bedroom.await.unwrap(), Err(AgentError::Cancelled)));
    let turn = hall.await.unwrap().unwrap();
    assert!(
        !turn.cancelled,
        "the hall's turn was stopped by the bedroom's stop"
    );
    assert!(turn.reply.ends_with("Done."), "{}", turn.reply);
    assert!(executions(&r.log).is_empty(), "the bedroom's request ran");
}

#[tokio::test]
async fn history_is_per_session_and_trimmed_oldest_first() {
    // Roomy context: the session's earlier turn is in the prompt, the other session's is not.
    let r = rig(&["One.", "Two.", "Three."], "qwen2.5", CHATML, |_, _| {}).await;
    ask_in(&r.agent, "a", "first question alpha").await.unwrap();
    ask_in(&r.agent, "b", "other session beta").await.unwrap();
    ask_in(&r.agent, "a", "second question gamma")
        .await
        .unwrap();
    {
        let rec = r.recorded.lock().unwrap();
        assert!(!rec[1].prompt.contains("alpha"), "sessions are separate");
        assert!(rec[2].prompt.contains("alpha") && rec[2].prompt.contains("One."));
        assert!(!rec[2].prompt.contains("beta"));
    }
    // Tight context (the scripted engine counts len/4 tokens): the base prompt fits with one
    // question but not with the earlier turn, so the oldest turn goes and the new one stays.
    let base = r.recorded.lock().unwrap()[0].prompt.len() / 4;
    let r = rig(&["One.", "Two."], "qwen2.5", CHATML, |cfg, s| {
        s.n_ctx = base + cfg.max_tokens + 12;
    })
    .await;
    ask_in(&r.agent, "a", "first question alpha").await.unwrap();
    ask_in(&r.agent, "a", "second question gamma")
        .await
        .unwrap();
    let rec = r.recorded.lock().unwrap();
    assert!(!rec[1].prompt.contains("alpha"), "{}", rec[1].prompt);
    assert!(rec[1].prompt.contains("gamma"));
}

#[tokio::test]
async fn a_malformed_call_of_a_known_tool_is_re_asked_under_its_grammar_and_runs() {
    // What Qwen2.5-Coder-0.5B writes for a tool without parameters: the schema, unclosed.
    let broken =
        "{\"name\": \"check_mail\", \"arguments\": {\"type\": \"object\", \"properties\": {}";
    let r = rig(
        &[broken, MAIL_CALL, "You have three unread mails."],
        "qwen2.5",
        CHATML,
        |_, _| {},
    )
    .await;
    let turn = ask(&r.agent, "any mail?").await.unwrap();
    assert!(turn.hops[0].hook.as_deref().unwrap().contains("re-asked"));
    assert_eq!(turn.hops[1].tool_choice, "tool:check_mail");
    assert_eq!(executions(&r.log), vec!["mail"]);
    assert_eq!(turn.reply, "You have three unread mails.");
    let rec = r.recorded.lock().unwrap();
    let g = rec[1].grammar.as_deref().unwrap();
    assert!(g.contains("check_mail") && !g.contains("set_light"), "{g}");
}

#[tokio::test]
async fn a_call_to_an_unknown_tool_is_nudged_to_a_plain_answer() {
    let joke = r#"{"name": "Joke", "arguments": {"message": "Why did the lamp go out?"}}"#;
    let r = rig(
        &[joke, "The lamp was tired."],
        "qwen2.5-coder",
        CHATML,
        |_, _| {},
    )
    .await;
    let turn = ask(&r.agent, "tell me a joke").await.unwrap();
    assert_eq!(
        turn.hops[0].hook.as_deref(),
        Some("said nothing that can be spoken: asked again for words")
    );
    assert_eq!(turn.hops[1].tool_choice, "reply");
    let rec = r.recorded.lock().unwrap();
    let words = AgentConfig::new(Preset::load("qwen2.5-coder").unwrap()).words_prompt;
    assert!(
        rec[1].prompt.contains(&words) && rec[1].prompt.contains("tell me a joke"),
        "asked again for words, under the words prompt: {}",
        rec[1].prompt
    );
    assert!(!rec[1].prompt.contains("set_light"), "{}", rec[1].prompt);
    assert!(rec[1].grammar.is_some());
    assert_eq!(turn.reply, "The lamp was tired.");
    assert!(executions(&r.log).is_empty());
}

#[tokio::test]
async fn parallel_calls_all_run_and_each_result_keeps_its_id() {
    let two = format!("{MAIL_CALL}\n{KITCHEN_CALL}");
    let r = rig(
        &[two.as_str(), "Three mails, and the light is on."],
        "qwen2.5",
        CHATML,
        |_, _| {},
    )
    .await;
    let turn = ask(&r.agent, "mail, and the kitchen light on")
        .await
        .unwrap();
    let calls = &turn.hops[0].calls;
    assert_eq!(calls.len(), 2);
    assert_eq!(
        (calls[0].id.as_str(), calls[1].id.as_str()),
        ("check_mail_0", "set_light_1")
    );
    let mut ran = executions(&r.log);
    ran.sort();
    assert_eq!(ran, vec!["kitchen on", "mail"]);
    // check_mail has no `say`, so the model answers in a second hop from both results
    assert_eq!(turn.reply, "Three mails, and the light is on.");
    let rec = r.recorded.lock().unwrap();
    assert!(
        rec[1]
            .prompt
            .contains("<tool_response id=\"check_mail_0\">"),
        "{}",
        rec[1].prompt
    );
    assert!(rec[1]
        .prompt
        .contains("<tool_response id=\"set_light_1\">\nkitchen light on"));
}

#[tokio::test]
async fn the_first_sentence_is_spoken_before_generation_ends() {
    let out = "<think>secret plan</think>The first sentence. The second one is longer and keeps going for a while.";
    let r = rig(&[out], "qwen3", CHATML, |_, s| {
        s.chunk_delay = Duration::from_millis(10);
    })
    .await;
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let mut request = Ask::new("s", "say two things");
    request.speak = Some(tx);
    let agent = r.agent.clone();
    let pending = tokio::spawn(async move { hearth::agent::ask(&agent, request).await });
    let first = rx.recv().await.expect("a sentence");
    assert_eq!(first.as_str(), "The first sentence.");
    assert!(
        !pending.is_finished(),
        "spoken while the model is still writing"
    );
    let turn = pending.await.unwrap().unwrap();
    let second = rx.recv().await.expect("the second sentence");
    assert_eq!(
        second.as_str(),
        "The second one is longer and keeps going for a while."
    );
    assert!(
        rx.recv().await.is_none(),
        "nothing else: the reply is not spoken twice"
    );
    assert_eq!(
        turn.reply,
        "The first sentence. The second one is longer and keeps going for a while."
    );
}

/// A template that opens the reasoning for the model (DeepSeek-R1's distills end the
/// generation prompt with `<think>\n`) under a preset that knows nothing of thinking: the
/// output begins inside the block and only its close tag marks the end. Streamed a few
/// characters at a time, no sentence of the reasoning is spoken, and the answer after the
/// close tag is.
#[tokio::test]
async fn reasoning_the_template_opened_is_never_spoken_while_streaming() {
    let opens = CHATML.replace(
        "{{- '<|im_start|>assistant\\n' }}{%- endif %}",
        "{{- '<|im_start|>assistant\\n<think>\\n' }}{%- endif %}",
    );
    assert_ne!(opens, CHATML, "the generation prompt was rewritten");
    let out = "The user wants a joke. Secret plan: pick the lamp one.\n</think>\n\nWhy did the lamp go out? It was tired.";
    let r = rig(&[out], "qwen2.5", &opens, |_, s| {
        s.chunk_chars = 2;
        s.chunk_delay = Duration::from_millis(1);
    })
    .await;
    let (turn, said) = spoken(&r.agent, "s", "tell me a joke").await;
    assert_eq!(
        said,
        ["Why did the lamp go out?", "It was tired."],
        "only the answer is spoken"
    );
    assert_eq!(turn.reply, "Why did the lamp go out? It was tired.");
    let rec = r.recorded.lock().unwrap();
    assert!(rec[0].prompt.ends_with("<|im_start|>assistant\n<think>\n"));
}

#[tokio::test]
async fn a_confirmation_is_spoken_through_the_same_channel() {
    let r = rig(&[KITCHEN_CALL], "qwen2.5", CHATML, |_, _| {}).await;
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let mut request = Ask::new("s", "kitchen light on");
    request.speak = Some(tx);
    hearth::agent::ask(&r.agent, request).await.unwrap();
    assert_eq!(
        rx.recv().await.unwrap().as_str(),
        "The kitchen light is on."
    );
    assert!(rx.recv().await.is_none());
}

#[tokio::test]
async fn a_parroted_synthetic_message_is_never_spoken() {
    let parrot = "(system: tool results — check_mail -> 3. Now answer the previous request in one short sentence.)";
    let r = rig(
        &[MAIL_CALL, parrot, "You have three unread mails."],
        "qwen2.5",
        NO_TOOL_ROLE,
        |_, _| {},
    )
    .await;
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let mut request = Ask::new("s", "any mail?");
    request.speak = Some(tx);
    let turn = hearth::agent::ask(&r.agent, request).await.unwrap();
    let mut spoken = Vec::new();
    while let Some(s) = rx.recv().await {
        spoken.push(s.into_string());
    }
    assert_eq!(spoken, vec!["You have three unread mails."]);
    assert!(turn.hops[1].hook.as_deref().unwrap().contains("echoed"));
    assert_eq!(turn.reply, "You have three unread mails.");
}

const LIVING_OFF_CALL: &str = "<tool_call>\n{\"name\": \"set_light\", \"arguments\": {\"room\": \"living room\", \"on\": false}}\n</tool_call>";

#[test]
fn clauses_count_the_parts_of_a_request() {
    use hearth::agent::clauses;
    assert_eq!(clauses("turn on the kitchen light"), 1);
    assert_eq!(clauses("Turn on the kitchen light."), 1);
    assert_eq!(
        clauses("What time is it? Please switch off the lights in the living room."),
        2
    );
    assert_eq!(clauses("turn on the kitchen and the bedroom light"), 2);
    assert_eq!(clauses("lights on, then music"), 2);
    // a joining word at either end joins nothing
    assert_eq!(clauses("And turn it off."), 1);
    assert_eq!(clauses("rock and"), 1);
    assert_eq!(clauses(""), 0);
    assert_eq!(clauses(" ... ?"), 0);
    assert_eq!(
        hearth::agent::request_parts(
            "What time is it? Please switch off the lights, and then the fan."
        ),
        ["What time is it", "Please switch off the lights", "the fan"]
    );
}

#[tokio::test]
async fn a_two_part_request_gets_a_follow_up_hop_for_the_second_part() {
    let r = rig(
        &[KITCHEN_CALL, LIVING_OFF_CALL, "never generated"],
        "qwen2.5",
        CHATML,
        |_, _| {},
    )
    .await;
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let mut request = Ask::new(
        "s",
        "Turn on the kitchen light. Switch off the living room light.",
    );
    request.speak = Some(tx);
    let turn = hearth::agent::ask(&r.agent, request).await.unwrap();
    assert_eq!(executions(&r.log), vec!["kitchen on", "living room off"]);
    assert_eq!(
        turn.reply,
        "The kitchen light is on. The living room light is off."
    );
    assert_eq!(turn.hops.len(), 2);
    assert_eq!(turn.hops[1].tool_choice, "required");
    // each confirmation was spoken as soon as its tool ran, once
    let mut said = Vec::new();
    while let Some(s) = rx.recv().await {
        said.push(s.as_str().to_string());
    }
    assert_eq!(
        said,
        ["The kitchen light is on.", "The living room light is off."]
    );
    // the follow-up is the last hop: both parts were called; it was asked with the rest
    let recorded = r.recorded.lock().unwrap();
    assert_eq!(recorded.len(), 2);
    assert!(
        recorded[1]
            .prompt
            .contains("<|im_start|>user\nSwitch off the living room light.<|im_end|>"),
        "{}",
        recorded[1].prompt
    );
}

#[tokio::test]
async fn a_follow_up_that_calls_nothing_new_ends_with_the_confirmation() {
    let r = rig(
        &[KITCHEN_CALL, KITCHEN_CALL, "never generated"],
        "qwen2.5",
        CHATML,
        |_, _| {},
    )
    .await;
    let turn = ask(&r.agent, "turn on the kitchen light and tell me a joke")
        .await
        .unwrap();
    // the repeated call did not run again
    assert_eq!(executions(&r.log), vec!["kitchen on"]);
    assert_eq!(turn.reply, "The kitchen light is on.");
    assert_eq!(turn.hops.len(), 2);
    assert!(turn.hops[1].calls.is_empty());
    assert_eq!(
        turn.hops[1].hook.as_deref(),
        Some("follow-up called nothing new: done")
    );
    // a one-part request still takes one hop
    let turn = ask(&r.agent, "turn on the kitchen light").await.unwrap();
    assert_eq!(turn.hops.len(), 1);
}

#[tokio::test]
async fn a_request_made_while_a_turn_runs_waits_for_it_and_is_answered() {
    // the first answer streams slowly; the second waits for it instead of being refused
    let slow = format!("{}done.", "word ".repeat(40));
    // the third differs: the same words to another request would be held back as a repeat
    let slow_again = format!("{}again done.", "word ".repeat(40));
    let r = rig(
        &[slow.as_str(), "Second answer.", slow_again.as_str()],
        "qwen2.5",
        CHATML,
        |_, s| {
            s.chunk_delay = Duration::from_millis(5);
        },
    )
    .await;
    let agent = r.agent.clone();
    let first = tokio::spawn(async move { ask(&agent, "first").await });
    tokio::time::sleep(Duration::from_millis(40)).await;
    let second = Ask::new("other", "second").wait_up_to(Duration::from_secs(10));
    let second = hearth::agent::ask(&r.agent, second).await.unwrap();
    assert_eq!(second.reply, "Second answer.");
    assert!(first.await.unwrap().unwrap().reply.ends_with("done."));
    // with no time to wait, Busy is still the answer
    let agent = r.agent.clone();
    let third = tokio::spawn(async move { ask(&agent, "third").await });
    tokio::time::sleep(Duration::from_millis(40)).await;
    let out = ask_in(&r.agent, "other", "fourth").await;
    assert!(matches!(out, Err(AgentError::Busy)), "{out:?}");
    assert!(third.await.unwrap().unwrap().reply.ends_with("done."));
}

#[tokio::test]
async fn the_one_queue_answers_in_order_refuses_when_full_and_at_the_deadline() {
    // one slow turn runs; QUEUE_LIMIT requests wait behind it and are answered in the order
    // they came; one more is refused at once; one whose deadline passes first is refused then
    let slow = format!("{}done.", "word ".repeat(200));
    let answers: Vec<String> = (1..=QUEUE_LIMIT).map(|i| format!("Answer {i}.")).collect();
    let mut outputs = vec![slow.as_str()];
    outputs.extend(answers.iter().map(String::as_str));
    let r = rig(&outputs, "qwen2.5", CHATML, |_, s| {
        s.chunk_delay = Duration::from_millis(5);
    })
    .await;
    let agent = r.agent.clone();
    let first = tokio::spawn(async move { ask(&agent, "first").await });
    tokio::time::sleep(Duration::from_millis(40)).await;

    // a short deadline: refused when it passes, while the first turn still runs
    let hurried = Ask::new("hurried", "soon please").wait_up_to(Duration::from_millis(50));
    let hurried = hearth::agent::ask(&r.agent, hurried).await;
    assert!(
        matches!(hurried, Err(AgentError::WaitedTooLong(_))),
        "{hurried:?}"
    );

    let mut waiting = Vec::new();
    for i in 1..=QUEUE_LIMIT {
        let agent = r.agent.clone();
        let ask =
            Ask::new(format!("s{i}"), format!("request {i}")).wait_up_to(Duration::from_secs(60));
        waiting.push(tokio::spawn(async move {
            hearth::agent::ask(&agent, ask).await
        }));
        // queued in this order
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let full = Ask::new("late", "one too many").wait_up_to(Duration::from_secs(60));
    let full = hearth::agent::ask(&r.agent, full).await;
    assert!(matches!(full, Err(AgentError::QueueFull)), "{full:?}");

    assert!(first.await.unwrap().unwrap().reply.ends_with("done."));
    for (i, w) in waiting.into_iter().enumerate() {
        let turn = w.await.unwrap().unwrap();
        assert_eq!(turn.reply, format!("Answer {}.", i + 1));
    }
}

/// The sentences a turn sent to speech.
pub(crate) async fn spoken(
    agent: &ActorRef<AgentMsg>,
    session: &str,
    text: &str,
) -> (Turn, Vec<String>) {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let mut a = Ask::new(session, text);
    a.speak = Some(tx);
    let turn = hearth::agent::ask(agent, a).await.unwrap();
    let mut said = Vec::new();
    while let Ok(s) = rx.try_recv() {
        said.push(s.into_string());
    }
    (turn, said)
}

#[tokio::test]
async fn a_claim_without_a_call_is_never_spoken_and_is_asked_for_a_call() {
    let r = rig(
        &[
            "Why did the lamp smile? It was lit.",
            "The kitchen light is on.",
            KITCHEN_CALL,
        ],
        "qwen2.5-coder",
        CHATML,
        |_, _| {},
    )
    .await;
    ask(&r.agent, "tell me a joke").await.unwrap();
    let (turn, said) = spoken(&r.agent, "s", "turn on the kitchen light").await;
    // the claim was held back; the retry called the tool and its confirmation was spoken
    assert_eq!(said, ["The kitchen light is on."]);
    assert_eq!(executions(&r.log), ["kitchen on"]);
    assert_eq!(
        turn.unfounded.as_deref(),
        Some("claimed an action no call carried out")
    );
    assert_eq!(
        turn.hops[0].hook.as_deref(),
        Some("claimed an action no call carried out: asked again for a tool call")
    );
    let rec = r.recorded.lock().unwrap();
    assert!(
        rec[2].prompt.contains("tell me a joke"),
        "the retry keeps the history (what \"it\" refers to)"
    );
    assert!(
        rec[2]
            .grammar
            .as_deref()
            .is_some_and(|g| g.contains("set_light")),
        "the retry is held to a tool call"
    );
}

#[tokio::test]
async fn a_flagged_retry_gives_up_after_one_hop() {
    let r = rig(
        &["The kitchen light is on.", "The kitchen light is on now."],
        "qwen2.5-coder",
        CHATML,
        |_, _| {},
    )
    .await;
    let (turn, said) = spoken(&r.agent, "s", "turn on the kitchen light").await;
    assert!(executions(&r.log).is_empty(), "no tool ran");
    assert_eq!(said, [hearth::agent::NOTHING_DONE]);
    assert_eq!(turn.hops.len(), 2, "{turn:#?}");
    assert_eq!(
        turn.hops[1].hook.as_deref(),
        Some("claimed an action no call carried out: nothing was done")
    );
}

#[tokio::test]
async fn a_forced_call_about_something_not_said_does_not_run_and_nothing_is_claimed() {
    // "turn it on" names no room: a forced call guessing the kitchen is not run
    let r = rig(
        &["It's on.", KITCHEN_CALL, "Hello!"],
        "qwen2.5-coder",
        CHATML,
        |_, _| {},
    )
    .await;
    let (turn, said) = spoken(&r.agent, "s", "turn it on").await;
    assert!(executions(&r.log).is_empty(), "no tool ran");
    assert_eq!(said, [hearth::agent::NOTHING_DONE]);
    assert_eq!(turn.reply, hearth::agent::NOTHING_DONE);
    assert_eq!(
        turn.hops[1].hook.as_deref(),
        Some("called a tool about something not asked for: nothing was done")
    );
    // the turn that gave up is not remembered: the next prompt does not hold it
    ask(&r.agent, "hello").await.unwrap();
    let rec = r.recorded.lock().unwrap();
    assert!(!rec[2].prompt.contains("turn it on"), "{}", rec[2].prompt);
}

#[tokio::test]
async fn the_turn_before_grounds_a_call_only_when_the_request_points_back_at_it() {
    let r = rig(
        &[KITCHEN_CALL, KITCHEN_OFF, KITCHEN_OFF, "Okay."],
        "qwen2.5-coder",
        CHATML,
        |_, _| {},
    )
    .await;
    ask(&r.agent, "turn on the kitchen light").await.unwrap();
    // "turn it off" points back: the kitchen, named the turn before, is what it is about
    let turn = ask(&r.agent, "turn it off").await.unwrap();
    assert_eq!(executions(&r.log), ["kitchen on", "kitchen off"]);
    assert_eq!(turn.unfounded, None);
    // "Never mind." names nothing: the kitchen call copied from the history does not run,
    // and the retry without the history answers
    let turn = ask(&r.agent, "Never mind.").await.unwrap();
    assert_eq!(executions(&r.log), ["kitchen on", "kitchen off"]);
    assert_eq!(turn.reply, "Okay.");
    assert_eq!(
        turn.unfounded.as_deref(),
        Some("called a tool about something not asked for")
    );
}

#[tokio::test]
async fn talk_about_functions_is_asked_again() {
    let r = rig(
        &[
            "You may call the \"check_mail\" function to count your mail.",
            MAIL_CALL,
            "You have three unread mails.",
        ],
        "qwen2.5-coder",
        CHATML,
        |_, _| {},
    )
    .await;
    let (turn, said) = spoken(&r.agent, "s", "how much mail do I have").await;
    assert_eq!(executions(&r.log), ["mail"]);
    assert_eq!(said, ["You have three unread mails."]);
    assert_eq!(
        turn.unfounded.as_deref(),
        Some("talked about tools instead of answering")
    );
}

#[tokio::test]
async fn a_reply_repeated_to_another_request_is_not_spoken_again() {
    let joke = "Why did the lamp smile? It was lit.";
    let r = rig(
        &[joke, joke, "I am fine, thank you."],
        "qwen2.5-coder",
        CHATML,
        |_, _| {},
    )
    .await;
    ask(&r.agent, "tell me a joke").await.unwrap();
    let (turn, said) = spoken(&r.agent, "s", "how are you").await;
    assert_eq!(said, ["I am fine, thank you."]);
    assert_eq!(turn.unfounded.as_deref(), Some("repeated an earlier reply"));
}

#[tokio::test]
async fn history_keeps_requests_and_calls_not_results_or_confirmations() {
    let r = rig(
        &[KITCHEN_CALL, "Why did the lamp smile? It was lit.", "Hi."],
        "qwen2.5-coder",
        CHATML,
        |_, _| {},
    )
    .await;
    ask(&r.agent, "turn on the kitchen light").await.unwrap();
    ask(&r.agent, "tell me a joke").await.unwrap();
    ask(&r.agent, "hello").await.unwrap();
    let rec = r.recorded.lock().unwrap();
    let p = &rec[2].prompt;
    assert!(p.contains("turn on the kitchen light") && p.contains("\"name\": \"set_light\""));
    assert!(
        p.contains("It was lit."),
        "a turn without calls keeps its reply"
    );
    assert!(!p.contains("tool results"), "{p}");
    assert!(!p.contains("The kitchen light is on."), "{p}");
}

const LIGHT_INTENT: &str = r#"[[tool.intent]]
sentences = ["turn {on} the {room} light", "turn the {room} light {on}"]"#;

#[tokio::test]
async fn a_request_an_intent_matches_runs_at_once_with_no_llm_hop() {
    let r = rig_in(
        tools_dir_with(LIGHT_INTENT),
        &["Why did the lamp smile? It was lit."],
        "qwen2.5-coder",
        CHATML,
        |_, _| {},
    )
    .await;
    let (turn, said) = spoken(&r.agent, "s", "Turn on the kitchen light.").await;
    assert_eq!(turn.path, hearth::agent::Handled::Intent);
    assert_eq!(said, ["The kitchen light is on."]);
    assert_eq!(executions(&r.log), ["kitchen on"]);
    assert_eq!(turn.hops.len(), 1);
    assert_eq!(turn.hops[0].tool_choice, "intent");
    assert!(
        r.recorded.lock().unwrap().is_empty(),
        "the model was not asked"
    );
    // two commands in one request; then what no intent covers goes to the model, which
    // sees the intent's turn in the history as its own call
    let turn = ask(
        &r.agent,
        "turn off the kitchen light and turn on the living room light",
    )
    .await
    .unwrap();
    assert_eq!(
        turn.reply,
        "The kitchen light is off. The living room light is on."
    );
    // (a turn's calls run in parallel: the two may finish in either order)
    let mut ran = executions(&r.log);
    ran[1..].sort();
    assert_eq!(ran, ["kitchen on", "kitchen off", "living room on"]);
    let turn = ask(&r.agent, "tell me a joke").await.unwrap();
    assert_eq!(turn.path, hearth::agent::Handled::Llm);
    let rec = r.recorded.lock().unwrap();
    assert!(
        rec[0].prompt.contains(
            "\"name\": \"set_light\", \"arguments\": {\"room\": \"kitchen\", \"on\": true}"
        ),
        "{}",
        rec[0].prompt
    );
}

#[tokio::test]
async fn a_follow_up_to_the_models_call_or_an_intents_runs_with_no_llm_hop() {
    let r = rig_in(
        tools_dir_with(LIGHT_INTENT),
        &[
            KITCHEN_CALL,
            "What do you mean by it?",
            "What do you mean by it?",
        ],
        "qwen2.5-coder",
        CHATML,
        |_, _| {},
    )
    .await;
    // the model's own call ...
    // (words no sentence takes, but which say every value the call has)
    let turn = ask(&r.agent, "I'd like the kitchen lights on")
        .await
        .unwrap();
    assert_eq!(turn.path, hearth::agent::Handled::Llm);
    let asked = r.recorded.lock().unwrap().len();
    // ... is what "it" stands for in the next turn
    let turn = ask(&r.agent, "Turn it off again.").await.unwrap();
    assert_eq!(turn.path, hearth::agent::Handled::Intent);
    assert_eq!(turn.hops[0].telemetry.parse_mode, "intent-follow-up");
    assert_eq!(turn.reply, "The kitchen light is off.");
    // and an intent's call for "too"
    let turn = ask(&r.agent, "and the living room too").await.unwrap();
    assert_eq!(turn.reply, "The living room light is off.");
    assert_eq!(
        executions(&r.log),
        ["kitchen on", "kitchen off", "living room off"]
    );
    assert_eq!(
        r.recorded.lock().unwrap().len(),
        asked,
        "the model was not asked"
    );
    // another session has no "it"; a reset session neither
    let turn = ask_in(&r.agent, "other", "turn it on").await.unwrap();
    assert_eq!(turn.path, hearth::agent::Handled::Llm);
    r.agent.cast(AgentMsg::Reset("s".into())).unwrap();
    let turn = ask(&r.agent, "turn it on").await.unwrap();
    assert_eq!(turn.path, hearth::agent::Handled::Llm);
    assert_eq!(
        executions(&r.log),
        ["kitchen on", "kitchen off", "living room off"]
    );
}

#[tokio::test]
async fn a_forced_tool_skips_the_intents() {
    let r = rig_in(
        tools_dir_with(LIGHT_INTENT),
        &[MAIL_CALL, "You have three unread mails."],
        "qwen2.5-coder",
        CHATML,
        |_, _| {},
    )
    .await;
    let mut a = Ask::new("s", "turn on the kitchen light");
    a.force_tool = Some("check_mail".into());
    let turn = hearth::agent::ask(&r.agent, a).await.unwrap();
    assert_eq!(turn.path, hearth::agent::Handled::Llm);
    assert_eq!(executions(&r.log), ["mail"]);
}

const KITCHEN_OFF: &str = "<tool_call>\n{\"name\": \"set_light\", \"arguments\": {\"room\": \"kitchen\", \"on\": false}}\n</tool_call>";

#[tokio::test]
async fn a_call_about_something_not_said_does_not_run() {
    let r = rig(&[KITCHEN_CALL, "Okay."], "qwen2.5-coder", CHATML, |_, _| {}).await;
    let (turn, said) = spoken(&r.agent, "s", "never mind").await;
    assert!(executions(&r.log).is_empty(), "nothing ran");
    assert_eq!(said, ["Okay."]);
    assert_eq!(
        turn.hops[0].hook.as_deref(),
        Some("called a tool about something not asked for: asked again for words")
    );
    let rec = r.recorded.lock().unwrap();
    assert_eq!(
        rec[1].grammar.as_deref(),
        Some(hearth::llm::REPLY_LARK),
        "with no history to leave out, the retry is held to words"
    );
    // shown the tools, a small model held to words writes about them: the retry is shown
    // none, under the words prompt
    let words = AgentConfig::new(Preset::load("qwen2.5-coder").unwrap()).words_prompt;
    assert!(rec[0].prompt.contains("set_light"), "{}", rec[0].prompt);
    assert!(!rec[0].prompt.contains(&words));
    assert!(rec[1].prompt.contains(&words), "{}", rec[1].prompt);
    assert!(!rec[1].prompt.contains("set_light"), "{}", rec[1].prompt);
    assert!(rec[1].prompt.contains("never mind"));
}

#[tokio::test]
async fn a_retry_held_to_words_begins_with_the_words_prompt_warmed() {
    let mut prefilled = None;
    let mut words = String::new();
    let r = rig(&[KITCHEN_CALL, "Okay."], "qwen2.5-coder", CHATML, |c, s| {
        prefilled = Some(s.prefilled.clone());
        words = c.words_prompt.clone();
    })
    .await;
    let (agent, recorded, prefilled) = (r.agent, r.recorded, prefilled.unwrap());
    // at start, after the turn's prefix: the words prompt, with no tools
    let at_start = prefilled.lock().unwrap().clone();
    assert_eq!(at_start.len(), 2, "{at_start:#?}");
    assert!(at_start[0].contains("set_light") && !at_start[0].contains(&words));
    assert!(at_start[1].contains(&words), "{}", at_start[1]);
    assert!(!at_start[1].contains("set_light"), "{}", at_start[1]);
    assert!(
        at_start[1].ends_with("<|im_start|>user\n"),
        "{}",
        at_start[1]
    );

    let turn = ask(&agent, "never mind").await.unwrap();
    assert_eq!(turn.reply, "Okay.");
    let retry = recorded.lock().unwrap()[1].prompt.clone();
    assert_eq!(
        retry,
        format!(
            "{}never mind<|im_end|>\n<|im_start|>assistant\n",
            at_start[1]
        ),
        "the retry is the warmed words prompt and the request's own tokens"
    );
    // warmed again after the turn (one token where it is cached), so a retry or a cut
    // history does not overwrite it as the least recently used
    for _ in 0..200 {
        let all = prefilled.lock().unwrap().clone();
        if all.len() >= 4 {
            assert_eq!(all[3], at_start[1], "{all:#?}");
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("warmed again: {:#?}", prefilled.lock().unwrap());
}

#[tokio::test]
async fn an_engine_that_keeps_one_prompt_is_not_warmed_with_the_words_prompt() {
    // a remote server keeps the last prompt only: the words prompt would take the
    // conversation's place
    let mut prefilled = None;
    let mut words = String::new();
    let r = rig(&["Hello!"], "qwen2.5-coder", CHATML, |c, s| {
        s.sequences = 1;
        prefilled = Some(s.prefilled.clone());
        words = c.words_prompt.clone();
    })
    .await;
    let prefilled = prefilled.unwrap();
    ask(&r.agent, "hello").await.unwrap();
    // at start and after the turn: the turn's prompt only
    prefills(&prefilled, 2).await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    let all = prefilled.lock().unwrap().clone();
    assert_eq!(all.len(), 2, "{all:#?}");
    assert!(all.iter().all(|p| !p.contains(&words)), "{all:#?}");
}

#[tokio::test]
async fn a_follow_up_may_call_about_what_the_turn_before_named() {
    let r = rig(
        &[KITCHEN_CALL, KITCHEN_OFF],
        "qwen2.5-coder",
        CHATML,
        |_, _| {},
    )
    .await;
    ask(&r.agent, "turn on the kitchen light").await.unwrap();
    let turn = ask(&r.agent, "turn it off again").await.unwrap();
    assert_eq!(executions(&r.log), ["kitchen on", "kitchen off"]);
    assert_eq!(turn.reply, "The kitchen light is off.");
    assert!(turn.unfounded.is_none());
}

/// The prompts warmed that a turn's first hop begins with: all but the words prompt's
/// (warmed after each of them, for a retry held to words).
fn turn_prefills(prefilled: &std::sync::Arc<std::sync::Mutex<Vec<String>>>) -> Vec<String> {
    let words = AgentConfig::new(Preset::load("qwen2.5-coder").unwrap()).words_prompt;
    let all = prefilled.lock().unwrap().clone();
    all.into_iter().filter(|p| !p.contains(&words)).collect()
}

/// Polls `prefilled` until it holds `n` prompts a turn begins with (the warm-ups after a turn
/// and after a tool change run in the background).
async fn prefills(
    prefilled: &std::sync::Arc<std::sync::Mutex<Vec<String>>>,
    n: usize,
) -> Vec<String> {
    for _ in 0..200 {
        let got = turn_prefills(prefilled);
        if got.len() >= n {
            return got;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("{n} prefills expected: {:#?}", prefilled.lock().unwrap());
}

#[tokio::test]
async fn the_next_prompt_is_warmed_at_start_after_each_turn_and_when_the_tools_change() {
    let (dir, _log) = tools_dir();
    let registry = Registry::load_dir(&dir).unwrap();
    let (tools, _) = Actor::spawn(None, ToolsActor, std::sync::Arc::new(registry))
        .await
        .unwrap();
    let mut script = Script::new([KITCHEN_CALL, "Three unread."]);
    script.chat_template = Some(CHATML.to_string());
    let (recorded, prefilled) = (script.recorded.clone(), script.prefilled.clone());
    let compiled = script.compiled.clone();
    let engine = ScriptedEngine::spawn(script).await.unwrap();
    let mut cfg = AgentConfig::new(Preset::load("qwen2.5-coder").unwrap());
    cfg.intents = false; // the model answers, so its prompts are warmed
    let agent = Agent::spawn(AgentArgs {
        cfg,
        engine,
        tools: tools.clone(),
    })
    .await
    .unwrap();

    // at start, before any request: the system prompt and the tools, up to the request
    let at_start = prefills(&prefilled, 1).await;
    assert!(at_start[0].contains("set_light"), "{}", at_start[0]);
    assert!(
        at_start[0].ends_with("<|im_start|>user\n"),
        "{}",
        at_start[0]
    );
    // with it, the grammar a call is held to once begun is compiled ahead
    {
        let compiled = compiled.lock().unwrap();
        assert_eq!(compiled.len(), 1, "{compiled:?}");
        assert!(compiled[0].contains("set_light") && compiled[0].contains("<tool_call>"));
    }
    ask(&agent, "turn on the kitchen light").await.unwrap();
    let first = recorded.lock().unwrap()[0].prompt.clone();
    assert_eq!(
        first,
        format!(
            "{}turn on the kitchen light<|im_end|>\n<|im_start|>assistant\n",
            at_start[0]
        ),
        "the first prompt is the warmed prefix and the request's own tokens"
    );

    // after the turn: the next prompt of the session, its history as the template writes it
    let after = prefills(&prefilled, 2).await;
    assert!(after[1].starts_with(&at_start[0]));
    assert!(
        after[1].contains("turn on the kitchen light"),
        "{}",
        after[1]
    );
    assert!(after[1].contains("\"set_light\""), "{}", after[1]);
    ask(&agent, "how much mail").await.unwrap();
    let second = recorded.lock().unwrap().last().unwrap().prompt.clone();
    assert!(
        second.starts_with(&after[1]),
        "the second turn begins with what was warmed:\n{second}\n---\n{}",
        after[1]
    );

    // a provider registers a tool: warmed again, with it
    let n = prefills(&prefilled, 3).await.len();
    let spec = hearth::toolcall::ToolSpec {
        name: "open_blinds".into(),
        description: "Open the blinds.".into(),
        parameters: serde_json::json!({"type": "object", "properties": {}, "additionalProperties": false}),
    };
    ractor::call!(tools, |reply| hearth::tools::ToolsMsg::Register {
        owner: ":1.7".into(),
        specs: vec![spec],
        limits: hearth::tools::ProviderLimits::default(),
        reply
    })
    .unwrap()
    .unwrap();
    let changed = prefills(&prefilled, n + 1).await;
    assert!(changed[n].contains("open_blinds"), "{}", changed[n]);
    // of the latest turn's session: its history is in it
    assert!(changed[n].contains("how much mail"), "{}", changed[n]);
}

#[tokio::test]
async fn a_long_history_is_cut_between_turns_once_the_cut_prompt_is_warm() {
    let (dir, _log) = tools_dir();
    let registry = Registry::load_dir(&dir).unwrap();
    let (tools, _) = Actor::spawn(None, ToolsActor, std::sync::Arc::new(registry))
        .await
        .unwrap();
    let mut script = Script::new([KITCHEN_CALL]);
    script.repeat = true;
    script.chat_template = Some(CHATML.to_string());
    // a warm-up takes a while: a request said at once cancels it
    script.prefill_delay = Duration::from_millis(300);
    let (recorded, prefilled) = (script.recorded.clone(), script.prefilled.clone());
    let engine = ScriptedEngine::spawn(script).await.unwrap();
    let mut cfg = AgentConfig::new(Preset::load("qwen2.5-coder").unwrap());
    cfg.intents = false;
    cfg.history_tokens = 64; // the scripted engine counts 4 characters a token
    let agent = Agent::spawn(AgentArgs { cfg, engine, tools })
        .await
        .unwrap();
    let request = |n: usize| format!("turn on the kitchen light, take {n}");
    let last_prompt = || recorded.lock().unwrap().last().unwrap().prompt.clone();
    // one request after another: each warm-up is cancelled by the next turn, so the
    // history is never cut under a turn (which would evaluate it all again)
    for n in 1..=4 {
        let turn = ask(&agent, &request(n)).await.unwrap();
        assert_eq!(turn.reply, "The kitchen light is on.");
    }
    let prompt = last_prompt();
    for n in 1..=3 {
        assert!(prompt.contains(&request(n)), "take {n} kept:\n{prompt}");
    }
    // a pause: the warm-up after the fourth turn finishes, and the history is cut to it
    let mut cut = String::new();
    for _ in 0..100 {
        cut = turn_prefills(&prefilled)
            .last()
            .cloned()
            .unwrap_or_default();
        if cut.contains(&request(4)) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    tokio::time::sleep(Duration::from_millis(400)).await;
    ask(&agent, &request(5)).await.unwrap();
    let prompt = last_prompt();
    assert!(
        prompt.starts_with(cut.as_str()),
        "the turn begins with the cut prompt as warmed:\n{prompt}\n---\n{cut}"
    );
    assert!(
        !prompt.contains(&request(1)),
        "the oldest turn is cut:\n{prompt}"
    );
    assert!(
        prompt.contains(&request(4)),
        "the latest is kept:\n{prompt}"
    );
    let kept = &cut[cut.find("take").unwrap()..];
    assert!(kept.len() / 4 <= 64, "within the bound: {kept}");
}

/// A held (speculative) request: the model writes, but its call waits for the decision.
async fn held(
    agent: &ActorRef<AgentMsg>,
    text: &str,
) -> (
    tokio::task::JoinHandle<Result<Turn, AgentError>>,
    tokio::sync::watch::Sender<Option<bool>>,
) {
    let (go, decision) = tokio::sync::watch::channel(None);
    let ask = Ask::new("s", text).held(decision);
    let agent = agent.clone();
    (
        tokio::spawn(async move { hearth::agent::ask(&agent, ask).await }),
        go,
    )
}

/// Waits until the scripted model has been asked `n` times.
async fn until_generated(recorded: &std::sync::Arc<std::sync::Mutex<Vec<Recorded>>>, n: usize) {
    for _ in 0..500 {
        if recorded.lock().unwrap().len() >= n {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the model was not asked {n} times");
}

#[tokio::test]
async fn a_speculative_turn_dropped_when_speech_resumes_runs_no_tool_and_keeps_nothing() {
    let r = rig(
        &[KITCHEN_CALL, "Once upon a time."],
        "qwen2.5",
        CHATML,
        |_, _| {},
    )
    .await;
    let (turn, go) = held(&r.agent, "turn on the kitchen").await;
    until_generated(&r.recorded, 1).await;
    // the model has written its call: held, it has not run
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(executions(&r.log).is_empty(), "a held call ran");
    go.send(Some(false)).unwrap();
    let turn = turn.await.unwrap().unwrap();
    assert!(turn.cancelled, "{turn:?}");
    assert_eq!(turn.reply, "");
    assert!(executions(&r.log).is_empty(), "a dropped call ran");
    // the session did not keep it: the next request's prompt has no trace of it
    ask(&r.agent, "tell me a story").await.unwrap();
    let rec = r.recorded.lock().unwrap();
    assert!(
        !rec[1].prompt.contains("turn on the kitchen"),
        "{}",
        rec[1].prompt
    );
}

#[tokio::test]
async fn a_speculative_turn_that_stands_runs_its_call_once_confirmed() {
    let r = rig(&[KITCHEN_CALL], "qwen2.5", CHATML, |_, _| {}).await;
    let (turn, go) = held(&r.agent, "turn on the kitchen light").await;
    until_generated(&r.recorded, 1).await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(executions(&r.log).is_empty(), "a held call ran");
    go.send(Some(true)).unwrap();
    let turn = turn.await.unwrap().unwrap();
    assert!(!turn.cancelled);
    assert_eq!(turn.reply, "The kitchen light is on.");
    assert_eq!(executions(&r.log), ["kitchen on"]);
}

#[tokio::test]
async fn a_speculative_request_an_intent_answers_waits_too_and_a_lost_decision_drops_it() {
    let r = rig_in(
        tools_dir_with(LIGHT_INTENT),
        &["never generated"],
        "qwen2.5-coder",
        CHATML,
        |_, _| {},
    )
    .await;
    let (turn, go) = held(&r.agent, "turn on the kitchen light").await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(executions(&r.log).is_empty(), "a held intent ran");
    // the voice path went away without deciding: as if refused
    drop(go);
    let turn = turn.await.unwrap().unwrap();
    assert!(turn.cancelled, "{turn:?}");
    assert!(executions(&r.log).is_empty());
    assert!(r.recorded.lock().unwrap().is_empty());
}

#[tokio::test]
async fn only_the_latest_sessions_are_kept() {
    let kept = hearth::agent::SESSIONS_KEPT;
    let answers: Vec<String> = (0..kept + 3).map(|i| format!("Answer {i}.")).collect();
    let answers: Vec<&str> = answers.iter().map(String::as_str).collect();
    let r = rig(&answers, "qwen2.5", CHATML, |_, _| {}).await;
    ask_in(&r.agent, "first", "question alpha").await.unwrap();
    for i in 0..kept {
        ask_in(&r.agent, &format!("s{i}"), &format!("question {i}"))
            .await
            .unwrap();
    }
    // the latest session still has its history; the first one, least recently used, is gone
    let last = format!("s{}", kept - 1);
    ask_in(&r.agent, &last, "and again").await.unwrap();
    ask_in(&r.agent, "first", "question beta").await.unwrap();
    let rec = r.recorded.lock().unwrap();
    let n = rec.len();
    assert!(
        rec[n - 2]
            .prompt
            .contains(&format!("question {}", kept - 1)),
        "{}",
        rec[n - 2].prompt
    );
    assert!(
        !rec[n - 1].prompt.contains("alpha"),
        "{}",
        rec[n - 1].prompt
    );
}

/// The tools of [`tools_dir`] and a thermometer a household wrote, without `say` or
/// sentences: `get_temperature` reads "<room> 21 degrees, humidity 40 percent". (Its shape
/// answers "how warm is it in the kitchen?" with a derived intent, so the tests of the model
/// path turn intents off; a result of two readings is not one its shape can say, so the
/// model words the answer.)
fn climate_dir() -> (PathBuf, PathBuf) {
    let (dir, log) = tools_dir();
    std::fs::write(
        dir.join("climate.toml"),
        r#"
[[tool]]
name = "get_temperature"
description = "Read the temperature in a room."
[tool.parameters]
type = "object"
required = ["room"]
additionalProperties = false
[tool.parameters.properties.room]
type = "string"
enum = ["kitchen", "living room"]
[tool.exec]
argv = ["sh", "-c", "echo \"$0 21 degrees, humidity 40 percent\"", "{{ room }}"]
"#,
    )
    .unwrap();
    (dir, log)
}

const TEMPERATURE_CALL: &str = "<tool_call>\n{\"name\": \"get_temperature\", \"arguments\": {\"room\": \"kitchen\"}}\n</tool_call>";

/// The requests of the session that one bad reply of each kind must not change.
const AFTER_THE_BAD_TURNS: [&str; 2] = ["any mail?", "thanks"];

#[tokio::test]
async fn no_bad_reply_is_kept_and_the_turns_after_them_go_as_without_them() {
    let joke = "Why did the lamp smile? It was lit.";
    let echo = "Turn on the kitchen light.";
    let invented = "It is 22 degrees in the kitchen.";
    let read = "It is 21 degrees in the kitchen.";
    let fine = "I am fine, thank you.";
    let after = [MAIL_CALL, "You have three unread mails.", "You're welcome!"];
    // the model echoes the request once, invents a reading once, copies an earlier reply
    // once; each time the retry is what a good model would have said at once
    let mut bad = vec![
        joke,
        echo,
        KITCHEN_CALL,
        invented,
        TEMPERATURE_CALL,
        read,
        joke,
        fine,
    ];
    bad.extend(after);
    let mut good = vec![joke, KITCHEN_CALL, TEMPERATURE_CALL, read, fine];
    good.extend(after);
    let requests = [
        "tell me a joke",
        "turn on the kitchen light",
        "how warm is it in the kitchen?",
        "how are you",
    ];

    let r = rig_in(climate_dir(), &bad, "qwen2.5-coder", CHATML, |c, _| {
        c.intents = false
    })
    .await;
    let mut caught = Vec::new();
    for request in requests {
        let (turn, said) = spoken(&r.agent, "s", request).await;
        // (the joke is a good answer the first time only)
        let bad_ones = if request == "tell me a joke" {
            vec![echo, invented]
        } else {
            vec![echo, invented, "Why did the lamp smile?"]
        };
        assert!(
            said.iter().all(|s| !bad_ones.contains(&s.as_str())),
            "a bad reply was spoken to {request:?}: {said:?}"
        );
        caught.push(turn.unfounded);
    }
    assert_eq!(
        caught,
        [
            None,
            Some("said the request back".to_string()),
            Some("stated a reading no call returned".to_string()),
            Some("repeated an earlier reply".to_string()),
        ]
    );
    let asked_before = r.recorded.lock().unwrap().len();
    let mut answers = Vec::new();
    for request in AFTER_THE_BAD_TURNS {
        answers.push(ask(&r.agent, request).await.unwrap().reply);
    }

    let clean = rig_in(climate_dir(), &good, "qwen2.5-coder", CHATML, |c, _| {
        c.intents = false
    })
    .await;
    for request in requests {
        let turn = ask(&clean.agent, request).await.unwrap();
        assert!(turn.unfounded.is_none(), "{turn:?}");
    }
    let clean_before = clean.recorded.lock().unwrap().len();
    let mut clean_answers = Vec::new();
    for request in AFTER_THE_BAD_TURNS {
        clean_answers.push(ask(&clean.agent, request).await.unwrap().reply);
    }

    assert_eq!(answers, ["You have three unread mails.", "You're welcome!"]);
    assert_eq!(
        answers, clean_answers,
        "answered as without the bad replies"
    );
    let rec = r.recorded.lock().unwrap();
    let clean_rec = clean.recorded.lock().unwrap();
    let later: Vec<&String> = rec[asked_before..].iter().map(|x| &x.prompt).collect();
    let clean_later: Vec<&String> = clean_rec[clean_before..]
        .iter()
        .map(|x| &x.prompt)
        .collect();
    assert_eq!(later.len(), 3, "the mail call, its answer, the thanks");
    assert_eq!(
        later, clean_later,
        "the prompts after the bad turns are those of a session without them"
    );
    for p in later {
        assert!(
            !p.contains(&format!("<|im_start|>assistant\n{echo}")),
            "{p}"
        );
        assert!(!p.contains("22 degrees"), "{p}");
        assert_eq!(p.matches("It was lit.").count(), 1, "{p}");
        assert!(
            !p.contains(&format!(
                "how are you<|im_end|>\n<|im_start|>assistant\n{joke}"
            )),
            "{p}"
        );
        assert!(
            p.contains(&format!(
                "how are you<|im_end|>\n<|im_start|>assistant\n{fine}"
            )),
            "{p}"
        );
    }
}

#[tokio::test]
async fn a_reading_no_result_carries_is_answered_from_the_results() {
    let r = rig_in(
        climate_dir(),
        &[
            TEMPERATURE_CALL,
            "It is 23 degrees in the kitchen.",
            "You're welcome!",
        ],
        "qwen2.5-coder",
        CHATML,
        |c, _| c.intents = false,
    )
    .await;
    let (turn, said) = spoken(&r.agent, "s", "how warm is it in the kitchen?").await;
    assert_eq!(
        said,
        ["Kitchen 21 degrees, humidity 40 percent."],
        "the invention is never spoken"
    );
    assert_eq!(turn.reply, "Kitchen 21 degrees, humidity 40 percent.");
    assert_eq!(
        turn.unfounded.as_deref(),
        Some("stated a reading no call returned")
    );
    assert_eq!(
        turn.hops[1].hook.as_deref(),
        Some("stated a reading no call returned: answered from the results")
    );
    ask(&r.agent, "thanks").await.unwrap();
    let rec = r.recorded.lock().unwrap();
    assert!(!rec[2].prompt.contains("23 degrees"), "{}", rec[2].prompt);
}

#[tokio::test]
async fn a_time_read_and_a_temperature_invented_are_answered_from_both_results() {
    let both = format!(
        "<tool_call>\n{{\"name\": \"get_time\", \"arguments\": {{}}}}\n</tool_call>\n{TEMPERATURE_CALL}"
    );
    let r = rig_in(
        climate_dir(),
        &[
            both.as_str(),
            "The current time is 10:00 AM and the temperature is 22 degrees.",
        ],
        "qwen2.5-coder",
        CHATML,
        |c, _| c.intents = false,
    )
    .await;
    let turn = ask(
        &r.agent,
        "What time is it and how warm is it in the kitchen?",
    )
    .await
    .unwrap();
    let ran: Vec<&str> = turn.hops[0].calls.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(ran, ["get_time", "get_temperature"]);
    let time = &turn.hops[0].calls[0].result;
    assert_eq!(
        turn.reply,
        format!("{time}, kitchen 21 degrees, humidity 40 percent.")
    );
    assert_eq!(
        turn.unfounded.as_deref(),
        Some("stated a reading no call returned")
    );
}

#[tokio::test]
async fn what_the_results_carry_is_said_as_the_model_put_it() {
    let r = rig_in(
        climate_dir(),
        &[TEMPERATURE_CALL, "It's twenty-one degrees in the kitchen."],
        "qwen2.5-coder",
        CHATML,
        |c, _| c.intents = false,
    )
    .await;
    let (turn, said) = spoken(&r.agent, "s", "how warm is it in the kitchen?").await;
    assert_eq!(said, ["It's twenty-one degrees in the kitchen."]);
    assert!(turn.unfounded.is_none());
}

#[tokio::test]
async fn a_request_said_back_is_asked_again_and_never_kept() {
    // "lock the front door." said back, as Qwen2.5-Coder-0.5B did with a second voice; the
    // retry calls
    let r = rig(
        &["Turn on the kitchen light.", KITCHEN_CALL, "Hello!"],
        "qwen2.5-coder",
        CHATML,
        |_, _| {},
    )
    .await;
    let (turn, said) = spoken(&r.agent, "s", "turn on the kitchen light.").await;
    assert_eq!(said, ["The kitchen light is on."]);
    assert_eq!(executions(&r.log), ["kitchen on"]);
    assert_eq!(
        turn.hops[0].hook.as_deref(),
        Some("said the request back: asked again for a tool call")
    );
    ask(&r.agent, "hello").await.unwrap();
    let rec = r.recorded.lock().unwrap();
    assert!(
        !rec[2]
            .prompt
            .contains("<|im_start|>assistant\nTurn on the kitchen light."),
        "{}",
        rec[2].prompt
    );
}

#[tokio::test]
async fn a_turn_that_answered_nothing_is_not_kept() {
    // hops run out with no call: the apology is said, and not kept for the next turn
    let r = rig(
        &["{\"a\": 1}", "{\"a\": 1}", "Hello!"],
        "qwen2.5",
        CHATML,
        |cfg, _| cfg.max_hops = 2,
    )
    .await;
    let turn = ask(&r.agent, "do something odd").await.unwrap();
    assert_eq!(turn.reply, APOLOGY);
    ask(&r.agent, "hello").await.unwrap();
    let rec = r.recorded.lock().unwrap();
    let last = &rec.last().unwrap().prompt;
    assert!(!last.contains("do something odd"), "{last}");
    assert!(!last.contains(APOLOGY), "{last}");
}

#[tokio::test]
async fn a_full_history_keeps_no_flagged_words_and_no_hint() {
    let r = rig(
        &[
            MAIL_CALL,
            "{\"unread\": 3}",
            "You have three unread mails.",
            "Bye.",
        ],
        "qwen2.5",
        CHATML,
        |cfg, _| cfg.history = hearth::agent::HistoryMode::Full,
    )
    .await;
    let turn = ask(&r.agent, "any mail?").await.unwrap();
    assert_eq!(turn.reply, "You have three unread mails.");
    assert!(turn.hops[1].hook.as_deref().unwrap().contains("nudged"));
    {
        let rec = r.recorded.lock().unwrap();
        assert!(
            rec[2].prompt.contains("Do not repeat the tool output"),
            "the turn saw the hint"
        );
    }
    ask(&r.agent, "bye").await.unwrap();
    let rec = r.recorded.lock().unwrap();
    let p = &rec[3].prompt;
    assert!(p.contains("You have three unread mails."), "{p}");
    assert!(!p.contains("Do not repeat the tool output"), "{p}");
    assert!(!p.contains("<|im_start|>assistant\n{\"unread\": 3}"), "{p}");
}

#[tokio::test]
async fn a_call_with_a_value_nobody_said_never_runs_and_the_rest_do() {
    // "turn off the kitchen and living room lights" → kitchen off, living room ON, as
    // Qwen2.5-Coder-0.5B did: the kitchen call runs, the other does not, and the rest of the
    // request is asked for in a follow-up hop
    let wrong = "<tool_call>\n{\"name\": \"set_light\", \"arguments\": {\"room\": \"kitchen\", \"on\": false}}\n</tool_call>\n<tool_call>\n{\"name\": \"set_light\", \"arguments\": {\"room\": \"living room\", \"on\": true}}\n</tool_call>";
    let living_off = "<tool_call>\n{\"name\": \"set_light\", \"arguments\": {\"room\": \"living room\", \"on\": false}}\n</tool_call>";
    let r = rig(&[wrong, living_off], "qwen2.5-coder", CHATML, |_, _| {}).await;
    let turn = ask(&r.agent, "Turn off the kitchen and living room lights.")
        .await
        .unwrap();
    assert_eq!(
        executions(&r.log),
        ["kitchen off", "living room off"],
        "the call with a value nobody said did not run"
    );
    assert_eq!(
        turn.hops[0].hook.as_deref(),
        Some("called a tool about something not asked for: 1 of 2 calls not run")
    );
    assert_eq!(
        turn.reply,
        "The kitchen light is off. The living room light is off."
    );
    let rec = r.recorded.lock().unwrap();
    assert!(
        !rec[1].prompt.contains("\"on\": true"),
        "the model is not shown the call that did not run: {}",
        rec[1].prompt
    );
}

#[tokio::test]
async fn after_a_call_a_second_call_nobody_asked_for_never_runs() {
    // the mail is read, then the model switches a light no one mentioned: not run, and the
    // answer is the mail count from the results
    let r = rig(
        &[MAIL_CALL, KITCHEN_CALL, "never generated"],
        "qwen2.5-coder",
        CHATML,
        |_, _| {},
    )
    .await;
    let turn = ask(&r.agent, "how much mail do I have").await.unwrap();
    assert_eq!(executions(&r.log), ["mail"], "only the mail was read");
    assert_eq!(turn.reply, "Unread: 3.");
    assert_eq!(
        turn.unfounded.as_deref(),
        Some("called a tool about something not asked for")
    );
    assert_eq!(r.recorded.lock().unwrap().len(), 2);
}

#[tokio::test]
async fn a_slow_turn_starts_no_hop_past_its_budget_and_answers_with_what_it_has() {
    // the mail is read (no confirmation: the model words it), but the model is slow: each
    // chunk takes 30 ms, so the first hop alone outlasts a 100 ms budget
    let r = rig(
        &[MAIL_CALL, "You have three unread mails."],
        "qwen2.5-coder",
        CHATML,
        |c, s| {
            c.turn_budget = Duration::from_millis(100);
            s.chunk_delay = Duration::from_millis(30);
        },
    )
    .await;
    let turn = ask(&r.agent, "how much mail do I have").await.unwrap();
    assert_eq!(executions(&r.log), ["mail"]);
    assert_eq!(turn.hops.len(), 1, "no second hop past the budget");
    assert_eq!(turn.reply, "Unread: 3.", "words from the results");
    assert_eq!(
        turn.hops[0].hook.as_deref(),
        Some("out of time: answered with what it has")
    );
    assert_eq!(r.recorded.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn a_free_hop_is_held_to_the_call_grammar_only_before_any_call() {
    let r = rig(
        &[MAIL_CALL, "You have three unread mails."],
        "qwen2.5",
        CHATML,
        |_, _| {},
    )
    .await;
    let turn = ask(&r.agent, "any mail?").await.unwrap();
    assert_eq!(turn.reply, "You have three unread mails.");
    let rec = r.recorded.lock().unwrap();
    assert!(rec[0].grammar.is_none(), "the first hop is free");
    assert!(
        rec[0]
            .lazy
            .as_deref()
            .is_some_and(|g| g.contains("check_mail") && g.contains("<tool_call>")),
        "{:?}",
        rec[0].lazy
    );
    assert!(rec[1].lazy.is_none(), "after a call the hop stays free");
}

#[tokio::test]
async fn a_words_only_hop_stops_at_the_first_sentence_held_back() {
    // nothing speakable, then, held to words, a claim followed by a long tail: the tail is
    // never generated
    let tail = format!("The kitchen light is on. {}", "And more. ".repeat(200));
    let r = rig(&["{\"a\": 1}", tail.as_str()], "qwen2.5", CHATML, |_, s| {
        s.chunk_delay = Duration::from_millis(1);
    })
    .await;
    let (turn, said) = spoken(&r.agent, "s", "turn on the kitchen light").await;
    assert_eq!(said, [hearth::agent::NOTHING_DONE]);
    let words = &turn.hops[1];
    assert_eq!(words.tool_choice, "reply");
    assert_eq!(words.stats.stop, Some(hearth::llm::StopReason::Halted));
    assert!(
        words.stats.generated_tokens < 200,
        "halted early: {} chunks",
        words.stats.generated_tokens
    );
}

#[tokio::test]
async fn a_retry_that_would_be_the_flagged_hop_again_is_not_made() {
    // every hop held to a call, no history: the retry of a claim would be asked exactly as
    // the hop that claimed, and would write the same
    let r = rig(
        &["The kitchen light is on.", KITCHEN_CALL],
        "qwen2.5-coder",
        CHATML,
        |cfg, _| cfg.preset.tool_choice_policy = hearth::preset::ToolChoicePolicy::RequiredAlways,
    )
    .await;
    let (turn, said) = spoken(&r.agent, "s", "turn on the kitchen light").await;
    assert_eq!(said, [hearth::agent::NOTHING_DONE]);
    assert!(executions(&r.log).is_empty());
    assert_eq!(r.recorded.lock().unwrap().len(), 1, "one generation only");
    assert_eq!(
        turn.hops[0].hook.as_deref(),
        Some(
            "claimed an action no call carried out: the retry would be the same: nothing was done"
        )
    );
}

#[tokio::test]
async fn a_words_only_hop_stops_once_a_sentence_talks_of_tools() {
    // nothing speakable, then, held to words, a run-on sentence about the tools that never
    // ends: it stops at "set_light", not at the token limit
    let tail = format!("You can use set_light {}", "and more ".repeat(200));
    let r = rig(&["{\"a\": 1}", tail.as_str()], "qwen2.5", CHATML, |_, s| {
        s.chunk_delay = Duration::from_millis(1);
    })
    .await;
    let (turn, said) = spoken(&r.agent, "s", "turn on the kitchen light").await;
    assert_eq!(said, [hearth::agent::APOLOGY]);
    let words = &turn.hops[1];
    assert_eq!(words.tool_choice, "reply");
    assert_eq!(words.stats.stop, Some(hearth::llm::StopReason::Halted));
    assert!(
        words.stats.generated_tokens < 40,
        "halted at the tool's name: {} chunks",
        words.stats.generated_tokens
    );
}
