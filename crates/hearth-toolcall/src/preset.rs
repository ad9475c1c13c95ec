//! Model presets (`presets/*.toml`): per model family, the tool-call detector chain in
//! priority order, think tags, whether the chat template has a tool role, and the
//! tool-choice policy. Loading validates every detector name; an unknown one is an error
//! that lists the valid names, never a silent skip.
//!
//! The presets in `presets/` are compiled into the binary; a path to a `.toml` file loads
//! a user's own preset.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::{registry, DetectorRegistry, Parser, RegistryError, ThinkTags};

/// Built-in presets: (name, TOML text).
const BUILTIN: &[(&str, &str)] = &[
    (
        "deepseek-r1-distill",
        include_str!("../../../presets/deepseek-r1-distill.toml"),
    ),
    (
        "functiongemma",
        include_str!("../../../presets/functiongemma.toml"),
    ),
    ("gemma", include_str!("../../../presets/gemma.toml")),
    ("gpt-oss", include_str!("../../../presets/gpt-oss.toml")),
    ("granite4", include_str!("../../../presets/granite4.toml")),
    ("hermes3", include_str!("../../../presets/hermes3.toml")),
    ("lfm2", include_str!("../../../presets/lfm2.toml")),
    ("llama3.1", include_str!("../../../presets/llama3.1.toml")),
    ("llama3.2", include_str!("../../../presets/llama3.2.toml")),
    ("mistral", include_str!("../../../presets/mistral.toml")),
    ("phi4-mini", include_str!("../../../presets/phi4-mini.toml")),
    ("qwen2.5", include_str!("../../../presets/qwen2.5.toml")),
    (
        "qwen2.5-coder",
        include_str!("../../../presets/qwen2.5-coder.toml"),
    ),
    ("qwen3", include_str!("../../../presets/qwen3.toml")),
    ("smollm3", include_str!("../../../presets/smollm3.toml")),
    ("xlam", include_str!("../../../presets/xlam.toml")),
];

/// When the model must call a tool (grammar-constrained decoding, issue #3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolChoicePolicy {
    /// No constraint: the model decides.
    #[default]
    Auto,
    /// Hop 0 must call a tool; later hops are free (so the answer can land).
    RequiredFirstHop,
    /// Every hop must call a tool.
    RequiredAlways,
}

/// How one model family writes a call (preset `[grammar]`), for grammar-constrained
/// decoding (`crates/hearth-core/src/llm/grammar.rs`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct GrammarShape {
    /// Text before each call's JSON object (e.g. `"<tool_call>\n"`).
    pub prefix: String,
    /// Text after each call's JSON object (e.g. `"\n</tool_call>"`).
    pub suffix: String,
    /// Between two calls of one turn.
    #[serde(default = "default_separator")]
    pub separator: String,
    /// The key holding the arguments (`arguments`, or `parameters` for Llama 3.2).
    #[serde(default = "default_arguments_key")]
    pub arguments_key: String,
}

fn default_separator() -> String {
    "\n".into()
}

fn default_arguments_key() -> String {
    "arguments".into()
}

/// Where a preset's model file comes from: the `[model]` section of a preset file.
/// `crate::models` finds, verifies and downloads it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ModelSource {
    /// File name in the model directory (a plain name: no directory part).
    pub file: String,
    /// Where `hearth models pull` downloads it from (http or https).
    pub url: String,
    /// The file's sha256, 64 hex digits.
    pub sha256: String,
}

impl ModelSource {
    /// Check the fields' shapes: a plain file name, an http(s) URL, a 64-hex-digit sha256.
    /// The error text names the field and what it must look like.
    pub fn check(&self) -> Result<(), String> {
        let f = &self.file;
        if f.is_empty()
            || f == "."
            || f == ".."
            || f.contains(['/', '\\', '\0'])
            || f.ends_with(".part")
            || f.ends_with(".sha256")
        {
            return Err(format!(
                "file {f:?} must be a plain file name (no directory part, not ending in .part or .sha256)"
            ));
        }
        if !(self.url.starts_with("https://") || self.url.starts_with("http://")) {
            return Err(format!(
                "url {:?} must start with https:// (or http://)",
                self.url
            ));
        }
        if self.sha256.len() != 64 || !self.sha256.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(format!(
                "sha256 {:?} must be 64 hex digits (the output of sha256sum)",
                self.sha256
            ));
        }
        Ok(())
    }
}

