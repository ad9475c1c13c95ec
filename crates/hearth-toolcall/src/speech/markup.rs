//! Markup in reply text, whatever its name: `<tag …>…</tag>` elements, `<|x_start|>…<|x_end|>`
//! token pairs, `[NAME]…[/NAME]` pairs, comments and declarations.
//!
//! A voice says the words of a few wrappers (`<answer>`, `<response>`, `<b>`, …: see
//! [`Kind::Speech`]); every other element wraps something that is not for the listener
//! (reasoning, a scratchpad, notes, a call), so its content goes with its tags. An element
//! that never closes takes the rest of the text with it: fail closed.
//!
//! Lighter markup wraps notes to self too: `(internal: …)`, `[note to self: …]`,
//! `*thinks about the light*` ([`remove_asides`]); these are judged by their words, since
//! parentheses, brackets and stars are also part of ordinary answers.

use std::sync::OnceLock;

use crate::known_tags;

use super::lines;

/// One piece of markup at the start of a string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Markup {
    Tag(Tag),
    /// A comment, declaration, processing instruction or CDATA section: its length, or
    /// `None` when the text ends inside it.
    Aside(Option<usize>),
    /// The text ends where this may still become markup.
    Partial,
}

/// An opening, closing or empty tag.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Tag {
    pub len: usize,
    /// Lower case, `-` as `_`; token pairs by their shared name (`reasoning_start` →
    /// `reasoning`).
    pub name: String,
    pub close: bool,
    /// `<name/>`: opens nothing.
    pub empty: bool,
    /// `[NAME]`: wraps content only when its `[/NAME]` follows; alone it is a token
    /// (`[TOOL_CALLS]`) or a word in capitals (`[OK]`).
    pub bracket: bool,
}

/// What a tag's name says about its content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// The content is the reply: the tags go, the words stay.
    Speech,
    /// A token or an element with no content (`</s>`, `<br>`): the tag goes.
    Void,
    /// Anything else: tags and content go.
    Block,
}

/// Wrappers whose content is the reply itself, and inline formatting.
const SPEECH: &[&str] = &[
    "answer",
    "final_answer",
    "final",
    "response",
    "final_response",
    "reply",
    "solution",
    "box",
    "speak",
    "say",
    "b",
    "i",
    "u",
    "em",
    "strong",
    "p",
    "span",
    "mark",
    "small",
    "li",
    "ul",
    "ol",
];

/// Tokens and empty elements: `<s>`/`</s>` (begin and end of sequence), `<br>`, the names of
/// turn tokens (`<|begin_of_text|>`, `<|im_start|>`), whose turns [`super::turn`] handles.
const VOID: &[&str] = &[
    "s",
    "br",
    "hr",
    "img",
    "wbr",
    "eos",
    "bos",
    "pad",
    "unk",
    "text",
    "im",
    "turn",
    "turn_token",
    "escape",
    "sentence",
];

/// What the tag named `name` (in normal form) wraps.
pub(super) fn kind(name: &str) -> Kind {
    if SPEECH.contains(&name) {
        Kind::Speech
    } else if VOID.contains(&name) {
        Kind::Void
    } else {
        Kind::Block
    }
}

/// Tags longer than this (attributes included) are not tags.
const MAX_TAG: usize = 512;

/// The markup `s` starts with, if any.
pub(super) fn markup_at(s: &str) -> Option<Markup> {
    if s.starts_with('[') {
        return bracket_tag(s);
    }
    if !s.starts_with('<') {
        return None;
    }
    if s.len() == 1 {
        return Some(Markup::Partial);
    }
    if let Some(a) = aside(s) {
        return Some(a);
    }
    if s.starts_with("<|") {
        return token_tag(s);
    }
    angle_tag(s)
}

/// `<!-- … -->`, `<![CDATA[ … ]]>`, `<!DOCTYPE …>`, `<? … ?>`.
fn aside(s: &str) -> Option<Markup> {
    let ends = |open: &str, close: &str| -> Option<Markup> {
        if let Some(body) = s.strip_prefix(open) {
            let end = body.find(close).map(|p| open.len() + p + close.len());
            Some(Markup::Aside(end))
        } else if open.starts_with(s) {
            Some(Markup::Partial)
        } else {
            None
        }
    };
    ends("<!--", "-->")
        .or_else(|| ends("<![CDATA[", "]]>"))
        .or_else(|| ends("<?", "?>"))
        .or_else(|| {
            let r = s.strip_prefix("<!")?;
            r.starts_with(|c: char| c.is_ascii_alphabetic())
                .then(|| Markup::Aside(s.find('>').map(|p| p + 1)))
        })
}

