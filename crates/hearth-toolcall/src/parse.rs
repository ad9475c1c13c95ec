//! The parser chain: run detectors on the raw text, apply the think rule, pick strict
//! formats over loose ones, validate, and build the reply.
//!
//! One function, [`Parser::analyze`], serves both the one-shot parse (`eof = true`) and
//! every step of the streaming parser (`eof = false`, where it also says how much of the
//! text is settled). Sharing it is what makes streamed output equal one-shot output.

use std::ops::Range;
use std::sync::Arc;

use aho_corasick::{AhoCorasick, MatchKind};
use serde::Serialize;

use super::detector::{DetectCtx, Detector, Found, FoundKind, Strictness};
use super::registry::{DetectorRegistry, RegistryError};
use super::think::{known_tags, Region, ThinkMatcher, ThinkScan, ThinkTags};
use super::validate::{Refused, ToolCall, ToolSet};
use super::{fence, tokens};

/// A candidate that did not become a call, and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Rejected {
    pub name: Option<String>,
    pub reason: String,
}

/// What every parse reports (the fail-closed note's mandatory fields).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Telemetry {
    /// The detector(s) whose markup was used, joined by `+`, or `none`.
    pub parse_mode: String,
    /// True when the calls came from a loose format (bare JSON, pythonic, inline).
    pub fallback_used: bool,
    /// Candidates seen: calls found plus malformed markup, before validation.
    pub candidate_count: usize,
    /// `pass`, `fail: <reason>`, `none` (no candidates) or `unchecked (no tools given)`.
    pub schema_validation: String,
}

/// The result of parsing one model output.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ParseOutput {
    pub calls: Vec<ToolCall>,
    /// The text to answer with: think blocks, call markup and special tokens removed.
    pub reply: String,
    /// The reasoning inside think blocks, or null when there was none.
    pub reasoning: Option<String>,
    pub rejected: Vec<Rejected>,
    pub telemetry: Telemetry,
    /// True when every call came from a strict (native) format: the hop loop may then use
    /// the template's tool role; otherwise it sends results as a synthetic user message.
    #[serde(skip)]
    pub native: bool,
}

/// Errors building a parser.
#[derive(Debug, thiserror::Error)]
pub enum ParserError {
    #[error(transparent)]
    Registry(#[from] RegistryError),
    #[error("could not build the trigger matcher: {0}")]
    Matcher(String),
}

/// A configured parser chain. Cheap to share (`Arc` inside), built once per preset.
#[derive(Clone)]
pub struct Parser {
    inner: Arc<Inner>,
}

struct Inner {
    chain: Vec<Arc<dyn Detector>>,
    triggers: Option<AhoCorasick>,
    trigger_owner: Vec<usize>,
    always: Vec<usize>,
    think: ThinkMatcher,
    start_in_think: Option<bool>,
    /// Every marker whose partial presence at the end of a stream must be held back.
    hold_markers: Vec<String>,
}

impl std::fmt::Debug for Parser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Parser")
            .field("chain", &self.chain_names())
            .field("think", &self.inner.think.tags())
            .field("start_in_think", &self.inner.start_in_think)
            .finish()
    }
}

/// One found, as the chain sees it.
#[derive(Debug, Clone)]
struct Item {
    found: Found,
    det: usize,
    loose: bool,
    in_think: bool,
}

/// Everything `analyze` learns about a text.
#[derive(Debug, Clone)]
pub(crate) struct Analysis {
    pub calls: Vec<ToolCall>,
    pub rejected: Vec<Rejected>,
    pub reply: String,
    pub reasoning: Option<String>,
    pub telemetry: Telemetry,
    pub native: bool,
}

impl Parser {
    /// Every registered detector and every known think tag.
    pub fn auto() -> Self {
        Self::build(super::registry().all().to_vec(), known_tags(), None)
    }

    /// A chain from detector names (`auto` = all), resolved against `registry`.
    pub fn from_names<S: AsRef<str>>(
        registry: &DetectorRegistry,
        names: &[S],
        think: Vec<ThinkTags>,
        start_in_think: Option<bool>,
    ) -> Result<Self, ParserError> {
        let chain = registry.resolve(names)?;
        Ok(Self::build(chain, think, start_in_think))
    }

    /// A chain from detectors, in priority order.
    pub fn build(
        chain: Vec<Arc<dyn Detector>>,
        think: Vec<ThinkTags>,
        start_in_think: Option<bool>,
    ) -> Self {
        let mut pats: Vec<String> = Vec::new();
        let mut owner = Vec::new();
        let mut always = Vec::new();
        for (i, d) in chain.iter().enumerate() {
            let t = d.triggers();
            if t.is_empty() {
                always.push(i);
            }
            for p in t.iter().filter(|p| !p.is_empty()) {
                pats.push((*p).to_string());
                owner.push(i);
            }
        }
        let triggers = if pats.is_empty() {
            None
        } else {
            AhoCorasick::builder()
                .match_kind(MatchKind::Standard)
                .build(&pats)
                .ok()
        };
        if triggers.is_none() && !pats.is_empty() {
            // Could not build the automaton (pathological trigger set): run everything.
            always = (0..chain.len()).collect();
        }
        let think = ThinkMatcher::new(think);
        let mut hold_markers: Vec<String> = pats.iter().filter(|p| p.len() > 1).cloned().collect();
        for t in think.tags() {
            hold_markers.push(t.open.clone());
            hold_markers.push(t.close.clone());
        }
        hold_markers.sort();
        hold_markers.dedup();
        Parser {
            inner: Arc::new(Inner {
                chain,
                triggers,
                trigger_owner: owner,
                always,
                think,
                start_in_think,
                hold_markers,
            }),
        }
    }

