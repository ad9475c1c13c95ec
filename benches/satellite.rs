//! Satellites against the local microphone: `cargo bench --bench satellite -- [OPTIONS]`.
//!
//! The same spoken requests ("Okay Nabu, …" by espeak-ng, each a local intent) three ways,
//! each in one long-running `hearth run` (this build's release binary):
//!
//! - **local**: one WAV of the requests, 6 s apart, as the microphone (`--input --realtime`);
//! - **satellite**: said one after another into a real `wyoming-satellite` 1.0.0 on loopback
//!   (`hearth run --no-audio`, one `[[satellite]]`);
//! - **two at once**: two satellites, each request said into both at the same moment.
//!
//! For every turn: hearth's own figure, end of speech on its input clock → the first reply
//! sample at its output (`first_audio`), for all three; and for the satellites the one a
//! person in the room would time: the wall clock from the last sample of the request going
//! into the satellite's microphone to the first reply audio reaching its speaker program
//! (through the satellite: the network hop, its `audio-start`, the speaker process it
//! starts). Median and p95 of each.
//!
//! Options: `--rounds N` (8 requests per way), `--work DIR` (default
//! `<target>/tmp/satellite-bench`), `--json FILE`. Needs `cargo build --release --workspace
//! --bins`, `scripts/fetch-models` and `scripts/setup --test` (espeak-ng, the satellite's venv).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use hearth_testkit::bench;
use hearth_testkit::satellite::{self as sat, Hearth, Satellite};
use serde_json::{json, Value};

const USAGE: &str =
    "usage: cargo bench --bench satellite -- [--rounds N] [--work DIR] [--json FILE]";

/// The requests, in turn (each a local intent of the demo home).
const REQUESTS: [&str; 4] = [
    "Okay Nabu, turn on the kitchen light.",
    "Okay Nabu, lock the front door.",
    "Okay Nabu, turn off the bedroom light.",
    "Okay Nabu, turn on the living room light.",
];
/// Between two requests: the reply has played and the follow-up window is over.
const GAP_S: f64 = 7.0;

struct Options {
    rounds: usize,
    work: PathBuf,
    json: Option<PathBuf>,
}

fn parse_args(args: &[String]) -> Result<Options, String> {
    let mut o = Options {
        rounds: 8,
        work: Path::new(env!("CARGO_TARGET_TMPDIR")).join("satellite-bench"),
        json: None,
    };
    let mut f = bench::Flags::new(args);
    while let Some(a) = f.next_flag() {
        match a {
            "--rounds" => o.rounds = f.number(a)?.max(1.0) as usize,
            "--work" => o.work = f.value(a)?.into(),
            "--json" => o.json = Some(f.value(a)?.into()),
            _ => return Err(format!("unknown argument {a:?}")),
        }
    }
    Ok(o)
}

fn main() -> std::process::ExitCode {
    bench::main_of("satellite", USAGE, parse_args, run)
}

fn run(o: &Options) -> Result<(), String> {
    if hearth_testkit::model::voice_models().is_none() || sat::available().is_none() {
        return Err(
            "the models or wyoming-satellite are missing: scripts/fetch-models, scripts/setup --test"
                .into(),
        );
    }
    let _ = std::fs::remove_dir_all(&o.work);
    std::fs::create_dir_all(&o.work).map_err(|e| format!("{}: {e}", o.work.display()))?;
    let clips: Vec<PathBuf> = REQUESTS
        .iter()
        .enumerate()
        .map(|(i, text)| sat::espeak(&o.work, &format!("request{i}"), text))
        .collect();
    let local = local(&o.work.join("local"), &clips, o.rounds);
    let one = satellites(&o.work.join("one"), &clips, o.rounds, 1);
    let two = satellites(&o.work.join("two"), &clips, o.rounds.div_ceil(2), 2);
    println!(
        "load average: {}",
        bench::load_average().unwrap_or_default()
    );
    println!("| way | turns | hearth: end of speech → first reply audio, median / p95 | at the satellite: end of speech → first reply audio at its speaker, median / p95 |");
    println!("|---|---|---|---|");
    let ways = [
        ("local microphone (WAV, real time)", &local),
        ("one satellite", &one),
        ("two satellites at once", &two),
    ];
    for (name, r) in ways {
        let outside = match r.outside.is_empty() {
            true => "—".to_string(),
            false => spread(&r.outside),
        };
        println!(
            "| {name} | {} | {} | {outside} |",
            r.hearth.len(),
            spread(&r.hearth)
        );
    }
    match &o.json {
        Some(path) => bench::write_json(
            path,
            &json!({
                "rounds": o.rounds,
                "load_average": bench::load_average(),
                "local": local.to_json(),
                "one_satellite": one.to_json(),
                "two_satellites": two.to_json(),
            }),
        ),
        None => Ok(()),
    }
}

