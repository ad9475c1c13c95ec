//! A real Home Assistant for the tests: 2024.3.3 from its venv ([`Venv::HomeAssistant`],
//! which `scripts/setup --test` makes), started by the test with the demo integration in a
//! fresh config directory on a free loopback port, onboarded, with a long-lived token, and the
//! test house ([`house`]) set up in it through its WebSocket API.
//!
//! The WebSocket commands go through `homeassistant/house.py` (aiohttp, from the same venv),
//! one connection per command; the REST calls through ureq. A missing venv is an error naming
//! the fix (`scripts/setup --test`). The scripts/ha-registries corpus is made from the same
//! house by the same `house.py`.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::Value;

use crate::venv::{self, Venv};

/// The Home Assistant release the venv holds and the corpus was made with.
pub const VERSION: &str = "2024.3.3";

/// How long Home Assistant may take to answer after it is started (it answers in seconds
/// once Python's byte code is cached, in under a minute on a cold first run).
pub const START_TIMEOUT: Duration = Duration::from_secs(180);

/// How long a graceful [`HomeAssistant::stop`] may take before the process group is killed.
const STOP_TIMEOUT: Duration = Duration::from_secs(30);

const HOUSE_PY: &str = include_str!("homeassistant/house.py");
const HOUSE_JSON: &str = include_str!("homeassistant/house.json");

/// The test house (`homeassistant/house.json`, the one place it is written down), set up on
/// the demo integration's entities by every [`HomeAssistant::start`]:
///
/// - areas: the demo's own Living Room (alias "lounge"), Kitchen and Bedroom, and Office
///   ("study"), Hallway ("hall") and Garage, created;
/// - the demo's lights, two switches, four covers, two thermostats and two fans, each put in an
///   area, some with aliases ("night light", "big light", "desk lamp", "porch light", "fairy
///   lights", "air conditioner", "heating"), all exposed to the conversation agent except
///   `light.living_room_rgbww_lights` ([`House::UNEXPOSED`]), which hearth must never call;
/// - four media players exposed by entity id ([`House::exposed_by_id`]): the demo's media
///   players and locks have no unique id, so they are not in the entity registry and can have
///   no area or alias; media players are not exposed by default.
///
/// Everything else the demo brings keeps Home Assistant's defaults (its locks, vacuums,
/// humidifiers, water heaters and some sensors are exposed; they have no area).
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
pub struct House {
    /// The areas, in the order they are set up.
    pub areas: Vec<Area>,
    /// The entities given an area, aliases and an exposure.
    pub entities: Vec<Entity>,
    /// Entities outside the entity registry, exposed to the conversation agent by id.
    pub exposed_by_id: Vec<String>,
}

/// An area of the test house.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
pub struct Area {
    /// Its area id (Home Assistant makes it from the name; the setup checks it is this).
    pub id: String,
    /// Its name.
    pub name: String,
    /// Its aliases, as the area registry holds them.
    pub aliases: Vec<String>,
}

/// An entity of the test house, as its entity registry entry is set up.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
pub struct Entity {
    /// `domain.object_id`.
    pub entity_id: String,
    /// The area id it is put in.
    pub area: String,
    /// Its aliases.
    pub aliases: Vec<String>,
    /// Whether it is exposed to the conversation agent (Assist).
    pub exposed: bool,
}

impl House {
    /// The one entity of the house that is not exposed.
    pub const UNEXPOSED: &'static str = "light.living_room_rgbww_lights";

    /// The entity `entity_id`, if the house sets it up.
    pub fn entity(&self, entity_id: &str) -> Option<&Entity> {
        self.entities.iter().find(|e| e.entity_id == entity_id)
    }

    /// The area `id`, if the house has it.
    pub fn area(&self, id: &str) -> Option<&Area> {
        self.areas.iter().find(|a| a.id == id)
    }

    /// Every entity id the house exposes: its exposed entities, then those exposed by id.
    pub fn exposed(&self) -> Vec<&str> {
        let registered = self.entities.iter().filter(|e| e.exposed);
        registered
            .map(|e| e.entity_id.as_str())
            .chain(self.exposed_by_id.iter().map(String::as_str))
            .collect()
    }
}

