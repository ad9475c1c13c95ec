// Unit tests of the scenes' maths and texts (they need no model): the SNR achieved, the
// active level, the noise spectra and levels, the music's beat, determinism, and that the talk
// holds no wake word.

use super::mix::*;
use super::noise::*;
use super::text::*;
use std::f64::consts::TAU;

// --- mix ---

/// Speech-like test audio: 4 s of syllables (200-ms bursts of a 150 Hz voice with
/// harmonics, their loudness varying by up to 12 dB), with pauses between them and 0.5 s
/// of silence at each end.
fn syllables() -> Vec<f32> {
    let rate = f64::from(RATE);
    let mut rng = Rng::new(9);
    let mut out = vec![0f32; RATE as usize / 2];
    for _ in 0..14 {
        let gain = from_db(-12.0 * rng.unit()) * 0.3;
        let len = (0.2 * rate) as usize;
        for i in 0..len {
            let t = i as f64 / rate;
            let env = (std::f64::consts::PI * i as f64 / len as f64).sin();
            let v: f64 = (1..=8)
                .map(|h| (std::f64::consts::TAU * 150.0 * f64::from(h) * t).sin() / f64::from(h))
                .sum();
            out.push((v * env * gain) as f32);
        }
        out.resize(out.len() + (0.08 * rate) as usize, 0.0);
    }
    out.resize(out.len() + RATE as usize / 2, 0.0);
    out
}

#[test]
fn the_active_level_ignores_silence() {
    let tone: Vec<f32> = (0..RATE)
        .map(|i| (0.5 * (f64::from(i) * 0.1).sin()) as f32)
        .collect();
    let mut padded = vec![0f32; RATE as usize * 2];
    padded.extend(&tone);
    padded.resize(padded.len() + RATE as usize * 2, 0.0);
    let want = to_db(0.5 / 2f64.sqrt());
    for x in [&tone, &padded] {
        let got = to_db(active_level(x).unwrap());
        assert!((got - want).abs() < 0.05, "{got:.3} dBFS, want {want:.3}");
    }
    // a plain RMS counts the silence: 5 s holding 1 s of tone is 7 dB quieter
    assert!((to_db(rms(&padded)) - want + 6.99).abs() < 0.05);
    assert_eq!(active_level(&[0.0; 1000]), None);
}

#[test]
fn the_snr_achieved_is_the_one_asked() {
    let speech = syllables();
    let at = RATE as usize;
    let len = speech.len() + 2 * at;
    for kind in [Kind::Room, Kind::Music] {
        for snr in [20.0, 10.0, 5.0, 0.0] {
            let noise = kind.generate(len, -20.0, 4);
            let mix = mix_at_snr(&speech, &noise, at, -26.0, Some(snr)).unwrap();
            assert_eq!(mix.samples.len(), len);
            assert_eq!(mix.speech, at..at + speech.len());
            // take the mix apart again: what is not the (scaled) speech is the noise
            let mut speech_part = vec![0f32; len];
            for (i, &s) in speech.iter().enumerate() {
                speech_part[at + i] = (f64::from(s) * mix.speech_gain) as f32;
            }
            let noise_part: Vec<f32> = mix
                .samples
                .iter()
                .zip(&speech_part)
                .map(|(m, s)| m - s)
                .collect();
            let speech_db = to_db(active_level(&speech_part).unwrap());
            let noise_db = to_db(rms(&noise_part[mix.speech.clone()]));
            let achieved = speech_db - noise_db;
            assert!(
                (speech_db + 26.0).abs() < 0.1,
                "{kind:?} at {snr} dB: speech at {speech_db:.2} dBFS"
            );
            assert!(
                (achieved - snr).abs() < 0.5,
                "{kind:?}: asked {snr} dB, achieved {achieved:.2} dB"
            );
            // and the noise is the bed itself, only scaled, before and after the speech too
            let bed = rms(&noise[..at]) * mix.noise_gain;
            assert!((to_db(rms(&noise_part[..at])) - to_db(bed)).abs() < 0.01);
            assert_eq!(mix.clipped(), 0);
        }
    }
}

