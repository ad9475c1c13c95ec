//! A call said back in its tool's own words: the request that the tool's sentences would
//! read as exactly this call. hearth asks it as a question where it would rather ask than
//! refuse ("Shall I turn on the hallway light?").

use serde_json::{Map, Value};

use super::template::Token;
use super::{Intents, ToolIntents};

/// The forms after the first that says a call which are looked at for a plainer spelling.
const SPELLINGS: usize = 4096;

impl Intents {
    /// `arguments` of `tool` as a request these intents read as exactly that call: the
    /// first sentence form (in the order the sentences are written, each with its first
    /// words) whose fixed values are the call's and whose slots say the rest; `None` when
    /// no form says all of it.
    ///
    /// Of the forms after that one that are it with optional words left out (never an
    /// article, nor its words before the first slot or after the last), the one with the
    /// fewest words is taken, then the shortest: a template's "light[s] [up] to" is said
    /// "light to" ("set the bathroom light to 50 percent", not "… lights up to …").
    pub fn said_as(&self, tool: &str, arguments: &Value) -> Option<String> {
        let args = arguments.as_object()?;
        let says_it = |s: &Spelled| {
            matches!(self.recognize(&s.text()).as_deref(),
                Some([c]) if c.tool == tool && c.arguments == *arguments)
        };
        let mut forms = self
            .tools
            .iter()
            .filter(|t| t.tool == tool)
            .flat_map(|t| t.sentences_for(args));
        let first = forms.by_ref().find(|s| says_it(s))?;
        let mut plainer: Vec<Spelled> = forms
            .take(SPELLINGS)
            .filter(|s| s.framed_as(&first) && s.plainness() < first.plainness())
            .collect();
        plainer.sort_by_key(Spelled::plainness);
        let plainest = plainer.into_iter().find(|s| says_it(s));
        Some(plainest.unwrap_or(first).text())
    }
}

/// Words a plainer spelling keeps.
const ARTICLES: &[&str] = &["the", "a", "an"];

/// A sentence a form makes, with how many of its words come before its first slot's and
/// after its last slot's.
struct Spelled {
    words: Vec<String>,
    head: usize,
    tail: usize,
}

impl Spelled {
    fn text(&self) -> String {
        self.words.join(" ")
    }

    /// Whether this is `other` with some of its optional words left out, but for a plural
    /// "s" ("turn on the {room} light[s]"): it begins and ends with the words `other` has
    /// before its first slot and after its last, and no article is left out ("turn on
    /// bathroom light" is no plainer than "turn on the bathroom light").
    fn framed_as(&self, other: &Spelled) -> bool {
        let same = |x: &String, y: &String| {
            x == y || x.strip_suffix('s') == Some(y) || y.strip_suffix('s') == Some(x)
        };
        let mut mine = self.words.iter().peekable();
        for w in &other.words {
            match mine.peek() {
                Some(m) if same(m, w) => {
                    mine.next();
                }
                _ if ARTICLES.contains(&w.as_str()) => return false,
                _ => {}
            }
        }
        mine.next().is_none() && self.head == other.head && self.tail == other.tail
    }

    /// Fewer words, then fewer letters, is plainer.
    fn plainness(&self) -> (usize, usize) {
        (
            self.words.len(),
            self.words.iter().map(String::len).sum::<usize>(),
        )
    }
}