/// `<name attr…>`, `</name>`, `<name/>`, `<name=value>`.
fn angle_tag(s: &str) -> Option<Markup> {
    let b = s.as_bytes();
    let close = b.get(1) == Some(&b'/');
    let start = if close { 2 } else { 1 };
    let Some(&first) = b.get(start) else {
        return Some(Markup::Partial);
    };
    if !(first.is_ascii_alphabetic() || first == b'_') {
        return None;
    }
    let name_len = b[start..]
        .iter()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b':' | b'.'))
        .count();
    let after = start + name_len;
    let tail = match b.get(after) {
        None => return Some(Markup::Partial),
        Some(b'>') => after + 1,
        Some(b'/') => match b.get(after + 1) {
            None => return Some(Markup::Partial),
            Some(b'>') => after + 2,
            Some(_) => return None,
        },
        Some(c) if c.is_ascii_whitespace() || *c == b'=' => match attributes_end(&s[after..])? {
            Some(e) => after + e,
            None => return Some(Markup::Partial),
        },
        Some(_) => return None,
    };
    let empty = s[..tail].ends_with("/>");
    let (name, close) = pair_name(&s[start..after], close);
    Some(Markup::Tag(Tag {
        len: tail,
        name,
        close,
        empty,
        bracket: false,
    }))
}

/// Where a tag's attributes end (just past `>`): `Some(None)` when the text ends first,
/// `None` when this is not a tag (another `<` first, or too long).
fn attributes_end(s: &str) -> Option<Option<usize>> {
    for (i, c) in s.char_indices() {
        if i > MAX_TAG {
            return None;
        }
        match c {
            '>' => return Some(Some(i + 1)),
            '<' => return None,
            _ => {}
        }
    }
    Some(None)
}

/// `<|word|>`: a tag when the word names one end of a pair (`reasoning_start`,
/// `begin_of_scratchpad`, `END_THINKING`); other tokens are the parser's.
fn token_tag(s: &str) -> Option<Markup> {
    let r = &s[2..];
    let word_len = r
        .bytes()
        .take(64)
        .take_while(|c| c.is_ascii_alphanumeric() || *c == b'_')
        .count();
    let after = &r[word_len..];
    if after.is_empty() || after == "|" {
        return (word_len < 64).then_some(Markup::Partial);
    }
    if !after.starts_with("|>") || word_len == 0 {
        return None;
    }
    let (name, close) = pair_name(&r[..word_len], false);
    if name == r[..word_len].to_ascii_lowercase() {
        // not a start/end form: a lone token
        return None;
    }
    Some(Markup::Tag(Tag {
        len: 2 + word_len + 2,
        name,
        close,
        empty: false,
        bracket: false,
    }))
}

/// `[NAME]` / `[/NAME]`: upper-case letters, digits and `_`, at least two.
fn bracket_tag(s: &str) -> Option<Markup> {
    let b = s.as_bytes();
    let close = b.get(1) == Some(&b'/');
    let start = if close { 2 } else { 1 };
    let n = b[start.min(b.len())..]
        .iter()
        .take(48)
        .take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || **c == b'_')
        .count();
    match b.get(start + n) {
        None if n < 48 && b.get(start).is_none_or(u8::is_ascii_uppercase) => Some(Markup::Partial),
        Some(b']') if n >= 2 && b[start].is_ascii_uppercase() => {
            let (name, close) = pair_name(&s[start..start + n], close);
            Some(Markup::Tag(Tag {
                len: start + n + 1,
                name,
                close,
                empty: false,
                bracket: true,
            }))
        }
        _ => None,
    }
}

/// A tag's name in normal form, and whether it closes: `start_x`/`begin_of_x`/`x_start`
/// open `x`, `end_x`/`end_of_x`/`x_end` close it.
fn pair_name(raw: &str, close: bool) -> (String, bool) {
    let name = raw.to_ascii_lowercase().replace('-', "_");
    const PREFIXES: &[(&str, bool)] = &[
        ("start_of_", false),
        ("begin_of_", false),
        ("end_of_", true),
        ("start_", false),
        ("begin_", false),
        ("end_", true),
    ];
    const SUFFIXES: &[(&str, bool)] = &[("_start", false), ("_begin", false), ("_end", true)];
    for (p, c) in PREFIXES {
        if let Some(n) = name.strip_prefix(p).filter(|n| !n.is_empty()) {
            return (n.to_string(), close || *c);
        }
    }
    for (x, c) in SUFFIXES {
        if let Some(n) = name.strip_suffix(x).filter(|n| !n.is_empty()) {
            return (n.to_string(), close || *c);
        }
    }
    (name, close)
}

