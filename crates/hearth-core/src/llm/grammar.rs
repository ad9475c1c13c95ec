//! Grammars for constrained decoding, per `tool_choice_policy`.
//!
//! **llguidance, not GBNF.** llama-cpp-2's `llguidance` feature takes a Lark grammar whose
//! rules may embed JSON Schema directly (`%json { … }`), so each tool's own schema (enums,
//! required keys, `additionalProperties: false`, number bounds) constrains the arguments with
//! no hand-written schema-to-GBNF converter; its masks are computed lazily over a token trie,
//! much faster per token than llama.cpp's GBNF sampler, and it builds offline in Rust.
//!
//! The grammar follows the model's own wire format, described by the preset's
//! [`GrammarShape`]: for Qwen/Hermes `<tool_call>\n{"name": …, "arguments": …}\n</tool_call>`,
//! one or more calls. The JSON is compact with Python's separators (`", "`, `": "`), which is
//! what these models write unconstrained, so the grammar forces the model's habits rather
//! than fighting them. Grammars are cached by the registry fingerprint and the choice.

use std::sync::{Arc, Mutex};

use serde_json::{json, Value};

use crate::preset::{GrammarShape, ToolChoicePolicy};
use crate::toolcall::ToolSet;

/// What a hop must produce.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum ToolChoice {
    /// The model decides: no grammar.
    Auto,
    /// At least one call to any registered tool.
    Required,
    /// A call to this tool.
    Named(String),
    /// Plain words only, no call: no braces, brackets, angle brackets or backticks, so no
    /// JSON, markup or code. The hop loop uses it when a small model keeps calling or
    /// echoing instead of answering from the results it already has.
    Reply,
}

/// The reply-only grammar (see [`ToolChoice::Reply`]).
pub const REPLY_LARK: &str = "start: TEXT\nTEXT: /[^{}\\[\\]<>`|\\\\]+/\n";

impl ToolChoice {
    /// The choice for `hop` (0-based) under `policy`; `forced` names one tool for hop 0.
    pub(crate) fn for_hop(
        policy: ToolChoicePolicy,
        hop: usize,
        forced: Option<&str>,
    ) -> ToolChoice {
        match (forced, policy, hop) {
            (Some(name), _, 0) => ToolChoice::Named(name.to_string()),
            (_, ToolChoicePolicy::RequiredAlways, _) => ToolChoice::Required,
            (_, ToolChoicePolicy::RequiredFirstHop, 0) => ToolChoice::Required,
            _ => ToolChoice::Auto,
        }
    }
}

/// Errors building a grammar.
#[derive(Debug, thiserror::Error)]
pub enum GrammarError {
    #[error("tool_choice {choice} needs a grammar, but preset {preset:?} has no [grammar] table describing its call format; add one (see presets/qwen2.5-coder.toml) or use tool_choice_policy = \"auto\"")]
    NoShape { preset: String, choice: String },
    #[error("cannot force tool {0:?}: no such tool in the registry")]
    UnknownTool(String),
    #[error("tool_choice required, but no tools are registered")]
    NoTools,
}

/// The Lark grammar text (llguidance dialect) for `choice`, or None for `Auto`.
pub(crate) fn lark_for(
    shape: &GrammarShape,
    tools: &ToolSet,
    choice: &ToolChoice,
) -> Result<Option<String>, GrammarError> {
    let names: Vec<&str> = match choice {
        ToolChoice::Auto => return Ok(None),
        ToolChoice::Reply => return Ok(Some(REPLY_LARK.to_string())),
        ToolChoice::Required => tools.names().collect(),
        ToolChoice::Named(n) => {
            if !tools.contains(n) {
                return Err(GrammarError::UnknownTool(n.clone()));
            }
            vec![n.as_str()]
        }
    };
    if names.is_empty() {
        return Err(GrammarError::NoTools);
    }
    let rules = call_rules(shape, tools, &names);
    let start = if matches!(choice, ToolChoice::Required) {
        format!("start: {}", calls("call", &lit(&shape.separator)))
    } else {
        "start: call".to_string()
    };
    Ok(Some(format!("{start}\n{rules}")))
}

/// Calls a hop may make at most: a small model held to calls can otherwise write the same
/// ones over and over until its tokens run out.
pub(crate) const MAX_CALLS_PER_HOP: usize = 3;

