//! Manifest load errors for the executor tests.

/// The load error of a one-tool manifest (one string parameter, `room`) whose executor
/// table `[tool.<executor>]` has this body; checked to name the file.
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

/// A fresh scratch directory named by `tag`, the process and the time.
pub fn scratch_dir(tag: &str) -> std::path::PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let d = std::env::temp_dir().join(format!("hearth-{tag}-{}-{nanos}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A registry of one manifest's tools (no built-ins) running against `backends`.
pub fn registry(
    manifest: &str,
    backends: std::sync::Arc<hearth::tools::Backends>,
) -> hearth::tools::Registry {
    let tools = hearth::tools::parse_manifest(
        manifest,
        std::path::Path::new("/etc/hearth/tools/test.toml"),
    )
    .unwrap();
    hearth::tools::Registry::new(tools)
        .unwrap()
        .with_backends(backends)
        .unwrap()
}

/// A call of `name` with `arguments`, id `<name>_0`.
pub fn call(name: &str, arguments: serde_json::Value) -> hearth::toolcall::ToolCall {
    hearth::toolcall::ToolSet::unrestricted()
        .call(format!("{name}_0"), name, arguments)
        .expect("the arguments are a JSON object")
}

/// The backends a configuration holding only this `[mqtt]` section makes, as the daemon
/// builds them, or the error hearth would stop with.
pub fn mqtt_backends(
    section: &hearth::config::MqttSection,
) -> Result<hearth::tools::Backends, String> {
    hearth::tools::Backends::from_config(&hearth::config::Config {
        mqtt: Some(section.clone()),
        ..Default::default()
    })
    .map_err(|e| e.to_string())
}