/// The next byte from `from` where markup may start.
fn next_candidate(s: &str, from: usize) -> Option<usize> {
    memchr::memchr3(b'<', b'[', 0xE2, s.as_bytes().get(from..)?).map(|p| from + p)
}

/// Length of the char at `i`.
fn char_len(s: &str, i: usize) -> usize {
    s[i..].chars().next().map_or(1, char::len_utf8)
}

/// The think markers hearth knows that are not tags (`◁think▷`, `<|channel>thought`,
/// Harmony's analysis header, Apriel's close-only `[BEGIN FINAL RESPONSE]`), as (marker,
/// pair name, closes). A pair's close counts only when the output can begin inside the
/// block. Markers that are tags (`<think>`, `[THINK]`) are read as tags.
fn think_markers() -> &'static [(String, String, bool)] {
    static M: OnceLock<Vec<(String, String, bool)>> = OnceLock::new();
    M.get_or_init(|| {
        let not_a_tag = |m: &str| !m.is_empty() && !matches!(markup_at(m), Some(Markup::Tag(_)));
        let mut v = Vec::new();
        for (k, t) in known_tags().into_iter().enumerate() {
            let name = format!("think#{k}");
            if not_a_tag(&t.open) {
                v.push((t.open.clone(), name.clone(), false));
            }
            if t.forced_open && not_a_tag(&t.close) {
                v.push((t.close.clone(), name, true));
            }
        }
        v
    })
}

/// What the stray-close scan sees at one place.
enum Seen {
    /// Markup that may still change, or a comment that never ends: stop here.
    Stop,
    /// Not markup: one char.
    Text,
    /// Markup that opens or closes no block, this long.
    Skip(usize),
    /// A block's tag: its length, its pair name, whether it closes.
    Block(usize, String, bool),
}

/// What the stray-close scan sees at the start of `s`.
fn seen_at(s: &str) -> Seen {
    if let Some((m, name, close)) = think_markers().iter().find(|(m, _, _)| s.starts_with(m)) {
        return Seen::Block(m.len(), name.clone(), *close);
    }
    match markup_at(s) {
        None => Seen::Text,
        Some(Markup::Partial | Markup::Aside(None)) => Seen::Stop,
        Some(Markup::Aside(Some(n))) => Seen::Skip(n),
        Some(Markup::Tag(t)) if t.empty || kind(&t.name) != Kind::Block => Seen::Skip(t.len),
        Some(Markup::Tag(t)) => Seen::Block(t.len, t.name, t.close),
    }
}

/// Where the text after the last stray closing tag starts (0 when there is none).
///
/// A closing tag whose block never opened means the output began inside that block: the
/// prompt opened it (`<think>` in the template, or any other name a preset does not
/// know). Everything before it is reasoning, so everything before it goes.
pub(super) fn after_stray_close(s: &str) -> usize {
    let mut open: Vec<String> = Vec::new();
    let mut cut = 0;
    let mut i = 0;
    while let Some(p) = next_candidate(s, i) {
        match seen_at(&s[p..]) {
            Seen::Stop => break,
            Seen::Text => i = p + char_len(s, p),
            Seen::Skip(len) => i = p + len,
            Seen::Block(len, name, close) => {
                i = p + len;
                if !close {
                    open.push(name);
                } else if let Some(k) = open.iter().rposition(|n| *n == name) {
                    open.truncate(k);
                } else {
                    cut = i;
                    open.clear();
                }
            }
        }
    }
    cut
}

/// The end of the element named `name` whose content starts at `from`: just past its
/// closing tag (nesting of the same name counted). `None` when it does not close (yet).
fn close_of(s: &str, from: usize, name: &str) -> Option<usize> {
    let mut depth = 1usize;
    let mut i = from;
    while let Some(p) = next_candidate(s, i) {
        match markup_at(&s[p..]) {
            None => i = p + char_len(s, p),
            Some(Markup::Partial | Markup::Aside(None)) => return None,
            Some(Markup::Aside(Some(n))) => i = p + n,
            Some(Markup::Tag(t)) => {
                i = p + t.len;
                if t.name != name || t.empty {
                    continue;
                }
                if !t.close {
                    depth += 1;
                } else {
                    depth -= 1;
                    if depth == 0 {
                        return Some(i);
                    }
                }
            }
        }
    }
    None
}

