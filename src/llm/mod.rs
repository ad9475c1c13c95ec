//! The LLM side: the core's engine protocol, chat templates, grammars and the remote and
//! scripted engines (`hearth_core::llm`), and the llama.cpp engine actor in this process
//! (feature `llm`).

pub use hearth_core::llm::*;

#[cfg(feature = "llm")]
pub(crate) mod llama;
