//! Hearing over its own voice: `cargo bench --bench echo -- [OPTIONS]`.
//!
//! hearth's replies (its own Piper voice, the lines of tests/wake/replies.txt, one after
//! another with 0.6 s between) are played and come back to the microphone through a
//! simulated room: 60 ms late (output buffer and air), a reverberant tail of 250 ms falling
//! 60 dB, room noise at −60 dBFS, the echo's active level −26 dBFS (a loudspeaker a metre
//! from the microphone). Every 32 ms frame goes through what `hearth run` runs on a sound
//! card: the echo canceller (`EchoFilter`, its render reference through a `RenderLink` tap as
//! Playback feeds it), the wake-word path (the noise suppressor and `okay_nabu` on each of the
//! canceller's outputs, linear and suppressed, as the Wake stage does) and Listen's endpointer with the Silero
//! VAD (playback `Started`/`Level`/`Stopped` as Playback reports them; barge-in after the
//! default 288 ms, as with `wake = []`). Four scenes:
//!
//! 1. **Self**: the replies alone, about 5 minutes. Wake words detected (self-activation),
//!    utterances and barge-ins Listen reports after the first 20 s (the canceller converging
//!    on the first reply), and the ERLE: the echo's energy over what is left of it in the
//!    linear output and in what Listen hears, after the first 20 s.
//! 2. **Barge-in**: `--limit` (36) utterances "Okay Nabu, stop." and "Okay Nabu, <command>"
//!    (tests/wake/commands.txt) by Piper at three paces and espeak-ng at three rates, said over
//!    the replies every 8 s after the first 20 s, as loud as the echo (0 dB) and 6 dB under
//!    it. Heard: a wake word detected from the utterance's start to 0.5 s after its end, and
//!    Listen's barge-in in the same window (what stops a reply with `wake = []`).
//! 3. Each of those with the echo canceller off (the playback-level gate alone), for contrast.
//! 4. **Idle cost**: 60 s of room noise, then 60 s of music at −40 dBFS (a radio: the VAD
//!    runs on most frames), with nothing playing, µs per 32 ms frame of the canceller, the
//!    wake-word path (suppressor, features, model) and the VAD, and their sum as a share of
//!    one core.
//!
//! Options: `--limit N` (36), `--seed N` (1), `--json FILE`, `--work DIR` (clips kept and
//! reused, default `<target>/tmp/echo-bench`; the wake bench's clips are not shared), `--fresh`;
//! what-ifs: `--wake-input linear|cleaned` (the wake word on one of the canceller's outputs
//! only, instead of both as hearth does), `--listen-input linear` (Listen on the linear output instead of the suppressed
//! one), `--credit DB` (Listen's gate lowered by DB instead of the canceller's credit).
//! Needs `scripts/fetch-models` (voice, Silero, ONNX Runtime), `scripts/fetch-models wake`, and
//! espeak-ng (`scripts/setup`). Prints Markdown tables; figures do not change the exit status.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use hearth::audio::aec::{EchoFilter, RenderLink};
use hearth::audio::listen::{self, Endpointer, ListenConfig};
use hearth::audio::silero::Silero;
use hearth::voice::{Frame, ListenEvent, PlaybackEvent, ReplyId, FRAME_SAMPLES, SAMPLE_RATE};
use hearth::wake::{denoise, Denoiser, Spotter, WakeConfig};
use hearth_testkit::{bench, scenes};
use scenes::mix::{active_level, from_db, rms, set_level, RATE};
use scenes::noise::{self, seed_of, Rng};
use scenes::speak::{self, ClipCache, Speaker, Voice, ESPEAK_WPM, PIPER_NOISE, PIPER_PACES};
use scenes::text;
use serde_json::{json, Value};

const USAGE: &str =
    "usage: cargo bench --bench echo -- [--limit N] [--seed N] [--json FILE] [--work DIR] [--fresh] \
[--wake-input both|linear|cleaned] [--listen-input cleaned|linear] [--credit DB]";

