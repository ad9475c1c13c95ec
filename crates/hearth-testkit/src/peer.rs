//! Third-party Wyoming servers for the interoperability tests: a text-to-speech server,
//! `wyoming-piper` ([`WyomingPiper`], in its own venv, [`crate::venv::Venv::Piper`]), and an ASR
//! server, `wyoming-faster-whisper` (Python, faster-whisper on CTranslate2; `scripts/setup --test`
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
        let port = crate::services::free_port();
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
        let mut args: Vec<std::ffi::OsString> = vec![
            "-m".into(),
            "wyoming_faster_whisper".into(),
            "--uri".into(),
            self.uri().into(),
        ];
        args.extend(["--model".into(), self.model.clone().into_os_string()]);
        args.extend(["--data-dir".into(), self.data.clone().into_os_string()]);
        args.extend(
            [
                "--local-files-only",
                "--language",
                "en",
                "--cpu-threads",
                "2",
            ]
            .map(Into::into),
        );
        self.child = Some(serve(crate::venv::Venv::Peers, &args, self.port, &self.log));
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

/// A Python Wyoming server of `venv` started with `args` (from `/`: in the checkout the Rust
/// `wyoming/` crate's folder would pass for the Python package), its output in `log`, once it
/// accepts connections on `port`; a panic with its log when it does not within two minutes.
fn serve(
    venv: crate::venv::Venv,
    args: &[std::ffi::OsString],
    port: u16,
    log: &std::path::Path,
) -> std::process::Child {
    let out = std::fs::File::create(log).expect("the server log");
    let python = crate::venv::python(venv);
    let mut child = std::process::Command::new(&python)
        .args(args)
        .current_dir("/")
        .stdout(out.try_clone().expect("the log again"))
        .stderr(out)
        .spawn()
        .unwrap_or_else(|e| {
            panic!(
                "{} does not start ({e}): {}",
                python.display(),
                crate::venv::FIX
            )
        });
    let started = std::time::Instant::now();
    loop {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return child;
        }
        let exited = child.try_wait().ok().flatten();
        if exited.is_some() || started.elapsed() > std::time::Duration::from_secs(120) {
            let _ = child.kill();
            panic!(
                "{} did not start ({exited:?}):\n{}",
                venv.name(),
                std::fs::read_to_string(log).unwrap_or_default()
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

/// A running `wyoming-piper` (Home Assistant's text-to-speech add-on, on the `piper-tts`
/// Python package) on 127.0.0.1, speaking the default Piper voice from the model directory
/// (`scripts/fetch-models`); killed when dropped.
pub struct WyomingPiper {
    child: std::process::Child,
    /// The port it listens on.
    pub port: u16,
    log: std::path::PathBuf,
}

impl WyomingPiper {
    /// The voice it is given (`--voice`), by the name it goes by there.
    pub const VOICE: &'static str = "en_US-joe-medium";

    /// Start the server on a free port and wait until it accepts connections; None when
    /// skipping is asked for and a piece is missing.
    pub fn start(tag: &str) -> Option<WyomingPiper> {
        let skip = std::env::var("HEARTH_SKIP_REAL_MODEL").as_deref() == Ok("1");
        let models = hearth::models::model_dir().expect("a model directory");
        let voice = models.join(format!("{}.onnx", Self::VOICE));
        let missing = if !voice.is_file() {
            Some(format!(
                "{} is missing: run scripts/fetch-models",
                voice.display()
            ))
        } else {
            crate::venv::require(crate::venv::Venv::Piper, "wyoming_piper").err()
        };
        if let Some(why) = missing {
            if skip {
                eprintln!("skipping: {why} (HEARTH_SKIP_REAL_MODEL=1)");
                return None;
            }
            panic!("{why}");
        }
        // its own data directory, holding the voice only (it must find nothing to fetch)
        let tmp = std::env::temp_dir().join(format!("hearth-piper-{tag}-{}", std::process::id()));
        let data = tmp.join("data");
        let _ = std::fs::remove_dir_all(&tmp);
        std::fs::create_dir_all(&data).expect("a temp dir");
        for file in [
            format!("{}.onnx", Self::VOICE),
            format!("{}.onnx.json", Self::VOICE),
        ] {
            std::os::unix::fs::symlink(models.join(&file), data.join(&file)).expect("a link");
        }
        let port = crate::services::free_port();
        let log = tmp.join("server.log");
        let mut args: Vec<std::ffi::OsString> = vec!["-m".into(), "wyoming_piper".into()];
        args.extend(["--uri".into(), format!("tcp://127.0.0.1:{port}").into()]);
        args.extend(["--voice".into(), Self::VOICE.into()]);
        args.extend([
            "--data-dir".into(),
            data.into_os_string(),
            "--local-files-only".into(),
        ]);
        let child = serve(crate::venv::Venv::Piper, &args, port, &log);
        Some(WyomingPiper { child, port, log })
    }

    /// `tcp://127.0.0.1:PORT`.
    pub fn uri(&self) -> String {
        format!("tcp://127.0.0.1:{}", self.port)
    }

    /// What the server logged so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for WyomingPiper {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
