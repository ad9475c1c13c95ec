//! Crash tests of the timers' file: a process that serves timer changes over its stdin
//! ([`serve`]) is sent random changes and killed with SIGKILL at a random moment; the file
//! it leaves must hold exactly the timers it had acknowledged, or those and the one change
//! it was sent but had not yet acknowledged ([`crash_rounds`]). The fast tests run a few
//! rounds (the test binary serves, re-run as an ignored helper); `cargo bench --bench
//! timers` runs a thousand.
//!
//! The protocol, a line each way: `start NAME SECS`, `cancel NAME`, `pause NAME`,
//! `resume NAME`, `add NAME MS`; the answer [`ANSWER`] then `ok` or `err TEXT` (other lines
//! the server prints, such as a test harness's, are not answers). Timers are minutes long:
//! none rings during a round.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use hearth::timers::{Run, Store, Timers, TimersArgs, TimersMsg, Which};

/// A timers actor over the state directory `dir`.
pub async fn spawn(dir: &Path) -> Result<ractor::ActorRef<TimersMsg>, String> {
    let args = TimersArgs {
        store: Store::in_dir(dir),
    };
    let (t, _) = ractor::Actor::spawn(None, Timers, args)
        .await
        .map_err(|e| e.to_string())?;
    Ok(t)
}

/// What begins an answer line.
pub const ANSWER: &str = "HEARTH-TIMERS ";

/// Serve timer changes on stdin for the state directory `dir` until stdin ends.
pub fn serve(dir: &Path) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    rt.block_on(async {
        let timers = spawn(dir).await.expect("the timers actor starts");
        let mut out = std::io::stdout().lock();
        for line in std::io::stdin().lock().lines() {
            let Ok(line) = line else { break };
            let answer = match one(&timers, &line).await {
                Ok(()) => "ok".to_string(),
                Err(e) => format!("err {e}"),
            };
            let _ = writeln!(out, "{ANSWER}{answer}");
            let _ = out.flush();
        }
    });
}

async fn one(timers: &ractor::ActorRef<TimersMsg>, line: &str) -> Result<(), String> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let named = |n: &str| Which::Named(n.to_string());
    let done = match words.as_slice() {
        ["start", name, secs] => {
            let secs: u64 = secs.parse().map_err(|_| format!("bad seconds {secs}"))?;
            ractor::call!(timers, |reply| TimersMsg::Start {
                name: Some(name.to_string()),
                length: Duration::from_secs(secs),
                room: None,
                reminder: None,
                reply,
            })
            .map(|r| r.map(drop))
        }
        ["cancel", name] => {
            ractor::call!(timers, TimersMsg::Cancel, named(name)).map(|r| r.map(drop))
        }
        ["pause", name] => {
            ractor::call!(timers, TimersMsg::Pause, named(name)).map(|r| r.map(drop))
        }
        ["resume", name] => {
            ractor::call!(timers, TimersMsg::Resume, named(name)).map(|r| r.map(drop))
        }
        ["add", name, ms] => {
            let ms: i64 = ms.parse().map_err(|_| format!("bad milliseconds {ms}"))?;
            ractor::call!(timers, TimersMsg::Adjust, named(name), ms).map(|r| r.map(drop))
        }
        _ => return Err(format!("unknown command {line:?}")),
    };
    done.map_err(|e| e.to_string())?.map_err(|e| e.to_string())
}

/// A timer as the crash test compares it: its length (with what was added) and whether it
/// is paused.
type Kept = BTreeMap<String, (u64, bool)>;

/// What the file holds now.
fn on_disk(dir: &Path) -> Kept {
    Store::in_dir(dir)
        .load()
        .timers
        .into_iter()
        .map(|t| {
            let paused = matches!(t.run, Run::Paused { .. });
            (t.name.unwrap_or_default(), (t.total_ms, paused))
        })
        .collect()
}

/// `kept` after `command`, if the server carried it out.
fn after(kept: &Kept, command: &str) -> Kept {
    let mut k = kept.clone();
    let w: Vec<&str> = command.split_whitespace().collect();
    match w.as_slice() {
        ["start", n, s] => {
            k.insert(n.to_string(), (s.parse::<u64>().unwrap_or(0) * 1000, false));
        }
        ["cancel", n] => {
            k.remove(*n);
        }
        ["pause", n] => {
            if let Some(t) = k.get_mut(*n) {
                t.1 = true;
            }
        }
        ["resume", n] => {
            if let Some(t) = k.get_mut(*n) {
                t.1 = false;
            }
        }
        ["add", n, ms] => {
            if let Some(t) = k.get_mut(*n) {
                t.0 = (t.0 as i64 + ms.parse::<i64>().unwrap_or(0)).max(0) as u64;
            }
        }
        _ => {}
    }
    k
}

/// A small deterministic generator (xorshift64*), so a failing round can be run again.
struct Dice(u64);

