//! A continuous session of home commands through hearth, scored:
//! `cargo bench --bench session -- [MODE] [OPTIONS]`.
//!
//! The set (`tests/session/demo.jsonl`, described in `tests/session/README.md`) is an
//! evening's requests in order: commands, paraphrases, two commands in one sentence,
//! follow-ups, questions, and chat that must call nothing. Modes:
//!
//! - `spoken` (default): every request spoken by the Piper voice (paces 0.85/1.0/1.2 in
//!   turn), `--gap` seconds apart (end of one to start of the next), over -50 dBFS of seeded
//!   white noise, in ONE input WAV, through ONE `hearth run --input WAV --realtime --once
//!   --json` (one conversation, as a daemon hears it). Turns are matched to requests by
//!   where their utterance is on the input clock (`start_s`/`end_s`).
//! - `alone`: each request that is not a follow-up spoken alone, a fresh `hearth run` each.
//! - `typed`: each request that is not a follow-up through a fresh `hearth ask --json`.
//! - `typed-session`: every request typed into one agent session, in this process (the
//!   library's text runtime, as `hearth ask` starts it, and `agent::ask` with one session).
//!   When hearth asks back before running a request's calls ("Shall I turn on the kitchen
//!   light?", "Which room: …?"), the session says the case's `answer` ("Yes." when it has
//!   none) and the calls after it count for the request ("asked, then right" / "asked,
//!   wrong"; a request that wanted calls and got neither a call nor a question is
//!   "refused"). In `spoken`, a case's `answer` is said 7 s after the request when hearth's turn
//!   on it asked a question (the input is written to `hearth run --input -` as it plays; an
//!   input spoken before this waited keeps every answer); its turn counts for the request's
//!   calls.
//!
//! Options: `--set NAME|FILE` (demo), `--gap S` (4), `--pause MS` (0: in `spoken`, that much
//! silence stretched into each request's longest gap between words, a person stopping to
//! think; a request heard as more than one turn counts as split), `--limit N` (the first N requests the
//! mode runs), `--json FILE` (the results), `--hearth PATH` (another `hearth` build, with
//! `hearth-stt` beside it; default: this checkout's), `--tools DIR` (the manifests it runs
//! with; default: this checkout's `tools`), `--seed N` (the noise), `--work DIR` (the input
//! WAV and its request windows, replies, logs; default a temp dir), `--replay DIR` (`spoken`:
//! play the input another run left in its `--work DIR` again, not a new synthesis: Piper's
//! voice differs per synthesis, so two builds compared on two inputs differ by that too),
//! `--listen KEY=MS` (repeatable: a `[listen]` setting of the config file, e.g.
//! `early_ms=128`, or `end_of_turn=smart-turn-house`, to weigh an endpointing choice on the
//! same input).
//!
//! How a household without hand-written sentences fares:
//! - `--tools-as declared|bare` (declared): `bare` runs on a copy of `--tools` (in the work
//!   dir, `tools-bare`) whose manifests have every `[[tool.intent]]` table and every `say`
//!   removed, so hearth has only the intents it derives from each tool's name, schema and
//!   description, and confirms each call from the tool's shape;
//! - `--no-intents`: `[agent] intents = false` (a config file in the work dir, given to
//!   `hearth run`/`hearth ask` with `--config`; `typed-session`: `TextOptions::intents`);
//!
//! A house hearth was not written for:
//! - `--homeassistant`: a real Home Assistant with the test house (hearth-testkit's
//!   `homeassistant`), started for the run; hearth gets its URL and token in `[homeassistant]`
//!   (the config file) and no manifest (`--tools` defaults to an empty directory). After the
//!   run the unexposed light's state says whether anything touched it. With `--set house`.
//!
//! Who speaks, and where (`spoken` and `alone`; hearth-testkit's `scenes/voices.rs` and `room.rs`):
//! - `--voice NAME` (piper): one of the scenes' speakers, each at three paces in turn:
//!   `piper` (Piper's en_US-joe-medium, a man, ×0.85/1.0/1.2), `piper-low` (the same a minor
//!   third down with sox `pitch -300`, noise scale 1.0, ×0.95/1.1/1.3), `piper-high` (sox
//!   `pitch 400`, noise scale 0.333, ×0.8/0.9/1.05), `espeak` (espeak-ng `en-us+f3`, a
//!   woman, 210/175/140 wpm), `espeak-gb-m` (`en-gb+m3`, a British man),
//!   `espeak-caribbean-f` (`en-029+f2`, a Caribbean woman), `flite-us-f` (flite's `slt`, a
//!   US woman), `flite-scottish-m` (flite's `awb`, a Scottish man; flite ×0.85/1.0/1.2);
//! - `--snr DB`: the speech at -26 dBFS active level over seeded room noise (brown noise with
//!   pink 3 dB under it) DB below that, instead of over the -50 dBFS white floor;
//! - `--reverb`: each request through sox `pad 0 0.5 reverb 50 50 50 100 10` (a living room,
//!   the dry sound kept) before the mixing, at the level it had.
//!
//! A voice or a program that is missing (espeak-ng, flite, sox) fails the run with the
//! install command before anything is spoken.
//!
//! Besides right and wrong, each run counts fabricated readings (reply sentences stating a
//! state, a number with a unit, a time or a date no call of the turn read or set), unasked
//! calls (calls that ran that the request did not ask for: a wrong argument, an extra call)
//! and echoed requests (a reply that is the request said back).
//!
//! Prints a table per request (said, heard, calls that ran, reply, verdict) and a summary
//! row in Markdown. Scores do not change the exit status; only failing to run does (a
//! missing build or model, with the fix). Needs `scripts/fetch-models` and
//! `cargo build --release --workspace --bins` (`hearth-stt`).

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use bench::load_average;
use hearth_testkit::{bench, scenes, session};
use scenes::room::{self, Room};
use scenes::talk::{self, Talker};
use scenes::voices::{self, Cast};
use serde_json::Value;
use session::report::{
    case_table, details, path_table, stage_table, summarise, summary_header, summary_row,
};
use session::run::{add_noise, timeline, write_wav, Hearth, NOISE_DBFS};
use session::score::{score, score_all, Observed, Scored};
use session::set::{Case, Kind};