/// The test house, read from the `house.json` compiled in.
pub fn house() -> &'static House {
    static HOUSE: OnceLock<House> = OnceLock::new();
    HOUSE.get_or_init(|| {
        serde_json::from_str(HOUSE_JSON)
            .unwrap_or_else(|e| panic!("homeassistant/house.json does not parse: {e}"))
    })
}

/// A running Home Assistant with the test house; killed, with its process group, when
/// dropped. Its config directory is removed then too, unless the thread is panicking or it
/// did not start (the log stays for a look).
pub struct HomeAssistant {
    child: Option<Child>,
    python: PathBuf,
    dir: PathBuf,
    log: PathBuf,
    token_file: PathBuf,
    url: String,
    token: String,
    agent: ureq::Agent,
    /// Keep the config directory when dropped: it did not start as it should.
    keep: bool,
}

impl HomeAssistant {
    /// Start Home Assistant in a fresh temp config directory on a free port, wait until it
    /// answers ([`START_TIMEOUT`]), onboard its first user, write a long-lived token to the
    /// token file (mode 0600) and set up the test house. Err says what failed and the fix: the
    /// venv missing (`scripts/setup --test`), Home Assistant not answering (its log's path and
    /// tail), a command refused.
    pub fn start() -> Result<HomeAssistant, String> {
        let python = venv::require(Venv::HomeAssistant, "homeassistant")?;
        let dir = fresh_dir()?;
        let port = free_port()?;
        let url = format!("http://127.0.0.1:{port}");
        let mut ha = HomeAssistant {
            child: None,
            python,
            log: dir.join("hass.log"),
            token_file: dir.join("token"),
            dir,
            url,
            token: String::new(),
            agent: ureq::Agent::config_builder()
                .http_status_as_error(false)
                .timeout_global(Some(Duration::from_secs(10)))
                .build()
                .new_agent(),
            keep: false,
        };
        match ha.set_up(port) {
            Ok(()) => Ok(ha),
            Err(e) => {
                ha.keep = true;
                Err(e)
            }
        }
    }

    /// [`HomeAssistant::start`] after the directory and port are chosen.
    fn set_up(&mut self, port: u16) -> Result<(), String> {
        for (name, text) in [("house.py", HOUSE_PY), ("house.json", HOUSE_JSON)] {
            let path = self.dir.join(name);
            std::fs::write(&path, text).map_err(|e| format!("writing {}: {e}", path.display()))?;
        }
        let dir = self.dir.display().to_string();
        self.helper(&["config", &dir, &port.to_string()], None)?;
        self.spawn()?;
        self.wait_ready()?;
        self.helper(&["setup", &self.url, &dir], None)
            .map_err(|e| format!("setting up the test house: {e}; {}", self.log_tail()))?;
        self.token = std::fs::read_to_string(&self.token_file)
            .map_err(|e| format!("reading {}: {e}", self.token_file.display()))?
            .trim()
            .to_string();
        Ok(())
    }

    /// `http://127.0.0.1:PORT` (the same across [`HomeAssistant::restart`]).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The long-lived access token.
    pub fn token(&self) -> &str {
        &self.token
    }

    /// The file holding the token (mode 0600), for `[homeassistant] token_file`.
    pub fn token_file(&self) -> &Path {
        &self.token_file
    }

    /// The config directory (`configuration.yaml`, `.storage/`, the log, the token).
    pub fn config_dir(&self) -> &Path {
        &self.dir
    }

    /// Home Assistant's output (stdout and stderr), in the config directory.
    pub fn log_file(&self) -> &Path {
        &self.log
    }

    /// One WebSocket command (`{"type": …, …}`, without `id`) on a connection of its own: its
    /// `result`, or Err with Home Assistant's error code and message when `success` is false.
    pub fn ws(&self, command: Value) -> Result<Value, String> {
        let token_file = self.token_file.display().to_string();
        let out = self.helper(&["ws", &self.url, &token_file], Some(&command.to_string()))?;
        serde_json::from_str(&out).map_err(|e| format!("{command}: the answer is not JSON ({e})"))
    }

