//! Pythonic calls as candidates: [`candidates`] turns calls parsed by [`crate::pyliteral`]
//! into [`Candidate`]s.
//!
//! Used by `pythonic` and `lfm2`.

use serde_json::Value;

use crate::detector::Candidate;
use crate::pyliteral::PyCall;

/// Convert parsed pythonic calls to candidates.
pub(crate) fn candidates(calls: Vec<PyCall>) -> Vec<Candidate> {
    calls
        .into_iter()
        .map(|c| Candidate::new(c.name, Value::Object(c.arguments)))
        .collect()
}
