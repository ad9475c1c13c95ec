// Manifest load errors for the executor tests (included with `include!`).

/// The load error of a one-tool manifest (one string parameter, `room`) whose executor
/// table `[tool.<executor>]` has this body; checked to name the file.
#[allow(dead_code)]
pub fn load_error(executor: &str, body: &str) -> String {
    let text = format!(
        "[[tool]]\nname = \"t\"\ndescription = \"x\"\n[tool.parameters]\ntype = \"object\"\n[tool.parameters.properties.room]\ntype = \"string\"\n[tool.{executor}]\n{body}\n"
    );
    let path = std::path::Path::new("/etc/hearth/tools/bad.toml");
    match hearth::tools::parse_manifest(&text, path) {
        Ok(_) => panic!("expected [tool.{executor}] {body:?} to fail the load"),
        Err(e) => {
            let msg = e.to_string();
            assert!(msg.contains("/etc/hearth/tools/bad.toml"), "{msg}");
            msg
        }
    }
}
