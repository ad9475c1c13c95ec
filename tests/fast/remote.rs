//! The remote engine (`[agent] engine = "openai"`) against a stand-in server in the test: a
//! loopback HTTP server answering as llama-cpp-python does (`/v1/models`,
//! `/extras/tokenize/count`, a streamed `/v1/completions`), or not at all, or with garbage.
//! What is sent, what is parsed and run, the spoken apology when the server fails, a cancel
//! closing the stream, and the server coming back. The real server (llama-cpp-python on the
//! real model) is tests/remote_engine.rs.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hearth::agent::{Handled, MODEL_UNAVAILABLE};
use hearth::config::RemoteGrammar;
use hearth::llm::openai::{OpenAiConfig, OpenAiEngine};
use hearth::llm::{EngineMsg, GenEvent, GenRequest, StopReason};
use hearth::preset::Preset;
use hearth::supervisor::{start_text, EngineChoice, TextOptions, TextRuntime};
use hearth::Ask;
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

const CHATML: &str = include_str!("../templates/chatml-tools.jinja");

/// How the stand-in answers a completion.
#[derive(Clone)]
enum Answer {
    /// These chunks' texts as a stream of events, `gap` apart, then `[DONE]`.
    Stream(Vec<&'static str>, Duration),
    /// This whole response, as it is.
    Raw(&'static str),
    /// Read the request, answer nothing.
    Silent,
    /// A server with chat alone: `/v1/completions` is 404, and each chat completion streams
    /// these `delta`s (the last with `finish_reason` "tool_calls"), then `[DONE]`.
    ChatOnly(Vec<Value>),
}

/// A request the stand-in got: its path and JSON body.
#[derive(Debug, Clone)]
struct Seen {
    path: String,
    body: Value,
    /// Its `Authorization` header.
    auth: Option<String>,
}

struct Fake {
    addr: SocketAddr,
    seen: Arc<Mutex<Vec<Seen>>>,
    /// When the client closed a stream still being written.
    closed: Arc<Mutex<Vec<Instant>>>,
}

impl Fake {
    fn completions(&self) -> Vec<Value> {
        let seen = self.seen.lock().unwrap();
        seen.iter()
            .filter(|s| s.path == "/v1/completions" && s.body["max_tokens"] != json!(1))
            .map(|s| s.body.clone())
            .collect()
    }

    fn paths(&self) -> Vec<String> {
        self.seen
            .lock()
            .unwrap()
            .iter()
            .map(|s| s.path.clone())
            .collect()
    }
}

/// A stand-in server on `listener`: each completion (but one-token prefills) takes the
/// next answer, the last one again when they run out.
fn serve(listener: TcpListener, answers: Vec<Answer>) -> Fake {
    let addr = listener.local_addr().unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let closed = Arc::new(Mutex::new(Vec::new()));
    let answers = Arc::new(Mutex::new(answers));
    let (s, c) = (seen.clone(), closed.clone());
    tokio::spawn(async move {
        while let Ok((conn, _)) = listener.accept().await {
            let (s, c, a) = (s.clone(), c.clone(), answers.clone());
            tokio::spawn(async move { answer(conn, s, c, a).await });
        }
    });
    Fake { addr, seen, closed }
}

async fn fake(answers: Vec<Answer>) -> Fake {
    serve(TcpListener::bind("127.0.0.1:0").await.unwrap(), answers)
}

async fn answer(
    mut conn: TcpStream,
    seen: Arc<Mutex<Vec<Seen>>>,
    closed: Arc<Mutex<Vec<Instant>>>,
    answers: Arc<Mutex<Vec<Answer>>>,
) {
    let mut buf = Vec::new();
    let mut byte = [0u8; 1024];
    let head_end = loop {
        let n = conn.read(&mut byte).await.unwrap_or(0);
        if n == 0 {
            return;
        }
        buf.extend_from_slice(&byte[..n]);
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
    let path = head
        .split_whitespace()
        .nth(1)
        .unwrap_or_default()
        .to_string();
    let length: usize = head
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("content-length")
                .then(|| v.trim().parse().ok())?
        })
        .unwrap_or(0);
    while buf.len() < head_end + length {
        let n = conn.read(&mut byte).await.unwrap_or(0);
        if n == 0 {
            return;
        }
        buf.extend_from_slice(&byte[..n]);
    }
    let body: Value = serde_json::from_slice(&buf[head_end..]).unwrap_or(Value::Null);
    let auth = head.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.eq_ignore_ascii_case("authorization")
            .then(|| v.trim().to_string())
    });
    seen.lock().unwrap().push(Seen {
        path: path.clone(),
        body: body.clone(),
        auth,
    });
    let json = |status: &str, v: Value| {
        let text = v.to_string();
        format!("HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{text}", text.len())
    };
    let reply = match path.as_str() {
        "/v1/models" => json(
            "200 OK",
            json!({"object": "list", "data": [{"id": "stand-in"}]}),
        ),
        "/extras/tokenize/count" => {
            let n = body["input"].as_str().unwrap_or_default().len() / 4;
            json("200 OK", json!({ "count": n }))
        }
        "/v1/completions" | "/v1/chat/completions" if chat_only(&answers).is_some() => {
            match chat_only(&answers) {
                Some(deltas) if path == "/v1/chat/completions" => {
                    chat_stream(&mut conn, &deltas).await;
                    return;
                }
                _ => json("404 Not Found", json!({"detail": "Not Found"})),
            }
        }
        "/v1/completions" if body["max_tokens"] == json!(1) => {
            stream(&mut conn, &["."], Duration::ZERO, &closed).await;
            return;
        }
        "/v1/completions" => {
            let next = {
                let mut a = answers.lock().unwrap();
                if a.len() > 1 {
                    a.remove(0)
                } else {
                    a[0].clone()
                }
            };
            match next {
                Answer::Stream(chunks, gap) => {
                    stream(&mut conn, &chunks, gap, &closed).await;
                    return;
                }
                Answer::Raw(r) => r.to_string(),
                Answer::Silent => {
                    tokio::time::sleep(Duration::from_secs(60)).await;
                    return;
                }
                Answer::ChatOnly(_) => unreachable!("answered above"),
            }
        }
        _ => json("404 Not Found", json!({"detail": "Not Found"})),
    };
    let _ = conn.write_all(reply.as_bytes()).await;
    let _ = conn.shutdown().await;
}

