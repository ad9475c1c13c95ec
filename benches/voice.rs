//! The voice path end to end on the real models: `cargo bench --bench voice`.
//!
//! The first `HEARTH_BENCH_RUNS` (24) requests of the session set (`tests/session/demo.jsonl`:
//! commands, paraphrases, questions, follow-ups, chat), each spoken by the Piper voice at one
//! of three paces, 6 s apart over a room's noise (−50 dBFS), are fed in real time, as a
//! microphone would deliver them, through the whole pipeline in this process, one
//! conversation (the agent keeps its history, as a daemon does): Capture, Listen (the Silero
//! VAD; the hangover ends a turn, or with `HEARTH_BENCH_END_OF_TURN=smart-turn` Smart Turn at
//! the first pause), `hearth-stt` as a child, the agent on the preset's
//! model with the demo tools, Piper, and a real-time WAV sink. Per turn, the time from the end
//! of speech to each stage (endpoint, STT, first token, tool done, first TTS chunk, first
//! reply sample at the output, first audible reply sample); per handling path (local intent,
//! model) the median and 95th percentile of each, and the path's first turn against the
//! others. Then, with nothing said for a while, the listening-idle CPU (this process and its
//! `hearth-stt` child, as a share of one core) and their RSS.
//!
//! Needs `scripts/fetch-models` and a release `hearth-stt` beside the bench's target dir
//! (`cargo build --release -p hearth-stt`).

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hearth::audio::{CaptureSource, PlaybackSink};
use hearth::pipeline::{run, TurnTimings, VoiceOptions, VoiceTurn};
use hearth::preset::Preset;
use hearth::stt::{SttConfig, SttServer};
use hearth::supervisor::{model_path, start_text, TextOptions};
use hearth::tools::ToolsMsg;
use hearth::tts::TtsConfig;
use hearth_testkit::session;

/// Silence after each request: long enough for most replies to finish before the next one.
const GAP_S: f64 = 6.0;
/// Silence before the first request.
const LEAD_S: f64 = 1.0;
/// Silence at the end, where the idle figures are taken.
const IDLE_S: f64 = 20.0;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    if v.is_empty() {
        f64::NAN
    } else {
        v[v.len() / 2]
    }
}

/// CPU seconds (user + system) and RSS bytes of a process, from /proc.
fn proc_usage(pid: u32) -> Option<(f64, u64)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // fields after the command (which may hold spaces) in parentheses
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    let cpu = (f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?) / ticks;
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as u64;
    let rss = f.get(21)?.parse::<u64>().ok()? * page;
    Some((cpu, rss))
}

/// The children of `pid` (ppid == pid).
fn children(pid: u32) -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&p| {
            std::fs::read_to_string(format!("/proc/{p}/stat"))
                .ok()
                .and_then(|s| {
                    let rest = s[s.rfind(')')? + 2..].to_string();
                    rest.split_whitespace().nth(1)?.parse::<u32>().ok()
                })
                == Some(pid)
        })
        .collect()
}

/// One sample of this process and its children: (when, cpu s self, cpu s children, rss
/// self, rss children).
#[derive(Clone, Copy)]
struct Usage {
    at: Instant,
    cpu_self: f64,
    cpu_children: f64,
    rss_self: u64,
    rss_children: u64,
}

fn usage() -> Usage {
    let me = std::process::id();
    let (cpu_self, rss_self) = proc_usage(me).unwrap_or_default();
    let (cpu_children, rss_children) = children(me)
        .into_iter()
        .filter_map(proc_usage)
        .fold((0.0, 0), |(c, r), (c2, r2)| (c + c2, r + r2));
    Usage {
        at: Instant::now(),
        cpu_self,
        cpu_children,
        rss_self,
        rss_children,
    }
}

