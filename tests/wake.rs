//! The wake-word detector on the real microWakeWord models and TensorFlow Lite
//! (`scripts/fetch-models wake`). A missing file fails the test with the fix;
//! `HEARTH_SKIP_REAL_MODEL=1` skips locally (CI never sets it). The unit tests of the scenes
//! `cargo bench --bench wake` builds (mixing at an SNR, the noise generators, the texts) run here
//! too: they need no model.

#[path = "common/scenes/mod.rs"]
mod scenes;
#[path = "common/scenes/unit_tests.rs"]
mod scenes_unit_tests;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use hearth::wake::{Detection, Library, MicroWakeWord};

const RATE: f64 = 16_000.0;

/// The model directory with the wake-word files and the loaded library, or None when skipping.
fn wake_models() -> Option<(PathBuf, Arc<Library>)> {
    let found = hearth::models::model_dir()
        .map_err(|e| e.to_string())
        .and_then(|dir| {
            for f in [
                "alexa.tflite",
                "alexa.json",
                "okay_nabu.tflite",
                "okay_nabu.json",
            ] {
                if !dir.join(f).is_file() {
                    return Err(format!("{} is missing", dir.join(f).display()));
                }
            }
            let lib = Library::in_dir(&dir).map_err(|e| e.to_string())?;
            Ok((dir, lib))
        });
    match found {
        Ok(found) => Some(found),
        Err(e) if std::env::var("HEARTH_SKIP_REAL_MODEL").as_deref() == Ok("1") => {
            eprintln!("skipping a real-model test (HEARTH_SKIP_REAL_MODEL=1): {e}");
            None
        }
        Err(e) => panic!(
            "{e}\n(run scripts/fetch-models wake, or set HEARTH_SKIP_REAL_MODEL=1 to skip locally)"
        ),
    }
}

/// A raw s16le 16 kHz fixture of crates/micro-frontend.
fn fixture(name: &str) -> Vec<i16> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("crates/micro-frontend/tests/data")
        .join(name);
    std::fs::read(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .chunks_exact(2)
        .map(|b| i16::from_le_bytes([b[0], b[1]]))
        .collect()
}

/// Every detection of the model `name` on `samples`, fed in 10 ms chunks as a microphone would.
fn detections(lib: &Arc<Library>, dir: &Path, name: &str, samples: &[i16]) -> Vec<Detection> {
    let mut mww = MicroWakeWord::in_dir(lib, dir, name).expect("the model loads");
    let mut found = Vec::new();
    for chunk in samples.chunks(160) {
        if let Some(d) = mww.process(chunk).expect("inference") {
            found.push(d);
        }
    }
    eprintln!(
        "{name}: {} detections: {:?}",
        found.len(),
        found
            .iter()
            .map(|d| format!(
                "p={:.4} at {:.3} s",
                d.probability,
                d.at_sample as f64 / RATE
            ))
            .collect::<Vec<_>>()
    );
    found
}

#[test]
fn alexa_fires_once_on_alexa() {
    let Some((dir, lib)) = wake_models() else {
        return;
    };
    let found = detections(&lib, &dir, "alexa", &fixture("alexa_16k.raw"));
    assert_eq!(found.len(), 1, "{found:?}");
    let d = &found[0];
    assert_eq!(d.wake_word, "Alexa");
    assert!(d.probability > 0.9, "{d:?}");
    let secs = d.at_sample as f64 / RATE;
    assert!((0.5..=1.2).contains(&secs), "fired at {secs} s");
}

#[test]
fn nothing_fires_on_kitchen() {
    let Some((dir, lib)) = wake_models() else {
        return;
    };
    let kitchen = fixture("kitchen_16k.raw");
    for name in ["alexa", "okay_nabu"] {
        let found = detections(&lib, &dir, name, &kitchen);
        assert!(found.is_empty(), "{name} fired on kitchen: {found:?}");
    }
}

#[test]
fn okay_nabu_does_not_fire_on_alexa() {
    let Some((dir, lib)) = wake_models() else {
        return;
    };
    let found = detections(&lib, &dir, "okay_nabu", &fixture("alexa_16k.raw"));
    assert!(found.is_empty(), "{found:?}");
}

/// `[listen] wake_cutoff` through `WakeConfig`: every model loaded fires over the given
/// probability instead of its own, and its window mean is what is compared.
#[test]
fn a_configured_cutoff_replaces_the_models_own() {
    let Some((dir, _lib)) = wake_models() else {
        return;
    };
    let config = |cutoff| hearth::wake::WakeConfig {
        library: dir.join(hearth::wake::LIBRARY_NAME),
        models: vec![dir.join("alexa.tflite"), dir.join("okay_nabu.tflite")],
        cutoff,
    };
    let own: Vec<f32> = config(None)
        .load()
        .expect("the models load")
        .iter()
        .map(|d| d.settings().micro.probability_cutoff)
        .collect();
    assert_eq!(own, [0.9, 0.85]);
    // above every mean alexa reaches on alexa.wav: it no longer fires there
    let mut strict = config(Some(0.999)).load().expect("the models load");
    assert!(strict
        .iter()
        .all(|d| d.settings().micro.probability_cutoff == 0.999));
    let alexa = &mut strict[0];
    let mut fired = false;
    let mut peak = 0f32;
    for chunk in fixture("alexa_16k.raw").chunks(160) {
        fired |= alexa.process(chunk).expect("inference").is_some();
        peak = peak.max(alexa.window_mean().unwrap_or(0.0));
    }
    assert!(!fired, "fired over its configured cutoff (peak {peak})");
    assert!(peak > 0.9, "the window mean reached {peak}");
}