/// Whether the parser knows this tag as a token (`<tool_call>`, `<think>`, `[TOOL_CALLS]`):
/// then it is the parser's to handle, calls and think blocks included.
fn parser_token(s: &str, len: usize) -> bool {
    crate::tokens::plain_tokens().contains(&&s[..len])
}

/// Remove every block (tags and content), comment and declaration, and the tags of speech
/// wrappers and void elements. Markup that does not end, or has not ended yet while
/// streaming, takes the rest of the text: nothing after it is certain to be speech.
pub(super) fn remove_blocks(s: &str, eof: bool) -> String {
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while let Some(p) = next_candidate(s, i) {
        out.push_str(&s[i..p]);
        let step = match markup_at(&s[p..]) {
            None => Step::Keep(char_len(s, p)),
            Some(Markup::Partial | Markup::Aside(None)) => return out,
            Some(Markup::Aside(Some(n))) => Step::Drop(n),
            Some(Markup::Tag(t)) if parser_token(&s[p..], t.len) => Step::Keep(t.len),
            Some(Markup::Tag(t)) => match block_end(s, p, &t, eof) {
                Some(e) if e == p + t.len && label_word(&t, &out) => Step::Keep(t.len),
                Some(e) => Step::Drop(e - p),
                None => return out,
            },
        };
        match step {
            Step::Keep(n) => out.push_str(&s[p..p + n]),
            Step::Drop(_) => out.push(' '),
        }
        i = p + step.len();
    }
    out.push_str(&s[i..]);
    out
}

/// Whether the tag `t`, which wraps nothing here, is a lone `[NAME]` naming a transcript
/// label or a log level at the start of a segment (after `before`): kept as text for
/// [`super::lines::remove_labels`] (`[REASONING] …`, `[ANSWER] …`, `[INFO] …`).
fn label_word(t: &Tag, before: &str) -> bool {
    t.bracket && !t.close && lines::kept_bracket_word(&t.name) && lines::at_segment_start(before)
}

/// What [`remove_blocks`] does with the markup at one place.
enum Step {
    Keep(usize),
    Drop(usize),
}

impl Step {
    fn len(&self) -> usize {
        match self {
            Step::Keep(n) | Step::Drop(n) => *n,
        }
    }
}

/// Where what the tag `t` at `p` removes ends: past its block's closing tag for a block,
/// past the tag itself otherwise. `None` when the block does not close (yet).
fn block_end(s: &str, p: usize, t: &Tag, eof: bool) -> Option<usize> {
    let after = p + t.len;
    if kind(&t.name) != Kind::Block || t.close || t.empty {
        return Some(after);
    }
    match close_of(s, after, &t.name) {
        Some(e) => Some(e),
        // a lone `[NAME]` is a token, once the end shows no `[/NAME]` follows
        None if t.bracket && eof => Some(after),
        None => None,
    }
}

/// Drop what is left that is shaped like a tag or special token: `<|…|>`, `<｜…｜>`,
/// `<|word>`, `<word|>`, `<tag>`, `[UPPER_TOKEN]`. While streaming, a `<` or `[` that may
/// still become one holds the text from there.
pub(super) fn remove_tags(s: &str, eof: bool) -> String {
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        let rest = &s[i..];
        if let Some(len) = tag_len(rest) {
            // a lone `[NAME]` that is a label or a log level starting a segment: see
            // `label_word`
            let word = rest.starts_with('[') && !rest.starts_with("[/");
            if word && lines::kept_bracket_word(&rest[1..len - 1]) && lines::at_segment_start(&out)
            {
                out.push_str(&rest[..len]);
            } else {
                out.push(' ');
            }
            i += len;
            continue;
        }
        if !eof && may_become_tag(rest) {
            return out;
        }
        let Some(ch) = rest.chars().next() else {
            break;
        };
        out.push(ch);
        i += ch.len_utf8();
    }
    out
}

/// Whether `s` (the rest of the text) starts what [`tag_len`] would remove once its end
/// arrives.
fn may_become_tag(s: &str) -> bool {
    if let Some(r) = s.strip_prefix("<｜") {
        return r.len() <= 96 && !r.contains("｜>");
    }
    if let Some(r) = s.strip_prefix('<') {
        let first = r.trim_start_matches(['/', '|']).chars().next();
        return r.len() < 200
            && !r.contains(['>', '<', '\n'])
            && first.is_none_or(|c| c.is_ascii_alphabetic() || c == '_' || c == '"');
    }
    if let Some(r) = s.strip_prefix('[') {
        return r.len() < 48
            && !r.contains(']')
            && r.trim_start_matches('/')
                .chars()
                .all(|c| c.is_ascii_uppercase() || c == '_' || c == ' ');
    }
    false
}

