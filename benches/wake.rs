//! The wake-word detector on scenes of real audio: `cargo bench --bench wake -- [OPTIONS]`.
//!
//! Every microWakeWord model of pymicro-wakeword 2.5.0 (`okay_nabu`, `alexa`, `hey_jarvis`,
//! `hey_mycroft`; `scripts/fetch-models wake`) through `hearth::wake::MicroWakeWord`, fed
//! 16 kHz 16-bit audio in 10 ms chunks as a microphone would. Three scenes:
//!
//! 1. **Misses.** Per wake word, `--limit` (108) utterances "<wake word>, <home command>"
//!    (tests/wake/commands.txt), half by the Piper voice (paces 0.85/1.0/1.2 × noise scales
//!    0.333/0.667/1.0), half by espeak-ng (210/175/140 words a minute). Each is mixed at SNR 20,
//!    10 and 5 dB into room noise (pink + brown) and into music (chords with a beat), the speech
//!    at -26 dBFS active level after 1.5 s of the noise alone; and once in a quiet room (room
//!    noise 40 dB under the speech) for reference. A fresh detector per mix; a miss is no
//!    detection from the utterance's start to 0.5 s after its end. The quiet-room mixes also go
//!    through every other model (cross-fires).
//! 2. **False activations.** One stream of about 34 minutes with no wake word in it: 16
//!    paragraphs and a dialogue (tests/wake/talk.txt, dialogue.txt) read by Piper and espeak-ng
//!    at several paces and levels, hearth's own replies (tests/wake/replies.txt) in its own
//!    voice, music and room noise, over a -60 dBFS room-noise bed. Each model hears all of it as
//!    one stream; every activation is reported with the words it came in. The same stream again
//!    with each model's cutoff lowered to 0.5–0.8 (a copy of its settings) shows how close the
//!    talk came.
//! 3. **Cost.** The time of each 10 ms `MicroWakeWord::process` call (features and model) over
//!    scene 2's stream, of the features alone (`micro_frontend::Frontend`), and the process's CPU
//!    time as a share of one core; of a model's five passes over the stream, the quickest.
//!
//! `--engine oww` runs the same scenes on openWakeWord 0.4.0's classifiers instead (`alexa`,
//! `hey_jarvis`, `hey_mycroft`; `scripts/fetch-models oww`, CC BY-NC-SA 4.0) through
//! `hearth::wake::OpenWakeWord`, fed the same 10 ms chunks (it scores every 80 ms): "cutoff"
//! is then its score threshold (0.5; lowered to 0.1–0.4 for the near activations, replayed
//! from the one pass's scores: its networks keep no state, so a lower threshold changes only
//! which scores fire), and the features-alone row is left out (its features are networks too).
//!
//! Every mix reaches the detector as `hearth run` gives it: through the noise suppressor in
//! front of the detectors (`hearth::wake::Denoiser`, a fresh one per mix and per pass); `--ns
//! none` leaves it out, `--ns low|moderate|high|very_high` sets its level (hearth's: moderate),
//! and the cost scene times it on its own.
//!
//! Options: `--engine micro|oww` (micro), `--wake NAME[,NAME]` (all of the engine's), `--limit
//! N` (utterances per wake word, 108), `--ns LEVEL` (moderate), `--minutes M` (cut the false-activation stream to about M minutes), `--scenes misses,false`
//! (both; cost comes with `false`), `--seed N` (noise and mixing, 1), `--json FILE`, `--work
//! DIR` (synthesised clips are kept there and reused, so a second run hears the same audio;
//! default `<target>/tmp/wake-bench`), `--fresh` (synthesise every clip again: Piper's
//! variation comes from ONNX Runtime's unseeded random generator, so the figures move a
//! little), `--heard` (the transcript check: each detection of its own wake word in the miss
//! scene, and each activation in the false-activation stream, recognised by `hearth-stt` from
//! 1.5 s before it to the end of what was said, with whisper's prompt as `hearth run` gives it,
//! the wake words and the demo home's words, and kept only when the transcript has the wake
//! word, as the conductor decides: `benches/wake/heard.rs`; needs `cargo build --release -p
//! hearth-stt`), `--heard-plain` (the same with the wake words left out of the prompt).
//!
//! Prints Markdown tables. Figures do not change the exit status; failing to run does (a
//! missing model, espeak-ng or voice, with the fix).

#[path = "wake/heard.rs"]
mod heard;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use hearth::wake::{Detection, Library, MicroWakeWord, OpenWakeWord, REFRACTORY_SAMPLES};
use hearth_testkit::bench::{self, load_average};
use hearth_testkit::scenes;
use scenes::mix::{self, mix_at_snr, to_i16, FRAME, RATE};
use scenes::noise::{self, seed_of, Kind, Rng};
use scenes::speak::{self, ClipCache, Speaker, Voice, ESPEAK_WPM, PIPER_NOISE, PIPER_PACES};
use scenes::text;
use serde_json::{json, Value};

const USAGE: &str =
    "usage: cargo bench --bench wake -- [--engine micro|oww] [--wake NAME[,NAME]] [--limit N] \
[--ns none|low|moderate|high|very_high] [--minutes M] [--scenes misses,false] [--seed N] \
[--heard|--heard-plain] [--json FILE] [--work DIR] [--fresh]";

/// Every microWakeWord model in the pymicro-wakeword 2.5.0 wheel.
const WAKE_WORDS: [&str; 4] = ["okay_nabu", "alexa", "hey_jarvis", "hey_mycroft"];
/// openWakeWord 0.4.0's pre-trained English wake words (CC BY-NC-SA 4.0).
const OWW_WAKE_WORDS: [&str; 3] = ["alexa", "hey_jarvis", "hey_mycroft"];
/// openWakeWord's thresholds for the near activations (its own: 0.5).
const OWW_NEAR_CUTOFFS: [f64; 4] = [0.1, 0.2, 0.3, 0.4];
/// The SNRs of the miss scene, dB.
const SNRS: [f64; 3] = [20.0, 10.0, 5.0];
/// The reference: a quiet room (room noise this far under the speech).
const QUIET_SNR: f64 = 40.0;
/// Speech's active level, dBFS (a person a metre or two from the microphone).
const SPEECH_DBFS: f64 = -26.0;
/// Noise before the utterance (the frontend's noise estimate settles), after it, and how long
/// after its end a detection still counts.
const LEAD_S: f64 = 1.5;
const TAIL_S: f64 = 1.0;
const AFTER_S: f64 = 0.5;
/// What the transcript check hears after an utterance's speech ends (Listen's hangover keeps
/// at least this much).
const SAID_TAIL_S: f64 = 0.3;
/// The cutoffs of the "near activations" in scene 2: how close the talk came to waking a model
/// (their own cutoffs are 0.85 to 0.97).
const NEAR_CUTOFFS: [f64; 4] = [0.5, 0.6, 0.7, 0.8];
/// The paragraph of tests/wake/talk.txt (and the category) of sentences that sound like parts
/// of the wake words.
const NEAR_MISSES: &str = "near misses";
/// Samples per chunk fed to a detector: 10 ms.
const CHUNK: usize = FRAME;

fn secs(samples: usize) -> f64 {
    samples as f64 / f64::from(RATE)
}

fn samples(secs: f64) -> usize {
    (secs * f64::from(RATE)).round() as usize
}

/// Which wake-word engine the scenes run on.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Engine {
    Micro,
    Oww,
}

impl Engine {
    fn wake_words(self) -> &'static [&'static str] {
        match self {
            Engine::Micro => &WAKE_WORDS,
            Engine::Oww => &OWW_WAKE_WORDS,
        }
    }

    fn near_cutoffs(self) -> [f64; 4] {
        match self {
            Engine::Micro => NEAR_CUTOFFS,
            Engine::Oww => OWW_NEAR_CUTOFFS,
        }
    }

    /// 10 ms chunks per inference.
    fn chunks_per_inference(self) -> usize {
        match self {
            Engine::Micro => 3,
            Engine::Oww => hearth::wake::oww::CHUNK_SAMPLES / CHUNK,
        }
    }
}

