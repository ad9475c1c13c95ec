//! The soak: hearth as a daemon runs it for months, compressed. In one process, the agent
//! (scripted engine, the demo tools), the whole voice pipeline (Listen on synthetic input,
//! the Stt stage on a stand-in Wyoming recogniser, the Piper voice, playback to /dev/null) and
//! the D-Bus face on a private bus. Utterances are tones, one after another, each request said
//! once its predecessor's turn has ended; meanwhile tool providers come and go on the bus,
//! each registering a tool of its own, having it called, asking a question and leaving.
//!
//! The stand-in recogniser hears a tone's pitch: each of eight pitches is one request
//! (commands the local intents answer, questions and chat the scripted model answers). It
//! reads pitch from zero crossings, so a partial utterance (the recognition at a pause) is
//! heard as the same request.
//!
//! Reported: turns, failures, turns that never came, provider cycles and their failures,
//! RSS after the warm-up and at the end, and every bounded container's highest level
//! (`hearth::bounded::levels`, sampled every 50 ms, and the face's `Bounds` property at the
//! end).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hearth::agent::{Agent, AgentArgs, AgentConfig};
use hearth::audio::{CaptureSource, PlaybackSink};
use hearth::bounded::Level;
use hearth::bus::{BusAddress, FaceOptions};
use hearth::llm::scripted::{Script, ScriptedEngine};
use hearth::pipeline::{VoiceOptions, VoiceTurn};
use hearth::preset::Preset;
use hearth::stt::{SttConfig, SttServer};
use hearth::tools::{ProviderLimits, Registry, ToolsActor};
use ractor::Actor;
use tokio::io::AsyncWriteExt;
use wyoming::Eventable;

/// What each pitch means: pitch `k` is `250 + 100 k` Hz.
pub const REQUESTS: [&str; 8] = [
    "turn on the kitchen light",
    "what time is it",
    "turn off the kitchen light",
    "tell me something nice",
    "turn on the living room light",
    "what is the date today",
    "turn off the living room light",
    "thank you",
];

/// The scripted model's answers, in turn (the questions and chat the intents leave to it).
const MODEL_SAYS: [&str; 2] = ["Glad to help.", "Here I am, listening."];

const RATE: u32 = 16_000;

/// How long the soak runs.
#[derive(Debug, Clone, Copy)]
pub struct SoakPlan {
    /// Spoken turns, warm-up included.
    pub turns: usize,
    /// Provider register/call/exit cycles, warm-up included.
    pub cycles: usize,
    /// Turns and cycles before the RSS is first read.
    pub warmup_turns: usize,
    pub warmup_cycles: usize,
}

/// What the soak saw.
#[derive(Debug, Default)]
pub struct SoakReport {
    pub turns: usize,
    /// Turns that ended in an error.
    pub failed: Vec<String>,
    /// Requests said whose turn never came (10 s).
    pub missed: usize,
    pub cycles: usize,
    pub cycle_failures: Vec<String>,
    pub rss_warm_kib: u64,
    pub rss_end_kib: u64,
    /// Each container's highest level over the run.
    pub highest: Vec<Level>,
    /// The face's `Bounds` property at the end.
    pub bounds_at_end: Vec<serde_json::Value>,
    pub elapsed: Duration,
}

impl SoakReport {
    /// The containers that went over their limit, at any time.
    pub fn over(&self) -> Vec<&Level> {
        self.highest.iter().filter(|l| l.len > l.cap).collect()
    }
}

/// The resident set size of this process, KiB.
pub fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.split_whitespace().next())
                .and_then(|n| n.parse().ok())
        })
        .unwrap_or(0)
}

/// One request as 16-bit PCM: a little silence, the tone of request `k`, then enough silence
/// for Listen to end the utterance (low noise throughout, so the energy detector has a floor).
fn utterance(k: usize, seed: &mut u32) -> Vec<u8> {
    let freq = 250.0 + 100.0 * k as f32;
    let n_lead = RATE as usize / 20;
    let n_tone = RATE as usize * 7 / 10;
    let n_tail = RATE as usize * 3 / 2;
    let fade = RATE as usize / 100;
    let mut out = Vec::with_capacity((n_lead + n_tone + n_tail) * 2);
    for i in 0..n_lead + n_tone + n_tail {
        *seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        let noise = ((*seed >> 16) as f32 / 32768.0 - 1.0) * 0.002;
        let tone = if (n_lead..n_lead + n_tone).contains(&i) {
            let j = i - n_lead;
            let edge = (j.min(n_tone - 1 - j) as f32 / fade as f32).min(1.0);
            0.3 * edge * (2.0 * std::f32::consts::PI * freq * i as f32 / RATE as f32).sin()
        } else {
            0.0
        };
        let s = ((tone + noise) * 32767.0).clamp(-32768.0, 32767.0) as i16;
        out.extend_from_slice(&s.to_le_bytes());
    }
    out
}

