//! Interoperability with the reference implementation: the `wyoming` Python package's own
//! `AsyncTcpClient` (`wyoming_client.py` beside this file) describes and transcribes the fixtures
//! through the real `hearth-stt` on loopback.

mod common;
// the Python peers' venvs (`scripts/setup --test`), shared with hearth's tests: std only, by
// path, since this crate does not depend on hearth-testkit
#[allow(dead_code)]
#[path = "../../hearth-testkit/src/venv.rs"]
mod venv;

use std::path::Path;
use std::process::Command;

use common::TcpServer;

/// The test peers' Python with `wyoming` 1.10.2; fails (never skips) when it is missing: CI
/// installs it.
fn require_python_wyoming() {
    if let Err(why) = venv::require(venv::Venv::Peers, "wyoming.client") {
        panic!("{why}");
    }
}

fn python_transcribe(server: &TcpServer, wav: &Path) -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/wyoming_client.py");
    let out = Command::new(venv::python(venv::Venv::Peers))
        .arg(&script)
        .arg("127.0.0.1")
        .arg(server.port().to_string())
        .arg(wav)
        .output()
        .expect("run the test peers' python");
    assert!(
        out.status.success(),
        "wyoming_client.py failed ({:?}):\n{}\nserver log:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr),
        server.log()
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

#[test]
fn python_wyoming_client_transcribes_through_hearth_stt() {
    require_python_wyoming();
    let Some((model, [kitchen, long])) = common::fixtures(["kitchen.wav", "long.wav"]) else {
        return;
    };
    // With an initial prompt, as hearth runs it (room names from its tools).
    let prompt = "Rooms: kitchen, living room, bedroom. Devices: light, fan.";
    let server = TcpServer::start(&model, &["--prompt", prompt]);
    assert!(server.log().contains(prompt), "{}", server.log());

    let text = python_transcribe(&server, &kitchen);
    assert!(
        text.to_lowercase().contains("kitchen light"),
        "kitchen.wav: {text:?}"
    );
    let text = python_transcribe(&server, &long);
    assert!(text.to_lowercase().contains("time"), "long.wav: {text:?}");
}