struct Options {
    engine: Engine,
    wake: Vec<String>,
    limit: usize,
    minutes: Option<f64>,
    misses: bool,
    false_scene: bool,
    seed: u64,
    json: Option<PathBuf>,
    work: PathBuf,
    fresh: bool,
    /// Each detection's transcript checked for the wake word, as the conductor does.
    heard: bool,
    /// ... with whisper's prompt left without the wake words (`hearth run` puts them in).
    heard_plain: bool,
    /// WebRTC noise suppression in front of the detector at this level, as `hearth run`
    /// does (`None`: the detector hears the mix as it is).
    ns: Option<sonora_ns::config::SuppressionLevel>,
}

fn parse_args(args: &[String]) -> Result<Options, String> {
    let mut o = Options {
        engine: Engine::Micro,
        wake: Vec::new(),
        limit: 108,
        minutes: None,
        misses: true,
        false_scene: true,
        seed: 1,
        json: None,
        work: Path::new(env!("CARGO_TARGET_TMPDIR")).join("wake-bench"),
        fresh: false,
        heard: false,
        heard_plain: false,
        ns: Some(hearth::wake::denoise::LEVEL),
    };
    let mut f = bench::Flags::new(args);
    while let Some(a) = f.next_flag() {
        match a {
            "--engine" => {
                o.engine = match f.value(a)? {
                    "micro" => Engine::Micro,
                    "oww" => Engine::Oww,
                    other => return Err(format!("--engine {other}: micro or oww")),
                }
            }
            "--wake" => {
                o.wake = f
                    .value(a)?
                    .split(',')
                    .map(|s| s.trim().to_string())
                    .collect();
            }
            "--limit" => o.limit = f.number(a)?.max(1.0) as usize,
            "--minutes" => o.minutes = Some(f.number(a)?),
            "--scenes" => {
                let v = f.value(a)?;
                o.misses = false;
                o.false_scene = false;
                for s in v.split(',') {
                    match s.trim() {
                        "misses" => o.misses = true,
                        "false" | "cost" => o.false_scene = true,
                        other => return Err(format!("--scenes: unknown scene {other:?}")),
                    }
                }
            }
            "--seed" => o.seed = f.number(a)? as u64,
            "--json" => o.json = Some(f.value(a)?.into()),
            "--work" => o.work = f.value(a)?.into(),
            "--fresh" => o.fresh = true,
            "--heard" => o.heard = true,
            "--heard-plain" => {
                o.heard = true;
                o.heard_plain = true;
            }
            "--ns" => {
                use sonora_ns::config::SuppressionLevel as L;
                o.ns = match f.value(a)? {
                    "none" => None,
                    "low" => Some(L::K6dB),
                    "moderate" => Some(L::K12dB),
                    "high" => Some(L::K18dB),
                    "very_high" => Some(L::K21dB),
                    other => {
                        return Err(format!(
                            "--ns {other}: none, low, moderate (hearth's), high or very_high"
                        ))
                    }
                }
            }
            _ => return Err(format!("unknown argument {a:?}")),
        }
    }
    if o.wake.is_empty() {
        o.wake = o
            .engine
            .wake_words()
            .iter()
            .map(|s| s.to_string())
            .collect();
    }
    Ok(o)
}

fn main() -> ExitCode {
    bench::main_of("wake", USAGE, parse_args, run)
}

/// A loaded model and what it listens for.
struct Model {
    name: String,
    phrase: String,
    detector: Spotter,
}

/// Either engine's detector, as the scenes use them.
enum Spotter {
    Micro(Box<MicroWakeWord>),
    Oww(Box<OpenWakeWord>),
}

impl Spotter {
    fn process(&mut self, chunk: &[i16]) -> Result<Option<Detection>, String> {
        match self {
            Spotter::Micro(d) => d.process(chunk),
            Spotter::Oww(d) => d.process(chunk),
        }
        .map_err(|e| e.to_string())
    }

    fn reset(&mut self) -> Result<(), String> {
        match self {
            Spotter::Micro(d) => d.reset().map_err(|e| e.to_string()),
            Spotter::Oww(d) => {
                d.reset();
                Ok(())
            }
        }
    }

    /// What is compared with the cutoff: microWakeWord's window mean, openWakeWord's score.
    fn level(&self) -> f32 {
        match self {
            Spotter::Micro(d) => d.window_mean().unwrap_or(0.0),
            Spotter::Oww(d) => d.score(),
        }
    }

    /// Scores made since the start (openWakeWord; 0 for microWakeWord).
    fn scored(&self) -> u64 {
        match self {
            Spotter::Micro(_) => 0,
            Spotter::Oww(d) => d.chunks(),
        }
    }

    fn cutoff(&self) -> f32 {
        match self {
            Spotter::Micro(d) => d.settings().micro.probability_cutoff,
            Spotter::Oww(d) => d.settings().threshold,
        }
    }

    fn phrase(&self) -> String {
        match self {
            Spotter::Micro(d) => d.settings().wake_word.clone(),
            Spotter::Oww(d) => d.settings().wake_word.clone(),
        }
    }
}

/// The model directory, TF Lite (microWakeWord only) and the models.
type Loaded = (PathBuf, Option<Arc<Library>>, Vec<Model>);

fn load_models(engine: Engine, names: &[String]) -> Result<Loaded, String> {
    let part = match engine {
        Engine::Micro => "wake",
        Engine::Oww => "oww",
    };
    let fix = format!("run scripts/fetch-models {part}");
    let dir = hearth::models::model_dir().map_err(|e| format!("{e} ({fix})"))?;
    let lib = match engine {
        Engine::Micro => Some(Library::in_dir(&dir).map_err(|e| e.to_string())?),
        Engine::Oww => None,
    };
    let mut models = Vec::new();
    for name in names {
        if !engine.wake_words().contains(&name.as_str()) {
            return Err(format!(
                "--wake {name}: not one of {}",
                engine.wake_words().join(", ")
            ));
        }
        let detector = match &lib {
            Some(lib) => Spotter::Micro(Box::new(
                MicroWakeWord::in_dir(lib, &dir, name).map_err(|e| e.to_string())?,
            )),
            None => Spotter::Oww(Box::new(
                OpenWakeWord::in_dir(&dir.join(hearth::wake::oww::OWW_DIR), name)
                    .map_err(|e| e.to_string())?,
            )),
        };
        models.push(Model {
            name: name.clone(),
            phrase: detector.phrase(),
            detector,
        });
    }
    Ok((dir, lib, models))
}