    /// The same chain, told whether the prompt opened a think block.
    pub fn with_start_in_think(&self, start_in_think: Option<bool>) -> Self {
        let i = &self.inner;
        Parser {
            inner: Arc::new(Inner {
                chain: i.chain.clone(),
                triggers: i.triggers.clone(),
                trigger_owner: i.trigger_owner.clone(),
                always: i.always.clone(),
                think: i.think.clone(),
                start_in_think,
                hold_markers: i.hold_markers.clone(),
            }),
        }
    }

    pub fn chain_names(&self) -> Vec<String> {
        self.inner
            .chain
            .iter()
            .map(|d| d.name().to_string())
            .collect()
    }

    /// Parse one complete model output.
    pub fn parse(&self, text: &str, tools: &ToolSet) -> ParseOutput {
        let a = self.analyze(text, tools, true);
        tracing::debug!(
            target: "hearth::parse",
            parse_mode = %a.telemetry.parse_mode,
            fallback_used = a.telemetry.fallback_used,
            candidate_count = a.telemetry.candidate_count,
            schema_validation = %a.telemetry.schema_validation,
            calls = a.calls.len(),
            rejected = a.rejected.len(),
            "tool-call parse"
        );
        ParseOutput {
            calls: a.calls,
            reply: a.reply,
            reasoning: a.reasoning,
            rejected: a.rejected,
            telemetry: a.telemetry,
            native: a.native,
        }
    }

    /// A streaming parser over this chain.
    pub fn stream<'a>(&'a self, tools: &'a ToolSet) -> super::stream::StreamParser<'a> {
        super::stream::StreamParser::new(self, tools)
    }

    /// The core. With `eof == false`, calls and reply cover only the settled prefix.
    pub(crate) fn analyze(&self, text: &str, tools: &ToolSet, eof: bool) -> Analysis {
        let inner = &*self.inner;
        let (masked, code, code_open) = fence::mask_with_ranges(text);
        if let (false, Some(p)) = (eof, code_open) {
            // Code that is still open may yet close (or not) and change how everything
            // around it reads: while streaming, the text from there on has not arrived.
            if p < text.len() {
                return self.analyze(&text[..p], tools, false);
            }
        }
        let m: &str = &masked;
        let run = self.triggered(m);
        let ctx = DetectCtx { eof, tools };
        let scan = inner.think.scan(m, inner.start_in_think, eof);
        let Detected {
            mut items,
            mut rejected,
            think_holds,
        } = self.detect(m, &ctx, &run, &scan);
        let (mut hold, mut fallback_used) = strict_first(&mut items, eof);
        let settled = if eof {
            text.len()
        } else {
            hold.extend(scan.hold_from);
            hold.extend(think_holds);
            self.streaming_holds(text, m, &items, &mut hold);
            hold.iter().copied().min().unwrap_or(text.len())
        };
        let settled = outside_markup(&items, settled);
        if !eof {
            items.retain(|it| it.found.span.end <= settled && it.found.kind != FoundKind::Pending);
        }

        // loose gating: allowlisted names only; conflicting candidates never run
        let mut removed: Vec<Range<usize>> = Vec::new();
        if items.iter().any(|it| it.loose) {
            fallback_used = true;
            gate_loose(&mut items, tools, &mut rejected, &mut removed);
        }
        let v = self.validate(&items, tools, &scan, &mut rejected);
        removed.extend(spans_of(&items));
        removed.extend(
            scan.regions
                .iter()
                .filter(|r| r.outer.start < settled)
                .map(|r| r.outer.clone()),
        );
        let reply = build_text(text, 0..settled, &merge(removed), &code);
        let reasoning = if eof {
            reasoning_of(text, &scan, &items, &code)
        } else {
            None
        };
        let telemetry = v.telemetry(tools, fallback_used);
        Analysis {
            native: v.native && !v.calls.is_empty(),
            calls: v.calls,
            rejected,
            reply,
            reasoning,
            telemetry,
        }
    }

    /// Which detectors run: those always on, and those whose trigger occurs (one pass over
    /// every trigger).
    fn triggered(&self, m: &str) -> Vec<bool> {
        let inner = &*self.inner;
        let mut run = vec![false; inner.chain.len()];
        for &i in &inner.always {
            run[i] = true;
        }
        if let Some(ac) = &inner.triggers {
            let mut left = run.iter().filter(|r| !**r).count();
            for mat in ac.find_overlapping_iter(m) {
                if left == 0 {
                    break;
                }
                if let Some(&o) = inner.trigger_owner.get(mat.pattern().as_usize()) {
                    if !run[o] {
                        run[o] = true;
                        left -= 1;
                    }
                }
            }
        }
        run
    }

