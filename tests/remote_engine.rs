//! The remote engine (`[agent] engine = "openai"`) against the real thing: llama-cpp-python's
//! server (`python -m llama_cpp.server` in the test peers' venv, a separate process; `scripts/setup
//! --test` installs it) on the default model, Qwen2.5-Coder-0.5B. The kitchen command goes to the
//! model (intents off) and its tool runs, through `hearth ask` and its config file; the server
//! killed in the middle of a turn gives that turn a spoken apology, and the turn after the server
//! is back works, in one process; a server down at start leaves the local intents working.
//!
//! A missing model or Python package fails with the fix; locally `HEARTH_SKIP_REAL_MODEL=1`
//! skips (CI never sets it). The tests take turns (each runs its own server on two cores).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use hearth::agent::{Handled, MODEL_UNAVAILABLE};
use hearth::llm::openai::{Api, OpenAiConfig};
use hearth::preset::Preset;
use hearth::supervisor::{start_text, EngineChoice, TextOptions, TextRuntime};
use hearth::Ask;
use hearth_testkit::model::{or_skip, qwen_path};
use hearth_testkit::venv::{python, require, Venv};
use serde_json::{json, Value};

/// One test at a time: each starts a server, and the machine has two cores.
static TURNS: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    TURNS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The model and llama-cpp-python's server package, or None when skipping is asked for.
fn needs() -> Option<PathBuf> {
    let model = qwen_path()?;
    let found = require(Venv::Peers, "llama_cpp.server");
    or_skip(
        found,
        "a remote-engine test",
        "run scripts/setup --test (it installs llama-cpp-python[server])",
    )?;
    Some(model)
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// llama-cpp-python's server on `port`, its log in a file.
struct Server {
    child: Child,
    log: PathBuf,
}

impl Server {
    /// Start it and wait until `GET /v1/models` answers.
    fn start(model: &Path, port: u16, tag: &str) -> Server {
        let log =
            std::env::temp_dir().join(format!("hearth-llamacpp-{tag}-{}.log", std::process::id()));
        let out = std::fs::File::create(&log).unwrap();
        let child = Command::new(python(Venv::Peers))
            .args(["-m", "llama_cpp.server", "--model"])
            .arg(model)
            .args(["--host", "127.0.0.1", "--port", &port.to_string()])
            .args([
                "--n_ctx",
                "4096",
                "--n_threads",
                "2",
                "--n_threads_batch",
                "2",
            ])
            .current_dir("/")
            // its access log as it happens (the kill test waits for a request's line)
            .env("PYTHONUNBUFFERED", "1")
            .stdin(Stdio::null())
            .stderr(out.try_clone().unwrap())
            .stdout(out)
            .spawn()
            .expect("starting python -m llama_cpp.server (the test peers' venv)");
        let mut server = Server { child, log };
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            if let Ok(Some(status)) = server.child.try_wait() {
                panic!("the server exited ({status}):\n{}", server.log());
            }
            let up = std::net::TcpStream::connect(("127.0.0.1", port)).is_ok_and(|mut s| {
                use std::io::{Read, Write};
                let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
                let asked =
                    s.write_all(b"GET /v1/models HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
                let mut head = [0u8; 12];
                asked.is_ok() && s.read_exact(&mut head).is_ok() && head.ends_with(b"200")
            });
            if up {
                return server;
            }
            assert!(
                Instant::now() < deadline,
                "no server within 120 s:\n{}",
                server.log()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// SIGKILL: gone at once, as a crash.
    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
        let _ = std::fs::remove_file(&self.log);
    }
}

fn tools() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tools"))
}

fn state_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("hearth-remote-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn light(state: &Path, room: &str) -> String {
    std::fs::read_to_string(state.join(format!("light-{room}")))
        .unwrap_or_default()
        .trim()
        .to_string()
}

/// `hearth ask --json` with `config` (its text) and the demo tools.
fn hearth_ask(config: &str, state: &Path, request: &str) -> (Value, String) {
    let file = state.join("hearth.toml");
    std::fs::write(&file, config).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_hearth"))
        .args(["ask", request, "--json", "--config"])
        .arg(&file)
        .arg("--tools")
        .arg(tools())
        .env("HEARTH_DEMO_STATE", state)
        .env("HEARTH_LOG", "warn")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "hearth ask failed:\n{stderr}");
    let v = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{stderr}", String::from_utf8_lossy(&out.stdout)));
    (v, stderr)
}

#[test]
fn the_kitchen_command_goes_to_the_server_and_runs_its_tool() {
    let Some(model) = needs() else { return };
    let _turn = one_at_a_time();
    let port = free_port();
    let server = Server::start(&model, port, "ask");
    let state = state_dir("ask");
    std::fs::write(state.join("light-kitchen"), "on\n").unwrap();
    let config = format!(
        "[agent]\nengine = \"openai\"\nintents = false\n[agent.openai]\nurl = \"http://127.0.0.1:{port}/v1\"\nread_timeout_s = 60\n"
    );
    let (v, stderr) = hearth_ask(&config, &state, "turn off the kitchen light");
    assert_eq!(
        v["path"], "llm",
        "the model's path, not an intent:\n{v:#}\n{stderr}"
    );
    let call = &v["hops"][0]["calls"][0];
    assert_eq!(call["name"], "set_light", "{v:#}\n{}", server.log());
    assert_eq!(call["arguments"], json!({"room": "kitchen", "on": false}));
    assert_eq!(call["status"], "ok");
    assert_eq!(v["reply"], "The kitchen light is off.");
    assert_eq!(light(&state, "kitchen"), "off");
    // what the model wrote is the raw text the parser read
    let raw = v["hops"][0]["raw"].as_str().unwrap();
    assert!(raw.contains("set_light"), "{raw}");
    assert!(v["hops"][0]["stats"]["first_token_ms"].as_f64().unwrap() > 0.0);
    let _ = std::fs::remove_dir_all(&state);
}

#[test]
fn a_server_down_at_start_leaves_the_intents_working() {
    // the chat template comes from the model file here: the server is not there to ask
    let Some(_model) = qwen_path() else { return };
    let _turn = one_at_a_time();
    let port = free_port();
    let state = state_dir("down");
    let config = format!(
        "[agent]\nengine = \"openai\"\n[agent.openai]\nurl = \"http://127.0.0.1:{port}\"\n"
    );
    let (v, _) = hearth_ask(&config, &state, "turn on the bedroom light");
    assert_eq!(v["path"], "intent", "{v:#}");
    assert_eq!(v["reply"], "The bedroom light is on.");
    assert_eq!(light(&state, "bedroom"), "on");
    let t = Instant::now();
    let (v, stderr) = hearth_ask(&config, &state, "tell me a joke");
    assert!(t.elapsed() < Duration::from_secs(30), "{:?}", t.elapsed());
    assert_eq!(v["path"], "llm");
    assert_eq!(v["reply"], MODEL_UNAVAILABLE);
    let hook = v["hops"][0]["hook"].as_str().unwrap_or_default();
    assert!(hook.contains(&format!("127.0.0.1:{port}")), "{hook}");
    // one warning says why, naming the server and the fix
    let said: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("the model did not answer"))
        .collect();
    assert_eq!(said.len(), 1, "{stderr}");
    assert!(
        said[0].contains("start it, or correct `[agent.openai] url`"),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&state);
}

