//! A call said back in its tool's own words: the request that the tool's sentences would
//! read as exactly this call. hearth asks it as a question where it would rather ask than
//! refuse ("Shall I turn on the hallway light?").

use serde_json::{Map, Value};

use super::template::Token;
use super::{Intents, ToolIntents};

/// The forms after the first that says a call which are looked at for a shorter spelling.
const SPELLINGS: usize = 8;

impl Intents {
    /// `arguments` of `tool` as a request these intents read as exactly that call: the
    /// first sentence form (in the order the sentences are written, each with its first
    /// words) whose fixed values are the call's and whose slots say the rest; `None` when
    /// no form says all of it.
    ///
    /// Of the forms right after that one that say the same words but for a plural "s", the
    /// shortest is taken: a template's "light[s]" is said "light".
    pub fn said_as(&self, tool: &str, arguments: &Value) -> Option<String> {
        let args = arguments.as_object()?;
        let says_it = |text: &String| {
            matches!(self.recognize(text).as_deref(),
                Some([c]) if c.tool == tool && c.arguments == *arguments)
        };
        let mut forms = self
            .tools
            .iter()
            .filter(|t| t.tool == tool)
            .flat_map(|t| t.sentences_for(args));
        let first = forms.by_ref().find(|text| says_it(text))?;
        let shorter = forms
            .take(SPELLINGS)
            .filter(|t| t.len() < first.len() && plural_aside(t, &first))
            .filter(says_it)
            .min_by_key(String::len);
        Some(shorter.unwrap_or(first))
    }
}

/// Whether `a` and `b` are the same words but for a plural "s" on some of them.
fn plural_aside(a: &str, b: &str) -> bool {
    let (a, b): (Vec<&str>, Vec<&str>) = (a.split(' ').collect(), b.split(' ').collect());
    a.len() == b.len()
        && a.iter().zip(&b).all(|(x, y)| {
            x == y || x.strip_suffix('s') == Some(*y) || y.strip_suffix('s') == Some(*x)
        })
}

impl ToolIntents {
    /// The sentences of these intents that say `args`, in form order.
    fn sentences_for<'a>(
        &'a self,
        args: &'a Map<String, Value>,
    ) -> impl Iterator<Item = String> + 'a {
        self.forms.iter().filter_map(move |form| {
            let intent = &self.intents[form.intent];
            let fixed_agree = intent.args.iter().all(|(k, v)| args.get(k) == Some(v));
            if !intent.step.is_empty() || !fixed_agree {
                return None;
            }
            let mut words = Vec::with_capacity(form.tokens.len());
            let mut slotted = Vec::new();
            for token in &form.tokens {
                match token {
                    Token::Word(w) => words.push(w.clone()),
                    Token::Slot(param) => {
                        words.push(intent.slots.get(param)?.said_as(args.get(param)?)?);
                        slotted.push(param.as_str());
                    }
                }
            }
            let says_all = args
                .keys()
                .all(|k| intent.args.contains_key(k) || slotted.contains(&k.as_str()));
            says_all.then(|| words.join(" "))
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
        Intents::new(vec![
            Arc::new(ToolIntents::compile("set_light", &specs, &schema).unwrap()),
            Arc::new(ToolIntents::compile("set_heating", &[warm], &heating).unwrap()),
        ])
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
