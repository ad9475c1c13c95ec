//! The real `hearth-stt` binary with the real tiny.en model and a house's phrase set, on
//! requests whose way word whisper misheard ("Mute the bedroom." written "View the
//! bedroom."). The phrase pass may write a way whisper did not only where the audio makes it
//! far likelier than every other way in its place; a request never turns into its opposite.
//! A request heard a few words further off is offered as near, never taken.
//!
//! The recordings are in `tests/audio/` (its README says how they were made).

mod common;

use common::{ask_with_phrases, phrases_event, recording, transcript_and_pass, words, TcpServer};
use wyoming::{Eventable, PhrasesLoaded};

/// Home Assistant's demo house, as far as these requests go: covers, locks, media players
/// and lights by name, each way its own call.
fn house() -> hearth_phrases::Grammar {
    let list = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let forms = list(&[
        "open the {0}",
        "close the {0}",
        "stop the {0}",
        "lock the {1}",
        "unlock the {1}",
        "mute the {2}",
        "unmute the {2}",
        "pause the {2}",
        "play music on the {2}",
        "skip the song on the {2}",
        "next track on the {2}",
        "turn on the {3}",
        "turn off the {3}",
        "is the {1} locked",
        "is the {0} open",
    ]);
    let ways = list(&[
        "open", "close", "lock", "unlock", "mute", "unmute", "on", "off", "locked",
    ]);
    hearth_phrases::Grammar {
        lists: vec![
            list(&[
                "garage door",
                "kitchen window",
                "hall window",
                "living room window",
            ]),
            list(&["front door", "kitchen door", "poorly installed door"]),
            list(&["bedroom", "kitchen", "living room", "walkman"]),
            list(&["night light", "porch light", "fairy lights", "ceiling fan"]),
        ],
        calls: (0..forms.len() as u32).collect(),
        forms,
        guarded: ways.clone(),
        ways,
        prompt: Some(
            "garage door, kitchen window, hall window, living room window, front door, \
             kitchen door, bedroom, kitchen, living room, walkman, night light, porch light, \
             fairy lights, ceiling fan, open, close, lock, unlock, mute, unmute, pause, play music"
                .into(),
        ),
        ..Default::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_misheard_way_is_mended_only_where_the_audio_chooses_it_and_a_near_one_offered() {
    let Some(model) = common::model() else { return };
    let server = TcpServer::start(&model, &[]);
    let mut client = server.connect().await;
    let set = house();
    client.send(&phrases_event(&set).to_event()).await;
    let loaded = PhrasesLoaded::from_event(client.expect().await).unwrap();
    assert_eq!(loaded.id, set.id());
    let mut heard_in = async |set: &hearth_phrases::Grammar, name: &str| {
        if set.id() != loaded.id {
            client.send(&phrases_event(set).to_event()).await;
            PhrasesLoaded::from_event(client.expect().await).unwrap();
        }
        let (format, pcm) = common::read_wav(&recording(name));
        client
            .send_request(ask_with_phrases(&set.id()), format, &pcm)
            .await;
        transcript_and_pass(client.expect().await)
    };

    // whisper wrote "View the bedroom.": the phrase pass chose "mute" by the audio, far
    // over "unmute"
    let (text, pass) = heard_in(&set, "mute-the-bedroom.wav").await;
    eprintln!("mute: {text:?} {pass:?}");
    assert_eq!(words(&text), "mute the bedroom", "{pass:?}");
    if words(&pass.open) != "mute the bedroom" {
        let contrast = pass.way_contrast.unwrap_or(f32::NAN);
        assert!(contrast >= 3.0, "{pass:?}");
    }

    // "Close the garage door." is heard so, or mended so
    let (text, pass) = heard_in(&set, "close-the-garage-door.wav").await;
    eprintln!("close: {text:?} {pass:?}");
    assert_eq!(words(&text), "close the garage door", "{pass:?}");

    // "Unlock the front door." whisper heard "Moth the front door.": never "lock"
    let (text, pass) = heard_in(&set, "unlock-the-front-door.wav").await;
    eprintln!("unlock: {text:?} {pass:?}");
    assert_ne!(words(&text), "lock the front door", "{pass:?}");
    assert!(
        !pass.taken || words(&text) == "unlock the front door",
        "{pass:?}"
    );

    // The same set, whisper primed as in the session the near clip comes from (the demo
    // house's words). A request heard a few words away from one of the set's, further than a
    // mend is taken:
    // the transcript stays as heard and the phrase is offered as near, for hearth to ask
    // about. Whisper wrote "Let's get this song on the walkman." for "Skip this song on the
    // walkman."
    let primed = hearth_phrases::Grammar {
        prompt: Some(SESSION_PROMPT.into()),
        ..house()
    };
    let (text, pass) = heard_in(&primed, "skip-this-song.wav").await;
    eprintln!("skip: {text:?} {pass:?}");
    assert_eq!(text, pass.open, "not taken: {pass:?}");
    assert!(!pass.taken && pass.near, "{pass:?}");
    let phrase = words(pass.phrase.as_deref().unwrap_or(""));
    assert_eq!(phrase, "skip the song on the walkman", "{pass:?}");
    let gap = pass.open_logprob - pass.phrase_logprob.unwrap_or(f32::NEG_INFINITY);
    assert!(
        gap > 3.5 && gap <= 6.0,
        "between the mend and ask margins: {pass:?}"
    );
    // a request heard as said is taken, and nothing near is offered
    let (text, pass) = heard_in(&primed, "close-the-garage-door.wav").await;
    assert!(pass.taken && !pass.near, "{text:?} {pass:?}");
}

/// What hearth primed whisper with in the house session the near clips come from (the first
/// 74 of these phrases fit the decoder's prompt).
const SESSION_PROMPT: &str = "every day, weekdays, weekends, monday, tuesday, wednesday, \
thursday, friday, saturday, sunday, up, down, bed light, night light, ceiling lights, big light, \
entrance color white lights, porch light, kitchen lights, office rgbw lights, desk lamp, bedroom, \
living room, lounge, hallway, hall, study, everywhere, red, orange, yellow, green, blue, purple, \
pink, ac, air conditioner, decorative lights, fairy lights, ceiling fan, percentage full fan, \
percentage limited fan, preset only limited fan, hall window, garage door, front door, openable \
lock, poorly installed door, heat pump, heating, hvac, ecobee, off, cool, auto, dry, walkman, \
0 ground floor, 1 first floor, 2 second floor, movement backyard, pergola roof, carbon dioxide, \
carbon monoxide, outside humidity, outside temperature, 3 third floor, 4 fourth floor, time, \
date, timer, cancel timer, stop timer, add timer time, remove timer time, pause timer, resume \
timer, timers, alarm, reminder, alarms, volume, change volume, mute microphone, light \
brightness, brighten light, switch, fan speed, cover, cover position, thermostat, thermostat \
mode, play media, next track, previous track, start vacuum, return vacuum, device state, tea, \
egg, pasta, rice, pizza, bread, cake, roast, oven, laundry";
