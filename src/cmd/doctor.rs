//! `hearth doctor`: the library's checks ([`hearth::doctor`]) printed as text or JSON; exit
//! 0 when all is well, 1 when something failed.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;

#[derive(clap::Args)]
pub struct Args {
    /// The configuration file (default: found as `hearth run` finds it).
    #[arg(long)]
    config: Option<PathBuf>,
    /// The board profile `hearth run --board` would use.
    #[arg(long)]
    board: Option<String>,
    /// The bus to check: session, system or none (default: as `hearth run` picks it).
    #[arg(long)]
    bus: Option<String>,
    /// Directory of tool manifests (default: as `hearth run` finds it).
    #[arg(long)]
    tools: Option<PathBuf>,
    /// Print the findings as one JSON object.
    #[arg(long)]
    json: bool,
}

/// Examine, print the report, and say by the exit status whether anything failed.
pub fn run(args: Args) -> Result<ExitCode> {
    let bus = args
        .bus
        .as_deref()
        .map(hearth::settings::parse_bus)
        .transpose()?;
    let opts = hearth::doctor::DoctorOptions {
        config: args.config,
        board: args.board,
        bus,
        tools: args.tools,
    };
    let report = super::runtime()?.block_on(hearth::doctor::examine(&opts));
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer(&mut out, &report)?;
        writeln!(out)?;
    } else {
        write!(out, "{}", hearth::doctor::render(&report))?;
    }
    Ok(if report.all_well() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