/// hearth's text runtime in this process on the server at `port` (`api` first), intents
/// off: every request goes to the model.
fn in_process(model: &Path, port: u16, api: Api) -> (tokio::runtime::Runtime, TextRuntime) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let mut opts = TextOptions::new(Preset::load("qwen2.5-coder").unwrap());
    opts.tools_dir = Some(tools());
    opts.model = Some(model.to_path_buf());
    opts.intents = false;
    opts.warm_next = false;
    let mut remote = OpenAiConfig::new(format!("http://127.0.0.1:{port}"));
    remote.read_timeout = Duration::from_secs(60);
    remote.api = api;
    opts.engine = EngineChoice::OpenAi(remote);
    let text = rt.block_on(start_text(opts)).expect("the runtime starts");
    (rt, text)
}

/// The chat path against the real server: the messages and tools go to
/// `/v1/chat/completions` (llama-cpp-python renders them with the model's template), and
/// what the model writes comes back as content, through the same parser.
#[test]
fn through_chat_the_kitchen_command_runs_its_tool() {
    let Some(model) = needs() else { return };
    let _turn = one_at_a_time();
    let port = free_port();
    let server = Server::start(&model, port, "chat");
    let state = state_dir("chat");
    std::env::set_var("HEARTH_DEMO_STATE", &state);
    std::fs::write(state.join("light-kitchen"), "on\n").unwrap();
    let (rt, text) = in_process(&model, port, Api::Chat);
    let turn = rt
        .block_on(hearth::agent::ask(
            &text.agent,
            Ask::new("kitchen", "turn off the kitchen light"),
        ))
        .expect("the turn ends with a reply");
    let calls: Vec<_> = turn.hops.iter().flat_map(|h| h.calls.clone()).collect();
    assert_eq!(calls.len(), 1, "{turn:#?}\n{}", server.log());
    assert_eq!(calls[0].arguments, json!({"room": "kitchen", "on": false}));
    assert_eq!(light(&state, "kitchen"), "off");
    let log = server.log();
    assert!(log.contains("\"POST /v1/chat/completions"), "{log}");
    assert!(!log.contains("\"POST /v1/completions"), "{log}");
    rt.block_on(text.stop());
    let _ = std::fs::remove_dir_all(&state);
}