/// The request a stretch of 16-bit PCM holds: its loud samples' pitch, from zero crossings.
fn hear(pcm: &[u8]) -> &'static str {
    let samples: Vec<f32> = pcm
        .chunks_exact(2)
        .map(|b| f32::from(i16::from_le_bytes([b[0], b[1]])) / 32768.0)
        .collect();
    let (mut loud, mut crossings) = (0usize, 0usize);
    for w in samples.windows(2) {
        if w[0].abs() > 0.02 || w[1].abs() > 0.02 {
            loud += 1;
            if (w[0] < 0.0) != (w[1] < 0.0) {
                crossings += 1;
            }
        }
    }
    if loud < RATE as usize / 10 {
        return "";
    }
    let freq = crossings as f32 / 2.0 / (loud as f32 / RATE as f32);
    let k = ((freq - 250.0) / 100.0).round().clamp(0.0, 7.0) as usize;
    REQUESTS[k]
}

/// A Wyoming recogniser that hears pitches ([`hear`]): `describe`, `ping`, and
/// `audio-start`/`audio-chunk`/`audio-stop` answered with a `transcript`.
async fn stand_in_recogniser(listener: tokio::net::TcpListener) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            return;
        };
        tokio::spawn(async move {
            let (read, mut write) = stream.into_split();
            let mut events = wyoming::EventReader::new(tokio::io::BufReader::new(read));
            let mut pcm = Vec::new();
            while let Ok(Some(event)) = events.read_event().await {
                let answer = match event.kind.as_str() {
                    "describe" => Some(info().to_event()),
                    "ping" => Some(wyoming::Pong::default().to_event()),
                    "audio-start" => {
                        pcm.clear();
                        None
                    }
                    "audio-chunk" => {
                        pcm.extend_from_slice(event.payload.as_deref().unwrap_or_default());
                        None
                    }
                    "audio-stop" => Some(
                        wyoming::Transcript {
                            text: hear(&pcm).to_string(),
                            language: None,
                            phrase_pass: None,
                        }
                        .to_event(),
                    ),
                    _ => None,
                };
                if let Some(a) = answer {
                    if wyoming::write_event(&mut write, &a).await.is_err() {
                        return;
                    }
                }
            }
        });
    }
}

fn info() -> wyoming::Info {
    let who = wyoming::Attribution {
        name: "hearth soak".into(),
        url: "https://example.invalid".into(),
    };
    wyoming::Info {
        asr: vec![wyoming::AsrProgram {
            name: "pitch".into(),
            attribution: who.clone(),
            installed: true,
            description: None,
            version: None,
            models: vec![wyoming::AsrModel {
                name: "pitch".into(),
                attribution: who,
                installed: true,
                description: None,
                version: None,
                languages: vec!["en".into()],
            }],
            supports_transcript_streaming: false,
            requires_external_vad: true,
            supports_phrases: false,
        }],
        satellite: None,
    }
}

/// A tool provider: answers every call with the tool's name.
struct Provider;

#[zbus::interface(name = "io.hearth.ToolProvider1")]
impl Provider {
    async fn call(&self, name: String, _arguments_json: String) -> String {
        format!("{name} answered")
    }
}

const NAME: &str = "io.hearth.Agent1";
const PATH: &str = "/io/hearth/Agent";

/// Programs that stay on the bus and ask now and then: more of them than the agent keeps
/// sessions for, so the least recently used conversations are forgotten.
const ASKERS: usize = 48;

/// `Ask` from `conn`; Busy (a spoken turn runs) is fine.
async fn ask(conn: &zbus::Connection, text: &str) -> Result<(), String> {
    match conn
        .call_method(Some(NAME), PATH, Some(NAME), "Ask", &(text,))
        .await
    {
        Ok(_) => Ok(()),
        Err(zbus::Error::MethodError(name, _, _)) if name.as_str().ends_with("Busy") => Ok(()),
        Err(e) => Err(format!("Ask: {e}")),
    }
}