/// A stream of events as llama-cpp-python writes them; a write that fails (the client
/// closed the connection) is noted.
async fn stream(
    conn: &mut TcpStream,
    chunks: &[&str],
    gap: Duration,
    closed: &Mutex<Vec<Instant>>,
) {
    let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream; charset=utf-8\r\nconnection: close\r\n\r\n";
    if conn.write_all(head.as_bytes()).await.is_err() {
        return;
    }
    let last = chunks.len().saturating_sub(1);
    for (i, text) in chunks.iter().enumerate() {
        let finish = if i == last {
            json!("stop")
        } else {
            Value::Null
        };
        let chunk = json!({"id": "cmpl-1", "object": "text_completion", "choices": [{"text": text, "index": 0, "logprobs": null, "finish_reason": finish}]});
        let event = format!("data: {chunk}\n\n");
        if conn.write_all(event.as_bytes()).await.is_err() {
            closed.lock().unwrap().push(Instant::now());
            return;
        }
        if !gap.is_zero() {
            tokio::time::sleep(gap).await;
        }
    }
    let _ = conn.write_all(b"data: [DONE]\n\n").await;
    let _ = conn.shutdown().await;
}

/// The chat deltas of a chat-only stand-in.
fn chat_only(answers: &Mutex<Vec<Answer>>) -> Option<Vec<Value>> {
    match answers.lock().unwrap().first() {
        Some(Answer::ChatOnly(deltas)) => Some(deltas.clone()),
        _ => None,
    }
}

