//! The features equal pymicro-features 2.0.2's, value for value (see `tests/data/README.md`).

use micro_frontend::{Features, Frontend, NUM_FEATURES};

fn data(name: &str) -> String {
    format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn reference(name: &str) -> Vec<Features> {
    let text = std::fs::read_to_string(data(name)).unwrap();
    text.lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| {
            let values: Vec<u16> = line.split(',').map(|v| v.trim().parse().unwrap()).collect();
            assert_eq!(values.len(), NUM_FEATURES, "{name}: {line}");
            values.try_into().unwrap()
        })
        .collect()
}

fn raw(name: &str) -> Vec<i16> {
    let bytes = std::fs::read(data(name)).unwrap();
    bytes
        .chunks_exact(2)
        .map(|b| i16::from_le_bytes([b[0], b[1]]))
        .collect()
}

fn sine() -> Vec<i16> {
    (0..16_000)
        .map(|n| {
            let x = 8000.0 * (2.0 * std::f64::consts::PI * 440.0 * f64::from(n) / 16_000.0).sin();
            // Python's round(): halves to even (no exact halves occur here anyway).
            x.round_ties_even() as i16
        })
        .collect()
}

fn cases() -> Vec<(&'static str, Vec<i16>, Vec<Features>)> {
    vec![
        ("zeros_1s", vec![0; 16_000], reference("feat_zeros_1s.csv")),
        (
            "sine440_a8000_1s",
            sine(),
            reference("feat_sine440_a8000_1s.csv"),
        ),
        (
            "kitchen_16k",
            raw("kitchen_16k.raw"),
            reference("feat_kitchen_16k.csv"),
        ),
        (
            "alexa_16k",
            raw("alexa_16k.raw"),
            reference("feat_alexa_16k.csv"),
        ),
    ]
}

fn run(frontend: &mut Frontend, samples: &[i16], chunk: usize) -> Vec<Features> {
    samples
        .chunks(chunk)
        .flat_map(|c| frontend.process(c))
        .collect()
}

fn assert_frames_eq(case: &str, how: &str, got: &[Features], want: &[Features]) {
    for (frame, (g, w)) in got.iter().zip(want).enumerate() {
        if let Some(channel) = (0..NUM_FEATURES).find(|&c| g[c] != w[c]) {
            panic!(
                "{case} ({how}): frame {frame} channel {channel}: got {}, reference {}",
                g[channel], w[channel]
            );
        }
    }
    assert_eq!(got.len(), want.len(), "{case} ({how}): frame count");
}

#[test]
fn every_frame_matches_the_reference() {
    for (case, samples, want) in cases() {
        let got = run(&mut Frontend::new(), &samples, 160);
        assert_frames_eq(case, "160-sample chunks", &got, &want);
    }
}

#[test]
fn chunk_size_does_not_matter() {
    for (case, samples, want) in cases() {
        for chunk in [1, 159, 161, 1000, samples.len()] {
            let got = run(&mut Frontend::new(), &samples, chunk);
            assert_frames_eq(case, &format!("{chunk}-sample chunks"), &got, &want);
        }
    }
}

#[test]
fn reset_starts_over() {
    let mut frontend = Frontend::new();
    for (case, samples, want) in cases() {
        // Leave a partial window and noise estimates behind, then reset.
        frontend.process(&samples[..1234.min(samples.len())]);
        frontend.reset();
        let got = run(&mut frontend, &samples, 160);
        assert_frames_eq(case, "after reset", &got, &want);
    }
}
