// The figures of a run, and its Markdown tables.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

use super::score::{Asked, Scored, Verdict};
use super::set::Kind;

/// A run's figures.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    pub mode: String,
    pub set: String,
    /// The tools' manifests as declared, or `bare` (no `[[tool.intent]]`, no `say`).
    pub tools_as: String,
    /// Whether local intents were on (`[agent] intents`).
    pub intents: bool,
    /// Who spoke the requests ("piper", "espeak-ng ..."), or "typed".
    pub voice: String,
    pub cases: usize,
    pub right: usize,
    /// Per kind: cases, right.
    pub by_kind: BTreeMap<&'static str, (usize, usize)>,
    pub wrong: usize,
    pub missed: usize,
    /// Cases with a reply that claims what no call did or read.
    pub false_claims: usize,
    /// Reply sentences that state a reading no call of their turn read or set.
    pub fabricated_readings: usize,
    /// Calls that ran that their request did not ask for.
    pub unasked_calls: usize,
    /// Cases whose reply is the request said back.
    pub echoed: usize,
    /// `none` cases, and those of them that made calls.
    pub nones: usize,
    pub calls_on_none: usize,
    pub duplicated: usize,
    pub misheard: usize,
    /// Cases heard as more than one turn (a request cut at a pause; not a question and its
    /// yes).
    pub split: usize,
    /// Cases where hearth asked back before running: the right calls after the yes, or not.
    pub asked_then_right: usize,
    pub asked_and_wrong: usize,
    /// Cases that wanted calls where none ran and nothing was asked.
    pub refused: usize,
    /// Turns heard, and those interrupted or failed.
    pub turns: usize,
    pub interrupted: usize,
    pub errors: usize,
    /// Median end of speech → first audible reply, ms (voice modes).
    pub first_voice_ms: Option<f64>,
    /// Median request → reply decided, ms (the agent's turn).
    pub total_ms: Option<f64>,
    /// Per handling path (`turn.path`): turns, median first voice, median total.
    pub paths: BTreeMap<String, PathFigures>,
}

#[derive(Debug, Clone, Serialize)]
pub struct PathFigures {
    pub turns: usize,
    pub first_voice_ms: Option<f64>,
    /// Median endpoint → first audible reply, ms (voice modes).
    pub after_endpoint_ms: Option<f64>,
    pub total_ms: Option<f64>,
}

pub fn median(mut v: Vec<f64>) -> Option<f64> {
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => None,
        n if n % 2 == 1 => Some(v[n / 2]),
        n => Some((v[n / 2 - 1] + v[n / 2]) / 2.0),
    }
}

/// The figures of scored cases.
pub fn summarise(mode: &str, set: &str, scored: &[Scored]) -> Summary {
    let count = |f: &dyn Fn(&Scored) -> bool| scored.iter().filter(|s| f(s)).count();
    let turns: Vec<_> = scored.iter().flat_map(|s| &s.turns).collect();
    let mut by_kind = BTreeMap::new();
    for kind in Kind::ALL {
        let of: Vec<_> = scored.iter().filter(|s| s.kind == kind).collect();
        let right = of.iter().filter(|s| s.verdict == Verdict::Right).count();
        by_kind.insert(kind.label(), (of.len(), right));
    }
    let mut paths = BTreeMap::new();
    let mut named: BTreeMap<String, Vec<_>> = BTreeMap::new();
    for t in &turns {
        if let Some(p) = &t.path {
            named.entry(p.clone()).or_default().push(*t);
        }
    }
    for (p, ts) in named {
        paths.insert(
            p,
            PathFigures {
                turns: ts.len(),
                first_voice_ms: median(ts.iter().filter_map(|t| t.first_voice_ms).collect()),
                after_endpoint_ms: median(ts.iter().filter_map(|t| t.after_endpoint_ms).collect()),
                total_ms: median(ts.iter().filter_map(|t| t.total_ms).collect()),
            },
        );
    }
    Summary {
        mode: mode.into(),
        set: set.into(),
        tools_as: "declared".into(),
        intents: true,
        voice: if matches!(mode, "typed" | "typed-session") {
            "typed".into()
        } else {
            "piper".into()
        },
        cases: scored.len(),
        right: count(&|s| s.verdict == Verdict::Right),
        by_kind,
        wrong: count(&|s| s.verdict == Verdict::Wrong),
        missed: count(&|s| s.verdict == Verdict::Missed),
        false_claims: count(&|s| s.false_claim.is_some()),
        fabricated_readings: scored.iter().map(|s| s.fabricated.len()).sum(),
        unasked_calls: scored.iter().map(|s| s.unasked.len()).sum(),
        echoed: count(&|s| s.echoed),
        nones: count(&|s| s.kind == Kind::None),
        calls_on_none: count(&|s| s.calls_on_none),
        duplicated: count(&|s| s.duplicated),
        misheard: count(&|s| s.misheard),
        split: count(&|s| s.split()),
        asked_then_right: count(&|s| s.asked == Asked::ThenRight),
        asked_and_wrong: count(&|s| s.asked == Asked::ThenWrong),
        refused: count(&|s| s.refused),
        turns: turns.len(),
        interrupted: turns.iter().filter(|t| t.interrupted).count(),
        errors: turns.iter().filter(|t| t.error.is_some()).count(),
        first_voice_ms: median(turns.iter().filter_map(|t| t.first_voice_ms).collect()),
        total_ms: median(turns.iter().filter_map(|t| t.total_ms).collect()),
        paths,
    }
}

