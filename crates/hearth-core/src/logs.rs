//! What hearth logs, and what it never logs unless asked: the words said in the room.
//!
//! Logs go to stderr (the journal under systemd), filtered by `HEARTH_LOG` (tracing's
//! `EnvFilter` syntax; default `warn`). Events that carry what someone said or what a tool
//! answered (a transcript, a request, a tool's error text with its arguments) use the
//! [`TRANSCRIPT`] target, which is off unless `HEARTH_LOG` names it
//! (`HEARTH_LOG=info,transcript=info`): a household's speech does not end up in the
//! journal, readable by every admin and kept for weeks, because someone turned on `info`.

/// The target of events that carry words said or heard.
pub const TRANSCRIPT: &str = "transcript";

/// The filter for `HEARTH_LOG`'s value (`None`: unset): `warn` by default, and transcripts
/// off unless the value names their target.
pub fn filter(spec: Option<&str>) -> String {
    let spec = spec
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .unwrap_or("warn");
    if spec.contains(TRANSCRIPT) {
        spec.to_string()
    } else {
        format!("{spec},{TRANSCRIPT}=off")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transcripts_are_logged_only_when_asked_for() {
        assert_eq!(filter(None), "warn,transcript=off");
        assert_eq!(filter(Some("info")), "info,transcript=off");
        assert_eq!(filter(Some("hearth=debug")), "hearth=debug,transcript=off");
        assert_eq!(filter(Some("info,transcript=info")), "info,transcript=info");
        assert_eq!(filter(Some("  ")), "warn,transcript=off");
    }
}
