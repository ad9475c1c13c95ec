//! A third-party Wyoming ASR server for the interoperability tests:
//! `wyoming-faster-whisper` (Python, faster-whisper on CTranslate2; `scripts/setup --test`
//! installs it in the test peers' venv, [`crate::venv::Venv::Peers`]) on loopback, with the
//! faster-whisper tiny.en weights that `scripts/fetch-models peer` puts in the model directory. Missing pieces fail the test with the fix; locally,
//! `HEARTH_SKIP_REAL_MODEL=1` skips (CI never sets it).

/// A running `wyoming-faster-whisper` on 127.0.0.1; killed when dropped.
pub struct FasterWhisper {
    child: Option<std::process::Child>,
    /// The port it listens on (kept across [`FasterWhisper::restart`]).
    pub port: u16,
    model: std::path::PathBuf,
    data: std::path::PathBuf,
    log: std::path::PathBuf,
}

impl FasterWhisper {
    /// Start the server on a free port and wait until it accepts connections; None when
    /// skipping is asked for and a piece is missing.
    pub fn start(tag: &str) -> Option<FasterWhisper> {
        let skip = std::env::var("HEARTH_SKIP_REAL_MODEL").as_deref() == Ok("1");
        let model = hearth::models::model_dir()
            .expect("a model directory")
            .join("faster-whisper-tiny.en");
        if !model.join("model.bin").is_file() {
            if skip {
                eprintln!(
                    "skipping: {} is missing (HEARTH_SKIP_REAL_MODEL=1)",
                    model.display()
                );
                return None;
            }
            panic!(
                "{}/model.bin is missing: run scripts/fetch-models peer (or set HEARTH_SKIP_REAL_MODEL=1 locally)",
                model.display()
            );
        }
        if let Err(why) = crate::venv::require(crate::venv::Venv::Peers, "wyoming_faster_whisper") {
            if skip {
                eprintln!("skipping: {why} (HEARTH_SKIP_REAL_MODEL=1)");
                return None;
            }
            panic!("{why}");
        }
        let tmp = std::env::temp_dir().join(format!("hearth-peer-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&tmp);
        std::fs::create_dir_all(&tmp).expect("a temp dir");
        // a free port: bind :0, read it, let it go
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free loopback port")
            .port();
        let mut peer = FasterWhisper {
            child: None,
            port,
            model,
            data: tmp.join("data"),
            log: tmp.join("server.log"),
        };
        peer.restart();
        Some(peer)
    }

    /// `tcp://127.0.0.1:PORT`.
    pub fn uri(&self) -> String {
        format!("tcp://127.0.0.1:{}", self.port)
    }

    /// Kill the server (nothing listens on the port afterwards).
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// (Re)start the server on the same port and wait until it accepts connections.
    pub fn restart(&mut self) {
        self.kill();
        let log = std::fs::File::create(&self.log).expect("the server log");
        let python = crate::venv::python(crate::venv::Venv::Peers);
        let child = std::process::Command::new(&python)
            .args([
                "-m",
                "wyoming_faster_whisper",
                "--uri",
                &self.uri(),
                "--model",
            ])
            .arg(&self.model)
            .arg("--data-dir")
            .arg(&self.data)
            .args([
                "--local-files-only",
                "--language",
                "en",
                "--cpu-threads",
                "2",
            ])
            // not the checkout: its `wyoming/` crate folder must not shadow the Python package
            .current_dir("/")
            .stdout(log.try_clone().expect("the log again"))
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| {
                panic!(
                    "{} does not start ({e}): {}",
                    python.display(),
                    crate::venv::FIX
                )
            });
        self.child = Some(child);
        let started = std::time::Instant::now();
        loop {
            if std::net::TcpStream::connect(("127.0.0.1", self.port)).is_ok() {
                return;
            }
            let exited = self
                .child
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten());
            if exited.is_some() || started.elapsed() > std::time::Duration::from_secs(120) {
                panic!(
                    "wyoming-faster-whisper did not start ({exited:?}):\n{}",
                    std::fs::read_to_string(&self.log).unwrap_or_default()
                );
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    }

    /// What the server logged so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for FasterWhisper {
    fn drop(&mut self) {
        self.kill();
    }
}