    /// The state object of `entity_id` (`GET /api/states/ID`): `state`, `attributes`,
    /// `last_changed`…; Err on any status but 200.
    pub fn state(&self, entity_id: &str) -> Result<Value, String> {
        let (status, body) = self.get(&format!("/api/states/{entity_id}"), true)?;
        if status != 200 {
            return Err(format!("GET /api/states/{entity_id}: {status} {body}"));
        }
        serde_json::from_str(&body)
            .map_err(|e| format!("GET /api/states/{entity_id}: not JSON ({e}): {body}"))
    }

    /// Whether the process is still running.
    pub fn is_running(&mut self) -> bool {
        matches!(self.child.as_mut().map(Child::try_wait), Some(Ok(None)))
    }

    /// Stop Home Assistant: SIGTERM to its process group (it saves its registries and tokens
    /// as it stops), SIGKILL after 30 s, then wait for it. Nothing answers on the port
    /// afterwards; the config directory stays for [`HomeAssistant::restart`].
    pub fn stop(&mut self) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        signal_group(&child, libc::SIGTERM);
        let deadline = Instant::now() + STOP_TIMEOUT;
        while matches!(child.try_wait(), Ok(None)) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(100));
        }
        signal_group(&child, libc::SIGKILL);
        let _ = child.wait();
    }

    /// Kill Home Assistant at once (SIGKILL to its process group), as a crash would: what it
    /// had not saved yet is lost (it saves the entity registry up to 10 s after a change).
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            signal_group(&child, libc::SIGKILL);
            let _ = child.wait();
        }
    }

    /// Stop Home Assistant and start it again on the same config directory and port, then wait
    /// until it is ready ([`HomeAssistant::wait_ready`]). The token still works and the house
    /// is still set up: both are in `.storage/`.
    pub fn restart(&mut self) -> Result<(), String> {
        self.stop();
        self.spawn()?;
        self.wait_ready()
    }

    /// Wait until Home Assistant answers `GET /api/onboarding` and, once there is a token,
    /// says it is running (`GET /api/config`) with every entity of the house in its states;
    /// Err when it exits first or [`START_TIMEOUT`] passes, with its log's path and tail.
    pub fn wait_ready(&mut self) -> Result<(), String> {
        let started = Instant::now();
        loop {
            let last = match self.ready() {
                Ok(()) => return Ok(()),
                Err(why) => why,
            };
            let exited = match self.child.as_mut().map(Child::try_wait) {
                None => Some("it is not started".to_string()),
                Some(Ok(Some(status))) => Some(format!("it exited ({status})")),
                Some(Ok(None)) => None,
                Some(Err(e)) => Some(format!("waiting for it failed ({e})")),
            };
            if let Some(exited) = exited {
                return Err(format!(
                    "Home Assistant at {} is not ready: {exited}; {}",
                    self.url,
                    self.log_tail()
                ));
            }
            if started.elapsed() > START_TIMEOUT {
                return Err(format!(
                    "Home Assistant at {} is not ready after {} s ({last}); {}",
                    self.url,
                    START_TIMEOUT.as_secs(),
                    self.log_tail()
                ));
            }
            std::thread::sleep(Duration::from_millis(250));
        }
    }

    /// Ok when ready (see [`HomeAssistant::wait_ready`]), else what is missing.
    fn ready(&self) -> Result<(), String> {
        let (status, _) = self.get("/api/onboarding", false)?;
        if status != 200 {
            return Err(format!("GET /api/onboarding: {status}"));
        }
        if self.token.is_empty() {
            return Ok(());
        }
        let (status, body) = self.get("/api/config", true)?;
        let config: Value = serde_json::from_str(&body).unwrap_or_default();
        let state = config.get("state").and_then(Value::as_str).unwrap_or("");
        if status != 200 || state != "RUNNING" {
            return Err(format!("GET /api/config: {status}, state {state:?}"));
        }
        let (status, body) = self.get("/api/states", true)?;
        let states: Vec<Value> = serde_json::from_str(&body).unwrap_or_default();
        let has = |id: &str| states.iter().any(|s| s["entity_id"] == id);
        let all = house().entities.iter().map(|e| e.entity_id.as_str());
        let mut all = all.chain(house().exposed_by_id.iter().map(String::as_str));
        match all.find(|id| !has(id)) {
            None if status == 200 => Ok(()),
            None => Err(format!("GET /api/states: {status}")),
            Some(id) => Err(format!("no state of {id} yet")),
        }
    }

    /// `GET PATH`, with the token when `auth`: the status and body.
    fn get(&self, path: &str, auth: bool) -> Result<(u16, String), String> {
        let mut request = self.agent.get(format!("{}{path}", self.url));
        if auth {
            request = request.header("Authorization", format!("Bearer {}", self.token));
        }
        let mut answer = request
            .call()
            .map_err(|e| format!("GET {}{path}: {e}", self.url))?;
        let body = answer
            .body_mut()
            .read_to_string()
            .map_err(|e| format!("GET {}{path}: reading the body: {e}", self.url))?;
        Ok((answer.status().as_u16(), body))
    }

    /// Start `python -m homeassistant -c DIR` in a process group of its own, its output to the
    /// log file. `--skip-pip`: the venv has every requirement, nothing is installed at run time.
    fn spawn(&mut self) -> Result<(), String> {
        use std::os::unix::process::CommandExt;
        let log = std::fs::File::create(&self.log)
            .map_err(|e| format!("creating {}: {e}", self.log.display()))?;
        let err = log
            .try_clone()
            .map_err(|e| format!("{}: {e}", self.log.display()))?;
        let child = Command::new(&self.python)
            .args(["-m", "homeassistant", "--skip-pip", "--log-no-color", "-c"])
            .arg(&self.dir)
            .current_dir("/")
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(err)
            .process_group(0)
            .spawn()
            .map_err(|e| {
                format!(
                    "{} -m homeassistant does not start ({e}): {}",
                    self.python.display(),
                    venv::FIX
                )
            })?;
        self.child = Some(child);
        Ok(())
    }

    /// Run `house.py ARGS` (from the config directory) with the venv's python, `stdin` fed to
    /// it: its stdout, or Err with its stderr.
    fn helper(&self, args: &[&str], stdin: Option<&str>) -> Result<String, String> {
        use std::io::Write;
        let mut child = Command::new(&self.python)
            .arg(self.dir.join("house.py"))
            .args(args)
            .current_dir("/")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| {
                format!(
                    "{} does not run ({e}): {}",
                    self.python.display(),
                    venv::FIX
                )
            })?;
        if let Some(mut pipe) = child.stdin.take() {
            pipe.write_all(stdin.unwrap_or_default().as_bytes())
                .map_err(|e| format!("house.py {}: writing its input: {e}", args[0]))?;
        }
        let out = child
            .wait_with_output()
            .map_err(|e| format!("house.py {}: {e}", args[0]))?;
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr);
            return Err(err.trim().trim_start_matches("house.py: ").to_string());
        }
        String::from_utf8(out.stdout).map_err(|e| format!("house.py {}: {e}", args[0]))
    }

    /// "its log FILE ends with:" and the last lines of it.
    fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        let tail = lines[lines.len().saturating_sub(30)..].join("\n");
        format!("its log {} ends with:\n{tail}", self.log.display())
    }
}