impl ToolIntents {
    /// The sentences of these intents that say `args`, in form order.
    fn sentences_for<'a>(
        &'a self,
        args: &'a Map<String, Value>,
    ) -> impl Iterator<Item = Spelled> + 'a {
        self.forms.iter().filter_map(move |form| {
            let intent = &self.intents[form.intent];
            let fixed_agree = intent.args.iter().all(|(k, v)| args.get(k) == Some(v));
            if !intent.step.is_empty() || !fixed_agree {
                return None;
            }
            let mut words = Vec::with_capacity(form.tokens.len());
            let mut slotted = Vec::new();
            let (mut head, mut last_slot_end) = (None, 0);
            for token in &form.tokens {
                match token {
                    Token::Word(w) => words.push(w.clone()),
                    Token::Slot(param) => {
                        head.get_or_insert(words.len());
                        words.push(intent.slots.get(param)?.said_as(args.get(param)?)?);
                        last_slot_end = words.len();
                        slotted.push(param.as_str());
                    }
                }
            }
            let says_all = args
                .keys()
                .all(|k| intent.args.contains_key(k) || slotted.contains(&k.as_str()));
            let head = head.unwrap_or(words.len());
            let tail = words.len() - last_slot_end.max(head);
            says_all.then_some(Spelled { words, head, tail })
        })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;

    use super::*;
    use crate::intent::IntentSpec;

    fn lights() -> Intents {
        let schema = json!({"type": "object", "required": ["room", "on"], "properties": {
            "room": {"type": "string", "enum": ["kitchen", "living room", "hallway"]},
            "on": {"type": "boolean"}}});
        let spec = |sentences: &[&str], on: bool| IntentSpec {
            sentences: sentences.iter().map(|s| s.to_string()).collect(),
            args: json!({"on": on}).as_object().cloned().unwrap_or_default(),
            ..IntentSpec::default()
        };
        let specs = [
            spec(
                &[
                    "(turn|switch) on [the] {room} light",
                    "lights on in the {room}",
                ],
                true,
            ),
            spec(&["(turn|switch) off [the] {room} light"], false),
        ];
        let heating = json!({"type": "object", "required": ["temperature"], "properties": {
            "temperature": {"type": "number", "minimum": 10, "maximum": 30}}});
        let warm = IntentSpec {
            sentences: vec!["set the heating to {temperature} [degrees]".into()],
            ..IntentSpec::default()
        };
        let level = json!({"type": "object", "required": ["room", "brightness"], "properties": {
            "room": {"type": "string", "enum": ["kitchen", "bathroom"]},
            "brightness": {"type": "integer", "minimum": 0, "maximum": 100}}});
        let dim = IntentSpec {
            sentences: vec![
                "set the {room} light[s] [(up|down)] (to|at) {brightness} [percent]".into(),
            ],
            ..IntentSpec::default()
        };
        Intents::new(vec![
            Arc::new(ToolIntents::compile("set_light", &specs, &schema).unwrap()),
            Arc::new(ToolIntents::compile("set_heating", &[warm], &heating).unwrap()),
            Arc::new(ToolIntents::compile("dim_light", &[dim], &level).unwrap()),
        ])
    }

    #[test]
    fn a_call_is_said_with_the_fewest_words_its_first_sentence_can_spare() {
        let i = lights();
        assert_eq!(
            i.said_as("dim_light", &json!({"room": "bathroom", "brightness": 50}))
                .as_deref(),
            Some("set the bathroom light to 50 percent")
        );
    }

    #[test]
    fn a_call_is_said_as_its_tools_first_sentence_that_makes_it() {
        let i = lights();
        assert_eq!(
            i.said_as("set_light", &json!({"room": "hallway", "on": true}))
                .as_deref(),
            Some("turn on the hallway light")
        );
        assert_eq!(
            i.said_as("set_light", &json!({"room": "living room", "on": false}))
                .as_deref(),
            Some("turn off the living room light")
        );
        assert_eq!(
            i.said_as("set_heating", &json!({"temperature": 23}))
                .as_deref(),
            Some("set the heating to 23 degrees")
        );
        assert_eq!(
            i.said_as("set_heating", &json!({"temperature": 21.5}))
                .as_deref(),
            Some("set the heating to 21.5 degrees")
        );
    }

    #[test]
    fn a_call_no_sentence_says_whole_is_not_said() {
        let i = lights();
        // a value outside the slot, a parameter no sentence has, another tool
        assert_eq!(
            i.said_as("set_light", &json!({"room": "garage", "on": true})),
            None
        );
        assert_eq!(i.said_as("set_heating", &json!({"temperature": 45})), None);
        assert_eq!(
            i.said_as(
                "set_light",
                &json!({"room": "kitchen", "on": true, "level": 3})
            ),
            None
        );
        assert_eq!(i.said_as("get_time", &json!({})), None);
    }
}