#[test]
fn the_snr_holds_for_a_stationary_noise_measured_on_the_mix_alone() {
    // Without taking the mix apart: the power of the mix in the speech's active frames,
    // less the noise power measured where there is no speech, is the speech's power.
    let speech = syllables();
    let at = RATE as usize * 2;
    let len = speech.len() + 2 * at;
    // white noise: stationary, so its power before and after the speech is its power under it
    let mut rng = Rng::new(8);
    let noise: Vec<f32> = (0..len).map(|_| (rng.signed() * 0.1) as f32).collect();
    for snr in [20.0, 10.0, 5.0] {
        let mix = mix_at_snr(&speech, &noise, at, -26.0, Some(snr)).unwrap();
        let clean = mix_at_snr(&speech, &noise, at, -26.0, None).unwrap();
        // the speech's active frames, as found on the clean speech
        let frames: Vec<usize> = {
            let powers: Vec<f64> = clean
                .samples
                .chunks(FRAME)
                .map(|f| rms(f).powi(2))
                .collect();
            let loudest = powers.iter().copied().fold(0.0, f64::max);
            (0..powers.len())
                .filter(|&i| powers[i] >= loudest * from_db(-ACTIVE_RANGE_DB).powi(2))
                .collect()
        };
        let mix_power = frames
            .iter()
            .map(|&i| rms(&mix.samples[i * FRAME..(i + 1) * FRAME]).powi(2))
            .sum::<f64>()
            / frames.len() as f64;
        let noise_power =
            (rms(&mix.samples[..at]).powi(2) + rms(&mix.samples[mix.speech.end..]).powi(2)) / 2.0;
        let measured = 10.0 * ((mix_power - noise_power) / noise_power).log10();
        assert!(
            (measured - snr).abs() < 0.5,
            "asked {snr} dB, measured {measured:.2} dB on the mix"
        );
    }
}

#[test]
fn no_noise_leaves_the_speech_alone() {
    let speech = syllables();
    let noise = music(speech.len() + 100, -20.0, 1);
    let mix = mix_at_snr(&speech, &noise, 100, -20.0, None).unwrap();
    assert_eq!(mix.noise_gain, 0.0);
    assert!(mix.samples[..100].iter().all(|&s| s == 0.0));
    let level = to_db(active_level(&mix.samples).unwrap());
    // (within 0.1 dB: the 10 ms frames fall elsewhere in the speech, 100 samples on)
    assert!((level + 20.0).abs() < 0.1, "{level}");
}

#[test]
fn a_mix_that_does_not_fit_is_an_error() {
    let speech = syllables();
    let noise = room(speech.len(), -20.0, 1);
    assert!(mix_at_snr(&speech, &noise, 1, -26.0, Some(10.0)).is_err());
    assert!(mix_at_snr(&[0.0; 500], &noise, 0, -26.0, Some(10.0)).is_err());
}

#[test]
fn to_i16_clamps_and_rounds() {
    assert_eq!(
        to_i16(&[0.0, 1.0, -1.0, 2.0, -2.0, 0.5]),
        [0, 32767, -32767, 32767, -32767, 16384]
    );
}

// --- noise ---

/// Mean power around `f` Hz (bins `f ± 3 × 8 Hz`) over 2048-sample blocks, by Goertzel.
fn power_at(x: &[f32], f: f64) -> f64 {
    const N: usize = 2048;
    let bin = f64::from(RATE) / N as f64;
    let mut total = 0.0;
    let mut count = 0;
    for block in x.chunks_exact(N) {
        for k in -3i32..=3 {
            let w = TAU * (f + f64::from(k) * bin) / f64::from(RATE);
            let c = 2.0 * w.cos();
            let (mut s1, mut s2) = (0.0, 0.0);
            for (j, &v) in block.iter().enumerate() {
                let hann = 0.5 - 0.5 * (TAU * j as f64 / N as f64).cos();
                let s = f64::from(v) * hann + c * s1 - s2;
                s2 = s1;
                s1 = s;
            }
            total += s1 * s1 + s2 * s2 - c * s1 * s2;
            count += 1;
        }
    }
    total / f64::from(count)
}

/// dB per octave from 250 Hz to 4 kHz (four octaves).
fn slope(x: &[f32]) -> f64 {
    let lo = power_at(x, 250.0);
    let hi = power_at(x, 4000.0);
    10.0 * (hi / lo).log10() / 4.0
}

#[test]
fn pink_falls_3_db_an_octave_and_brown_6() {
    let n = RATE as usize * 8;
    let p = slope(&pink(n, -20.0, 11));
    let b = slope(&brown(n, -20.0, 11));
    assert!((-4.5..=-1.5).contains(&p), "pink: {p:.2} dB/octave");
    assert!((-7.5..=-4.5).contains(&b), "brown: {b:.2} dB/octave");
    // room noise sits between the two
    let r = slope(&room(n, -20.0, 11));
    assert!(b - 0.5 < r && r < p + 0.5, "room: {r:.2} dB/octave");
}

#[test]
fn every_sound_comes_at_the_level_asked() {
    let n = RATE as usize * 3;
    for (name, x) in [
        ("pink", pink(n, -30.0, 1)),
        ("brown", brown(n, -30.0, 1)),
        ("room", room(n, -30.0, 1)),
        ("music", music(n, -30.0, 1)),
    ] {
        let level = to_db(rms(&x));
        assert!((level + 30.0).abs() < 0.01, "{name}: {level:.3} dBFS");
        let peak = x.iter().fold(0f32, |m, &s| m.max(s.abs()));
        assert!(peak < 0.5, "{name}: peak {peak}");
    }
}