/// One provider's life: connect, register `probe_<i>`, have it called, ask, leave; and one
/// of the [`ASKERS`] that stay asks too.
async fn provider_cycle(
    address: &str,
    i: usize,
    askers: &mut Vec<zbus::Connection>,
) -> Result<(), String> {
    if askers.len() < ASKERS {
        askers.push(
            zbus::connection::Builder::address(address)
                .build()
                .await
                .map_err(|e| format!("connecting an asker: {e}"))?,
        );
    }
    ask(&askers[i % askers.len()], "what time is it").await?;
    let conn = zbus::connection::Builder::address(address)
        .serve_at("/io/hearth/ToolProvider", Provider)
        .build()
        .await
        .map_err(|e| format!("connecting: {e}"))?;
    let tool = format!("probe_{i}");
    let spec = serde_json::json!({"name": tool, "description": "A probe of the soak.",
        "parameters": {"type": "object", "properties": {}}});
    conn.call_method(
        Some(NAME),
        PATH,
        Some(NAME),
        "RegisterTool",
        &(spec.to_string(),),
    )
    .await
    .map_err(|e| format!("RegisterTool: {e}"))?;
    let result: String = conn
        .call_method(
            Some(NAME),
            PATH,
            Some(NAME),
            "CallTool",
            &(tool.as_str(), "{}"),
        )
        .await
        .map_err(|e| format!("CallTool: {e}"))?
        .body()
        .deserialize()
        .map_err(|e| e.to_string())?;
    if !result.contains(&format!("{tool} answered")) {
        return Err(format!("CallTool {tool}: {result}"));
    }
    // a question of its own: a session, forgotten when it leaves
    ask(&conn, "thank you").await?;
    drop(conn);
    Ok(())
}

/// The face's `Bounds` property, read over the bus.
async fn bounds_property(address: &str) -> Result<Vec<serde_json::Value>, String> {
    let conn = zbus::connection::Builder::address(address)
        .build()
        .await
        .map_err(|e| e.to_string())?;
    let reply = conn
        .call_method(
            Some("io.hearth.Agent1"),
            "/io/hearth/Agent",
            Some("org.freedesktop.DBus.Properties"),
            "Get",
            &("io.hearth.Agent1", "Bounds"),
        )
        .await
        .map_err(|e| e.to_string())?;
    let value: zbus::OwnedVariant = reply.body().deserialize().map_err(|e| e.to_string())?;
    let text = match &*value {
        zbus::Variant::Str(s) => s.to_string(),
        other => return Err(format!("Bounds is not a string: {other:?}")),
    };
    serde_json::from_str(&text).map_err(|e| format!("Bounds is not JSON ({e}): {text}"))
}

/// Keep the highest level of every container seen.
fn note_levels(highest: &Mutex<Vec<Level>>) {
    let mut h = highest.lock().unwrap_or_else(|e| e.into_inner());
    for l in hearth::bounded::levels() {
        match h.iter_mut().find(|x| x.name == l.name) {
            Some(x) => x.len = x.len.max(l.len),
            None => h.push(l),
        }
    }
}