/// One model family's settings.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Preset {
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// Detector names in priority order (`auto` = every registered detector).
    pub parsers: Vec<String>,
    /// Think-tag pairs this family emits (empty: it does not think).
    #[serde(default)]
    pub think: Vec<ThinkTags>,
    /// Whether the prompt opens the think block (output starts inside it): true/false when
    /// the template decides, absent when unknown.
    #[serde(default)]
    pub start_in_think: Option<bool>,
    /// Whether the chat template renders a `tool` role (structured round trip) or tool
    /// results must go back as a synthetic user message.
    pub tool_role: bool,
    #[serde(default)]
    pub tool_choice_policy: ToolChoicePolicy,
    #[serde(default)]
    pub model: Option<ModelSource>,
    /// The call format for grammar-constrained decoding (needed by the required policies).
    #[serde(default)]
    pub grammar: Option<GrammarShape>,
    /// A Jinja chat template to use instead of the GGUF's own.
    #[serde(default)]
    pub chat_template: Option<String>,
    /// After a hop that ran tools, hold the next hop to a reply-only grammar (plain words,
    /// no call, no JSON): for small models that otherwise call again or echo the results.
    #[serde(default)]
    pub reply_after_tools: bool,
    /// Generation stops before these strings (besides the model's end-of-turn token).
    #[serde(default)]
    pub stop: Vec<String>,
}

/// Errors loading a preset; each names the problem and the fix.
#[derive(Debug, thiserror::Error)]
pub enum PresetError {
    #[error("unknown preset {name:?}: use one of {} or a path to a .toml preset file", valid.join(", "))]
    Unknown { name: String, valid: Vec<String> },
    #[error("cannot read preset file {path}: {source}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("preset {source_name} is not valid TOML for a preset: {message}")]
    Toml {
        source_name: String,
        message: String,
    },
    #[error("preset {preset:?}: {source}")]
    Parser {
        preset: String,
        #[source]
        source: RegistryError,
    },
    #[error("preset {preset:?}: think tag pair #{index} needs a close tag (and an open tag unless forced_open)")]
    EmptyThinkTag { preset: String, index: usize },
    #[error("preset {preset:?}: [model] {problem}")]
    Model { preset: String, problem: String },
}

impl Preset {
    /// Names of the built-in presets.
    pub fn builtin_names() -> Vec<String> {
        BUILTIN.iter().map(|(n, _)| (*n).to_string()).collect()
    }

    /// Every built-in preset, validated.
    pub fn builtins() -> Result<Vec<Preset>, PresetError> {
        BUILTIN
            .iter()
            .map(|(n, t)| Self::from_toml(t, &format!("presets/{n}.toml")))
            .collect()
    }

    /// A built-in preset by name, or a preset file by path.
    pub fn load(name_or_path: &str) -> Result<Preset, PresetError> {
        if let Some((_, text)) = BUILTIN.iter().find(|(n, _)| *n == name_or_path) {
            return Self::from_toml(text, &format!("presets/{name_or_path}.toml"));
        }
        let path = Path::new(name_or_path);
        if name_or_path.ends_with(".toml") || path.is_file() {
            let text = std::fs::read_to_string(path).map_err(|source| PresetError::Read {
                path: path.display().to_string(),
                source,
            })?;
            return Self::from_toml(&text, &path.display().to_string());
        }
        Err(PresetError::Unknown {
            name: name_or_path.to_string(),
            valid: Self::builtin_names(),
        })
    }

    /// Parse and validate a preset against the process-wide detector registry.
    pub fn from_toml(text: &str, source_name: &str) -> Result<Preset, PresetError> {
        Self::from_toml_with(text, source_name, &registry())
    }

    /// Parse and validate a preset against `reg`.
    pub fn from_toml_with(
        text: &str,
        source_name: &str,
        reg: &DetectorRegistry,
    ) -> Result<Preset, PresetError> {
        let p: Preset = toml::from_str(text).map_err(|e| PresetError::Toml {
            source_name: source_name.to_string(),
            message: e.to_string(),
        })?;
        reg.resolve(&p.parsers)
            .map_err(|source| PresetError::Parser {
                preset: p.name.clone(),
                source,
            })?;
        if let Some(index) = p
            .think
            .iter()
            .position(|t| t.close.is_empty() || (t.open.is_empty() && !t.forced_open))
        {
            return Err(PresetError::EmptyThinkTag {
                preset: p.name.clone(),
                index,
            });
        }
        if let Some(m) = &p.model {
            m.check().map_err(|problem| PresetError::Model {
                preset: p.name.clone(),
                problem,
            })?;
        }
        Ok(p)
    }