#[test]
fn the_same_seed_gives_the_same_sound() {
    let n = RATE as usize;
    for kind in [Kind::Room, Kind::Music] {
        assert_eq!(kind.generate(n, -20.0, 5), kind.generate(n, -20.0, 5));
        assert_ne!(kind.generate(n, -20.0, 5), kind.generate(n, -20.0, 6));
    }
    assert_ne!(seed_of(&[1, 2]), seed_of(&[2, 1]));
}

#[test]
fn music_has_a_beat() {
    // louder on the beat than between beats: the envelope repeats at the beat
    let seed = 3;
    let tune = Tune::from_seed(seed);
    let x = music(RATE as usize * 12, -20.0, seed);
    let env = envelope(&x);
    let mean = env.iter().sum::<f64>() / env.len() as f64;
    let centred: Vec<f64> = env.iter().map(|e| e - mean).collect();
    let corr = |lag: usize| -> f64 {
        centred
            .iter()
            .zip(&centred[lag..])
            .map(|(a, b)| a * b)
            .sum::<f64>()
            / (centred.len() - lag) as f64
    };
    let frames_per_beat = tune.beat_s() * 100.0;
    let on_beat = corr(frames_per_beat.round() as usize);
    let off_beat = corr((frames_per_beat * 0.75).round() as usize);
    assert!(
        on_beat > off_beat && on_beat > 0.0,
        "{} bpm: autocorrelation at a beat {on_beat:.3e}, at 3/4 of a beat {off_beat:.3e}",
        tune.bpm
    );
}

// --- text ---

#[test]
fn the_texts_parse() {
    assert!(lines(COMMANDS).len() >= 36);
    let talk = paragraphs(TALK);
    assert!(talk.len() >= 10, "{}", talk.len());
    assert!(talk.iter().all(|p| p.sentences.len() >= 5), "{talk:?}");
    let dialogue = turns(DIALOGUE);
    assert!(dialogue.len() >= 20);
    assert!(dialogue.iter().all(|(w, _)| *w == 'A' || *w == 'B'));
    assert!(lines(REPLIES).len() >= 30);
}

#[test]
fn the_talk_holds_no_wake_word() {
    let everything = [TALK, DIALOGUE, REPLIES].join("\n");
    for phrase in ["okay nabu", "ok nabu", "alexa", "hey jarvis", "hey mycroft"] {
        for line in lines(&everything) {
            assert!(!contains_phrase(line, phrase), "{phrase:?} in {line:?}");
        }
    }
    assert!(contains_phrase("Well, hey Jarvis!", "hey jarvis"));
    assert!(!contains_phrase("Mister Jarvis", "hey jarvis"));
    assert!(!contains_phrase("Alexandra", "alexa"));
}

// --- voices and room ---

use super::room::{keep_level, parse_snr, set_active_level, Room, REVERB, SPEECH_DBFS};
use super::voices::{cast, espeak_has, flite_has, pitch_effect, Engine, CAST};

#[test]
fn every_voice_is_found_by_its_name_and_a_wrong_name_lists_them() {
    for c in &CAST {
        assert_eq!(cast(c.name).unwrap(), c);
        assert_eq!(CAST.iter().filter(|o| o.name == c.name).count(), 1);
    }
    assert_eq!(CAST[0].name, "piper", "the default comes first");
    assert_eq!(cast("espeak-ng").unwrap().name, "espeak");
    let e = cast("espeak-gb").unwrap_err();
    assert!(e.contains("\"espeak-gb\"") && e.contains("espeak-gb-m, espeak-caribbean-f"));
}

#[test]
fn the_cast_has_both_sexes_and_several_accents() {
    let female = CAST.iter().filter(|c| c.who.contains("female")).count();
    let male = CAST
        .iter()
        .filter(|c| c.who.contains(" male") || c.who.starts_with("male"))
        .count();
    assert!(female >= 3 && male >= 3, "{female} women, {male} men");
    let mut accents: Vec<&str> = CAST
        .iter()
        .filter_map(|c| c.who.rsplit(", ").next())
        .map(|a| a.split(' ').next().unwrap_or(a))
        .collect();
    accents.sort();
    accents.dedup();
    assert_eq!(accents, ["British", "Caribbean", "Scottish", "US"]);
}

