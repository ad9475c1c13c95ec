//! The engine's message protocol: what the agent sends an LLM engine actor and what streams
//! back. Three actors speak it: the llama.cpp engine (`hearth::llm::llama`, in the hearth
//! crate, feature `llm`), the remote engine ([`super::openai`]: a model on another machine,
//! over HTTP) and the scripted engine ([`super::scripted`]) that replays fixed outputs for the
//! hop loop's unit tests. None knows the agent; the agent knows only these types.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use ractor::RpcReplyPort;
use serde::Serialize;
use tokio::sync::mpsc;

use super::grammar::LazyGrammar;

/// One generation: a rendered prompt in, text chunks out.
#[derive(Debug)]
pub struct GenRequest {
    pub prompt: String,
    /// The same prompt as chat messages, for an engine whose server takes no raw prompt
    /// (the remote engine's chat path); the others read `prompt` alone.
    pub chat: Option<Arc<ChatPrompt>>,
    /// A Lark grammar (llguidance) the output must follow, or none.
    pub grammar: Option<Arc<str>>,
    /// With no `grammar`: one the output is held to once it begins a call.
    pub lazy: Option<Arc<LazyGrammar>>,
    pub max_tokens: usize,
    /// Generation stops before any of these strings (they are not emitted).
    pub stop: Vec<String>,
    /// Where the text chunks and the final [`GenEvent::Done`] go.
    pub events: mpsc::UnboundedSender<GenEvent>,
    /// Set by the caller when it wants no more of this generation: it stops at the next
    /// token with [`StopReason::Halted`] (other jobs go on, unlike `Cancel`).
    pub halt: Arc<AtomicBool>,
}

/// A prompt as chat messages and tools (OpenAI's shape), with how the model writes a call
/// (the preset's `[grammar]`): a call a server returns natively is handed to the parser
/// written that way, as the model would have written it.
#[derive(Debug, Clone)]
pub struct ChatPrompt {
    pub messages: Vec<super::ChatMessage>,
    pub tools: serde_json::Value,
    pub calls: Option<super::GrammarShape>,
}

/// What streams back from a generation.
#[derive(Debug, Clone, PartialEq)]
pub enum GenEvent {
    /// Text as soon as it is complete UTF-8 and cannot be the start of a stop string.
    Text(String),
    /// The end: statistics, or why it failed.
    Done(Result<GenStats, EngineError>),
}

/// Why generation stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    EndOfTurn,
    StopString,
    MaxTokens,
    Cancelled,
    /// The caller wanted no more ([`GenRequest::halt`]).
    Halted,
}

/// Figures of one generation (they feed `hearth ask --json` and the benchmark).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct GenStats {
    /// Tokens in the prompt.
    pub prompt_tokens: usize,
    /// Prompt tokens whose KV entries were reused from the previous prompt.
    pub cached_tokens: usize,
    /// Prompt tokens evaluated now (`prompt_tokens - cached_tokens`).
    pub evaluated_tokens: usize,
    pub generated_tokens: usize,
    /// Of those, the tokens the grammar forced (evaluated in one batch, not chosen by the
    /// model: names, keys, punctuation of a call).
    pub forced_tokens: usize,
    /// Of those, the tokens of a call's opener drafted and found to be the model's own
    /// choices (evaluated in one batch with the token before them).
    pub drafted_tokens: usize,
    pub prompt_eval_ms: f64,
    /// From the request to the first sampled token.
    pub first_token_ms: f64,
    pub generation_ms: f64,
    /// Time inside the sampler (grammar masking plus greedy choice).
    pub sample_ms: f64,
    pub grammar: bool,
    pub stop: Option<StopReason>,
}