fn run(opts: &Options) -> Result<(), String> {
    let started = Instant::now();
    let (dir, lib, mut models) = load_models(opts.engine, &opts.wake)?;
    let near_cutoffs = opts.engine.near_cutoffs();
    speak::check_espeak()?;
    hearth::tts::TtsConfig::default_voice()
        .and_then(|c| c.resolve())
        .map_err(|e| format!("{e} (run scripts/setup and scripts/fetch-models)"))?;
    std::fs::create_dir_all(&opts.work)
        .map_err(|e| format!("creating {}: {e}", opts.work.display()))?;
    let load_before = load_average();
    eprintln!(
        "wake: {:?} models {} from {}; TF Lite {}; clips kept in {}",
        opts.engine,
        opts.wake.join(", "),
        dir.display(),
        lib.as_ref()
            .map_or("not used".into(), |l| l.path().display().to_string()),
        opts.work.display()
    );
    let ears = match opts.heard {
        true => {
            let phrases: Vec<String> = match opts.heard_plain {
                true => Vec::new(),
                false => models.iter().map(|m| m.phrase.clone()).collect(),
            };
            let ears = scenes::ears::Ears::start(&phrases, false)?;
            eprintln!(
                "wake: each detection's transcript checked (hearth-stt, {} words of prompt)",
                ears.prompt_words
            );
            Some(ears)
        }
        false => None,
    };
    let mut speaker = Speaker::new(&opts.work)?;
    let mut cache = ClipCache::new(&opts.work.join("clips"), opts.fresh);
    let mut report = serde_json::Map::new();
    report.insert("seed".into(), json!(opts.seed));
    report.insert("speech_dbfs".into(), json!(SPEECH_DBFS));

    if opts.misses {
        let t = Instant::now();
        let trials = miss_scene(opts, &mut models, &mut speaker, &mut cache, ears.as_ref())?;
        println!("{}", miss_tables(&models, &trials, opts.limit));
        if ears.is_some() {
            println!("{}", heard::heard_miss_table(&models, &trials));
        }
        println!("{}", cutoff_table(&models, &trials, &near_cutoffs));
        eprintln!("wake: miss scene took {:.0} s", t.elapsed().as_secs_f64());
        report.insert("misses".into(), misses_json(&models, &trials));
    }
    if opts.false_scene {
        let t = Instant::now();
        let (stream, parts) = false_stream(opts, &mut speaker, &mut cache)?;
        eprintln!(
            "wake: false-activation stream: {:.1} min in {} parts",
            secs(stream.len()) / 60.0,
            parts.len()
        );
        let pcm = heard_by_detector(&stream, opts.ns);
        let denoise = opts.ns.and_then(|level| {
            (0..NEAR_CUTOFFS.len() + 1)
                .map(|_| denoise_cost(&stream, level))
                .min_by(|a, b| a.mean_us.total_cmp(&b.mean_us))
        });
        // each model over the whole stream: at its own cutoff (the figures), then at the eager
        // cutoffs (how close the talk came); every pass does the same work, so the quickest
        // gives the cost (the least disturbed by whatever else the machine runs)
        let mut heard = Vec::new();
        let mut near = Vec::new();
        let mut cost = Vec::new();
        let every = opts.engine.chunks_per_inference();
        for m in &mut models {
            let own = listen(&mut m.detector, &m.name, &pcm)?;
            let mut eager = Vec::new();
            for cutoff in near_cutoffs {
                match &lib {
                    Some(lib) => {
                        let mut copy = Spotter::Micro(Box::new(eager_copy(
                            lib, &dir, &opts.work, &m.name, cutoff,
                        )?));
                        eager.push(listen(
                            &mut copy,
                            &format!("{} at cutoff {cutoff}", m.name),
                            &pcm,
                        )?);
                    }
                    None => eager.push(replay(&own.scores, cutoff as f32, &m.phrase)),
                }
            }
            let quickest = std::iter::once(&own)
                .chain(&eager)
                .filter(|h| !h.chunk_ns.is_empty())
                .min_by(|a, b| a.wall_s.total_cmp(&b.wall_s))
                .map(|h| Cost::of(&h.chunk_ns, h.cpu_s, every));
            cost.extend(quickest);
            heard.push(own);
            near.push(eager);
        }
        let features = match opts.engine {
            Engine::Micro => Some(
                (0..NEAR_CUTOFFS.len() + 1)
                    .map(|_| features_cost(&pcm))
                    .min_by(|a, b| a.mean_us.total_cmp(&b.mean_us))
                    .ok_or("no features pass")?,
            ),
            Engine::Oww => None,
        };
        println!("{}", false_tables(&models, &heard, &parts, pcm.len()));
        if let Some(ears) = &ears {
            let checked = heard::check_activations(ears, &models, &heard, &stream, &parts)?;
            println!(
                "{}",
                heard::heard_false_table(&models, &heard, &checked, &parts, pcm.len())
            );
        }
        drop(stream);
        println!(
            "{}",
            near_table(&models, &heard, &near, &parts, pcm.len(), &near_cutoffs)
        );
        println!(
            "{}",
            cost_table(
                opts.engine,
                &models,
                &cost,
                features.as_ref(),
                denoise.as_ref(),
                pcm.len()
            )
        );
        eprintln!(
            "wake: false-activation and cost scenes took {:.0} s",
            t.elapsed().as_secs_f64()
        );
        report.insert(
            "false_activations".into(),
            false_json(&models, &heard, &parts, pcm.len()),
        );
        let near_json: Vec<Value> = near_cutoffs
            .iter()
            .enumerate()
            .map(|(i, cutoff)| {
                let at: Vec<&Heard> = near.iter().map(|n| &n[i]).collect();
                json!({"cutoff": cutoff, "found": false_json_of(&models, &at, &parts, pcm.len())})
            })
            .collect();
        report.insert("near_activations".into(), json!(near_json));
        report.insert("engine".into(), json!(format!("{:?}", opts.engine)));
        report.insert(
            "cost".into(),
            cost_json(
                &models,
                &cost,
                features.as_ref(),
                denoise.as_ref(),
                pcm.len() / CHUNK,
            ),
        );
    }
    let load = [load_before, load_average()].map(|l| l.unwrap_or_else(|| "?".into()));
    let took = started.elapsed().as_secs_f64();
    println!(
        "clips: {} synthesised, {} from {}; took {:.1} min; load average (1, 5, 15 min) at the \
         start: {}; at the end: {} ({} cores)",
        cache.made,
        cache.found,
        opts.work.join("clips").display(),
        took / 60.0,
        load[0],
        load[1],
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    report.insert("took_s".into(), json!(took));
    report.insert(
        "load_average".into(),
        json!({"start": load[0], "end": load[1]}),
    );
    if let Some(file) = &opts.json {
        bench::write_json(file, &Value::Object(report))?;
    }
    Ok(())
}

/// Every clip of `wanted`, spoken (or taken from the cache) one voice at a time.
fn speak_all(
    speaker: &mut Speaker,
    cache: &mut ClipCache,
    wanted: &[(Voice, String)],
) -> Result<HashMap<(String, String), Vec<f32>>, String> {
    let mut order: Vec<&(Voice, String)> = wanted.iter().collect();
    order.sort_by(|a, b| a.0.label().cmp(&b.0.label()).then(a.1.cmp(&b.1)));
    order.dedup();
    let mut clips = HashMap::new();
    let t = Instant::now();
    for (i, (voice, text)) in order.iter().enumerate() {
        let key = (voice.label(), text.clone());
        if clips.contains_key(&key) {
            continue;
        }
        let clip = cache.get(speaker, *voice, text)?;
        clips.insert(key, clip);
        if (i + 1) % 100 == 0 {
            eprintln!(
                "wake:   {}/{} clips ({:.0} s)",
                i + 1,
                order.len(),
                t.elapsed().as_secs_f64()
            );
        }
    }
    Ok(clips)
}

// ---------------------------------------------------------------------------------------------
// Scene 1: misses

/// The voice of utterance `i`: in every 18, the nine Piper settings once each and espeak-ng's
/// three rates three times each (half and half).
fn miss_voice(i: usize) -> Voice {
    let slot = i % 18;
    if slot.is_multiple_of(2) {
        let k = slot / 2;
        Voice::Piper {
            length_scale: PIPER_PACES[k % 3],
            noise_scale: PIPER_NOISE[k / 3],
        }
    } else {
        Voice::Espeak {
            wpm: ESPEAK_WPM[(slot / 2) % 3],
        }
    }
}

/// How an utterance was heard.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Condition {
    /// Room noise at [`QUIET_SNR`]: the reference (digital silence is no room, and the
    /// frontend's noise estimate behaves differently on it).
    Quiet,
    Noisy(Kind, f64),
}