    /// Detect: strict formats first; loose ones only if no strict markup is decided (they
    /// could only lose to it).
    fn detect(&self, m: &str, ctx: &DetectCtx<'_>, run: &[bool], scan: &ThinkScan) -> Detected {
        let eof = ctx.eof;
        let mut found: Vec<Item> = Vec::new();
        self.detect_into(m, ctx, run, Strictness::Strict, &mut found);
        // Strict founds are few unless the text is hostile; keep a copy only when small, and
        // detect again in the rare case loose formats are needed after many strict founds.
        let kept = (found.len() <= 64).then(|| found.clone());
        let settled = settle_items(m, scan, found, eof);
        let strict_decided = settled
            .0
            .iter()
            .any(|it| !it.loose && it.found.kind != FoundKind::Pending);
        let (items, rejected, think_holds) = if strict_decided {
            settled
        } else {
            let mut all = kept.unwrap_or_else(|| {
                let mut again = Vec::new();
                self.detect_into(m, ctx, run, Strictness::Strict, &mut again);
                again
            });
            let before = all.len();
            self.detect_into(m, ctx, run, Strictness::Loose, &mut all);
            if all.len() > before {
                settle_items(m, scan, all, eof)
            } else {
                settled
            }
        };
        Detected {
            items,
            rejected,
            think_holds,
        }
    }

    /// While streaming, anything still open holds back the rest: undecided or malformed
    /// markup (where it ends may depend on text that has not arrived: a detector looks ahead
    /// for the next marker), markup reaching the end, a partial special token or marker.
    fn streaming_holds(&self, text: &str, m: &str, items: &[Item], hold: &mut Vec<usize>) {
        let end = m.trim_end().len();
        for it in items {
            let undecided = matches!(
                it.found.kind,
                FoundKind::Pending | FoundKind::Malformed { .. }
            );
            if undecided || it.found.span.end >= end {
                hold.push(it.found.span.start);
            }
        }
        hold.extend(tokens::partial_from(text));
        hold.extend(self.partial_marker(m));
    }

    /// Validate every candidate against the tools (the only place a call is made); a call
    /// repeated inside and after reasoning runs once.
    fn validate(
        &self,
        items: &[Item],
        tools: &ToolSet,
        scan: &ThinkScan,
        rejected: &mut Vec<Rejected>,
    ) -> Validated<'_> {
        let mut v = Validated {
            calls: Vec::new(),
            candidate_count: 0,
            first_failure: None,
            modes: Vec::new(),
            native: true,
        };
        let mut all_keys: std::collections::HashSet<String> = std::collections::HashSet::new();
        let mut think_keys: std::collections::HashSet<String> = std::collections::HashSet::new();
        for it in items {
            let det_name = self.inner.chain[it.det].name();
            match &it.found.kind {
                FoundKind::Calls(cands) => {
                    v.saw(det_name);
                    for c in cands {
                        v.candidate_count += 1;
                        let id =
                            c.id.clone()
                                .unwrap_or_else(|| format!("{}_{}", c.name, v.calls.len()));
                        let call = match tools.call(id, &c.name, c.arguments.clone()) {
                            Ok(call) => call,
                            Err(refused) => {
                                let reason = refusal(tools, &c.name, refused);
                                v.first_failure
                                    .get_or_insert_with(|| format!("{}: {reason}", c.name));
                                rejected.push(Rejected {
                                    name: Some(c.name.clone()),
                                    reason,
                                });
                                continue;
                            }
                        };
                        if !scan.regions.is_empty() {
                            let key = format!("{}\u{0}{}", c.name, c.arguments);
                            let dup = if it.in_think {
                                all_keys.contains(&key)
                            } else {
                                think_keys.contains(&key)
                            };
                            if dup {
                                continue;
                            }
                            if it.in_think {
                                think_keys.insert(key.clone());
                            }
                            all_keys.insert(key);
                        }
                        v.native &= !it.loose;
                        v.calls.push(call);
                    }
                }
                FoundKind::Malformed { name, reason } => {
                    v.saw(det_name);
                    v.candidate_count += 1;
                    v.first_failure.get_or_insert_with(|| match name {
                        Some(n) => format!("{n}: {reason}"),
                        None => reason.clone(),
                    });
                    rejected.push(Rejected {
                        name: name.clone(),
                        reason: reason.clone(),
                    });
                }
                FoundKind::Pending => {}
            }
        }
        v
    }

    /// Run the detectors of one strictness that the trigger scan selected.
    fn detect_into(
        &self,
        m: &str,
        ctx: &DetectCtx<'_>,
        run: &[bool],
        which: Strictness,
        items: &mut Vec<Item>,
    ) {
        let mut buf: Vec<Found> = Vec::new();
        for (i, d) in self.inner.chain.iter().enumerate() {
            if !run[i] || d.strictness() != which {
                continue;
            }
            buf.clear();
            d.detect(m, ctx, &mut buf);
            for mut f in buf.drain(..) {
                let s = &f.span;
                if s.start >= s.end
                    || s.end > m.len()
                    || !m.is_char_boundary(s.start)
                    || !m.is_char_boundary(s.end)
                {
                    tracing::warn!(detector = d.name(), span = ?f.span, "detector returned an invalid span; ignored");
                    continue;
                }
                if ctx.eof && f.kind == FoundKind::Pending {
                    f.kind = FoundKind::Malformed {
                        name: None,
                        reason: format!("incomplete {} markup at the end of the output", d.name()),
                    };
                }
                items.push(Item {
                    loose: which == Strictness::Loose || f.loose,
                    found: f,
                    det: i,
                    in_think: false,
                });
            }
        }
    }

    /// While streaming: where a detector trigger or think tag may be starting at the end.
    fn partial_marker(&self, text: &str) -> Option<usize> {
        let mut best: Option<usize> = None;
        for mk in &self.inner.hold_markers {
            let max = mk.len().saturating_sub(1).min(text.len());
            for k in (1..=max).rev() {
                if !mk.is_char_boundary(k) || !text.is_char_boundary(text.len() - k) {
                    continue;
                }
                if text.as_bytes()[text.len() - k..] == mk.as_bytes()[..k] {
                    let p = text.len() - k;
                    best = Some(best.map_or(p, |b| b.min(p)));
                    break;
                }
            }
        }
        best
    }
}