/// A chat completion's stream of `deltas`, as OpenAI writes one.
async fn chat_stream(conn: &mut TcpStream, deltas: &[Value]) {
    let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n";
    let mut out = head.to_string();
    let last = deltas.len().saturating_sub(1);
    for (i, delta) in deltas.iter().enumerate() {
        let finish = if i == last {
            json!("tool_calls")
        } else {
            Value::Null
        };
        let chunk = json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
        out.push_str(&format!("data: {chunk}\n\n"));
    }
    out.push_str("data: [DONE]\n\n");
    let _ = conn.write_all(out.as_bytes()).await;
    let _ = conn.shutdown().await;
}

/// The preset with a chat template of its own (the stand-in reports none, and no GGUF is
/// read).
fn preset() -> Preset {
    let mut p = Preset::load("qwen2.5-coder").unwrap();
    p.chat_template = Some(CHATML.to_string());
    p
}

fn remote(url: &str, read_timeout: Duration) -> OpenAiConfig {
    let mut cfg = OpenAiConfig::new(url);
    cfg.connect_timeout = Duration::from_secs(1);
    cfg.read_timeout = read_timeout;
    cfg
}

async fn runtime(url: &str, intents: bool, read_timeout: Duration) -> (TextRuntime, PathBuf) {
    let (dir, log) = super::agent::tools_dir();
    let mut opts = TextOptions::new(preset());
    opts.tools_dir = Some(dir);
    opts.intents = intents;
    opts.warm_next = false;
    opts.engine = EngineChoice::OpenAi(remote(url, read_timeout));
    let text = start_text(opts)
        .await
        .expect("starts whether the server answers or not");
    (text, log)
}

async fn ask(text: &TextRuntime, request: &str) -> hearth::Turn {
    hearth::agent::ask(&text.agent, Ask::new("s", request))
        .await
        .expect("the turn ends with a reply")
}

const CALL: [&str; 5] = [
    "<tool_call>\n{\"name\": \"set_light\", ",
    "\"arguments\": {\"room\": \"kit",
    "chen\", \"on\": true}",
    "}\n</tool_call>",
    "",
];

#[tokio::test]
async fn a_streamed_completion_is_parsed_and_its_call_runs() {
    let server = fake(vec![Answer::Stream(CALL.to_vec(), Duration::ZERO)]).await;
    let url = format!("http://{}/v1", server.addr);
    let (text, log) = runtime(&url, false, Duration::from_secs(5)).await;
    let turn = ask(&text, "turn on the kitchen light").await;
    assert_eq!(turn.path, Handled::Llm);
    let calls: Vec<_> = turn.hops.iter().flat_map(|h| h.calls.clone()).collect();
    assert_eq!(calls.len(), 1, "{turn:?}");
    assert_eq!(calls[0].arguments, json!({"room": "kitchen", "on": true}));
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "kitchen on\n");
    assert_eq!(turn.reply, "The kitchen light is on.");
    // what was asked: the rendered prompt, raw, streamed, greedy, with the preset's stops
    let sent = server.completions();
    assert_eq!(sent.len(), 1, "{sent:?}");
    let body = &sent[0];
    let prompt = body["prompt"].as_str().unwrap();
    assert!(prompt.starts_with("<|im_start|>system\n"), "{prompt}");
    assert!(prompt.ends_with("turn on the kitchen light<|im_end|>\n<|im_start|>assistant\n"));
    assert_eq!(body["stream"], json!(true));
    assert_eq!(body["temperature"], json!(0.0));
    assert_eq!(body["max_tokens"], json!(128));
    assert!(
        body.get("grammar").is_none(),
        "no grammar without `grammar = llguidance`"
    );
    // the prompt was fitted with the server's own counts
    assert!(server.paths().iter().any(|p| p == "/extras/tokenize/count"));
    text.stop().await;
}

