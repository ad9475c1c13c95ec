//! Untagged step-by-step reasoning: `Step 1: … Step 2: … Final answer: …`, or "Let's think
//! step by step. … So the answer is: …". Small models write their reasoning as plain
//! sentences ahead of the answer; the steps are only known to be reasoning when an answer
//! marker follows them, so [`super::lines::remove_labels`] holds them back from the first
//! step ([`opener`]) and drops them at the marker ([`answer`]) or says them at the end.
//!
//! Both look at the start of a segment (a line, or a sentence within one) and at no more
//! than [`HEAD`] bytes of it.

/// How much of a segment a phrase is looked for in.
const HEAD: usize = 64;

/// What a segment starts with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Seen {
    /// Yes; the text after the marker starts this many bytes on.
    At(usize),
    /// More of the segment must arrive to tell.
    Maybe,
    No,
}

/// Phrases that announce step-by-step reasoning, or reasoning about "the user" (normal
/// form, see [`Normal`]). Held back, they cost only time when no answer marker follows.
const OPENERS: &[&str] = &[
    "let's think step by step",
    "let us think step by step",
    "let me think step by step",
    "let's reason step by step",
    "let me reason step by step",
    "let's go step by step",
    "let's work through this step by step",
    "let me work through this step by step",
    "thinking step by step",
    "reasoning step by step",
    "step by step:",
    "let's break this down",
    "let's break it down",
    "let me break this down",
    "let me break it down",
    "let's think this through",
    "let me think this through",
    "let's work this out",
    "let me work this out",
    "let me think",
    "let me reason",
    "let me figure",
    "i need to figure out",
    "i need to determine",
    "first, i need to",
    "first, i should",
    "first, let me",
    "the user wants",
    "the user asked",
    "the user asks",
    "the user is asking",
    "the user said",
    "the user says",
    "the user would like",
    "the user needs",
    "okay, the user",
    "okay, so the user",
    "ok, the user",
    "ok, so the user",
    "alright, the user",
    "alright, so the user",
    "so the user",
    "hmm, the user",
];

/// Number words after `Step`.
const NUMBERS: &[&str] = &[
    "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "first",
    "second", "third", "fourth", "fifth",
];

/// Whether step-by-step reasoning may start `seg`: `Step 1:` (or `1.`, `1)`, `1 -`, or
/// `Step one:`, maybe in bold or as a heading) or a phrase like "Let's think step by step",
/// "Let me think", "The user wants".
pub(super) fn opener(seg: &str, complete: bool) -> Seen {
    let rest = &seg[deco(seg)..];
    // every opener starts with one of these letters
    if rest
        .bytes()
        .next()
        .is_some_and(|c| !b"sltofahirSLTOFAHIR".contains(&c))
    {
        return Seen::No;
    }
    let n = Normal::of(rest);
    let open = n.whole && !complete;
    let step = step_marker(&n.text, open);
    if step != Seen::No {
        return step;
    }
    let mut maybe = false;
    for p in OPENERS {
        if n.text.starts_with(p) {
            return Seen::At(0);
        }
        maybe |= open && p.starts_with(n.text.as_str());
    }
    if maybe {
        Seen::Maybe
    } else {
        Seen::No
    }
}

/// `step <number>` and then `:`, `.`, `)` or a dash, or nothing more on a complete line.
fn step_marker(t: &str, open: bool) -> Seen {
    let Some(r) = t.strip_prefix("step ") else {
        return if open && "step ".starts_with(t) {
            Seen::Maybe
        } else {
            Seen::No
        };
    };
    let digits = r.bytes().take_while(u8::is_ascii_digit).count();
    let r = if (1..=3).contains(&digits) {
        &r[digits..]
    } else if digits > 0 {
        return Seen::No;
    } else {
        let word = r.bytes().take_while(u8::is_ascii_alphabetic).count();
        let w = &r[..word];
        if open && word == r.len() {
            return if NUMBERS.iter().any(|n| n.starts_with(w)) {
                Seen::Maybe
            } else {
                Seen::No
            };
        }
        if !NUMBERS.contains(&w) {
            return Seen::No;
        }
        &r[word..]
    };
    let r = r.trim_start_matches(' ');
    match r.chars().next() {
        Some(':' | '.' | ')' | '-' | '–' | '—') => Seen::At(0),
        None if open => Seen::Maybe,
        None => Seen::At(0),
        Some(_) => Seen::No,
    }
}

/// Words that may lead an answer marker ("So", "Therefore,").
const LEADS: &[&str] = &[
    "so ",
    "so, ",
    "therefore ",
    "therefore, ",
    "thus ",
    "thus, ",
    "hence ",
    "hence, ",
    "in conclusion ",
    "in conclusion, ",
    "in summary ",
    "in summary, ",
    "in short ",
    "in short, ",
    "overall ",
    "overall, ",
    "finally ",
    "finally, ",
    "",
];