/// Engine failures; each message says what to do.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EngineError {
    #[error("the model could not be loaded from {path}: {reason}; check the file with `hearth models verify <preset>` or fetch it again with `hearth models pull <preset>`")]
    Load { path: String, reason: String },
    #[error("the prompt has {prompt_tokens} tokens and {max_tokens} more are reserved for the answer, but the context holds {n_ctx}; shorten the history or raise `n_ctx`")]
    ContextOverflow {
        prompt_tokens: usize,
        max_tokens: usize,
        n_ctx: usize,
    },
    #[error("the grammar does not compile: {0}")]
    Grammar(String),
    #[error("llama.cpp failed while {stage}: {reason}")]
    Llama { stage: &'static str, reason: String },
    #[error("the engine has stopped (its worker thread ended); restart hearth")]
    Gone,
    /// The remote engine's server cannot be reached (refused, no route, a broken connection).
    #[error("the LLM server at {url} is not answering ({reason}); start it, or correct `[agent.openai] url`")]
    Unreachable { url: String, reason: String },
    /// The server sent nothing for the read timeout.
    #[error("the LLM server at {url} sent nothing for {secs} s: it is overloaded or stuck; look at it, or raise `[agent.openai] read_timeout_s`")]
    Timeout { url: String, secs: u64 },
    /// The server answered something hearth cannot use, or reported an error.
    #[error("the LLM server at {url} {what}; `[agent.openai] url` must name an OpenAI-compatible server (llama.cpp's llama-server, llama-cpp-python, vLLM, Ollama), and its log may say more")]
    BadAnswer { url: String, what: String },
    /// The server has no such endpoint (HTTP 404).
    #[error("the LLM server at {url} has no {path} (HTTP 404); `[agent.openai] url` must name an OpenAI-compatible server (llama.cpp's llama-server, llama-cpp-python, vLLM, Ollama)")]
    NoEndpoint { url: String, path: String },
    /// The server refused the API key (or wants one).
    #[error("the LLM server at {url} refused the request (HTTP {status}): put the API key it expects in the file `[agent.openai] api_key_file` names")]
    Refused { url: String, status: u16 },
    /// The API key file cannot be used.
    #[error("[agent.openai] api_key_file {file} {problem}")]
    ApiKey { file: String, problem: String },
    /// No chat template for the remote model: the server reports none and none is here.
    #[error("the chat template of the model at {url} is unknown: {why}")]
    NoTemplate { url: String, why: String },
}

impl EngineError {
    /// The remote server failed this request (down, slow, garbage, a refused key): the turn
    /// answers with an apology and hearth goes on; the next request tries again.
    pub fn is_unavailable(&self) -> bool {
        matches!(
            self,
            EngineError::Unreachable { .. }
                | EngineError::Timeout { .. }
                | EngineError::BadAnswer { .. }
                | EngineError::NoEndpoint { .. }
                | EngineError::Refused { .. }
        )
    }
}

/// Facts about the loaded model the agent needs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EngineInfo {
    /// The GGUF's `tokenizer.chat_template`, if it has one.
    pub chat_template: Option<String>,
    pub bos_token: String,
    pub eos_token: String,
    pub n_ctx: usize,
    pub model: String,
    /// Prompts the engine keeps cached side by side: a prompt that departs from the
    /// conversation (a retry, the words prompt) leaves it cached only when this is more than
    /// one. The model in process: its KV cache's sequences; a remote server: 1 (it keeps the
    /// last prompt).
    pub sequences: usize,
}

/// The one message enum of an engine actor.
#[derive(Debug)]
pub enum EngineMsg {
    /// Start a generation (queued behind the current one).
    Generate(GenRequest),
    /// Stop the current generation and drop queued ones; each ends with
    /// `Done(Ok(stats))` where `stats.stop == Some(Cancelled)`.
    Cancel,
    /// Evaluate `prompt` into the KV cache and generate nothing (queued like a
    /// generation, cancelled like one): a later prompt that begins with it evaluates only
    /// what follows. The agent warms the prefix the next turn will begin with this way.
    Prefill(String, RpcReplyPort<Result<GenStats, EngineError>>),
    /// Compile this grammar now (queued like a generation), so that a later request under
    /// it starts at once: the agent's warm-up sends the lazy grammar of its tool set (the
    /// first one also builds the tokenizer's trie, ~0.4 s for a 150k vocabulary).
    Compile(Arc<str>),
    /// How many tokens `text` is (for trimming history to the context).
    CountTokens(String, RpcReplyPort<usize>),
    Info(RpcReplyPort<EngineInfo>),
}

