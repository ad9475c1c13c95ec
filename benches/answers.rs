//! Answers to a question, heard: `cargo bench --bench answers -- [OPTIONS]`.
//!
//! When hearth asks before what cannot be taken back ("Unlock the front door?"), it runs the
//! call only on a yes (`hearth::agent::confirm::read` of the transcript). This bench measures
//! how often what was said is heard as a yes: each speaker of the cast says the answers a
//! household gives (yeses, noes, and other things said then: "Hold on.", "Less.", "Who is
//! it?"), each at the three paces in turn, at -26 dBFS active level with 0.3 s of the room
//! before and after, in room noise at each `--snr` (seeded) and optionally in a reverberant
//! room; each clip is recognised as `hearth run` hears a request (hearth-stt through the Stt
//! actor, whisper tiny.en, the tools' words as its prompt, held to the house's phrase set,
//! which has the answers in it). A "false yes" is something not a yes heard as one: the
//! error that would unlock a door.
//!
//! Options: `--voice NAME|all` (all: the eight speakers of hearth-testkit's `scenes/voices.rs`),
//! `--snr LIST` (`50,20,10,5`: dB of room noise under the speech), `--reverb`, `--work DIR`
//! (scratch files and each clip as heard, `VOICE-SNR-NN.wav`; default a directory under the
//! system's temporary one).
//!
//! Prints one Markdown row per speaker and room, then each false yes and each yes not heard.
//! Scores do not change the exit status; only failing to run does (a missing build, model
//! or program, with the fix). Needs `scripts/fetch-models`, `cargo build --release
//! --workspace --bins` (`hearth-stt`) and the cast's programs (`scripts/setup`).

use std::path::PathBuf;
use std::process::ExitCode;

use hearth::agent::confirm::{read, Answer};
use hearth::voice::Hold;
use hearth_testkit::{bench, scenes};
use scenes::ears::Ears;
use scenes::room::{self, Room};
use scenes::talk::{self, Talker};
use scenes::voices::{self, Cast};

const USAGE: &str = "usage: cargo bench --bench answers -- [--voice NAME|all] [--snr 50,20,10,5] \
[--reverb] [--work DIR]";

/// The question the answers answer (its words may follow a yes: "Yes, unlock it.").
const QUESTION: &str = "Unlock the front door?";

/// Yeses a household says to it.
const YESES: &[&str] = &[
    "Yes.",
    "Yes, please.",
    "Yeah.",
    "Sure.",
    "Go ahead.",
    "Do it.",
    "Yes, unlock it.",
];

/// Noes, and other things said after the question that are not a yes: some sound like one
/// ("Less.", "Bless you.", "Yesterday.", "Nope."), some start with a yes word's sound ("Oh, wait.").
/// ("Guess so." is left out: a yes, if a reluctant one.)
const NOT_YESES: &[&str] = &[
    "No.",
    "No, thanks.",
    "Nope.",
    "Not now.",
    "Cancel.",
    "Don't.",
    "Wait.",
    "Never mind.",
    "Hold on.",
    "Maybe later.",
    "Yesterday.",
    "Less.",
    "Bless you.",
    "Who is it?",
    "What did you say?",
    "Just a second.",
    "Oh, wait.",
    "The kettle is boiling.",
];

/// Room around the speech, before and after, seconds.
const ROOM_S: f64 = 0.3;

struct Options {
    cast: Vec<&'static Cast>,
    snrs: Vec<f64>,
    reverb: bool,
    work: PathBuf,
}

fn main() -> ExitCode {
    bench::main_of("answers", USAGE, parse, run)
}

fn parse(args: &[String]) -> Result<Options, String> {
    let mut opts = Options {
        cast: voices::CAST.iter().collect(),
        snrs: vec![50.0, 20.0, 10.0, 5.0],
        reverb: false,
        work: std::env::temp_dir().join(format!("hearth-answers-{}", std::process::id())),
    };
    let mut flags = bench::Flags::new(args);
    while let Some(flag) = flags.next_flag() {
        match flag {
            "--voice" => match flags.value(flag)? {
                "all" => opts.cast = voices::CAST.iter().collect(),
                name => opts.cast = vec![voices::cast(name)?],
            },
            "--snr" => {
                opts.snrs = flags
                    .value(flag)?
                    .split(',')
                    .map(room::parse_snr)
                    .collect::<Result<_, _>>()?
            }
            "--reverb" => opts.reverb = true,
            "--work" => opts.work = PathBuf::from(flags.value(flag)?),
            other => return Err(format!("unknown option {other}")),
        }
    }
    Ok(opts)
}