/// An answer marker, piece by piece: "So the final answer is:", "Therefore, my answer:",
/// "The answer is:". Without the colon it is a sentence ("The answer is yes.").
const ANSWER: &[&[&str]] = &[
    LEADS,
    &["the ", "my ", ""],
    &["final ", ""],
    &["answer"],
    &[" is", ""],
    &[":"],
];

/// Whether `seg` starts with an answer marker after step-by-step reasoning; `At` gives where
/// the answer starts.
pub(super) fn answer(seg: &str, complete: bool) -> Seen {
    let d = deco(seg);
    let n = Normal::of(&seg[d..]);
    match pieces(&n.text, ANSWER, n.whole && !complete) {
        Seen::At(len) => {
            let end = d + n.ends.get(len.wrapping_sub(1)).copied().unwrap_or(0);
            let text = seg[end..].trim_start_matches(['*', ' ', '\t']);
            Seen::At(seg.len() - text.len())
        }
        other => other,
    }
}

/// Whether `t` starts with one option of each piece in turn: `At` the length matched.
/// `open`: `t` is all there is so far, so running out of it is `Maybe`.
fn pieces(t: &str, parts: &[&[&str]], open: bool) -> Seen {
    let Some((first, rest)) = parts.split_first() else {
        return Seen::At(0);
    };
    let mut maybe = false;
    for opt in *first {
        if let Some(r) = t.strip_prefix(opt) {
            match pieces(r, rest, open) {
                Seen::At(k) => return Seen::At(opt.len() + k),
                Seen::Maybe => maybe = true,
                Seen::No => {}
            }
        } else if open && opt.starts_with(t) {
            maybe = true;
        }
    }
    if maybe {
        Seen::Maybe
    } else {
        Seen::No
    }
}

/// The length of the decoration a segment may start with: spaces, `*`, `#`, `>`.
fn deco(seg: &str) -> usize {
    seg.bytes()
        .take_while(|c| matches!(c, b' ' | b'\t' | b'*' | b'#' | b'>'))
        .count()
}

/// The first [`HEAD`] bytes of a segment in normal form: ASCII lower case, `’` as `'`, `-`
/// between words as a space, runs of whitespace as one space.
struct Normal {
    text: String,
    /// For each byte of `text`, the byte of the segment just past the char it came from.
    ends: Vec<usize>,
    /// The whole segment is in `text`.
    whole: bool,
}

impl Normal {
    fn of(s: &str) -> Normal {
        let mut text = String::with_capacity(HEAD);
        let mut ends = Vec::with_capacity(HEAD);
        let mut whole = true;
        for (i, c) in s.char_indices() {
            if text.len() >= HEAD {
                whole = false;
                break;
            }
            let end = i + c.len_utf8();
            let c = match c {
                '’' => '\'',
                '-' if text.ends_with(|p: char| p.is_ascii_alphabetic()) => ' ',
                c if c.is_whitespace() => ' ',
                c => c.to_ascii_lowercase(),
            };
            if c == ' ' && text.ends_with(' ') {
                if let Some(last) = ends.last_mut() {
                    *last = end;
                }
                continue;
            }
            text.push(c);
            ends.extend(std::iter::repeat_n(end, c.len_utf8()));
        }
        Normal { text, ends, whole }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openers() {
        for yes in [
            "Step 1: x",
            "**Step 2:** y",
            "### Step 3",
            "step one: z",
            "Step 10. w",
            "Let's think step by step.",
            "Let’s think step-by-step:",
        ] {
            assert_eq!(opener(yes, true), Seen::At(0), "{yes:?}");
        }
        for no in [
            "Step on it.",
            "Stepping out.",
            "Step 1 is easy.",
            "Let me know.",
            "Steps",
        ] {
            assert_eq!(opener(no, true), Seen::No, "{no:?}");
        }
        for maybe in ["Ste", "Step ", "Step 1", "Step o", "Let's th"] {
            assert_eq!(opener(maybe, false), Seen::Maybe, "{maybe:?}");
        }
        assert_eq!(opener("Step one", true), Seen::At(0));
    }

    #[test]
    fn answers() {
        fn at(s: &str) -> Option<&str> {
            match answer(s, true) {
                Seen::At(n) => Some(&s[n..]),
                _ => None,
            }
        }
        assert_eq!(at("Final answer: It is on."), Some("It is on."));
        assert_eq!(at("So the answer is: yes"), Some("yes"));
        assert_eq!(at("Therefore,  the final answer is:** yes"), Some("yes"));
        assert_eq!(at("**The answer:** yes"), Some("yes"));
        assert_eq!(at("The answer is yes."), None);
        assert_eq!(at("Answers vary."), None);
        assert_eq!(answer("So the ans", false), Seen::Maybe);
        assert_eq!(answer("So the ans", true), Seen::No);
    }
}