#[tokio::test]
async fn a_server_with_chat_alone_gets_messages_and_its_native_call_runs() {
    let call = |args: &str| {
        json!({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
            "function": {"name": "set_light", "arguments": args}}]})
    };
    let server = fake(vec![Answer::ChatOnly(vec![
        json!({"role": "assistant", "content": null}),
        call("{\"room\": \"kit"),
        json!({"tool_calls": [{"index": 0, "function": {"arguments": "chen\", \"on\": true}"}}]}),
        json!({}),
    ])])
    .await;
    let url = format!("http://{}", server.addr);
    let (text, log) = runtime(&url, false, Duration::from_secs(5)).await;
    let turn = ask(&text, "turn on the kitchen light").await;
    let calls: Vec<_> = turn.hops.iter().flat_map(|h| h.calls.clone()).collect();
    assert_eq!(calls.len(), 1, "{turn:?}");
    assert_eq!(calls[0].name, "set_light");
    assert_eq!(calls[0].arguments, json!({"room": "kitchen", "on": true}));
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "kitchen on\n");
    // the parser read the call in the model's own form
    let raw = &turn.hops[0].raw;
    assert!(
        raw.starts_with("<tool_call>\n{\"name\": \"set_light\""),
        "{raw}"
    );
    // completions tried once (404), then chat: messages and tools, no raw prompt
    let paths = server.paths();
    let tried = |p: &str| paths.iter().filter(|x| *x == p).count();
    assert_eq!(tried("/v1/completions"), 1, "{paths:?}");
    assert_eq!(tried("/v1/chat/completions"), 1, "{paths:?}");
    let seen = server.seen.lock().unwrap().clone();
    let chat = &seen
        .iter()
        .find(|s| s.path == "/v1/chat/completions")
        .unwrap()
        .body;
    assert!(chat.get("prompt").is_none(), "{chat}");
    assert_eq!(chat["messages"][0]["role"], "system");
    let user = chat["messages"].as_array().unwrap().last().unwrap();
    assert_eq!(user["content"], "turn on the kitchen light");
    let tools = chat["tools"].as_array().unwrap();
    assert!(
        tools.iter().any(|t| t["function"]["name"] == "set_light"),
        "{chat}"
    );
    assert_eq!(chat["stream"], json!(true));
    assert_eq!(chat["temperature"], json!(0.0));
    text.stop().await;
}

#[tokio::test]
async fn with_no_server_the_intents_answer_and_the_model_is_an_apology() {
    let port = TcpListener::bind("127.0.0.1:0")
        .await
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}");
    let (text, log) = runtime(&url, true, Duration::from_secs(5)).await;
    let info =
        ractor::call!(text.engine, EngineMsg::Info).expect("Info answers (the watchdog's probe)");
    assert!(info.model.contains(&url), "{info:?}");
    let turn = ask(&text, "turn on the kitchen light").await;
    assert_eq!(turn.path, Handled::Intent, "{turn:?}");
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "kitchen on\n");
    let t = Instant::now();
    let turn = ask(&text, "tell me a joke").await;
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    assert_eq!(turn.path, Handled::Llm);
    assert_eq!(turn.reply, MODEL_UNAVAILABLE);
    let hook = turn.hops[0].hook.clone().unwrap_or_default();
    assert!(
        hook.contains(&url) && hook.contains("not answering"),
        "{hook}"
    );

    // the server comes up on that port: the next request uses it
    let listener = TcpListener::bind(("127.0.0.1", port)).await.unwrap();
    let server = serve(
        listener,
        vec![Answer::Stream(
            vec!["Knock, ", "knock.", ""],
            Duration::ZERO,
        )],
    );
    let turn = ask(&text, "tell me a joke").await;
    assert_eq!(turn.reply, "Knock, knock.", "{turn:?}");
    assert_eq!(server.completions().len(), 1);
    text.stop().await;
}

#[tokio::test]
async fn a_silent_server_is_given_up_after_the_read_timeout() {
    let server = fake(vec![Answer::Silent]).await;
    let (text, _) = runtime(
        &format!("http://{}", server.addr),
        false,
        Duration::from_millis(500),
    )
    .await;
    let t = Instant::now();
    let turn = ask(&text, "tell me a joke").await;
    assert!(t.elapsed() < Duration::from_secs(4), "{:?}", t.elapsed());
    assert_eq!(turn.reply, MODEL_UNAVAILABLE);
    let hook = turn.hops[0].hook.clone().unwrap_or_default();
    assert!(
        hook.contains("sent nothing for 1 s") && hook.contains("read_timeout_s"),
        "{hook}"
    );
    text.stop().await;
}

