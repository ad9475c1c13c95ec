//! The speech models hearth knows by name: whisper.cpp's ggml files of Whisper, from the
//! catalogue `models/whisper.toml` compiled in (name, file, URL, sha256, size, summary).
//!
//! A speech model is named `whisper:NAME` (`whisper:base.en`, `whisper:small.en-q8_0`): by
//! `hearth models pull|path|verify` (which fetch and check it as they do a preset's model,
//! [`crate::models`]) and by `[stt] model`, `--stt-model` or `$HEARTH_WHISPER_MODEL`
//! ([`crate::settings::Settings::whisper_model`], through [`resolve`]), where it means the entry's
//! file in the model directory. A file name works there too (`ggml-base.en.bin`): the catalogue
//! only adds the name, the download and the check. This module is the one place that knows the
//! prefix and reads the catalogue.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::preset::ModelSource;

/// The prefix that marks a speech model's name (`whisper:base.en`).
pub(crate) const PREFIX: &str = "whisper:";

/// The catalogue, as compiled in.
const CATALOGUE: &str = include_str!("../models/whisper.toml");

/// One speech model of the catalogue.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpeechModel {
    /// The name after [`PREFIX`] (`base.en`, `base.en-q5_1`).
    pub name: String,
    /// Its file name in the model directory.
    pub file: String,
    /// Where `hearth models pull` downloads it from.
    pub url: String,
    /// Its sha256 (64 hex digits).
    pub sha256: String,
    /// Its size in bytes (for listings; the sha256 is what is checked).
    pub bytes: u64,
    /// One line about it.
    pub summary: String,
}

impl SpeechModel {
    /// The model as a download ([`crate::models::pull`] and the other model functions take it).
    pub fn source(&self) -> ModelSource {
        ModelSource {
            file: self.file.clone(),
            url: self.url.clone(),
            sha256: self.sha256.clone(),
        }
    }

    /// The full name, with the prefix (`whisper:base.en`).
    pub fn full_name(&self) -> String {
        format!("{PREFIX}{}", self.name)
    }
}

/// Errors naming a speech model; each says what to do.
#[derive(Debug, thiserror::Error)]
pub enum SpeechModelError {
    /// The name is not in the catalogue.
    #[error("unknown speech model {name:?}: use one of {} (`hearth models list` shows them)", valid.join(", "))]
    Unknown {
        /// The name as given (with its prefix).
        name: String,
        /// The names there are, with the prefix.
        valid: Vec<String>,
    },
    /// The compiled-in catalogue does not parse or has a malformed entry (a build defect).
    #[error("the built-in speech model catalogue models/whisper.toml is malformed: {0}; fix the file and rebuild")]
    Catalogue(String),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    model: Vec<SpeechModel>,
}

/// Every speech model of the catalogue, in its order, each entry checked (the shape of its
/// file name, URL and sha256; names and files unique).
pub fn catalogue() -> Result<Vec<SpeechModel>, SpeechModelError> {
    parse(CATALOGUE)
}

fn parse(text: &str) -> Result<Vec<SpeechModel>, SpeechModelError> {
    let file: File =
        toml::from_str(text).map_err(|e| SpeechModelError::Catalogue(e.to_string()))?;
    let mut seen_names = std::collections::HashSet::new();
    let mut seen_files = std::collections::HashSet::new();
    for m in &file.model {
        let bad = |problem: String| SpeechModelError::Catalogue(format!("{}: {problem}", m.name));
        if m.name.is_empty()
            || !m
                .name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
        {
            return Err(bad("a name is letters, digits, '.', '_' and '-'".into()));
        }
        m.source().check().map_err(bad)?;
        if m.bytes == 0 {
            return Err(bad("bytes must be the file's size".into()));
        }
        if !seen_names.insert(m.name.as_str()) || !seen_files.insert(m.file.as_str()) {
            return Err(bad("the name and the file must each appear once".into()));
        }
    }
    Ok(file.model)
}

/// The speech model `name` names: `whisper:NAME` or the bare `NAME`. Unknown names are an
/// error that lists the known ones.
pub fn find(name: &str) -> Result<SpeechModel, SpeechModelError> {
    let bare = name.strip_prefix(PREFIX).unwrap_or(name);
    let all = catalogue()?;
    let valid = all.iter().map(SpeechModel::full_name).collect();
    all.into_iter()
        .find(|m| m.name == bare)
        .ok_or_else(|| SpeechModelError::Unknown {
            name: name.to_string(),
            valid,
        })
}

/// The `whisper:NAME` in `arg`, if it is one (`None`: a preset name, a file or a path).
pub fn named(arg: &str) -> Option<&str> {
    arg.starts_with(PREFIX).then_some(arg)
}

/// The catalogue entry whose file is `path`'s file name, if any.
pub fn by_file(path: &Path) -> Option<SpeechModel> {
    let file = path.file_name()?.to_str()?;
    catalogue().ok()?.into_iter().find(|m| m.file == file)
}

/// A speech model setting as a path: `whisper:NAME` is the entry's file in `dir` (the model
/// directory); anything else is returned as it is (the caller decides where a bare file name
/// lives).
pub fn resolve(setting: &Path, dir: Option<&Path>) -> Result<PathBuf, ResolveError> {
    let Some(name) = setting.to_str().and_then(named) else {
        return Ok(setting.to_path_buf());
    };
    let model = find(name)?;
    let dir = dir.ok_or(ResolveError::NoModelDir)?;
    Ok(dir.join(model.file))
}

