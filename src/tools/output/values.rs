//! Values in templates: what a call's arguments put into an argv element, a topic or an id,
//! told apart from the text the manifest wrote, and the one rule for where a value may go.
//!
//! A template is rendered with every `{{ … }}` output marked, so each value's place in the
//! result is known ([`render_marked`]); [`check`] then decides whether a value may stand
//! where it landed ([`Place`]). Every executor that builds a command, a topic or an id from
//! a call asks [`check`], so one function holds the rule for each place.

/// True when `source` has template syntax (`{{ … }}`, `{% … %}` or `{# … #}`): its text
/// depends on the call, or it is meant to.
pub(crate) fn is_template(source: &str) -> bool {
    source.contains("{{") || source.contains("{%") || source.contains("{#")
}
