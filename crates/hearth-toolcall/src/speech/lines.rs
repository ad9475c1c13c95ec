//! Lines that are not speech, known by how they start: log lines, stack traces, table rows,
//! and the labels of a transcript (`User:`, `Thought:`, `[Reasoning]`, `Final Answer:`).
//!
//! Every rule looks only at the start of a line, or for labels and log output also at the
//! start of a sentence inside a line ([`next_segment`]), so it is judged as soon as enough
//! of it has arrived; until then, while streaming, it is held back (`Maybe`).

/// Whether a line matches a rule: `Maybe` while more of it must arrive to tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    Yes,
    No,
    Maybe,
}

use Verdict::{Maybe, No, Yes};

use super::steps::{self, Seen};

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
/// listener: only the levels no one says aloud (DEBUG, TRACE, INFO) count before `: `.
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
                if matches!(*l, "DEBUG" | "TRACE" | "INFO") {
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

/// A log line: an ISO, slashed, syslog or clock timestamp, `[LEVEL]` or `[<digits>`,
/// `LEVEL ` or `LEVEL:`, a key and `=` or a snake_case key and `:` (`rc=0`,
/// `tool_result:`), a module path (`hearth::agent: …`), or a REPL or wire prompt (`>>>`,
/// `<<<`, `==>`).
fn log_line(t: &str, complete: bool) -> Verdict {
    let stamp = any(["####-##-##~##:##", "####/##/##", "##:##:##"]
        .iter()
        .map(|p| shape(t, p, complete)));
    let syslog = any(syslog_shapes().iter().map(|p| shape(t, p, complete)));
    let level = bare_level(t, complete);
    let prompt = any([">>>", "<<<", "==>"].iter().map(|p| starts(t, p, complete)));
    any([
        stamp,
        syslog,
        level,
        prompt,
        key_first(t, complete),
        bracketed(t, complete),
        module_path(t, complete),
    ])
}

/// A first word that is a key, as loggers and tool traces print them: lower case, two or
/// more chars and `=` and a bare value (`rc=0`; "E=mc²" is speech, `id="r1">` an
/// attribute), a logfmt key (`msg="…"`), or snake_case and `:` (`tool_result: ok`) unless
/// it names a transcript label (`final_answer:`).
fn key_first(t: &str, complete: bool) -> Verdict {
    const MAX: usize = 64;
    let run = t
        .bytes()
        .take(MAX)
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.'))
        .count();
    if run == t.len() && run < MAX {
        return if complete { No } else { Maybe };
    }
    let word = &t[..run];
    let first_lower = word.starts_with(|c: char| c.is_ascii_lowercase());
    match t.as_bytes().get(run) {
        Some(b'=') => {
            // `id="r1">` on a line of its own is a tag's attribute, not a log line
            let logfmt = ["level", "lvl", "time", "ts", "msg"].contains(&word);
            let quoted = matches!(t.as_bytes().get(run + 1), Some(b'"' | b'\''));
            let lower = word.bytes().all(|c| !c.is_ascii_uppercase());
            if logfmt || (first_lower && lower && word.len() >= 2 && !quoted) {
                Yes
            } else {
                No
            }
        }
        Some(b':') => {
            let snake = word.starts_with(|c: char| c.is_ascii_alphabetic())
                && word.split('_').filter(|p| !p.is_empty()).count() >= 2
                && !word.contains('.');
            if snake && lookup(&normal(word)).is_none() {
                Yes
            } else {
                No
            }
        }
        _ => No,
    }
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
    /// Keep it up to this byte, and stop there.
    Until(usize),
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
            Line::Until(to) => {
                out.push_str(line.get(..to).unwrap_or(""));
                break;
            }
        }
        rest = next;
    }
    out
}

/// Words that open what a program appends to a reply after a rule: a debug or telemetry
/// section, not speech.
const APPENDIX_WORDS: &[&str] = &[
    "debug",
    "debugging",
    "telemetry",
    "diagnostic",
    "diagnostics",
    "metrics",
    "trace",
    "tracing",
    "stats",
    "statistics",
    "log",
    "logs",
    "logging",
    "meta",
    "metadata",
    "internal",
    "dev",
    "developer",
    "system",
    "timing",
    "timings",
    "usage",
    "tokens",
    "session",
    "context",
];