#[tokio::test]
async fn garbage_is_an_apology_naming_what_was_sent() {
    for (raw, what) in [
        (
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n<html><body>Bad Gateway</body></html>\n",
            "not a stream of events",
        ),
        (
            "HTTP/1.1 502 Bad Gateway\r\ncontent-type: text/html\r\ncontent-length: 11\r\nconnection: close\r\n\r\nBad Gateway",
            "answered HTTP 502",
        ),
        (
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{}",
            "not text/event-stream",
        ),
        (
            "HTTP/1.1 401 Unauthorized\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
            "api_key_file",
        ),
    ] {
        let server = fake(vec![Answer::Raw(raw)]).await;
        let (text, _) = runtime(&format!("http://{}", server.addr), false, Duration::from_secs(5)).await;
        let turn = ask(&text, "tell me a joke").await;
        assert_eq!(turn.reply, MODEL_UNAVAILABLE, "{raw}");
        let hook = turn.hops[0].hook.clone().unwrap_or_default();
        assert!(hook.contains(what), "{what}: {hook}");
        text.stop().await;
    }
}

/// A generation straight to the engine: its text until `n` chunks came, then the cancel.
async fn generate(
    engine: &ractor::ActorRef<EngineMsg>,
    grammar: Option<&str>,
) -> tokio::sync::mpsc::UnboundedReceiver<GenEvent> {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    engine
        .cast(EngineMsg::Generate(GenRequest {
            chat: None,
            prompt: "<|im_start|>user\ncount<|im_end|>\n<|im_start|>assistant\n".into(),
            grammar: grammar.map(Arc::from),
            lazy: None,
            max_tokens: 64,
            stop: vec!["<|im_end|>".into()],
            events: tx,
            halt: Default::default(),
        }))
        .unwrap();
    rx
}

async fn engine(url: &str, grammar: RemoteGrammar) -> ractor::ActorRef<EngineMsg> {
    let mut cfg = remote(url, Duration::from_secs(5));
    cfg.grammar = grammar;
    cfg.preset_template = true;
    OpenAiEngine::spawn(cfg).await.unwrap()
}

