//! Timers (`crates/hearth-core/src/timers/`): the crash test at length, how late a ring is, and what running
//! timers cost when nothing happens.
//!
//! `cargo bench --bench timers [-- --rounds N]`:
//! - **crash**: N rounds (1,000 by default) of random changes to timers served by a child
//!   process (this bench run as `--serve DIR`) killed with SIGKILL at a random moment; after
//!   each, the file must hold exactly what was acknowledged (or that and the change in
//!   flight). Reports the rounds, the changes acknowledged, and how often the change in
//!   flight was kept;
//! - **lateness**: 1,000 timers of 2 to 6 s set at once, each ring timed at its subscriber:
//!   median, p99 and max;
//! - **idle**: 100 timers an hour long running, the process's CPU time over 10 s of nothing.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::{Duration, Instant};

use hearth::timers::TimersMsg;
use hearth_testkit::{bench, timers};

const USAGE: &str = "usage: cargo bench --bench timers [-- --rounds N]";

struct Options {
    rounds: usize,
    serve: Option<PathBuf>,
}

fn parse(args: &[String]) -> Result<Options, String> {
    let mut o = Options {
        rounds: 1000,
        serve: None,
    };
    let mut f = bench::Flags::new(args);
    while let Some(flag) = f.next_flag() {
        match flag {
            "--rounds" => o.rounds = f.number(flag)? as usize,
            "--serve" => o.serve = Some(PathBuf::from(f.value(flag)?)),
            other => return Err(format!("unknown option {other}")),
        }
    }
    Ok(o)
}

fn main() -> ExitCode {
    bench::main_of("timers", USAGE, parse, run)
}

fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("hearth-bench-timers-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn run(o: &Options) -> Result<(), String> {
    if let Some(dir) = &o.serve {
        timers::serve(dir);
        return Ok(());
    }
    println!(
        "load average (1, 5, 15 min) at the start: {}",
        bench::load_average().unwrap_or_default()
    );
    crash(o.rounds)?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    rt.block_on(lateness())?;
    rt.block_on(idle())?;
    println!(
        "load average at the end: {}",
        bench::load_average().unwrap_or_default()
    );
    Ok(())
}

fn crash(rounds: usize) -> Result<(), String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let dir = scratch("crash");
    let spawn = |d: &Path| {
        let mut c = Command::new(&exe);
        c.arg("--bench")
            .arg("--serve")
            .arg(d)
            .env("RUST_LOG", "off");
        c
    };
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_secs());
    let t = Instant::now();
    let r = timers::crash_rounds(spawn, &dir, rounds, seed)?;
    println!(
        "crash: {} rounds killed at random moments (seed {seed}), {} changes acknowledged, every file as acknowledged; the change in flight kept in {} rounds; {:.1} s",
        r.rounds,
        r.acknowledged,
        r.in_flight_kept,
        t.elapsed().as_secs_f64()
    );
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

async fn lateness() -> Result<(), String> {
    let n = 1000;
    for churn in [false, true] {
        // a directory each: the first actor's last write may still be under way
        let dir = scratch(if churn { "late-churn" } else { "late" });
        let late = timers::ring_lateness(&dir, n, churn).await?;
        let _ = std::fs::remove_dir_all(&dir);
        println!(
            "lateness: {n} timers of 2-6 s set at once{}: median {} ms, p99 {} ms, max {} ms late; earliest {} ms",
            if churn { ", another changed back to back (a write under way at every ring)" } else { "" },
            late[n / 2],
            late[n * 99 / 100],
            late[n - 1],
            late[0]
        );
    }
    Ok(())
}

/// This process's CPU time (user + system), from /proc/self/stat, in clock ticks.
fn cpu_ticks() -> Result<u64, String> {
    let stat = std::fs::read_to_string("/proc/self/stat").map_err(|e| e.to_string())?;
    let after = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or_default();
    let fields: Vec<&str> = after.split_whitespace().collect();
    let num = |i: usize| {
        fields
            .get(i)
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0)
    };
    // utime and stime: fields 14 and 15 of the line, 12 and 13 after the name
    Ok(num(11) + num(12))
}

async fn idle() -> Result<(), String> {
    let dir = scratch("idle");
    let t = timers::spawn(&dir).await?;
    for i in 0..100 {
        ractor::call!(t, |reply| TimersMsg::Start {
            name: Some(format!("t{i}")),
            length: Duration::from_secs(3600 + i),
            room: None,
            reminder: None,
            reply,
        })
        .map_err(|e| e.to_string())?
        .map_err(|e| e.to_string())?;
    }
    let before = cpu_ticks()?;
    tokio::time::sleep(Duration::from_secs(10)).await;
    let used = cpu_ticks()? - before;
    println!(
        "idle: 100 timers running, the whole bench process over 10 s: {used} clock ticks of CPU ({} ms)",
        used * 10
    );
    t.stop(None);
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
