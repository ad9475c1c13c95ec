//! Any UTF-8 as a tool manifest (`tools/*.toml`): parsed and checked (`parse_manifest`:
//! names, one executor, the schema compiled, every template and intent sentence), then
//! built into a registry after the built-ins as `Registry::load` does, and used as a turn
//! uses it: the tools list, the fingerprint, the speech vocabulary, the backends check,
//! local intents on a few requests, each call checked against the tool set and its `say`
//! confirmation rendered. Must hold: no panic; an error is fine; and a manifest that parses
//! always forms a registry with the built-ins (its names and schemas are already checked).
#![no_main]

use std::path::Path;
use std::sync::{Arc, OnceLock};

use hearth::tools::{parse_manifest, Backends, Builtin, Registry};
use libfuzzer_sys::fuzz_target;

/// Requests in the shapes household intents take.
const REQUESTS: &[&str] = &[
    "turn on the kitchen light",
    "switch the living room lights off and lock the front door",
    "set the thermostat to twenty one point five degrees",
    "dim the bedroom to 40%",
    "what time is it",
];

fn backends() -> Arc<Backends> {
    static B: OnceLock<Arc<Backends>> = OnceLock::new();
    Arc::clone(B.get_or_init(|| Arc::new(Backends::none())))
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(tools) = parse_manifest(text, Path::new("/etc/hearth/tools/fuzz.toml")) else {
        return;
    };
    let mut all = Builtin::tools();
    all.extend(tools);
    let registry = match Registry::new(all) {
        Ok(r) => r,
        Err(e) => panic!("a manifest that parses does not form a registry: {e}"),
    };
    let _ = registry.openai_tools();
    let _ = registry.fingerprint();
    let _ = registry.vocabulary();
    let toolset = registry.toolset();
    for request in REQUESTS {
        for call in registry.intents().recognize(request).into_iter().flatten() {
            if let Ok(call) = toolset.call("fuzz_0", &call.tool, call.arguments) {
                let _ = registry.confirmation(&call, "done");
            }
        }
    }
    let _ = registry.with_backends(backends());
});