impl Condition {
    fn snr_label(self) -> String {
        match self {
            Condition::Quiet => format!("{QUIET_SNR} dB (quiet)"),
            Condition::Noisy(_, snr) => format!("{snr} dB"),
        }
    }
}

/// One utterance, mixed one way, through one model.
struct Trial {
    /// The model's index in `models`.
    model: usize,
    /// Whose wake word was said (index in `models`).
    said: usize,
    utterance: usize,
    voice: Voice,
    text: String,
    condition: Condition,
    /// Seconds from the utterance's start to the first detection in its window.
    hit_s: Option<f64>,
    /// The highest window mean in the utterance's window: a detection at any cutoff under it.
    peak: f32,
    /// Detections in the noise before the utterance.
    early: usize,
    clipped: usize,
    /// The transcript check of its detection (`--heard`, own wake word only).
    checked: Option<heard::Checked>,
}

fn miss_scene(
    opts: &Options,
    models: &mut [Model],
    speaker: &mut Speaker,
    cache: &mut ClipCache,
    ears: Option<&scenes::ears::Ears>,
) -> Result<Vec<Trial>, String> {
    let commands = text::lines(text::COMMANDS);
    // (model, utterance) → (voice, text)
    let plan: Vec<Vec<(Voice, String)>> = models
        .iter()
        .enumerate()
        .map(|(w, m)| {
            let offset = WAKE_WORDS.iter().position(|n| *n == m.name).unwrap_or(w);
            (0..opts.limit)
                .map(|i| {
                    let command = commands[(i * 7 + offset * 13) % commands.len()];
                    (miss_voice(i), text::wake_utterance(&m.phrase, command))
                })
                .collect()
        })
        .collect();
    let wanted: Vec<(Voice, String)> = plan.iter().flatten().cloned().collect();
    eprintln!("wake: miss scene: {} utterances", wanted.len());
    let clips = speak_all(speaker, cache, &wanted)?;
    let t = Instant::now();
    let mut trials = Vec::new();
    let mut conditions = vec![Condition::Quiet];
    for kind in [Kind::Room, Kind::Music] {
        conditions.extend(SNRS.iter().map(|&snr| Condition::Noisy(kind, snr)));
    }
    let lead = samples(LEAD_S);
    for (said, utterances) in plan.iter().enumerate() {
        for (i, (voice, words)) in utterances.iter().enumerate() {
            let clip = &clips[&(voice.label(), words.clone())];
            let len = lead + clip.len() + samples(TAIL_S);
            for &condition in &conditions {
                let (kind, snr) = match condition {
                    Condition::Quiet => (Kind::Room, QUIET_SNR),
                    Condition::Noisy(kind, snr) => (kind, snr),
                };
                // the same noise for an utterance at every SNR: only its level changes
                let seed = seed_of(&[opts.seed, said as u64, i as u64, kind as u64]);
                let bed = kind.generate(len, -30.0, seed);
                let mix = mix_at_snr(clip, &bed, lead, SPEECH_DBFS, Some(snr))?;
                let pcm = heard_by_detector(&mix.samples, opts.ns);
                // the quiet mix goes through every model (cross-fires), a noisy one only
                // through its own
                let listeners: Vec<usize> = match condition {
                    Condition::Quiet => (0..models.len()).collect(),
                    Condition::Noisy(..) => vec![said],
                };
                for model in listeners {
                    let window =
                        mix.speech.start as u64..(mix.speech.end + samples(AFTER_S)) as u64;
                    let (found, peak) = detect(&mut models[model].detector, &pcm, &window)?;
                    let hit = found.iter().find(|d| window.contains(&d.at_sample));
                    let checked = match (ears, hit) {
                        (Some(ears), Some(d)) if model == said => Some(heard::check(
                            ears,
                            &mix.samples,
                            d.at_sample as usize,
                            mix.speech.end + samples(SAID_TAIL_S),
                            &models[model].phrase,
                        )?),
                        _ => None,
                    };
                    trials.push(Trial {
                        model,
                        said,
                        utterance: i,
                        voice: *voice,
                        text: words.clone(),
                        condition,
                        hit_s: hit.map(|d| secs((d.at_sample - window.start) as usize)),
                        checked,
                        early: found.iter().filter(|d| d.at_sample < window.start).count(),
                        peak,
                        clipped: mix.clipped(),
                    });
                }
            }
        }
        eprintln!(
            "wake:   {} done ({:.0} s)",
            models[said].name,
            t.elapsed().as_secs_f64()
        );
    }
    Ok(trials)
}

/// What the detector hears of `samples`: through hearth's noise suppressor at `level` (a
/// fresh one, as after a start), 10 ms at a time, the last part short of 10 ms left silent;
/// or as they are, without a level.
fn heard_by_detector(
    samples: &[f32],
    level: Option<sonora_ns::config::SuppressionLevel>,
) -> Vec<i16> {
    let Some(level) = level else {
        return to_i16(samples);
    };
    let mut denoiser = hearth::wake::Denoiser::new(level);
    let mut out = Vec::with_capacity(samples.len());
    for chunk in samples.chunks(CHUNK) {
        denoiser.process(chunk, &mut out);
    }
    out.resize(samples.len(), 0);
    out
}

/// Every detection of a fresh detector over `pcm`, fed in 10 ms chunks, and the highest
/// window mean within `window` (samples).
fn detect(
    detector: &mut Spotter,
    pcm: &[i16],
    window: &std::ops::Range<u64>,
) -> Result<(Vec<Detection>, f32), String> {
    detector.reset()?;
    let mut found = Vec::new();
    let mut peak = 0f32;
    for (i, chunk) in pcm.chunks(CHUNK).enumerate() {
        if let Some(d) = detector.process(chunk)? {
            if window.contains(&d.at_sample) {
                peak = peak.max(d.probability);
            }
            found.push(d);
        }
        let end = ((i + 1) * CHUNK) as u64;
        if window.contains(&end) {
            peak = peak.max(detector.level());
        }
    }
    Ok((found, peak))
}

/// Misses if each model fired at a lower cutoff: from each utterance's highest window mean,
/// on every mix of the miss scene and on the quiet ones; the false-activation stream's rates
/// at the same cutoffs are in the near-activation table.
fn cutoff_table(models: &[Model], trials: &[Trial], near_cutoffs: &[f64]) -> String {
    let mut out = String::from(
        "### Misses at lower cutoffs\n\n\
         The same mixes, a miss being a highest window mean at or under the cutoff (own: the \
         model's; the first detection of a fresh detector sees the same means).\n\n\
         | wake word | mixes |",
    );
    for c in near_cutoffs {
        out.push_str(&format!(" {c} |"));
    }
    out.push_str(" own |\n|---|---|");
    out.push_str(&"---|".repeat(near_cutoffs.len() + 1));
    out.push('\n');
    for (m, model) in models.iter().enumerate() {
        let own_cutoff = model.detector.cutoff();
        for (label, quiet) in [("all noisy", false), ("quiet room", true)] {
            let of: Vec<&Trial> = trials
                .iter()
                .filter(|t| t.model == m && t.said == m)
                .filter(|t| (t.condition == Condition::Quiet) == quiet)
                .collect();
            let mut row = vec![model.phrase.clone(), label.to_string()];
            for cutoff in near_cutoffs.iter().map(|&c| c as f32).chain([own_cutoff]) {
                let missed = of.iter().filter(|t| t.peak <= cutoff).count();
                row.push(rate_cell(missed, of.len()));
            }
            out.push_str(&format!("| {} |\n", row.join(" | ")));
        }
    }
    out
}

/// "12.3 % (80/648)".
fn rate_cell(misses: usize, of: usize) -> String {
    if of == 0 {
        return "–".into();
    }
    format!("{:.1} % ({misses}/{of})", 100.0 * misses as f64 / of as f64)
}

