//! Model files: pull (download, resume, verify), locate, verify, and the `hearth models` CLI,
//! against a local HTTP server on loopback (no other network).

use std::ffi::OsString;
use std::io::{BufRead, BufReader, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use hearth::models::{self, ModelError, ModelStatus};
use hearth::preset::{ModelSource, Preset};
use sha2::{Digest, Sha256};

// ---------------------------------------------------------------------------------------------
// A tiny HTTP/1.1 file server on loopback.

/// One request the server got.
#[derive(Debug, Clone)]
struct Req {
    path: String,
    range: Option<String>,
}

#[derive(Clone, Default)]
struct Behaviour {
    /// Ignore `Range` and always answer 200 with the whole body.
    ignore_range: bool,
    /// On the first request only: send this many body bytes, then close the connection.
    cut_first_after: Option<usize>,
    /// Answer every request with this status and a short text body.
    status: Option<u16>,
}

struct Server {
    port: u16,
    log: Arc<Mutex<Vec<Req>>>,
}

impl Server {
    fn start(body: Vec<u8>, behaviour: Behaviour) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let log = Arc::new(Mutex::new(Vec::new()));
        let log2 = Arc::clone(&log);
        std::thread::spawn(move || {
            for (i, stream) in listener.incoming().enumerate() {
                let Ok(stream) = stream else { continue };
                // a broken connection only fails the test that caused it, through the client
                let _ = handle(stream, i, &body, &behaviour, &log2);
            }
        });
        Server { port, log }
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}/{path}", self.port)
    }

    fn requests(&self) -> Vec<Req> {
        self.log.lock().unwrap().clone()
    }
}

fn handle(
    mut stream: TcpStream,
    index: usize,
    body: &[u8],
    b: &Behaviour,
    log: &Mutex<Vec<Req>>,
) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let path = line.split_whitespace().nth(1).unwrap_or("").to_string();
    let mut range = None;
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h)? == 0 || h.trim().is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            if k.trim().eq_ignore_ascii_case("range") {
                range = Some(v.trim().to_string());
            }
        }
    }
    log.lock().unwrap().push(Req {
        path,
        range: range.clone(),
    });

    if let Some(code) = b.status {
        let text = b"no such file\n";
        write!(
            stream,
            "HTTP/1.1 {code} Whatever\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            text.len()
        )?;
        stream.write_all(text)?;
        return Ok(());
    }
    let start = match (&range, b.ignore_range) {
        (Some(r), false) => r
            .strip_prefix("bytes=")
            .and_then(|r| r.strip_suffix('-'))
            .and_then(|n| n.parse::<usize>().ok()),
        _ => None,
    };
    let len = body.len();
    let slice = match start {
        Some(s) if s >= len => {
            write!(
                stream,
                "HTTP/1.1 416 Range Not Satisfiable\r\nContent-Range: bytes */{len}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            )?;
            return Ok(());
        }
        Some(s) => {
            write!(
                stream,
                "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes {s}-{}/{len}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                len - 1,
                len - s
            )?;
            &body[s..]
        }
        None => {
            write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Length: {len}\r\nConnection: close\r\n\r\n"
            )?;
            body
        }
    };
    match b.cut_first_after {
        Some(n) if index == 0 => {
            stream.write_all(&slice[..n.min(slice.len())])?;
            stream.flush()?;
            stream.shutdown(Shutdown::Both)?;
        }
        _ => stream.write_all(slice)?,
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Helpers.

const SIZE: usize = 300_000;

/// Deterministic pseudo-random bytes.
fn model_bytes(n: usize, seed: u64) -> Vec<u8> {
    let mut x = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 56) as u8
        })
        .collect()
}

