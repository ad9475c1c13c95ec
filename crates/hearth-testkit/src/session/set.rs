// The session test sets (tests/session/*.jsonl, described in tests/session/README.md).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// What kind of request a line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// One plain command.
    Command,
    /// One command in other words.
    Paraphrase,
    /// Two commands in one sentence.
    Two,
    /// Needs the turn before it ("and the bedroom too").
    FollowUp,
    /// Asks about a device's state, the time or the date: the get_ tool.
    Question,
    /// Must call nothing.
    None,
    /// Asks for a call its tool's `confirm` holds (unlocking a door): that call waits for a
    /// yes, hearth asks back; `expect` lists what runs at once (often nothing).
    Asks,
    /// A yes to the question the turn before asked: runs the held call.
    Confirm,
}

impl Kind {
    pub const ALL: [Kind; 8] = [
        Kind::Command,
        Kind::Paraphrase,
        Kind::Two,
        Kind::FollowUp,
        Kind::Question,
        Kind::None,
        Kind::Asks,
        Kind::Confirm,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Kind::Command => "command",
            Kind::Paraphrase => "paraphrase",
            Kind::Two => "two",
            Kind::FollowUp => "follow_up",
            Kind::Question => "question",
            Kind::None => "none",
            Kind::Asks => "asks",
            Kind::Confirm => "confirm",
        }
    }
}

/// One expected call: the tool and its arguments. An argument given as `{"min": a, "max": b}`
/// (either bound may be left out) accepts any number in that closed range.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    pub name: String,
    #[serde(default)]
    pub arguments: Map<String, Value>,
}

/// One line of a set: what is said, what kind it is, the calls it should make.
#[derive(Debug, Clone, Deserialize)]
pub struct Case {
    pub say: String,
    pub kind: Kind,
    pub expect: Vec<Expect>,
    /// What the household says when hearth asks back before running this request's calls
    /// ("Shall I …?": a yes; "Which room: …?": a room). `typed-session` says it only when
    /// asked ("Yes." when this is unset); a spoken session says it after the request when
    /// hearth asked, and only when it is set.
    #[serde(default)]
    pub answer: Option<String>,
    /// A free-form remark (ignored by the scorer).
    #[serde(default)]
    pub note: Option<String>,
    /// 1-based line in its file (filled in by [`load`]).
    #[serde(skip)]
    pub line: usize,
}

/// tests/session in the checkout.
pub fn set_dir() -> PathBuf {
    crate::root().join("tests/session")
}

/// A set file by name (`demo`, `slice`) or path.
pub fn set_path(name: &str) -> PathBuf {
    let p = PathBuf::from(name);
    if p.extension().is_some() || p.components().count() > 1 {
        p
    } else {
        set_dir().join(format!("{name}.jsonl"))
    }
}

/// Every case of a set file, in order; blank lines and `#` comment lines are skipped.
pub fn load(path: &Path) -> Result<Vec<Case>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read the set {}: {e}", path.display()))?;
    let mut cases = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut case: Case =
            serde_json::from_str(line).map_err(|e| format!("{}:{}: {e}", path.display(), i + 1))?;
        case.line = i + 1;
        check(&case).map_err(|e| format!("{}:{}: {e}", path.display(), i + 1))?;
        cases.push(case);
    }
    Ok(cases)
}

/// A case that cannot be scored as written.
pub fn check(case: &Case) -> Result<(), String> {
    if case.say.trim().is_empty() {
        return Err("`say` is empty".into());
    }
    match (case.kind, case.expect.len()) {
        (Kind::None, 0) => Ok(()),
        (Kind::None, _) => Err("a `none` case expects no calls".into()),
        (Kind::Two, n) if n < 2 => Err("a `two` case expects at least two calls".into()),
        (Kind::Asks, _) => Ok(()),
        (_, 0) => Err("only `none` and `asks` cases expect no calls".into()),
        _ => Ok(()),
    }
}
