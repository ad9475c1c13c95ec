//! `hearth ask`: one turn from text. The model decides, tools run, the reply is printed as
//! it settles (or as one JSON object with `--json`).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use hearth::{start_text, Ask, Flags, Settings, TextOptions, Turn};
use serde_json::Value;

#[derive(clap::Args)]
pub struct Args {
    /// What the user said.
    text: String,
    /// Model preset (see `hearth presets`) or a preset .toml file. Default: the config
    /// file's [agent] preset, else qwen2.5-coder.
    #[arg(long)]
    preset: Option<String>,
    /// The configuration file (default: $HEARTH_CONFIG, else hearth.toml in
    /// $CONFIGURATION_DIRECTORY, ~/.config/hearth or /etc/hearth, if there is one).
    #[arg(long)]
    config: Option<PathBuf>,
    /// Directory of tool manifests (*.toml). Default: $HEARTH_TOOLS, else ./tools if present.
    #[arg(long)]
    tools: Option<PathBuf>,
    /// The model file (default: the preset's model in the model directory).
    #[arg(long)]
    model: Option<PathBuf>,
    /// Print one JSON object: reply, hops (raw, calls, telemetry), timings.
    #[arg(long)]
    json: bool,
    /// Override the preset's tool_choice_policy: auto, required_first_hop, required_always.
    #[arg(long)]
    policy: Option<String>,
    /// Hop 0 must call this tool.
    #[arg(long)]
    tool: Option<String>,
    /// Context length in tokens (default: the config's, else 4096).
    #[arg(long)]
    n_ctx: Option<u32>,
    /// Say yes beforehand: a call its tool's `confirm` holds (unlocking a door) runs at once
    /// instead of being asked about (one `hearth ask` cannot be answered).
    #[arg(long)]
    yes: bool,
    /// The room it is said in, as a satellite's `room`: a request that names no room is about
    /// this one ("turn on the light").
    #[arg(long)]
    room: Option<String>,
    /// Do not keep the KV cache on disk between runs (every run evaluates the whole prompt).
    #[arg(long)]
    no_prompt_cache: bool,
}

/// One turn; the reply printed sentence by sentence, or the whole turn as JSON.
pub fn run(args: Args) -> Result<ExitCode> {
    let settings = Settings::discover(Flags {
        config: args.config.clone(),
        preset: args.preset.clone(),
        tools: args.tools.clone(),
        model: args.model.clone(),
        n_ctx: args.n_ctx,
        ..Flags::default()
    })?;
    let mut preset = settings.preset()?;
    if let Some(p) = &args.policy {
        preset.tool_choice_policy =
            serde_json::from_value(Value::String(p.clone())).with_context(|| {
                format!("--policy {p:?}: use auto, required_first_hop or required_always")
            })?;
    }
    let mut opts = settings.text_options(preset, !args.no_prompt_cache)?;
    // one command, then exit: nothing would use a prompt warmed after it
    opts.warm_next = false;
    opts.follow_house = false;
    // tools that publish to the broker or call Home Assistant work from `ask` too
    opts.backends = std::sync::Arc::new(hearth::tools::Backends::from_config(&settings.config)?);
    let json = args.json;
    let turn = super::runtime()?.block_on(one_turn(opts, &args))?;
    if json {
        let mut out = std::io::stdout().lock();
        serde_json::to_writer(&mut out, &turn)?;
        writeln!(out)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Start the text agent and ask it; without `--json`, each sentence is printed as soon as
/// it is settled, as speech would have it.
async fn one_turn(opts: TextOptions, args: &Args) -> Result<Turn> {
    let text = start_text(opts).await?;
    let mut request = Ask::new("cli", args.text.clone());
    request.force_tool = args.tool.clone();
    request.confirmed = args.yes;
    request.room = args.room.clone();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    if !args.json {
        request.speak = Some(tx);
    } else {
        drop(tx);
    }
    let printer = tokio::spawn(async move {
        let mut out = std::io::stdout();
        while let Some(sentence) = rx.recv().await {
            let _ = writeln!(out, "{sentence}");
            let _ = out.flush();
        }
    });
    let turn = hearth::agent::ask(&text.agent, request).await;
    // stopped whatever the turn's outcome: the engine's thread ends before the process does
    text.stop().await;
    let turn = turn?;
    printer.await.context("printing the reply")?;
    Ok(turn)
}
