//! Sentence templates: `(a|b)` alternatives, `[x]` optional parts, `{param}` slots, expanded
//! into every concrete form they stand for.

use std::collections::HashSet;

/// The most forms one template may expand to.
pub(crate) const MAX_FORMS: usize = 4096;

/// One token of an expanded form.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) enum Token {
    Word(String),
    Slot(String),
}

/// A template's parts, as parsed.
#[derive(Debug)]
enum Node {
    Text(String),
    /// `(a|b)`, or `[a|b]` with the empty alternative added.
    Choice(Vec<Vec<Node>>),
}

/// Every form `template` stands for, as tokens; an error says what is wrong with it.
pub(super) fn expand(template: &str) -> Result<Vec<Vec<Token>>, String> {
    let chars: Vec<char> = template.chars().collect();
    let mut at = 0;
    let mut alternatives = parse_alternatives(&chars, &mut at, None, 0)?;
    if alternatives.len() > 1 {
        return Err(
            "a `|` outside brackets: put the alternatives in ( ), e.g. \"(turn|switch) on\"".into(),
        );
    }
    let seq = alternatives.pop().unwrap_or_default();
    let texts = expand_seq(&seq)?;
    let mut forms: Vec<Vec<Token>> = Vec::new();
    let mut seen = HashSet::new();
    for text in texts {
        let form = tokens(&text)?;
        if form.is_empty() {
            return Err("it can be empty: keep at least one word that is always said".into());
        }
        if seen.insert(form.clone()) {
            forms.push(form);
        }
    }
    Ok(forms)
}

/// How deep brackets may nest.
const MAX_DEPTH: usize = 16;

/// Alternatives separated by `|` up to `close` (or the end when `close` is None), `depth`
/// brackets in.
fn parse_alternatives(
    chars: &[char],
    at: &mut usize,
    close: Option<char>,
    depth: usize,
) -> Result<Vec<Vec<Node>>, String> {
    if depth > MAX_DEPTH {
        return Err(format!(
            "brackets nest more than {MAX_DEPTH} deep: write it as several templates"
        ));
    }
    let mut alternatives = Vec::new();
    let mut seq = Vec::new();
    let mut text = String::new();
    let end_text = |text: &mut String, seq: &mut Vec<Node>| {
        if !text.is_empty() {
            seq.push(Node::Text(std::mem::take(text)));
        }
    };
    while *at < chars.len() {
        let c = chars[*at];
        *at += 1;
        match c {
            '(' | '[' => {
                end_text(&mut text, &mut seq);
                let mut choice = parse_alternatives(chars, at, Some(closing(c)), depth + 1)?;
                if choice.iter().any(|a| is_blank(a)) {
                    return Err(empty_alternative(c));
                }
                if c == '[' {
                    choice.push(Vec::new());
                }
                seq.push(Node::Choice(choice));
            }
            ')' | ']' if Some(c) == close => {
                end_text(&mut text, &mut seq);
                alternatives.push(seq);
                return Ok(alternatives);
            }
            ')' | ']' => return Err(format!("an unmatched `{c}`")),
            '|' => {
                end_text(&mut text, &mut seq);
                alternatives.push(std::mem::take(&mut seq));
            }
            c => text.push(c),
        }
    }
    match close {
        Some(c) => Err(format!(
            "a `{}` without its `{c}`",
            if c == ')' { '(' } else { '[' }
        )),
        None => {
            end_text(&mut text, &mut seq);
            alternatives.push(seq);
            Ok(alternatives)
        }
    }
}

fn closing(open: char) -> char {
    if open == '(' {
        ')'
    } else {
        ']'
    }
}

fn empty_alternative(open: char) -> String {
    if open == '(' {
        "an empty alternative in ( ): use [ ] for a part that may be left out, e.g. \"[the]\""
            .into()
    } else {
        "an empty [ ] or alternative in [ ]: remove it, or write the words that may be left out, e.g. \"[the]\"".into()
    }
}

fn is_blank(seq: &[Node]) -> bool {
    seq.iter()
        .all(|n| matches!(n, Node::Text(t) if t.trim().is_empty()))
}

