//! Months of daemon life, compressed (hearth-testkit's `soak.rs` says what runs):
//! `cargo bench --bench soak -- [--turns N] [--cycles N] [--warmup-turns N] [--warmup-cycles N]`.
//!
//! Defaults: 10,000 spoken turns and 1,000 provider cycles, the RSS first read after 1,000
//! turns and 100 cycles. Fails (exit 1) when RSS grew more than 5 MB after the warm-up, a
//! bounded container was ever over its limit, a turn failed or never came, or a provider
//! cycle failed. Needs `scripts/fetch-models` (the Piper voice) and `dbus-daemon`.

use std::process::ExitCode;

use hearth_testkit::{services, soak};

/// RSS growth allowed after the warm-up, KiB.
const RSS_GROWTH_KIB: u64 = 5 * 1024;

fn arg(args: &[String], flag: &str, default: usize) -> Result<usize, String> {
    match args.iter().position(|a| a == flag) {
        None => Ok(default),
        Some(i) => args
            .get(i + 1)
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| format!("{flag} needs a number")),
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let plan = (|| -> Result<soak::SoakPlan, String> {
        Ok(soak::SoakPlan {
            turns: arg(&args, "--turns", 10_000)?,
            cycles: arg(&args, "--cycles", 1_000)?,
            warmup_turns: arg(&args, "--warmup-turns", 1_000)?,
            warmup_cycles: arg(&args, "--warmup-cycles", 100)?,
        })
    })();
    let plan = match plan {
        Ok(p) => p,
        Err(e) => {
            eprintln!("soak: {e}");
            return ExitCode::FAILURE;
        }
    };
    let tts = match hearth::tts::TtsConfig::default_voice() {
        Ok(t) => t,
        Err(e) => {
            eprintln!("soak: the voice: {e}");
            return ExitCode::FAILURE;
        }
    };
    let state = std::env::temp_dir().join(format!("hearth-soak-{}", std::process::id()));
    // SAFETY: set before the runtime starts its threads; the demo tools read it.
    unsafe { std::env::set_var("HEARTH_DEMO_STATE", &state) };
    let bus = services::PrivateBus::start();
    let tools = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tools");
    let rt = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("soak: a tokio runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let report = rt.block_on(soak::soak(plan, &bus.address, tts, &tools));
    let _ = std::fs::remove_dir_all(&state);

    let growth = report.rss_end_kib as i64 - report.rss_warm_kib as i64;
    println!(
        "soak: {} turns ({} failed, {} never came), {} provider cycles ({} failed) in {:.0} s",
        report.turns,
        report.failed.len(),
        report.missed,
        report.cycles,
        report.cycle_failures.len(),
        report.elapsed.as_secs_f64()
    );
    println!(
        "RSS after the warm-up {:.1} MiB, at the end {:.1} MiB: {:+.2} MiB",
        report.rss_warm_kib as f64 / 1024.0,
        report.rss_end_kib as f64 / 1024.0,
        growth as f64 / 1024.0
    );
    println!("| container | highest | limit |\n|---|---|---|");
    for l in &report.highest {
        println!("| {} | {} | {} |", l.name, l.len, l.cap);
    }
    let mut ok = true;
    for f in report.failed.iter().chain(&report.cycle_failures).take(20) {
        eprintln!("failed: {f}");
        ok = false;
    }
    if report.turns < plan.turns || report.missed > 0 || report.cycles < plan.cycles {
        eprintln!("soak: not every turn or cycle ran");
        ok = false;
    }
    if !report.over().is_empty() {
        eprintln!("soak: over their limit: {:?}", report.over());
        ok = false;
    }
    if growth > RSS_GROWTH_KIB as i64 {
        eprintln!("soak: RSS grew {growth} KiB after the warm-up (limit {RSS_GROWTH_KIB})");
        ok = false;
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