impl Dice {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// A random change to the timers the server has (by the model `kept`).
fn random_command(dice: &mut Dice, kept: &Kept, serial: &mut u64) -> String {
    let names: Vec<&String> = kept.keys().collect();
    let pick = |dice: &mut Dice| names[dice.below(names.len() as u64) as usize].clone();
    match (names.is_empty(), dice.below(6)) {
        (true, _) | (_, 0 | 1) => {
            *serial += 1;
            format!("start t{serial} {}", 120 + dice.below(3600))
        }
        (false, 2) => format!("cancel {}", pick(dice)),
        (false, 3) => format!("pause {}", pick(dice)),
        (false, 4) => format!("resume {}", pick(dice)),
        (false, _) => format!(
            "add {} {}",
            pick(dice),
            1000 * (dice.below(120) as i64 - 60)
        ),
    }
}

/// What the rounds found.
#[derive(Debug, Default)]
pub struct CrashReport {
    pub rounds: usize,
    /// Changes acknowledged in all.
    pub acknowledged: usize,
    /// Rounds killed with a change sent and not yet answered that the file holds anyway.
    pub in_flight_kept: usize,
}

/// `rounds` rounds against servers `spawn` starts for a directory (each round goes on from
/// the file the last left: a restart after the crash): a few random changes, a SIGKILL at a
/// random moment, and the file compared with what was acknowledged. An error says the
/// round, the seed and the difference.
pub fn crash_rounds(
    spawn: impl Fn(&Path) -> Command,
    dir: &Path,
    rounds: usize,
    seed: u64,
) -> Result<CrashReport, String> {
    let mut dice = Dice(seed | 1);
    let mut report = CrashReport::default();
    let mut serial = 0u64;
    for round in 0..rounds {
        let mut kept = on_disk(dir);
        let mut child = spawn(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start the timers server: {e}"))?;
        let mut stdin = child.stdin.take().ok_or("no stdin")?;
        let mut answers = BufReader::new(child.stdout.take().ok_or("no stdout")?).lines();
        let sends = 1 + dice.below(12);
        let mut in_flight = None;
        for i in 0..sends {
            let command = random_command(&mut dice, &kept, &mut serial);
            writeln!(stdin, "{command}").map_err(|e| format!("round {round}: {e}"))?;
            stdin.flush().map_err(|e| format!("round {round}: {e}"))?;
            if i + 1 == sends {
                // the last is killed in flight, at a random moment of its handling
                std::thread::sleep(Duration::from_micros(dice.below(8000)));
                in_flight = Some(command);
                break;
            }
            let answer = loop {
                let line = answers
                    .next()
                    .ok_or_else(|| format!("round {round}: the server ended"))?
                    .map_err(|e| format!("round {round}: {e}"))?;
                // a harness may have begun the line ("test helper ... ")
                if let Some((_, a)) = line.split_once(ANSWER) {
                    break a.to_string();
                }
            };
            if answer == "ok" {
                kept = after(&kept, &command);
                report.acknowledged += 1;
            }
        }
        let _ = child.kill();
        let _ = child.wait();
        let found = on_disk(dir);
        let with_last = in_flight.as_deref().map(|c| after(&kept, c));
        if found == kept {
        } else if Some(&found) == with_last.as_ref() {
            report.in_flight_kept += 1;
        } else {
            return Err(format!(
                "round {round} (seed {seed}): the file holds {found:?}, acknowledged {kept:?}, in flight {in_flight:?}"
            ));
        }
        report.rounds += 1;
    }
    Ok(report)
}

/// How late each of `n` timers of 2 to 6 seconds rang, in milliseconds, sorted: they are
/// set at once on a fresh actor over the state directory `dir`, and each ring is timed as
/// it reaches a subscriber, while the rest are still being set. With `churn`, another
/// timer is changed back to back until the last has rung, so a write is under way at every
/// ring. Must run on a runtime with its timers enabled.
pub async fn ring_lateness(dir: &Path, n: usize, churn: bool) -> Result<Vec<i64>, String> {
    let t = spawn(dir).await?;
    let churner = churn.then(|| {
        let t = t.clone();
        tokio::spawn(async move {
            let churn = || Which::Named("churn".to_string());
            let started = ractor::call!(t, |reply| TimersMsg::Start {
                name: Some("churn".to_string()),
                length: Duration::from_secs(3600),
                room: None,
                reminder: None,
                reply,
            });
            let mut writes = u64::from(matches!(started, Ok(Ok(_))));
            while writes > 0 {
                let sign = if writes % 2 == 0 { 1 } else { -1 };
                match ractor::call!(t, TimersMsg::Adjust, churn(), sign * 1000) {
                    Ok(Ok(_)) => writes += 1,
                    _ => break,
                }
            }
            writes
        })
    });
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    t.cast(TimersMsg::Subscribe(tx))
        .map_err(|e| e.to_string())?;
    let heard = tokio::spawn(async move {
        let mut late = Vec::with_capacity(n);
        while late.len() < n {
            let Ok(Some(f)) = tokio::time::timeout(Duration::from_secs(30), rx.recv()).await else {
                break;
            };
            if let Run::Running { due_ms } = f.timer.run {
                late.push(unix_ms() - due_ms);
            }
        }
        late
    });
    for i in 0..n {
        ractor::call!(t, |reply| TimersMsg::Start {
            name: Some(format!("t{i}")),
            length: Duration::from_secs(2 + (i % 5) as u64),
            room: None,
            reminder: None,
            reply,
        })
        .map_err(|e| e.to_string())?
        .map_err(|e| e.to_string())?;
    }
    let mut late = heard.await.map_err(|e| e.to_string())?;
    // (its last write ends before the directory is another's)
    let _ = t.stop_and_wait(None, None).await;
    if let Some(c) = churner {
        let writes = c.await.map_err(|e| e.to_string())?;
        if writes < n as u64 {
            return Err(format!(
                "only {writes} changes were written while {n} timers rang"
            ));
        }
    }
    if late.len() != n {
        return Err(format!(
            "{} of {n} timers rang within 30 s of each other",
            late.len()
        ));
    }
    late.sort_unstable();
    Ok(late)
}

/// Milliseconds since the Unix epoch, now.
fn unix_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}
