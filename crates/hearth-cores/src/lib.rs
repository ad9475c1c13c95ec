//! How many of the machine's cores are free for hearth's compute now.
//!
//! whisper.cpp's and llama.cpp's threads meet at a barrier after every step of their graphs,
//! so when another program keeps a core busy, a thread that is not running holds the others
//! up: on 2 cores with `yes > /dev/null` beside it, long.wav with the daily set's prompt took
//! 1316 ms on two threads and 549 ms on one (436 ms on two, 586 on one, when idle;
//! `cargo run --release -p hearth-stt --example bench -- --threads N`), and a model turn
//! 3.0–3.3 s on two and 1.7–1.9 s on one (0.94 s on two idle). So each piece of work runs on
//! as many threads as cores were free lately ([`threads`]), at most the configured number.
//!
//! A thread started with the first question reads `/proc/stat` (the whole machine) and the
//! CPU time of this process and of the processes it named as its own ([`count_as_ours`]:
//! hearth's speech recogniser, which runs as a child) every [`EVERY`]; the busy time of the
//! rest over the last two readings is the load. Where `/proc` cannot be read, every core
//! counts as free.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

/// How often the load is read.
const EVERY: Duration = Duration::from_millis(250);

/// A core counts as free when at most this much of it is busy with other programs' work
/// (thousandths): a core half busy still holds the threads up at each barrier.
const BUSY_LEEWAY: u32 = 300;

/// Thousandths of a core other programs kept busy over the last readings (`u32::MAX`: not
/// known).
static OTHERS_BUSY: AtomicU32 = AtomicU32::new(u32::MAX);

/// Other processes whose CPU time counts as this one's.
static OURS: Mutex<Vec<u32>> = Mutex::new(Vec::new());

/// The threads to run on now: `max` less the cores other programs keep busy, at least one.
pub fn threads(max: usize) -> usize {
    static SAMPLER: OnceLock<()> = OnceLock::new();
    SAMPLER.get_or_init(start);
    match OTHERS_BUSY.load(Ordering::Relaxed) {
        u32::MAX => max.max(1),
        busy => free_threads(max, cores(), busy),
    }
}

/// From now on the CPU time of process `pid` (a child doing this program's work) is not
/// another program's load. Forgotten once the process has exited.
pub fn count_as_ours(pid: u32) {
    let mut ours = OURS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if !ours.contains(&pid) {
        ours.push(pid);
    }
}

/// `max` threads less the `cores` that others keep busy (`busy` thousandths of a core).
fn free_threads(max: usize, cores: usize, busy: u32) -> usize {
    let taken = busy.saturating_sub(BUSY_LEEWAY).div_ceil(1000) as usize;
    max.min(cores.saturating_sub(taken)).max(1)
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Starts the thread that reads the load (nothing where `/proc` cannot be read).
fn start() {
    let Some(first) = Reading::now() else {
        tracing::debug!("the load cannot be read (/proc): every core counts as free");
        return;
    };
    let spawned = std::thread::Builder::new()
        .name("hearth-load".into())
        .spawn(move || {
            let mut before = [first.clone(), first];
            loop {
                std::thread::sleep(EVERY);
                let Some(now) = Reading::now() else { return };
                // over the last two intervals: one reading is too short to say much
                OTHERS_BUSY.store(now.others_busy_since(&before[0]), Ordering::Relaxed);
                before.rotate_left(1);
                before[1] = now;
            }
        });
    if let Err(e) = spawned {
        tracing::warn!(error = %e, "the load reader did not start: every core counts as free");
    }
}

/// The machine's CPU time and ours so far, in clock ticks.
#[derive(Debug, Clone, PartialEq)]
struct Reading {
    /// All cores, every state.
    total: u64,
    /// All cores, idle or waiting for I/O.
    idle: u64,
    /// User and system time of this process (pid 0 here) and of each of its own.
    ours: Vec<(u32, u64)>,
}

impl Reading {
    fn now() -> Option<Reading> {
        let stat = std::fs::read_to_string("/proc/stat").ok()?;
        let own = std::fs::read_to_string("/proc/self/stat").ok()?;
        let mut reading = Reading::parse(&stat, &own)?;
        let mut ours = OURS
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        // an exited process is forgotten (its time no longer counts, and its pid may be reused)
        ours.retain(|&pid| {
            let time = std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|s| cpu_time(&s));
            if let Some(time) = time {
                reading.ours.push((pid, time));
            }
            time.is_some()
        });
        Some(reading)
    }

    /// From `/proc/stat`'s first line and `/proc/self/stat`.
    fn parse(stat: &str, own: &str) -> Option<Reading> {
        let cpu = stat.lines().next()?.strip_prefix("cpu ")?;
        let ticks: Vec<u64> = cpu
            .split_whitespace()
            .map(str::parse)
            .collect::<Result<_, _>>()
            .ok()?;
        // user nice system idle iowait irq softirq steal (guest time is in user already)
        let total = ticks.iter().take(8).sum();
        let idle = ticks.get(3)? + ticks.get(4).copied().unwrap_or(0);
        Some(Reading {
            total,
            idle,
            ours: vec![(0, cpu_time(own)?)],
        })
    }

    /// Thousandths of a core that other programs kept busy between `before` and this.
    fn others_busy_since(&self, before: &Reading) -> u32 {
        let total = self.total.saturating_sub(before.total);
        if total == 0 {
            return 0;
        }
        // a process counts over the interval only if it was read at both ends
        let ours: u64 = self
            .ours
            .iter()
            .filter_map(|(pid, now)| {
                let (_, then) = before.ours.iter().find(|(p, _)| p == pid)?;
                Some(now.saturating_sub(*then))
            })
            .sum();
        let busy = total
            .saturating_sub(self.idle.saturating_sub(before.idle))
            .saturating_sub(ours);
        let cores = cores() as u64;
        u32::try_from(busy * cores * 1000 / total).unwrap_or(u32::MAX - 1)
    }
}