/// The echo's active level at the microphone, dBFS.
const ECHO_DBFS: f64 = -26.0;
/// The room's noise, dBFS.
const ROOM_DBFS: f64 = -60.0;
/// Echo path: the direct sound's delay and the reverberant tail's length.
const ECHO_DELAY_S: f64 = 0.060;
const TAIL_S: f64 = 0.250;
/// Between replies.
const GAP_S: f64 = 0.6;
/// Nothing is counted before this (the canceller converges on the first reply).
const WARM_S: f64 = 20.0;
/// One user utterance every this many seconds after the warm-up.
const EVERY_S: f64 = 8.0;
/// A detection still counts this long after the utterance's end.
const AFTER_S: f64 = 0.5;
/// Length of the self scene, s (the replies cycled).
const SELF_S: f64 = 300.0;
/// Length of the idle scenes, s, and the music's level in the second.
const IDLE_S: f64 = 60.0;
const MUSIC_DBFS: f64 = -40.0;
/// The wake word of the scenes.
const WAKE: &str = "okay_nabu";
const WAKE_PHRASE: &str = "Okay Nabu";
/// hearth's own voice: the Piper voice at its own pace and noise.
const HEARTH: Voice = Voice::Piper {
    length_scale: 1.0,
    noise_scale: 0.667,
};

/// What the wake-word detectors hear with the canceller on.
#[derive(Debug, Clone, Copy, PartialEq)]
enum WakeInput {
    /// Both outputs, each through its own detectors (hearth's Wake stage).
    Both,
    Linear,
    Cleaned,
}

struct Options {
    limit: usize,
    seed: u64,
    json: Option<PathBuf>,
    work: PathBuf,
    fresh: bool,
    /// What the wake word hears with the canceller on.
    wake_input: WakeInput,
    /// Listen's echo credit once converged, dB (hearth's: the canceller's own).
    credit_db: Option<f32>,
    /// Listen hears the canceller's linear output once it has converged (hearth: the
    /// suppressed output).
    listen_linear: bool,
}

fn parse_args(args: &[String]) -> Result<Options, String> {
    let mut o = Options {
        limit: 36,
        seed: 1,
        json: None,
        work: Path::new(env!("CARGO_TARGET_TMPDIR")).join("echo-bench"),
        fresh: false,
        wake_input: WakeInput::Both,
        credit_db: None,
        listen_linear: false,
    };
    let mut f = bench::Flags::new(args);
    while let Some(a) = f.next_flag() {
        match a {
            "--limit" => o.limit = f.number(a)?.max(1.0) as usize,
            "--seed" => o.seed = f.number(a)? as u64,
            "--json" => o.json = Some(f.value(a)?.into()),
            "--work" => o.work = f.value(a)?.into(),
            "--fresh" => o.fresh = true,
            "--wake-input" => {
                o.wake_input = match f.value(a)? {
                    "both" => WakeInput::Both,
                    "linear" => WakeInput::Linear,
                    "cleaned" => WakeInput::Cleaned,
                    other => return Err(format!("--wake-input {other}: both, linear or cleaned")),
                }
            }
            "--credit" => o.credit_db = Some(f.number(a)? as f32),
            "--listen-input" => {
                o.listen_linear = match f.value(a)? {
                    "cleaned" => false,
                    "linear" => true,
                    other => return Err(format!("--listen-input {other}: cleaned or linear")),
                }
            }
            _ => return Err(format!("unknown argument {a:?}")),
        }
    }
    Ok(o)
}

fn main() -> std::process::ExitCode {
    bench::main_of("echo", USAGE, parse_args, run)
}

fn samples(secs: f64) -> usize {
    (secs * f64::from(RATE)).round() as usize
}

fn secs(samples: usize) -> f64 {
    samples as f64 / f64::from(RATE)
}

/// The room between the loudspeaker and the microphone: sparse taps (every 4th sample of the
/// tail) with random signs, decaying 60 dB over [`TAIL_S`], 6 dB under the direct sound.
struct Room {
    taps: Vec<(usize, f32)>,
}