/// Longest run of words a label after a rule may have (`Debug info:`, `Model run stats:`).
const APPENDIX_LABEL: usize = 30;

/// Whether what follows a rule is an appendix: it starts with one of [`APPENDIX_WORDS`], in
/// any case, or with a label (a few words and `:`). "Anything else?" after a rule is speech.
fn appendix(t: &str, complete: bool) -> Verdict {
    let first = t.bytes().take_while(u8::is_ascii_alphabetic).count();
    let word = t[..first].to_ascii_lowercase();
    let ends_word = first < t.len() || complete;
    if ends_word && APPENDIX_WORDS.contains(&word.as_str()) {
        return Yes;
    }
    let run = t
        .bytes()
        .take(APPENDIX_LABEL + 1)
        .take_while(|c| c.is_ascii_alphabetic() || *c == b' ')
        .count();
    match t.as_bytes().get(run) {
        Some(b':') if run > 0 && run <= APPENDIX_LABEL => Yes,
        None if !complete && run <= APPENDIX_LABEL => Maybe,
        _ if !complete && !ends_word && APPENDIX_WORDS.iter().any(|w| w.starts_with(&word)) => {
            Maybe
        }
        _ => No,
    }
}

/// A rule inside `line`: a run of three or more of one of `-` `=` `*` `_` `~`, after a space
/// or at the line's start and before a space or its end (not "well---no", not `***bold***`).
/// Where it starts, and where the text after it starts.
fn rule_in(line: &str) -> Option<(usize, usize)> {
    let b = line.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let run = b[i..].iter().take_while(|&&x| x == c).count();
        let spaced_before = i == 0 || b[i - 1].is_ascii_whitespace();
        let spaced_after = b.get(i + run).is_none_or(u8::is_ascii_whitespace);
        if b"-=*_~".contains(&c) && run >= 3 && spaced_before && spaced_after {
            let after = i + run;
            let text = after
                + b[after..]
                    .iter()
                    .take_while(|x| x.is_ascii_whitespace())
                    .count();
            return Some((i, text));
        }
        i += run;
    }
    None
}