/// The length of the tag- or token-shaped text `s` starts with, if any.
fn tag_len(s: &str) -> Option<usize> {
    if let Some(r) = s.strip_prefix("<｜") {
        let e = r.find("｜>")?;
        return (e <= 96).then_some("<｜".len() + e + "｜>".len());
    }
    if let Some(r) = s.strip_prefix('<') {
        let window = crate::tokens::head(r, 200);
        let e = window.find('>')?;
        let inner = &r[..e];
        let inner_t = inner.trim_start_matches(['/', '|']);
        let first = inner_t.chars().next()?;
        let tagish = (first.is_ascii_alphabetic() || first == '_' || first == '"')
            && !inner.contains('\n')
            && !inner.contains('<');
        return tagish.then_some(1 + e + 1);
    }
    if let Some(r) = s.strip_prefix('[') {
        let e = crate::tokens::head(r, 48).find(']')?;
        let inner = r[..e].trim_start_matches('/');
        let tokenish = !inner.is_empty()
            && inner
                .chars()
                .all(|c| c.is_ascii_uppercase() || c == '_' || c == ' ')
            && inner.chars().any(|c| c.is_ascii_uppercase());
        return tokenish.then_some(1 + e + 1);
    }
    None
}

/// Drop notes to self: a `(…)` or `[…]` whose words are a note to self ([`is_note`]), and
/// a `*…*` (any number of stars) that is one or, at the start of a sentence, a stage
/// direction of thought (`*thinks about the light*`). Parentheses that belong to the
/// answer ("21 degrees (70 Fahrenheit)") and emphasis stay. While streaming, an opening
/// bracket or star not closed yet holds the text from there.
pub(super) fn remove_asides(s: &str, eof: bool) -> String {
    remove_starred_notes(&remove_bracketed_notes(s, eof), eof)
}

/// Notes to self are judged on at most this many bytes of their content.
const NOTE_HEAD: usize = 400;

/// `(…)` and `[…]` notes to self. Brackets pair up in one pass (a closer that does not match
/// the innermost opener is text); a note takes what it encloses with it, and a bracket
/// that never closes is text, unless what follows it to the end is a note.
fn remove_bracketed_notes(s: &str, eof: bool) -> String {
    let b = s.as_bytes();
    // every opener in order, with its closer once found
    let mut openers: Vec<(usize, Option<usize>)> = Vec::new();
    let mut stack: Vec<usize> = Vec::new();
    for (i, &c) in b.iter().enumerate() {
        match c {
            b'(' | b'[' => {
                stack.push(openers.len());
                openers.push((i, None));
            }
            b')' | b']' => {
                let want = if c == b')' { b'(' } else { b'[' };
                if let Some(&k) = stack.last() {
                    if b[openers[k].0] == want {
                        stack.pop();
                        openers[k].1 = Some(i);
                    }
                }
            }
            _ => {}
        }
    }
    let unclosed = stack.first().map(|&k| openers[k].0);
    let mut out = String::with_capacity(s.len());
    let mut copied = 0;
    for &(o, close) in &openers {
        if o < copied {
            // inside a note already dropped
            continue;
        }
        if Some(o) == unclosed {
            break;
        }
        let Some(c) = close else { continue };
        if is_note(&s[o + 1..c]) {
            out.push_str(&s[copied..o]);
            out.push(' ');
            copied = c + 1;
        }
    }
    match unclosed {
        Some(o) if o >= copied && !eof => out.push_str(&s[copied..o]),
        Some(o) if o >= copied && is_note(&s[o + 1..]) => out.push_str(&s[copied..o]),
        _ => out.push_str(&s[copied..]),
    }
    out
}

/// `*…*` notes and stage directions, within a line.
fn remove_starred_notes(s: &str, eof: bool) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while !rest.is_empty() {
        let (line, newline, next) = match rest.find('\n') {
            Some(p) => (&rest[..p], true, &rest[p + 1..]),
            None => (rest, false, ""),
        };
        let complete = newline || eof;
        if !starred_line(line, complete, &mut out) {
            return out;
        }
        if newline {
            out.push('\n');
        }
        rest = next;
    }
    out
}