impl Room {
    fn new(seed: u64) -> Room {
        let mut rng = Rng::new(seed);
        let delay = samples(ECHO_DELAY_S);
        let tail = samples(TAIL_S);
        let mut taps = vec![(delay, 1.0f32)];
        for k in (4..=tail).step_by(4) {
            let decay = 10f64.powf(-3.0 * k as f64 / tail as f64);
            taps.push((delay + k, (0.5 * 0.12 * decay * rng.signed()) as f32));
        }
        Room { taps }
    }

    /// What the microphone hears of `played`.
    fn apply(&self, played: &[f32]) -> Vec<f32> {
        let mut out = vec![0f32; played.len()];
        for &(d, g) in &self.taps {
            if d >= played.len() {
                continue;
            }
            for (o, &s) in out[d..].iter_mut().zip(played) {
                *o += g * s;
            }
        }
        out
    }
}

/// hearth's replies one after another until `len` samples, and where each plays.
fn reply_stream(replies: &[Vec<f32>], len: usize) -> (Vec<f32>, Vec<std::ops::Range<usize>>) {
    let mut stream = Vec::with_capacity(len);
    let mut spans = Vec::new();
    let gap = samples(GAP_S);
    for r in replies.iter().cycle() {
        if stream.len() + r.len() > len {
            break;
        }
        spans.push(stream.len()..stream.len() + r.len());
        stream.extend_from_slice(r);
        stream.extend(std::iter::repeat_n(0.0, gap));
    }
    stream.resize(len, 0.0);
    (stream, spans)
}

/// What one pass over a scene found.
#[derive(Default)]
struct Heard {
    /// Wake words: the sample where each was detected.
    wake: Vec<u64>,
    /// Listen's barge-ins and utterances: the sample of the frame that reported each.
    barge_ins: Vec<u64>,
    utterances: Vec<u64>,
    /// Per frame (with the canceller on): energy of the echo alone, of the linear output, of
    /// the cleaned output.
    energy: Vec<(f64, f64, f64)>,
}

/// One frame through the ear: the frame as Listen got it, the wake word that ended in it,
/// Listen's events, and the time of each part (canceller, wake word, VAD), ns.
type FrameHeard = (Frame, Option<u64>, Vec<ListenEvent>, [u64; 3]);

/// The components of one pass, fresh.
struct Ear {
    wake_input: WakeInput,
    credit_db: Option<f32>,
    listen_linear: bool,
    echo: Option<(RenderLink, EchoFilter, hearth::audio::aec::RenderTap)>,
    /// The detectors on the linear output (or the frame, without a canceller) and on the
    /// cleaned output, each with its noise suppressor, and the last wake word's end.
    linear: (Denoiser, Spotter),
    cleaned: (Denoiser, Spotter),
    last_wake: Option<u64>,
    endpointer: Endpointer,
    vad: Silero,
    quiet: u32,
    pcm: Vec<i16>,
}

struct Models {
    /// The bench's `--wake-input` and `--credit`.
    wake_input: WakeInput,
    credit_db: Option<f32>,
    listen_linear: bool,
    wake: WakeConfig,
    listen: ListenConfig,
    silero: PathBuf,
    ort: PathBuf,
}

fn models(opts: &Options) -> Result<Models, String> {
    let dir = hearth::models::model_dir().map_err(|e| e.to_string())?;
    let wake = WakeConfig {
        library: dir.join(hearth::wake::LIBRARY_NAME),
        models: vec![dir.join(format!("{WAKE}.tflite"))],
        cutoff: None,
        denoise: true,
        check_transcript: false,
    };
    wake.check().map_err(|e| e.to_string())?;
    let silero = dir.join("silero_vad.onnx");
    let ort = hearth::onnx::find_library(
        None,
        |k| std::env::var_os(k),
        &hearth::onnx::search_dirs(&silero),
    )
    .map_err(|e| format!("{e} (run scripts/fetch-models)"))?;
    let listen = ListenConfig {
        vad: listen::VadKind::Silero {
            model: silero.clone(),
            ort_library: Some(ort.clone()),
        },
        ..ListenConfig::default()
    };
    Ok(Models {
        wake_input: opts.wake_input,
        credit_db: opts.credit_db,
        listen_linear: opts.listen_linear,
        wake,
        listen,
        silero,
        ort,
    })
}