fn miss_tables(models: &[Model], trials: &[Trial], limit: usize) -> String {
    let own = |m: usize| trials.iter().filter(move |t| t.model == m && t.said == m);
    let cell = |m: usize, keep: &dyn Fn(&Trial) -> bool| {
        let of: Vec<&Trial> = own(m).filter(|t| keep(t)).collect();
        rate_cell(of.iter().filter(|t| t.hit_s.is_none()).count(), of.len())
    };
    let noisy = |t: &Trial| matches!(t.condition, Condition::Noisy(..));
    let mut out = format!(
        "## Misses\n\n{limit} utterances per wake word (\"<wake word>, <command>\"), half Piper, \
         half espeak-ng, each mixed at SNR 20/10/5 dB into room noise and into music (6 mixes); \
         a miss is no detection from the utterance's start to 0.5 s after its end. \"all\" \
         counts the noisy mixes; \"quiet\" is the same utterances in a quiet room (room noise \
         40 dB under the speech), not counted in \"all\".\n\n\
         | wake word | all | piper | espeak-ng | fast | normal | slow | 20 dB | 10 dB | 5 dB | \
         room | music | quiet | fired in the lead-in noise | median fire time (quiet) |\n\
         |---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n"
    );
    for (m, model) in models.iter().enumerate() {
        let mut row = vec![model.phrase.clone(), cell(m, &noisy)];
        for name in ["piper", "espeak-ng"] {
            row.push(cell(m, &|t| noisy(t) && t.voice.name() == name));
        }
        for speed in ["fast", "normal", "slow"] {
            row.push(cell(m, &|t| noisy(t) && t.voice.speed() == speed));
        }
        for snr in SNRS {
            row.push(cell(
                m,
                &|t| matches!(t.condition, Condition::Noisy(_, s) if s == snr),
            ));
        }
        for kind in [Kind::Room, Kind::Music] {
            row.push(cell(
                m,
                &|t| matches!(t.condition, Condition::Noisy(k, _) if k == kind),
            ));
        }
        row.push(cell(m, &|t| t.condition == Condition::Quiet));
        row.push(own(m).map(|t| t.early).sum::<usize>().to_string());
        let fire: Vec<f64> = own(m)
            .filter(|t| t.condition == Condition::Quiet)
            .filter_map(|t| t.hit_s)
            .collect();
        row.push(median(fire).map_or("–".into(), |s| format!("{s:.2} s")));
        out.push_str(&format!("| {} |\n", row.join(" | ")));
    }

    out.push_str(
        "\n### Misses by voice, speed and SNR (room and music together)\n\n\
         | wake word | voice | speed | quiet | 20 dB | 10 dB | 5 dB |\n|---|---|---|---|---|---|---|\n",
    );
    for (m, model) in models.iter().enumerate() {
        for name in ["piper", "espeak-ng"] {
            for speed in ["fast", "normal", "slow"] {
                let mut row = vec![model.phrase.clone(), name.to_string(), speed.to_string()];
                row.push(cell(m, &|t| {
                    t.voice.name() == name
                        && t.voice.speed() == speed
                        && t.condition == Condition::Quiet
                }));
                for snr in SNRS {
                    row.push(cell(m, &|t| {
                        t.voice.name() == name
                            && t.voice.speed() == speed
                            && matches!(t.condition, Condition::Noisy(_, s) if s == snr)
                    }));
                }
                out.push_str(&format!("| {} |\n", row.join(" | ")));
            }
        }
    }

    out.push_str("\n### Piper's noise scale (noisy mixes)\n\n| wake word |");
    for n in PIPER_NOISE {
        out.push_str(&format!(" n{n} |"));
    }
    out.push_str("\n|---|---|---|---|\n");
    for (m, model) in models.iter().enumerate() {
        let mut row = vec![model.phrase.clone()];
        for n in PIPER_NOISE {
            row.push(cell(m, &|t| {
                noisy(t) && matches!(t.voice, Voice::Piper { noise_scale, .. } if noise_scale == n)
            }));
        }
        out.push_str(&format!("| {} |\n", row.join(" | ")));
    }

    if models.len() > 1 {
        out.push_str(
            "\n### Cross-fires: utterances of one wake word (quiet room) that another model fired on\n\n\
             | model ↓ / utterances of → |",
        );
        for model in models {
            out.push_str(&format!(" {} |", model.phrase));
        }
        out.push_str(&format!("\n|---|{}\n", "---|".repeat(models.len())));
        for (m, model) in models.iter().enumerate() {
            let mut row = vec![model.name.clone()];
            for said in 0..models.len() {
                let of: Vec<&Trial> = trials
                    .iter()
                    .filter(|t| t.model == m && t.said == said && t.condition == Condition::Quiet)
                    .collect();
                let fired = of
                    .iter()
                    .filter(|t| t.hit_s.is_some() || t.early > 0)
                    .count();
                row.push(if said == m {
                    format!("({} of {} heard)", fired, of.len())
                } else {
                    format!("{fired} of {}", of.len())
                });
            }
            out.push_str(&format!("| {} |\n", row.join(" | ")));
        }
        let crossed: Vec<String> = trials
            .iter()
            .filter(|t| t.model != t.said && (t.hit_s.is_some() || t.early > 0))
            .map(|t| {
                format!(
                    "{} on {:?} ({})",
                    models[t.model].name,
                    t.text,
                    t.voice.label()
                )
            })
            .collect();
        for c in crossed.iter().take(20) {
            out.push_str(&format!("\n- {c}"));
        }
        if crossed.len() > 20 {
            out.push_str(&format!("\n- … and {} more", crossed.len() - 20));
        }
        out.push('\n');
    }
    let clipped: usize = trials.iter().map(|t| t.clipped).sum();
    if clipped > 0 {
        out.push_str(&format!("\n{clipped} samples clipped in the mixes.\n"));
    }
    out
}

fn misses_json(models: &[Model], trials: &[Trial]) -> Value {
    let per_model: Vec<Value> = models
        .iter()
        .enumerate()
        .map(|(m, model)| {
            let own: Vec<&Trial> = trials
                .iter()
                .filter(|t| t.model == m && t.said == m)
                .collect();
            let noisy: Vec<&&Trial> = own
                .iter()
                .filter(|t| matches!(t.condition, Condition::Noisy(..)))
                .collect();
            json!({
                "model": model.name,
                "wake_word": model.phrase,
                "noisy_trials": noisy.len(),
                "noisy_misses": noisy.iter().filter(|t| t.hit_s.is_none()).count(),
                "trials": own.iter().map(|t| json!({
                    "utterance": t.utterance,
                    "text": t.text,
                    "voice": t.voice.label(),
                    "speed": t.voice.speed(),
                    "noise": match t.condition {
                        Condition::Quiet => "room",
                        Condition::Noisy(k, _) => k.label(),
                    },
                    "snr": t.condition.snr_label(),
                    "fired_after_s": t.hit_s,
                    "fired_in_lead_in": t.early,
                })).collect::<Vec<_>>(),
                "cross_fires": trials.iter()
                    .filter(|t| t.model == m && t.said != m && (t.hit_s.is_some() || t.early > 0))
                    .map(|t| json!({"text": t.text, "voice": t.voice.label()}))
                    .collect::<Vec<_>>(),
            })
        })
        .collect();
    json!(per_model)
}