/// Generation ids and the cancel watermark an engine shares with whatever runs its jobs:
/// `Cancel` cancels every job issued so far (running or queued) and none issued after.
#[derive(Debug, Clone, Default)]
pub struct CancelWatermark {
    issued: Arc<AtomicU64>,
    cancelled_upto: Arc<AtomicU64>,
}

impl CancelWatermark {
    pub fn new() -> Self {
        Self::default()
    }

    /// The id of a new job.
    pub fn issue(&self) -> u64 {
        self.issued.fetch_add(1, Ordering::SeqCst) + 1
    }

    /// Cancel every job issued so far.
    pub fn cancel_all(&self) {
        self.cancelled_upto
            .store(self.issued.load(Ordering::SeqCst), Ordering::SeqCst);
    }

    pub fn is_cancelled(&self, id: u64) -> bool {
        self.cancelled_upto.load(Ordering::SeqCst) >= id
    }
}

/// Holds back the tail of streamed text that could still become a stop string, and cuts at
/// one when it appears (the remote engine's too: a server that missed one is held to it).
#[derive(Debug, Default)]
pub struct StopScanner {
    stops: Vec<String>,
    buf: String,
}

impl StopScanner {
    pub fn new(stops: Vec<String>) -> Self {
        StopScanner {
            stops: stops.into_iter().filter(|s| !s.is_empty()).collect(),
            buf: String::new(),
        }
    }

    /// Add text; returns what may be emitted now and whether a stop string was hit (the
    /// returned text then ends right before it).
    pub fn push(&mut self, text: &str) -> (String, bool) {
        self.buf.push_str(text);
        if let Some(cut) = self.stops.iter().filter_map(|s| self.buf.find(s)).min() {
            let out = self.buf[..cut].to_string();
            self.buf.clear();
            return (out, true);
        }
        // Keep the longest suffix that is a proper prefix of some stop string.
        let keep = self
            .stops
            .iter()
            .map(|s| {
                (1..s.len())
                    .rev()
                    .find(|&k| {
                        s.is_char_boundary(k)
                            && self.buf.len() >= k
                            && self.buf.is_char_boundary(self.buf.len() - k)
                            && self.buf.ends_with(&s[..k])
                    })
                    .unwrap_or(0)
            })
            .max()
            .unwrap_or(0);
        let out = self.buf[..self.buf.len() - keep].to_string();
        self.buf.drain(..self.buf.len() - keep);
        (out, false)
    }

    /// The held-back tail at the end of generation.
    pub fn finish(&mut self) -> String {
        std::mem::take(&mut self.buf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cancel_watermark_cancels_what_was_issued_only() {
        let w = CancelWatermark::new();
        let (a, b) = (w.issue(), w.issue());
        assert!(!w.is_cancelled(a));
        w.cancel_all();
        assert!(w.is_cancelled(a) && w.is_cancelled(b));
        let c = w.clone().issue();
        assert!(!w.is_cancelled(c));
    }

    #[test]
    fn stop_scanner_holds_prefixes_and_cuts() {
        let mut s = StopScanner::new(vec!["<|im_end|>".into(), "\nUser:".into()]);
        assert_eq!(s.push("Hello <|im"), ("Hello ".to_string(), false));
        assert_eq!(s.push("_en"), (String::new(), false));
        assert_eq!(s.push("d|> tail"), (String::new(), true));
        let mut s = StopScanner::new(vec!["STOP".into()]);
        assert_eq!(s.push("a S"), ("a ".to_string(), false));
        assert_eq!(s.push("x"), ("Sx".to_string(), false));
        assert_eq!(s.push("ST"), (String::new(), false));
        assert_eq!(s.finish(), "ST");
        let mut none = StopScanner::new(vec![]);
        assert_eq!(none.push("all of it"), ("all of it".to_string(), false));
    }
}
