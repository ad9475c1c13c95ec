//! The demo home's tools and one more, `read_story`: "read me the story" (or "tell me a
//! story") runs it with no model (a local intent), and its long, fixed result ([`STORY`]) is
//! spoken whole: about 15 s of hearth's voice, for the tests and benches that talk over a
//! reply.

use std::path::{Path, PathBuf};

/// What `read_story` says.
pub const STORY: &str = "Once upon a time a small dragon lived above the kitchen. Every \
    morning it counted the lights in the house, and every evening it counted them again. The \
    dragon liked the warm glow of the living room best, and it told long stories about it to \
    anyone who would listen, and to many who would not.";

// A longer `say` is cut at a sentence to fit (with "I shortened that."): the story would
// then last a few seconds, too short for what the tests do over it.
const _: () = assert!(STORY.len() <= hearth::tools::MAX_SAY_CHARS);

/// The tools directory `dir/tools`: the demo home's manifest and program, and one more
/// manifest, `name`.toml, holding `manifest`.
pub fn demo_tools_and(dir: &Path, name: &str, manifest: &str) -> Result<PathBuf, String> {
    let tools = dir.join("tools");
    std::fs::create_dir_all(&tools).map_err(|e| format!("creating {}: {e}", tools.display()))?;
    for f in ["demo.toml", "demo-home"] {
        std::fs::copy(crate::root().join("tools").join(f), tools.join(f))
            .map_err(|e| format!("copying tools/{f}: {e}"))?;
    }
    let path = tools.join(format!("{name}.toml"));
    std::fs::write(&path, manifest).map_err(|e| format!("writing {}: {e}", path.display()))?;
    Ok(tools)
}

/// The tools directory `dir/tools`: the demo home's manifest and program, and `read_story`.
pub fn tools_with_a_story(dir: &Path) -> Result<PathBuf, String> {
    let manifest = format!(
        r#"[[tool]]
name = "read_story"
description = "Read the bedtime story aloud."
say = "{{{{ result }}}}"
[tool.parameters]
type = "object"
properties = {{}}
additionalProperties = false
[tool.exec]
argv = ["/bin/echo", "{STORY}"]
timeout_ms = 5000
max_output_bytes = 4096
[[tool.intent]]
sentences = ["(read|tell) me (the|this|a) story"]
"#
    );
    demo_tools_and(dir, "story", &manifest)
}