fn median(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

// ---------------------------------------------------------------------------------------------
// Scene 2: false activations

/// A stretch of the false-activation stream: from `start` to the next part's start.
struct Part {
    category: &'static str,
    source: String,
    start: usize,
    /// Sentences: (start sample, words).
    sentences: Vec<(usize, String)>,
}

enum Plan {
    Speech {
        category: &'static str,
        /// (voice, words) in order.
        lines: Vec<(Voice, String)>,
        /// Active level, dBFS.
        level: f64,
    },
    Sound {
        kind: Kind,
        secs: f64,
        dbfs: f64,
        seed: u64,
    },
}

/// The parts in the order they are heard: the categories taken in turn, so a shorter
/// `--minutes` still hears some of each.
fn false_plan(seed: u64) -> Vec<Plan> {
    let levels = [0.0, -4.0, 3.0, -2.0];
    let piper = |pace: f32| Voice::Piper {
        length_scale: pace,
        noise_scale: 0.667,
    };
    let hearth_voice = piper(1.0);
    let talk = text::paragraphs(text::TALK);
    let category = |title: &str| {
        if title == NEAR_MISSES {
            NEAR_MISSES
        } else {
            "talk"
        }
    };
    let piper_talk: Vec<Plan> = talk
        .iter()
        .enumerate()
        .map(|(i, p)| Plan::Speech {
            category: category(&p.title),
            lines: p
                .sentences
                .iter()
                .map(|s| (piper(PIPER_PACES[i % 3]), s.clone()))
                .collect(),
            level: SPEECH_DBFS + levels[i % levels.len()],
        })
        .collect();
    let espeak_talk: Vec<Plan> = talk
        .iter()
        .enumerate()
        .map(|(i, p)| Plan::Speech {
            category: category(&p.title),
            lines: p
                .sentences
                .iter()
                .map(|s| {
                    (
                        Voice::Espeak {
                            wpm: ESPEAK_WPM[(i + 1) % 3],
                        },
                        s.clone(),
                    )
                })
                .collect(),
            level: SPEECH_DBFS + levels[(i + 2) % levels.len()],
        })
        .collect();
    let turns = text::turns(text::DIALOGUE);
    let dialogue: Vec<Plan> = turns
        .chunks(7)
        .map(|c| Plan::Speech {
            category: "dialogue",
            lines: c
                .iter()
                .map(|(who, said)| {
                    let voice = if *who == 'A' {
                        piper(1.0)
                    } else {
                        Voice::Espeak { wpm: 175 }
                    };
                    (voice, said.clone())
                })
                .collect(),
            level: SPEECH_DBFS,
        })
        .collect();
    // hearth's replies: its own voice, from its own speaker, close to the microphone
    let replies: Vec<Plan> = text::lines(text::REPLIES)
        .chunks(10)
        .map(|c| Plan::Speech {
            category: "hearth's replies",
            lines: c.iter().map(|l| (hearth_voice, l.to_string())).collect(),
            level: -20.0,
        })
        .collect();
    let music: Vec<Plan> = (0..7)
        .map(|i| Plan::Sound {
            kind: Kind::Music,
            secs: 60.0,
            dbfs: if i % 2 == 0 { -32.0 } else { -24.0 },
            seed: seed_of(&[seed, 0x3A, i]),
        })
        .collect();
    let room: Vec<Plan> = (0..4)
        .map(|i| Plan::Sound {
            kind: Kind::Room,
            secs: 45.0,
            dbfs: if i % 2 == 0 { -45.0 } else { -35.0 },
            seed: seed_of(&[seed, 0x300, i]),
        })
        .collect();
    let mut queues: Vec<std::vec::IntoIter<Plan>> = vec![
        piper_talk.into_iter(),
        music.into_iter(),
        espeak_talk.into_iter(),
        replies.into_iter(),
        room.into_iter(),
        dialogue.into_iter(),
    ];
    let mut out = Vec::new();
    loop {
        let before = out.len();
        for q in &mut queues {
            out.extend(q.next());
        }
        if out.len() == before {
            return out;
        }
    }
}

/// The false-activation stream (float, 16 kHz) and its parts.
fn false_stream(
    opts: &Options,
    speaker: &mut Speaker,
    cache: &mut ClipCache,
) -> Result<(Vec<f32>, Vec<Part>), String> {
    let mut plan = false_plan(opts.seed);
    if let Some(minutes) = opts.minutes {
        // a rough cut before synthesis (a sentence is about 3 s); exact below
        let mut total = 0.0;
        let keep = plan
            .iter()
            .take_while(|p| {
                let before = total;
                total += match p {
                    Plan::Speech { lines, .. } => lines.len() as f64 * 3.5,
                    Plan::Sound { secs, .. } => *secs,
                } + 1.5;
                before < minutes * 60.0
            })
            .count();
        plan.truncate(keep);
    }
    let wanted: Vec<(Voice, String)> = plan
        .iter()
        .flat_map(|p| match p {
            Plan::Speech { lines, .. } => lines.clone(),
            Plan::Sound { .. } => Vec::new(),
        })
        .collect();
    eprintln!("wake: false-activation scene: {} sentences", wanted.len());
    let clips = speak_all(speaker, cache, &wanted)?;
    let mut stream: Vec<f32> = vec![0.0; samples(1.0)];
    let mut parts = Vec::new();
    let mut rng = Rng::new(seed_of(&[opts.seed, 0xFA15E]));
    for p in &plan {
        if opts.minutes.is_some_and(|m| secs(stream.len()) >= m * 60.0) {
            break;
        }
        let start = stream.len();
        match p {
            Plan::Speech {
                category,
                lines,
                level,
            } => {
                let mut sentences = Vec::new();
                let mut sources: Vec<String> = Vec::new();
                for (voice, words) in lines {
                    let mut clip = clips[&(voice.label(), words.clone())].clone();
                    let active = mix::active_level(&clip)
                        .ok_or_else(|| format!("{} said nothing for {words:?}", voice.label()))?;
                    mix::scale(&mut clip, mix::from_db(*level) / active);
                    sentences.push((stream.len(), words.clone()));
                    stream.extend_from_slice(&clip);
                    stream.resize(stream.len() + samples(0.3 + 0.5 * rng.unit()), 0.0);
                    if !sources.contains(&voice.label()) {
                        sources.push(voice.label());
                    }
                }
                parts.push(Part {
                    category,
                    source: sources.join(" + "),
                    start,
                    sentences,
                });
            }
            Plan::Sound {
                kind,
                secs,
                dbfs,
                seed,
            } => {
                stream.extend(kind.generate(samples(*secs), *dbfs, *seed));
                parts.push(Part {
                    category: match kind {
                        Kind::Music => "music",
                        Kind::Room => "room noise",
                    },
                    source: format!("{} at {dbfs} dBFS", kind.label()),
                    start,
                    sentences: Vec::new(),
                });
            }
        }
        stream.resize(stream.len() + samples(1.5), 0.0);
    }
    // the room under everything: no digital silence anywhere, as from a real microphone
    let bed = noise::room(stream.len(), -60.0, seed_of(&[opts.seed, 0xBED]));
    mix::add_at(&mut stream, 0, &bed);
    Ok((stream, parts))
}

/// The model `name` from `dir` with its settings' `probability_cutoff` set to `cutoff`: a copy
/// of both files in `<work>/cutoff-<cutoff>/`, loaded as any model is (the same detector, more
/// eager).
fn eager_copy(
    lib: &Arc<Library>,
    dir: &Path,
    work: &Path,
    name: &str,
    cutoff: f64,
) -> Result<MicroWakeWord, String> {
    let into = work.join(format!("cutoff-{cutoff}"));
    std::fs::create_dir_all(&into).map_err(|e| format!("creating {}: {e}", into.display()))?;
    let model = dir.join(format!("{name}.tflite"));
    let copy = into.join(format!("{name}.tflite"));
    std::fs::copy(&model, &copy)
        .map_err(|e| format!("copying {} to {}: {e}", model.display(), copy.display()))?;
    let json = dir.join(format!("{name}.json"));
    let text = std::fs::read_to_string(&json).map_err(|e| {
        format!(
            "reading {}: {e} (run scripts/fetch-models wake)",
            json.display()
        )
    })?;
    let mut settings: Value = serde_json::from_str(&text)
        .map_err(|e| format!("{}: {e} (run scripts/fetch-models wake)", json.display()))?;
    let Some(micro) = settings.get_mut("micro").and_then(Value::as_object_mut) else {
        return Err(format!("{} has no micro section", json.display()));
    };
    micro.insert("probability_cutoff".into(), json!(cutoff));
    let out = into.join(format!("{name}.json"));
    std::fs::write(&out, settings.to_string())
        .map_err(|e| format!("writing {}: {e}", out.display()))?;
    MicroWakeWord::load(lib, &copy).map_err(|e| e.to_string())
}

/// What one model heard over the stream, and what each chunk cost.
struct Heard {
    detections: Vec<Detection>,
    /// openWakeWord's score per 80 ms, in order (empty for microWakeWord).
    scores: Vec<f32>,
    /// ns per 10 ms chunk.
    chunk_ns: Vec<u64>,
    /// Process CPU time over the run, s.
    cpu_s: f64,
    wall_s: f64,
}

fn listen(detector: &mut Spotter, name: &str, pcm: &[i16]) -> Result<Heard, String> {
    detector.reset()?;
    let mut detections = Vec::new();
    let mut scores = Vec::new();
    let mut chunk_ns = Vec::with_capacity(pcm.len() / CHUNK + 1);
    let cpu = cpu_time();
    let wall = Instant::now();
    for chunk in pcm.chunks(CHUNK) {
        let before = detector.scored();
        let t = Instant::now();
        let found = detector.process(chunk)?;
        chunk_ns.push(t.elapsed().as_nanos() as u64);
        detections.extend(found);
        if detector.scored() > before {
            scores.push(detector.level());
        }
    }
    let heard = Heard {
        detections,
        scores,
        chunk_ns,
        cpu_s: cpu_time() - cpu,
        wall_s: wall.elapsed().as_secs_f64(),
    };
    eprintln!(
        "wake:   {name}: {} activations over {:.1} min ({:.1} s)",
        heard.detections.len(),
        secs(pcm.len()) / 60.0,
        heard.wall_s
    );
    Ok(heard)
}

/// openWakeWord's detections at `threshold` from one pass's scores (as
/// `OpenWakeWord::process` makes them: a score over the threshold, then the refractory
/// period), with no cost measured.
fn replay(scores: &[f32], threshold: f32, phrase: &str) -> Heard {
    let step = hearth::wake::oww::CHUNK_SAMPLES as u64;
    let mut detections = Vec::new();
    let mut quiet_until = None;
    for (k, &score) in scores.iter().enumerate() {
        let at_sample = (k as u64 + 1) * step;
        if let Some(until) = quiet_until {
            if at_sample < until {
                continue;
            }
            quiet_until = None;
        }
        if score > threshold {
            quiet_until = Some(at_sample + REFRACTORY_SAMPLES);
            detections.push(Detection {
                wake_word: phrase.to_string(),
                probability: score,
                at_sample,
            });
        }
    }
    Heard {
        detections,
        scores: Vec::new(),
        chunk_ns: Vec::new(),
        cpu_s: f64::NAN,
        wall_s: f64::INFINITY,
    }
}

/// This process's CPU time (every thread), s.
fn cpu_time() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec for the duration of the call.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return f64::NAN;
    }
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// Where a detection at `at` happened: the part, and the sentence that started last before it.
fn locate(parts: &[Part], at: u64) -> Option<(&Part, Option<&str>)> {
    let at = at as usize;
    let i = parts.partition_point(|p| p.start <= at).checked_sub(1)?;
    let part = &parts[i];
    let j = part.sentences.partition_point(|(s, _)| *s <= at);
    let sentence = j.checked_sub(1).map(|j| part.sentences[j].1.as_str());
    Some((part, sentence))
}