/// What detection found, settled against the reasoning blocks.
struct Detected {
    items: Vec<Item>,
    rejected: Vec<Rejected>,
    /// Where reasoning that may still hide markup begins (held while streaming).
    think_holds: Vec<usize>,
}

/// Strict formats first, loose ones only as a fallback: with any strict markup the loose
/// founds go (while streaming, held back until the strict markup is complete); with none,
/// loose founds are held back while streaming (a strict one may yet appear). Returns the
/// holds and whether a fallback is in play.
fn strict_first(items: &mut Vec<Item>, eof: bool) -> (Vec<usize>, bool) {
    let strict_complete = items
        .iter()
        .any(|it| !it.loose && it.found.kind != FoundKind::Pending);
    let strict_any = items.iter().any(|it| !it.loose);
    let mut hold = Vec::new();
    if strict_any {
        if !eof && !strict_complete {
            hold.extend(
                items
                    .iter()
                    .filter(|it| it.loose)
                    .map(|it| it.found.span.start),
            );
        }
        items.retain(|it| !it.loose);
    } else if !eof {
        hold.extend(items.iter().map(|it| it.found.span.start));
        items.clear();
    }
    (hold, false)
}

/// Never settle in the middle of markup: a found crossing the point holds from its start.
fn outside_markup(items: &[Item], mut settled: usize) -> usize {
    for it in items.iter().rev() {
        if it.found.span.start < settled && settled < it.found.span.end {
            settled = it.found.span.start;
        }
    }
    settled
}

/// Why a candidate cannot run, or `None` when it is valid against `tools`.
fn refusal(tools: &ToolSet, name: &str, refused: Refused) -> String {
    match refused {
        Refused::UnknownTool => format!(
            "unknown tool {name:?}: not in the allowlist ({})",
            allow_list(tools)
        ),
        Refused::Invalid(r) => r,
    }
}

/// The reasoning blocks' text, without the markup found inside them.
fn reasoning_of(
    text: &str,
    scan: &ThinkScan,
    items: &[Item],
    code: &[Range<usize>],
) -> Option<String> {
    if scan.regions.is_empty() {
        return None;
    }
    let spans = merge(spans_of(items));
    let parts: Vec<String> = scan
        .regions
        .iter()
        .map(|r| build_text(text, r.inner.clone(), &spans, code))
        .filter(|s| !s.is_empty())
        .collect();
    (!parts.is_empty()).then(|| parts.join("\n"))
}

/// The valid calls and what validation saw, for the telemetry.
struct Validated<'a> {
    calls: Vec<ToolCall>,
    candidate_count: usize,
    first_failure: Option<String>,
    /// The detectors that found something, in order.
    modes: Vec<&'a str>,
    /// Every call came from a strict (native) format.
    native: bool,
}

impl<'a> Validated<'a> {
    fn saw(&mut self, detector: &'a str) {
        if !self.modes.contains(&detector) {
            self.modes.push(detector);
        }
    }

    fn telemetry(&self, tools: &ToolSet, fallback_used: bool) -> Telemetry {
        let schema_validation = if self.candidate_count == 0 {
            "none".to_string()
        } else if let Some(f) = &self.first_failure {
            format!("fail: {f}")
        } else if tools.is_unrestricted() {
            "unchecked (no tools given)".to_string()
        } else {
            "pass".to_string()
        };
        Telemetry {
            parse_mode: if self.modes.is_empty() {
                "none".into()
            } else {
                self.modes.join("+")
            },
            fallback_used: fallback_used && self.candidate_count > 0,
            candidate_count: self.candidate_count,
            schema_validation,
        }
    }
}

/// Think clipping, overlap resolution and the think rule over one set of founds.
fn settle_items(
    m: &str,
    scan: &ThinkScan,
    mut items: Vec<Item>,
    eof: bool,
) -> (Vec<Item>, Vec<Rejected>, Vec<usize>) {
    // markup starting in a think block cannot run past its close tag
    let mut rejected = Vec::new();
    let holds = clip_to_think(&scan.regions, &mut items, &mut rejected);
    // one winner per place; then, inside think blocks, only complete trailing strict markup
    let mut items = resolve_overlaps(items);
    apply_think_rule(m, &scan.regions, &mut items, &mut rejected);
    if let (false, Some(h)) = (eof, scan.hold_from) {
        // past an undecided think boundary nothing is final yet (a call trailing an
        // unclosed block may still be followed by more reasoning)
        for it in items.iter_mut().filter(|it| it.found.span.start >= h) {
            it.found.kind = FoundKind::Pending;
        }
    }
    (items, rejected, holds)
}