fn sha_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn temp_dir(name: &str) -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let d = std::env::temp_dir().join(format!(
        "hearth-models-{}-{name}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn source(url: String, body: &[u8]) -> ModelSource {
    ModelSource {
        file: "tiny.gguf".into(),
        url,
        sha256: sha_hex(body),
    }
}

fn part_of(p: &Path) -> PathBuf {
    PathBuf::from(format!("{}.part", p.display()))
}

fn stamp_of(p: &Path) -> PathBuf {
    PathBuf::from(format!("{}.sha256", p.display()))
}

fn set_mtime(p: &Path, t: SystemTime) {
    std::fs::OpenOptions::new()
        .write(true)
        .open(p)
        .unwrap()
        .set_modified(t)
        .unwrap();
}

fn hearth(args: &[&str], env: &[(&str, &Path)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_hearth"));
    cmd.args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("run hearth")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

// ---------------------------------------------------------------------------------------------
// pull

#[test]
fn full_pull_verifies_stores_and_stamps() {
    let body = model_bytes(SIZE, 1);
    let server = Server::start(body.clone(), Behaviour::default());
    let dir = temp_dir("full");
    let src = source(server.url("tiny.gguf"), &body);

    let path = models::pull(&src, &dir, false).unwrap();
    assert_eq!(path, dir.join("tiny.gguf"));
    assert_eq!(std::fs::read(&path).unwrap(), body);
    assert_eq!(
        std::fs::read_to_string(stamp_of(&path)).unwrap(),
        format!("{}\n", src.sha256)
    );
    assert!(!part_of(&path).exists());
    let reqs = server.requests();
    assert_eq!(reqs.len(), 1, "{reqs:?}");
    assert_eq!(reqs[0].path, "/tiny.gguf");
    assert_eq!(reqs[0].range, None);
    assert_eq!(models::locate_in(&src, &dir).unwrap(), path);
    assert_eq!(models::status(&src, &dir).unwrap(), ModelStatus::Verified);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn second_pull_makes_no_request() {
    let body = model_bytes(SIZE, 2);
    let server = Server::start(body.clone(), Behaviour::default());
    let dir = temp_dir("second");
    let src = source(server.url("tiny.gguf"), &body);
    let first = models::pull(&src, &dir, false).unwrap();
    let second = models::pull(&src, &dir, false).unwrap();
    assert_eq!(first, second);
    assert_eq!(server.requests().len(), 1);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn interrupted_transfer_resumes_with_range() {
    let body = model_bytes(SIZE, 3);
    let cut = 100_000;
    let server = Server::start(
        body.clone(),
        Behaviour {
            cut_first_after: Some(cut),
            ..Behaviour::default()
        },
    );
    let dir = temp_dir("cut");
    let src = source(server.url("tiny.gguf"), &body);
    let path = models::pull(&src, &dir, false).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), body);
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2, "{reqs:?}");
    assert_eq!(reqs[0].range, None);
    assert_eq!(reqs[1].range.as_deref(), Some(&*format!("bytes={cut}-")));
    assert!(!part_of(&path).exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn kept_half_part_resumes_with_range() {
    let body = model_bytes(SIZE, 4);
    let server = Server::start(body.clone(), Behaviour::default());
    let dir = temp_dir("half");
    let src = source(server.url("tiny.gguf"), &body);
    let half = SIZE / 2;
    std::fs::write(part_of(&dir.join("tiny.gguf")), &body[..half]).unwrap();
    let path = models::pull(&src, &dir, false).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), body);
    let reqs = server.requests();
    assert_eq!(reqs.len(), 1, "{reqs:?}");
    assert_eq!(reqs[0].range.as_deref(), Some(&*format!("bytes={half}-")));
    assert!(!part_of(&path).exists());
    assert!(stamp_of(&path).exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn server_ignoring_range_still_yields_the_file() {
    let body = model_bytes(SIZE, 5);
    let server = Server::start(
        body.clone(),
        Behaviour {
            ignore_range: true,
            ..Behaviour::default()
        },
    );
    let dir = temp_dir("norange");
    let src = source(server.url("tiny.gguf"), &body);
    std::fs::write(part_of(&dir.join("tiny.gguf")), &body[..SIZE / 2]).unwrap();
    let path = models::pull(&src, &dir, false).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), body);
    let reqs = server.requests();
    assert_eq!(reqs.len(), 1, "{reqs:?}");
    assert!(reqs[0].range.is_some(), "a resume was asked for");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn complete_part_answered_416_is_checked_and_kept() {
    let body = model_bytes(SIZE, 6);
    let server = Server::start(body.clone(), Behaviour::default());
    let dir = temp_dir("416");
    let src = source(server.url("tiny.gguf"), &body);
    std::fs::write(part_of(&dir.join("tiny.gguf")), &body).unwrap();
    let path = models::pull(&src, &dir, false).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), body);
    let reqs = server.requests();
    assert_eq!(reqs.len(), 1, "{reqs:?}");
    assert_eq!(reqs[0].range.as_deref(), Some(&*format!("bytes={SIZE}-")));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn sha_mismatch_deletes_the_part_and_names_both_digests() {
    let body = model_bytes(SIZE, 7);
    let server = Server::start(body.clone(), Behaviour::default());
    let dir = temp_dir("mismatch");
    let mut src = source(server.url("tiny.gguf"), &body);
    let wanted = sha_hex(b"some other file");
    src.sha256 = wanted.clone();
    let e = models::pull(&src, &dir, false).unwrap_err();
    assert!(matches!(e, ModelError::ShaMismatch { .. }), "{e:?}");
    let msg = e.to_string();
    assert!(msg.contains(&wanted), "{msg}");
    assert!(msg.contains(&sha_hex(&body)), "{msg}");
    assert!(msg.contains(&src.url), "{msg}");
    let dest = dir.join("tiny.gguf");
    assert!(!part_of(&dest).exists());
    assert!(!dest.exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_kept_part_fails_the_sha_and_is_deleted() {
    let body = model_bytes(SIZE, 8);
    let server = Server::start(body.clone(), Behaviour::default());
    let dir = temp_dir("badpart");
    let src = source(server.url("tiny.gguf"), &body);
    let half = SIZE / 2;
    let garbage = model_bytes(half, 99);
    let dest = dir.join("tiny.gguf");
    std::fs::write(part_of(&dest), &garbage).unwrap();
    let e = models::pull(&src, &dir, false).unwrap_err();
    let mut spliced = garbage.clone();
    spliced.extend_from_slice(&body[half..]);
    let msg = e.to_string();
    assert!(
        msg.contains(&src.sha256) && msg.contains(&sha_hex(&spliced)),
        "{msg}"
    );
    assert!(!part_of(&dest).exists() && !dest.exists());
    // the next pull starts over and succeeds
    models::pull(&src, &dir, false).unwrap();
    assert_eq!(std::fs::read(&dest).unwrap(), body);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn http_404_names_url_and_status() {
    let server = Server::start(
        Vec::new(),
        Behaviour {
            status: Some(404),
            ..Behaviour::default()
        },
    );
    let dir = temp_dir("404");
    let src = source(server.url("gone.gguf"), b"x");
    let e = models::pull(&src, &dir, false).unwrap_err();
    assert!(
        matches!(e, ModelError::HttpStatus { status: 404, .. }),
        "{e:?}"
    );
    let msg = e.to_string();
    assert!(
        msg.contains(&src.url) && msg.contains("404") && msg.contains("--url"),
        "{msg}"
    );
    assert!(!part_of(&dir.join("tiny.gguf")).exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn connection_refused_is_a_network_error_naming_the_url() {
    let port = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let dir = temp_dir("refused");
    let src = source(format!("http://127.0.0.1:{port}/tiny.gguf"), b"x");
    let e = models::pull(&src, &dir, false).unwrap_err();
    assert!(matches!(e, ModelError::Network { .. }), "{e:?}");
    assert!(e.to_string().contains(&src.url), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

// ---------------------------------------------------------------------------------------------
// locate, verify, status

fn default_model() -> ModelSource {
    Preset::load("qwen2.5-coder")
        .unwrap()
        .model
        .expect("qwen2.5-coder names its model")
}

#[test]
fn locate_missing_file_says_how_to_get_it() {
    let dir = temp_dir("missing");
    let src = default_model();
    let e = models::locate_in(&src, &dir).unwrap_err();
    assert!(matches!(e, ModelError::Missing { .. }), "{e:?}");
    let msg = e.to_string();
    assert!(
        msg.contains(&dir.join(&src.file).display().to_string()),
        "{msg}"
    );
    assert!(msg.contains("hearth models pull qwen2.5-coder"), "{msg}");
    assert_eq!(
        models::status(&src, &dir).unwrap(),
        ModelStatus::Missing { partial: None }
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn wrong_bytes_under_the_right_name_are_corrupt() {
    let dir = temp_dir("corrupt");
    let src = default_model();
    let path = dir.join(&src.file);
    let bytes = model_bytes(1000, 10);
    std::fs::write(&path, &bytes).unwrap();
    assert_eq!(models::status(&src, &dir).unwrap(), ModelStatus::Unverified);
    let e = models::locate_in(&src, &dir).unwrap_err();
    assert!(matches!(e, ModelError::Corrupt { .. }), "{e:?}");
    let msg = e.to_string();
    assert!(msg.contains("corrupt"), "{msg}");
    assert!(
        msg.contains(&src.sha256) && msg.contains(&sha_hex(&bytes)),
        "{msg}"
    );
    assert!(msg.contains("hearth models pull qwen2.5-coder"), "{msg}");
    assert!(!stamp_of(&path).exists(), "no stamp for a bad file");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn stamp_vouches_until_the_file_changes_and_verify_always_hashes() {
    let body = model_bytes(SIZE, 11);
    let server = Server::start(body.clone(), Behaviour::default());
    let dir = temp_dir("stamp");
    let src = source(server.url("tiny.gguf"), &body);
    let path = dir.join("tiny.gguf");
    // wrong bytes with a stamp newer than the file: trusted without hashing
    std::fs::write(&path, b"not the model").unwrap();
    std::fs::write(stamp_of(&path), format!("{}\n", src.sha256)).unwrap();
    let now = SystemTime::now();
    set_mtime(&path, now - Duration::from_secs(60));
    set_mtime(&stamp_of(&path), now);
    assert_eq!(models::locate_in(&src, &dir).unwrap(), path);
    assert_eq!(models::status(&src, &dir).unwrap(), ModelStatus::Verified);
    // verify always hashes
    let e = models::verify(&path, &src.sha256).unwrap_err();
    assert!(matches!(e, ModelError::Corrupt { .. }), "{e:?}");
    // the file changed after the stamp: hashed again, corrupt
    set_mtime(&path, now + Duration::from_secs(60));
    assert!(matches!(
        models::locate_in(&src, &dir),
        Err(ModelError::Corrupt { .. })
    ));
    // a stamp for another digest does not vouch either
    std::fs::write(stamp_of(&path), format!("{}\n", sha_hex(b"other"))).unwrap();
    assert!(models::locate_in(&src, &dir).is_err());
    // pull replaces the corrupt file
    models::pull(&src, &dir, false).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), body);
    assert_eq!(server.requests().len(), 1);
    models::verify(&path, &src.sha256).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn verify_writes_the_stamp_for_a_good_file() {
    let dir = temp_dir("verify");
    let body = model_bytes(5000, 12);
    let src = source("https://example.invalid/tiny.gguf".into(), &body);
    let path = dir.join("tiny.gguf");
    std::fs::write(&path, &body).unwrap();
    assert_eq!(models::status(&src, &dir).unwrap(), ModelStatus::Unverified);
    models::verify(&path, &src.sha256).unwrap();
    assert_eq!(
        std::fs::read_to_string(stamp_of(&path)).unwrap().trim(),
        src.sha256
    );
    assert_eq!(models::status(&src, &dir).unwrap(), ModelStatus::Verified);
    assert!(matches!(
        models::verify(&dir.join("nope.gguf"), &src.sha256),
        Err(ModelError::Missing { .. })
    ));
    assert!(matches!(
        models::verify(&path, "abc"),
        Err(ModelError::InvalidSource { .. })
    ));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn model_dir_matches_fetch_models_script() {
    let script =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/fetch-models"))
            .unwrap();
    let start = script
        .find("if [ -n \"${HEARTH_MODEL_DIR")
        .expect("the script chooses the model directory");
    let end = start + script[start..].find("\nfi\n").expect("end of the if") + 4;
    let snippet = &script[start..end];
    let cases: &[&[(&str, &str)]] = &[
        &[
            ("HEARTH_MODEL_DIR", "/m"),
            ("XDG_CACHE_HOME", "/x"),
            ("CACHE_DIRECTORY", "/c1:/c2"),
            ("HOME", "/h"),
        ],
        &[
            ("XDG_CACHE_HOME", "/x"),
            ("CACHE_DIRECTORY", "/c1"),
            ("HOME", "/h"),
        ],
        &[("CACHE_DIRECTORY", "/c1:/c2:/c3"), ("HOME", "/h")],
        &[("CACHE_DIRECTORY", "/c1"), ("HOME", "/h")],
        &[("HOME", "/h")],
        &[
            ("HEARTH_MODEL_DIR", ""),
            ("XDG_CACHE_HOME", ""),
            ("HOME", "/h"),
        ],
    ];
    for vars in cases {
        let out = Command::new("bash")
            .arg("-c")
            .arg(format!("set -eu\n{snippet}printf %s \"$dir\""))
            .env_clear()
            .envs(vars.iter().copied())
            .output()
            .expect("run bash");
        assert!(out.status.success(), "{}", stderr(&out));
        let from_script = PathBuf::from(stdout(&out));
        let from_rust = models::model_dir_from(|k| {
            vars.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| OsString::from(v))
        });
        assert_eq!(Some(from_script), from_rust, "{vars:?}");
    }
}

// ---------------------------------------------------------------------------------------------
// the CLI

#[test]
fn cli_pull_path_verify_with_url_and_dir() {
    let body = model_bytes(SIZE, 13);
    let server = Server::start(body.clone(), Behaviour::default());
    let dir = temp_dir("cli");
    let models_dir = dir.join("store");
    let preset = dir.join("tiny.toml");
    std::fs::write(
        &preset,
        format!(
            "name = \"tiny\"\nparsers = [\"hermes\"]\ntool_role = true\n\n[model]\nfile = \"tiny.gguf\"\nurl = \"https://example.invalid/tiny.gguf\"\nsha256 = \"{}\"\n",
            sha_hex(&body)
        ),
    )
    .unwrap();
    let preset = preset.to_str().unwrap();
    let d = models_dir.to_str().unwrap();
    let url = server.url("mirror/tiny.gguf");

    let out = hearth(&["models", "pull", preset, "--dir", d, "--url", &url], &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let path = models_dir.join("tiny.gguf");
    assert_eq!(stdout(&out).trim(), path.display().to_string());
    assert_eq!(std::fs::read(&path).unwrap(), body);
    let reqs = server.requests();
    assert_eq!(reqs.len(), 1);
    assert_eq!(reqs[0].path, "/mirror/tiny.gguf");

    let out = hearth(&["models", "path", preset, "--dir", d], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), path.display().to_string());
    // the model directory comes from the environment without --dir
    let out = hearth(
        &["models", "path", preset],
        &[("HEARTH_MODEL_DIR", &models_dir)],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));

    let out = hearth(&["models", "verify", preset, "--dir", d], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("ok"));

    std::fs::write(&path, b"damaged").unwrap();
    let out = hearth(&["models", "verify", preset, "--dir", d], &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("corrupt"), "{}", stderr(&out));
    assert_eq!(server.requests().len(), 1);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn cli_errors_and_list() {
    let dir = temp_dir("cli-errors");
    let env = [("HEARTH_MODEL_DIR", dir.as_path())];

    // a preset without [model]
    let out = hearth(&["models", "pull", "qwen2.5"], &env);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("names no model file") && err.contains("[model]"),
        "{err}"
    );

    // missing model file: exit 1 with the advice
    let out = hearth(&["models", "path", "qwen2.5-coder"], &env);
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).is_empty());
    let err = stderr(&out);
    assert!(
        err.contains("hearth models pull qwen2.5-coder") && err.contains("missing"),
        "{err}"
    );
    let out = hearth(&["models", "verify", "qwen2.5-coder"], &env);
    assert_eq!(out.status.code(), Some(1));

    // an HTTP error at the address given (no PyPI copy stands in for it) fails the pull
    // (exit 1) and names the URL and status
    let server = Server::start(
        Vec::new(),
        Behaviour {
            status: Some(404),
            ..Behaviour::default()
        },
    );
    let url = server.url("nope.gguf");
    let out = hearth(&["models", "pull", "qwen2.5-coder", "--url", &url], &env);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains(&url) && err.contains("404"), "{err}");

    // list: every built-in preset, its model file, present/missing
    std::fs::write(
        dir.join("qwen2.5-coder-0.5b-instruct-q4_k_m.gguf.part"),
        b"12345",
    )
    .unwrap();
    let out = hearth(&["models", "list"], &env);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    for name in Preset::builtin_names() {
        assert!(
            text.lines().any(|l| l.starts_with(&format!("{name} "))),
            "{name}: {text}"
        );
    }
    let coder = text
        .lines()
        .find(|l| l.starts_with("qwen2.5-coder "))
        .unwrap();
    assert!(
        coder.contains("qwen2.5-coder-0.5b-instruct-q4_k_m.gguf") && coder.contains("missing"),
        "{coder}"
    );
    assert!(coder.contains("partial download: 5 bytes"), "{coder}");
    let plain = text.lines().find(|l| l.starts_with("qwen2.5 ")).unwrap();
    assert!(plain.contains("no model file"), "{plain}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn cli_speech_models_by_name() {
    let dir = temp_dir("cli-speech");
    let env = [("HEARTH_MODEL_DIR", dir.as_path())];

    // an unknown name is an error listing the names there are
    let out = hearth(&["models", "pull", "whisper:large-v9"], &env);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("whisper:large-v9")
            && err.contains("whisper:base.en")
            && err.contains("whisper:small.en-q8_0"),
        "{err}"
    );

    // missing: exit 1, and the advice is the pull command for that very name
    let out = hearth(&["models", "path", "whisper:base.en-q5_1"], &env);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("ggml-base.en-q5_1.bin")
            && err.contains("hearth models pull whisper:base.en-q5_1"),
        "{err}"
    );

    // pull downloads the catalogue's file name from the URL given and checks the catalogue's
    // sha256: bytes that are not whisper.cpp's file are refused and deleted
    let server = Server::start(model_bytes(SIZE, 21), Behaviour::default());
    let url = server.url("mirror/ggml-tiny.en.bin");
    let out = hearth(&["models", "pull", "whisper:tiny.en", "--url", &url], &env);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("sha256 mismatch")
            && err.contains("921e4cf8686fdd993dcd081a5da5b6c365bfde1162e72b08d75ac75289920b1f"),
        "{err}"
    );
    assert_eq!(server.requests()[0].path, "/mirror/ggml-tiny.en.bin");
    assert!(!dir.join("ggml-tiny.en.bin").exists());
    assert!(!dir.join("ggml-tiny.en.bin.part").exists());

    // verify hashes whatever is under the name and says it is not the expected file
    std::fs::write(dir.join("ggml-small.en.bin"), b"not a model").unwrap();
    let out = hearth(&["models", "verify", "whisper:small.en"], &env);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("corrupt"), "{}", stderr(&out));

    // list: every speech model by its full name, file and state
    let out = hearth(&["models", "list"], &env);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    for m in hearth::speech_models::catalogue().unwrap() {
        let line = text
            .lines()
            .find(|l| l.starts_with(&format!("whisper:{} ", m.name)))
            .unwrap_or_else(|| panic!("whisper:{}: {text}", m.name));
        assert!(line.contains(&m.file), "{line}");
    }
    let small = text
        .lines()
        .find(|l| l.starts_with("whisper:small.en "))
        .unwrap();
    assert!(small.contains("present (not verified yet)"), "{small}");
    let base = text
        .lines()
        .find(|l| l.starts_with("whisper:base.en "))
        .unwrap();
    assert!(
        base.contains("missing") && base.contains("148 MB"),
        "{base}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn doctor_names_the_speech_model_pull() {
    let dir = temp_dir("doctor-speech");
    let env = [("HEARTH_MODEL_DIR", dir.as_path())];
    let whisper_findings = |model: &str| {
        let config = dir.join("hearth.toml");
        std::fs::write(
            &config,
            format!("[stt]\nmodel = \"{model}\"\n[bus]\nbus = \"none\"\n"),
        )
        .unwrap();
        let out = hearth(
            &["doctor", "--json", "--config", config.to_str().unwrap()],
            &env,
        );
        let report: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}{}", stdout(&out), stderr(&out)));
        report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["area"] == "whisper" && f["level"] == "fail")
            .cloned()
            .collect::<Vec<_>>()
    };
    // a catalogue name whose file is missing: the fix is its pull command
    let failed = whisper_findings("whisper:base.en-q5_1");
    assert!(
        failed.iter().any(|f| f["what"]
            .as_str()
            .unwrap()
            .contains("ggml-base.en-q5_1.bin")
            && f["fix"]
                .as_str()
                .unwrap()
                .contains("hearth models pull whisper:base.en-q5_1")),
        "{failed:#?}"
    );
    // the same for the entry's file name
    let failed = whisper_findings("ggml-small.en.bin");
    assert!(
        failed.iter().any(|f| f["fix"]
            .as_str()
            .unwrap()
            .contains("hearth models pull whisper:small.en")),
        "{failed:#?}"
    );
    // an unknown name is a failure that lists the names
    let failed = whisper_findings("whisper:nope");
    assert!(
        failed
            .iter()
            .any(|f| f["what"].as_str().unwrap().contains("whisper:tiny.en")),
        "{failed:#?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