/// Drop log lines, stack frames, table rows and rules, and stack traces up to the blank line
/// that ends them; and after a rule, a debug or telemetry appendix ([`appendix`]) with all
/// that follows it ("The light is on. --- Debug: …").
pub(super) fn remove_shapes(s: &str, eof: bool) -> String {
    let mut in_trace = false;
    let mut after_rule = false;
    by_lines(s, eof, |line, complete| {
        if after_rule && !line.trim().is_empty() {
            match appendix(line.trim_start(), complete) {
                // an appendix, or what could still be one: nothing from here is said
                Yes | Maybe => return Line::Stop,
                No => after_rule = false,
            }
        }
        if let Some((at, text)) = rule_in(line) {
            match appendix(&line[text..], complete) {
                Yes | Maybe => return Line::Until(at),
                No if text == line.len() => {
                    // the rule ends the line: what comes next decides
                    after_rule = complete;
                    if line[..at].trim().is_empty() {
                        return Line::Drop;
                    }
                }
                No => {}
            }
        }
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
    ("internal note", Label::Hide),
    ("note to self", Label::Hide),
    ("notes to self", Label::Hide),
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

/// The label `line` starts with: `Word:` or `[Word]` (maybe in bold or after `#`, `>`), or
/// a heading that is only a label (`### Assistant`).
fn label_at(line: &str, complete: bool) -> Found {
    let b = line.as_bytes();
    let deco = b
        .iter()
        .take_while(|c| matches!(c, b' ' | b'\t' | b'>' | b'*' | b'#'))
        .count();
    let heading = line[..deco].contains('#');
    let bracket = b.get(deco) == Some(&b'[');
    let start = deco + usize::from(bracket);
    let run_len = b[start..]
        .iter()
        .take(25)
        .take_while(|c| c.is_ascii_alphabetic() || matches!(c, b' ' | b'_' | b'-'))
        .count();
    let run = normal(&line[start..start + run_len]);
    let after = line[start + run_len..].trim_start_matches('*');
    let text = if bracket {
        after
            .strip_prefix(']')
            .map(|r| r.trim_start_matches('*').strip_prefix(':').unwrap_or(r))
    } else {
        after.strip_prefix(':')
    };
    if let Some(r) = text {
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
        Some(k) if heading && !bracket => Found::Label(k, line.len()),
        _ => Found::Plain,
    }
}

/// Where the next segment of `line` starts after byte `k`: just past a sentence's end (`.`,
/// `!`, `?` or `…`, then closing quotes or brackets, then spaces). Labels and log output are
/// looked for at the start of a line and of each segment.
pub(super) fn next_segment(line: &str, k: usize) -> Option<usize> {
    let b = line.as_bytes();
    let mut i = k;
    while i < b.len() {
        let width = sentence_mark(&b[i..]);
        if width == 0 {
            i += 1;
            continue;
        }
        let mut j = i + width;
        loop {
            let w = sentence_mark(&b[j..]).max(closing_mark(&b[j..]));
            if w == 0 {
                break;
            }
            j += w;
        }
        while matches!(b.get(j), Some(b' ' | b'\t')) {
            j += 1;
        }
        return Some(j);
    }
    None
}

/// The length of the `.`, `!`, `?` or `…` that `b` starts with (0 if none).
fn sentence_mark(b: &[u8]) -> usize {
    match b.first() {
        Some(b'.' | b'!' | b'?') => 1,
        _ if b.starts_with("…".as_bytes()) => "…".len(),
        _ => 0,
    }
}

/// The length of the closing quote or bracket that `b` starts with (0 if none).
fn closing_mark(b: &[u8]) -> usize {
    match b.first() {
        Some(b'"' | b'\'' | b')' | b']') => 1,
        _ => ["”", "’", "»"]
            .iter()
            .find(|m| b.starts_with(m.as_bytes()))
            .map_or(0, |m| m.len()),
    }
}

/// Whether text written after `before` starts a segment: `before` is empty or ends (spaces,
/// `*`, `#` and `>` aside) with a line break or a sentence's end.
pub(super) fn at_segment_start(before: &str) -> bool {
    let t = before.trim_end_matches([' ', '\t', '*', '#', '>']);
    let t = t.trim_end_matches(['"', '\'', ')', ']', '”', '’', '»']);
    t.is_empty() || t.ends_with(['\n', '.', '!', '?', '…'])
}

/// Whether a lone `[NAME]` names a transcript label or a log level: at the start of a
/// segment it is kept for [`remove_labels`] to read (`[REASONING] …`, `[ANSWER] …`,
/// `[INFO] …`), where a lone token of another name is dropped.
pub(super) fn kept_bracket_word(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    lookup(&normal(name)).is_some() || LEVELS.contains(&upper.as_str())
}

/// What a segment starts with, for [`remove_labels`].
enum Seg {
    /// Log output: it and the rest of its line are not speech.
    Log,
    Label(Label, usize),
    /// Step-by-step reasoning may start here (`Step 1:`).
    Steps,
    /// An answer after step-by-step reasoning (`So the answer is:`): the text starts this
    /// many bytes on.
    Answer(usize),
    Plain,
    Maybe,
}

/// Role words that label a turn inside a line: the assistant's side, and the others'.
const SPEAKER_ROLES: &[&str] = &["assistant", "ai"];
const OTHER_ROLES: &[&str] = &["user", "human", "system"];

/// The role labels inside `line` (a role word after a non-letter, then `:`, maybe after
/// `*`s): where each starts, and whether it is the assistant's.
fn role_labels(line: &str) -> Vec<(usize, bool)> {
    let b = line.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let starts_word =
            b[i].is_ascii_alphabetic() && (i == 0 || !b[i - 1].is_ascii_alphanumeric());
        if !starts_word {
            i += 1;
            continue;
        }
        let end = i + b[i..]
            .iter()
            .take_while(|c| c.is_ascii_alphabetic())
            .count();
        let word = line[i..end].to_ascii_lowercase();
        let colon = line[end..].trim_start_matches('*').starts_with(':');
        if colon {
            if SPEAKER_ROLES.contains(&word.as_str()) {
                out.push((i, true));
            } else if OTHER_ROLES.contains(&word.as_str()) {
                out.push((i, false));
            }
        }
        i = end;
    }
    out
}

/// How a line that carries turns inside it is cut ([`transcript_cut`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cut {
    None,
    /// A transcript: the reply ends at this byte (its finished sentences kept).
    At(usize),
    /// Streaming: an assistant's label here; what follows waits for the line's end.
    Hold(usize),
}

/// A line that holds an assistant's label and another role's ("… assistant: … user: …") is
/// a transcript the model wrote, and the turns in it are not its answer: the reply ends at
/// the first label. While the line is still arriving, the text from an assistant's label on
/// is held, since another role's label later in the line would make it a transcript. One
/// role word with a colon ("I told the user: dinner is ready.") is how people write.
fn transcript_cut(line: &str, complete: bool) -> Cut {
    let labels = role_labels(line);
    let speaker = labels.iter().find(|l| l.1);
    match speaker {
        Some(&(at, _)) if !complete => Cut::Hold(label_start(line, at)),
        Some(_) if labels.iter().any(|l| !l.1) => Cut::At(label_start(line, labels[0].0)),
        _ => Cut::None,
    }
}

/// Where the label whose word starts at `at` starts, with the `*`, `#`, `>` and `[` before it.
fn label_start(line: &str, at: usize) -> usize {
    line[..at].trim_end_matches(['*', '#', '>', '[']).len()
}

/// The part of `text` up to the end of its last finished sentence (nothing if none ends).
fn finished_sentences(text: &str) -> &str {
    let mut end = 0;
    while let Some(n) = next_segment(text, end) {
        if n <= end {
            break;
        }
        end = n;
    }
    &text[..end]
}

/// Apply transcript labels, at the start of a line or of a sentence within one: an assistant
/// or answer label is dropped and its text kept; a scratchpad label hides what follows up
/// to the next label; another role's label ends the reply there. Text before any label is
/// speech. Log output that starts a sentence inside a line takes the rest of the line.
///
/// Step-by-step reasoning (`Step 1: …`, "Let's think step by step.") is held back: when an
/// answer follows (`Final answer:`, `So the answer is:`), only the answer is said; when none
/// does, the steps were the answer (a recipe) and are said at the end of the output.
pub(super) fn remove_labels(s: &str, eof: bool) -> String {
    let mut out = String::with_capacity(s.len());
    let mut speaking = true;
    let mut ended = false;
    // where in `out` held-back steps start
    let mut held: Option<usize> = None;
    let mut rest = s;
    'lines: while !rest.is_empty() {
        let (line, newline, next) = match rest.find('\n') {
            Some(p) => (&rest[..p], true, &rest[p + 1..]),
            None => (rest, false, ""),
        };
        let mut complete = newline || eof;
        let cut = transcript_cut(line, complete);
        let (line, newline) = match cut {
            Cut::None => (line, newline),
            Cut::At(p) => (finished_sentences(&line[..p]), false),
            Cut::Hold(p) => {
                complete = false;
                (&line[..p], false)
            }
        };
        // `line[from..]` is not yet said or dropped
        let mut from = 0;
        let mut k = 0;
        let mut dropped_whole = false;
        loop {
            let seg = &line[k..];
            let verdict = match log_line(seg.trim_start(), complete) {
                Yes => Seg::Log,
                Maybe => Seg::Maybe,
                No => match label_at(seg, complete) {
                    Found::Label(l, n) => Seg::Label(l, n),
                    Found::Maybe => Seg::Maybe,
                    Found::Plain if speaking && held.is_none() => {
                        match steps::opener(seg, complete) {
                            Seen::At(_) => Seg::Steps,
                            Seen::Maybe => Seg::Maybe,
                            Seen::No => Seg::Plain,
                        }
                    }
                    Found::Plain if held.is_some() => match steps::answer(seg, complete) {
                        Seen::At(n) => Seg::Answer(n),
                        Seen::Maybe => Seg::Maybe,
                        Seen::No => Seg::Plain,
                    },
                    Found::Plain => Seg::Plain,
                },
            };
            if !matches!(verdict, Seg::Plain) {
                // `from` is past k only when a marker ran over a sentence's end
                if speaking && from < k {
                    out.push_str(&line[from..k]);
                }
                from = from.max(k);
            }
            match verdict {
                Seg::Plain => {}
                Seg::Log => {
                    dropped_whole = k == 0;
                    from = line.len();
                    break;
                }
                Seg::Label(Label::Speak, n) | Seg::Answer(n) => {
                    speaking = true;
                    if let Some(t) = held.take() {
                        out.truncate(t);
                    }
                    from = k + n;
                }
                Seg::Label(Label::Hide, n) => {
                    speaking = false;
                    from = k + n;
                }
                Seg::Label(Label::Other, _) => {
                    ended = true;
                    break 'lines;
                }
                Seg::Steps => held = Some(out.len()),
                Seg::Maybe => break 'lines,
            }
            match next_segment(line, k) {
                Some(n) => k = n,
                None => break,
            }
        }
        if speaking && !dropped_whole {
            out.push_str(&line[from..]);
            if newline {
                out.push('\n');
            }
        }
        match cut {
            Cut::None => {}
            Cut::At(_) => {
                ended = true;
                break;
            }
            Cut::Hold(_) => break,
        }
        rest = next;
    }
    if let Some(t) = held.filter(|_| !eof && !ended) {
        // the answer that would make the steps reasoning may still come
        out.truncate(t);
    }
    out
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

    #[test]
    fn labels_inside_a_line() {
        assert_eq!(remove_labels("Sure. Assistant: Yes.", true), "Sure. Yes.");
        assert_eq!(remove_labels("On. User: say x", true), "On. ");
        assert_eq!(remove_labels("On.User: x", true), "On.");
        assert_eq!(
            remove_labels("Ok. [Thinking] x. [Answer] Yes.", true),
            "Ok. Yes."
        );
        assert_eq!(remove_labels("[REASONING] x\n[ANSWER] Yes.", true), "Yes.");
        assert_eq!(remove_labels("On. DEBUG: rc=0\nBye.", true), "On. \nBye.");
        assert_eq!(
            remove_labels("Ask the user: it's theirs.", true),
            "Ask the user: it's theirs."
        );
        // while streaming, a sentence start that may become a label is held back
        assert_eq!(remove_labels("On. Us", false), "On. ");
        assert_eq!(remove_labels("On. Usually", false), "On. ");
        assert_eq!(remove_labels("On. Usually it", false), "On. Usually it");
    }

    #[test]
    fn steps_are_held_until_an_answer_or_the_end() {
        let s = "Hi. Step 1: x. Step 2: y. Final answer: Yes.";
        assert_eq!(remove_labels(s, true), "Hi. Yes.");
        assert_eq!(remove_labels(&s[..30], false), "Hi. ");
        let recipe = "Step 1: mix. Step 2: bake.";
        assert_eq!(remove_labels(recipe, true), recipe);
        assert_eq!(remove_labels(recipe, false), "");
        assert_eq!(
            remove_labels("Step 1: x.\nSo the answer is: Yes.", true),
            "Yes."
        );
    }

    #[test]
    fn log_shapes_added() {
        for log in [
            ">>> call x()",
            "<<< 200 OK",
            "tool_result: ok",
            "rc=0 caller=x",
            "08:00:01.5 x",
            "2026/11/26 08:00 x",
            "INFO: x",
        ] {
            assert_eq!(shape_of(log, true), Shape::Line, "{log:?}");
        }
        for speech in [
            "E=mc2 is famous.",
            "Final_Answer: yes",
            "Note: hot.",
            "  id=\"r1\">x",
            "Info: the museum opens at nine.",
        ] {
            assert_eq!(shape_of(speech, true), Shape::Speech, "{speech:?}");
        }
    }

    #[test]
    fn segments() {
        let line = "Hi! \"Ok.\" Then… go.";
        let mut starts = Vec::new();
        let mut k = 0;
        while let Some(n) = next_segment(line, k) {
            starts.push(&line[n..]);
            k = n;
        }
        assert_eq!(starts, ["\"Ok.\" Then… go.", "Then… go.", "go.", ""]);
        assert!(at_segment_start("Done. **"));
        assert!(at_segment_start(""));
        assert!(at_segment_start("a\n"));
        assert!(!at_segment_start("I am"));
    }
}
