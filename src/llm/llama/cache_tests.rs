//! The engine's prompt cache on the real model (Qwen2.5-Coder-0.5B, `scripts/fetch-models`):
//! what the KV cache keeps across retries and cuts, and what the prompt-cache file carries to
//! the next process. A missing model fails each test with the fix; `HEARTH_SKIP_REAL_MODEL=1`
//! skips locally (CI never sets it).

use std::path::Path;
use std::sync::{Mutex, MutexGuard};

use hearth_core::llm::{EngineMsg, GenStats};
use hearth_testkit::model::qwen_path;
use ractor::ActorRef;

use super::{LlamaConfig, LlamaEngine};

/// One model in memory at a time: the tests run in parallel, and two cores share them.
fn one_model_at_a_time() -> MutexGuard<'static, ()> {
    static ONE: Mutex<()> = Mutex::new(());
    ONE.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A test's own runtime, as the daemon's: two workers.
fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// The model in process with an `n_ctx`-token context.
async fn engine_of(model: &Path, n_ctx: u32) -> ActorRef<EngineMsg> {
    let mut cfg = LlamaConfig::new(model.to_path_buf());
    cfg.n_ctx = n_ctx;
    LlamaEngine::spawn(cfg).await.unwrap()
}

/// `text` evaluated into the engine's cache.
async fn prefilled(engine: &ActorRef<EngineMsg>, text: String) -> GenStats {
    ractor::call!(engine, EngineMsg::Prefill, text)
        .unwrap()
        .unwrap()
}

/// Four tokens generated after `prompt`: the generation's figures.
async fn four_tokens(engine: &ActorRef<EngineMsg>, prompt: &str) -> GenStats {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    engine
        .cast(EngineMsg::Generate(hearth_core::llm::GenRequest {
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
        if let hearth_core::llm::GenEvent::Done(d) = rx.recv().await.unwrap() {
            return d.unwrap();
        }
    }
}

/// The prompt-cache file carries the warmed prefix (system prompt, tools) to the next
/// process, and nothing of a request: a generation never writes it.
#[test]
fn a_prompt_cache_file_carries_the_warmed_prefix_and_no_request() {
    let Some(model) = qwen_path() else { return };
    let _one = one_model_at_a_time();
    let rt = runtime();
    let file = std::env::temp_dir().join(format!("hearth-kv-{}.kv", std::process::id()));
    let _ = std::fs::remove_file(&file);
    let prefix = "<|im_start|>system\nYou are hearth.<|im_end|>\n<|im_start|>user\n";
    let prompt = format!("{prefix}Say hi.<|im_end|>\n<|im_start|>assistant\n");
    let run = |warm: bool| {
        rt.block_on(async {
            let mut cfg = LlamaConfig::new(model.clone());
            cfg.n_ctx = 1024;
            cfg.prompt_cache = Some(file.clone());
            let engine = LlamaEngine::spawn(cfg).await.unwrap();
            let warmed = if warm {
                let w = ractor::call!(engine, EngineMsg::Prefill, prefix.to_string())
                    .unwrap()
                    .unwrap();
                Some(w.prompt_tokens)
            } else {
                None
            };
            let stats = four_tokens(&engine, &prompt).await;
            engine.stop_and_wait(None, None).await.unwrap();
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

#[test]
fn retries_without_the_conversation_leave_it_cached() {
    // The engine's prompts as a long voice session makes them: the conversation, a retry
    // asked without it, the conversation again (the next turn), a second retry that shares
    // more with the first than with the conversation; then the history cut back (the
    // conversation goes on in the other sequence, the longer one before the cut left stale)
    // and a third retry. After each retry the conversation must still be cached: once, the
    // warm-up after a retry found 1583 of 2377 tokens gone and took 19.8 s, and once, after
    // a cut, a retry took the place of the shorter, live conversation (5.5 s).
    let Some(model) = qwen_path() else { return };
    let _one = one_model_at_a_time();
    let rt = runtime();
    rt.block_on(async {
        let engine = engine_of(&model, 2048).await;
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
        engine.stop_and_wait(None, None).await.unwrap();
    });
}

#[test]
fn a_full_cache_empties_a_retry_before_the_conversation() {
    // The cache holds the conversation and a retry; a second retry finds no cells left. The
    // least recently used sequence (the first retry) is emptied, not the conversation: once,
    // every other sequence was, and a 3,000-token conversation was evaluated again (12 s,
    // three turns stalled, Home Assistant's house).
    let Some(model) = qwen_path() else { return };
    let _one = one_model_at_a_time();
    let rt = runtime();
    rt.block_on(async {
        let engine = engine_of(&model, 512).await;
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
        engine.stop_and_wait(None, None).await.unwrap();
    });
}

#[test]
fn a_daemon_writes_its_prompt_cache_after_the_warm_up_only() {
    let Some(model) = qwen_path() else { return };
    let _one = one_model_at_a_time();
    let rt = runtime();
    let file = std::env::temp_dir().join(format!("hearth-kv-daemon-{}.kv", std::process::id()));
    let _ = std::fs::remove_file(&file);
    rt.block_on(async {
        let mut cfg = LlamaConfig::new(model.clone());
        cfg.n_ctx = 1024;
        cfg.prompt_cache = Some(file.clone());
        let engine = LlamaEngine::spawn(cfg).await.unwrap();
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
        engine.stop_and_wait(None, None).await.unwrap();
    });
    let _ = std::fs::remove_file(&file);
}