/// Seconds of the stream in each category.
fn category_secs(parts: &[Part], total: usize) -> BTreeMap<&'static str, f64> {
    let mut out = BTreeMap::new();
    for (i, p) in parts.iter().enumerate() {
        let end = parts.get(i + 1).map_or(total, |n| n.start);
        *out.entry(p.category).or_insert(0.0) += secs(end - p.start);
    }
    out
}

fn clock(samples: u64) -> String {
    let s = samples as f64 / f64::from(RATE);
    format!("{}:{:04.1}", (s / 60.0) as u64, s % 60.0)
}

fn false_tables(models: &[Model], heard: &[Heard], parts: &[Part], total: usize) -> String {
    let hours = secs(total) / 3600.0;
    let cats = category_secs(parts, total);
    let near_s = cats.get(NEAR_MISSES).copied().unwrap_or(0.0);
    let mut out = format!(
        "## False activations\n\n{:.1} minutes with no wake word, one stream per model in 10 ms \
         chunks. \"{NEAR_MISSES}\" are sentences written to sound like parts of the wake words \
         (tests/wake/talk.txt); the last rate leaves them out. Counts per category below.\n\n\
         | wake word | activations | per hour | per hour without {NEAR_MISSES} |",
        secs(total) / 60.0
    );
    for (c, s) in &cats {
        out.push_str(&format!(" {c} ({:.1} min) |", s / 60.0));
    }
    out.push_str(&format!(
        "\n|---|---|---|---|{}\n",
        "---|".repeat(cats.len())
    ));
    for (m, h) in models.iter().zip(heard) {
        let near = h
            .detections
            .iter()
            .filter(|d| locate(parts, d.at_sample).is_some_and(|(p, _)| p.category == NEAR_MISSES))
            .count();
        let mut row = vec![
            m.phrase.clone(),
            h.detections.len().to_string(),
            format!("{:.2}", h.detections.len() as f64 / hours),
            format!(
                "{:.2}",
                (h.detections.len() - near) as f64 / ((secs(total) - near_s) / 3600.0)
            ),
        ];
        for c in cats.keys() {
            let n = h
                .detections
                .iter()
                .filter(|d| locate(parts, d.at_sample).is_some_and(|(p, _)| p.category == *c))
                .count();
            row.push(n.to_string());
        }
        out.push_str(&format!("| {} |\n", row.join(" | ")));
    }
    let any = heard.iter().any(|h| !h.detections.is_empty());
    if any {
        out.push_str(
            "\n### Where\n\n| wake word | at | p | category | voice | words |\n|---|---|---|---|---|---|\n",
        );
        for (m, h) in models.iter().zip(heard) {
            for d in &h.detections {
                let (cat, source, words) = match locate(parts, d.at_sample) {
                    Some((p, s)) => (p.category, p.source.clone(), s.unwrap_or("–").to_string()),
                    None => ("lead-in", "–".into(), "–".into()),
                };
                out.push_str(&format!(
                    "| {} | {} | {:.3} | {cat} | {source} | {words} |\n",
                    m.phrase,
                    clock(d.at_sample),
                    d.probability
                ));
            }
        }
    }
    out
}

fn near_table(
    models: &[Model],
    heard: &[Heard],
    near: &[Vec<Heard>],
    parts: &[Part],
    total: usize,
    near_cutoffs: &[f64],
) -> String {
    let hours = secs(total) / 3600.0;
    let mut out = String::from(
        "### Near activations: the same stream with each model's cutoff lowered\n\n\
         How close the talk came to waking a model: activations per hour (count) if the model \
         fired at a lower window mean than its own cutoff; then where it fires at the lowest.\n\n\
         | wake word |",
    );
    for c in near_cutoffs {
        out.push_str(&format!(" {c} |"));
    }
    out.push_str(" own cutoff | where, at the lowest |\n|---|");
    out.push_str(&"---|".repeat(near_cutoffs.len() + 2));
    out.push('\n');
    for ((m, own), eager) in models.iter().zip(heard).zip(near) {
        let rate = |h: &Heard| {
            format!(
                "{:.1} ({})",
                h.detections.len() as f64 / hours,
                h.detections.len()
            )
        };
        let mut row = vec![m.phrase.clone()];
        row.extend(eager.iter().map(rate));
        row.push(format!("{}: {}", m.detector.cutoff(), rate(own)));
        let places: Vec<String> = eager
            .first()
            .map(|h| {
                h.detections
                    .iter()
                    .map(|d| match locate(parts, d.at_sample) {
                        Some((p, s)) => {
                            format!("{} ({}): \"{}\"", p.category, p.source, s.unwrap_or("–"))
                        }
                        None => "the lead-in".to_string(),
                    })
                    .collect()
            })
            .unwrap_or_default();
        row.push(if places.is_empty() {
            "–".into()
        } else {
            places.join("; ")
        });
        out.push_str(&format!("| {} |\n", row.join(" | ")));
    }
    out
}

