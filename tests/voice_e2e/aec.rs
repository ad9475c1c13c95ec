//! Echo cancellation end to end through `hearth run` on PulseAudio null sinks where hearth
//! hears itself: a loopback carries the `speaker` sink's monitor (what hearth plays) into the
//! `room` sink (what its microphone, `room.monitor`, hears) at unity gain, 60 ms late.
//!
//! With echo cancellation on (the default for sound devices), hearth's own long reply coming
//! back through its microphone makes no turn and no wake word, and no utterance while the
//! canceller's credit lowers Listen's gate; and "Alexa" said
//! over such a reply, as loud as the reply itself, is heard and stops it; the request after it
//! makes the next turn. The ERLE hearth logs while playing is printed (and must be real).

use super::*;
use common::daemon::bus_tool;

/// RMS of the 32 ms frames above −40 dBFS: the active level of speech.
fn active_rms(samples: &[f32]) -> f32 {
    let (mut sum, mut n) = (0.0f64, 0usize);
    for f in samples.chunks(512) {
        let e: f64 = f.iter().map(|&s| f64::from(s) * f64::from(s)).sum();
        if (e / f.len() as f64).sqrt() > 0.01 {
            sum += e;
            n += f.len();
        }
    }
    (sum / n.max(1) as f64).sqrt() as f32
}

/// `input` scaled to the active level of `like`, written to `out`.
fn at_level_of(input: &Path, like: &Path, out: &Path) {
    let clip = hearth::audio::wav::read_mono(input).unwrap();
    let reference = hearth::audio::wav::read_mono(like).unwrap();
    let gain = active_rms(&reference.samples) / active_rms(&clip.samples);
    let peak = clip.samples.iter().fold(0f32, |m, s| m.max(s.abs()));
    assert!(peak * gain < 1.0, "{} would clip", input.display());
    let mut sink = hearth::audio::wav::WavSink::create(out, clip.rate).unwrap();
    let scaled: Vec<f32> = clip.samples.iter().map(|s| s * gain).collect();
    sink.write_f32(&scaled).unwrap();
    sink.finalize().unwrap();
    eprintln!(
        "{}: {:.1} dB to the level of {}",
        input.display(),
        20.0 * gain.log10(),
        like.display()
    );
}

/// The `name=value` field of a log line, as a number.
fn field(line: &str, name: &str) -> Option<f32> {
    let at = line.find(&format!("{name}="))? + name.len() + 1;
    let rest = line[at..].trim_start_matches('"');
    let end = rest
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-'))
        .unwrap_or(rest.len());
    rest[..end].parse().ok()
}

/// Asks for the story out loud, through `Listen()`, until hearth reads it: up to four times,
/// in the two wordings its intent takes, as a person would when misheard (whisper tiny.en on a
/// busy machine made "Read me the story." "We'll meet the story." and "We meet the story.",
/// and one CI run missed it three times in a row). Returns where in the log the story's reply
/// began to play; fails naming what each request was heard as.
fn start_the_story(live: &mut Live, bus: &PrivateBus, pulse: &Pulse, asks: &[PathBuf]) -> usize {
    let listen = [
        "call",
        "io.hearth.Agent1",
        "/io/hearth/Agent",
        "io.hearth.Agent1",
        "Listen",
    ];
    let mut heard = Vec::new();
    for ask in asks.iter().cycle().take(4) {
        let (ok, _, err) = bus_tool(bus, &listen);
        assert!(ok, "Listen() failed: {err}");
        live.drain_log();
        let asked = live.log_tail.len();
        pulse.say(ask).unwrap();
        live.wait_log_since(asked, "speaking", Duration::from_secs(120));
        let from = live.log_tail.len();
        if live.log_tail[asked..]
            .iter()
            .any(|l| l.contains("tool_call{name=read_story"))
        {
            return from;
        }
        let misheard = live.next_turn(Duration::from_secs(120));
        eprintln!(
            "the request for the story was heard as {}: said again",
            misheard["heard"]
        );
        heard.push(misheard["heard"].to_string());
        // once the answer to it ("Sorry, …") has left the room
        std::thread::sleep(Duration::from_secs(3));
    }
    panic!("hearth did not read the story when asked four times: heard {heard:?}");
}

