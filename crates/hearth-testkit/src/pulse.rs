//! A private PulseAudio server with null sinks (for the end-to-end tests, `room`, what the
//! microphone hears through its monitor, and `speaker`, where hearth speaks), killed on
//! drop. For the tests and benches that run audio on sound devices paced in real time.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// A running private PulseAudio server.
pub struct Pulse {
    /// Its runtime and home directories live here (removed on drop).
    pub dir: PathBuf,
    pid: Option<u32>,
    /// What a client needs to reach it (`PULSE_SERVER`, `PULSE_COOKIE`).
    pub env: Vec<(String, String)>,
}

impl Drop for Pulse {
    fn drop(&mut self) {
        if let Some(pid) = self.pid {
            let _ = Command::new("kill").arg(pid.to_string()).status();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Pulse {
    /// Starts one under the temporary directory, named by `tag` and this process, with the
    /// null sinks `room` and `speaker`.
    pub fn start(tag: &str) -> Result<Pulse, String> {
        Pulse::with_sinks(tag, &["room", "speaker"])
    }

    /// Starts one with these null sinks.
    pub fn with_sinks(tag: &str, sinks: &[&str]) -> Result<Pulse, String> {
        let dir = std::env::temp_dir().join(format!("hearth-{tag}-pulse-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let (run, home) = (dir.join("run"), dir.join("home"));
        for d in [&run, &home] {
            std::fs::create_dir_all(d).map_err(|e| format!("creating {}: {e}", d.display()))?;
        }
        let status = Command::new("pulseaudio")
            .env("XDG_RUNTIME_DIR", &run)
            .env("HOME", &home)
            .args([
                "--daemonize=yes",
                "--exit-idle-time=-1",
                "-n",
                "--load=module-native-protocol-unix",
            ])
            .args(
                sinks
                    .iter()
                    .map(|s| format!("--load=module-null-sink sink_name={s}")),
            )
            .arg("--load=module-always-sink")
            .status()
            .map_err(|e| {
                format!("pulseaudio does not run ({e}): apt-get install -y pulseaudio (scripts/setup --test does)")
            })?;
        if !status.success() {
            return Err(format!("pulseaudio failed to start: {status}"));
        }
        let socket = run.join("pulse/native");
        let pid_file = run.join("pulse/pid");
        let deadline = Instant::now() + Duration::from_secs(10);
        while !socket.exists() || !pid_file.exists() {
            if Instant::now() >= deadline {
                return Err(format!("no PulseAudio socket at {}", socket.display()));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let pid = std::fs::read_to_string(&pid_file)
            .ok()
            .and_then(|p| p.trim().parse().ok());
        let env = vec![
            ("PULSE_SERVER".into(), format!("unix:{}", socket.display())),
            (
                "PULSE_COOKIE".into(),
                home.join(".config/pulse/cookie").display().to_string(),
            ),
        ];
        Ok(Pulse { dir, pid, env })
    }

    /// Carries what hearth plays (`speaker`'s monitor) into what it hears (`room`) at unity
    /// gain, `latency_ms` late: hearth hears its own voice, as from a loudspeaker beside its
    /// microphone.
    pub fn loopback(&self, latency_ms: u32) -> Result<(), String> {
        let out = Command::new("pactl")
            .args([
                "load-module",
                "module-loopback",
                "source=speaker.monitor",
                "sink=room",
                &format!("latency_msec={latency_ms}"),
                // a fixed rate: both null sinks run on the same clock, as a loudspeaker and a
                // microphone on one sound card do (the loopback's rate adjustment otherwise
                // drifts the echo by ~0.5 % while it settles)
                "adjust_time=0",
            ])
            .envs(self.env.iter().cloned())
            .output()
            .map_err(|e| {
                format!("pactl does not run ({e}): apt-get install -y pulseaudio-utils")
            })?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "the loopback did not load: {}",
                String::from_utf8_lossy(&out.stderr)
            ))
        }
    }

    /// Plays a WAV into the `room` sink (as if said in the room), to its end.
    pub fn say(&self, wav: &Path) -> Result<(), String> {
        let played = Command::new("paplay")
            .arg("--device=room")
            .arg(wav)
            .envs(self.env.iter().cloned())
            .status()
            .map_err(|e| {
                format!("paplay does not run ({e}): apt-get install -y pulseaudio-utils")
            })?;
        if played.success() {
            Ok(())
        } else {
            Err(format!("paplay failed on {}: {played}", wav.display()))
        }
    }
}
