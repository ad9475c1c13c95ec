//! Lines that are not speech, known by how they start: log lines, stack traces, table rows,
//! and the labels of a transcript (`User:`, `Thought:`, `Final Answer:`).
//!
//! Every rule looks only at the start of a line, so a line is judged as soon as enough of
//! it has arrived; until then, while streaming, it is held back (`Maybe`).

/// Whether a line matches a rule: `Maybe` while more of it must arrive to tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    Yes,
    No,
    Maybe,
}

use Verdict::{Maybe, No, Yes};

/// `Yes` if any is, else `Maybe` if any is, else `No`.
fn any(vs: impl IntoIterator<Item = Verdict>) -> Verdict {
    vs.into_iter().fold(No, |acc, v| match (acc, v) {
        (Yes, _) | (_, Yes) => Yes,
        (Maybe, _) | (_, Maybe) => Maybe,
        _ => No,
    })
}

/// Does `line` start with `lit`?
fn starts(line: &str, lit: &str, complete: bool) -> Verdict {
    if line.starts_with(lit) {
        Yes
    } else if !complete && lit.starts_with(line) {
        Maybe
    } else {
        No
    }
}

/// Does `line` start with `word` followed by one of `seps` (or nothing more)?
fn word_then(line: &str, word: &str, seps: &[char], complete: bool) -> Verdict {
    match line.strip_prefix(word).map(|r| r.chars().next()) {
        Some(Some(c)) if seps.contains(&c) => Yes,
        Some(Some(_)) => No,
        Some(None) if complete => Yes,
        Some(None) => Maybe,
        None => starts(line, word, complete),
    }
}

/// Does `line` start with the shape `pat`: `#` a digit, `~` `T` or a space, anything
/// else itself?
fn shape(line: &str, pat: &str, complete: bool) -> Verdict {
    let mut chars = line.chars();
    for p in pat.chars() {
        let Some(c) = chars.next() else {
            return if complete { No } else { Maybe };
        };
        let ok = match p {
            '#' => c.is_ascii_digit(),
            '~' => c == 'T' || c == ' ',
            _ => c == p,
        };
        if !ok {
            return No;
        }
    }
    Yes
}

/// Log levels as loggers print them (upper case only: "Warning: the stove is hot." is
/// speech).
const LEVELS: &[&str] = &[
    "ERROR", "WARN", "WARNING", "INFO", "DEBUG", "TRACE", "FATAL", "CRITICAL", "NOTICE",
];

/// A level that starts a line as loggers print it: `WARN hearth::tts: …`,
/// `WARNING:root:…`, `DEBUG: …`. "WARNING: the stove is hot." is a warning to the
/// listener: only the levels no one says aloud (DEBUG, TRACE) count before `: `.
fn bare_level(t: &str, complete: bool) -> Verdict {
    any(LEVELS.iter().map(|l| {
        let Some(r) = t.strip_prefix(l) else {
            return starts(t, l, complete);
        };
        let mut next = r.chars();
        match (next.next(), next.next()) {
            (None, _) | (Some(':'), None) if !complete => Maybe,
            (None, _) | (Some(' '), _) => Yes,
            (Some(':'), Some(c)) if c.is_whitespace() => {
                if matches!(*l, "DEBUG" | "TRACE") {
                    Yes
                } else {
                    No
                }
            }
            (Some(':'), _) => Yes,
            _ => No,
        }
    }))
}

/// Syslog timestamps: `Nov 26 08:00`, `Nov  6 08:00`.
fn syslog_shapes() -> &'static [String] {
    static S: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    S.get_or_init(|| {
        let months = [
            "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
        ];
        months
            .iter()
            .flat_map(|m| [format!("{m} ## ##:##"), format!("{m}  # ##:##")])
            .collect()
    })
}