/// Latencies, ms.
#[derive(Default)]
struct Figures {
    /// hearth's `first_audio` of each turn.
    hearth: Vec<f64>,
    /// At the satellite: end of speech into its microphone → first reply audio at its speaker.
    outside: Vec<f64>,
    /// Turns that did not run the request's call.
    wrong: usize,
}

impl Figures {
    fn to_json(&self) -> Value {
        json!({"hearth_first_audio_ms": self.hearth, "at_satellite_ms": self.outside, "wrong": self.wrong})
    }
}

fn spread(ms: &[f64]) -> String {
    let mut v = ms.to_vec();
    v.sort_by(f64::total_cmp);
    let at = |q: f64| v[((v.len() - 1) as f64 * q).round() as usize];
    if v.is_empty() {
        return "—".into();
    }
    format!("{:.0} / {:.0} ms", at(0.5), at(0.95))
}

fn first_audio(turn: &Value) -> Option<f64> {
    turn["timings_ms"]["first_audio"].as_f64()
}

/// The requests as one real-time WAV through `hearth run --input`.
fn local(dir: &Path, clips: &[PathBuf], rounds: usize) -> Figures {
    std::fs::create_dir_all(dir.join("state")).expect("a dir");
    let gap = vec![0.0f32; (GAP_S * 16_000.0) as usize];
    let mut samples = vec![0.0f32; 16_000];
    for i in 0..rounds {
        samples.extend(hearth::audio::wav::read_16k_mono(&clips[i % clips.len()]).expect("a clip"));
        samples.extend_from_slice(&gap);
    }
    let input = dir.join("input.wav");
    let mut sink = hearth::audio::wav::WavSink::create(&input, 16_000).expect("a WAV");
    sink.write_f32(&samples).expect("the WAV");
    sink.finalize().expect("the WAV");
    let out = Command::new(hearth_testkit::hearth_exe())
        .args([
            "run",
            "--once",
            "--realtime",
            "--json",
            "--bus",
            "none",
            "--input",
        ])
        .arg(&input)
        .arg("--output")
        .arg(dir.join("reply.wav"))
        .arg("--tools")
        .arg(hearth_testkit::root().join("tools"))
        .env("HEARTH_DEMO_STATE", dir.join("state"))
        .env("HEARTH_LOG", "hearth=info")
        .output()
        .expect("hearth runs");
    std::fs::write(dir.join("hearth.log"), &out.stderr).expect("the log");
    let turns: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    Figures {
        hearth: turns.iter().filter_map(first_audio).collect(),
        outside: Vec::new(),
        wrong: rounds.saturating_sub(turns.iter().filter(|t| has_call(t)).count()),
    }
}

fn has_call(turn: &Value) -> bool {
    turn["turn"]["hops"].as_array().is_some_and(|h| {
        h.iter()
            .any(|h| h["calls"].as_array().is_some_and(|c| !c.is_empty()))
    })
}

/// `n` satellites, each said every request at the same moment.
fn satellites(dir: &Path, clips: &[PathBuf], rounds: usize, n: usize) -> Figures {
    std::fs::create_dir_all(dir).expect("a dir");
    let sats: Vec<Satellite> = (0..n)
        .map(|i| Satellite::start(dir, &format!("room{i}"), &format!("Room {i}")))
        .collect();
    let config: String = sats
        .iter()
        .map(|s| {
            format!(
                "[[satellite]]\nname = \"{}\"\nurl = \"{}\"\n",
                s.name,
                s.url()
            )
        })
        .collect();
    let hearth = Hearth::start(dir, &config, &[]);
    hearth.wait_log(
        "capture started source=satellite",
        n,
        Duration::from_secs(180),
    );
    std::thread::sleep(Duration::from_secs(3));
    for i in 0..rounds {
        for s in &sats {
            s.say(&clips[i % clips.len()]);
        }
        hearth.turns((i + 1) * n, Duration::from_secs(120));
        std::thread::sleep(Duration::from_secs_f64(GAP_S));
    }
    let turns = hearth.turns_now();
    let mut f = Figures {
        hearth: turns.iter().filter_map(first_audio).collect(),
        wrong: (rounds * n).saturating_sub(turns.iter().filter(|t| has_call(t)).count()),
        ..Figures::default()
    };
    for s in &sats {
        let replied = s.replied_at();
        for said in s.said_at() {
            // the first reply audio after the request ended (the earcon comes before it)
            if let Some(r) = replied.iter().find(|&&r| r > said) {
                f.outside.push((r - said) * 1e3);
            }
        }
    }
    f
}