const USAGE: &str = "usage: cargo bench --bench session -- [spoken|alone|typed|typed-session] \
[--set NAME|FILE] [--gap S] [--pause MS] [--limit N] [--json FILE] [--hearth PATH] [--tools DIR] [--seed N] \
[--work DIR] [--replay DIR] [--tools-as declared|bare] [--no-intents] [--homeassistant] [--voice NAME] \
[--snr DB] [--reverb] [--listen KEY=MS|end_of_turn=WHAT]";

/// Silence before the first request and after the last gap, seconds.
const LEAD_S: f64 = 1.0;
const TAIL_S: f64 = 2.0;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Mode {
    Spoken,
    Alone,
    Typed,
    TypedSession,
}

impl Mode {
    fn label(self) -> &'static str {
        match self {
            Mode::Spoken => "spoken",
            Mode::Alone => "alone",
            Mode::Typed => "typed",
            Mode::TypedSession => "typed-session",
        }
    }

    /// Whether each request runs on its own (follow-ups then have nothing to follow).
    fn one_by_one(self) -> bool {
        matches!(self, Mode::Alone | Mode::Typed)
    }
}

/// The tools' manifests as written, or without their sentences.
#[derive(Debug, Clone, Copy, PartialEq)]
enum ToolsAs {
    Declared,
    Bare,
}

impl ToolsAs {
    fn label(self) -> &'static str {
        match self {
            ToolsAs::Declared => "declared",
            ToolsAs::Bare => "bare",
        }
    }
}