#[tokio::test]
async fn a_cancel_ends_the_generation_at_once_and_closes_the_stream() {
    let words: Vec<&'static str> = (0..200).map(|_| " one").collect();
    let server = fake(vec![Answer::Stream(words, Duration::from_millis(30))]).await;
    let engine = engine(&format!("http://{}", server.addr), RemoteGrammar::None).await;
    let mut rx = generate(&engine, None).await;
    for _ in 0..3 {
        assert!(matches!(rx.recv().await, Some(GenEvent::Text(_))));
    }
    let t = Instant::now();
    engine.cast(EngineMsg::Cancel).unwrap();
    let done = loop {
        match rx.recv().await {
            Some(GenEvent::Done(r)) => break r,
            Some(GenEvent::Text(_)) => {}
            None => panic!("no Done"),
        }
    };
    assert!(
        t.elapsed() < Duration::from_millis(200),
        "{:?}",
        t.elapsed()
    );
    assert_eq!(done.unwrap().stop, Some(StopReason::Cancelled));
    // the server sees the connection closed at its next writes
    let deadline = Instant::now() + Duration::from_secs(2);
    while server.closed.lock().unwrap().is_empty() {
        assert!(Instant::now() < deadline, "the stream was not closed");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // and the engine goes on with the next request
    let mut rx = generate(&engine, None).await;
    let mut n = 0;
    while let Some(GenEvent::Text(_)) = rx.recv().await {
        n += 1;
        if n == 2 {
            break;
        }
    }
    assert_eq!(n, 2);
    engine.cast(EngineMsg::Cancel).unwrap();
}

#[tokio::test]
async fn a_grammar_goes_to_the_server_only_when_it_takes_llguidance() {
    let server = fake(vec![Answer::Stream(vec!["x"], Duration::ZERO)]).await;
    let url = format!("http://{}", server.addr);
    for (mode, want) in [
        (RemoteGrammar::None, None),
        (
            RemoteGrammar::Llguidance,
            Some("%llguidance {}\nstart: \"x\"\n"),
        ),
    ] {
        let engine = engine(&url, mode).await;
        let mut rx = generate(&engine, Some("start: \"x\"\n")).await;
        let stats = loop {
            if let Some(GenEvent::Done(r)) = rx.recv().await {
                break r.unwrap();
            }
        };
        assert_eq!(stats.grammar, want.is_some());
        let last = server.completions().pop().unwrap();
        assert_eq!(last["grammar"].as_str(), want, "{mode:?}");
    }
}

#[tokio::test]
async fn doctor_says_how_the_model_is_reached_and_whether_the_server_answers() {
    use hearth::doctor::{examine, DoctorOptions, Level};
    let server = fake(vec![Answer::Stream(vec!["x"], Duration::ZERO)]).await;
    let dead = TcpListener::bind("127.0.0.1:0")
        .await
        .unwrap()
        .local_addr()
        .unwrap();
    let (dir, _) = super::agent::tools_dir();
    for (addr, answers) in [(server.addr, true), (dead, false)] {
        let config = dir.join("hearth.toml");
        std::fs::write(
            &config,
            format!("[agent]\nengine = \"openai\"\n[agent.openai]\nurl = \"http://{addr}/v1\"\n"),
        )
        .unwrap();
        let report = examine(&DoctorOptions {
            config: Some(config),
            bus: Some(hearth::config::BusKind::None),
            tools: Some(dir.clone()),
            ..DoctorOptions::default()
        })
        .await;
        let find = |area: &str| {
            report
                .findings
                .iter()
                .find(|f| f.area == area)
                .unwrap_or_else(|| panic!("no {area} finding: {:?}", report.findings))
        };
        let llm = find("llm");
        assert!(
            llm.what.contains(
                "raw completions (/v1/completions; chat if the server has none), grammars not sent"
            ),
            "{llm:?}"
        );
        assert_eq!(find("grammar").level, Level::Warn);
        let server = find("llm server");
        if answers {
            assert_eq!(server.level, Level::Ok, "{server:?}");
            assert!(server.what.contains("stand-in"), "{server:?}");
        } else {
            assert_eq!(server.level, Level::Fail, "{server:?}");
            assert!(server.what.contains(&addr.to_string()), "{server:?}");
        }
        // the model file is not checked as the engine's: only the template may come from it
        assert!(report.findings.iter().all(|f| f.area != "model"));
    }
}

#[tokio::test]
async fn the_api_key_goes_as_a_bearer_token_and_is_never_shown() {
    use std::os::unix::fs::PermissionsExt;
    let server = fake(vec![Answer::Stream(vec!["Hi."], Duration::ZERO)]).await;
    let (dir, _) = super::agent::tools_dir();
    let key = dir.join("llm.key");
    std::fs::write(&key, "sk-hearth-test\n").unwrap();
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
    let mut cfg = remote(&format!("http://{}", server.addr), Duration::from_secs(5));
    cfg.api_key_file = Some(key.clone());
    let mut opts = TextOptions::new(preset());
    opts.tools_dir = Some(dir);
    opts.intents = false;
    opts.engine = EngineChoice::OpenAi(cfg.clone());
    assert!(!format!("{opts:?}").contains("sk-hearth-test"));
    let text = start_text(opts).await.unwrap();
    let turn = ask(&text, "say hi").await;
    assert_eq!(turn.reply, "Hi.");
    let seen = server.seen.lock().unwrap().clone();
    assert!(!seen.is_empty());
    for s in &seen {
        assert_eq!(
            s.auth.as_deref(),
            Some("Bearer sk-hearth-test"),
            "{}",
            s.path
        );
    }
    text.stop().await;
    // a key file others may read is refused at start, naming the file and the fix
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644)).unwrap();
    let e = OpenAiEngine::spawn(cfg).await.unwrap_err().to_string();
    assert!(e.contains("api_key_file") && e.contains("chmod"), "{e}");
    assert!(!e.contains("sk-hearth-test"), "{e}");
}
