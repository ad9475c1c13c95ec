//! `hearth run --no-audio` on a private bus, as systemd would run it: a notify socket the test reads (READY=1,
//! STATUS=, WATCHDOG=1), the real model, a private broker named in a config file, the
//! shipped lights example as its tools, and a state directory (its timers) of its own.

use super::services::{Broker, PrivateBus};

/// A running daemon; killed when dropped.
pub struct Daemon {
    pub child: std::process::Child,
    pub notify: std::os::unix::net::UnixDatagram,
    pub dir: std::path::PathBuf,
    pub log: std::path::PathBuf,
}

impl Daemon {
    /// Start hearth on `bus` with the broker's config; `watchdog_ms` sets WATCHDOG_USEC.
    pub fn start(
        tag: &str,
        bus: &PrivateBus,
        broker: &Broker,
        model: &std::path::Path,
        watchdog_ms: Option<u64>,
    ) -> Daemon {
        Daemon::start_with(tag, bus, broker, model, watchdog_ms, &[])
    }

    /// [`Daemon::start`] with more tool manifests: (file name, TOML text); `{dir}` in the
    /// text is the daemon's scratch directory.
    pub fn start_with(
        tag: &str,
        bus: &PrivateBus,
        broker: &Broker,
        model: &std::path::Path,
        watchdog_ms: Option<u64>,
        manifests: &[(&str, &str)],
    ) -> Daemon {
        let dir = std::env::temp_dir().join(format!("hearth-daemon-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("tools")).expect("a temp dir");
        let examples = crate::root().join("tools/examples");
        std::fs::copy(examples.join("lights.toml"), dir.join("tools/lights.toml"))
            .expect("tools/examples/lights.toml");
        for (name, text) in manifests {
            let text = text.replace("{dir}", &dir.display().to_string());
            std::fs::write(dir.join("tools").join(name), text).expect("a tool manifest");
        }
        let config = dir.join("hearth.toml");
        std::fs::write(&config, format!("[mqtt]\nurl = \"{}\"\n", broker.url()))
            .expect("a config file");
        let socket = dir.join("notify.sock");
        let notify = std::os::unix::net::UnixDatagram::bind(&socket).expect("a notify socket");
        notify
            .set_read_timeout(Some(std::time::Duration::from_millis(200)))
            .expect("a read timeout");
        let log = dir.join("hearth.log");
        let mut cmd = std::process::Command::new(crate::hearth_exe());
        cmd.args(["run", "--no-audio", "--bus", "session", "--config"])
            .arg(&config)
            .arg("--tools")
            .arg(dir.join("tools"))
            .arg("--model")
            .arg(model)
            .env("DBUS_SESSION_BUS_ADDRESS", &bus.address)
            .env("NOTIFY_SOCKET", &socket)
            .env("HEARTH_LOG", "info")
            .env("HEARTH_STATE_DIR", dir.join("state"))
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::fs::File::create(&log).expect("a log file"));
        if let Some(ms) = watchdog_ms {
            cmd.env("WATCHDOG_USEC", (ms * 1000).to_string());
        }
        let child = cmd.spawn().expect("starting hearth");
        Daemon {
            child,
            notify,
            dir,
            log,
        }
    }

    /// Its scratch directory (`{dir}` in its manifests).
    pub fn dir(&self) -> &std::path::Path {
        &self.dir
    }

    /// What hearth logged.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Notify messages received within `wait` (each datagram's lines).
    pub fn messages(&self, wait: std::time::Duration) -> Vec<String> {
        let deadline = std::time::Instant::now() + wait;
        let mut out = Vec::new();
        let mut buf = [0u8; 4096];
        while std::time::Instant::now() < deadline {
            if let Ok(n) = self.notify.recv(&mut buf) {
                out.extend(
                    String::from_utf8_lossy(&buf[..n])
                        .lines()
                        .map(str::to_string),
                );
            }
        }
        out
    }

    /// Wait for READY=1 (the model loads first); panics with the log on timeout or exit.
    pub fn wait_ready(&mut self) -> Vec<String> {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(180);
        let mut seen = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            if let Ok(n) = self.notify.recv(&mut buf) {
                seen.extend(
                    String::from_utf8_lossy(&buf[..n])
                        .lines()
                        .map(str::to_string),
                );
                if seen.iter().any(|m| m == "READY=1") {
                    return seen;
                }
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("hearth exited ({status}) before READY=1:\n{}", self.log());
            }
            assert!(
                std::time::Instant::now() < deadline,
                "no READY=1 within 180 s; saw {seen:?}\n{}",
                self.log()
            );
        }
    }

    /// The daemon's resident set size, KiB (VmRSS).
    pub fn rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .expect("the daemon's /proc status");
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|n| n.parse().ok())
            .expect("VmRSS")
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// `busctl --address=ADDR ARGS…` (or gdbus when `gdbus` is the first arg): (ok, stdout, stderr).
pub fn bus_tool(bus: &PrivateBus, args: &[&str]) -> (bool, String, String) {
    let out = if args.first() == Some(&"gdbus") {
        std::process::Command::new("gdbus")
            .args([args[1], "--address", &bus.address])
            .args(&args[2..])
            .output()
            .expect("running gdbus (apt package libglib2.0-bin)")
    } else {
        std::process::Command::new("busctl")
            .arg(format!("--address={}", bus.address))
            .args(args)
            .output()
            .expect("running busctl (apt package systemd)")
    };
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}