impl Ear {
    fn new(m: &Models, cancel: bool) -> Result<Ear, String> {
        let echo = cancel.then(|| {
            let link = RenderLink::new();
            let filter = EchoFilter::new(&link);
            let tap = link.connect(SAMPLE_RATE);
            (link, filter, tap)
        });
        let detector = || -> Result<Spotter, String> {
            m.wake
                .load()
                .map_err(|e| e.to_string())?
                .pop()
                .ok_or_else(|| "no wake-word model".to_string())
        };
        Ok(Ear {
            linear: (Denoiser::new(denoise::LEVEL), detector()?),
            cleaned: (Denoiser::new(denoise::LEVEL), detector()?),
            last_wake: None,
            wake_input: m.wake_input,
            credit_db: m.credit_db,
            listen_linear: m.listen_linear,
            echo,
            endpointer: Endpointer::new(m.listen.clone()),
            vad: Silero::load(&m.silero, &m.ort).map_err(|e| e.to_string())?,
            quiet: 0,
            pcm: Vec::with_capacity(FRAME_SAMPLES),
        })
    }

    /// One frame: `played` is what the loudspeaker played over it, `mic` what the microphone
    /// heard. Returns the wake word (if one ended here) and Listen's events; the times of the
    /// three parts, ns.
    fn frame(&mut self, start: u64, played: &[f32], mic: &[f32]) -> Result<FrameHeard, String> {
        let mut frame = Frame {
            samples: Arc::from(mic),
            echo: None,
            start,
            at: Instant::now(),
        };
        let t = Instant::now();
        if let Some((_, filter, tap)) = self.echo.as_mut() {
            tap.push(played);
            frame = filter.frame(frame);
            if self.listen_linear {
                if let Some(e) = &frame.echo {
                    frame.samples = Arc::clone(&e.linear);
                }
            }
            if let (Some(credit), Some(e)) = (self.credit_db, frame.echo.as_mut()) {
                if e.credit_db > 0.0 {
                    e.credit_db = credit;
                }
            }
        }
        let aec_ns = t.elapsed().as_nanos() as u64;
        let t = Instant::now();
        let views: Vec<(&mut (Denoiser, Spotter), &[f32])> = match (&frame.echo, self.wake_input) {
            (None, _) => vec![(&mut self.linear, &frame.samples)],
            (Some(e), WakeInput::Linear) => vec![(&mut self.linear, &e.linear)],
            (Some(_), WakeInput::Cleaned) => vec![(&mut self.cleaned, &frame.samples)],
            (Some(e), WakeInput::Both) => vec![
                (&mut self.linear, &e.linear),
                (&mut self.cleaned, &frame.samples),
            ],
        };
        let mut woke = None;
        for ((denoiser, detector), samples) in views {
            self.pcm.clear();
            denoiser.process(samples, &mut self.pcm);
            if let Some(d) = detector.process(&self.pcm).map_err(|e| e.to_string())? {
                // one wake word per refractory period, whichever view heard it
                let fresh = self
                    .last_wake
                    .is_none_or(|l| d.at_sample >= l + hearth::wake::REFRACTORY_SAMPLES);
                if fresh {
                    self.last_wake = Some(d.at_sample);
                    woke = Some(d.at_sample);
                }
            }
        }
        let wake_ns = t.elapsed().as_nanos() as u64;
        let t = Instant::now();
        let prob = listen::score(
            &self.endpointer,
            &mut self.vad,
            &mut self.quiet,
            &frame.samples,
        )
        .map_err(|e| e.to_string())?;
        let vad_ns = t.elapsed().as_nanos() as u64;
        let events = self.endpointer.push_scored(frame.clone(), Some(prob));
        Ok((frame, woke, events, [aec_ns, wake_ns, vad_ns]))
    }
}

