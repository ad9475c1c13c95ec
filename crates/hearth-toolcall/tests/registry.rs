//! A program can add its own wire format with `register_detector` and name it in a chain.

use hearth_toolcall::{
    register_detector, registry, scan, Candidate, DetectCtx, Detector, Found, Parser,
    RegistryError, Strictness, ToolSet,
};

/// `CALL name` on a line of its own.
struct CallLine;

impl Detector for CallLine {
    fn name(&self) -> &str {
        "call_line"
    }
    fn strictness(&self) -> Strictness {
        Strictness::Strict
    }
    fn triggers(&self) -> &[&str] {
        &["CALL "]
    }
    fn detect(&self, text: &str, _ctx: &DetectCtx<'_>, out: &mut Vec<Found>) {
        for p in scan::find_all(text, "CALL ") {
            let end = text[p..].find('\n').map_or(text.len(), |e| p + e);
            let name = text[p + 5..end].trim();
            if scan::is_ident(name) {
                out.push(Found::call(
                    p..end,
                    Candidate::new(name, serde_json::json!({})),
                ));
            }
        }
    }
}

#[test]
fn registered_detector_joins_auto_and_named_chains() {
    register_detector(CallLine).unwrap();
    assert!(matches!(
        register_detector(CallLine),
        Err(RegistryError::Duplicate(_))
    ));
    assert!(registry().names().contains(&"call_line".to_string()));
    let tools = ToolSet::from_openai_json(
        r#"[{"type":"function","function":{"name":"get_time","parameters":{"type":"object","properties":{}}}}]"#,
    )
    .unwrap();
    let named = Parser::from_names(&registry(), &["call_line"], vec![], Some(false)).unwrap();
    let out = named.parse("One moment.\nCALL get_time", &tools);
    assert_eq!(out.calls[0].name(), "get_time");
    assert_eq!(out.reply, "One moment.");
    assert_eq!(out.telemetry.parse_mode, "call_line");
    let auto = Parser::auto().parse("CALL get_time", &tools);
    assert_eq!(auto.calls.len(), 1);
}