    /// The parser chain this preset describes.
    pub fn parser(&self) -> Result<Parser, PresetError> {
        self.parser_with(&registry())
    }

    pub fn parser_with(&self, reg: &DetectorRegistry) -> Result<Parser, PresetError> {
        Parser::from_names(reg, &self.parsers, self.think.clone(), self.start_in_think).map_err(
            |e| match e {
                crate::ParserError::Registry(source) => PresetError::Parser {
                    preset: self.name.clone(),
                    source,
                },
                other => PresetError::Toml {
                    source_name: self.name.clone(),
                    message: other.to_string(),
                },
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_preset_loads_and_builds() {
        let all = Preset::builtins().unwrap();
        assert_eq!(all.len(), BUILTIN.len());
        for p in &all {
            assert!(!p.parsers.is_empty(), "{}", p.name);
            p.parser().unwrap();
            assert_eq!(Preset::load(&p.name).unwrap(), *p);
        }
    }

    #[test]
    fn builtin_model_sources_are_well_formed() {
        let all = Preset::builtins().unwrap();
        let with_model: Vec<_> = all
            .iter()
            .filter_map(|p| p.model.as_ref().map(|m| (p, m)))
            .collect();
        assert!(
            with_model.iter().any(|(p, _)| p.name == "qwen2.5-coder"),
            "the default test model's preset names its model file"
        );
        for (p, m) in with_model {
            assert_eq!(m.sha256.len(), 64, "{}: {}", p.name, m.sha256);
            assert!(
                m.sha256
                    .bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)),
                "{}: sha256 must be lowercase hex: {}",
                p.name,
                m.sha256
            );
            assert!(m.url.starts_with("https://"), "{}: {}", p.name, m.url);
            let last = m.url.rsplit('/').next().unwrap();
            assert_eq!(
                last, m.file,
                "{}: url's last segment names the file",
                p.name
            );
            assert!(!m.url.contains(['?', '#']), "{}: {}", p.name, m.url);
        }
    }

    #[test]
    fn bad_model_sections_are_rejected() {
        let base = "name = \"x\"\nparsers = [\"hermes\"]\ntool_role = true\n[model]\n";
        let good = "file = \"m.gguf\"\nurl = \"https://h/m.gguf\"\nsha256 = \"".to_string()
            + &"ab".repeat(32)
            + "\"\n";
        Preset::from_toml(&format!("{base}{good}"), "t").unwrap();
        for (bad, word) in [
            (good.replace("m.gguf\"\nurl", "../m.gguf\"\nurl"), "file"),
            (good.replace("https://h", "ftp://h"), "url"),
            (good.replace(&"ab".repeat(32), &"ab".repeat(31)), "sha256"),
            (good.replace(&"ab".repeat(32), &"zz".repeat(32)), "sha256"),
        ] {
            let e = Preset::from_toml(&format!("{base}{bad}"), "t").unwrap_err();
            assert!(matches!(e, PresetError::Model { .. }), "{e}");
            let msg = e.to_string();
            assert!(msg.contains(word) && msg.contains("[model]"), "{msg}");
        }
    }

    #[test]
    fn unknown_detector_lists_valid_names() {
        let e = Preset::from_toml(
            "name = \"x\"\nparsers = [\"hermes\", \"hermez\"]\ntool_role = true\n",
            "test",
        )
        .unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("\"hermez\""), "{msg}");
        assert!(msg.contains("hermes, ") && msg.contains("mistral"), "{msg}");
    }

    #[test]
    fn unknown_preset_and_bad_toml() {
        let e = Preset::load("qwen9").unwrap_err().to_string();
        assert!(e.contains("qwen2.5") && e.contains(".toml"), "{e}");
        let e = Preset::from_toml("name = 1", "t").unwrap_err();
        assert!(matches!(e, PresetError::Toml { .. }));
        let e = Preset::from_toml(
            "name = \"x\"\nparsers = [\"hermes\"]\ntool_role = true\ntypo = 1\n",
            "t",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("typo"), "{e}");
        assert!(matches!(
            Preset::load("/nonexistent/p.toml"),
            Err(PresetError::Read { .. })
        ));
    }
}