/// [`remove_starred_notes`] for one line, said into `out`; `false` when the rest is held
/// back (the line is not complete and a span in it may still close).
fn starred_line(line: &str, complete: bool, out: &mut String) -> bool {
    let b = line.as_bytes();
    let mut copied = 0;
    let mut i = 0;
    while let Some(p) = memchr::memchr(b'*', &b[i..]).map(|p| i + p) {
        let stars = b[p..].iter().take_while(|c| **c == b'*').count();
        let after = p + stars;
        match line[after..].chars().next() {
            None if !complete => {
                out.push_str(&line[copied..p]);
                return false;
            }
            None => break,
            Some(c) if c.is_whitespace() => {
                i = after;
                continue;
            }
            Some(_) => {}
        }
        // the closer: the next star not after a space
        let close = memchr::memchr_iter(b'*', &b[after..])
            .map(|q| after + q)
            .find(|&q| !b[q - 1].is_ascii_whitespace());
        let at_start = {
            let before = &line[copied..p];
            if before.trim_end_matches([' ', '\t']).is_empty() {
                lines::at_segment_start(out)
            } else {
                lines::at_segment_start(before)
            }
        };
        match close {
            Some(q) => {
                let end = q + b[q..].iter().take_while(|c| **c == b'*').count();
                if starred_note(&line[after..q], at_start) {
                    out.push_str(&line[copied..p]);
                    out.push(' ');
                    copied = end;
                }
                i = end;
            }
            None if !complete => {
                out.push_str(&line[copied..p]);
                return false;
            }
            None => {
                // no star closes it: what follows on the line is its content
                if starred_note(&line[after..], at_start) {
                    out.push_str(&line[copied..p]);
                    copied = line.len();
                }
                break;
            }
        }
    }
    out.push_str(&line[copied..]);
    true
}

/// Whether a starred span is a note to self or, at the start of a sentence, a stage
/// direction of thought. A label in bold (`**Thought:**`) is the labels' to read.
fn starred_note(content: &str, at_start: bool) -> bool {
    if content.trim_end().ends_with(':') {
        return false;
    }
    if is_note(content) {
        return true;
    }
    const DOING: &[&str] = &[
        "thinking",
        "pondering",
        "considering",
        "wondering",
        "musing",
        "reflecting",
        "deliberating",
        "contemplating",
        "reasoning",
    ];
    let words = words_of(crate::tokens::head(content, NOTE_HEAD));
    at_start && words.first().is_some_and(|w| DOING.contains(&w.as_str()))
}

/// Words that mark a note to self when a colon follows them: `(internal: …)`,
/// `[thinking: …]`, `(Note to self: …)`.
const NOTE_MARKERS: &[&[&str]] = &[
    &["internal"],
    &["internal", "note"],
    &["internal", "notes"],
    &["private"],
    &["private", "note"],
    &["private", "notes"],
    &["thinking"],
    &["thought"],
    &["thoughts"],
    &["reasoning"],
    &["scratchpad"],
    &["analysis"],
    &["reflection"],
    &["aside"],
    &["hidden"],
    &["meta"],
    &["todo"],
    &["internally"],
    &["mentally"],
    &["inner", "monologue"],
    &["internal", "monologue"],
];

/// Phrases that make a note to self wherever they start its content, colon or not.
const TO_SELF: &[&[&str]] = &[
    &["note", "to", "self"],
    &["notes", "to", "self"],
    &["reminder", "to", "self"],
    &["memo", "to", "self"],
    &["self", "note"],
    &["to", "self"],
    &["to", "myself"],
];

/// A stage direction of thought, third person: `(thinks about it)`.
const THINKS: &[&str] = &[
    "thinks",
    "ponders",
    "considers",
    "wonders",
    "muses",
    "reflects",
    "deliberates",
    "contemplates",
];

/// Verbs of telling: what a note to self says not to do.
const REVEAL: &[&str] = &[
    "mention",
    "mentioning",
    "reveal",
    "revealing",
    "disclose",
    "disclosing",
    "expose",
    "leak",
    "share",
    "sharing",
    "repeat",
    "include",
    "say",
    "saying",
    "tell",
    "telling",
];

/// A modal of deliberation after "I": `(I should not mention …)`.
const MODALS: &[&str] = &[
    "should",
    "shouldn't",
    "must",
    "mustn't",
    "need",
    "needn't",
    "ought",
    "supposed",
    "better",
];

