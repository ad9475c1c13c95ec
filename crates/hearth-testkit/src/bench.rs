//! The frame of a bench without a harness (`benches/session.rs`, `benches/wake.rs`): skipped
//! when `cargo test --benches` runs it without `--bench` (it takes minutes), its options
//! parsed, then run; a bad option or a failure to run is a message and an exit status. Also
//! the machine's load, which every bench reports beside its figures.

use std::process::ExitCode;

/// Run the bench `name` on this process's arguments.
pub fn main_of<O>(
    name: &str,
    usage: &str,
    parse: impl FnOnce(&[String]) -> Result<O, String>,
    run: impl FnOnce(&O) -> Result<(), String>,
) -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if !args.iter().any(|a| a == "--bench") {
        println!("{name}: skipped (run it with `cargo bench --bench {name}`)");
        return ExitCode::SUCCESS;
    }
    let opts = match parse(&args) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("{name}: {e}\n{usage}");
            return ExitCode::from(2);
        }
    };
    match run(&opts) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{name}: {e}");
            ExitCode::FAILURE
        }
    }
}

/// A bench's options (what follows `--bench`), one at a time, each taking its value.
pub struct Flags<'a> {
    it: std::vec::IntoIter<&'a String>,
}

impl<'a> Flags<'a> {
    pub fn new(args: &'a [String]) -> Flags<'a> {
        let kept: Vec<&String> = args.iter().filter(|a| *a != "--bench").collect();
        Flags {
            it: kept.into_iter(),
        }
    }

    /// The next option.
    pub fn next_flag(&mut self) -> Option<&'a str> {
        self.it.next().map(String::as_str)
    }

    /// The value after `flag`.
    pub fn value(&mut self, flag: &str) -> Result<&'a str, String> {
        self.next_flag()
            .ok_or_else(|| format!("{flag} needs a value"))
    }

    /// The value after `flag`, a number.
    pub fn number(&mut self, flag: &str) -> Result<f64, String> {
        let v = self.value(flag)?;
        v.parse::<f64>().map_err(|e| format!("{flag} {v}: {e}"))
    }
}

/// Writes a bench's JSON report to `file` (pretty, with a final newline).
pub fn write_json(file: &std::path::Path, report: &serde_json::Value) -> Result<(), String> {
    let text = serde_json::to_string_pretty(report).map_err(|e| e.to_string())?;
    std::fs::write(file, text + "\n").map_err(|e| format!("writing {}: {e}", file.display()))
}

/// The system's load averages (1, 5, 15 minutes) from /proc/loadavg: a busy machine makes the
/// latencies, and through them the conversation, different.
pub fn load_average() -> Option<String> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    Some(
        text.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" "),
    )
}