struct Options {
    mode: Mode,
    tools_as: ToolsAs,
    /// `[agent] intents` for the run.
    intents: bool,
    /// Who speaks the requests (voice modes).
    voice: &'static Cast,
    /// Where they are heard (voice modes).
    room: Room,
    set: String,
    gap_s: f64,
    /// ms of silence stretched into each request's longest gap between words (0: none)
    pause_ms: usize,
    limit: Option<usize>,
    json: Option<PathBuf>,
    hearth: PathBuf,
    tools: PathBuf,
    seed: u64,
    work: PathBuf,
    /// `spoken`: the input WAV and its windows another run left in this work dir, played
    /// again (the same audio through two builds)
    replay: Option<PathBuf>,
    /// Run against a real Home Assistant with the test house.
    homeassistant: bool,
    /// `--tools` was given.
    tools_given: bool,
    /// `[listen]` settings for the run (`--listen KEY=MS`), each value as TOML.
    listen: Vec<(String, String)>,
}

fn parse_args(args: &[String]) -> Result<Options, String> {
    let mut o = Options {
        mode: Mode::Spoken,
        tools_as: ToolsAs::Declared,
        intents: true,
        voice: &voices::CAST[0],
        room: Room::default(),
        set: "demo".into(),
        gap_s: 4.0,
        pause_ms: 0,
        limit: None,
        json: None,
        hearth: PathBuf::from(env!("CARGO_BIN_EXE_hearth")),
        tools: Path::new(env!("CARGO_MANIFEST_DIR")).join("tools"),
        seed: 7,
        work: std::env::temp_dir().join(format!("hearth-session-{}", std::process::id())),
        replay: None,
        homeassistant: false,
        tools_given: false,
        listen: Vec::new(),
    };
    let mut f = bench::Flags::new(args);
    while let Some(a) = f.next_flag() {
        match a {
            "spoken" => o.mode = Mode::Spoken,
            "alone" => o.mode = Mode::Alone,
            "typed" => o.mode = Mode::Typed,
            "typed-session" => o.mode = Mode::TypedSession,
            "--set" => o.set = f.value(a)?.to_string(),
            "--gap" => o.gap_s = f.number(a)?,
            "--pause" => o.pause_ms = f.number(a)? as usize,
            "--limit" => o.limit = Some(f.number(a)? as usize),
            "--json" => o.json = Some(f.value(a)?.into()),
            "--hearth" => o.hearth = f.value(a)?.into(),
            "--tools" => {
                o.tools = f.value(a)?.into();
                o.tools_given = true;
            }
            "--homeassistant" => o.homeassistant = true,
            "--seed" => o.seed = f.number(a)? as u64,
            "--work" => o.work = f.value(a)?.into(),
            "--replay" => o.replay = Some(f.value(a)?.into()),
            "--tools-as" => {
                o.tools_as = match f.value(a)? {
                    "declared" => ToolsAs::Declared,
                    "bare" => ToolsAs::Bare,
                    v => return Err(format!("--tools-as {v:?}: declared or bare")),
                }
            }
            "--no-intents" => o.intents = false,
            "--voice" => {
                o.voice = voices::cast(f.value(a)?).map_err(|e| format!("--voice: {e}"))?
            }
            "--snr" => o.room.snr_db = Some(room::parse_snr(f.value(a)?)?),
            "--reverb" => o.room.reverb = true,
            "--listen" => o.listen.push(listen_setting(f.value(a)?)?),
            _ => return Err(format!("unknown argument {a:?}")),
        }
    }
    Ok(o)
}

/// `KEY=MS`: one of `[listen]`'s millisecond settings; or `end_of_turn=WHAT`. The value as
/// TOML.
fn listen_setting(v: &str) -> Result<(String, String), String> {
    let bad = || {
        format!(
            "--listen {v:?}: KEY=MS (e.g. early_ms=128) or end_of_turn=silence|smart-turn|smart-turn-house"
        )
    };
    let (key, value) = v.split_once('=').ok_or_else(bad)?;
    if key == "end_of_turn" {
        return match value {
            "silence" | "smart-turn" | "smart-turn-house" => Ok((key.into(), format!("{value:?}"))),
            _ => Err(bad()),
        };
    }
    if !key.ends_with("_ms") || !key.chars().all(|c| c.is_ascii_lowercase() || c == '_') {
        return Err(bad());
    }
    let ms: u32 = value.parse().map_err(|_| bad())?;
    Ok((key.to_string(), ms.to_string()))
}