fn allow_list(tools: &ToolSet) -> String {
    if tools.is_empty() {
        return "no tools are offered".into();
    }
    let names: Vec<&str> = tools.names().take(12).collect();
    let more = if tools.len() > 12 { ", …" } else { "" };
    format!("offered: {}{more}", names.join(", "))
}

fn spans_of(items: &[Item]) -> Vec<Range<usize>> {
    items.iter().map(|it| it.found.span.clone()).collect()
}

/// Keep one winner where founds overlap: calls over malformed markup, strict over loose,
/// longer spans over shorter, then chain priority. Pending founds win a place outright
/// (the text there is undecided).
fn resolve_overlaps(mut items: Vec<Item>) -> Vec<Item> {
    if items.len() < 2 {
        return items;
    }
    items.sort_by(|a, b| {
        a.found
            .span
            .start
            .cmp(&b.found.span.start)
            .then(b.found.span.end.cmp(&a.found.span.end))
    });
    let mut out: Vec<Item> = Vec::with_capacity(items.len());
    let mut group: Vec<Item> = Vec::new();
    let mut group_end = 0;
    for it in items {
        if !group.is_empty() && it.found.span.start >= group_end {
            pick(&mut group, &mut out);
        }
        group_end = if group.is_empty() {
            it.found.span.end
        } else {
            group_end.max(it.found.span.end)
        };
        group.push(it);
    }
    pick(&mut group, &mut out);
    out
}

fn pick(group: &mut Vec<Item>, out: &mut Vec<Item>) {
    if group.len() == 1 {
        out.append(group);
        return;
    }
    if let Some(p) = group
        .iter()
        .position(|g| g.found.kind == FoundKind::Pending)
    {
        let start = group.iter().map(|g| g.found.span.start).min().unwrap_or(0);
        let end = group.iter().map(|g| g.found.span.end).max().unwrap_or(0);
        // the place stays strict if any found there is: strict markup is never let go
        // of because a loose pending found happened to overlap it
        let all_loose = group.iter().all(|g| g.loose);
        let mut it = group.swap_remove(p);
        it.found.span = start..end;
        it.loose = all_loose;
        group.clear();
        out.push(it);
        return;
    }
    let key = |g: &Item| {
        (
            !g.loose,
            matches!(g.found.kind, FoundKind::Calls(_)),
            g.found.span.len(),
            std::cmp::Reverse(g.det),
        )
    };
    group.sort_by_key(|g| std::cmp::Reverse(key(g)));
    // chosen spans by start; they never overlap, so checking the neighbours suffices
    let mut chosen: std::collections::BTreeMap<usize, Item> = std::collections::BTreeMap::new();
    for g in group.drain(..) {
        let (s, e) = (g.found.span.start, g.found.span.end);
        let before_ok = chosen
            .range(..=s)
            .next_back()
            .is_none_or(|(_, c)| c.found.span.end <= s);
        let after_ok = chosen.range(s..).next().is_none_or(|(&cs, _)| e <= cs);
        if before_ok && after_ok {
            chosen.insert(s, g);
        }
    }
    out.extend(chosen.into_values());
}

/// Which think block (sorted, disjoint) a byte offset falls in.
fn region_of(regions: &[Region], at: usize) -> Option<usize> {
    let idx = regions.partition_point(|r| r.outer.start <= at);
    idx.checked_sub(1).filter(|&i| at < regions[i].outer.end)
}

/// Mark founds that start inside a think block. Markup cannot run past a block's close tag:
/// a construct that began in a closed block and reaches past its close (pending while
/// streaming, or read to the end of the output like `<|python_tag|>` code) was only
/// mentioned, and is dropped, at the end of the output as while streaming, so the two agree.
///
/// Returns where streaming must hold: a detector whose pending construct began in a closed
/// block stopped scanning there, so the text after that block is not examined yet.
fn clip_to_think(
    regions: &[Region],
    items: &mut Vec<Item>,
    rejected: &mut Vec<Rejected>,
) -> Vec<usize> {
    let mut holds = Vec::new();
    if regions.is_empty() {
        return holds;
    }
    items.retain_mut(|it| {
        let Some(ri) = region_of(regions, it.found.span.start) else {
            return true;
        };
        let r = &regions[ri];
        it.in_think = true;
        if !r.closed || it.found.span.end <= r.inner.end {
            return true;
        }
        match &it.found.kind {
            FoundKind::Pending => holds.push(r.outer.end),
            FoundKind::Calls(cands) if it.found.span.start < r.inner.end => {
                rejected.extend(cands.iter().map(|c| Rejected {
                    name: Some(c.name.clone()),
                    reason: "began inside reasoning and ran past its end, not a call".into(),
                }))
            }
            _ => {}
        }
        false
    });
    holds
}