/// A log line: an ISO or syslog timestamp, `[LEVEL]` or `[<digits>`, `LEVEL ` or `LEVEL:`,
/// logfmt keys, or a module path (`hearth::agent: …`).
fn log_line(t: &str, complete: bool) -> Verdict {
    let iso = shape(t, "####-##-##~##:##", complete);
    let syslog = any(syslog_shapes().iter().map(|p| shape(t, p, complete)));
    let level = bare_level(t, complete);
    let logfmt = any(["level=", "lvl=", "time=", "ts=", "msg="]
        .iter()
        .map(|k| starts(t, k, complete)));
    any([
        iso,
        syslog,
        level,
        logfmt,
        bracketed(t, complete),
        module_path(t, complete),
    ])
}

/// `[ERROR] …`, `[2026-11-26 …] …`.
fn bracketed(t: &str, complete: bool) -> Verdict {
    let Some(r) = t.strip_prefix('[') else {
        return No;
    };
    match r.chars().next() {
        None if complete => No,
        None => Maybe,
        Some(c) if c.is_ascii_digit() => Yes,
        Some(_) => any(LEVELS
            .iter()
            .map(|l| word_then(r, l, &[']', ' ', ':'], complete))),
    }
}

/// A first word like `hearth::agent:`: a Rust module path with a colon.
fn module_path(t: &str, complete: bool) -> Verdict {
    let run = t
        .bytes()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b':'))
        .count();
    if run == t.len() && !complete {
        return Maybe;
    }
    let word = &t[..run];
    if word.contains("::") && word.ends_with(':') && !word.ends_with("::") {
        Yes
    } else {
        No
    }
}

/// A stack frame: Python's `File "…", line N`, or a Java one.
fn frame(line: &str, t: &str, complete: bool) -> Verdict {
    any([
        java_frame(line, t, complete),
        starts(t, "File \"", complete),
    ])
}

/// `at com.x.Y.z(Y.java:1)`: indented, or a dotted name followed by `(`.
fn java_frame(line: &str, t: &str, complete: bool) -> Verdict {
    match starts(t, "at ", complete) {
        Yes if t.len() < line.len() => Yes,
        Yes => {
            let r = &t[3..];
            let name = r
                .bytes()
                .take_while(|c| c.is_ascii_alphanumeric() || b"_$.<>".contains(c))
                .count();
            match r.as_bytes().get(name) {
                None if !complete => Maybe,
                Some(b'(') if r[..name].contains('.') => Yes,
                _ => No,
            }
        }
        v => v,
    }
}

/// A markdown table row, a table's separator, or a rule.
fn table_or_rule(t: &str, complete: bool) -> Verdict {
    any(["|", "---", "___", "===", ":--"]
        .iter()
        .map(|p| starts(t, p, complete)))
}

/// The first line of a stack trace or panic report: it and every line after it up to a
/// blank line are the trace.
fn trace_start(t: &str, complete: bool) -> Verdict {
    const STARTS: &[&str] = &[
        "Traceback (most recent call last)",
        "thread '",
        "stack backtrace:",
        "Exception in thread ",
        "Caused by: ",
        "panicked at ",
        "goroutine ",
        "panic: ",
    ];
    any(STARTS.iter().map(|s| starts(t, s, complete)))
}

/// What one line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    Speech,
    /// This line is not speech.
    Line,
    /// This line starts a trace: it and the lines after it, to a blank line, are not speech.
    Trace,
    /// Not known yet.
    Maybe,
}

/// What `line` is, judged by its start.
fn shape_of(line: &str, complete: bool) -> Shape {
    let t = line.trim_start();
    let trace = trace_start(t, complete);
    let other = any([
        log_line(t, complete),
        frame(line, t, complete),
        table_or_rule(t, complete),
    ]);
    match (trace, other) {
        (Yes, _) => Shape::Trace,
        (_, Yes) => Shape::Line,
        (Maybe, _) | (_, Maybe) => Shape::Maybe,
        _ => Shape::Speech,
    }
}

/// What to do with one line.
enum Line {
    /// Keep it from this byte.
    Keep(usize),
    Drop,
    /// Stop here: the rest is not known yet (streaming) or not speech.
    Stop,
}