/// Nouns after "the user" that make it a phrase for the listener ("the user manual").
const USER_NOUNS: &[&str] = &[
    "manual",
    "manuals",
    "guide",
    "guides",
    "account",
    "accounts",
    "name",
    "names",
    "settings",
    "setting",
    "interface",
    "profile",
    "profiles",
    "group",
    "groups",
    "id",
    "data",
    "list",
    "menu",
    "page",
    "panel",
    "experience",
    "agreement",
];

/// Whether the content of a bracket or starred span is a note to self: a marker and a colon
/// (`internal: …`, `thinking: …`), "note to self", talk of "the user" in the third person,
/// "I should not mention …", "don't reveal …", or a stage direction (`thinks …`). A note to
/// the listener ("note: delivery is extra", "I think") is none of these.
fn is_note(content: &str) -> bool {
    let words = words_of(crate::tokens::head(content, NOTE_HEAD));
    let w: Vec<&str> = words.iter().map(String::as_str).collect();
    let starts = |p: &[&str]| w.len() >= p.len() && w[..p.len()] == *p;
    let marker = NOTE_MARKERS
        .iter()
        .any(|m| starts(m) && colon_after(content, m.len()));
    let to_self = TO_SELF.iter().any(|p| starts(p));
    let thinks = w.first().is_some_and(|f| THINKS.contains(f));
    let reveal = || {
        w.iter().any(|x| REVEAL.contains(x))
            || w.windows(2)
                .any(|p| matches!(p, ["bring", "up"] | ["read", "out"] | ["give", "away"]))
    };
    let deliberation = matches!(w.first(), Some(&("i" | "i'm" | "i'd" | "i'll")))
        && w.iter().take(6).any(|x| MODALS.contains(x))
        && reveal();
    let prohibition = (starts(&["don't"])
        || starts(&["do", "not"])
        || starts(&["dont"])
        || starts(&["never"])
        || starts(&["must", "not"])
        || starts(&["should", "not"])
        || starts(&["not", "to"])
        || starts(&["avoid"]))
        && w.iter()
            .take(4)
            .any(|x| REVEAL.contains(x) && !matches!(*x, "say" | "tell"));
    marker || to_self || thinks || deliberation || prohibition || about_the_user(&w)
}

/// Whether the first `n` words of `content` are followed by a colon and more text.
fn colon_after(content: &str, n: usize) -> bool {
    let mut rest = content;
    for _ in 0..n {
        let t = rest.trim_start_matches(|c: char| !is_word_char(c));
        rest = t.trim_start_matches(is_word_char);
    }
    rest.trim_start_matches([' ', '\t', '*'])
        .strip_prefix(':')
        .is_some_and(|r| r.chars().any(char::is_alphanumeric))
}

/// Talk of the user in the third person: "the user wants …", "the user's …", "user asked".
fn about_the_user(w: &[&str]) -> bool {
    const VERBS: &[&str] = &[
        "wants",
        "asked",
        "asks",
        "said",
        "says",
        "is",
        "may",
        "might",
        "will",
        "would",
        "seems",
        "prefers",
        "needs",
        "likes",
        "mentioned",
        "wanted",
        "probably",
    ];
    w.iter().enumerate().any(|(i, x)| {
        let next = w.get(i + 1).copied();
        match *x {
            "user's" => i > 0 && w[i - 1] == "the",
            "user" if i > 0 && w[i - 1] == "the" => next.is_none_or(|n| !USER_NOUNS.contains(&n)),
            "user" if i == 0 => next.is_some_and(|n| VERBS.contains(&n)),
            _ => false,
        }
    })
}

/// A char of a word: a letter, a digit or an apostrophe.
fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '\'' || c == '’'
}

