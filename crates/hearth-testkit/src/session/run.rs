// Speaking a set into one input WAV (Piper, in-process), and running hearth on it.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

/// The input's rate: what hearth captures at, so sample index = input clock.
pub const RATE: u32 = 16_000;

/// The paces the cases are spoken at, in turn (Piper's length scale: above 1 is slower).
pub const PACES: [f32; 3] = [0.85, 1.0, 1.2];

/// The room's noise under the speech, RMS dBFS.
pub const NOISE_DBFS: f64 = -50.0;

/// The default Piper voice, once per pace of [`PACES`].
pub struct Speaker {
    voices: Vec<hearth::tts::Voice>,
}

impl Speaker {
    pub fn load() -> Result<Speaker, String> {
        let fix =
            |e: hearth::tts::TtsError| format!("{e} (run scripts/setup and scripts/fetch-models)");
        let base = hearth::tts::TtsConfig::default_voice().map_err(fix)?;
        let mut voices = Vec::new();
        for pace in PACES {
            let mut config = base.clone();
            config.length_scale = Some(pace);
            voices.push(hearth::tts::Voice::load(&config).map_err(fix)?);
        }
        Ok(Speaker { voices })
    }

    /// `text` spoken at the pace for case `i`, 16 kHz mono.
    pub fn speak(&mut self, i: usize, text: &str) -> Result<Vec<f32>, String> {
        let n = self.voices.len();
        let said = self.voices[i % n]
            .synthesize(text)
            .map_err(|e| format!("speaking {text:?}: {e}"))?;
        hearth::audio::resample::pcm_at(&said.pcm, RATE).map_err(|e| e.to_string())
    }
}

/// A gap between words: this many ms under the level below.
const GAP_MS: usize = 30;
/// Quieter than the speech's loudest 10 ms by this much is a gap, dB.
const GAP_DB: f32 = 30.0;

/// The longest run of quiet 10 ms windows (at least [`GAP_MS`]) inside the middle half of
/// the speech in `clip` (16 kHz): (start, end) in samples. Where a person would stop to
/// think: "set the thermostat to … 21.5 degrees".
pub fn inner_gap(clip: &[f32]) -> Option<(usize, usize)> {
    let win = RATE as usize / 100;
    let db: Vec<f32> = clip
        .chunks(win)
        .map(|w| 20.0 * hearth::voice::rms(w).max(1e-6).log10())
        .collect();
    let loud = db.iter().copied().fold(f32::MIN, f32::max);
    let voiced: Vec<usize> = (0..db.len()).filter(|&i| db[i] > loud - GAP_DB).collect();
    let (first, last) = (*voiced.first()?, *voiced.last()?);
    let (from, to) = (first + (last - first) / 4, last - (last - first) / 4);
    let mut best: Option<(usize, usize)> = None;
    let mut i = from;
    while i < to {
        if db[i] <= loud - GAP_DB {
            let start = i;
            while i < to && db[i] <= loud - GAP_DB {
                i += 1;
            }
            if best.is_none_or(|(s, e)| i - start > e - s) {
                best = Some((start, i));
            }
        }
        i += 1;
    }
    best.filter(|(s, e)| (e - s) * 10 >= GAP_MS)
        .map(|(s, e)| (s * win, e * win))
}

/// `clip` with `pause` put in the middle of its gap; where it went.
pub fn with_pause(clip: &[f32], gap: (usize, usize), pause: &[f32]) -> (Vec<f32>, usize) {
    let at = (gap.0 + gap.1) / 2;
    let mut out = clip[..at].to_vec();
    out.extend_from_slice(pause);
    out.extend_from_slice(&clip[at..]);
    (out, at)
}

/// The input: every clip in order with silence around, and where each clip's speech is.
pub struct Timeline {
    pub samples: Vec<f32>,
    /// Each clip's `[start, end]`, seconds on the input clock.
    pub windows: Vec<(f64, f64)>,
}

impl Timeline {
    pub fn secs(&self) -> f64 {
        self.samples.len() as f64 / f64::from(RATE)
    }
}