/// The think rule (see `think.rs`): inside a block, only complete strict markup that
/// trails the block counts; the rest was mentioned while reasoning.
fn apply_think_rule(
    text: &str,
    regions: &[Region],
    items: &mut Vec<Item>,
    rejected: &mut Vec<Rejected>,
) {
    if regions.is_empty() || items.is_empty() {
        return;
    }
    let mut by_region: Vec<Vec<usize>> = vec![Vec::new(); regions.len()];
    for (i, it) in items.iter().enumerate() {
        if let Some(ri) = region_of(regions, it.found.span.start) {
            by_region[ri].push(i);
        }
    }
    let mut keep = vec![true; items.len()];
    let mut trailing = vec![false; items.len()];
    for (ri, r) in regions.iter().enumerate() {
        let members = &by_region[ri];
        if members.is_empty() {
            continue;
        }
        // walk back from the block's end over trailing strict markup
        let mut pos = r.inner.end;
        for &i in members.iter().rev() {
            let it = &items[i];
            if it.loose || it.found.kind == FoundKind::Pending {
                break;
            }
            let end = it.found.span.end.min(pos);
            if text.get(end..pos).is_some_and(|s| s.trim().is_empty()) {
                trailing[i] = true;
                pos = it.found.span.start;
            } else {
                break;
            }
        }
        for &i in members {
            if trailing[i] || (!r.closed && items[i].found.kind == FoundKind::Pending) {
                continue;
            }
            keep[i] = false;
            if let FoundKind::Calls(cands) = &items[i].found.kind {
                for c in cands {
                    rejected.push(Rejected {
                        name: Some(c.name.clone()),
                        reason: "mentioned inside reasoning, not a call (a call in a think block must end it)".into(),
                    });
                }
            }
        }
    }
    let mut k = keep.into_iter();
    items.retain(|_| k.next().unwrap_or(false));
}

/// Loose founds dispatch only allowlisted names, and several separate ones never run.
fn gate_loose(
    items: &mut Vec<Item>,
    tools: &ToolSet,
    rejected: &mut Vec<Rejected>,
    removed: &mut Vec<Range<usize>>,
) {
    // unknown names: not a call at all; the text stays as it was written
    items.retain(|it| {
        let FoundKind::Calls(cands) = &it.found.kind else {
            return true;
        };
        match cands.iter().find(|c| !tools.contains(&c.name)) {
            None => true,
            Some(c) => {
                rejected.push(Rejected {
                    name: Some(c.name.clone()),
                    reason: format!(
                        "unknown tool {:?} in a loose format ({}): left as text",
                        c.name,
                        allow_list(tools)
                    ),
                });
                false
            }
        }
    });
    // identical repeats are one candidate; different ones conflict
    // an empty construct (markup saying "no call", e.g. xLAM's `{"tool_calls": []}`) runs
    // nothing and conflicts with nothing
    let first = items.iter().find_map(|it| match &it.found.kind {
        FoundKind::Calls(c) if !c.is_empty() => Some(c.clone()),
        _ => None,
    });
    let Some(first) = first else {
        return;
    };
    let conflicting = items
        .iter()
        .any(|it| matches!(&it.found.kind, FoundKind::Calls(c) if !c.is_empty() && *c != first));
    if conflicting {
        let n = items
            .iter()
            .filter(|it| matches!(it.found.kind, FoundKind::Calls(_)))
            .count();
        for it in items.iter() {
            if let FoundKind::Calls(cands) = &it.found.kind {
                removed.push(it.found.span.clone());
                for c in cands {
                    rejected.push(Rejected {
                        name: Some(c.name.clone()),
                        reason: format!(
                            "{n} conflicting loose candidates (bare JSON / pythonic): none runs; the model should emit its own tool-call format"
                        ),
                    });
                }
            }
        }
        items.retain(|it| !matches!(it.found.kind, FoundKind::Calls(_)));
        return;
    }
    // exact repeats: keep the first, drop the others from the reply too
    let mut kept_first = false;
    items.retain(|it| match &it.found.kind {
        FoundKind::Calls(_) if kept_first => {
            removed.push(it.found.span.clone());
            false
        }
        FoundKind::Calls(_) => {
            kept_first = true;
            true
        }
        _ => true,
    });
}

/// Sort and merge ranges.
fn merge(mut v: Vec<Range<usize>>) -> Vec<Range<usize>> {
    v.sort_by_key(|r| r.start);
    let mut out: Vec<Range<usize>> = Vec::with_capacity(v.len());
    for r in v {
        match out.last_mut() {
            Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
            _ => out.push(r),
        }
    }
    out
}