fn main() -> ExitCode {
    bench::main_of("session", USAGE, parse_args, run)
}

fn run(opts: &Options) -> Result<(), String> {
    let path = session::set::set_path(&opts.set);
    let mut cases = session::set::load(&path)?;
    if opts.mode.one_by_one() {
        cases.retain(|c| c.kind != Kind::FollowUp);
    }
    cases.truncate(opts.limit.unwrap_or(usize::MAX));
    let mut hearth = Hearth {
        exe: opts.hearth.clone(),
        tools: opts.tools.clone(),
        work: opts.work.clone(),
        config: None,
    };
    hearth.check()?;
    if opts.tools_as == ToolsAs::Bare {
        hearth.tools = opts.work.join("tools-bare");
        session::tools::copy_bare(&opts.tools, &hearth.tools)?;
    }
    let mut config = String::new();
    if !opts.intents {
        config.push_str("[agent]\nintents = false\n");
    }
    let ha = match opts.homeassistant {
        false => None,
        true => {
            let ha = hearth_testkit::homeassistant::HomeAssistant::start()?;
            config.push_str(&format!(
                "[homeassistant]\nurl = {:?}\ntoken_file = {:?}\n",
                ha.url(),
                ha.token_file().display().to_string()
            ));
            if !opts.tools_given {
                hearth.tools = opts.work.join("no-manifests");
                std::fs::create_dir_all(&hearth.tools)
                    .map_err(|e| format!("{}: {e}", hearth.tools.display()))?;
            }
            let unexposed = ha.state(hearth_testkit::homeassistant::House::UNEXPOSED)?;
            Some((ha, unexposed))
        }
    };
    if !opts.listen.is_empty() {
        config.push_str("[listen]\n");
        for (key, value) in &opts.listen {
            config.push_str(&format!("{key} = {value}\n"));
        }
    }
    if !config.is_empty() {
        let file = opts.work.join("hearth.toml");
        std::fs::write(&file, &config).map_err(|e| format!("writing {}: {e}", file.display()))?;
        hearth.config = Some(file);
    }
    let load_before = load_average();
    eprintln!(
        "session: {} {} requests from {}, tools {} ({}{}), voice {}; work files in {}",
        cases.len(),
        opts.mode.label(),
        path.display(),
        hearth.tools.display(),
        opts.tools_as.label(),
        if opts.intents { "" } else { ", no intents" },
        voice_label(opts),
        opts.work.display()
    );
    let scored = match opts.mode {
        Mode::Spoken => spoken(opts, &hearth, &cases)?,
        Mode::Alone => alone(opts, &hearth, &cases)?,
        Mode::Typed => typed(&hearth, &cases)?,
        Mode::TypedSession => {
            typed_session(&hearth, &cases, opts.intents, ha.as_ref().map(|h| &h.0))?
        }
    };
    if let Some((ha, before)) = &ha {
        let after = ha.state(hearth_testkit::homeassistant::House::UNEXPOSED)?;
        let touched = after["last_changed"] != before["last_changed"];
        println!(
            "unexposed {}: {}",
            hearth_testkit::homeassistant::House::UNEXPOSED,
            if touched {
                "CHANGED (a call reached it)"
            } else {
                "untouched"
            }
        );
    }
    let set_name = path
        .file_stem()
        .map_or(opts.set.clone(), |s| s.to_string_lossy().into());
    let mut summary = summarise(opts.mode.label(), &set_name, &scored);
    summary.tools_as = opts.tools_as.label().into();
    summary.intents = opts.intents;
    summary.voice = voice_label(opts);
    println!("{}", case_table(&scored));
    print!("{}", details(&scored));
    println!("\n{}{}", summary_header(), summary_row(&summary));
    print!("{}", path_table(&summary));
    print!("{}", stage_table(&scored));
    let load = [load_before, load_average()].map(|l| l.unwrap_or_else(|| "?".into()));
    println!(
        "\nload average (1, 5, 15 min) at the start: {}; at the end: {} ({} cores)",
        load[0],
        load[1],
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    if let Some(file) = &opts.json {
        write_results(file, opts, &hearth, &summary, &scored, &load)?;
    }
    Ok(())
}

/// Who spoke the requests and where, for the output: "typed" in the typed modes.
fn voice_label(opts: &Options) -> String {
    match opts.mode {
        Mode::Typed | Mode::TypedSession => "typed".into(),
        Mode::Spoken | Mode::Alone => {
            let floor = format!("white noise at {NOISE_DBFS} dBFS");
            let room = match (opts.room.snr_db, opts.room.reverb) {
                (Some(_), _) => opts.room.label(),
                (None, true) => format!("{floor}, reverb"),
                (None, false) => floor,
            };
            format!("{}, {room}", opts.voice.label())
        }
    }
}

/// The voice and the room, checked, before anything is spoken.
fn talker(opts: &Options) -> Result<Talker, String> {
    talk::check_room(&opts.room)?;
    Talker::load(opts.voice, &opts.work.join("voice"))
}

/// Request `i` spoken by the voice, in the room's reverberation, at the level it is mixed at
/// (the voice's own level over the white floor; [`room::SPEECH_DBFS`] in room noise).
fn utterance(
    opts: &Options,
    speaker: &mut Talker,
    i: usize,
    text: &str,
) -> Result<Vec<f32>, String> {
    let clip = speaker.speak(i, text)?;
    let mut clip = talk::in_room(&opts.room, clip, &opts.work.join("voice"))?;
    if opts.room.snr_db.is_some() {
        room::set_active_level(&mut clip, room::SPEECH_DBFS);
    }
    Ok(clip)
}

/// The room's noise under the whole input: room noise at `--snr`, or the white floor.
fn add_room_noise(opts: &Options, samples: &mut [f32], seed: u64) {
    match opts.room.bed(samples.len(), seed) {
        Some(bed) => samples.iter_mut().zip(bed).for_each(|(s, n)| *s += n),
        None => add_noise(samples, NOISE_DBFS, seed),
    }
}

fn write_results(
    file: &Path,
    opts: &Options,
    hearth: &Hearth,
    summary: &session::report::Summary,
    scored: &[Scored],
    load: &[String; 2],
) -> Result<(), String> {
    let v = serde_json::json!({
        "mode": opts.mode.label(),
        "set": opts.set,
        "gap_s": opts.gap_s,
        "seed": opts.seed,
        "hearth": opts.hearth,
        "tools": opts.tools,
        "tools_as": opts.tools_as.label(),
        "tools_run": hearth.tools,
        "intents": opts.intents,
        "voice": summary.voice,
        "voice_name": opts.voice.name,
        "room": {"snr_db": opts.room.snr_db, "reverb": opts.room.reverb,
                 "reverb_effect": room::REVERB.join(" ")},
        "load_average": {"start": load[0], "end": load[1]},
        "summary": summary,
        "cases": scored,
    });
    bench::write_json(file, &v)
}

/// One line on stderr per turn as it arrives.
fn progress(v: &Value) {
    let o = Observed::from_voice(v);
    let calls: Vec<String> = o.calls.iter().map(session::score::show_call).collect();
    eprintln!(
        "  {:>6.1} s  heard {:?} → [{}] {:?}",
        o.start_s.unwrap_or(f64::NAN),
        o.heard,
        calls.join(" "),
        o.reply
    );
}

/// Every case spoken into one WAV, through one `hearth run`.
fn spoken(opts: &Options, hearth: &Hearth, cases: &[Case]) -> Result<Vec<Scored>, String> {
    let (wav, spoken) = match &opts.replay {
        Some(dir) => replayed(dir, cases.len())?,
        None => spoken_input(opts, cases)?,
    };
    // only a guard against a hang: a busy machine queues turns for minutes
    let limit = Duration::from_secs_f64(spoken.secs + 60.0 * cases.len() as f64 + 300.0);
    let quiet = wav.with_file_name(QUIET_INPUT);
    let (turns, answers) = if spoken.answers.is_empty() || !quiet.is_file() {
        if !spoken.answers.is_empty() {
            eprintln!(
                "session: {} is missing (an input spoken before answers waited for a \
                 question): every answer is said",
                quiet.display()
            );
        }
        let turns = hearth.run_voice(&wav, "spoken", limit, &mut progress)?;
        (turns, spoken.answers.clone())
    } else {
        let live = session::run::Live {
            heard: wav,
            quiet,
            answers: spoken.live_answers(),
        };
        let session::run::LiveRun { turns, said } =
            hearth.run_voice_live(&live, "spoken", limit, &mut progress)?;
        eprintln!(
            "session: hearth asked before {} of {} answers, and they were said",
            said.len(),
            spoken.answers.len()
        );
        (turns, said)
    };
    let mut observed: Vec<Observed> = turns.iter().map(Observed::from_voice).collect();
    session::score::mark_answers(&mut observed, &answers);
    Ok(score_all(cases, &spoken.windows, observed))
}

/// The input with every answer's span silent, beside `spoken-input.wav`: an answer is said
/// only when hearth asked ([`session::run::Hearth::run_voice_live`]).
const QUIET_INPUT: &str = "spoken-input-quiet.wav";

/// Where each request lies in a spoken input (with its answer, when it has one), where
/// the answers lie, and its length, kept beside the WAV.
#[derive(serde::Serialize, serde::Deserialize)]
struct Spoken {
    windows: Vec<(f64, f64)>,
    #[serde(default)]
    answers: Vec<(f64, f64)>,
    /// The request each answer answers (an index into `windows`).
    #[serde(default)]
    answer_of: Vec<usize>,
    secs: f64,
}

impl Spoken {
    /// Each answer with the start of its request.
    fn live_answers(&self) -> Vec<session::run::LiveAnswer> {
        let start = |i: usize| self.windows.get(i).map_or(0.0, |w| w.0);
        self.answers
            .iter()
            .zip(&self.answer_of)
            .map(|(&span, &i)| session::run::LiveAnswer {
                request_start: start(i),
                span,
            })
            .collect()
    }
}

/// How long after a request its answer is said (a case's `answer`, said when hearth asked):
/// time for hearth's question to be decided and spoken.
const ANSWER_AFTER_S: f64 = 7.0;

/// Every case spoken into one WAV in the work dir (and its windows beside it, for
/// `--replay`).
fn spoken_input(opts: &Options, cases: &[Case]) -> Result<(PathBuf, Spoken), String> {
    let mut speaker = talker(opts)?;
    let mut clips = Vec::with_capacity(cases.len());
    // each answer's span, from the start of its request's clip
    let mut answered = Vec::new();
    for (i, c) in cases.iter().enumerate() {
        let mut clip = paused(utterance(opts, &mut speaker, i, &c.say)?, opts.pause_ms);
        if let Some(answer) = &c.answer {
            clip.resize(
                clip.len() + (ANSWER_AFTER_S * f64::from(session::run::RATE)) as usize,
                0.0,
            );
            let start = clip.len() as f64 / f64::from(session::run::RATE);
            clip.extend(utterance(opts, &mut speaker, i, answer)?);
            answered.push((i, start, clip.len() as f64 / f64::from(session::run::RATE)));
        }
        clips.push(clip);
    }
    let mut input = timeline(&clips, LEAD_S, opts.gap_s, TAIL_S);
    let answers: Vec<(f64, f64)> = answered
        .iter()
        .map(|&(i, a, b)| (input.windows[i].0 + a, input.windows[i].0 + b))
        .collect();
    if !answers.is_empty() {
        // the same input with the answers silent, under the same noise
        let mut quiet = input.samples.clone();
        let n = quiet.len();
        let at = |t: f64| ((t * f64::from(session::run::RATE)) as usize).min(n);
        for &(a, b) in &answers {
            quiet[at(a)..at(b)].fill(0.0);
        }
        add_room_noise(opts, &mut quiet, opts.seed);
        write_wav(&opts.work.join(QUIET_INPUT), &quiet)?;
    }
    add_room_noise(opts, &mut input.samples, opts.seed);
    let wav = opts.work.join("spoken-input.wav");
    write_wav(&wav, &input.samples)?;
    eprintln!(
        "session: {:.0} s of input in {}",
        input.secs(),
        wav.display()
    );
    let spoken = Spoken {
        windows: input.windows.clone(),
        answers,
        answer_of: answered.iter().map(|&(i, _, _)| i).collect(),
        secs: input.secs(),
    };
    let text = serde_json::to_string(&spoken).map_err(|e| e.to_string())?;
    let at = opts.work.join("spoken-input.json");
    std::fs::write(&at, text).map_err(|e| format!("writing {}: {e}", at.display()))?;
    Ok((wav, spoken))
}

/// The input another run left in `dir` (`spoken-input.wav` and `.json`), for `cases` cases.
fn replayed(dir: &Path, cases: usize) -> Result<(PathBuf, Spoken), String> {
    let (wav, at) = (dir.join("spoken-input.wav"), dir.join("spoken-input.json"));
    let text = std::fs::read_to_string(&at).map_err(|e| {
        format!(
            "--replay: reading {}: {e} (run once with --work {} first)",
            at.display(),
            dir.display()
        )
    })?;
    let spoken: Spoken =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", at.display()))?;
    if spoken.windows.len() != cases || !wav.is_file() {
        return Err(format!(
            "--replay: {} holds {} requests and {} a WAV; this run has {cases} (same --set and --limit?)",
            dir.display(),
            spoken.windows.len(),
            if wav.is_file() { "" } else { "no" }
        ));
    }
    eprintln!(
        "session: replaying {:.0} s of input from {}",
        spoken.secs,
        wav.display()
    );
    Ok((wav, spoken))
}

/// `clip` with `pause_ms` of silence in its longest gap between words (as it is when it has
/// none, or with no pause asked for).
fn paused(clip: Vec<f32>, pause_ms: usize) -> Vec<f32> {
    match (pause_ms, session::run::inner_gap(&clip)) {
        (1.., Some(gap)) => {
            let silence = vec![0.0; pause_ms * session::run::RATE as usize / 1000];
            session::run::with_pause(&clip, gap, &silence).0
        }
        _ => clip,
    }
}

/// Each case spoken alone, a fresh `hearth run` each.
fn alone(opts: &Options, hearth: &Hearth, cases: &[Case]) -> Result<Vec<Scored>, String> {
    let mut speaker = talker(opts)?;
    let mut scored = Vec::new();
    for (i, case) in cases.iter().enumerate() {
        let clip = utterance(opts, &mut speaker, i, &case.say)?;
        let mut input = timeline(&[clip], LEAD_S, TAIL_S, 0.0);
        add_room_noise(opts, &mut input.samples, opts.seed + i as u64);
        let wav = opts.work.join(format!("alone-{i}.wav"));
        write_wav(&wav, &input.samples)?;
        let limit = Duration::from_secs_f64(input.secs() + 300.0);
        let turns = hearth.run_voice(&wav, &format!("alone-{i}"), limit, &mut progress)?;
        let observed = turns.iter().map(Observed::from_voice).collect();
        scored.extend(score_all(
            std::slice::from_ref(case),
            &input.windows,
            observed,
        ));
    }
    Ok(scored)
}

/// Each case through a fresh `hearth ask --json`, in one demo home.
fn typed(hearth: &Hearth, cases: &[Case]) -> Result<Vec<Scored>, String> {
    let state = hearth.fresh_state("typed")?;
    let mut scored = Vec::new();
    for case in cases {
        let turn = hearth.ask(&case.say, &state)?;
        let o = Observed::from_turn(&case.say, &turn);
        eprintln!("  {:?} → {:?}", case.say, o.reply);
        scored.push(score(case, vec![o]));
    }
    Ok(scored)
}

/// Every case typed into one agent session in this process, local intents on or off. Runs
/// the checkout's library, whatever `--hearth` says.
fn typed_session(
    hearth: &Hearth,
    cases: &[Case],
    intents: bool,
    ha: Option<&hearth_testkit::homeassistant::HomeAssistant>,
) -> Result<Vec<Scored>, String> {
    use hearth::preset::Preset;
    use hearth::supervisor::{model_path, prompt_cache_path, start_text, TextOptions};

    let state = hearth.fresh_state("typed-session")?;
    // the demo home's executor reads this; set before the runtime's threads start
    std::env::set_var("HEARTH_DEMO_STATE", &state);
    let mut opts = TextOptions::new(Preset::load("qwen2.5-coder").map_err(|e| e.to_string())?);
    opts.tools_dir = Some(hearth.tools.clone());
    opts.intents = intents;
    opts.timers = Some(state.join("hearth"));
    if let Some(ha) = ha {
        let section = hearth::config::HomeAssistantSection {
            url: ha.url().to_string(),
            token_file: ha.token_file().to_path_buf(),
            discover: true,
            refresh_s: 30,
        };
        opts.house = hearth::house::HouseWatch::from_config(&section).map_err(|e| e.to_string())?;
        let mut backends = hearth::tools::Backends::none();
        backends.homeassistant = Some(
            hearth::tools::homeassistant::HaBackend::new(&section).map_err(|e| e.to_string())?,
        );
        opts.backends = std::sync::Arc::new(backends);
        // read the house before the first request, as a daemon has by then
        opts.follow_house = false;
    }
    let model = model_path(&opts).map_err(|e| format!("{e} (run scripts/fetch-models)"))?;
    opts.prompt_cache = prompt_cache_path(&opts, &model);
    opts.model = Some(model);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| format!("starting the async runtime: {e}"))?;
    rt.block_on(async {
        let text = start_text(opts).await.map_err(|e| e.to_string())?;
        let mut scored = Vec::new();
        for case in cases {
            let turn = ask_spoken(&text.agent, &case.say).await?;
            let o = Observed::from_turn(&case.say, &turn);
            eprintln!("  {:?} → {:?}", case.say, o.reply);
            print_hops(&turn);
            let mut turns = vec![o];
            // a question hearth asked back (not one the set expects: an `asks` case's) gets
            // the household's yes, and the calls after it count for the request
            if turns[0].asked.is_some() && case.kind != Kind::Asks {
                let said = case.answer.as_deref().unwrap_or(ASKED_BACK_YES);
                let answered = ask_spoken(&text.agent, said).await?;
                let mut o = Observed::from_turn(said, &answered);
                o.answer = true;
                eprintln!("    {said:?} → {:?}", o.reply);
                turns.push(o);
            }
            scored.push(score(case, turns));
        }
        text.stop().await;
        Ok(scored)
    })
}