/// One to [`MAX_CALLS_PER_HOP`] of `rule`, `sep` between them, as a Lark expression:
/// `call ("\n" call ("\n" call)?)?`.
fn calls(rule: &str, sep: &str) -> String {
    let mut expr = String::new();
    for _ in 1..MAX_CALLS_PER_HOP {
        expr = format!(" ({sep} {rule}{expr})?");
    }
    format!("{rule}{expr}")
}

/// A Lark string literal.
fn lit(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

/// The rules of a call in `shape`'s wire format to one of `names`: `call` (with the
/// prefix and suffix) and `body` (the JSON object, its arguments held to the tool's
/// schema).
fn call_rules(shape: &GrammarShape, tools: &ToolSet, names: &[&str]) -> String {
    let variants: Vec<Value> = names
        .iter()
        .filter_map(|n| tools.spec(n))
        .map(|spec| {
            let mut props = serde_json::Map::new();
            props.insert("name".into(), json!({ "const": spec.name }));
            props.insert(shape.arguments_key.clone(), spec.parameters.clone());
            json!({
                "type": "object",
                "properties": props,
                "required": ["name", shape.arguments_key],
                "additionalProperties": false,
            })
        })
        .collect();
    let mut schema = if variants.len() == 1 {
        variants.into_iter().next().unwrap_or(Value::Null)
    } else {
        json!({ "anyOf": variants })
    };
    if let Value::Object(m) = &mut schema {
        m.insert(
            "x-guidance".into(),
            json!({
                "whitespace_flexible": false,
                "item_separator": ", ",
                "key_separator": ": ",
            }),
        );
    }
    format!(
        "call: {} body {}\nbody: %json {}\n",
        lit(&shape.prefix),
        lit(&shape.suffix),
        schema
    )
}

/// A grammar a free hop is held to from the moment its output begins a call to a tool of
/// the registry: what the model writes first stays its own (words, or a call), but once it
/// has written `{"name": "` and the start of a known tool's name, the rest of the call
/// (names, keys, punctuation, the arguments' schema) is the grammar's, its forced tokens
/// evaluated in batches. A call to a tool that does not exist is never held (it is the
/// small model's way to answer in words: `{"name": "Joke", …}`).
#[derive(Debug, Clone, PartialEq)]
pub struct LazyGrammar {
    /// What a call begins with, up to its tool's name: the wire format's
    /// (`<tool_call>\n{"name": "`) and, when the preset reads bare JSON calls, `{"name": "`.
    openers: Vec<String>,
    /// The tools a call may name.
    names: Vec<String>,
    /// The Lark grammar of the whole output once held: calls in the wire format, or one
    /// bare JSON call (the parser runs no two loose candidates: the rest of a request is
    /// a follow-up hop's).
    pub grammar: Arc<str>,
}

impl LazyGrammar {
    /// The lazy grammar over `tools` in `shape`'s wire format; `bare`: bare JSON calls too.
    pub fn new(shape: &GrammarShape, tools: &ToolSet, bare: bool) -> Result<Self, GrammarError> {
        let names: Vec<&str> = tools.names().collect();
        if names.is_empty() {
            return Err(GrammarError::NoTools);
        }
        let rules = call_rules(shape, tools, &names);
        let wrapped = calls("call", &lit(&shape.separator));
        let opener = "{\"name\": \"".to_string();
        let (start, openers) = if bare {
            (
                format!("start: {wrapped} | body"),
                vec![format!("{}{opener}", shape.prefix), opener],
            )
        } else {
            (
                format!("start: {wrapped}"),
                vec![format!("{}{opener}", shape.prefix)],
            )
        };
        Ok(LazyGrammar {
            openers,
            names: names.iter().map(|n| n.to_string()).collect(),
            grammar: Arc::from(format!("{start}\n{rules}")),
        })
    }

    /// What a call begins with, up to its tool's name (`<tool_call>\n{"name": "`, and
    /// `{"name": "` when bare calls are read): the engine drafts the one the output begins
    /// with once it has its first token.
    pub fn openers(&self) -> impl Iterator<Item = &str> {
        self.openers.iter().map(String::as_str)
    }

    /// Whether the output so far, `text`, has begun a call the grammar holds:
    /// `Some(true)`, hold it from now on; `Some(false)`, it never will (words, or a call to
    /// a tool that does not exist); `None`, not known yet.
    pub fn begins(&self, text: &str) -> Option<bool> {
        let mut waiting = false;
        for opener in &self.openers {
            match text.strip_prefix(opener.as_str()) {
                Some("") => waiting = true,
                Some(typed) => {
                    let known = match typed.split_once('"') {
                        Some((name, _)) => self.names.iter().any(|n| n == name),
                        None => self.names.iter().any(|n| n.starts_with(typed)),
                    };
                    return Some(known);
                }
                None => waiting |= opener.starts_with(text),
            }
        }
        (!waiting).then_some(false)
    }
}

/// Whether llguidance can turn `spec`'s parameter schema into a grammar: a schema the tools'
/// JSON Schema validator accepts may still use what llguidance does not (a backreference in
/// a `pattern`, say), and a grammar that fails to compile fails every later constrained hop
/// that includes the tool. Checked when a tool is offered, with a tokenizer of single bytes
/// (the model's own is not needed: a schema compiles or not whatever the vocabulary).
pub fn check_schema(spec: &crate::toolcall::ToolSpec) -> Result<(), String> {
    let shape = GrammarShape {
        prefix: "<tool_call>".into(),
        suffix: "</tool_call>".into(),
        separator: "\n".into(),
        arguments_key: "arguments".into(),
    };
    let tools = ToolSet::new(vec![spec.clone()]).map_err(|e| e.to_string())?;
    let lark = lark_for(&shape, &tools, &ToolChoice::Named(spec.name.clone()))
        .map_err(|e| e.to_string())?
        .unwrap_or_default();
    let factory = schema_check_factory()?;
    factory
        .create_parser(llguidance::api::TopLevelGrammar::from_lark(lark))
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// The parser factory [`check_schema`] compiles with: built once, over single bytes.
fn schema_check_factory() -> Result<&'static llguidance::ParserFactory, String> {
    static FACTORY: std::sync::OnceLock<Result<llguidance::ParserFactory, String>> =
        std::sync::OnceLock::new();
    FACTORY
        .get_or_init(|| {
            let env = llguidance::toktrie::ApproximateTokEnv::single_byte_env();
            let mut f = llguidance::ParserFactory::new_simple(&env).map_err(|e| e.to_string())?;
            f.quiet();
            Ok(f)
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// Grammar texts memoised by (registry fingerprint, shape, choice): the per-turn cost of
/// picking a grammar is a hash lookup. Bounded: the [`GRAMMARS_KEPT`] used last (a tool set
/// that changes, by `RegisterTool` or a provider leaving, must not grow it for ever).
#[derive(Debug)]
pub(crate) struct GrammarCache {
    map: Mutex<crate::bounded::Lru<GrammarKey, Option<Arc<str>>>>,
    /// The lazy grammar of the latest tool set ([`GrammarCache::lazy`]).
    lazy: Mutex<Option<(LazyKey, Arc<LazyGrammar>)>>,
}

/// (registry fingerprint, wire format, bare JSON calls too).
type LazyKey = (String, GrammarShape, bool);

/// Grammars a [`GrammarCache`] keeps: a choice per tool and two more, for a few tool sets.
pub const GRAMMARS_KEPT: usize = 64;

impl Default for GrammarCache {
    fn default() -> Self {
        GrammarCache {
            map: Mutex::new(crate::bounded::Lru::new("llm.grammars", GRAMMARS_KEPT)),
            lazy: Mutex::new(None),
        }
    }
}

/// (registry fingerprint, wire format, choice).
type GrammarKey = (String, GrammarShape, ToolChoice);

impl GrammarCache {
    pub fn new() -> Self {
        Self::default()
    }

    /// The grammar for `choice`, built once per key.
    pub fn get(
        &self,
        fingerprint: &str,
        shape: &GrammarShape,
        tools: &ToolSet,
        choice: &ToolChoice,
    ) -> Result<Option<Arc<str>>, GrammarError> {
        if *choice == ToolChoice::Auto {
            return Ok(None);
        }
        let key = (fingerprint.to_string(), shape.clone(), choice.clone());
        if let Ok(mut map) = self.map.lock() {
            if let Some(hit) = map.get(&key) {
                return Ok(hit.clone());
            }
        }
        let built = lark_for(shape, tools, choice)?.map(Arc::from);
        if let Ok(mut map) = self.map.lock() {
            map.put(key, built.clone());
        }
        Ok(built)
    }

    /// The lazy grammar over `tools` ([`LazyGrammar::new`]), built once per tool set (the
    /// latest one is kept).
    pub fn lazy(
        &self,
        fingerprint: &str,
        shape: &GrammarShape,
        tools: &ToolSet,
        bare: bool,
    ) -> Result<Arc<LazyGrammar>, GrammarError> {
        let key = (fingerprint.to_string(), shape.clone(), bare);
        if let Ok(held) = self.lazy.lock() {
            if let Some((_, g)) = held.as_ref().filter(|(k, _)| *k == key) {
                return Ok(g.clone());
            }
        }
        let built = Arc::new(LazyGrammar::new(shape, tools, bare)?);
        if let Ok(mut held) = self.lazy.lock() {
            *held = Some((key, built.clone()));
        }
        Ok(built)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn qwen() -> GrammarShape {
        GrammarShape {
            prefix: "<tool_call>\n".into(),
            suffix: "\n</tool_call>".into(),
            separator: "\n".into(),
            arguments_key: "arguments".into(),
        }
    }

    fn tools() -> ToolSet {
        ToolSet::from_openai_value(&json!([
            {"type": "function", "function": {"name": "set_light", "description": "",
              "parameters": {"type": "object", "properties": {"room": {"type": "string"}, "on": {"type": "boolean"}},
                             "required": ["room", "on"]}}},
            {"type": "function", "function": {"name": "get_time", "description": "",
              "parameters": {"type": "object", "properties": {}}}}
        ]))
        .unwrap()
    }

    #[test]
    fn policy_picks_choice_per_hop() {
        use ToolChoicePolicy::*;
        assert_eq!(ToolChoice::for_hop(Auto, 0, None), ToolChoice::Auto);
        assert_eq!(
            ToolChoice::for_hop(RequiredFirstHop, 0, None),
            ToolChoice::Required
        );
        assert_eq!(
            ToolChoice::for_hop(RequiredFirstHop, 1, None),
            ToolChoice::Auto
        );
        assert_eq!(
            ToolChoice::for_hop(RequiredAlways, 3, None),
            ToolChoice::Required
        );
        assert_eq!(
            ToolChoice::for_hop(Auto, 0, Some("get_time")),
            ToolChoice::Named("get_time".into())
        );
        assert_eq!(
            ToolChoice::for_hop(Auto, 1, Some("get_time")),
            ToolChoice::Auto
        );
    }

    #[test]
    fn required_grammar_names_every_tool_in_the_wire_format() {
        let g = lark_for(&qwen(), &tools(), &ToolChoice::Required)
            .unwrap()
            .unwrap();
        assert!(
            g.starts_with("start: call (\"\\n\" call (\"\\n\" call)?)?\n"),
            "at most three calls: {g}"
        );
        assert!(
            g.contains("call: \"<tool_call>\\n\" body \"\\n</tool_call>\""),
            "{g}"
        );
        assert!(g.contains(r#"{"const":"set_light"}"#) && g.contains(r#"{"const":"get_time"}"#));
        assert!(g.contains("\"key_separator\":\": \""), "{g}");
    }

    #[test]
    fn named_grammar_has_only_that_tool_and_unknown_is_an_error() {
        let g = lark_for(&qwen(), &tools(), &ToolChoice::Named("get_time".into()))
            .unwrap()
            .unwrap();
        assert!(g.contains("get_time") && !g.contains("set_light"), "{g}");
        assert!(matches!(
            lark_for(&qwen(), &tools(), &ToolChoice::Named("nope".into())),
            Err(GrammarError::UnknownTool(_))
        ));
        assert!(matches!(
            lark_for(&qwen(), &ToolSet::empty(), &ToolChoice::Required),
            Err(GrammarError::NoTools)
        ));
        assert!(lark_for(&qwen(), &tools(), &ToolChoice::Auto)
            .unwrap()
            .is_none());
    }

    #[test]
    fn a_lazy_grammar_holds_a_call_to_a_known_tool_once_it_begins() {
        let g = LazyGrammar::new(&qwen(), &tools(), true).unwrap();
        // not known yet: the start of an opener, or the opener alone
        for text in [
            "{",
            "{\"na",
            "{\"name\": \"",
            "<tool_",
            "<tool_call>\n{\"name\": \"",
        ] {
            assert_eq!(g.begins(text), None, "{text:?}");
        }
        // a known tool's name begun, in either form
        for text in [
            "{\"name\": \"set",
            "{\"name\": \"get_time\"",
            "<tool_call>\n{\"name\": \"s",
        ] {
            assert_eq!(g.begins(text), Some(true), "{text:?}");
        }
        // words, another shape, or a tool that does not exist: never held
        for text in [
            "Sure",
            " {",
            "{\"arguments\"",
            "{\"name\": \"Joke",
            "{\"name\": \"set_lights\"",
            "<tool_call>\n{\"name\": \"x",
        ] {
            assert_eq!(g.begins(text), Some(false), "{text:?}");
        }
        assert!(
            g.grammar.starts_with(
                "start: call (\"\\n\" call (\"\\n\" call)?)? | body\ncall: \"<tool_call>\\n\" body"
            ),
            "{}",
            g.grammar
        );
        // without bare JSON calls only the wire format is held
        let wrapped = LazyGrammar::new(&qwen(), &tools(), false).unwrap();
        assert_eq!(wrapped.begins("{\"name\": \"set"), Some(false));
        assert!(wrapped
            .grammar
            .starts_with("start: call (\"\\n\" call (\"\\n\" call)?)?\n"));
        assert!(matches!(
            LazyGrammar::new(&qwen(), &ToolSet::empty(), true),
            Err(GrammarError::NoTools)
        ));
    }

    #[test]
    fn the_lazy_grammar_is_built_once_per_tool_set() {
        let c = GrammarCache::new();
        let a = c.lazy("fp1", &qwen(), &tools(), true).unwrap();
        let b = c.lazy("fp1", &qwen(), &tools(), true).unwrap();
        assert!(Arc::ptr_eq(&a, &b));
        let other = c.lazy("fp2", &qwen(), &tools(), true).unwrap();
        assert!(!Arc::ptr_eq(&a, &other));
    }

    #[test]
    fn the_lazy_grammar_compiles() {
        let env = llguidance::toktrie::ApproximateTokEnv::single_byte_env();
        let factory = llguidance::ParserFactory::new_simple(&env).unwrap();
        let g = LazyGrammar::new(&qwen(), &tools(), true).unwrap();
        factory
            .create_parser(llguidance::api::TopLevelGrammar::from_lark(
                g.grammar.to_string(),
            ))
            .unwrap();
    }

    #[test]
    fn cache_builds_once_per_key() {
        let c = GrammarCache::new();
        let a = c
            .get("fp1", &qwen(), &tools(), &ToolChoice::Required)
            .unwrap()
            .unwrap();
        let b = c
            .get("fp1", &qwen(), &tools(), &ToolChoice::Required)
            .unwrap()
            .unwrap();
        assert!(Arc::ptr_eq(&a, &b));
        c.get("fp2", &qwen(), &tools(), &ToolChoice::Required)
            .unwrap();
        assert_eq!(c.map.lock().unwrap().len(), 2);
    }

    #[test]
    fn the_cache_keeps_the_grammars_used_last_however_often_the_tools_change() {
        let c = GrammarCache::new();
        let first = c
            .get("fp0", &qwen(), &tools(), &ToolChoice::Required)
            .unwrap()
            .unwrap();
        // a tool set that changes again and again (RegisterTool, a provider leaving)
        for i in 1..=3 * GRAMMARS_KEPT {
            c.get(&format!("fp{i}"), &qwen(), &tools(), &ToolChoice::Required)
                .unwrap();
        }
        assert_eq!(c.map.lock().unwrap().len(), GRAMMARS_KEPT);
        // the oldest was forgotten: asked again, it is built again
        let again = c
            .get("fp0", &qwen(), &tools(), &ToolChoice::Required)
            .unwrap()
            .unwrap();
        assert!(!Arc::ptr_eq(&first, &again));
        assert_eq!(first, again);
    }
}