#[test]
fn hearth_does_not_hear_itself_but_hears_alexa_said_over_its_reply() {
    let Some(models) = ready() else {
        return;
    };
    let _one = serial();
    let pulse = pulse_server();
    pulse.loopback(60).unwrap();
    let bus = PrivateBus::start();
    let dir = pulse.dir.join("aec");
    let (tools, read) = story_scene(&dir, &models);
    let tell = dir.join("tell.wav");
    speak_to_wav(&models, "Tell me a story.", &tell);
    let asks = [read, tell];
    // the reply as hearth will play it, for its level: the user says "Alexa" as loud
    let story = dir.join("story.wav");
    speak_to_wav(&models, common::story::STORY, &story);
    let alexa = dir.join("alexa-equal.wav");
    at_level_of(&shared().join("audio/alexa.wav"), &story, &alexa);
    let config = dir.join("hearth.toml");
    std::fs::write(&config, "[audio]\necho_cancel = true\n").unwrap();

    let state = dir.join("state");
    let mut env = pulse.env.clone();
    env.push(("DBUS_SESSION_BUS_ADDRESS".into(), bus.address.clone()));
    if let Ok(log) = std::env::var("HEARTH_E2E_LOG") {
        env.push(("HEARTH_LOG".into(), log));
    }
    let mut live = Live::start(
        &[
            "--config".into(),
            config.display().to_string(),
            "--wake".into(),
            "alexa".into(),
            "--tools".into(),
            tools.display().to_string(),
            "--bus".into(),
            "session".into(),
            "--mic".into(),
            "pulseaudio:room.monitor".into(),
            "--speaker".into(),
            "pulseaudio:speaker".into(),
        ],
        &env,
        &state,
    );
    live.wait_log("echo cancellation on", Duration::from_secs(300));
    live.wait_log("listening source=", Duration::from_secs(300));
    std::thread::sleep(Duration::from_secs(1));

    // (a) the whole story plays back into the microphone: no utterance, no wake word, and
    // the turn is not interrupted; nothing follows it
    let from = start_the_story(&mut live, &bus, &pulse, &asks);
    let story_from = from;
    let turn = live.next_turn(Duration::from_secs(120));
    let ran_story = turn["turn"]["hops"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|h| h["calls"].as_array().unwrap())
        .any(|c| c["name"] == "read_story");
    assert!(ran_story, "{turn}");
    assert_eq!(turn["interrupted"], false, "{turn}");
    assert!(
        live.turns.recv_timeout(Duration::from_secs(6)).is_err(),
        "hearth's own voice made a turn"
    );
    live.drain_log();
    let during: Vec<&String> = live.log_tail[from..].iter().collect();
    let woke: Vec<&&String> = during
        .iter()
        .filter(|l| l.contains("wake word wake_word="))
        .collect();
    assert!(woke.is_empty(), "hearth's own reply woke it:\n{woke:#?}");
    // while the canceller is converged and Listen's gate is lowered by its credit, hearth's
    // voice starts no utterance at all. Before it converges (and after the echo path moved
    // under it: in CI the output's latency once dropped from 60 to 32 ms mid-reply) Listen
    // gets the linear output and its full playback gate, what it had without echo
    // cancellation, which a reply coming back at unity gain can pass.
    assert!(
        during
            .iter()
            .any(|l| l.contains("echo canceller converged")),
        "the canceller did not converge during a 15 s reply"
    );
    let onsets: Vec<(f32, &String)> = during
        .iter()
        .filter(|l| l.contains("listen: barge-in"))
        .map(|l| (field(l, "echo_credit_db").unwrap_or(f32::NAN), *l))
        .collect();
    eprintln!(
        "hearth's own voice started {} utterance(s), with the credit at {:?}",
        onsets.len(),
        onsets.iter().map(|o| o.0).collect::<Vec<_>>()
    );
    let credited: Vec<&String> = onsets.iter().filter(|o| o.0 != 0.0).map(|o| o.1).collect();
    assert!(
        credited.is_empty(),
        "hearth heard its own reply under the canceller's credit:\n{credited:#?}"
    );
    // (b) the story again; "Alexa, turn on the kitchen light." said over it at the reply's
    // own level once the canceller has settled: the wake word is heard, the reply stops and
    // the request is answered
    let from = start_the_story(&mut live, &bus, &pulse, &asks);
    // (the output's latency may have moved between the replies: time to converge again).
    // The wake word is said up to five times while the story plays, as a person would when
    // not answered: over the raw microphone the model heard it 1 time in 42 at this level,
    // over the linear output about 36 in 42 (/work/research/aec-eval/REPORT.md); on a busy
    // machine the echo's delay moves mid-reply (104 to 144 ms in one run) and the canceller
    // converges again, so a few tries may fall where it has not
    std::thread::sleep(Duration::from_secs(4));
    let mut said = 0;
    let woke = loop {
        pulse.say(&alexa).unwrap();
        said += 1;
        std::thread::sleep(Duration::from_millis(1500));
        live.drain_log();
        let since = &live.log_tail[from..];
        let woke = since
            .iter()
            .any(|l| l.contains("wake word wake_word=Alexa"));
        let story_over = since.iter().any(|l| l.contains("turn done"));
        assert!(
            woke || !story_over,
            "the story ended before \"Alexa\", said {said} time(s) over it, was heard:\n{since:#?}"
        );
        if woke || said == 5 {
            break woke;
        }
    };
    eprintln!("\"Alexa\" said {said} time(s) over the reply: heard {woke}");
    assert!(woke, "{:#?}", &live.log_tail[from..]);
    live.wait_log(
        "addressed over the reply: stopping it",
        Duration::from_secs(10),
    );
    let stopped = live.next_turn(Duration::from_secs(60));
    assert_eq!(stopped["interrupted"], true, "{stopped}");
    // the request after the wake word becomes the next turn; what whisper (tiny.en) makes of
    // words said over the end of the reply varies ("I'm the kitchen, Mike." in one run), so
    // that the light went on is reported, not required
    let request = live.next_turn(Duration::from_secs(120));
    assert_eq!(request["interrupted"], false, "{request}");
    eprintln!(
        "the request over the reply was heard as {} and ran {:?}",
        request["heard"],
        calls(&request)
    );
    // the ERLE hearth logged every 10 s while playing, over both replies: PulseAudio's
    // loopback on a busy machine moves the echo's delay now and then (60 to 100 ms), and a
    // window the canceller spends converging again on the new delay shows less
    live.drain_log();
    let erle: Vec<(f32, f32)> = live.log_tail[story_from..]
        .iter()
        .filter(|l| l.contains("echo cancellation erle_db="))
        .filter_map(|l| Some((field(l, "erle_db")?, field(l, "linear_erle_db")?)))
        .collect();
    eprintln!("ERLE while hearth read the story (dB, suppressed / linear): {erle:?}");
    // on a busy 2-core machine the canceller shows 7–64 dB per 10 s window here; the best
    // window of a run was 17.4 dB in one run of five, and 11.7 dB in a full suite's run:
    // 10 dB (nine tenths of the echo's power gone) says the echo was cancelled
    assert!(
        erle.iter().any(|(db, _)| *db >= 10.0),
        "the echo was not cancelled: {erle:?}"
    );
}
