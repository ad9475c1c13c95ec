//! "Stop" over a reply, as hearth is used: `cargo bench --bench stop -- [OPTIONS]`.
//!
//! One `hearth run` (this build's release binary, the default wake word) on a private
//! PulseAudio server's null sinks, in real time, for `--rounds` (8) rounds: "Okay Nabu." by
//! espeak-ng (the wake word's model hears it reliably), a quarter of a second, "Tell me a
//! story." by Piper, played into the room; once the story (a tool's long `say`, about 15 s of
//! hearth's voice; a local intent, or the model's call when whisper mishears the request) is
//! being spoken, a stop phrase ("Stop.", "Be quiet.", "Never mind.", "Cancel.", in turn;
//! espeak-ng, at −10 dBFS active level). Nothing echoes between the null sinks, so the
//! canceller never converges and the full playback gate stands: a frame over a reply counts
//! only when 6 dB louder than hearth's own playback level at that moment. The phrase reaches
//! hearth at −17 to −24 dBFS, about as loud as the story (−16 to −30 dBFS in its 50 ms level
//! reports), so some stops are never heard at all (the Silero VAD is sure of the speech; the
//! gate refuses it); those are counted, not timed. (With a loopback carrying hearth's voice
//! back so that the canceller converges, this machine's PulseAudio moved the echo's delay from
//! 56 to 244 ms within a minute, which no canceller follows.) Each stop is found in hearth's
//! log: the reply stopped on the phrase (`stop: the reply is stopped`, with
//! `after_speech_ms`: from the end of the phrase in the input to the stop sent to Playback,
//! on the wall clock; the speaker is then silent within one device buffer).
//!
//! Options: `--rounds N` (8), `--work DIR` (default `<target>/tmp/stop-bench`; hearth's log is
//! kept there), `--json FILE`. Needs `cargo build --release --workspace --bins` (hearth-stt
//! beside hearth), `scripts/fetch-models` and `scripts/fetch-models wake`, espeak-ng and
//! PulseAudio (`scripts/setup`).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use hearth_testkit::pulse::Pulse;
use hearth_testkit::{bench, scenes, story};
use scenes::mix::{active_level, from_db};
use scenes::speak::{self, write_f32_wav, ClipCache, Speaker, Voice};
use serde_json::json;

const USAGE: &str = "usage: cargo bench --bench stop -- [--rounds N] [--work DIR] [--json FILE]";

/// The wake word, then the request (a local intent).
const WAKE: &str = "Okay Nabu.";
const REQUEST: &str = "Tell me a story.";
/// The stop phrases, in turn.
const STOPS: [&str; 4] = ["Stop.", "Be quiet.", "Never mind.", "Cancel."];
/// How long after the story begins the stop is said.
const STOP_AFTER_S: f64 = 3.0;
/// The request's active level, dBFS, and the stop's: louder than hearth's replies (their
/// active level is about −20 dBFS; with no echo to converge on, the canceller leaves the
/// full playback gate, which wants speech over a reply 6 dB above hearth's own level).
const SPEECH_DBFS: f64 = -26.0;
const STOP_DBFS: f64 = -10.0;

struct Options {
    rounds: usize,
    work: PathBuf,
    json: Option<PathBuf>,
}