/// The words of `s`, lower case, `’` as `'`.
fn words_of(s: &str) -> Vec<String> {
    s.split(|c: char| !is_word_char(c))
        .filter(|w| !w.is_empty())
        .map(|w| w.to_lowercase().replace('’', "'"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tag(s: &str) -> Tag {
        match markup_at(s) {
            Some(Markup::Tag(t)) => t,
            other => panic!("{s:?}: {other:?}"),
        }
    }

    #[test]
    fn tags_of_any_shape() {
        let t = tag("<Reasoning type=\"x\">rest");
        assert_eq!((t.name.as_str(), t.close, t.len), ("reasoning", false, 20));
        assert!(tag("</REASONING>").close);
        assert!(tag("<scratchpad/>").empty);
        assert_eq!(tag("<function=get_time>").name, "function");
        let t = tag("<|reasoning_end|>");
        assert_eq!((t.name.as_str(), t.close), ("reasoning", true));
        assert_eq!(tag("<|begin_of_scratchpad|>").name, "scratchpad");
        assert_eq!(tag("[/SCRATCHPAD]").name, "scratchpad");
        assert_eq!(kind(&tag("<|im_end|>").name), Kind::Void);
        assert_eq!(markup_at("<|eot_id|>"), None);
        assert_eq!(markup_at("< 4"), None);
        assert_eq!(markup_at("<3"), None);
        for partial in [
            "<",
            "</",
            "<reas",
            "<reasoning id=\"x",
            "<!-",
            "<|reas",
            "[SCRA",
        ] {
            assert_eq!(markup_at(partial), Some(Markup::Partial), "{partial:?}");
        }
        assert_eq!(markup_at("<!-- x -->y"), Some(Markup::Aside(Some(10))));
        assert_eq!(markup_at("<!-- x"), Some(Markup::Aside(None)));
    }

    #[test]
    fn blocks_go_with_their_content() {
        let s = "A <notes>x <notes>y</notes> z</notes>B <b>C</b> <!-- d --> E";
        assert_eq!(
            remove_blocks(s, true)
                .split_whitespace()
                .collect::<Vec<_>>(),
            ["A", "B", "C", "E"]
        );
        assert_eq!(remove_blocks("A. <plan>never closed", true).trim(), "A.");
        let call = "A <tool_call>{}</tool_call>";
        assert_eq!(remove_blocks(call, true), call);
        let lone = remove_blocks("[X1]a[/X1] [OK] b", true);
        assert_eq!(lone.split_whitespace().collect::<Vec<_>>(), ["b"]);
        assert_eq!(remove_blocks("a [OK] b", false), "a ");
    }

    #[test]
    fn notes_to_self_go_and_asides_for_the_listener_stay() {
        let said = |s: &str| {
            remove_asides(s, true)
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
        };
        for (raw, want) in [
            ("On (I should not mention 4417).", "On ."),
            ("On. (Note: the user may want 5150.)", "On."),
            ("(internal: x) On.", "On."),
            ("[I shouldn't reveal x] On.", "On."),
            ("*thinks about x* On.", "On."),
            ("Sure! *pondering x* On.", "Sure! On."),
            ("On. *(note to self: x)*", "On. * *"),
            ("On (note to self: x", "On"),
            (
                "It's 21 degrees (70 Fahrenheit).",
                "It's 21 degrees (70 Fahrenheit).",
            ),
            (
                "Total 20 (note: delivery is extra).",
                "Total 20 (note: delivery is extra).",
            ),
            (
                "The user manual (page 12) helps.",
                "The user manual (page 12) helps.",
            ),
            ("I'm **thinking** of pasta.", "I'm **thinking** of pasta."),
            ("Ok. **Thought:** x", "Ok. **Thought:** x"),
            ("A (b [internal: x] c) d", "A (b c) d"),
            ("A (b (the user wants x) c) d", "A d"),
            ("5 * 3 = 15", "5 * 3 = 15"),
        ] {
            assert_eq!(said(raw), want, "{raw:?}");
        }
        // while streaming, a bracket or star not closed yet holds the text from there
        assert_eq!(remove_asides("On (I should", false), "On ");
        assert_eq!(remove_asides("On. *thinks", false), "On. ");
        assert_eq!(remove_asides("On. *", false), "On. ");
    }

    #[test]
    fn a_lone_label_word_stays_for_the_labels() {
        assert_eq!(remove_blocks("[REASONING] x", true), "[REASONING] x");
        assert_eq!(remove_blocks("a [REASONING] x", true), "a   x");
        assert_eq!(remove_tags("Ok. [INFO] x", true), "Ok. [INFO] x");
        assert_eq!(remove_tags("a [INFO] x", true), "a   x");
        assert_eq!(remove_tags("Ok. [OK] x", true), "Ok.   x");
    }

    #[test]
    fn a_stray_close_cuts_what_came_before() {
        assert_eq!(after_stray_close("a</reasoning>b"), "a</reasoning>".len());
        assert_eq!(after_stray_close("x[/THINK]b"), "x[/THINK]".len());
        assert_eq!(after_stray_close("<r>a</r>b</s>"), 0);
        assert_eq!(after_stray_close("<b>a</b>b"), 0);
        assert_eq!(after_stray_close("<think>a</THINK>b"), 0);
    }
}