/// Run `judge(line, complete)` over the lines of `s` (without their `\n`); the last line is
/// complete only at the end of the output.
fn by_lines(s: &str, eof: bool, mut judge: impl FnMut(&str, bool) -> Line) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while !rest.is_empty() {
        let (line, newline, next) = match rest.find('\n') {
            Some(p) => (&rest[..p], true, &rest[p + 1..]),
            None => (rest, false, ""),
        };
        match judge(line, newline || eof) {
            Line::Keep(from) => {
                out.push_str(line.get(from..).unwrap_or(""));
                if newline {
                    out.push('\n');
                }
            }
            Line::Drop => {}
            Line::Stop => break,
        }
        rest = next;
    }
    out
}

/// Drop log lines, stack frames, table rows and rules, and stack traces up to the blank line
/// that ends them.
pub(super) fn remove_shapes(s: &str, eof: bool) -> String {
    let mut in_trace = false;
    by_lines(s, eof, |line, complete| {
        if in_trace {
            return match (line.trim().is_empty(), complete) {
                (true, true) => {
                    in_trace = false;
                    Line::Keep(0)
                }
                (true, false) => Line::Stop,
                (false, _) => Line::Drop,
            };
        }
        match shape_of(line, complete) {
            Shape::Speech => Line::Keep(0),
            Shape::Line => Line::Drop,
            Shape::Trace => {
                in_trace = true;
                Line::Drop
            }
            Shape::Maybe => Line::Stop,
        }
    })
}

/// What a label at the start of a line means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Label {
    /// The assistant's own words follow (`Assistant:`, `Final Answer:`): the label goes.
    Speak,
    /// A scratchpad follows (`Thought:`, `Action:`, `Observation:`): hidden up to the next
    /// label.
    Hide,
    /// Another role's turn follows (`User:`, `System:`): the reply ended before it.
    Other,
}

/// Labels by their normal form (lower case, single spaces; see [`normal`]).
const LABELS: &[(&str, Label)] = &[
    ("assistant", Label::Speak),
    ("ai", Label::Speak),
    ("answer", Label::Speak),
    ("final answer", Label::Speak),
    ("response", Label::Speak),
    ("final response", Label::Speak),
    ("user", Label::Other),
    ("human", Label::Other),
    ("system", Label::Other),
    ("developer", Label::Other),
    ("tool", Label::Other),
    ("function", Label::Other),
    ("ipython", Label::Other),
    ("instruction", Label::Other),
    ("input", Label::Other),
    ("thought", Label::Hide),
    ("thoughts", Label::Hide),
    ("thinking", Label::Hide),
    ("reasoning", Label::Hide),
    ("reflection", Label::Hide),
    ("scratchpad", Label::Hide),
    ("analysis", Label::Hide),
    ("internal", Label::Hide),
    ("internal notes", Label::Hide),
    ("inner monologue", Label::Hide),
    ("internal monologue", Label::Hide),
    ("question", Label::Hide),
    ("action", Label::Hide),
    ("action input", Label::Hide),
    ("observation", Label::Hide),
];

/// A label found at the start of a line.
enum Found {
    /// The label, and the byte where the text after it starts.
    Label(Label, usize),
    Plain,
    Maybe,
}

/// Lower case, `_`/`-` as spaces, runs of spaces as one.
fn normal(run: &str) -> String {
    let mut out = String::with_capacity(run.len());
    for c in run.chars() {
        let c = if c == '_' || c == '-' {
            ' '
        } else {
            c.to_ascii_lowercase()
        };
        if !(c == ' ' && (out.is_empty() || out.ends_with(' '))) {
            out.push(c);
        }
    }
    out
}

/// The label `run` (in normal form) is, if any.
fn lookup(run: &str) -> Option<Label> {
    LABELS
        .iter()
        .find(|(l, _)| *l == run.trim_end())
        .map(|(_, k)| *k)
}