#[test]
fn a_voice_says_what_it_is_and_which_sox_effect_it_takes() {
    let low = cast("piper-low").unwrap();
    assert_eq!(
        low.label(),
        "piper-low (deep male, US: piper ×0.95/1.1/1.3 n1, sox pitch -300 cents)"
    );
    assert_eq!(low.effect(), Some(vec!["pitch".to_string(), "-300".into()]));
    assert_eq!(pitch_effect(400), ["pitch", "400"]);
    let piper = cast("piper").unwrap();
    assert_eq!(piper.label(), "piper (male, US: piper ×0.85/1/1.2)");
    assert_eq!(piper.effect(), None);
    assert_eq!(
        cast("espeak-gb-m").unwrap().label(),
        "espeak-gb-m (male, British: espeak-ng en-gb+m3 210/175/140 wpm)"
    );
    assert!(matches!(
        cast("flite-scottish-m").unwrap().engine,
        Engine::Flite { voice: "awb", .. }
    ));
}

const ESPEAK_VOICES: &str = "\
Pty Language       Age/Gender VoiceName          File                 Other Languages
 2  en-gb           --/M      English_(Great_Britain) gmw/en               (en 2)
 5  en-029          --/M      English_(Caribbean) gmw/en-029           (en 10)
 2  en-us           --/M      English_(America)  gmw/en-US            (en 3)
";
const ESPEAK_VARIANTS: &str = "\
Pty Language       Age/Gender VoiceName          File                 Other Languages
 5  variant         --/F      female2            !v/f2
 5  variant         --/M      male3              !v/m3
 5  variant         --/M      Mr serious         !v/Mr serious
";

#[test]
fn an_espeak_voice_needs_its_language_and_its_variant_listed() {
    let has = |v| espeak_has(ESPEAK_VOICES, ESPEAK_VARIANTS, v);
    assert!(has("en-gb+m3") && has("en-029+f2") && has("en-us"));
    assert!(!has("en-gb-scotland+m3"), "a language not listed");
    assert!(!has("en-gb+f9"), "a variant not listed");
    assert!(!has("Language"), "the header is no voice");
    assert!(!has("en-gb+m"), "a variant's whole name");
}

#[test]
fn a_flite_voice_must_be_listed() {
    let listing = "Voices available: kal awb_time kal16 awb rms slt \n";
    assert!(flite_has(listing, "slt") && flite_has(listing, "awb"));
    assert!(!flite_has(listing, "aw") && !flite_has(listing, "Voices"));
    assert!(!flite_has("", "slt"));
}

#[test]
fn the_snr_is_a_number_of_db_in_range() {
    assert_eq!(parse_snr("20"), Ok(20.0));
    assert_eq!(parse_snr("-5"), Ok(-5.0));
    assert_eq!(parse_snr("7.5"), Ok(7.5));
    for bad in ["", "ten", "80", "-11", "nan", "inf"] {
        assert!(parse_snr(bad).is_err(), "{bad:?}");
    }
}

#[test]
fn a_room_says_what_is_in_it_and_its_noise_is_the_snr_under_the_speech() {
    assert_eq!(Room::default().label(), "quiet");
    assert_eq!(Room::default().effect(), None);
    assert_eq!(Room::default().bed(100, 1), None);
    let noisy = Room {
        snr_db: Some(20.0),
        reverb: false,
    };
    assert_eq!(noisy.label(), "room noise at 20 dB SNR");
    assert_eq!(noisy.noise_dbfs(), Some(SPEECH_DBFS - 20.0));
    let bed = noisy.bed(RATE as usize * 5, 3).unwrap();
    assert_eq!(bed.len(), RATE as usize * 5);
    assert!((to_db(rms(&bed)) - (SPEECH_DBFS - 20.0)).abs() < 0.01);
    assert_eq!(noisy.bed(1000, 3), noisy.bed(1000, 3), "seeded");
    let both = Room {
        snr_db: Some(10.0),
        reverb: true,
    };
    assert_eq!(both.label(), "room noise at 10 dB SNR, reverb");
    let effect = both.effect().unwrap();
    assert_eq!(effect, REVERB);
    assert_eq!(effect[3], "reverb");
}

#[test]
fn levels_are_set_and_kept_on_the_active_frames() {
    let speech = syllables();
    let mut clip = speech.clone();
    set_active_level(&mut clip, SPEECH_DBFS);
    assert!((to_db(active_level(&clip).unwrap()) - SPEECH_DBFS).abs() < 0.01);
    // an effect that made it 12 dB quieter and longer is brought back to the level it had
    let mut after: Vec<f32> = speech.iter().map(|s| s * 0.25).collect();
    after.resize(after.len() + 8000, 0.0);
    keep_level(&speech, &mut after);
    let (was, is) = (
        active_level(&speech).unwrap(),
        active_level(&after).unwrap(),
    );
    assert!((to_db(is) - to_db(was)).abs() < 0.01);
    let mut silent = vec![0.0f32; 100];
    set_active_level(&mut silent, -20.0);
    assert!(silent.iter().all(|&s| s == 0.0));
}
