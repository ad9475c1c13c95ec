//! The `hearth` command line: parses the arguments and hands each command to its module in
//! `cmd/`. Logs go to stderr; an error is printed and exits with status 2.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod cmd;

use std::io::IsTerminal;
use std::process::ExitCode;

use clap::{Parser as ClapParser, Subcommand};

#[derive(ClapParser)]
#[command(name = "hearth", version, about = "On-device voice agent daemon")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// One turn from text: the model decides, tools run, the reply is printed.
    Ask(cmd::ask::Args),
    /// The voice daemon: listen, understand, act, answer out loud.
    Run(cmd::run::Args),
    /// Parse raw model output into tool calls, reply and reasoning (JSON out).
    Parse(cmd::parse::Args),
    /// List the tool-call parsers (wire-format detectors).
    Parsers,
    /// The house's phrase set: what the tools' local intents understand (counts, the forms
    /// with their slots' words, a sample).
    Phrases(cmd::phrases::Args),
    /// Every tool and where it comes from (manifest, built-in, Home Assistant), the things
    /// each reaches by name and room, and three things to say to it.
    Devices(cmd::devices::Args),
    /// List the built-in model presets.
    Presets,
    /// Model files: download, locate, verify, list.
    Models {
        #[command(subcommand)]
        command: cmd::models::Command,
    },
    /// Check the config, models, voice, audio devices, bus, tools and their connections;
    /// say what is wrong and how to fix it. Exit status 0 when all is well.
    Doctor(cmd::doctor::Args),
}

fn main() -> ExitCode {
    // Logs on stderr: colours only for a terminal; under systemd (stderr is the journal)
    // no timestamp either, as journald stamps each line itself.
    let logs = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new(hearth::logs::filter(
            std::env::var("HEARTH_LOG").ok().as_deref(),
        )))
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal());
    if std::env::var_os("JOURNAL_STREAM").is_some() {
        logs.without_time().init();
    } else {
        logs.init();
    }
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Ask(args) => cmd::ask::run(args),
        Command::Run(args) => cmd::run::run(args),
        Command::Parse(args) => cmd::parse::run(args),
        Command::Parsers => cmd::parse::list_parsers(),
        Command::Phrases(args) => cmd::phrases::run(args),
        Command::Devices(args) => cmd::devices::run(args),
        Command::Presets => cmd::models::list_presets(),
        Command::Models { command } => cmd::models::run(command),
        Command::Doctor(args) => cmd::doctor::run(args),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("hearth: error: {e:#}");
            ExitCode::from(2)
        }
    }
}
