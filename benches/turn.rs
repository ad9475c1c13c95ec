//! The end of a turn on spoken requests: `cargo bench --bench turn -- [OPTIONS]`.
//!
//! Every request of a session set (`tests/session/demo.jsonl`) is spoken by the Piper voice
//! (paces 0.85/1.0/1.2 in turn) over a room's noise (−50 dBFS) and fed, frame by frame, to the
//! Listen actor as the daemon runs it (the Silero VAD; Smart Turn v3.2 asked at the first
//! pause). Twice:
//!
//! 1. **As said**: how long after the last word the utterance ended: at the first pause
//!    (`early_ms`, where Smart Turn heard a finished request) or after the whole hangover.
//! 2. **With a pause inside**: the same audio with `--pause` ms (400) of the room's noise
//!    stretched into the longest gap between words in the middle half of the speech (a
//!    person stopping to think: "set the thermostat to … 21.5 degrees"). Premature: the
//!    utterance ended in that pause, so the rest would have been a request of its own.
//!    Requests with no gap of 30 ms there are left out (counted).
//!
//! Last, Smart Turn's own probability on every request as said and on its part before that
//! pause (each with the 200 ms of pause Listen gives it), against thresholds from 0.5 to 0.95:
//! whether any threshold tells them apart. The same with `--end-of-turn silence` gives the
//! hangover alone, for comparison. (Piper's own hesitation, "…" in the text, pauses 80 ms at
//! most, under the first pause: it cannot stand for a person stopping to think.)
//! Options: `--set NAME|FILE` (demo), `--pause MS` (400), `--end-of-turn smart-turn|silence`,
//! `--json FILE`. Needs `scripts/fetch-models` (voice, Silero, Smart Turn, ONNX Runtime).
//! Prints Markdown; figures do not change the exit status.

use std::process::ExitCode;

use hearth::audio::listen::{ListenConfig, TurnModel, VadKind};
use hearth::voice::SAMPLE_RATE;
use hearth_testkit::{bench, listen, session};
use serde_json::json;

const USAGE: &str = "usage: cargo bench --bench turn -- [--set NAME|FILE] [--pause MS] \
[--end-of-turn smart-turn|silence] [--json FILE]";

/// Room noise before and after each request, ms.
const LEAD_MS: usize = 500;
const TAIL_MS: usize = 1500;

struct Options {
    set: String,
    pause_ms: usize,
    smart_turn: bool,
    json: Option<std::path::PathBuf>,
}

fn parse_args(args: &[String]) -> Result<Options, String> {
    let mut o = Options {
        set: "demo".into(),
        pause_ms: 400,
        smart_turn: true,
        json: None,
    };
    let mut f = bench::Flags::new(args);
    while let Some(a) = f.next_flag() {
        match a {
            "--set" => o.set = f.value(a)?.to_string(),
            "--pause" => o.pause_ms = f.number(a)? as usize,
            "--end-of-turn" => {
                o.smart_turn = match f.value(a)? {
                    "smart-turn" => true,
                    "silence" => false,
                    v => return Err(format!("--end-of-turn {v:?}: smart-turn or silence")),
                }
            }
            "--json" => o.json = Some(f.value(a)?.into()),
            _ => return Err(format!("unknown argument {a:?}")),
        }
    }
    Ok(o)
}

fn main() -> ExitCode {
    bench::main_of("turn", USAGE, parse_args, run)
}

fn samples(ms: usize) -> usize {
    ms * SAMPLE_RATE as usize / 1000
}

/// The daemon's Listen config: the Silero VAD and (unless `silence`) Smart Turn.
fn config(smart_turn: bool) -> Result<ListenConfig, String> {
    let dir = hearth::models::model_dir().map_err(|e| e.to_string())?;
    let model = |f: &str| {
        let p = dir.join(f);
        if p.is_file() {
            Ok(p)
        } else {
            Err(format!(
                "{} is missing: run scripts/fetch-models",
                p.display()
            ))
        }
    };
    let config = ListenConfig {
        vad: VadKind::Silero {
            model: model(hearth::audio::silero::SILERO_FILE)?,
            ort_library: None,
        },
        ..ListenConfig::default()
    };
    Ok(match smart_turn {
        true => config.with_end_of_turn(TurnModel {
            model: model(hearth::audio::smart_turn::SMART_TURN_FILE)?,
            ort_library: None,
        }),
        false => config,
    })
}

/// The Smart Turn model, as the Listen actor loads it.
fn smart_turn() -> Result<hearth::audio::smart_turn::SmartTurn, String> {
    let dir = hearth::models::model_dir().map_err(|e| e.to_string())?;
    let lib = hearth::onnx::find_library(None, |k| std::env::var_os(k), std::slice::from_ref(&dir))
        .map_err(|e| e.to_string())?;
    hearth::audio::smart_turn::SmartTurn::load(
        &dir.join(hearth::audio::smart_turn::SMART_TURN_FILE),
        &lib,
    )
    .map_err(|e| e.to_string())
}

