//! Real services for the home-device and D-Bus tests: a private
//! `dbus-daemon` and a private `mosquitto` broker per test, each on its own socket or port
//! and killed when dropped. Both are Debian packages that `scripts/setup --test` installs; a
//! missing one fails the test with that fix.

/// A private session bus (`dbus-daemon --session`); killed when dropped.
pub struct PrivateBus {
    child: std::process::Child,
    /// Its address (`unix:path=…,guid=…`), for `zbus::connection::Builder::address`,
    /// `busctl --address` and `DBUS_SESSION_BUS_ADDRESS`.
    pub address: String,
}

impl PrivateBus {
    pub fn start() -> PrivateBus {
        use std::io::BufRead;
        let mut child = std::process::Command::new("dbus-daemon")
            .args(["--session", "--nofork", "--nopidfile", "--print-address=1"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap_or_else(|e| {
                panic!(
                    "cannot start dbus-daemon ({e}): run scripts/setup --test (apt package dbus)"
                )
            });
        let mut line = String::new();
        let stdout = child.stdout.take().expect("dbus-daemon's stdout");
        std::io::BufReader::new(stdout)
            .read_line(&mut line)
            .expect("dbus-daemon printed its address");
        let address = line.trim().to_string();
        assert!(
            address.starts_with("unix:"),
            "dbus-daemon printed {address:?}"
        );
        PrivateBus { child, address }
    }

    /// The daemon's process id (tests stop and continue it).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// A zbus connection to this bus.
    pub async fn connect(&self) -> zbus::Connection {
        zbus::connection::Builder::address(self.address.as_str())
            .build()
            .await
            .expect("connecting to the private bus")
    }
}

/// Every signal the D-Bus face at `/io/hearth/Agent` sends on the bus at `address`
/// (`Heard`, `Replied`, `ToolCalled`, `PropertiesChanged`), from now on.
pub async fn agent_signals(address: &str) -> zbus::MessageStream {
    let conn = zbus::connection::Builder::address(address)
        .build()
        .await
        .expect("connecting to the private bus");
    let rule = zbus::MatchRule::builder()
        .msg_type(zbus::message::Type::Signal)
        .path("/io/hearth/Agent")
        .build()
        .expect("a valid match rule");
    zbus::MessageStream::for_match_rule(rule, &conn, std::num::NonZeroUsize::new(256))
        .await
        .expect("subscribing to the face's signals")
}

impl Drop for PrivateBus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The new `State` of a `PropertiesChanged` signal from the D-Bus face, if it has one.
pub fn state_change(m: &zbus::Message) -> Option<String> {
    let (_, changed, _) = m
        .body()
        .deserialize::<(
            String,
            std::collections::HashMap<String, zbus::OwnedVariant>,
            Vec<String>,
        )>()
        .expect("PropertiesChanged(s, a{sv}, as)");
    changed
        .get("State")
        .map(|v| String::try_from(v.clone()).expect("State is a string"))
}

/// A private mosquitto broker on a free loopback port; killed when dropped.
pub struct Broker {
    child: std::process::Child,
    pub port: u16,
    dir: std::path::PathBuf,
}

impl Broker {
    /// Start a broker that allows anonymous clients.
    pub fn start(tag: &str) -> Broker {
        Self::start_with(tag, "allow_anonymous true\n")
    }

    /// Start a broker with extra configuration lines (`password_file …`).
    pub fn start_with(tag: &str, extra: &str) -> Broker {
        let dir = std::env::temp_dir().join(format!("hearth-broker-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("a temp dir");
        let port = free_port();
        let conf = dir.join("mosquitto.conf");
        std::fs::write(
            &conf,
            format!("listener {port} 127.0.0.1\npersistence false\nlog_dest stderr\n{extra}"),
        )
        .expect("writing mosquitto.conf");
        let program = ["/usr/sbin/mosquitto", "mosquitto"]
            .into_iter()
            .find(|p| !p.starts_with('/') || std::path::Path::new(p).is_file())
            .unwrap_or("mosquitto");
        let log = std::fs::File::create(dir.join("mosquitto.log")).expect("a log file");
        let child = std::process::Command::new(program)
            .arg("-c")
            .arg(&conf)
            .stdout(std::process::Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| {
                panic!("cannot start mosquitto ({e}): run scripts/setup --test (apt package mosquitto)")
            });
        let broker = Broker { child, port, dir };
        broker.wait_listening(port);
        broker
    }

    /// Wait until the broker listens on `port` (a listener of its own config; mosquitto
    /// opens them one after the other).
    pub fn wait_listening(&self, port: u16) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                std::time::Instant::now() < deadline,
                "mosquitto did not listen on {port}: {}",
                self.log()
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }

    /// `mqtt://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("mqtt://127.0.0.1:{}", self.port)
    }

    /// What the broker logged.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("mosquitto.log")).unwrap_or_default()
    }

    /// Its scratch directory (for password files and the like).
    pub fn dir(&self) -> &std::path::Path {
        &self.dir
    }
}

impl Drop for Broker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A free loopback TCP port (bind :0, read it, let it go).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free loopback port")
        .port()
}