fn main() {
    // logs on stderr: HEARTH_LOG (e.g. "hearth=info,hearth_stt=info"), default warnings
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("HEARTH_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .init();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let runs: usize = std::env::var("HEARTH_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(24);
    let smart_turn = match std::env::var("HEARTH_BENCH_END_OF_TURN").as_deref() {
        Ok("smart-turn") => true,
        Ok("silence") | Err(_) => false,
        Ok(other) => panic!("HEARTH_BENCH_END_OF_TURN={other:?}: smart-turn or silence"),
    };
    let models = hearth::models::model_dir().expect("a model directory");
    let exe = std::env::current_exe().expect("the bench's path");
    // target/release/deps/voice-HASH → target/release/hearth-stt
    let stt_bin = exe
        .parent()
        .and_then(Path::parent)
        .map(|d| d.join("hearth-stt"))
        .filter(|p| p.is_file())
        .expect("hearth-stt is not built beside the bench: cargo build --release -p hearth-stt");

    let tmp = std::env::temp_dir().join(format!("hearth-voice-bench-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).expect("a temp dir");
    // the demo home keeps its lights here (set before any thread starts)
    std::env::set_var("HEARTH_DEMO_STATE", tmp.join("state"));
    let mut cases = session::set::load(&session::set::set_path("demo")).expect("the session set");
    cases.truncate(runs);
    let mut speaker =
        session::run::Speaker::load().expect("the Piper voice: run scripts/fetch-models");
    let clips: Vec<Vec<f32>> = cases
        .iter()
        .enumerate()
        .map(|(i, c)| speaker.speak(i, &c.say).expect("a request is spoken"))
        .collect();
    let mut timeline = session::run::timeline(&clips, LEAD_S, GAP_S, IDLE_S);
    session::run::add_noise(&mut timeline.samples, session::run::NOISE_DBFS, 1);
    let input = tmp.join("input.wav");
    session::run::write_wav(&input, &timeline.samples).expect("the bench input is written");
    let input_s = timeline.secs();

    let mut opts = TextOptions::new(Preset::load("qwen2.5-coder").expect("the preset"));
    opts.tools_dir = Some(root.join("tools"));
    // as `hearth run` starts it: no prompt-cache file, the prompt warmed at start
    opts.model = Some(model_path(&opts).expect("the model: run scripts/fetch-models"));

    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    let samples: Arc<Mutex<Vec<Usage>>> = Arc::default();
    let done_at: Arc<Mutex<Vec<Instant>>> = Arc::default();
    let (turns, started) = rt.block_on(async {
        let text = start_text(opts).await.expect("the text runtime starts");
        let vocabulary = ractor::call!(text.tools, ToolsMsg::Snapshot)
            .expect("the tools answer")
            .vocabulary()
            .join(", ");
        let stt = SttConfig::new(SttServer::Spawn {
            program: stt_bin,
            model: models.join("ggml-tiny.en.bin"),
            args: vec!["--prompt".into(), vocabulary],
        });
        let voice = VoiceOptions {
            input: CaptureSource::Wav {
                path: input,
                realtime: true,
            },
            output: PlaybackSink::Wav {
                path: tmp.join("reply.wav"),
                rate: 22050,
                realtime: true,
            },
            stt,
            tts: TtsConfig::default_voice()
                .expect("the voice: run scripts/fetch-models")
                .into(),
            // the daemon's default detector and end of turn
            listen: {
                let listen = hearth::audio::listen::ListenConfig {
                    vad: hearth::audio::listen::VadKind::Silero {
                        model: models.join(hearth::audio::silero::SILERO_FILE),
                        ort_library: None,
                    },
                    ..Default::default()
                };
                match smart_turn {
                    true => listen.with_end_of_turn(hearth::audio::listen::TurnModel {
                        model: models.join(hearth::audio::smart_turn::SMART_TURN_FILE),
                        ort_library: None,
                    }),
                    false => listen,
                }
            },
            once: true,
            // one conversation, as a daemon has it
            conversation_idle: Duration::from_secs(120),
            bus_events: None,
            muted: Default::default(),
            events: None,
            // no wake word: every utterance is a request
            wake: None,
            cues: Default::default(),
            follow_up: Duration::ZERO,
            listen_requests: None,
            echo_cancel: false,
            satellite: None,
            room: None,
            announcements: None,
            volume: Default::default(),
        };
        // sample CPU and RSS every 500 ms while the pipeline runs
        let sampler = {
            let samples = samples.clone();
            tokio::spawn(async move {
                loop {
                    samples.lock().unwrap().push(usage());
                    tokio::time::sleep(Duration::from_millis(500)).await;
                }
            })
        };
        let started = Instant::now();
        let done = done_at.clone();
        let heard = std::sync::Mutex::new(Vec::new());
        let on_turn = |t: &VoiceTurn| {
            done.lock().unwrap().push(Instant::now());
            eprintln!("turn: heard {:?} timings {:?}", t.heard, t.timings_ms);
            heard.lock().unwrap().push(t.clone());
        };
        run(text.agent.clone(), voice, on_turn, std::future::pending())
            .await
            .expect("the pipeline runs");
        sampler.abort();
        text.stop().await;
        let turns = heard.into_inner().unwrap_or_else(|e| e.into_inner());
        (turns, started)
    });

    println!(
        "voice bench: {} requests of the session set spoken into one conversation, real-time input ({input_s:.1} s) and output; end of turn: {}",
        cases.len(),
        if smart_turn { "smart-turn" } else { "silence" }
    );
    println!(
        "{:<6} {:>9} {:>8} {:>9} {:>11} {:>10} {:>11} {:>11} {:>11}   heard",
        "turn",
        "endpoint",
        "stt",
        "stt wait",
        "first tok",
        "tool done",
        "first tts",
        "first out",
        "first voice"
    );
    let f = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.0}"));
    let mut cols: [Vec<f64>; 8] = Default::default();
    for (i, t) in turns.iter().enumerate() {
        let m: &TurnTimings = &t.timings_ms;
        let row = [
            Some(m.endpoint),
            Some(m.stt),
            Some(m.stt_wait),
            m.first_token,
            m.tool_done,
            m.first_tts_chunk,
            m.first_audio,
            m.first_voice,
        ];
        for (c, v) in cols.iter_mut().zip(row) {
            c.extend(v);
        }
        println!(
            "{:<6} {:>9} {:>8} {:>9} {:>11} {:>10} {:>11} {:>11} {:>11}   {:?}{}",
            i + 1,
            f(row[0]),
            f(row[1]),
            f(row[2]),
            f(row[3]),
            f(row[4]),
            f(row[5]),
            f(row[6]),
            f(row[7]),
            t.heard,
            t.error
                .as_deref()
                .map(|e| format!(" error: {e}"))
                .unwrap_or_default()
        );
    }
    let med: Vec<String> = cols
        .iter()
        .map(|c| f(Some(median(c.clone())).filter(|v| v.is_finite())))
        .collect();
    println!(
        "{:<6} {:>9} {:>8} {:>9} {:>11} {:>10} {:>11} {:>11} {:>11}   (ms; stt is the recogniser's time, the rest from the end of speech)",
        "median", med[0], med[1], med[2], med[3], med[4], med[5], med[6], med[7]
    );

    let observed: Vec<session::score::Observed> = turns
        .iter()
        .map(|t| {
            session::score::Observed::from_voice(&serde_json::to_value(t).expect("a turn is JSON"))
        })
        .collect();
    let scored = session::score::score_all(&cases, &timeline.windows, observed);
    let summary = session::report::summarise("voice", "demo", &scored);
    println!(
        "\n{}{}",
        session::report::summary_header(),
        session::report::summary_row(&summary)
    );
    print!("{}", session::report::stage_table(&scored));

    // idle: from 3 s after the last turn finished to 1 s before the input ended
    let last_done = done_at.lock().unwrap().last().copied().unwrap_or(started);
    let from = last_done + Duration::from_secs(3);
    let to = started + Duration::from_secs_f64(input_s - 1.0);
    let s = samples.lock().unwrap();
    let window: Vec<&Usage> = s.iter().filter(|u| u.at >= from && u.at <= to).collect();
    match (window.first(), window.last()) {
        (Some(a), Some(b)) if b.at > a.at => {
            let secs = (b.at - a.at).as_secs_f64();
            let cpu = |u: &Usage| u.cpu_self + u.cpu_children;
            println!(
                "idle listening over {secs:.1} s: CPU {:.2} % of one core (hearth {:.2} %, hearth-stt {:.2} %), RSS {:.0} MiB (hearth {:.0} MiB, hearth-stt {:.0} MiB)",
                (cpu(b) - cpu(a)) / secs * 100.0,
                (b.cpu_self - a.cpu_self) / secs * 100.0,
                (b.cpu_children - a.cpu_children) / secs * 100.0,
                (b.rss_self + b.rss_children) as f64 / 1048576.0,
                b.rss_self as f64 / 1048576.0,
                b.rss_children as f64 / 1048576.0,
            );
        }
        _ => {
            println!("idle listening: no idle window (the last turn ended too late); raise IDLE_S")
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
}