/// Smart Turn's probability for `speech` followed by [`TURN_PAUSE_MS`] of the room's noise.
fn prob(model: &mut hearth::audio::smart_turn::SmartTurn, speech: &[f32]) -> Result<f32, String> {
    let mut heard = vec![0.0; samples(LEAD_MS)];
    heard.extend_from_slice(speech);
    heard.extend(vec![
        0.0;
        samples(hearth::audio::listen::TURN_PAUSE_MS as usize)
    ]);
    session::run::add_noise(&mut heard, session::run::NOISE_DBFS, 7);
    model.complete_prob(&heard).map_err(|e| e.to_string())
}

/// Room silence before and after `clip`, and −50 dBFS of noise over all of it.
fn scene(clip: &[f32], seed: u64) -> Vec<f32> {
    let mut s = vec![0.0; samples(LEAD_MS)];
    s.extend_from_slice(clip);
    s.extend(vec![0.0; samples(TAIL_MS)]);
    session::run::add_noise(&mut s, session::run::NOISE_DBFS, seed);
    s
}

fn run(opts: &Options) -> Result<(), String> {
    let cases = session::set::load(&session::set::set_path(&opts.set))?;
    let config = config(opts.smart_turn)?;
    let mut speaker = session::run::Speaker::load()?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let (mut waited, mut early, mut split) = (Vec::new(), 0, 0);
    let (mut paused, mut premature, mut no_gap) = (0, Vec::new(), 0);
    // Smart Turn's probability on each request as said and on its part before the pause,
    // each with the 200 ms of pause the Listen actor gives it: where a threshold would fall
    let mut model = smart_turn()?;
    let (mut p_whole, mut p_part) = (Vec::new(), Vec::new());
    for (i, case) in cases.iter().enumerate() {
        let clip = speaker.speak(i, &case.say)?;
        p_whole.push(prob(&mut model, &clip)?);
        if let Some((s, e)) = session::run::inner_gap(&clip) {
            p_part.push(prob(&mut model, &clip[..(s + e) / 2])?);
        }
        let heard = rt.block_on(listen::utterances(&config, &scene(&clip, i as u64)))?;
        if heard.len() > 1 {
            split += 1;
        }
        if let Some(u) = heard.last() {
            let ms = (u.start + u.samples.len() as u64 - u.speech_end) as f64 * 1000.0
                / f64::from(SAMPLE_RATE);
            if ms <= f64::from(config.early_ms) + 32.0 {
                early += 1;
            }
            waited.push(ms);
        }
        let Some(gap) = session::run::inner_gap(&clip) else {
            no_gap += 1;
            continue;
        };
        // digital silence: the scene's noise goes over the pause too
        let silence = vec![0.0; samples(opts.pause_ms)];
        let (clip, at) = session::run::with_pause(&clip, gap, &silence);
        let heard = rt.block_on(listen::utterances(&config, &scene(&clip, i as u64)))?;
        paused += 1;
        let resumes = (samples(LEAD_MS) + at + silence.len()) as u64;
        if heard
            .iter()
            .any(|u| u.start + (u.samples.len() as u64) < resumes)
        {
            premature.push(case.say.clone());
        }
    }
    let median = session::report::median(waited.clone());
    let p95 = session::report::p95(waited.clone());
    let pct = |n: usize, of: usize| 100.0 * n as f64 / of.max(1) as f64;
    let label = if opts.smart_turn {
        "smart-turn"
    } else {
        "silence"
    };
    println!("## End of turn ({label}), set {}\n", opts.set);
    println!("| measure | result |\n|---|---|");
    println!(
        "| requests as said: ended at the first pause ({} ms) | {:.1} % ({early}/{}) |",
        config.early_ms,
        pct(early, waited.len()),
        waited.len()
    );
    println!(
        "| silence waited after the last word, median / p95 | {} / {} ms |",
        median.map_or("–".into(), |v| format!("{v:.0}")),
        p95.map_or("–".into(), |v| format!("{v:.0}"))
    );
    println!("| requests as said heard as two or more utterances | {split} |");
    println!(
        "| with a {} ms pause inside: ended in the pause (premature) | {:.1} % ({}/{paused}; {no_gap} without a gap between words left out) |",
        opts.pause_ms,
        pct(premature.len(), paused),
        premature.len()
    );
    for p in &premature {
        println!("- premature: {p:?}");
    }
    println!("\n| threshold | requests as said ended early | parts before a pause ended early |\n|---|---|---|");
    for t in [0.5f32, 0.6, 0.7, 0.8, 0.9, 0.95] {
        let over = |v: &[f32]| v.iter().filter(|&&p| p > t).count();
        println!(
            "| {t:.2} | {:.1} % | {:.1} % |",
            pct(over(&p_whole), p_whole.len()),
            pct(over(&p_part), p_part.len())
        );
    }
    if let Some(file) = &opts.json {
        bench::write_json(
            file,
            &json!({
                "set": opts.set, "end_of_turn": label, "pause_ms": opts.pause_ms,
                "requests": waited.len(), "ended_at_first_pause": early,
                "waited_ms": waited, "split": split, "paused": paused,
                "premature": premature, "no_gap": no_gap,
                "p_whole": p_whole, "p_part": p_part,
            }),
        )?;
    }
    Ok(())
}