/// `lead_s` of silence, the clips each followed by `gap_s` (end of one to start of the next),
/// and `tail_s` more after the last one's gap.
pub fn timeline(clips: &[Vec<f32>], lead_s: f64, gap_s: f64, tail_s: f64) -> Timeline {
    let n = |s: f64| (s * f64::from(RATE)).round() as usize;
    let at = |i: usize| i as f64 / f64::from(RATE);
    let mut samples = vec![0.0; n(lead_s)];
    let mut windows = Vec::with_capacity(clips.len());
    for clip in clips {
        let start = samples.len();
        samples.extend_from_slice(clip);
        windows.push((at(start), at(samples.len())));
        samples.resize(samples.len() + n(gap_s), 0.0);
    }
    samples.resize(samples.len() + n(tail_s), 0.0);
    Timeline { samples, windows }
}

/// Adds white noise of RMS `dbfs` (uniform, from `seed`: the same input every run).
pub fn add_noise(samples: &mut [f32], dbfs: f64, seed: u64) {
    let amplitude = 10f64.powf(dbfs / 20.0) * 3f64.sqrt();
    let mut state = seed;
    for s in samples {
        // splitmix64
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        let unit = (z >> 11) as f64 / (1u64 << 53) as f64;
        *s += ((unit * 2.0 - 1.0) * amplitude) as f32;
    }
}

/// Writes 16 kHz mono samples as a 16-bit WAV.
pub fn write_wav(path: &Path, samples: &[f32]) -> Result<(), String> {
    let mut sink = hearth::audio::wav::WavSink::create(path, RATE).map_err(|e| e.to_string())?;
    sink.write_f32(samples)
        .and_then(|()| sink.finalize())
        .map_err(|e| format!("writing {}: {e}", path.display()))
}

/// A `hearth` binary, the tools it runs with, a scratch directory, and the configuration file
/// it is given (`--config`; None: whatever hearth finds itself).
pub struct Hearth {
    pub exe: PathBuf,
    pub tools: PathBuf,
    pub work: PathBuf,
    pub config: Option<PathBuf>,
}

impl Hearth {
    /// Checks that the binary and the `hearth-stt` beside it exist.
    pub fn check(&self) -> Result<(), String> {
        if !self.exe.is_file() {
            return Err(format!(
                "{} is not built: cargo build --release --workspace --bins",
                self.exe.display()
            ));
        }
        let stt = self.exe.with_file_name("hearth-stt");
        if !stt.is_file() {
            return Err(format!(
                "{} is not built beside hearth: cargo build --release -p hearth-stt (or --workspace)",
                stt.display()
            ));
        }
        std::fs::create_dir_all(&self.work)
            .map_err(|e| format!("creating {}: {e}", self.work.display()))
    }

    /// `--config FILE`, when there is one.
    fn config_args(&self) -> Vec<&std::ffi::OsStr> {
        match &self.config {
            Some(file) => vec!["--config".as_ref(), file.as_os_str()],
            None => Vec::new(),
        }
    }

    /// A fresh demo-home state directory named `tag`.
    pub fn fresh_state(&self, tag: &str) -> Result<PathBuf, String> {
        let state = self.work.join(format!("{tag}-state"));
        let _ = std::fs::remove_dir_all(&state);
        std::fs::create_dir_all(&state)
            .map_err(|e| format!("creating {}: {e}", state.display()))?;
        Ok(state)
    }

    /// `hearth run --input WAV --realtime --once --json` with a fresh demo home: the JSON
    /// turns, each also handed to `on_turn` as it arrives. Killed after `limit`.
    pub fn run_voice(
        &self,
        input: &Path,
        tag: &str,
        limit: Duration,
        on_turn: &mut dyn FnMut(&Value),
    ) -> Result<Vec<Value>, String> {
        let state = self.fresh_state(tag)?;
        let log_path = self.work.join(format!("{tag}-hearth.log"));
        let mut child = self.voice_command(input, tag, &state, &log_path)?;
        let (turns, timed_out) = read_turns(&mut child, Instant::now() + limit, on_turn);
        let status = child
            .wait()
            .map_err(|e| format!("waiting for hearth: {e}"))?;
        self.ended(&log_path, &status, timed_out, turns.is_empty(), limit)?;
        Ok(turns)
    }