fn parse_args(args: &[String]) -> Result<Options, String> {
    let mut o = Options {
        rounds: 8,
        work: Path::new(env!("CARGO_TARGET_TMPDIR")).join("stop-bench"),
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
    bench::main_of("stop", USAGE, parse_args, run)
}

/// `clip` at `dbfs` active level (less if it would clip), written to `path`; the level used.
fn write_at(path: &Path, clip: &[f32], dbfs: f64) -> Result<f64, String> {
    let level = active_level(clip).ok_or("a silent clip")?;
    let peak = clip.iter().fold(0f32, |m, s| m.max(s.abs()));
    let gain = (from_db(dbfs) / level).min(0.98 / f64::from(peak.max(1e-6)));
    let scaled: Vec<f32> = clip.iter().map(|&s| (f64::from(s) * gain) as f32).collect();
    write_f32_wav(path, &scaled)?;
    Ok(20.0 * (level * gain).log10())
}

/// hearth's log, line by line, as it comes.
struct Log {
    lines: mpsc::Receiver<String>,
    kept: Vec<String>,
}

impl Log {
    /// The next line holding `what`, within `within`; every line read is kept.
    fn wait_for(&mut self, what: &str, within: Duration) -> Option<String> {
        let deadline = Instant::now() + within;
        loop {
            let left = deadline.checked_duration_since(Instant::now())?;
            let line = self.lines.recv_timeout(left).ok()?;
            self.kept.push(line.clone());
            if line.contains(what) {
                return Some(line);
            }
        }
    }
}

fn run(opts: &Options) -> Result<(), String> {
    let hearth = Path::new(env!("CARGO_BIN_EXE_hearth"));
    let stt = hearth.with_file_name("hearth-stt");
    if !stt.is_file() {
        return Err(format!(
            "{} is not built: run cargo build --release --workspace --bins",
            stt.display()
        ));
    }
    speak::check_espeak()?;
    std::fs::create_dir_all(&opts.work).map_err(|e| e.to_string())?;
    let mut speaker = Speaker::new(&opts.work)?;
    let mut cache = ClipCache::new(&opts.work.join("clips"), false);
    let piper = Voice::Piper {
        length_scale: 1.0,
        noise_scale: 0.667,
    };
    // the wake word by espeak-ng, the request by Piper (whisper hears it better), a short
    // pause between, each at the same active level
    let request = opts.work.join("request.wav");
    let mut clip = Vec::new();
    for (voice, words) in [(Voice::Espeak { wpm: 175 }, WAKE), (piper, REQUEST)] {
        let mut part = cache.get(&mut speaker, voice, words)?;
        let level = active_level(&part).ok_or("a silent clip")?;
        let gain = from_db(SPEECH_DBFS) / level;
        part.iter_mut()
            .for_each(|s| *s = (f64::from(*s) * gain) as f32);
        clip.extend(part);
        clip.extend(std::iter::repeat_n(0.0, 4000));
    }
    write_at(&request, &clip, SPEECH_DBFS)?;
    let mut stops = Vec::new();
    for (i, words) in STOPS.iter().enumerate() {
        let path = opts.work.join(format!("stop-{i}.wav"));
        let clip = cache.get(&mut speaker, Voice::Espeak { wpm: 175 }, words)?;
        let level = write_at(&path, &clip, STOP_DBFS)?;
        stops.push((*words, path, level));
    }
    let tools = story::tools_with_a_story(&opts.work)?;
    let pulse = Pulse::start("stop-bench")?;
    eprintln!("stop: {} rounds through {}", opts.rounds, hearth.display());
    let started = Instant::now();
    let mut child = Command::new(hearth)
        .args(["run", "--json", "--bus", "none"])
        .args([
            "--mic",
            "pulseaudio:room.monitor",
            "--speaker",
            "pulseaudio:speaker",
        ])
        .arg("--tools")
        .arg(&tools)
        .env("HEARTH_DEMO_STATE", opts.work.join("state"))
        .env(
            "HEARTH_LOG",
            std::env::var("HEARTH_LOG").unwrap_or_else(|_| "hearth=info".into()),
        )
        .envs(pulse.env.iter().cloned())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("running {}: {e}", hearth.display()))?;
    let stderr = child.stderr.take().ok_or("no stderr")?;
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut log = Log {
        lines: rx,
        kept: Vec::new(),
    };
    let result = rounds(opts, &pulse, &request, &stops, &mut log);
    // SIGTERM, as systemd stops it
    let _ = Command::new("kill").arg(child.id().to_string()).status();
    let _ = child.wait();
    while let Ok(line) = log.lines.recv_timeout(Duration::from_secs(1)) {
        log.kept.push(line);
    }
    let log_file = opts.work.join("hearth.log");
    std::fs::write(&log_file, log.kept.join("\n") + "\n")
        .map_err(|e| format!("writing {}: {e}", log_file.display()))?;
    let stopped = result.map_err(|e| format!("{e} (hearth's log: {})", log_file.display()))?;

    let mut sorted: Vec<f64> = stopped.iter().flatten().copied().collect();
    sorted.sort_by(f64::total_cmp);
    let at = |q: f64| {
        sorted
            .get(((sorted.len().max(1) - 1) as f64 * q).round() as usize)
            .copied()
    };
    let ms = |v: Option<f64>| v.map_or("–".into(), |v| format!("{v:.0}"));
    let per_round: Vec<String> = stopped
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let words = stops[i % stops.len()].0;
            s.map_or(format!("{words:?}: not stopped"), |ms| {
                format!("{words:?}: {ms:.0} ms")
            })
        })
        .collect();
    println!(
        "## Stop over a reply\n\n{} rounds in one `hearth run` on PulseAudio null sinks (the \
         default wake word; \"{WAKE}\" by espeak-ng and \"{REQUEST}\" by Piper at \
         {SPEECH_DBFS} dBFS, then, \
         {STOP_AFTER_S} s into the story, a stop phrase by espeak-ng at {:.0}–{:.0} dBFS; no \
         echo here, so the full playback gate stands and a phrase no louder than the story at \
         that moment is not heard). ms: the end of the phrase to the stop sent to Playback (the speaker is \
         silent within one device buffer after).\n\n\
         | stopped | median ms | p95 ms | fastest | slowest |\n|---|---|---|---|---|\n\
         | {} of {} | {} | {} | {} | {} |\n\n{}; took {:.1} min; hearth's log: {}",
        opts.rounds,
        stops.iter().map(|s| s.2).fold(f64::INFINITY, f64::min),
        stops.iter().map(|s| s.2).fold(f64::NEG_INFINITY, f64::max),
        sorted.len(),
        stopped.len(),
        ms(at(0.5)),
        ms(at(0.95)),
        ms(at(0.0)),
        ms(at(1.0)),
        per_round.join("; "),
        started.elapsed().as_secs_f64() / 60.0,
        log_file.display()
    );
    if let Some(file) = &opts.json {
        let report = json!({
            "rounds": opts.rounds,
            "after_speech_ms": stopped,
            "median_ms": at(0.5),
            "p95_ms": at(0.95),
        });
        bench::write_json(file, &report)?;
    }
    Ok(())
}