/// Run the soak on `bus_address` (a private bus), with the Piper voice `tts`.
pub async fn soak(
    plan: SoakPlan,
    bus_address: &str,
    tts: hearth::tts::TtsConfig,
    tools_dir: &std::path::Path,
) -> SoakReport {
    let started = Instant::now();
    let preset = Preset::load("qwen2.5-coder").expect("the qwen2.5-coder preset");
    let mut script = Script::new(MODEL_SAYS);
    script.chat_template = Some(
        include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/templates/chatml-tools.jinja"
        ))
        .to_string(),
    );
    script.repeat = true;
    script.record = false;
    let engine = ScriptedEngine::spawn(script)
        .await
        .expect("the scripted engine");
    let registry = Registry::load_dir(tools_dir).expect("the demo tools");
    let (tools, _) = Actor::spawn(None, ToolsActor, Arc::new(registry))
        .await
        .expect("the tools actor");
    let events = hearth::events::channel();
    let mut cfg = AgentConfig::new(preset);
    cfg.events = Some(events.clone());
    let agent = Agent::spawn(AgentArgs {
        cfg,
        engine,
        tools: tools.clone(),
    })
    .await
    .expect("the agent");
    let face = hearth::bus::serve(
        FaceOptions {
            bus: BusAddress::Address(bus_address.to_string()),
            preset: "qwen2.5-coder".into(),
            voice: true,
            muted: Default::default(),
            listen: None,
            provider_limits: ProviderLimits::default(),
            trusted_uids: Vec::new(),
            announcer: None,
            timers: None,
        },
        agent.clone(),
        tools.clone(),
        events.clone(),
    )
    .await
    .expect("the D-Bus face on the private bus");

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a port for the recogniser");
    let stt_address = format!(
        "tcp://{}",
        listener.local_addr().expect("the recogniser's address")
    );
    let recogniser = tokio::spawn(stand_in_recogniser(listener));

    let (mic, input) = tokio::io::duplex(1 << 16);
    let voice = VoiceOptions {
        input: CaptureSource::Raw {
            name: "the soak's tones".into(),
            reader: Some(Box::new(input)),
            rate: RATE,
        },
        output: PlaybackSink::Wav {
            path: "/dev/null".into(),
            rate: 22_050,
            realtime: false,
        },
        stt: SttConfig::new(SttServer::Connect(stt_address)),
        tts: tts.into(),
        listen: Default::default(),
        once: true,
        conversation_idle: hearth::pipeline::CONVERSATION_IDLE,
        events: None,
        bus_events: Some(events.clone()),
        muted: Default::default(),
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

    let turns = AtomicUsize::new(0);
    let failed = Mutex::new(Vec::new());
    let (turn_tx, mut turn_rx) = tokio::sync::mpsc::unbounded_channel::<()>();
    let on_turn = |t: &VoiceTurn| {
        turns.fetch_add(1, Ordering::SeqCst);
        if let Some(e) = &t.error {
            failed
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(format!("{}: {e}", t.heard));
        }
        let _ = turn_tx.send(());
    };
    let highest = Arc::new(Mutex::new(Vec::new()));
    let sampler = {
        let highest = highest.clone();
        tokio::spawn(async move {
            loop {
                note_levels(&highest);
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        })
    };

    let mut report = SoakReport::default();
    let drive = async {
        let mut mic = mic;
        let mut seed = 7u32;
        let mut said = 0usize;
        let mut missed = 0usize;
        let mut cycles = 0usize;
        let mut cycle_failures = Vec::new();
        let mut askers = Vec::new();
        let mut rss_warm = 0;
        for (n_turns, n_cycles) in [
            (plan.warmup_turns, plan.warmup_cycles),
            (
                plan.turns.saturating_sub(plan.warmup_turns),
                plan.cycles.saturating_sub(plan.warmup_cycles),
            ),
        ] {
            // one provider cycle after every few turns, concurrently with the speech
            let every = n_turns.checked_div(n_cycles.max(1)).unwrap_or(1).max(1);
            let mut cycles_left = n_cycles;
            for i in 0..n_turns.max(1) {
                if missed >= 50 {
                    break;
                }
                if i < n_turns {
                    let pcm = utterance(said % REQUESTS.len(), &mut seed);
                    if mic.write_all(&pcm).await.is_err() {
                        break;
                    }
                    said += 1;
                }
                let cycle = async {
                    if cycles_left > 0 && (i % every == 0 || i + 1 >= n_turns) {
                        let n = if i + 1 >= n_turns { cycles_left } else { 1 };
                        for _ in 0..n {
                            if let Err(e) = provider_cycle(bus_address, cycles, &mut askers).await {
                                cycle_failures.push(format!("cycle {cycles}: {e}"));
                            }
                            cycles += 1;
                            cycles_left -= 1;
                        }
                    }
                };
                let turn = async {
                    if i < n_turns
                        && tokio::time::timeout(Duration::from_secs(10), turn_rx.recv())
                            .await
                            .is_err()
                    {
                        missed += 1;
                    }
                };
                tokio::join!(cycle, turn);
            }
            if rss_warm == 0 {
                // departures are processed from NameOwnerChanged: let them land
                tokio::time::sleep(Duration::from_millis(500)).await;
                rss_warm = rss_kib();
            }
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
        note_levels(&highest);
        let bounds = bounds_property(bus_address).await;
        let rss_end = rss_kib();
        drop(mic);
        drop(askers);
        (missed, cycles, cycle_failures, rss_warm, rss_end, bounds)
    };
    let (ran, (missed, cycles, cycle_failures, rss_warm, rss_end, bounds)) = tokio::join!(
        hearth::pipeline::run(agent.clone(), voice, on_turn, std::future::pending()),
        drive
    );
    sampler.abort();
    recogniser.abort();
    drop(face);
    if let Err(e) = ran {
        report.failed.push(format!("the pipeline: {e}"));
    }
    report.turns = turns.load(Ordering::SeqCst);
    report
        .failed
        .extend(failed.into_inner().unwrap_or_else(|e| e.into_inner()));
    report.missed = missed;
    report.cycles = cycles;
    report.cycle_failures = cycle_failures;
    report.rss_warm_kib = rss_warm;
    report.rss_end_kib = rss_end;
    match bounds {
        Ok(b) => report.bounds_at_end = b,
        Err(e) => report
            .cycle_failures
            .push(format!("the Bounds property: {e}")),
    }
    report.highest = highest.lock().unwrap_or_else(|e| e.into_inner()).clone();
    report.elapsed = started.elapsed();
    agent.stop(None);
    tools.stop(None);
    report
}
