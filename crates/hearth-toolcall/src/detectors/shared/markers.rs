//! Small probes on marker text: [`prefix_of`] (a marker cut by the end of a stream) and
//! [`preview`] (the first characters of some text, for error messages).
//!
//! Used by `qwen3_coder`, `glm45`, `generic_xml`, `key_value`, `use_tag` and the shared XML
//! and `<tool_call>` helpers ([`super::tagged_blocks`], [`super::xml_call`],
//! [`super::xml_function`], [`super::xml_invoke`]).

/// The first few characters of `s`, for error messages.
pub(crate) fn preview(s: &str) -> String {
    let mut p: String = s.chars().take(24).collect();
    if p.len() < s.len() {
        p.push('…');
    }
    p
}

/// True if `s` is non-empty and a proper prefix of `marker` (a marker cut by the end of a
/// stream), or empty.
pub(crate) fn prefix_of(s: &str, marker: &str) -> bool {
    s.len() < marker.len() && marker.starts_with(s)
}
