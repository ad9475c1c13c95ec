//! The LLM side: chat templates (minijinja), grammars (llguidance Lark), the engine message
//! protocol, the llama.cpp engine actor (feature `llm`), the remote engine (a model behind an
//! OpenAI-compatible server) and a scripted engine for tests.

mod engine;
mod gguf;
mod grammar;
#[cfg(feature = "llm")]
pub mod llama;
pub mod openai;
pub mod scripted;
mod template;

pub use crate::preset::GrammarShape;
pub use engine::{
    ChatPrompt, EngineError, EngineInfo, EngineMsg, GenEvent, GenRequest, GenStats, StopReason,
};
pub use grammar::{check_schema, GrammarError, LazyGrammar, REPLY_LARK};
pub(crate) use grammar::{GrammarCache, ToolChoice};
pub(crate) use template::{python_json, TemplateCaps};
pub use template::{ChatMessage, ChatTemplate, TemplateError};
