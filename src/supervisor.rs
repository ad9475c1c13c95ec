//! Wiring: starts the actors and hands out their addresses. Only this module knows the
//! whole graph. Text mode for now (engine, tools, agent); the voice stages and restarts
//! join in issue #4.

use std::path::PathBuf;

use ractor::{Actor, ActorRef};

use crate::agent::{Agent, AgentArgs, AgentConfig, AgentError, AgentMsg};
use crate::llm::{EngineError, EngineMsg};
use crate::models::ModelError;
use crate::preset::Preset;
use crate::tools::{Registry, ToolsActor, ToolsError, ToolsMsg};

/// What text mode needs.
#[derive(Debug, Clone)]
pub struct TextOptions {
    pub preset: Preset,
    /// A directory of `*.toml` tool manifests (built-ins only when None).
    pub tools_dir: Option<PathBuf>,
    /// The model file; None = the preset's model in the model directory.
    pub model: Option<PathBuf>,
    pub n_ctx: u32,
    pub threads: Option<i32>,
    /// Keep the KV cache in this file across processes (see `LlamaConfig::prompt_cache`).
    pub prompt_cache: Option<PathBuf>,
}

impl TextOptions {
    pub fn new(preset: Preset) -> Self {
        TextOptions {
            preset,
            tools_dir: None,
            model: None,
            n_ctx: 4096,
            threads: None,
            prompt_cache: None,
        }
    }
}

/// The running actors.
pub struct TextRuntime {
    pub agent: ActorRef<AgentMsg>,
    pub engine: ActorRef<EngineMsg>,
    pub tools: ActorRef<ToolsMsg>,
}

/// Why start-up failed; each names the fix.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("preset {0:?} names no model file; give one with --model FILE or add a [model] table (file, url, sha256) to the preset")]
    NoModel(String),
    #[error(transparent)]
    Model(#[from] ModelError),
    #[error(transparent)]
    Tools(#[from] ToolsError),
    #[error(transparent)]
    Engine(#[from] EngineError),
    #[error(transparent)]
    Agent(#[from] AgentError),
    #[error("the {0} actor failed to start: {1}")]
    Spawn(&'static str, String),
    #[error("this build has no LLM engine (built without the `llm` feature); rebuild with default features")]
    NoEngine,
}

/// The model file for `opts`: explicit, else the preset's in the model directory (checked).
pub fn model_path(opts: &TextOptions) -> Result<PathBuf, StartError> {
    if let Some(p) = &opts.model {
        return Ok(p.clone());
    }
    let source = opts
        .preset
        .model
        .as_ref()
        .ok_or_else(|| StartError::NoModel(opts.preset.name.clone()))?;
    Ok(crate::models::locate(source)?)
}

/// Where one-shot commands keep the KV cache for `model`: beside the model directory,
/// named by the model's identity (the preset's sha256, else size and mtime) and the context
/// length, so a different model or context never loads a stale state.
pub fn prompt_cache_path(opts: &TextOptions, model: &std::path::Path) -> Option<PathBuf> {
    let stem = model.file_stem()?.to_string_lossy().into_owned();
    let identity = match (&opts.model, &opts.preset.model) {
        (None, Some(src)) => src.sha256.chars().take(16).collect::<String>(),
        _ => {
            let meta = std::fs::metadata(model).ok()?;
            let mtime = meta
                .modified()
                .ok()?
                .duration_since(std::time::UNIX_EPOCH)
                .ok()?
                .as_secs();
            format!("{}-{mtime}", meta.len())
        }
    };
    let dir = crate::models::model_dir().ok()?.join("prompt-cache");
    Some(dir.join(format!("{stem}-{identity}-ctx{}.kv", opts.n_ctx)))
}

/// Start the tools actor from a manifest directory (or built-ins only).
pub async fn start_tools(dir: Option<&std::path::Path>) -> Result<ActorRef<ToolsMsg>, StartError> {
    let registry = match dir {
        Some(d) => Registry::load_dir(d)?,
        None => Registry::builtins(),
    };
    let (tools, _) = Actor::spawn(None, ToolsActor, std::sync::Arc::new(registry))
        .await
        .map_err(|e| StartError::Spawn("tools", e.to_string()))?;
    Ok(tools)
}

/// Start the engine (model loaded), the tools and the agent.
pub async fn start_text(opts: TextOptions) -> Result<TextRuntime, StartError> {
    let tools = start_tools(opts.tools_dir.as_deref()).await?;
    let engine = start_engine(&opts).await?;
    let agent = Agent::spawn(AgentArgs {
        cfg: AgentConfig::new(opts.preset.clone()),
        engine: engine.clone(),
        tools: tools.clone(),
    })
    .await?;
    Ok(TextRuntime {
        agent,
        engine,
        tools,
    })
}

#[cfg(feature = "llm")]
async fn start_engine(opts: &TextOptions) -> Result<ActorRef<EngineMsg>, StartError> {
    use crate::llm::llama::{LlamaConfig, LlamaEngine};
    let mut cfg = LlamaConfig::new(model_path(opts)?);
    cfg.n_ctx = opts.n_ctx;
    if let Some(t) = opts.threads {
        cfg.n_threads = t;
    }
    cfg.prompt_cache = opts.prompt_cache.clone();
    Ok(LlamaEngine::spawn(cfg).await?)
}

#[cfg(not(feature = "llm"))]
async fn start_engine(_opts: &TextOptions) -> Result<ActorRef<EngineMsg>, StartError> {
    Err(StartError::NoEngine)
}
