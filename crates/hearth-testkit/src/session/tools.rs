// The tools a household writes with no sentences: a copy of a tools directory whose manifests
// have every `[[tool.intent]]` table and every `say` removed (`--tools-as bare`).

use std::path::Path;

/// The keys of a `[[tool]]` table that hand-write what a tool is asked with and says.
pub const SENTENCE_KEYS: [&str; 2] = ["intent", "say"];

/// A manifest's text with `intent` and `say` dropped from every `[[tool]]` table; everything
/// else as it was (in its order).
pub fn bare_manifest(text: &str) -> Result<String, String> {
    let mut doc: toml::Table = text.parse().map_err(|e| format!("{e}"))?;
    if let Some(toml::Value::Array(tools)) = doc.get_mut("tool") {
        for tool in tools {
            if let toml::Value::Table(t) = tool {
                for key in SENTENCE_KEYS {
                    t.remove(key);
                }
            }
        }
    }
    toml::to_string(&doc).map_err(|e| format!("{e}"))
}

/// Copies the directory `from` into `to` (made afresh): every `*.toml` through
/// [`bare_manifest`], every other file as it is, with its permissions (`demo-home` stays
/// executable: a manifest runs it as `./demo-home`), subdirectories alike.
pub fn copy_bare(from: &Path, to: &Path) -> Result<(), String> {
    let failed =
        |what: &str, p: &Path, e: &dyn std::fmt::Display| format!("{what} {}: {e}", p.display());
    if to.exists() {
        std::fs::remove_dir_all(to).map_err(|e| failed("removing", to, &e))?;
    }
    std::fs::create_dir_all(to).map_err(|e| failed("creating", to, &e))?;
    let entries = std::fs::read_dir(from).map_err(|e| failed("reading", from, &e))?;
    for entry in entries {
        let entry = entry.map_err(|e| failed("reading", from, &e))?;
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        if src.is_dir() {
            copy_bare(&src, &dst)?;
        } else if src.extension().is_some_and(|x| x == "toml") {
            let text = std::fs::read_to_string(&src).map_err(|e| failed("reading", &src, &e))?;
            let bare = bare_manifest(&text).map_err(|e| failed("rewriting", &src, &e))?;
            std::fs::write(&dst, bare).map_err(|e| failed("writing", &dst, &e))?;
        } else {
            // copies the permission bits too
            std::fs::copy(&src, &dst).map_err(|e| failed("copying", &src, &e))?;
        }
    }
    Ok(())
}
