//! The real `hearth-stt` binary with the real tiny.en model and a house's phrase set, on
//! requests whose way word whisper misheard ("Mute the bedroom." written "View the
//! bedroom."). The phrase pass may write a way whisper did not only where the audio makes it
//! far likelier than every other way in its place; a request never turns into its opposite.
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
async fn a_misheard_way_is_mended_only_where_the_audio_chooses_it() {
    let Some(model) = common::model() else { return };
    let server = TcpServer::start(&model, &[]);
    let mut client = server.connect().await;
    let set = house();
    client.send(&phrases_event(&set).to_event()).await;
    let loaded = PhrasesLoaded::from_event(client.expect().await).unwrap();
    assert_eq!(loaded.id, set.id());
    let set_id = set.id();
    let mut heard = async |name: &str| {
        let (format, pcm) = common::read_wav(&recording(name));
        client
            .send_request(ask_with_phrases(&set_id), format, &pcm)
            .await;
        transcript_and_pass(client.expect().await)
    };

    // whisper wrote "View the bedroom.": the phrase pass chose "mute" by the audio, far
    // over "unmute"
    let (text, pass) = heard("mute-the-bedroom.wav").await;
    eprintln!("mute: {text:?} {pass:?}");
    assert_eq!(words(&text), "mute the bedroom", "{pass:?}");
    if words(&pass.open) != "mute the bedroom" {
        let contrast = pass.way_contrast.unwrap_or(f32::NAN);
        assert!(contrast >= 3.0, "{pass:?}");
    }

    // "Close the garage door." is heard so, or mended so
    let (text, pass) = heard("close-the-garage-door.wav").await;
    eprintln!("close: {text:?} {pass:?}");
    assert_eq!(words(&text), "close the garage door", "{pass:?}");

    // "Unlock the front door." whisper heard "Moth the front door.": never "lock"
    let (text, pass) = heard("unlock-the-front-door.wav").await;
    eprintln!("unlock: {text:?} {pass:?}");
    assert_ne!(words(&text), "lock the front door", "{pass:?}");
    assert!(
        !pass.taken || words(&text) == "unlock the front door",
        "{pass:?}"
    );
}
