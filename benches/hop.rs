//! The hop loop on the real model: `cargo bench --bench hop`.
//!
//! For "turn on the kitchen light" with the demo tools, reports prompt tokens evaluated,
//! time to first token, generation tokens/s, grammar overhead per token, and text to
//! executed tool, cold (a fresh engine: nothing cached) and with the cached prefix (later
//! turns in new sessions: the system prompt and tool list are already in the KV cache).
//! Also the cancel latency: from a Cancel message to the end of the generation.
//!
//! Needs the model (`scripts/fetch-models`). `HEARTH_BENCH_RUNS` sets the runs (default 5).
//!
//! `cargo bench --bench hop -- --remote URL`: the same requests through the remote engine
//! (`[agent] engine = "openai"`) and the OpenAI-compatible server at `URL`, for the
//! comparison with the model in process (docs/measurements.md's table runs llama-cpp-python's
//! server on the same machine, with the same threads). "Cold" is then a fresh engine in hearth: the
//! server keeps its own cache. The prompt's token counts are the server's to know
//! (llama-cpp-python does not say them): shown as `-`.

use std::path::PathBuf;
use std::time::Instant;

use hearth::agent::{AgentMsg, Ask, Turn};
use hearth::llm::openai::OpenAiConfig;
use hearth::llm::{EngineMsg, GenEvent, GenRequest};
use hearth::preset::{Preset, ToolChoicePolicy};
use hearth::supervisor::{start_text, EngineChoice, TextOptions};
use ractor::ActorRef;

/// `--remote URL`: the server the remote engine asks, or none (llama.cpp in process).
fn remote_url() -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    let at = args.iter().position(|a| a == "--remote")?;
    args.get(at + 1).cloned()
}

/// The text options of every run: the preset, the engine.
fn options(remote: Option<&str>) -> TextOptions {
    let mut opts = TextOptions::new(Preset::load("qwen2.5-coder").expect("preset"));
    if let Some(url) = remote {
        let mut cfg = OpenAiConfig::new(url);
        // a cold prompt on a loaded machine may take longer than a daemon should wait
        cfg.read_timeout = std::time::Duration::from_secs(120);
        opts.engine = EngineChoice::OpenAi(cfg);
    }
    opts
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    if v.is_empty() {
        f64::NAN
    } else {
        v[v.len() / 2]
    }
}

async fn ask(agent: &ActorRef<AgentMsg>, session: &str, text: &str) -> Turn {
    hearth::agent::ask(agent, Ask::new(session, text))
        .await
        .expect("turn succeeds")
}

struct Row {
    evaluated: f64,
    prompt: f64,
    ttft: f64,
    tok_s: f64,
    sample_per_tok: f64,
    to_tool: f64,
    total: f64,
}

fn row(t: &Turn) -> Row {
    let s = &t.hops[0].stats;
    Row {
        evaluated: s.evaluated_tokens as f64,
        prompt: s.prompt_tokens as f64,
        ttft: s.first_token_ms,
        tok_s: if s.generation_ms > 0.0 {
            s.generated_tokens as f64 / (s.generation_ms / 1e3)
        } else {
            f64::NAN
        },
        sample_per_tok: s.sample_ms / (s.generated_tokens.max(1) as f64),
        to_tool: t.timings_ms.text_to_tool.unwrap_or(f64::NAN),
        total: t.timings_ms.total,
    }
}

fn report(name: &str, rows: &[Row]) {
    let m = |f: fn(&Row) -> f64| median(rows.iter().map(f).collect());
    let tokens = if m(|r| r.prompt) > 0.0 {
        format!("{:>4.0}/{:<4.0}", m(|r| r.evaluated), m(|r| r.prompt))
    } else {
        format!("{:>4}/{:<4}", "-", "-")
    };
    println!(
        "{name:<44} evaluated {tokens} tokens  ttft {:>7.1} ms  gen {:>5.1} tok/s  sampler {:>5.2} ms/tok  text→tool {:>7.1} ms  total {:>7.1} ms",
        m(|r| r.ttft),
        m(|r| r.tok_s),
        m(|r| r.sample_per_tok),
        m(|r| r.to_tool),
        m(|r| r.total),
    );
}

fn main() {
    let runs: usize = std::env::var("HEARTH_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    let state = std::env::temp_dir().join(format!("hearth-bench-{}", std::process::id()));
    std::fs::create_dir_all(&state).expect("temp dir");
    std::env::set_var("HEARTH_DEMO_STATE", &state);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let remote = remote_url();
    let remote = remote.as_deref();
    match remote {
        Some(url) => println!("engine: the remote engine, {url}"),
        None => println!("engine: llama.cpp in process"),
    }
    println!(
        "load average: {}",
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .trim()
    );
    rt.block_on(async {
        let kitchen = "turn on the kitchen light";
        for (label, policy) in [
            ("auto", ToolChoicePolicy::Auto),
            ("required_first_hop (grammar)", ToolChoicePolicy::RequiredFirstHop),
        ] {
            let label = match (remote, policy) {
                (Some(_), ToolChoicePolicy::RequiredFirstHop) => "required_first_hop (not sent)",
                _ => label,
            };
            let mut cold = Vec::new();
            let mut warm = Vec::new();
            for run in 0..runs.min(3) {
                // Cold: a fresh engine, nothing in the KV cache (in process).
                let mut opts = options(remote);
                opts.preset.tool_choice_policy = policy;
                // the model's hop is measured: the demo tools' intents would answer first
                opts.intents = false;
                opts.tools_dir = Some(PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tools")));
                let text = start_text(opts).await.expect("start (run scripts/fetch-models first)");
                cold.push(row(&ask(&text.agent, "cold", kitchen).await));
                if run == 0 {
                    for i in 0..runs {
                        // Another request first, so the KV cache holds a different prompt:
                        // only the shared prefix (system prompt, tools) is reusable.
                        ask(&text.agent, &format!("other{i}"), "turn off the bedroom light").await;
                        warm.push(row(&ask(&text.agent, &format!("warm{i}"), kitchen).await));
                    }
                }
                text.stop().await;
            }
            report(&format!("{label}, cold"), &cold);
            report(&format!("{label}, cached prefix"), &warm);
        }

        // Cancel latency: from the Cancel message to Done.
        let text = start_text(options(remote)).await.expect("start");
        let mut lat = Vec::new();
        for _ in 0..runs {
            let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
            text.engine
                .cast(EngineMsg::Generate(GenRequest {
                    chat: None,
                    prompt: "<|im_start|>user\nCount from one to five hundred in words.<|im_end|>\n<|im_start|>assistant\n".into(),
                    grammar: None,
                    lazy: None,
                    halt: Default::default(),
                    max_tokens: 300,
                    stop: vec![],
                    events: tx,
                }))
                .expect("engine");
            let mut n = 0;
            while let Some(GenEvent::Text(_)) = rx.recv().await {
                n += 1;
                if n == 5 {
                    break;
                }
            }
            let t = Instant::now();
            text.engine.cast(EngineMsg::Cancel).expect("engine");
            while let Some(ev) = rx.recv().await {
                if matches!(ev, GenEvent::Done(_)) {
                    break;
                }
            }
            lat.push(t.elapsed().as_secs_f64() * 1e3);
        }
        println!(
            "cancel latency: median {:.1} ms, max {:.1} ms",
            median(lat.clone()),
            lat.iter().cloned().fold(0.0, f64::max)
        );
        text.stop().await;
    });
}
