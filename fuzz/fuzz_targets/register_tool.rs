//! Any UTF-8 as `RegisterTool`'s `spec_json`: through the D-Bus face's own parser
//! (`hearth::bus::parse_specs`), then what the tools actor does with the specs: the provider
//! limits with the grammar check (`ProviderLimits::check`, which runs
//! `hearth::llm::check_schema`), and the tool set the new registry compiles (the built-ins
//! and the specs, `ToolSet::new`), which then checks a few calls. Must hold: no panic; an
//! error is fine; every spec the face accepts has a usable name, a description and an object
//! schema.
//!
//! `check_schema` (llguidance) is a no-op here: this crate builds `hearth` without the `llm`
//! feature (llama.cpp takes many minutes to compile), so the grammar compile is not fuzzed.
#![no_main]

use std::sync::OnceLock;

use hearth::toolcall::ToolSet;
use hearth::tools::{valid_name, ProviderLimits, Registry};
use libfuzzer_sys::fuzz_target;
use serde_json::{json, Value};

fn builtins() -> &'static Registry {
    static R: OnceLock<Registry> = OnceLock::new();
    R.get_or_init(Registry::builtins)
}

fuzz_target!(|data: &[u8]| {
    let Ok(spec_json) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(specs) = hearth::bus::parse_specs(spec_json) else {
        return;
    };
    for s in &specs {
        assert!(valid_name(&s.name), "accepted name {:?}", s.name);
        assert!(
            !s.description.trim().is_empty(),
            "accepted a blank description"
        );
        assert_eq!(
            s.parameters.get("type").and_then(Value::as_str),
            Some("object")
        );
    }
    let registry = builtins();
    let _ = ProviderLimits::default().check(registry, ":1.42", &specs);
    for s in &specs {
        let _ = hearth::llm::check_schema(s);
    }
    let mut all: Vec<_> = registry.tools().iter().map(|t| t.spec.clone()).collect();
    all.extend(specs.iter().cloned());
    let Ok(toolset) = ToolSet::new(all) else {
        return;
    };
    for s in &specs {
        let _ = toolset.check(&s.name, &json!({}));
        let _ = toolset.check(
            &s.name,
            &json!({"room": "kitchen", "level": 40, "on": true}),
        );
    }
});