/// The rounds: the request, the story begins, the stop phrase, the stop (or none). Each
/// round's `after_speech_ms`, `None` where the reply was not stopped.
fn rounds(
    opts: &Options,
    pulse: &Pulse,
    request: &Path,
    stops: &[(&str, PathBuf, f64)],
    log: &mut Log,
) -> Result<Vec<Option<f64>>, String> {
    log.wait_for("listening source=", Duration::from_secs(300))
        .ok_or("hearth run did not start listening")?;
    // the record stream starts delivering a moment after "listening"
    std::thread::sleep(Duration::from_secs(1));
    let mut stopped = Vec::new();
    for round in 0..opts.rounds {
        pulse.say(request)?;
        if log.wait_for("speaking", Duration::from_secs(60)).is_none() {
            eprintln!("stop:   round {round}: the story did not begin");
            stopped.push(None);
            continue;
        }
        std::thread::sleep(Duration::from_secs_f64(STOP_AFTER_S));
        let (words, path, _) = &stops[round % stops.len()];
        pulse.say(path)?;
        let ms = log
            .wait_for("stop: the reply is stopped", Duration::from_secs(10))
            .and_then(|l| field(&l, "after_speech_ms"));
        eprintln!(
            "stop:   round {round}, {words:?}: {}",
            ms.map_or("not stopped".into(), |ms| format!(
                "stopped {ms:.0} ms after it ended"
            ))
        );
        stopped.push(ms);
        // the reply over (stopped or played out), and a pause before the next request
        log.wait_for("turn done", Duration::from_secs(60));
        std::thread::sleep(Duration::from_secs(2));
    }
    Ok(stopped)
}

/// The `name=value` field of a log line, as a number.
fn field(line: &str, name: &str) -> Option<f64> {
    let at = line.find(&format!("{name}="))? + name.len() + 1;
    let rest = &line[at..];
    let end = rest
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(rest.len());
    rest[..end].parse().ok()
}