/// The label `line` starts with: `Word:` (maybe in bold or after `#`, `>`), or a heading
/// that is only a label (`### Assistant`).
fn label_at(line: &str, complete: bool) -> Found {
    let b = line.as_bytes();
    let deco = b
        .iter()
        .take_while(|c| matches!(c, b' ' | b'\t' | b'>' | b'*' | b'#'))
        .count();
    let heading = line[..deco].contains('#');
    let run_len = b[deco..]
        .iter()
        .take(25)
        .take_while(|c| c.is_ascii_alphabetic() || matches!(c, b' ' | b'_' | b'-'))
        .count();
    let run = normal(&line[deco..deco + run_len]);
    let after = line[deco + run_len..].trim_start_matches('*');
    if let Some(r) = after.strip_prefix(':') {
        let text = r.trim_start_matches(['*', ' ', '\t']);
        return lookup(&run).map_or(Found::Plain, |k| Found::Label(k, line.len() - text.len()));
    }
    if !after.is_empty() || run_len > 24 {
        return Found::Plain;
    }
    if !complete {
        let could = LABELS.iter().any(|(l, _)| l.starts_with(run.as_str()));
        return if could { Found::Maybe } else { Found::Plain };
    }
    match lookup(&run) {
        Some(k) if heading => Found::Label(k, line.len()),
        _ => Found::Plain,
    }
}

/// Apply transcript labels: an assistant or answer label is dropped and its text kept; a
/// scratchpad label hides its line and the lines after it up to the next label; another
/// role's label ends the reply there. Text before any label is speech.
pub(super) fn remove_labels(s: &str, eof: bool) -> String {
    let mut speaking = true;
    let mut ended = false;
    by_lines(s, eof, |line, complete| {
        if ended {
            return Line::Stop;
        }
        match label_at(line, complete) {
            Found::Maybe => Line::Stop,
            Found::Label(Label::Speak, from) => {
                speaking = true;
                Line::Keep(from)
            }
            Found::Label(Label::Hide, _) => {
                speaking = false;
                Line::Drop
            }
            Found::Label(Label::Other, _) => {
                ended = true;
                Line::Stop
            }
            Found::Plain if speaking => Line::Keep(0),
            Found::Plain => Line::Drop,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_judged_by_their_start() {
        for log in [
            "2026-11-26T08:00:01Z INFO x",
            "[ERROR] x",
            "WARN x",
            "DEBUG: x",
            "Nov 26 08:00:01 pi x",
            "hearth::agent: x",
            "level=warn x",
            "| a | b |",
            "\tat com.x.Y.z(Y.java:1)",
            "at com.x.Y.z(Y.java:1)",
            "  File \"x.py\", line 3",
        ] {
            assert_eq!(shape_of(log, true), Shape::Line, "{log:?}");
        }
        for speech in [
            "Warning: hot.",
            "At home, yes.",
            "at home.",
            "2026 will be warm.",
            "It's 7:30.",
            "I can't: no.",
        ] {
            assert_eq!(shape_of(speech, true), Shape::Speech, "{speech:?}");
        }
        assert_eq!(shape_of("WAR", false), Shape::Maybe);
        assert_eq!(shape_of("Sure. The", false), Shape::Speech);
        assert_eq!(shape_of("thread 'main' panicked", true), Shape::Trace);
    }

    #[test]
    fn labels() {
        let said = remove_labels(
            "Hi.\nThought: x\ny\nFinal Answer: It is.\nUser: z\nAssistant: w",
            true,
        );
        assert_eq!(said, "Hi.\nIt is.\n");
        assert_eq!(remove_labels("**Answer:** Yes.", true), "Yes.");
        assert_eq!(remove_labels("### Assistant\nYes.", true), "\nYes.");
        assert_eq!(remove_labels("Note: yes.", true), "Note: yes.");
        assert_eq!(remove_labels("Action", false), "");
        assert_eq!(remove_labels("Action movies", false), "Action movies");
    }
}