/// The nearest-rank 95th percentile.
pub fn p95(mut v: Vec<f64>) -> Option<f64> {
    v.sort_by(f64::total_cmp);
    let rank = (v.len() as f64 * 0.95).ceil() as usize;
    v.get(rank.max(1) - 1).copied()
}

/// The stages that are durations of their own (recognition), not points on the way from the
/// end of speech to the first voice.
const DURATIONS: [&str; 2] = ["stt", "stt_wait"];

/// How long a turn spent on `stage`: its time less that of the stage on the way before it
/// (the end of speech for the first). `None`: the turn has no such stage.
fn share(turn: &super::score::Observed, stage: &str) -> Option<f64> {
    let on_the_way = turn
        .stages
        .iter()
        .filter(|(k, _)| !DURATIONS.contains(&k.as_str()));
    let mut before = 0.0;
    for (k, at) in on_the_way {
        if k == stage {
            return Some(at - before);
        }
        before = *at;
    }
    None
}

/// Per handling path, each stage of the voice turns (ms from the end of speech): median and
/// 95th percentile over the turns that reached it, and of its share (what it adds to the
/// stage before it: a change that makes one stage slower shows there); and the path's first turn against the
/// median of the others (the first command after start).
pub fn stage_table(scored: &[Scored]) -> String {
    let mut named: BTreeMap<&str, Vec<&super::score::Observed>> = BTreeMap::new();
    for t in scored.iter().flat_map(|s| &s.turns) {
        if let (Some(p), false) = (&t.path, t.stages.is_empty()) {
            named.entry(p).or_default().push(t);
        }
    }
    let mut out = String::new();
    for (path, turns) in named {
        let _ = write!(
            out,
            "
{path} path, {} turns: ms from the end of speech (its share: ms after the stage before it
on the way to the first voice, per turn)

| stage | turns | median | p95 | share, median | share, p95 |
|---|---|---|---|---|---|
",
            turns.len()
        );
        let mut order: Vec<&str> = Vec::new();
        for t in &turns {
            for (k, _) in &t.stages {
                if !order.contains(&k.as_str()) {
                    order.push(k);
                }
            }
        }
        for stage in order {
            let v: Vec<f64> = turns
                .iter()
                .filter_map(|t| t.stages.iter().find(|(k, _)| k == stage).map(|(_, ms)| *ms))
                .collect();
            let shares: Vec<f64> = turns.iter().filter_map(|t| share(t, stage)).collect();
            let (share_median, share_p95) = match DURATIONS.contains(&stage) {
                true => ("–".to_string(), "–".to_string()),
                false => (ms(median(shares.clone())), ms(p95(shares))),
            };
            let _ = writeln!(
                out,
                "| {stage} | {} | {} | {} | {share_median} | {share_p95} |",
                v.len(),
                ms(median(v.clone())),
                ms(p95(v))
            );
        }
        let rest = median(turns[1..].iter().filter_map(|t| t.first_voice_ms).collect());
        let _ = writeln!(
            out,
            "
first {path} turn's first voice: {} ms (\"{}\"); the {} after it: median {} ms",
            ms(turns[0].first_voice_ms),
            cell(&turns[0].heard, 60),
            turns.len() - 1,
            ms(rest)
        );
    }
    out
}

