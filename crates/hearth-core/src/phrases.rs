//! The house as a recogniser is told it: the phrase set its transcripts are held to and the
//! words it is told to expect. Made from the tool registry; sent by the Stt stage.

use crate::intent::PhraseSet;
use crate::tools::Registry;

/// The words a recogniser is told to expect (whisper's prompt): the wake words (a request
/// said in the same breath is heard with them; whisper spells "Okay Nabu" right only when
/// told), then the tools' [`Registry::vocabulary`], joined by `, `.
pub fn expected_words(wake: &[String], registry: &Registry) -> String {
    let mut words = wake.to_vec();
    words.extend(registry.vocabulary());
    words.join(", ")
}

/// The house's phrase set as a recogniser is sent it: the tools' intents and follow-ups,
/// the `stop` words, the answers to a question (yes, no: guarded, so that the phrase pass
/// never makes a yes of what whisper heard as something else).
pub fn house_phrases(registry: &Registry, stop: &[&str]) -> PhraseSet {
    registry
        .intents()
        .phrases()
        .and_fixed("stop", stop)
        .and_guarded("answer", crate::agent::confirm::ANSWERS)
}