/// One pass over `mic` (what the microphone hears) while `played` plays in `spans`; `echo`
/// is the echo alone (for the ERLE).
fn pass(
    m: &Models,
    cancel: bool,
    played: &[f32],
    spans: &[std::ops::Range<usize>],
    mic: &[f32],
    echo: &[f32],
) -> Result<Heard, String> {
    let mut ear = Ear::new(m, cancel)?;
    let mut heard = Heard::default();
    let level_every = samples(0.05);
    let mut span = 0;
    let mut playing = false;
    let mut last_level = 0;
    for (i, chunk) in mic.chunks_exact(FRAME_SAMPLES).enumerate() {
        let start = i * FRAME_SAMPLES;
        let end = start + FRAME_SAMPLES;
        // Playback's events as it would send them: started, a level every 50 ms, stopped
        while span < spans.len() && spans[span].end <= start {
            span += 1;
        }
        let now_playing = spans.get(span).is_some_and(|s| s.start < end);
        if now_playing != playing {
            let reply = ReplyId::fresh();
            let e = if now_playing {
                PlaybackEvent::Started {
                    reply,
                    at: Instant::now(),
                }
            } else {
                PlaybackEvent::Stopped {
                    reply,
                    at: Instant::now(),
                    interrupted: false,
                }
            };
            ear.endpointer.playback(&e);
            playing = now_playing;
        }
        if playing && start >= last_level + level_every {
            last_level = start;
            let from = start.saturating_sub(level_every);
            ear.endpointer.playback(&PlaybackEvent::Level {
                rms: rms(&played[from..end]) as f32,
            });
        }
        let (frame, woke, events, _) = ear.frame(start as u64, &played[start..end], chunk)?;
        heard.wake.extend(woke);
        for e in events {
            match e {
                ListenEvent::BargeIn { .. } => heard.barge_ins.push(end as u64),
                ListenEvent::Utterance(_) => heard.utterances.push(end as u64),
                _ => {}
            }
        }
        if let Some(e) = &frame.echo {
            let energy = |x: &[f32]| x.iter().map(|&s| f64::from(s).powi(2)).sum::<f64>();
            heard.energy.push((
                energy(&echo[start..end]),
                energy(&e.linear),
                energy(&frame.samples),
            ));
        }
    }
    Ok(heard)
}

/// A user utterance over the replies.
struct Said {
    voice: Voice,
    text: String,
    span: std::ops::Range<usize>,
}

/// What the user says over a reply to stop it (each after the wake word).
const STOPS: [&str; 4] = ["stop.", "stop it.", "be quiet.", "cancel that."];

/// The user's utterances and their voices: every third a stop, the rest commands; the voices
/// in turn Piper (three paces by three noise scales) and espeak-ng (three rates), so no clip
/// comes twice.
fn user_plan(limit: usize) -> Vec<(Voice, String)> {
    let commands = text::lines(text::COMMANDS);
    (0..limit)
        .map(|i| {
            let voice = if i % 2 == 0 {
                Voice::Piper {
                    length_scale: PIPER_PACES[(i / 2) % 3],
                    noise_scale: PIPER_NOISE[(i / 6) % 3],
                }
            } else {
                Voice::Espeak {
                    wpm: ESPEAK_WPM[(i / 2) % 3],
                }
            };
            let words = if i % 3 == 0 {
                format!("{WAKE_PHRASE}, {}", STOPS[(i / 3) % STOPS.len()])
            } else {
                text::wake_utterance(WAKE_PHRASE, commands[(i * 7) % commands.len()])
            };
            (voice, words)
        })
        .collect()
}

fn within(at: &[u64], span: &std::ops::Range<usize>) -> bool {
    let to = (span.end + samples(AFTER_S)) as u64;
    at.iter().any(|&a| a >= span.start as u64 && a <= to)
}

/// Detections outside every user utterance's window, after the warm-up.
fn outside(at: &[u64], said: &[Said]) -> usize {
    at.iter()
        .filter(|&&a| a >= samples(WARM_S) as u64)
        .filter(|&&a| {
            !said
                .iter()
                .any(|s| a >= s.span.start as u64 && a <= (s.span.end + samples(AFTER_S)) as u64)
        })
        .count()
}

