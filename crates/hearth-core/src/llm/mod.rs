//! The LLM side: chat templates (minijinja), grammars (llguidance Lark), the engine message
//! protocol, the remote engine (a model behind an OpenAI-compatible server) and a scripted
//! engine for tests. The llama.cpp engine actor is the `hearth` crate's (`hearth::llm::llama`):
//! it speaks this protocol.

mod engine;
mod gguf;
mod grammar;
pub mod openai;
pub mod scripted;
mod template;

pub use crate::preset::GrammarShape;
pub use engine::{
    CancelWatermark, ChatPrompt, EngineError, EngineInfo, EngineMsg, GenEvent, GenRequest,
    GenStats, StopReason, StopScanner,
};
pub use grammar::{check_schema, GrammarError, LazyGrammar, GRAMMARS_KEPT, REPLY_LARK};
pub(crate) use grammar::{GrammarCache, ToolChoice};
pub(crate) use template::{python_json, TemplateCaps};
pub use template::{ChatMessage, ChatTemplate, TemplateError};