/// The server's log has one more request for a completion than `before` (uvicorn logs it as
/// the response starts: the stream is open, the model is reading the prompt or writing).
fn completions_in(log: &str) -> usize {
    log.lines()
        .filter(|l| l.contains("\"POST /v1/completions"))
        .count()
}

#[test]
fn a_server_killed_mid_turn_gives_an_apology_and_the_turn_after_its_restart_works() {
    let Some(model) = needs() else { return };
    let _turn = one_at_a_time();
    let port = free_port();
    let mut server = Server::start(&model, port, "kill");
    let state = state_dir("kill");
    std::env::set_var("HEARTH_DEMO_STATE", &state);
    let (rt, text) = in_process(&model, port, Api::Completions);
    let ask = |request: &str| {
        rt.block_on(hearth::agent::ask(
            &text.agent,
            Ask::new("kitchen", request),
        ))
        .expect("the turn ends with a reply")
    };

    let turn = ask("turn off the kitchen light");
    assert_eq!(turn.path, Handled::Llm);
    assert_eq!(turn.reply, "The kitchen light is off.", "{turn:?}");
    assert_eq!(light(&state, "kitchen"), "off");

    // a request for the model; the server dies once it is being answered
    let before = completions_in(&server.log());
    let agent = text.agent.clone();
    let asked = rt.spawn(async move {
        let t = Instant::now();
        let turn = hearth::agent::ask(
            &agent,
            Ask::new(
                "story",
                "Tell me a long story about a dragon who guards a castle.",
            ),
        )
        .await;
        (turn, t.elapsed())
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    while completions_in(&server.log()) == before {
        assert!(
            Instant::now() < deadline,
            "the request never reached the server:\n{}",
            server.log()
        );
        assert!(
            !asked.is_finished(),
            "the turn ended before the server got it"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let killed = Instant::now();
    server.kill();
    let (turn, _) = rt.block_on(asked).unwrap();
    let turn = turn.expect("a turn, not an error");
    assert!(
        killed.elapsed() < Duration::from_secs(20),
        "{:?} after the kill",
        killed.elapsed()
    );
    assert!(turn.reply.ends_with(MODEL_UNAVAILABLE), "{turn:?}");
    let hook = turn
        .hops
        .last()
        .and_then(|h| h.hook.clone())
        .unwrap_or_default();
    assert!(hook.contains(&format!("127.0.0.1:{port}")), "{hook}");

    // while it is down, a request is answered at once
    let t = Instant::now();
    let turn = ask("turn on the kitchen light");
    assert_eq!(turn.reply, MODEL_UNAVAILABLE);
    assert!(t.elapsed() < Duration::from_secs(20), "{:?}", t.elapsed());
    assert_eq!(light(&state, "kitchen"), "off");

    // back: the same process uses it again
    let _server = Server::start(&model, port, "kill-again");
    let turn = ask("turn on the kitchen light");
    assert_eq!(turn.reply, "The kitchen light is on.", "{turn:?}");
    assert_eq!(light(&state, "kitchen"), "on");
    rt.block_on(text.stop());
    let _ = std::fs::remove_dir_all(&state);
}
