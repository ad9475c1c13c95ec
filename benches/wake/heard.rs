//! The wake bench's transcript check (`--heard`): each detection's audio, from
//! `WAKE_REACH` before the detector fired to the end of what was said, recognised by
//! `hearth-stt` (whisper tiny.en, with the wake words and the demo home's words as its prompt,
//! as `hearth run` starts it) through hearth's Stt actor, and judged by
//! `hearth::conductor::wake_word::after_wake_word`: a detection whose transcript lacks the wake word is not
//! a request (the conductor drops it). Recognised open, without the house's phrase set: the
//! phrase pass only ever writes a request of the house, never a wake word the audio lacks.

use hearth::conductor::attention::WAKE_REACH;
use hearth::voice::Hold;
use hearth_testkit::scenes::ears::Ears;

/// The most audio after the detection a check hears (an utterance Listen would cut).
const MOST_AFTER_S: f64 = 8.0;

/// One detection checked.
#[derive(Debug, Clone)]
pub struct Checked {
    /// The transcript.
    pub heard: String,
    /// Whether it has the wake word (the turn stands).
    pub kept: bool,
}

/// The check of a detection that ended at `at` in `samples` (16 kHz), of what was said up to
/// `said_end` (at most [`MOST_AFTER_S`] after it), for `phrase`.
pub fn check(
    ears: &Ears,
    samples: &[f32],
    at: usize,
    said_end: usize,
    phrase: &str,
) -> Result<Checked, String> {
    let from = at.saturating_sub(WAKE_REACH as usize);
    let most = at + (MOST_AFTER_S * 16_000.0) as usize;
    let to = said_end.clamp(at, most).min(samples.len());
    let heard = ears.hear(&samples[from..to], Hold::Open)?.text;
    let kept = hearth::conductor::wake_word::after_wake_word(
        &heard,
        phrase,
        hearth::conductor::wake_word::WakeMatch::Strict,
    )
    .is_some();
    Ok(Checked { heard, kept })
}

/// Each model's activations on the false-activation stream, checked: what was said up to
/// the next sentence's start.
pub fn check_activations(
    ears: &Ears,
    models: &[super::Model],
    heard: &[super::Heard],
    stream: &[f32],
    parts: &[super::Part],
) -> Result<Vec<Vec<Checked>>, String> {
    let starts: Vec<usize> = parts
        .iter()
        .flat_map(|p| std::iter::once(p.start).chain(p.sentences.iter().map(|(s, _)| *s)))
        .collect();
    models
        .iter()
        .zip(heard)
        .map(|(m, h)| {
            h.detections
                .iter()
                .map(|d| {
                    let at = d.at_sample as usize;
                    let next = starts.iter().copied().filter(|&s| s > at).min();
                    check(ears, stream, at, next.unwrap_or(stream.len()), &m.phrase)
                })
                .collect()
        })
        .collect()
}

/// Misses with the transcript check: a detection whose transcript lacks the wake word is a
/// miss too.
pub fn heard_miss_table(models: &[super::Model], trials: &[super::Trial]) -> String {
    let mut out = String::from(
        "### Misses with the transcript check\n\n\
         The same mixes; each detection's audio (from 1.5 s before it to 0.3 s after the \
         speech) recognised by hearth-stt and kept only when its transcript has the wake word \
         (`hearth::conductor::wake_word::after_wake_word`), as `hearth run` does.\n\n\
         | wake word | noisy mixes: misses, detector | with the check | quiet: detector | \
         with the check | detections dropped | dropped as heard |\n|---|---|---|---|---|---|---|\n",
    );
    for (m, model) in models.iter().enumerate() {
        let own: Vec<&super::Trial> = trials
            .iter()
            .filter(|t| t.model == m && t.said == m)
            .collect();
        let rates = |quiet: bool| {
            let of: Vec<&&super::Trial> = own
                .iter()
                .filter(|t| matches!(t.condition, super::Condition::Quiet) == quiet)
                .collect();
            let missed = of.iter().filter(|t| t.hit_s.is_none()).count();
            let dropped = of
                .iter()
                .filter(|t| t.checked.as_ref().is_some_and(|c| !c.kept))
                .count();
            (
                super::rate_cell(missed, of.len()),
                super::rate_cell(missed + dropped, of.len()),
            )
        };
        let (noisy, noisy_checked) = rates(false);
        let (quiet, quiet_checked) = rates(true);
        let dropped: Vec<&Checked> = own
            .iter()
            .filter_map(|t| t.checked.as_ref())
            .filter(|c| !c.kept)
            .collect();
        let examples: Vec<String> = dropped
            .iter()
            .take(3)
            .map(|c| format!("\"{}\"", c.heard))
            .collect();
        out.push_str(&format!(
            "| {} | {noisy} | {noisy_checked} | {quiet} | {quiet_checked} | {} of {} | {} |\n",
            model.phrase,
            dropped.len(),
            own.iter().filter(|t| t.checked.is_some()).count(),
            examples.join("; ")
        ));
    }
    out
}

/// False activations with the transcript check.
pub fn heard_false_table(
    models: &[super::Model],
    heard: &[super::Heard],
    checked: &[Vec<Checked>],
    parts: &[super::Part],
    total: usize,
) -> String {
    let hours = super::secs(total) / 3600.0;
    let mut out = String::from(
        "### False activations with the transcript check\n\n\
         Each activation's audio (from 1.5 s before it to the next sentence, at most 8 s on) \
         recognised by hearth-stt; kept (a turn) only when its transcript has the wake word.\n\n\
         | wake word | activations | per hour, detector | kept | per hour, with the check |\n\
         |---|---|---|---|---|\n",
    );
    for ((m, h), c) in models.iter().zip(heard).zip(checked) {
        let kept = c.iter().filter(|c| c.kept).count();
        out.push_str(&format!(
            "| {} | {} | {:.2} | {kept} | {:.2} |\n",
            m.phrase,
            h.detections.len(),
            h.detections.len() as f64 / hours,
            kept as f64 / hours
        ));
    }
    if checked.iter().any(|c| !c.is_empty()) {
        out.push_str("\n| wake word | words | heard | kept |\n|---|---|---|---|\n");
        for ((m, h), c) in models.iter().zip(heard).zip(checked) {
            for (d, c) in h.detections.iter().zip(c) {
                let words = super::locate(parts, d.at_sample)
                    .and_then(|(_, s)| s)
                    .unwrap_or("–");
                out.push_str(&format!(
                    "| {} | {words} | {} | {} |\n",
                    m.phrase,
                    c.heard,
                    if c.kept { "yes" } else { "no" }
                ));
            }
        }
    }
    out
}
