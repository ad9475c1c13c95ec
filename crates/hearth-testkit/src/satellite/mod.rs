//! Wyoming satellites for the tests: the real `wyoming-satellite` 1.0.0 from PyPI (in its own
//! virtual environment: it pins `wyoming==1.4.1`; `scripts/setup --test` makes it), its
//! microphone a script that streams silence in real time and plays a file into it when told
//! (`mic.py`), its speaker a file; and `hearth run` serving satellites, its turns read as
//! they come. Missing pieces fail the test with the fix; locally `HEARTH_SKIP_REAL_MODEL=1`
//! skips (CI never sets it).

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::services::free_port;
use crate::venv::Venv;

const MIC: &str = include_str!("mic.py");
const SPEAKER: &str = include_str!("speaker.py");

/// The virtual environment's Python: `$HEARTH_SATELLITE_PYTHON`, else where `scripts/setup
/// --test` puts it ([`crate::venv`]).
pub fn python() -> PathBuf {
    crate::venv::python(Venv::Satellite)
}

/// `text` spoken by espeak-ng (`scripts/setup` installs it) into `dir/name.wav`.
pub fn espeak(dir: &Path, name: &str, text: &str) -> PathBuf {
    let wav = dir.join(format!("{name}.wav"));
    let ok = Command::new("espeak-ng")
        .args(["-v", "en-us", "-s", "175", "-w"])
        .arg(&wav)
        .arg(text)
        .status()
        .expect("espeak-ng runs (scripts/setup installs it)");
    assert!(ok.success(), "espeak-ng failed for {text:?}");
    wav
}

/// Whether `wyoming-satellite` can run; None (skip) or a panic naming the fix when not.
pub fn available() -> Option<()> {
    let Err(why) = crate::venv::require(Venv::Satellite, "wyoming_satellite") else {
        return Some(());
    };
    if std::env::var("HEARTH_SKIP_REAL_MODEL").as_deref() == Ok("1") {
        eprintln!("skipping: {why} (HEARTH_SKIP_REAL_MODEL=1)");
        return None;
    }
    panic!("{why}");
}

/// A running `wyoming-satellite`; killed when dropped.
pub struct Satellite {
    child: Child,
    pub name: String,
    pub port: u16,
    dir: PathBuf,
}

impl Satellite {
    /// A satellite named `name` in `area`, streaming to whoever connects (hearth's wake word
    /// on its audio), on a free port, in `dir`.
    pub fn start(dir: &Path, name: &str, area: &str) -> Satellite {
        Satellite::start_with(dir, name, area, &[])
    }

    /// A satellite that listens for `ok_nabu` itself, with `wake` (a wake word service), and
    /// streams only what follows it.
    pub fn start_waking(dir: &Path, name: &str, area: &str, wake: &OpenWakeWord) -> Satellite {
        let uri = format!("tcp://127.0.0.1:{}", wake.port);
        let args = ["--wake-uri", uri.as_str(), "--wake-word-name", "ok_nabu"];
        Satellite::start_with(dir, name, area, &args)
    }

    /// A satellite that announces itself by zeroconf as `name` (at 127.0.0.1).
    pub fn start_announced(dir: &Path, name: &str, area: &str) -> Satellite {
        let args = ["--zeroconf-name", name, "--zeroconf-host", "127.0.0.1"];
        Satellite::start_with(dir, name, area, &args)
    }

