//! A call as a turn reports it: what the turn's JSON shows and what a session keeps of its
//! last calls (below both `messages` and `session`).

use serde::Serialize;
use serde_json::Value;

use crate::tools::ToolStatus;

/// A call as the turn reports it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CallReport {
    pub id: String,
    pub name: String,
    pub arguments: Value,
    pub status: ToolStatus,
    pub result: String,
}