/// The ERLE over frames where the echo is active, after the warm-up: (linear, cleaned), dB.
fn erle(energy: &[(f64, f64, f64)]) -> Option<(f64, f64)> {
    let skip = samples(WARM_S) / FRAME_SAMPLES;
    let floor = from_db(-50.0).powi(2) * FRAME_SAMPLES as f64;
    let (mut e, mut l, mut c) = (0.0, 0.0, 0.0);
    for &(echo, linear, clean) in energy.iter().skip(skip) {
        if echo > floor {
            e += echo;
            l += linear;
            c += clean;
        }
    }
    (e > 0.0).then(|| {
        (
            10.0 * (e / l.max(1e-12)).log10(),
            10.0 * (e / c.max(1e-12)).log10(),
        )
    })
}

fn percent(n: usize, of: usize) -> String {
    format!("{:.1} % ({n}/{of})", 100.0 * n as f64 / of.max(1) as f64)
}

fn run(opts: &Options) -> Result<(), String> {
    let started = Instant::now();
    speak::check_espeak()?;
    let m = models(opts)?;
    let mut speaker = Speaker::new(&opts.work)?;
    let mut cache = ClipCache::new(&opts.work.join("clips"), opts.fresh);
    let replies: Vec<Vec<f32>> = text::lines(text::REPLIES)
        .iter()
        .map(|r| cache.get(&mut speaker, HEARTH, r))
        .collect::<Result<_, _>>()?;
    let room = Room::new(seed_of(&[opts.seed, 1]));
    let mut report = serde_json::Map::new();

    // 1. the replies alone
    let (played, spans) = reply_stream(&replies, samples(SELF_S));
    let mut echo = room.apply(&played);
    set_level(&mut echo, ECHO_DBFS);
    let bed = noise::room(played.len(), ROOM_DBFS, seed_of(&[opts.seed, 2]));
    let mic: Vec<f32> = echo.iter().zip(&bed).map(|(e, n)| e + n).collect();
    let mut self_rows = Vec::new();
    let mut self_json = Vec::new();
    for cancel in [true, false] {
        let h = pass(&m, cancel, &played, &spans, &mic, &echo)?;
        let late = |v: &[u64]| v.iter().filter(|&&a| a >= samples(WARM_S) as u64).count();
        let erle = erle(&h.energy);
        eprintln!(
            "echo: self, canceller {}: done",
            if cancel { "on" } else { "off" }
        );
        self_rows.push(format!(
            "| {} | {} | {} | {} | {} | {} |",
            if cancel { "on" } else { "off (gate only)" },
            h.wake.len(),
            late(&h.utterances),
            late(&h.barge_ins),
            erle.map_or("–".into(), |e| format!("{:.1}", e.0)),
            erle.map_or("–".into(), |e| format!("{:.1}", e.1)),
        ));
        self_json.push(json!({
            "echo_cancel": cancel,
            "wake_words": h.wake.len(),
            "utterances_after_warm_up": late(&h.utterances),
            "barge_ins_after_warm_up": late(&h.barge_ins),
            "erle_linear_db": erle.map(|e| e.0),
            "erle_cleaned_db": erle.map(|e| e.1),
        }));
    }
    println!(
        "## Hearing itself\n\n{:.1} minutes of hearth's replies ({} of them, cycled) through the \
         room, echo at {ECHO_DBFS} dBFS active level, room noise at {ROOM_DBFS} dBFS. Wake \
         words: all of them; Listen's utterances and barge-ins after the first {WARM_S} s. ERLE: \
         the echo over what is left of it, frames with echo, after the first {WARM_S} s, in the \
         canceller's linear output (what one set of wake-word detectors hears) and in what Listen \
         hears (the suppressed output once the canceller has converged).\n\n\
         | echo canceller | wake words (self-activations) | utterances | barge-ins | ERLE, linear output, dB | ERLE, what Listen hears, dB |\n\
         |---|---|---|---|---|---|\n{}\n",
        secs(played.len()) / 60.0,
        replies.len(),
        self_rows.join("\n")
    );
    report.insert("self".into(), json!(self_json));

    // 2. the user over the replies
    let plan = user_plan(opts.limit);
    let clips: Vec<Vec<f32>> = plan
        .iter()
        .map(|(v, t)| cache.get(&mut speaker, *v, t))
        .collect::<Result<_, _>>()?;
    let len = samples(WARM_S + EVERY_S * (opts.limit as f64 + 1.0));
    let (played, spans) = reply_stream(&replies, len);
    let mut echo = room.apply(&played);
    set_level(&mut echo, ECHO_DBFS);
    let bed = noise::room(len, ROOM_DBFS, seed_of(&[opts.seed, 3]));
    let mut rows = Vec::new();
    let mut barge_json = Vec::new();
    let silent = vec![0f32; len];
    for user_db in [f64::NAN, 0.0, -6.0] {
        // NaN: the reference, nothing playing (the user at the echo's level, over the room)
        let reference = user_db.is_nan();
        let (played, spans, echo) = if reference {
            (&silent, &[][..], &silent)
        } else {
            (&played, &spans[..], &echo)
        };
        let user_db = if reference { 0.0 } else { user_db };
        let mut mic: Vec<f32> = echo.iter().zip(&bed).map(|(e, n)| e + n).collect();
        let mut said = Vec::new();
        for (i, ((voice, words), clip)) in plan.iter().zip(&clips).enumerate() {
            let at = samples(WARM_S + EVERY_S * i as f64);
            let level = active_level(clip).ok_or("a silent clip")?;
            let gain = from_db(ECHO_DBFS + user_db) / level;
            for (o, &s) in mic[at..].iter_mut().zip(clip) {
                *o += (f64::from(s) * gain) as f32;
            }
            said.push(Said {
                voice: *voice,
                text: words.clone(),
                span: at..at + clip.len(),
            });
        }
        let cancels: &[bool] = if reference { &[false] } else { &[true, false] };
        for &cancel in cancels {
            let h = pass(&m, cancel, played, spans, &mic, echo)?;
            let woke = said.iter().filter(|s| within(&h.wake, &s.span)).count();
            let barged = said
                .iter()
                .filter(|s| within(&h.barge_ins, &s.span))
                .count();
            let missed: Vec<String> = said
                .iter()
                .filter(|s| !within(&h.wake, &s.span))
                .map(|s| format!("{} \"{}\"", s.voice.label(), s.text))
                .collect();
            eprintln!(
                "echo: user at {user_db} dB, canceller {}: wake word missed on {:?}",
                if cancel { "on" } else { "off" },
                missed
            );
            rows.push(format!(
                "| {} | {} | {} | {} | {} | {} |",
                if reference {
                    "nothing playing (reference)".to_string()
                } else if user_db == 0.0 {
                    "as loud as the echo".to_string()
                } else {
                    format!("{} dB under the echo", -user_db)
                },
                match (reference, cancel) {
                    (true, _) => "–",
                    (false, true) => "on",
                    (false, false) => "off (gate only)",
                },
                percent(woke, said.len()),
                outside(&h.wake, &said),
                percent(barged, said.len()),
                outside(&h.barge_ins, &said),
            ));
            barge_json.push(json!({
                "user_db_to_echo": if reference { Value::Null } else { json!(user_db) },
                "echo_cancel": cancel,
                "utterances": said.len(),
                "wake_heard": woke,
                "wake_elsewhere": outside(&h.wake, &said),
                "barge_ins_heard": barged,
                "barge_ins_elsewhere": outside(&h.barge_ins, &said),
                "wake_missed": missed,
            }));
        }
    }
    println!(
        "## Heard over its own voice\n\n{} utterances (\"{WAKE_PHRASE}, stop.\" and \"{WAKE_PHRASE}, \
         <command>\"; Piper at three paces, espeak-ng at three rates) said over hearth's replies, \
         one every {EVERY_S} s after the first {WARM_S} s, at the echo's active level and 6 dB \
         under it. Heard: a wake word, or Listen's barge-in (`wake = []`), from the utterance's \
         start to {AFTER_S} s after its end; elsewhere: the same outside every utterance.\n\n\
         | user | echo canceller | wake word heard | wake words elsewhere | barge-in heard | barge-ins elsewhere |\n\
         |---|---|---|---|---|---|\n{}\n",
        opts.limit,
        rows.join("\n")
    );
    report.insert("barge_in".into(), json!(barge_json));

    // 4. idle cost: a quiet room, and music in it (the VAD then runs on most frames)
    let quiet = noise::room(samples(IDLE_S), ROOM_DBFS, seed_of(&[opts.seed, 4]));
    let radio = noise::music(samples(IDLE_S), MUSIC_DBFS, seed_of(&[opts.seed, 5]));
    let mut cost_json = serde_json::Map::new();
    let mut tables = Vec::new();
    for (label, bed) in [
        (format!("room noise at {ROOM_DBFS} dBFS"), quiet),
        (format!("music at {MUSIC_DBFS} dBFS (a radio)"), radio),
    ] {
        let (table, json) = idle_cost(&m, &bed)?;
        tables.push(format!("{label}:\n\n{table}"));
        cost_json.insert(label, json);
    }
    println!(
        "## Idle cost\n\n{IDLE_S} s with nothing playing, one thread, per 32 ms frame.\n\n{}",
        tables.join("\n")
    );
    report.insert("idle_cost".into(), Value::Object(cost_json));

    println!(
        "clips: {} synthesised, {} from {}; took {:.1} min",
        cache.made,
        cache.found,
        opts.work.join("clips").display(),
        started.elapsed().as_secs_f64() / 60.0
    );
    if let Some(file) = &opts.json {
        bench::write_json(file, &Value::Object(report))?;
    }
    Ok(())
}