/// utime plus stime from a `/proc/PID/stat` line.
fn cpu_time(stat: &str) -> Option<u64> {
    // the fields after the command name, which may hold spaces, in parentheses
    let after = stat.rsplit_once(')')?.1;
    let fields: Vec<&str> = after.split_whitespace().collect();
    // utime and stime are the 14th and 15th fields, the 12th and 13th after the name
    Some(fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    const OWN: &str = "4242 (hearth stt) S 1 4242 4242 0 -1 4194560 100 0 0 0 30 10 0 0 20 0 3 0";

    fn reading(user: u64, idle: u64, own: &str) -> Reading {
        let stat = format!("cpu  {user} 0 0 {idle} 0 0 0 0 0 0\ncpu0 1 2 3 4\n");
        Reading::parse(&stat, own).expect("a reading")
    }

    #[test]
    fn readings_are_parsed_from_proc() {
        let r = reading(100, 900, OWN);
        assert_eq!(
            r,
            Reading {
                total: 1000,
                idle: 900,
                ours: vec![(0, 40)],
            }
        );
        assert_eq!(Reading::parse("intr 1 2\n", OWN), None);
        assert_eq!(Reading::parse("cpu  1 2 x 4\n", OWN), None);
        assert_eq!(cpu_time("4242 (x) S 1 2"), None);
    }

    #[test]
    fn others_busy_leaves_out_idle_time_and_this_process() {
        let own_after = OWN.replace(" 30 10 ", " 80 10 ");
        let (before, after) = (reading(100, 900, OWN), reading(300, 1700, &own_after));
        // 1000 ticks: 800 idle, 200 busy, 50 of them this process's
        let busy = after.others_busy_since(&before);
        assert_eq!(u64::from(busy), 150 * cores() as u64);
        assert_eq!(before.others_busy_since(&before), 0);
    }

    #[test]
    fn a_process_of_ours_is_not_load_while_it_is_read_at_both_ends() {
        let (mut before, mut after) = (reading(100, 900, OWN), reading(300, 1700, OWN));
        before.ours.push((7, 1000));
        after.ours.push((7, 1120));
        // 200 busy ticks, 120 of them the child's
        assert_eq!(
            u64::from(after.others_busy_since(&before)),
            80 * cores() as u64
        );
        // a child that exited (or started) within the interval is not counted at all
        after.ours.pop();
        after.ours.push((8, 5000));
        assert_eq!(
            u64::from(after.others_busy_since(&before)),
            200 * cores() as u64
        );
    }

    #[test]
    fn a_child_of_this_test_is_ours_until_it_exits() {
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .expect("sleep starts");
        count_as_ours(child.id());
        count_as_ours(child.id());
        let read = Reading::now().expect("/proc is readable on Linux");
        assert_eq!(
            read.ours.iter().filter(|(p, _)| *p == child.id()).count(),
            1
        );
        child.kill().expect("kill");
        child.wait().expect("reaped");
        let read = Reading::now().expect("/proc is readable on Linux");
        assert!(read.ours.iter().all(|(p, _)| *p != child.id()));
        assert!(!OURS.lock().expect("not poisoned").contains(&child.id()));
    }

    #[test]
    fn a_core_kept_busy_by_others_is_not_run_on() {
        assert_eq!(free_threads(2, 2, 0), 2);
        assert_eq!(free_threads(2, 2, 250), 2);
        assert_eq!(free_threads(2, 2, 1000), 1);
        assert_eq!(free_threads(2, 2, 2000), 1);
        assert_eq!(free_threads(4, 8, 3000), 4);
        assert_eq!(free_threads(8, 8, 3000), 5);
        assert_eq!(free_threads(1, 2, 0), 1);
    }
}