fn false_json(models: &[Model], heard: &[Heard], parts: &[Part], total: usize) -> Value {
    let refs: Vec<&Heard> = heard.iter().collect();
    false_json_of(models, &refs, parts, total)
}

fn false_json_of(models: &[Model], heard: &[&Heard], parts: &[Part], total: usize) -> Value {
    let hours = secs(total) / 3600.0;
    json!({
        "minutes": secs(total) / 60.0,
        "category_minutes": category_secs(parts, total)
            .into_iter()
            .map(|(c, s)| (c.to_string(), json!(s / 60.0)))
            .collect::<serde_json::Map<_, _>>(),
        "models": models.iter().zip(heard).map(|(m, h)| json!({
            "model": m.name,
            "wake_word": m.phrase,
            "activations": h.detections.len(),
            "per_hour": h.detections.len() as f64 / hours,
            "where": h.detections.iter().map(|d| {
                let found = locate(parts, d.at_sample);
                json!({
                    "at_s": secs(d.at_sample as usize),
                    "probability": d.probability,
                    "category": found.map(|(p, _)| p.category),
                    "voice": found.map(|(p, _)| p.source.clone()),
                    "words": found.and_then(|(_, s)| s),
                })
            }).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    })
}

// ---------------------------------------------------------------------------------------------
// Scene 3: cost

/// What 10 ms chunks cost over one pass, µs.
struct Cost {
    median: f64,
    p99: f64,
    mean_us: f64,
    /// The chunks that ran the model (the slowest of every `every`: one inference every three
    /// chunks for microWakeWord, every eight for openWakeWord).
    inference_median: f64,
    inference_p99: f64,
    /// The process's CPU time over the pass, s (NaN when not measured).
    cpu_s: f64,
    chunks: usize,
}

impl Cost {
    fn of(ns: &[u64], cpu_s: f64, every: usize) -> Cost {
        let mut v = ns.to_vec();
        v.sort_unstable();
        let at = |v: &[u64], q: f64| {
            v.get(((v.len().max(1) - 1) as f64 * q).round() as usize)
                .map_or(f64::NAN, |&n| n as f64 / 1000.0)
        };
        let top = &v[v.len() - v.len() / every.max(1)..];
        Cost {
            median: at(&v, 0.5),
            p99: at(&v, 0.99),
            mean_us: v.iter().sum::<u64>() as f64 / v.len().max(1) as f64 / 1000.0,
            inference_median: at(top, 0.5),
            inference_p99: at(top, 0.99),
            cpu_s,
            chunks: v.len(),
        }
    }

    /// The mean chunk's time as a share of the 10 ms it covers, %.
    fn core_percent(&self) -> f64 {
        100.0 * self.mean_us / (1e6 * CHUNK as f64 / f64::from(RATE))
    }

    /// CPU time over the audio's length, %.
    fn cpu_percent(&self) -> f64 {
        100.0 * self.cpu_s / secs(self.chunks * CHUNK)
    }
}

/// Noise suppression alone over `samples`, in 10 ms chunks.
fn denoise_cost(samples: &[f32], level: sonora_ns::config::SuppressionLevel) -> Cost {
    let mut denoiser = hearth::wake::Denoiser::new(level);
    let mut out = Vec::with_capacity(CHUNK);
    let mut ns = Vec::with_capacity(samples.len() / CHUNK + 1);
    let cpu = cpu_time();
    for chunk in samples.chunks(CHUNK) {
        out.clear();
        let t = Instant::now();
        denoiser.process(std::hint::black_box(chunk), &mut out);
        std::hint::black_box(&out);
        ns.push(t.elapsed().as_nanos() as u64);
    }
    Cost::of(&ns, cpu_time() - cpu, 1)
}

/// The features alone over `pcm`, in 10 ms chunks.
fn features_cost(pcm: &[i16]) -> Cost {
    let mut frontend = micro_frontend::Frontend::new();
    let mut ns = Vec::with_capacity(pcm.len() / CHUNK + 1);
    let cpu = cpu_time();
    for chunk in pcm.chunks(CHUNK) {
        let t = Instant::now();
        std::hint::black_box(frontend.process(std::hint::black_box(chunk)));
        ns.push(t.elapsed().as_nanos() as u64);
    }
    Cost::of(&ns, cpu_time() - cpu, 3)
}

fn cost_table(
    engine: Engine,
    models: &[Model],
    cost: &[Cost],
    features: Option<&Cost>,
    denoise: Option<&Cost>,
    total: usize,
) -> String {
    let how = match engine {
        Engine::Micro => format!(
            "a model runs every third chunk (those chunks: the slowest third). Of the {} passes \
             per model (own and eager cutoffs: the same work), the quickest",
            NEAR_CUTOFFS.len() + 1
        ),
        Engine::Oww => "openWakeWord runs its three networks every eighth chunk (those chunks: \
             the slowest eighth); one pass per model (the lower thresholds are replayed from its \
             scores)"
            .to_string(),
    };
    let mut out = format!(
        "## Cost\n\nPer 10 ms chunk over the {:.1}-minute stream, one thread; {how}. % of one \
         core: the mean chunk over 10 ms; CPU: the process's CPU time over the audio's length.\n\n\
         | | median µs | p99 µs | mean µs | chunks with inference: median µs | p99 µs | % of one core | CPU % |\n\
         |---|---|---|---|---|---|---|---|\n",
        secs(total) / 60.0
    );
    let row = |name: &str, c: &Cost, inference: bool| {
        let dash = |v: f64| {
            if inference {
                format!("{v:.1}")
            } else {
                "–".into()
            }
        };
        format!(
            "| {name} | {:.1} | {:.1} | {:.1} | {} | {} | {:.2} | {:.2} |\n",
            c.median,
            c.p99,
            c.mean_us,
            dash(c.inference_median),
            dash(c.inference_p99),
            c.core_percent(),
            c.cpu_percent()
        )
    };
    if let Some(d) = denoise {
        out.push_str(&row("noise suppression (before the detector)", d, false));
    }
    if let Some(f) = features {
        out.push_str(&row("features alone", f, false));
    }
    for (m, c) in models.iter().zip(cost) {
        out.push_str(&row(&format!("{} (features + model)", m.name), c, true));
    }
    out
}

fn cost_json(
    models: &[Model],
    cost: &[Cost],
    features: Option<&Cost>,
    denoise: Option<&Cost>,
    chunks: usize,
) -> Value {
    let one = |c: &Cost| {
        json!({
            "median_us": c.median,
            "p99_us": c.p99,
            "mean_us": c.mean_us,
            "inference_chunk_median_us": c.inference_median,
            "inference_chunk_p99_us": c.inference_p99,
            "core_percent": c.core_percent(),
            "cpu_percent": c.cpu_percent(),
        })
    };
    json!({
        "chunks": chunks,
        "features": features.map(one),
        "noise_suppression": denoise.map(one),
        "models": models.iter().zip(cost).map(|(m, c)| {
            let mut v = one(c);
            v["model"] = json!(m.name);
            v
        }).collect::<Vec<_>>(),
    })
}