/// Each part's time per frame over `bed` with nothing playing: a Markdown table and JSON.
fn idle_cost(m: &Models, bed: &[f32]) -> Result<(String, Value), String> {
    let silence = vec![0f32; FRAME_SAMPLES];
    let mut ear = Ear::new(m, true)?;
    let mut parts: [Vec<u64>; 3] = Default::default();
    for (i, chunk) in bed.chunks_exact(FRAME_SAMPLES).enumerate() {
        let (_, _, _, ns) = ear.frame((i * FRAME_SAMPLES) as u64, &silence, chunk)?;
        for (p, n) in parts.iter_mut().zip(ns) {
            p.push(n);
        }
    }
    let frame_us = 1e6 * FRAME_SAMPLES as f64 / f64::from(SAMPLE_RATE);
    let names = [
        "echo canceller",
        "wake word (suppressor, features, model)",
        "VAD (Silero, skipped under the noise floor)",
    ];
    let mut rows = Vec::new();
    let mut total = 0.0;
    let mut json = serde_json::Map::new();
    for (name, v) in names.iter().zip(&parts) {
        let mut s = v.clone();
        s.sort_unstable();
        let at = |q: f64| s[((s.len() - 1) as f64 * q).round() as usize] as f64 / 1000.0;
        let mean = s.iter().sum::<u64>() as f64 / s.len().max(1) as f64 / 1000.0;
        total += mean;
        rows.push(format!(
            "| {name} | {:.1} | {:.1} | {mean:.1} | {:.2} % |",
            at(0.5),
            at(0.99),
            100.0 * mean / frame_us
        ));
        json.insert(
            name.to_string(),
            json!({"median_us": at(0.5), "p99_us": at(0.99), "mean_us": mean}),
        );
    }
    json.insert("core_percent".into(), json!(100.0 * total / frame_us));
    let table = format!(
        "| part | median µs | p99 µs | mean µs | of one core |\n|---|---|---|---|---|\n{}\n\
         | all three | | | {total:.1} | {:.2} % |\n",
        rows.join("\n"),
        100.0 * total / frame_us
    );
    Ok((table, Value::Object(json)))
}