/// One answer as heard.
struct Heard {
    said: &'static str,
    yes: bool,
    heard: String,
    read: Answer,
}

fn run(opts: &Options) -> Result<(), String> {
    // `HEARTH_LOG=hearth=debug` shows what the Stt actor does
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_env("HEARTH_LOG"))
        .with_writer(std::io::stderr)
        .try_init();
    talk::check_sox()?;
    let ears = Ears::start(&[], true)?;
    eprintln!(
        "answers: hearth-stt with {} words of prompt, held to the house's phrase set",
        ears.prompt_words
    );
    println!(
        "| voice | room | yes heard as yes | not a yes heard as yes (false yes) | not a yes heard as no |\n\
         |---|---|---|---|---|"
    );
    let mut notes = Vec::new();
    for cast in &opts.cast {
        let mut talker = Talker::load(cast, &opts.work.join(cast.name))?;
        let said: Vec<(&'static str, bool, Vec<f32>)> = YESES
            .iter()
            .map(|s| (*s, true))
            .chain(NOT_YESES.iter().map(|s| (*s, false)))
            .enumerate()
            .map(|(i, (s, yes))| Ok((s, yes, talker.speak(i, s)?)))
            .collect::<Result<_, String>>()?;
        for &snr in &opts.snrs {
            let room = Room {
                snr_db: Some(snr),
                reverb: opts.reverb,
            };
            let mut heard = Vec::new();
            for (i, (s, yes, clip)) in said.iter().enumerate() {
                let samples = in_the_room(&room, clip.clone(), i as u64, &opts.work)?;
                let wav = opts.work.join(format!("{}-{snr}-{i:02}.wav", cast.name));
                write_wav(&wav, &samples)?;
                let text = ears.hear(&samples, Hold::House)?.text;
                heard.push(Heard {
                    said: s,
                    yes: *yes,
                    read: read(QUESTION, &text),
                    heard: text,
                });
            }
            let count = |yes: bool, answer: Answer| {
                heard
                    .iter()
                    .filter(|h| h.yes == yes && h.read == answer)
                    .count()
            };
            println!(
                "| {} | {} | {}/{} | **{}**/{} | {}/{} |",
                cast.name,
                room.label(),
                count(true, Answer::Yes),
                YESES.len(),
                count(false, Answer::Yes),
                NOT_YESES.len(),
                count(false, Answer::No),
                NOT_YESES.len(),
            );
            for h in &heard {
                if h.yes != (h.read == Answer::Yes) {
                    let what = if h.yes { "yes not heard" } else { "FALSE YES" };
                    notes.push(format!(
                        "- {what}: {} in {}: {:?} heard {:?}",
                        cast.name,
                        room.label(),
                        h.said,
                        h.heard
                    ));
                }
            }
        }
    }
    println!();
    for n in notes {
        println!("{n}");
    }
    Ok(())
}

/// `samples` (16 kHz) as a 16-bit WAV file: each clip is kept, to hear it again.
fn write_wav(path: &std::path::Path, samples: &[f32]) -> Result<(), String> {
    let failed = |e: hound::Error| format!("writing {}: {e}", path.display());
    let spec = hound::WavSpec {
        channels: 1,
        sample_rate: 16_000,
        bits_per_sample: 16,
        sample_format: hound::SampleFormat::Int,
    };
    let mut w = hound::WavWriter::create(path, spec).map_err(failed)?;
    for s in samples {
        w.write_sample((s.clamp(-1.0, 1.0) * 32767.0) as i16)
            .map_err(failed)?;
    }
    w.finalize().map_err(failed)
}

/// `clip` at the speech level in `room` (its reverberation), with [`ROOM_S`] of the room
/// before and after and its noise (seeded) under all of it.
fn in_the_room(
    room: &Room,
    clip: Vec<f32>,
    seed: u64,
    work: &std::path::Path,
) -> Result<Vec<f32>, String> {
    let mut clip = talk::in_room(room, clip, work)?;
    room::set_active_level(&mut clip, room::SPEECH_DBFS);
    let pad = vec![0.0f32; (ROOM_S * 16_000.0) as usize];
    let mut samples = [pad.as_slice(), &clip, &pad].concat();
    if let Some(bed) = room.bed(samples.len(), seed) {
        samples.iter_mut().zip(bed).for_each(|(s, n)| *s += n);
    }
    Ok(samples)
}