    /// [`Satellite::start`] with more of its flags (`--zeroconf-name`: it announces itself).
    pub fn start_with(dir: &Path, name: &str, area: &str, extra: &[&str]) -> Satellite {
        let dir = dir.join(name);
        std::fs::create_dir_all(&dir).expect("a satellite dir");
        let mic = dir.join("mic.py");
        std::fs::write(&mic, MIC).expect("the mic script");
        let speaker = dir.join("speaker.py");
        std::fs::write(&speaker, SPEAKER).expect("the speaker script");
        let port = free_port();
        let log = std::fs::File::create(dir.join("satellite.log")).expect("a log");
        let speaker = format!(
            "python3 {} {} {}",
            speaker.display(),
            dir.join("speaker.raw").display(),
            dir.join("replied.times").display()
        );
        let child = Command::new(python())
            .args(["-m", "wyoming_satellite", "--name", name, "--area", area])
            .arg("--uri")
            .arg(format!("tcp://127.0.0.1:{port}"))
            .arg("--mic-command")
            .arg(format!(
                "python3 {} {} {}",
                mic.display(),
                dir.join("play").display(),
                dir.join("said.times").display()
            ))
            .arg("--snd-command")
            .arg(speaker)
            .arg("--debug")
            .args((!extra.contains(&"--zeroconf-name")).then_some("--no-zeroconf"))
            .args(extra)
            .current_dir("/")
            .stdout(log.try_clone().expect("the log again"))
            .stderr(log)
            .spawn()
            .expect("wyoming-satellite starts");
        let sat = Satellite {
            child,
            name: name.to_string(),
            port,
            dir,
        };
        sat.wait_listening();
        sat
    }

    fn wait_listening(&self) {
        let started = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "wyoming-satellite did not listen:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// `tcp://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("tcp://127.0.0.1:{}", self.port)
    }

    /// Say the WAV `wav` into its microphone (now: the mic script picks it up within 64 ms).
    pub fn say(&self, wav: &Path) {
        self.say_after(&[wav], Duration::ZERO);
    }

    /// Say the WAVs one after the other, `gap` of silence between them.
    pub fn say_after(&self, wavs: &[&Path], gap: Duration) {
        let stem = wavs
            .iter()
            .filter_map(|w| w.file_stem().and_then(|s| s.to_str()))
            .collect::<Vec<_>>()
            .join("-");
        let raw = self.dir.join(format!("{stem}.raw"));
        let silence = vec![0.0f32; (gap.as_secs_f64() * 16_000.0) as usize];
        let mut samples = Vec::new();
        for (i, wav) in wavs.iter().enumerate() {
            if i > 0 {
                samples.extend_from_slice(&silence);
            }
            samples.extend(hearth::audio::wav::read_16k_mono(wav).expect("a WAV to say"));
        }
        let bytes: Vec<u8> = samples
            .iter()
            .flat_map(|&s| hearth::voice::f32_to_i16(s).to_le_bytes())
            .collect();
        std::fs::write(&raw, bytes).expect("the raw audio");
        let trigger = self.dir.join("play.tmp");
        std::fs::write(&trigger, raw.display().to_string()).expect("the trigger");
        std::fs::rename(&trigger, self.dir.join("play")).expect("the trigger, whole");
    }

    /// The reply audio its speaker got so far: 22,050 Hz 16-bit mono samples.
    pub fn heard(&self) -> Vec<i16> {
        let bytes = std::fs::read(self.dir.join("speaker.raw")).unwrap_or_default();
        bytes
            .chunks_exact(2)
            .map(|b| i16::from_le_bytes([b[0], b[1]]))
            .collect()
    }

    /// What it logged so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("satellite.log")).unwrap_or_default()
    }

    /// When (Unix seconds) the last sample of each thing said went into its microphone.
    pub fn said_at(&self) -> Vec<f64> {
        times(&self.dir.join("said.times"))
    }

    /// When (Unix seconds) the first audio of each reply reached its speaker.
    pub fn replied_at(&self) -> Vec<f64> {
        times(&self.dir.join("replied.times"))
    }

    /// Kill it (it is not listening afterwards).
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Satellite {
    fn drop(&mut self) {
        self.kill();
    }
}

/// One number per line.
fn times(path: &Path) -> Vec<f64> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines().filter_map(|l| l.trim().parse().ok()).collect()
}

/// A satellite's own wake word service: `wyoming-openwakeword` 1.8.2 (its own virtual
/// environment: it pins `wyoming==1.2.0` and needs NumPy 1) with its `ok_nabu` model, on a
/// free port; killed when dropped.
pub struct OpenWakeWord {
    child: Child,
    pub port: u16,
}

