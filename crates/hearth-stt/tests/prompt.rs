//! The real tiny.en model's tokenizer on a long prompt: the words to expect come most
//! important first (a house's names, then its rooms, then the rest), and the decoder holds
//! 223 tokens of them. whisper.cpp alone keeps the last ones; the recogniser keeps the first
//! phrases that fit, cut between phrases, closed as a sentence.

mod common;

use hearth_stt::{Recognizer, RecognizerConfig};

/// The words hearth expected for Home Assistant's demo house before they were ordered
/// (2026-12-06): 128 phrases, 368 tokens.
const LONG: &str = "bed light, night light, ceiling lights, big light, entrance color white lights, \
porch light, kitchen lights, office rgbw lights, desk lamp, bedroom, living room, lounge, hallway, \
hall, kitchen, office, study, everywhere, red, orange, yellow, green, blue, purple, pink, white, ac, \
air conditioner, decorative lights, fairy lights, ceiling fan, living room fan, percentage full fan, \
percentage limited fan, preset only limited fan, hall window, kitchen window, living room window, \
garage door, garage, front door, kitchen door, openable lock, poorly installed door, heat pump, \
heating, hvac, ecobee, off, cool, heat cool, auto, dry, fan only, heat, walkman, 0 ground floor, \
1 first floor, 2 second floor, movement backyard, pergola roof, carbon dioxide, carbon monoxide, \
outside humidity, outside temperature, 3 third floor, 4 fourth floor, tea, egg, pasta, rice, pizza, \
bread, cake, roast, oven, laundry, every day, weekdays, weekends, monday, tuesday, wednesday, \
thursday, friday, saturday, sunday, up, down, time, date, timer, cancel timer, stop timer, add timer \
time, remove timer time, pause timer, resume timer, timers, alarm, reminder, cancel alarm, cancel \
reminder, alarms, volume, change volume, mute microphone, light, light brightness, light color, \
switch, fan, fan speed, cover, stop cover, cover position, lock, thermostat, thermostat mode, play \
media, pause media, next track, previous track, media volume, mute media, start vacuum, return \
vacuum, device state";

#[test]
fn a_long_prompt_keeps_its_first_phrases_whole() {
    let Some(model) = common::model() else { return };
    let mut recognizer = Recognizer::load(&model, RecognizerConfig::default()).unwrap();

    let kept = recognizer.primed_with(LONG).unwrap();
    let kept = kept.trim();
    eprintln!("kept: {kept:?}");
    let body = kept.strip_suffix('.').expect("closed as a sentence");
    assert!(
        kept.starts_with("bed light, night light, ceiling lights, big light,"),
        "the house's names come first and are kept: {kept:?}"
    );
    assert!(
        LONG.starts_with(body) && LONG[body.len()..].starts_with(", "),
        "cut between two phrases: {kept:?}"
    );
    let phrases = body.split(", ").count();
    assert!(
        (40..128).contains(&phrases),
        "as many phrases as 223 tokens hold, not all 128: {phrases}"
    );
    // one more phrase would not have fitted
    let one_more = LONG
        .split(", ")
        .take(phrases + 1)
        .collect::<Vec<_>>()
        .join(", ");
    let again = recognizer.primed_with(&one_more).unwrap();
    assert_eq!(again.trim(), kept, "{one_more:?} is over the limit too");

    // a short prompt is kept whole, closed
    let short = "kitchen, living room, light, lock";
    assert_eq!(
        recognizer.primed_with(short).unwrap().trim(),
        "kitchen, living room, light, lock."
    );
}