/// A table cell: one line, no `|`, at most `max` characters.
pub fn cell(s: &str, max: usize) -> String {
    let one: String = s
        .replace('|', "/")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    if one.chars().count() <= max {
        return one;
    }
    let cut: String = one.chars().take(max.saturating_sub(1)).collect();
    format!("{cut}…")
}

fn ms(v: Option<f64>) -> String {
    v.map_or("–".into(), |v| format!("{v:.0}"))
}

/// The verdict and its flags, as one cell.
fn verdict_cell(s: &Scored) -> String {
    let mut parts = vec![match s.verdict {
        Verdict::Right => "right",
        Verdict::Wrong => "WRONG",
        Verdict::Missed => "MISSED",
    }
    .to_string()];
    let flags = [
        (s.false_claim.is_some(), "false claim"),
        (!s.fabricated.is_empty(), "fabricated reading"),
        (!s.unasked.is_empty(), "unasked call"),
        (s.echoed, "echo"),
        (s.calls_on_none, "calls on none"),
        (s.duplicated, "duplicated"),
        (s.misheard, "misheard"),
        (s.turns.iter().any(|t| t.interrupted), "interrupted"),
        (s.turns.iter().any(|t| t.error.is_some()), "error"),
        (s.split(), "several turns"),
        (s.asked != Asked::No, "asked first"),
        (s.refused, "refused"),
    ];
    parts.extend(flags.iter().filter(|f| f.0).map(|f| f.1.to_string()));
    parts.join(", ")
}

/// One row per case: what was said and heard, the calls that ran, the reply, the verdict.
pub fn case_table(scored: &[Scored]) -> String {
    let mut out = String::from(
        "| # | kind | said | heard | calls | reply | path | first voice ms | verdict |\n\
         |---|---|---|---|---|---|---|---|---|\n",
    );
    for (i, s) in scored.iter().enumerate() {
        let mut calls = s.ran.join(" ");
        if !s.failed.is_empty() {
            let _ = write!(calls, " failed: {}", s.failed.join(" "));
        }
        let paths: Vec<&str> = s.turns.iter().filter_map(|t| t.path.as_deref()).collect();
        let voice: Vec<String> = s.turns.iter().map(|t| ms(t.first_voice_ms)).collect();
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            i + 1,
            s.kind.label(),
            cell(&s.say, 70),
            cell(&s.heard(), 70),
            cell(&calls, 110),
            cell(&s.reply(), 90),
            paths.join(" / "),
            voice.join(" / "),
            verdict_cell(s)
        );
    }
    out
}