impl OpenWakeWord {
    pub fn start(dir: &Path) -> OpenWakeWord {
        // its Python: `$HEARTH_OPENWAKEWORD_PYTHON`, else where `scripts/setup --test` puts it
        let python = crate::venv::require(Venv::OpenWakeWord, "wyoming_openwakeword")
            .unwrap_or_else(|why| panic!("{why}"));
        let port = free_port();
        let log = std::fs::File::create(dir.join("openwakeword.log")).expect("a log");
        let child = Command::new(python)
            .args([
                "-m",
                "wyoming_openwakeword",
                "--preload-model",
                "ok_nabu",
                "--uri",
            ])
            .arg(format!("tcp://127.0.0.1:{port}"))
            .current_dir("/")
            .stdout(log.try_clone().expect("the log again"))
            .stderr(log)
            .spawn()
            .expect("wyoming-openwakeword starts");
        let started = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "wyoming-openwakeword did not listen: {}",
                std::fs::read_to_string(dir.join("openwakeword.log")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        OpenWakeWord { child, port }
    }
}

impl Drop for OpenWakeWord {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `hearth run --no-audio --bus none --json` serving satellites (and nothing else), the demo
/// home's tools, its state in `dir`; SIGTERM when dropped.
pub struct Hearth {
    child: Child,
    turns: Arc<Mutex<Vec<Value>>>,
    pub log: PathBuf,
    pub state: PathBuf,
}

impl Hearth {
    /// `config` is the configuration file's text (its `[[satellite]]` entries).
    pub fn start(dir: &Path, config: &str, extra: &[&str]) -> Hearth {
        Hearth::spawn(dir, config, extra, None)
    }

    /// The same, with the D-Bus face on the session bus at `bus` (a private one).
    pub fn start_on_bus(dir: &Path, config: &str, bus: &str) -> Hearth {
        Hearth::spawn(dir, config, &[], Some(bus))
    }

    fn spawn(dir: &Path, config: &str, extra: &[&str], bus: Option<&str>) -> Hearth {
        let config_path = dir.join("hearth.toml");
        std::fs::write(&config_path, config).expect("a config file");
        let state = dir.join("state");
        std::fs::create_dir_all(&state).expect("a state dir");
        let log = dir.join("hearth.log");
        let mut cmd = Command::new(crate::hearth_exe());
        match bus {
            Some(address) => cmd
                .args(["run", "--no-audio", "--bus", "session"])
                .env("DBUS_SESSION_BUS_ADDRESS", address),
            None => cmd.args(["run", "--no-audio", "--bus", "none"]),
        };
        let mut child = cmd
            .args(["--json", "--config"])
            .arg(&config_path)
            .arg("--tools")
            .arg(crate::root().join("tools"))
            .args(extra)
            .env("HEARTH_DEMO_STATE", &state)
            .env("HEARTH_LOG", "hearth=info")
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&log).expect("a log"))
            .spawn()
            .expect("hearth starts");
        let turns = Arc::new(Mutex::new(Vec::new()));
        let stdout = child.stdout.take().expect("hearth's stdout");
        let seen = turns.clone();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout)
                .lines()
                .map_while(Result::ok)
            {
                match serde_json::from_str::<Value>(&line) {
                    Ok(v) => seen.lock().unwrap_or_else(|e| e.into_inner()).push(v),
                    Err(e) => panic!("hearth printed a line that is no turn ({e}): {line}"),
                }
            }
        });
        Hearth {
            child,
            turns,
            log,
            state,
        }
    }

    /// What it logged so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Waits until `needle` is in the log `times` times (panics with the log after `within`).
    pub fn wait_log(&self, needle: &str, times: usize, within: Duration) {
        let started = Instant::now();
        while self.log().matches(needle).count() < times {
            assert!(
                started.elapsed() < within,
                "{needle:?} not logged {times} times in {within:?}:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The turns so far.
    pub fn turns_now(&self) -> Vec<Value> {
        self.turns.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The turns so far, once there are at least `n` (panics with the log after `within`).
    pub fn turns(&self, n: usize, within: Duration) -> Vec<Value> {
        let started = Instant::now();
        loop {
            let turns = self.turns.lock().unwrap_or_else(|e| e.into_inner()).clone();
            if turns.len() >= n {
                return turns;
            }
            assert!(
                started.elapsed() < within,
                "{} of {n} turns in {within:?}: {turns:?}\n{}",
                turns.len(),
                self.log()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Hearth {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(10) {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