/// What the typed session answers when hearth asks back before running a request's calls
/// and the case names no `answer`.
const ASKED_BACK_YES: &str = "Yes.";

/// A turn's hops on stderr when it took more than one or a hook acted: what each wrote
/// (its start), under which choice, and what was done about it.
fn print_hops(turn: &Value) {
    let hops = turn["hops"].as_array().map(Vec::as_slice).unwrap_or(&[]);
    if hops.len() < 2 && hops.iter().all(|h| h["hook"].is_null()) {
        return;
    }
    for h in hops {
        let raw: String = h["raw"].as_str().unwrap_or("").chars().take(70).collect();
        eprintln!(
            "      {} {:?} → {}",
            h["tool_choice"].as_str().unwrap_or("?"),
            raw,
            h["hook"].as_str().unwrap_or("-")
        );
    }
}

/// One turn of the session "typed-session", with a `speak` channel as the voice path gives
/// (its sentences are dropped): the agent's `Turn` as JSON.
async fn ask_spoken(
    agent: &ractor::ActorRef<hearth::agent::AgentMsg>,
    text: &str,
) -> Result<Value, String> {
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    let mut ask = hearth::agent::Ask::new("typed-session", text);
    ask.speak = Some(tx);
    let turn = hearth::agent::ask(agent, ask)
        .await
        .map_err(|e| format!("{text:?}: {e}"))?;
    serde_json::to_value(&turn).map_err(|e| e.to_string())
}