/// What was misheard, and which replies were false claims, fabricated readings, unasked
/// calls or echoes, as lists (a list with nothing in it is left out).
pub fn details(scored: &[Scored]) -> String {
    let ran = |s: &Scored| {
        if s.ran.is_empty() {
            "nothing".to_string()
        } else {
            s.ran.join(" ")
        }
    };
    let mut out = String::new();
    let mut section = |title: &str, line: &dyn Fn(&Scored) -> Option<String>| {
        let lines: Vec<String> = scored.iter().filter_map(line).collect();
        if !lines.is_empty() {
            let _ = writeln!(out, "\n{title}:");
            for l in lines {
                let _ = writeln!(out, "- {l}");
            }
        }
    };
    section(
        "Phrase pass (the open transcript was not a request of the house's set, or came from \
         a wider window after a loop)",
        &|s| {
            let lines: Vec<String> = s
                .turns
                .iter()
                .filter_map(|t| t.phrase_search())
                .map(|search| {
                    let mut found = match (&search.phrase, search.below) {
                        (Some(p), Some(b)) if b < 0.0 => format!("{p:?} {:.2} nats likelier", -b),
                        (Some(p), Some(b)) => format!("{p:?} {b:.2} nats below"),
                        _ => "nothing within the margin".into(),
                    };
                    if let Some(c) = search.way_contrast {
                        let _ = write!(found, ", its way {c:.2} nats over the others");
                    }
                    let outcome = if search.taken { "taken" } else { "left" };
                    format!(
                        "said {:?}, whisper wrote {:?}, the set's {found}: {outcome}",
                        s.say, search.open
                    )
                })
                .collect();
            (!lines.is_empty()).then(|| lines.join("; "))
        },
    );
    section("Misheard", &|s| {
        s.misheard
            .then(|| format!("said {:?}, heard {:?}", s.say, s.heard()))
    });
    section("False claims", &|s| {
        let why = s.false_claim.as_deref()?;
        Some(format!("{:?} (ran: {}): {why}", s.say, ran(s)))
    });
    section("Fabricated readings", &|s| {
        (!s.fabricated.is_empty())
            .then(|| format!("{:?} (ran: {}): {}", s.say, ran(s), s.fabricated.join("; ")))
    });
    section("Unasked calls", &|s| {
        (!s.unasked.is_empty()).then(|| {
            format!(
                "{:?} (heard {:?}): {}",
                s.say,
                s.heard(),
                s.unasked.join(" ")
            )
        })
    });
    section("Echoed requests", &|s| {
        s.echoed
            .then(|| format!("{:?} → {:?} (ran: {})", s.say, s.reply(), ran(s)))
    });
    out
}

/// The header of the summary table ([`summary_row`] gives its rows).
pub fn summary_header() -> String {
    let kinds: Vec<&str> = Kind::ALL.iter().map(|k| k.label()).collect();
    format!(
        "| mode | set | tools | voice | right | {} | asked, then right | asked, wrong | refused | false claims | fabricated readings | unasked calls | echoed | calls on none | duplicated | misheard | split | missed | interrupted | errors | median first voice ms | median turn ms |\n|{}\n",
        kinds.join(" | "),
        "---|".repeat(21 + kinds.len())
    )
}

/// One run as a row of the summary table.
pub fn summary_row(s: &Summary) -> String {
    let frac = |(n, right): (usize, usize)| format!("{right}/{n}");
    let kinds: Vec<String> = Kind::ALL
        .iter()
        .map(|k| frac(s.by_kind.get(k.label()).copied().unwrap_or((0, 0))))
        .collect();
    let pct = if s.cases > 0 {
        100.0 * s.right as f64 / s.cases as f64
    } else {
        0.0
    };
    let tools = if s.intents {
        s.tools_as.clone()
    } else {
        format!("{}, no intents", s.tools_as)
    };
    format!(
        "| {} | {} | {tools} | {} | {}/{} ({pct:.0} %) | {} | {} | {} | {} | {} | {} | {} | {} | {}/{} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
        s.mode,
        s.set,
        s.voice,
        s.right,
        s.cases,
        kinds.join(" | "),
        s.asked_then_right,
        s.asked_and_wrong,
        s.refused,
        s.false_claims,
        s.fabricated_readings,
        s.unasked_calls,
        s.echoed,
        s.calls_on_none,
        s.nones,
        s.duplicated,
        s.misheard,
        s.split,
        s.missed,
        s.interrupted,
        s.errors,
        ms(s.first_voice_ms),
        ms(s.total_ms)
    )
}

/// Turns per handling path, when hearth names one.
pub fn path_table(s: &Summary) -> String {
    if s.paths.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "\n| path | turns | median first voice ms | median endpoint → voice ms | median turn ms |\n\
         |---|---|---|---|---|\n",
    );
    for (p, f) in &s.paths {
        let _ = writeln!(
            out,
            "| {p} | {} | {} | {} | {} |",
            f.turns,
            ms(f.first_voice_ms),
            ms(f.after_endpoint_ms),
            ms(f.total_ms)
        );
    }
    out
}