/// The text of `within`, minus `removed` ranges and special tokens (tokens inside quoted
/// code are kept: they are what the model quoted), trimmed.
fn build_text(
    text: &str,
    within: Range<usize>,
    removed: &[Range<usize>],
    code: &[Range<usize>],
) -> String {
    let end = within.end.min(text.len());
    let mut out = String::new();
    let mut i = within.start.min(end);
    // removed ranges are sorted and disjoint: start at the first that can matter
    let mut ri = removed.partition_point(|r| r.end <= i);
    let mut ci = code.partition_point(|c| c.end <= i);
    let b = text.as_bytes();
    while i < end {
        if let Some(r) = removed.get(ri) {
            if r.start <= i {
                i = r.end.max(i);
                ri += 1;
                continue;
            }
        }
        let next_cut = removed.get(ri).map_or(end, |r| r.start.min(end));
        // copy plain text up to the next byte that may start a token
        let candidate = matches!(b[i], b'<' | b'[' | 0xE2);
        let run = if candidate {
            i
        } else {
            memchr::memchr3(b'<', b'[', 0xE2, &b[i..next_cut]).map_or(next_cut, |p| i + p)
        };
        if run > i {
            out.push_str(&text[i..run]);
            i = run;
            continue;
        }
        while ci < code.len() && code[ci].end <= i {
            ci += 1;
        }
        let in_code = code.get(ci).is_some_and(|c| c.start <= i);
        if !in_code {
            // the token may look past the cut (a Harmony header reads up to the next `<|`),
            // but what it removes stops there
            if let Some(len) = tokens::token_at(&text[i..]) {
                i += len.min(next_cut - i).max(1);
                continue;
            }
        }
        let Some(ch) = text[i..].chars().next() else {
            break;
        };
        out.push(ch);
        i += ch.len_utf8();
    }
    let t = out.trim();
    if t.len() == out.len() {
        out
    } else {
        t.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detector::Candidate;
    use crate::scan;
    use serde_json::{json, Value};

    /// A strict test format: `<call>{json}</call>`.
    struct Tag;
    impl Detector for Tag {
        fn name(&self) -> &str {
            "tag"
        }
        fn strictness(&self) -> Strictness {
            Strictness::Strict
        }
        fn triggers(&self) -> &[&str] {
            &["<call>"]
        }
        fn detect(&self, text: &str, ctx: &DetectCtx<'_>, out: &mut Vec<Found>) {
            for s in scan::find_all(text, "<call>") {
                let body = s + 6;
                match scan::find_from(text, "</call>", body) {
                    Some(e) => out.push(match scan::parse_calls_json(&text[body..e]) {
                        Ok(c) => Found::calls(s..e + 7, c),
                        Err(r) => Found::malformed(s..e + 7, None, r),
                    }),
                    None if !ctx.eof => out.push(Found::pending(s..text.len())),
                    None => out.push(Found::malformed(s..text.len(), None, "unclosed <call>")),
                }
            }
        }
    }

    /// A loose test format: a bare top-level call object.
    struct Bare;
    impl Detector for Bare {
        fn name(&self) -> &str {
            "bare"
        }
        fn strictness(&self) -> Strictness {
            Strictness::Loose
        }
        fn triggers(&self) -> &[&str] {
            &["{"]
        }
        fn detect(&self, text: &str, ctx: &DetectCtx<'_>, out: &mut Vec<Found>) {
            let mut i = 0;
            while let Some(p) = scan::find_from(text, "{", i) {
                match scan::balanced_end(text, p, false) {
                    scan::Scan::Complete(e) => {
                        if let Ok(Value::Object(o)) = serde_json::from_str::<Value>(&text[p..e]) {
                            if scan::looks_like_call(&o) {
                                if let Ok(c) = scan::call_from_object(&o) {
                                    out.push(Found::call(p..e, c));
                                }
                            }
                        }
                        i = e;
                    }
                    scan::Scan::Incomplete => {
                        if !ctx.eof {
                            out.push(Found::pending(p..text.len()));
                        }
                        break;
                    }
                    scan::Scan::Invalid(at) => i = at.max(p + 1),
                }
            }
        }
    }

    fn parser(start: Option<bool>) -> Parser {
        Parser::build(vec![Arc::new(Tag), Arc::new(Bare)], known_tags(), start)
    }

    fn tools() -> ToolSet {
        ToolSet::from_openai_json(
            r#"[{"type":"function","function":{"name":"get_time","parameters":{"type":"object","properties":{},"additionalProperties":false}}},
                {"type":"function","function":{"name":"set_light","parameters":{"type":"object","properties":{"room":{"type":"string"}},"required":["room"]}}}]"#,
        )
        .unwrap()
    }

    const T: &str = r#"{"name":"get_time","arguments":{}}"#;
    const L: &str = r#"{"name":"set_light","arguments":{"room":"hall"}}"#;

    fn names(o: &ParseOutput) -> Vec<&str> {
        o.calls.iter().map(|c| c.name()).collect()
    }

    #[test]
    fn merge_and_build() {
        assert_eq!(merge(vec![5..7, 0..2, 1..3, 7..9]), vec![0..3, 5..9]);
        let t = "Hi <tool_call>x</tool_call> there<|im_end|>";
        let removed: Vec<Range<usize>> = std::iter::once(3..27).collect();
        let r = build_text(t, 0..t.len(), &removed, &[]);
        assert_eq!(r, "Hi  there");
    }

    #[test]
    fn think_rule_trailing_mentioned_unclosed_forced_open() {
        let p = parser(None);
        let o = p.parse(
            &format!("<think>Let me check.\n<call>{T}</call>\n</think>One moment."),
            &tools(),
        );
        assert_eq!(names(&o), ["get_time"]);
        assert_eq!(o.reply, "One moment.");
        assert_eq!(o.reasoning.as_deref(), Some("Let me check."));

        let o = p.parse(
            &format!("<think>I could use <call>{T}</call> but no.</think>Hi!"),
            &tools(),
        );
        assert!(o.calls.is_empty());
        assert_eq!(o.reply, "Hi!");
        assert!(o.rejected[0].reason.contains("mentioned inside reasoning"));

        let o = p.parse(
            &format!("<think>Checking the time. <call>{T}</call>"),
            &tools(),
        );
        assert_eq!(names(&o), ["get_time"]);
        assert_eq!(o.reply, "");

        let o = p.parse(
            &format!("the user asks<call>{T}</call></think>Sure."),
            &tools(),
        );
        assert_eq!(names(&o), ["get_time"]);
        assert_eq!(o.reasoning.as_deref(), Some("the user asks"));

        // the same call inside and after reasoning runs once
        let o = p.parse(
            &format!("<think><call>{T}</call></think><call>{T}</call>"),
            &tools(),
        );
        assert_eq!(names(&o), ["get_time"]);
    }

    #[test]
    fn markup_running_past_a_think_block_is_no_call_streamed_or_not() {
        // `<|python_tag|>` code reads to the end of the output: begun in reasoning, it runs
        // past the block's close and is dropped; the complete call trailing the block
        // counts, while streaming as at the end (it once streamed and then vanished)
        let p = Parser::auto();
        let raw = "<|python_tag|><function=get_time></function></think>";
        let o = p.parse(raw, &tools());
        assert_eq!(names(&o), ["get_time"]);
        assert!(o
            .rejected
            .iter()
            .any(|r| r.reason.contains("ran past its end")));
        let offered = tools();
        let mut s = p.stream(&offered);
        let streamed: Vec<String> = s
            .push(raw)
            .into_iter()
            .chain(s.finish().0)
            .filter_map(|e| match e {
                crate::StreamEvent::Call(c) => Some(c.name().to_string()),
                crate::StreamEvent::Text(_) => None,
            })
            .collect();
        assert_eq!(streamed, ["get_time"]);
    }

    #[test]
    fn strict_beats_loose_and_loose_is_gated() {
        let p = parser(Some(false));
        let o = p.parse(&format!("<call>{T}</call> e.g. {L}"), &tools());
        assert_eq!(names(&o), ["get_time"]);
        assert!(
            o.reply.contains("set_light"),
            "loose text stays when a strict call exists"
        );
        assert!(!o.telemetry.fallback_used);

        let o = p.parse(&format!("Sure: {L}"), &tools());
        assert_eq!(names(&o), ["set_light"]);
        assert!(o.telemetry.fallback_used);
        assert!(!o.native);
        assert_eq!(o.reply, "Sure:");

        let o = p.parse(r#"Try {"name":"rm_rf","arguments":{}}"#, &tools());
        assert!(o.calls.is_empty());
        assert!(o.reply.contains("rm_rf"));
        assert!(o.rejected[0].reason.contains("unknown tool"));

        let o = p.parse(&format!("{T} or {L}"), &tools());
        assert!(o.calls.is_empty());
        assert_eq!(o.rejected.len(), 2);
        assert!(o.rejected[0].reason.contains("conflicting"));

        let o = p.parse(&format!("{T} {T}"), &tools());
        assert_eq!(names(&o), ["get_time"]);
    }

    #[test]
    fn validation_and_ids() {
        let p = parser(Some(false));
        let o = p.parse(
            r#"<call>{"name":"set_light","arguments":{}}</call><call>{"name":"set_light","id":"abcdefghi","arguments":{"room":"x"}}</call><call>{"name":"get_time","arguments":"{}"}</call>"#,
            &tools(),
        );
        assert_eq!(names(&o), ["set_light", "get_time"]);
        assert_eq!(o.calls[0].id(), "abcdefghi");
        assert_eq!(o.calls[1].id(), "get_time_1");
        assert!(o.rejected[0].reason.contains("room"));
        assert!(o.telemetry.schema_validation.starts_with("fail: set_light"));
        assert_eq!(o.telemetry.candidate_count, 3);
        assert!(o.native);

        let o = p.parse("<call>{oops</call>", &tools());
        assert!(o.calls.is_empty());
        assert!(o.rejected[0].reason.contains("malformed JSON"));
        assert_eq!(o.reply, "");
    }

    #[test]
    fn quoted_code_is_not_parsed() {
        let p = parser(Some(false));
        let o = p.parse(&format!("Like this: `<call>{T}</call>` ok"), &tools());
        assert!(o.calls.is_empty());
        assert!(o.reply.contains("<call>"));
        let o = p.parse(&format!("```xml\n<call>{T}</call>\n```"), &tools());
        assert!(o.calls.is_empty());
    }

    #[test]
    fn streaming_holds_what_is_undecided() {
        let p = parser(Some(false));
        let tools = tools();
        let mut s = p.stream(&tools);
        assert_eq!(
            s.push("Hello there. "),
            vec![crate::StreamEvent::Text("Hello there.".into())]
        );
        assert!(s.push("<ca").is_empty());
        assert!(s.push(&format!("ll>{T}</call")).is_empty());
        let ev = s.push("> and more");
        assert!(
            matches!(&ev[0], crate::StreamEvent::Call(c) if c.name() == "get_time"),
            "{ev:?}"
        );
        let (_, out) = s.finish();
        assert_eq!(out.reply, "Hello there.  and more");

        // loose candidates wait for the end
        let mut s = p.stream(&tools);
        assert_eq!(
            s.push(&format!("Ok {L} then")),
            vec![crate::StreamEvent::Text("Ok".into())]
        );
        let (ev, _) = s.finish();
        assert!(ev.iter().any(|e| matches!(e, crate::StreamEvent::Call(_))));
    }

    #[test]
    fn registered_detectors_are_resolvable() {
        let mut reg = DetectorRegistry::builtin();
        reg.register(Arc::new(Tag)).unwrap();
        assert!(matches!(
            reg.register(Arc::new(Tag)),
            Err(RegistryError::Duplicate(_))
        ));
        let p = Parser::from_names(&reg, &["tag"], vec![], Some(false)).unwrap();
        assert_eq!(
            names(&p.parse(&format!("<call>{T}</call>"), &tools())),
            ["get_time"]
        );
        let _ = Candidate::new("x", json!({}));
    }
}