impl Drop for HomeAssistant {
    fn drop(&mut self) {
        self.kill();
        if !self.keep && !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// Send `signal` to the child's process group (its id is the child's pid: `process_group(0)`).
fn signal_group(child: &Child, signal: libc::c_int) {
    let Ok(pid) = libc::pid_t::try_from(child.id()) else {
        return;
    };
    // SAFETY: kill(2) takes no pointers; the group is the child's own, not yet reaped.
    unsafe {
        libc::kill(-pid, signal);
    }
}

/// A new empty directory under the temp dir, one per Home Assistant.
fn fresh_dir() -> Result<PathBuf, String> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("hearth-homeassistant-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    Ok(dir)
}

/// A free loopback port: bind :0, read it, let it go.
fn free_port() -> Result<u16, String> {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| format!("no free loopback port: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_house_parses_and_agrees_with_itself() {
        let h = house();
        assert_eq!(h.areas.len(), 6);
        for e in &h.entities {
            assert!(h.area(&e.area).is_some(), "{} is in no area", e.entity_id);
        }
        let unexposed: Vec<&str> = h
            .entities
            .iter()
            .filter(|e| !e.exposed)
            .map(|e| e.entity_id.as_str())
            .collect();
        assert_eq!(unexposed, [House::UNEXPOSED]);
        assert!(h.exposed().contains(&"media_player.walkman"));
        assert!(!h.exposed().contains(&House::UNEXPOSED));
    }
}
