//! `hearth models`: a preset's model file or a speech model (`whisper:NAME`) downloaded,
//! located, verified; the built-in presets' files and the speech models listed. And
//! `hearth presets`, the built-in presets.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::Subcommand;
use hearth::models::{self, ModelError, ModelStatus};
use hearth::preset::{ModelSource, Preset};
use hearth::speech_models;

#[derive(Subcommand)]
pub enum Command {
    /// Download a preset's model file or a speech model (resumes a partial download; checks
    /// its sha256).
    Pull {
        /// A preset name (see `hearth presets`), a preset .toml file with a [model] section, or
        /// a speech model whisper:NAME (see `hearth models list`).
        preset: String,
        /// Store the file here instead of the model directory.
        #[arg(long)]
        dir: Option<PathBuf>,
        /// Download from this URL instead of the preset's (e.g. a mirror); the sha256 must match.
        #[arg(long)]
        url: Option<String>,
    },
    /// Print the path of a preset's model file or a speech model's; exit 1 if it is missing
    /// or corrupt.
    Path {
        /// A preset name, a preset .toml file or a speech model whisper:NAME.
        preset: String,
        /// Look here instead of the model directory.
        #[arg(long)]
        dir: Option<PathBuf>,
    },
    /// Hash a preset's model file or a speech model's (whatever its stamp says); exit 1 if
    /// missing or corrupt.
    Verify {
        /// A preset name, a preset .toml file or a speech model whisper:NAME.
        preset: String,
        /// Look here instead of the model directory.
        #[arg(long)]
        dir: Option<PathBuf>,
    },
    /// List the built-in presets' model files and the speech models, and whether each is
    /// present.
    List {
        /// Look here instead of the model directory.
        #[arg(long)]
        dir: Option<PathBuf>,
    },
}

/// `hearth models …`.
pub fn run(command: Command) -> Result<ExitCode> {
    match command {
        Command::Pull { preset, dir, url } => {
            let mut source = source_named(&preset)?;
            if let Some(url) = url {
                source.url = url;
            }
            let dir = dir_or_default(dir)?;
            let path = models::pull(&source, &dir, std::io::stderr().is_terminal())?;
            writeln!(std::io::stdout().lock(), "{}", path.display())?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Path { preset, dir } => {
            let source = source_named(&preset)?;
            let dir = dir_or_default(dir)?;
            model_outcome(models::locate_in(&source, &dir).map(|p| p.display().to_string()))
        }
        Command::Verify { preset, dir } => {
            let source = source_named(&preset)?;
            let path = dir_or_default(dir)?.join(&source.file);
            model_outcome(
                models::verify(&path, &source.sha256)
                    .map(|()| format!("{}: sha256 {} ok", path.display(), source.sha256)),
            )
        }
        Command::List { dir } => list(dir_or_default(dir)?),
    }
}

/// The model file an argument names: a speech model `whisper:NAME` of the catalogue, else a
/// preset (built-in name or .toml file) and its `[model]`.
fn source_named(arg: &str) -> Result<ModelSource> {
    if let Some(name) = speech_models::named(arg) {
        return Ok(speech_models::find(name)?.source());
    }
    let preset = Preset::load(arg)?;
    Ok(models::source_of(&preset)?.clone())
}

/// `hearth presets`: each built-in preset and its description.
pub fn list_presets() -> Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    for p in Preset::builtins()? {
        writeln!(out, "{:<20} {}", p.name, p.description)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `--dir`, else the model directory.
fn dir_or_default(dir: Option<PathBuf>) -> Result<PathBuf> {
    Ok(match dir {
        Some(d) => d,
        None => models::model_dir()?,
    })
}

/// `hearth models list`: each built-in preset's model file and its state in `dir`.
fn list(dir: PathBuf) -> Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    for p in Preset::builtins()? {
        let Some(source) = &p.model else {
            writeln!(
                out,
                "{:<20} {:<45} no model file in the preset",
                p.name, "-"
            )?;
            continue;
        };
        let state = state(source, &dir)?;
        writeln!(out, "{:<20} {:<45} {state}", p.name, source.file)?;
    }
    writeln!(out)?;
    writeln!(
        out,
        "speech models (`hearth models pull whisper:NAME`; [stt] model = the file or whisper:NAME):"
    )?;
    for m in speech_models::catalogue()? {
        let state = state(&m.source(), &dir)?;
        let size = format!("{:.0} MB", m.bytes as f64 / 1e6);
        writeln!(
            out,
            "{:<22} {:<45} {state}; {size}, {}",
            m.full_name(),
            m.file,
            m.summary
        )?;
    }
    writeln!(out, "model directory: {}", dir.display())?;
    Ok(ExitCode::SUCCESS)
}

/// Whether a model file is in `dir`, in words.
fn state(source: &ModelSource, dir: &std::path::Path) -> Result<String> {
    Ok(match models::status(source, dir)? {
        ModelStatus::Verified => "present".to_string(),
        ModelStatus::Unverified => "present (not verified yet)".to_string(),
        ModelStatus::Missing { partial: None } => "missing".to_string(),
        ModelStatus::Missing {
            partial: Some(bytes),
        } => format!("missing (partial download: {bytes} bytes)"),
    })
}

/// Print a found/verified model's line (exit 0); a missing or corrupt one is an error line
/// (exit 1); anything else is fatal (exit 2).
fn model_outcome(result: std::result::Result<String, ModelError>) -> Result<ExitCode> {
    match result {
        Ok(line) => {
            writeln!(std::io::stdout().lock(), "{line}")?;
            Ok(ExitCode::SUCCESS)
        }
        Err(e @ (ModelError::Missing { .. } | ModelError::Corrupt { .. })) => {
            eprintln!("hearth: error: {e}");
            Ok(ExitCode::from(1))
        }
        Err(e) => Err(e.into()),
    }
}