/// Why a `whisper:NAME` setting has no path.
#[derive(Debug, thiserror::Error)]
pub enum ResolveError {
    /// The name is unknown (the error lists the names).
    #[error(transparent)]
    Name(#[from] SpeechModelError),
    /// No model directory to look for the file in.
    #[error("no model directory for the speech model: none of HEARTH_MODEL_DIR, XDG_CACHE_HOME, CACHE_DIRECTORY or HOME is set; set HEARTH_MODEL_DIR to the directory for model files")]
    NoModelDir,
}

/// How to get the speech model file at `path`, for error messages: its `hearth models pull
/// whisper:NAME` when the catalogue has the file, else where to look.
pub(crate) fn how_to_get(path: &Path) -> String {
    match by_file(path) {
        Some(m) => format!("run `hearth models pull {}`", m.full_name()),
        None => format!(
            "run `hearth models pull {PREFIX}tiny.en` (or another of `hearth models list`) and name it in [stt] model, or point [stt] model at a whisper.cpp ggml file"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_catalogue_is_well_formed_and_has_the_sizes_asked_for() {
        let all = catalogue().unwrap();
        let names: Vec<&str> = all.iter().map(|m| m.name.as_str()).collect();
        for want in [
            "tiny.en",
            "base.en",
            "base.en-q5_1",
            "base.en-q8_0",
            "small.en",
            "small.en-q5_1",
            "small.en-q8_0",
        ] {
            assert!(names.contains(&want), "{want} missing from {names:?}");
        }
        for m in &all {
            m.source().check().unwrap();
            // whisper.cpp's own files, under their own names
            assert_eq!(
                m.url,
                format!(
                    "https://huggingface.co/ggerganov/whisper.cpp/resolve/main/{}",
                    m.file
                )
            );
            assert_eq!(m.file, format!("ggml-{}.bin", m.name));
            assert_eq!(m.sha256, m.sha256.to_ascii_lowercase());
            // a quantised file is smaller than its f16 model
            if let Some((base, _)) = m.name.split_once('-') {
                let f16 = all.iter().find(|x| x.name == base).unwrap();
                assert!(m.bytes < f16.bytes, "{}", m.name);
            }
        }
    }

    #[test]
    fn names_with_or_without_the_prefix_find_the_entry() {
        let m = find("whisper:base.en").unwrap();
        assert_eq!(m.file, "ggml-base.en.bin");
        assert_eq!(find("base.en").unwrap(), m);
        assert_eq!(m.full_name(), "whisper:base.en");
        assert_eq!(m.source().file, "ggml-base.en.bin");
    }

    #[test]
    fn an_unknown_name_lists_the_known_ones() {
        let e = find("whisper:large-v3").unwrap_err().to_string();
        assert!(e.contains("\"whisper:large-v3\""), "{e}");
        assert!(e.contains("whisper:base.en, "), "{e}");
        assert!(e.contains("whisper:small.en-q8_0"), "{e}");
        assert!(e.contains("hearth models list"), "{e}");
    }

    #[test]
    fn malformed_entries_are_refused_with_the_entry_named() {
        let entry = |name: &str, file: &str, sha: &str| {
            format!(
                "[[model]]\nname = \"{name}\"\nfile = \"{file}\"\nurl = \"https://x/{file}\"\nsha256 = \"{sha}\"\nbytes = 1\nsummary = \"s\"\n"
            )
        };
        let good = "a".repeat(64);
        assert_eq!(parse(&entry("x", "x.bin", &good)).unwrap().len(), 1);
        let e = parse(&entry("x", "x.bin", "abc")).unwrap_err().to_string();
        assert!(
            e.contains("x: sha256") && e.contains("64 hex digits"),
            "{e}"
        );
        let e = parse(&entry("x", "d/x.bin", &good))
            .unwrap_err()
            .to_string();
        assert!(e.contains("plain file name"), "{e}");
        let twice = entry("x", "x.bin", &good) + &entry("x", "y.bin", &good);
        assert!(parse(&twice).unwrap_err().to_string().contains("once"));
        let e = parse("[[model]]\nname = \"x\"\n").unwrap_err().to_string();
        assert!(e.contains("models/whisper.toml"), "{e}");
    }

    #[test]
    fn a_setting_resolves_to_the_entry_file_in_the_model_directory() {
        let dir = Some(Path::new("/m"));
        assert_eq!(
            resolve(Path::new("whisper:small.en-q5_1"), dir).unwrap(),
            PathBuf::from("/m/ggml-small.en-q5_1.bin")
        );
        // anything else is left to the caller
        assert_eq!(
            resolve(Path::new("ggml-base.en.bin"), dir).unwrap(),
            PathBuf::from("ggml-base.en.bin")
        );
        assert_eq!(
            resolve(Path::new("/x/whisper:odd.bin"), dir).unwrap(),
            PathBuf::from("/x/whisper:odd.bin")
        );
        let e = resolve(Path::new("whisper:nope"), dir)
            .unwrap_err()
            .to_string();
        assert!(e.contains("whisper:tiny.en"), "{e}");
        assert!(matches!(
            resolve(Path::new("whisper:base.en"), None),
            Err(ResolveError::NoModelDir)
        ));
    }

    #[test]
    fn the_fix_names_the_pull_command() {
        assert_eq!(
            how_to_get(Path::new("/m/ggml-base.en-q8_0.bin")),
            "run `hearth models pull whisper:base.en-q8_0`"
        );
        let other = how_to_get(Path::new("/m/my-model.bin"));
        assert!(
            other.contains("hearth models pull whisper:tiny.en"),
            "{other}"
        );
    }
}