    /// [`Hearth::run_voice`] on a live input: `live.heard` written to `hearth run --input -`
    /// in real time, and each answer's span taken from it only when hearth's turn on the
    /// request before asked a question (its reply ends in "?"), from `live.quiet` (the same
    /// input with the answers silent) otherwise.
    pub fn run_voice_live(
        &self,
        live: &Live,
        tag: &str,
        limit: Duration,
        on_turn: &mut dyn FnMut(&Value),
    ) -> Result<LiveRun, String> {
        let read = |path: &Path| -> Result<Vec<i16>, String> {
            let reader = hound::WavReader::open(path)
                .map_err(|e| format!("reading {}: {e}", path.display()))?;
            reader
                .into_samples::<i16>()
                .collect::<Result<_, _>>()
                .map_err(|e| format!("reading {}: {e}", path.display()))
        };
        let (heard, quiet) = (read(&live.heard)?, read(&live.quiet)?);
        if heard.len() != quiet.len() {
            return Err(format!(
                "{} and {} differ in length: speak the set again",
                live.heard.display(),
                live.quiet.display()
            ));
        }
        let state = self.fresh_state(tag)?;
        let log_path = self.work.join(format!("{tag}-hearth.log"));
        let mut child = self.voice_command(Path::new("-"), tag, &state, &log_path)?;
        let stdin = child.stdin.take().ok_or("hearth's stdin was not piped")?;
        // (start of each turn on the input clock, whether it asked)
        let asked: Arc<Mutex<Vec<(f64, bool)>>> = Arc::default();
        let writer = {
            let (asked, answers) = (asked.clone(), live.answers.clone());
            std::thread::spawn(move || write_live(stdin, &heard, &quiet, &answers, &asked))
        };
        let mut noting = |v: &Value| {
            let start = v["start_s"].as_f64().unwrap_or(f64::NAN);
            let reply = v["turn"]["reply"].as_str().unwrap_or_default();
            if let Ok(mut a) = asked.lock() {
                a.push((start, reply.trim_end().ends_with('?')));
            }
            on_turn(v);
        };
        let (turns, timed_out) = read_turns(&mut child, Instant::now() + limit, &mut noting);
        let said = writer
            .join()
            .map_err(|_| "the input writer panicked".to_string())?;
        let status = child
            .wait()
            .map_err(|e| format!("waiting for hearth: {e}"))?;
        self.ended(&log_path, &status, timed_out, turns.is_empty(), limit)?;
        let spans = live.answers.iter().zip(said).filter(|(_, s)| *s);
        Ok(LiveRun {
            turns,
            said: spans.map(|(a, _)| a.span).collect(),
        })
    }

    /// `hearth run --input INPUT` for a voice session in the demo home `state`, its log in
    /// `log_path`, its turns on stdout (and stdin piped, for `--input -`).
    fn voice_command(
        &self,
        input: &Path,
        tag: &str,
        state: &Path,
        log_path: &Path,
    ) -> Result<Child, String> {
        let log = std::fs::File::create(log_path)
            .map_err(|e| format!("creating {}: {e}", log_path.display()))?;
        Command::new(&self.exe)
            .args([
                "run",
                "--wake",
                "none",
                "--realtime",
                "--once",
                "--json",
                "--bus",
                "none",
                "--input",
            ])
            .arg(input)
            .arg("--output")
            .arg(self.work.join(format!("{tag}-reply.wav")))
            .arg("--tools")
            .arg(&self.tools)
            .args(self.config_args())
            .env("HEARTH_DEMO_STATE", state)
            .env("HEARTH_STATE_DIR", state.join("hearth"))
            .env(
                "HEARTH_LOG",
                std::env::var("HEARTH_LOG").unwrap_or_else(|_| "hearth=info".into()),
            )
            .stdin(if input == Path::new("-") {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(log)
            .spawn()
            .map_err(|e| format!("starting {}: {e}", self.exe.display()))
    }

    /// How a voice run ended: a note when it was stopped at `limit`, an error when it failed
    /// having printed no turn.
    fn ended(
        &self,
        log_path: &Path,
        status: &std::process::ExitStatus,
        timed_out: bool,
        no_turns: bool,
        limit: Duration,
    ) -> Result<(), String> {
        if timed_out {
            eprintln!(
                "session: hearth run did not finish within {} s and was stopped: the requests \
                 after its last turn count as missed (its log: {})",
                limit.as_secs(),
                log_path.display()
            );
        } else if !status.success() && no_turns {
            return Err(format!(
                "hearth run failed ({status}) and printed no turn:\n{}",
                tail(log_path, 20)
            ));
        }
        Ok(())
    }

    /// `hearth ask --json TEXT` in the demo home `state`: the agent's `Turn`.
    pub fn ask(&self, text: &str, state: &Path) -> Result<Value, String> {
        let out = Command::new(&self.exe)
            .args(["ask", "--json", "--tools"])
            .arg(&self.tools)
            .args(self.config_args())
            .arg(text)
            .env("HEARTH_DEMO_STATE", state)
            .output()
            .map_err(|e| format!("starting {}: {e}", self.exe.display()))?;
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr);
            return Err(format!(
                "hearth ask {text:?} failed ({}):\n{err}",
                out.status
            ));
        }
        serde_json::from_slice(&out.stdout)
            .map_err(|e| format!("hearth ask {text:?}: not JSON: {e}"))
    }
}