/// Every text a sequence stands for.
fn expand_seq(seq: &[Node]) -> Result<Vec<String>, String> {
    let mut texts = vec![String::new()];
    for node in seq {
        let options: Vec<String> = match node {
            Node::Text(t) => vec![t.clone()],
            Node::Choice(alts) => {
                let mut all = Vec::new();
                for alt in alts {
                    all.extend(expand_seq(alt)?);
                    if all.len() > MAX_FORMS {
                        return Err(too_many());
                    }
                }
                all
            }
        };
        if texts.len() * options.len() > MAX_FORMS {
            return Err(too_many());
        }
        texts = texts
            .iter()
            .flat_map(|t| options.iter().map(move |o| format!("{t}{o}")))
            .collect();
    }
    Ok(texts)
}

fn too_many() -> String {
    format!("it stands for more than {MAX_FORMS} sentences: split it into several templates")
}

/// A form's tokens: `{name}` is a slot (a whole word of its own), the rest words as
/// transcripts are normalised.
fn tokens(text: &str) -> Result<Vec<Token>, String> {
    let mut out = Vec::new();
    for raw in text.split_whitespace() {
        if let Some(name) = raw.strip_prefix('{').and_then(|r| r.strip_suffix('}')) {
            if name.is_empty() || name.contains(['{', '}']) {
                return Err(format!("`{raw}` is not a slot: write {{parameter}}"));
            }
            out.push(Token::Slot(name.to_string()));
        } else if raw.contains(['{', '}']) {
            return Err(format!(
                "`{raw}`: a slot must be a word of its own, with spaces around it"
            ));
        } else {
            out.extend(super::normalize::keys(raw).into_iter().map(Token::Word));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The forms of `t`, sorted.
    fn forms(t: &str) -> Vec<String> {
        let mut forms: Vec<String> = expand(t)
            .unwrap()
            .into_iter()
            .map(|f| {
                f.iter()
                    .map(|t| match t {
                        Token::Word(w) => w.clone(),
                        Token::Slot(s) => format!("{{{s}}}"),
                    })
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect();
        forms.sort();
        forms
    }

    #[test]
    fn alternatives_options_and_suffixes() {
        assert_eq!(
            forms("turn (on|off) [the] {room} light[s]"),
            [
                "turn off the {room} light",
                "turn off the {room} lights",
                "turn off {room} light",
                "turn off {room} lights",
                "turn on the {room} light",
                "turn on the {room} lights",
                "turn on {room} light",
                "turn on {room} lights",
            ]
        );
        assert_eq!(
            forms("[please|kindly] (a (b|c)|d)"),
            [
                "a b",
                "a c",
                "d",
                "kindly a b",
                "kindly a c",
                "kindly d",
                "please a b",
                "please a c",
                "please d"
            ]
        );
    }

    #[test]
    fn malformed_templates_say_what_is_wrong() {
        for (t, says) in [
            ("turn (on|off", "without its `)`"),
            ("turn on]", "unmatched"),
            ("turn (on|) x", "use [ ]"),
            ("turn on []", "empty [ ]"),
            ("turn on [the|]", "empty [ ]"),
            ("turn on ( )", "use [ ]"),
            ("[the]", "can be empty"),
            ("on|off", "outside brackets"),
            ("the {room}'s light", "word of its own"),
            ("the {} light", "not a slot"),
        ] {
            let e = expand(t).unwrap_err();
            assert!(e.contains(says), "{t}: {e}");
        }
        let huge = "(a|b|c|d|e|f|g|h) ".repeat(5);
        assert!(expand(&huge)
            .unwrap_err()
            .contains("more than 4096 sentences"));
        let wide = format!(
            "({})",
            (0..5000)
                .map(|i| format!("w{i}"))
                .collect::<Vec<_>>()
                .join("|")
        );
        assert!(expand(&wide)
            .unwrap_err()
            .contains("more than 4096 sentences"));
        let deep = format!("{}x{}", "(".repeat(100), ")".repeat(100));
        assert!(expand(&deep).unwrap_err().contains("nest"));
    }
}