/// The JSON lines of a running `hearth run` until its stdout closes, and whether it had to be
/// killed at `deadline` first. A line that is not JSON is reported and skipped.
fn read_turns(
    child: &mut Child,
    deadline: Instant,
    on_turn: &mut dyn FnMut(&Value),
) -> (Vec<Value>, bool) {
    let (tx, rx) = mpsc::channel();
    if let Some(stdout) = child.stdout.take() {
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
    }
    let mut turns = Vec::new();
    loop {
        match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(line) if line.trim().is_empty() => {}
            Ok(line) => match serde_json::from_str::<Value>(&line) {
                Ok(v) => {
                    on_turn(&v);
                    turns.push(v);
                }
                Err(e) => {
                    eprintln!("session: hearth printed a line that is not JSON ({e}): {line}")
                }
            },
            Err(RecvTimeoutError::Disconnected) => return (turns, false),
            Err(RecvTimeoutError::Timeout) => {
                let _ = child.kill();
                return (turns, true);
            }
        }
    }
}

/// A spoken input whose household answers only what hearth asks
/// ([`Hearth::run_voice_live`]).
pub struct Live {
    /// The input with every answer said (16 kHz mono 16-bit WAV).
    pub heard: PathBuf,
    /// The same with the answers' spans silent (the same noise under both).
    pub quiet: PathBuf,
    /// Each answer, in input order.
    pub answers: Vec<LiveAnswer>,
}

/// What a live run gave: the turns, and the spans of the answers said.
pub struct LiveRun {
    pub turns: Vec<Value>,
    pub said: Vec<(f64, f64)>,
}

/// Where an answer lies on the input clock, and where the request it answers starts.
#[derive(Debug, Clone, Copy)]
pub struct LiveAnswer {
    pub request_start: f64,
    pub span: (f64, f64),
}

/// How long before its clip a turn's speech may start on the input clock (the detector's
/// lead-in), in seconds.
const SPEECH_LEAD_S: f64 = 1.0;

/// Audio written at a time, in samples (20 ms).
const LIVE_CHUNK: usize = 320;

/// Writes `heard` to hearth's stdin in real time as raw 16-bit PCM, each answer's span from
/// `quiet` unless a turn that started on its request asked a question before the answer
/// starts (`asked`, filled as turns arrive); whether each answer was said.
fn write_live(
    mut stdin: std::process::ChildStdin,
    heard: &[i16],
    quiet: &[i16],
    answers: &[LiveAnswer],
    asked: &Mutex<Vec<(f64, bool)>>,
) -> Vec<bool> {
    use std::io::Write;
    let at = |i: usize| i as f64 / f64::from(RATE);
    let mut said: Vec<Option<bool>> = vec![None; answers.len()];
    let t0 = Instant::now();
    for (k, chunk) in (0..heard.len()).step_by(LIVE_CHUNK).enumerate() {
        let due = t0 + Duration::from_secs_f64(at(k * LIVE_CHUNK));
        std::thread::sleep(due.saturating_duration_since(Instant::now()));
        let end = (chunk + LIVE_CHUNK).min(heard.len());
        let answer = answers
            .iter()
            .position(|a| at(chunk) < a.span.1 && a.span.0 < at(end));
        let from = match answer {
            Some(i) => {
                let a = answers[i];
                let ask = *said[i].get_or_insert_with(|| {
                    asked.lock().is_ok_and(|turns| {
                        turns.iter().any(|&(s, q)| {
                            q && s >= a.request_start - SPEECH_LEAD_S && s < a.span.0
                        })
                    })
                });
                if ask {
                    heard
                } else {
                    quiet
                }
            }
            None => heard,
        };
        let bytes: Vec<u8> = from[chunk..end]
            .iter()
            .flat_map(|s| s.to_le_bytes())
            .collect();
        if stdin.write_all(&bytes).is_err() {
            break;
        }
    }
    // stdin dropped here: the end of the input
    said.into_iter().map(|s| s.unwrap_or(false)).collect()
}

/// The last `n` lines of a file.
fn tail(path: &Path, n: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}
