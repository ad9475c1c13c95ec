//! The `gpio` executor: set, read or pulse one line of a GPIO chip through the Linux GPIO
//! character device (`/dev/gpiochipN`, gpiocdev), never sysfs.
//!
//! ```toml
//! [tool.gpio]
//! line = "GPIO17"          # the line's name in the board's device tree (a template), or an
//!                          # offset on `chip` written as a string ("17")
//! chip = "gpiochip0"       # optional: a path (/dev/gpiochip0), name (gpiochip0) or label
//!                          # (pinctrl-rp1); default: [gpio] chip of hearth.toml, else the line
//!                          # is looked up by name on every chip
//! action = "set"           # "set" | "read" | "pulse"
//! value = "{{ on }}"       # set only (required): a template rendering to true/false, 1/0,
//!                          # on/off or high/low (any case)
//! pulse_ms = 500           # pulse only (required, 1..=10000): drive active this long, then inactive
//! active_low = false       # the line is active when low (default false)
//! bias = "pull_up"         # read only, optional: "pull_up" | "pull_down" | "disabled"
//! timeout_ms = 2000        # time the chip has to answer (default 2000; a pulse gets pulse_ms more)
//! ```
//!
//! Lines are requested with the consumer name `hearth`. An output line stays requested after
//! a `set` or `pulse` (released, the kernel may let it fall back to its default), so the next
//! call on it reuses the request; a `read` of a line hearth drives reports the level it
//! drives. Reads request the line as an input and release it straight away.
//!
//! Results: `GPIO17 (gpiochip0:17) set to on`, `GPIO27 is high`,
//! `GPIO22 (gpiochip0:22) pulsed on for 500 ms` (with `active_low`, the physical level is
//! named too). Errors name the problem and the fix: no chip or no access (the `gpio` group),
//! an unknown chip (the chips that exist are listed), an unknown line name (where it was
//! looked for), a line another program holds (its consumer name).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use gpiocdev::line::{Bias, Value as Level};
use serde::Deserialize;
use serde_json::Value;

use super::Check;
use super::{ExecOutput, ToolsError};

/// `timeout_ms` when a manifest does not give one.
pub(crate) const DEFAULT_TIMEOUT_MS: u64 = 2_000;
/// The longest `pulse_ms`.
pub(crate) const MAX_PULSE_MS: u64 = 10_000;
/// The consumer name hearth requests lines under (what `gpioinfo` shows).
pub(crate) const CONSUMER: &str = "hearth";

/// `[tool.gpio]` as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct GpioTable {
    /// The line's name or offset (a template).
    pub line: String,
    /// The chip: path, name or label.
    #[serde(default)]
    pub chip: Option<String>,
    /// `set`, `read` or `pulse`.
    pub action: String,
    /// The level a `set` drives (a template).
    #[serde(default)]
    pub value: Option<String>,
    /// How long a `pulse` drives the line active.
    #[serde(default)]
    pub pulse_ms: Option<u64>,
    /// The line is active when low.
    #[serde(default)]
    pub active_low: bool,
    /// Pull-up or pull-down of a `read`.
    #[serde(default)]
    pub bias: Option<String>,
    /// Time the chip has to answer.
    #[serde(default = "default_timeout_ms")]
    pub timeout_ms: u64,
}

fn default_timeout_ms() -> u64 {
    DEFAULT_TIMEOUT_MS
}

/// What a `[tool.gpio]` does to its line.
#[derive(Debug, Clone, PartialEq)]
pub enum GpioAction {
    /// Drive the line to the level `value` renders to (a template).
    Set {
        /// The level template.
        value: String,
    },
    /// Report the line's level.
    Read,
    /// Drive the line active for `duration`, then inactive.
    Pulse {
        /// How long the line is active.
        duration: Duration,
    },
}

/// The bias of an input line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GpioBias {
    /// Pulled up (a switch to ground reads low when closed).
    PullUp,
    /// Pulled down.
    PullDown,
    /// No pull.
    Disabled,
}

impl GpioBias {
    fn parse(s: &str) -> Option<GpioBias> {
        match s.trim().to_ascii_lowercase().replace('-', "_").as_str() {
            "pull_up" => Some(GpioBias::PullUp),
            "pull_down" => Some(GpioBias::PullDown),
            "disabled" | "none" => Some(GpioBias::Disabled),
            _ => None,
        }
    }

    fn to_gpiocdev(self) -> Bias {
        match self {
            GpioBias::PullUp => Bias::PullUp,
            GpioBias::PullDown => Bias::PullDown,
            GpioBias::Disabled => Bias::Disabled,
        }
    }
}

/// A checked `[tool.gpio]`.
#[derive(Debug, Clone, PartialEq)]
pub struct GpioSpec {
    /// The line's name or offset (a template).
    pub line: String,
    /// The chip given in the manifest (path, name or label).
    pub chip: Option<String>,
    /// What the call does.
    pub action: GpioAction,
    /// The line is active when low.
    pub active_low: bool,
    /// The bias of a `read`.
    pub bias: Option<GpioBias>,
    /// Time the chip has to answer.
    pub timeout: Duration,
}

/// True when `source` has template syntax (its value depends on the call).
fn is_template(source: &str) -> bool {
    source.contains("{{") || source.contains("{%")
}

impl GpioTable {
    /// Check the table: the action and the keys it takes, the templates, the limits.
    pub fn check(self, c: &Check) -> Result<GpioSpec, ToolsError> {
        if self.line.trim().is_empty() {
            return Err(c.invalid(
                "gpio.line",
                "is empty: give the line's name as the board names it (\"GPIO17\"; `gpioinfo` lists them) or its offset on gpio.chip (\"17\")",
            ));
        }
        c.template("gpio.line", &self.line)?;
        if let Some(chip) = &self.chip {
            if chip.trim().is_empty() {
                return Err(c.invalid(
                    "gpio.chip",
                    "is empty: give a chip path (/dev/gpiochip0), name (gpiochip0) or label (pinctrl-rp1), or remove the key",
                ));
            }
        }
        let action = match self.action.trim() {
            "set" => {
                let Some(value) = self.value else {
                    return Err(c.invalid(
                        "gpio.value",
                        "is missing: a set needs the level to drive, e.g. value = \"{{ on }}\" (true/false, 1/0, on/off, high/low)",
                    ));
                };
                c.template("gpio.value", &value)?;
                if !is_template(&value) && parse_level(&value).is_none() {
                    return Err(c.invalid(
                        "gpio.value",
                        format!("{value:?} is not a level: use true/false, 1/0, on/off or high/low, or a template rendering to one"),
                    ));
                }
                if self.pulse_ms.is_some() {
                    return Err(c.invalid(
                        "gpio.pulse_ms",
                        "only a pulse takes pulse_ms: remove it, or set action = \"pulse\"",
                    ));
                }
                GpioAction::Set { value }
            }
            "read" | "pulse" => {
                if self.value.is_some() {
                    return Err(c.invalid(
                        "gpio.value",
                        format!(
                            "a {} takes no value (only action = \"set\" does): remove the key",
                            self.action.trim()
                        ),
                    ));
                }
                if self.action.trim() == "read" {
                    if self.pulse_ms.is_some() {
                        return Err(c.invalid(
                            "gpio.pulse_ms",
                            "only a pulse takes pulse_ms: remove it, or set action = \"pulse\"",
                        ));
                    }
                    GpioAction::Read
                } else {
                    let Some(ms) = self.pulse_ms else {
                        return Err(c.invalid(
                            "gpio.pulse_ms",
                            format!("is missing: a pulse needs its length in milliseconds (1 to {MAX_PULSE_MS}), e.g. pulse_ms = 500"),
                        ));
                    };
                    if !(1..=MAX_PULSE_MS).contains(&ms) {
                        return Err(c.invalid(
                            "gpio.pulse_ms",
                            format!("{ms} is out of range: use 1 to {MAX_PULSE_MS} milliseconds"),
                        ));
                    }
                    GpioAction::Pulse {
                        duration: Duration::from_millis(ms),
                    }
                }
            }
            other => {
                return Err(c.invalid(
                    "gpio.action",
                    format!("{other:?} is not an action: use \"set\", \"read\" or \"pulse\""),
                ))
            }
        };
        let bias = match (&self.bias, &action) {
            (None, _) => None,
            (Some(b), GpioAction::Read) => Some(GpioBias::parse(b).ok_or_else(|| {
                c.invalid(
                    "gpio.bias",
                    format!("{b:?} is not a bias: use \"pull_up\", \"pull_down\" or \"disabled\""),
                )
            })?),
            (Some(_), _) => {
                return Err(c.invalid(
                    "gpio.bias",
                    "only a read takes a bias (it applies to inputs): remove the key",
                ))
            }
        };
        let timeout = c.timeout("gpio", self.timeout_ms, DEFAULT_TIMEOUT_MS)?;
        Ok(GpioSpec {
            line: self.line,
            chip: self.chip.map(|s| s.trim().to_string()),
            action,
            active_low: self.active_low,
            bias,
            timeout,
        })
    }
}

/// A level as a `set` value spells it: `true`/`1`/`on`/`high` or `false`/`0`/`off`/`low`
/// (any case, surrounding blanks ignored). None for anything else.
pub fn parse_level(text: &str) -> Option<bool> {
    match text.trim().to_ascii_lowercase().as_str() {
        "true" | "1" | "on" | "high" => Some(true),
        "false" | "0" | "off" | "low" => Some(false),
        _ => None,
    }
}

/// Why a GPIO call failed; each message names the fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GpioError {
    /// No `/dev/gpiochip*` at all.
    #[error("no GPIO chip found (/dev/gpiochip*): this machine has no GPIO, or hearth lacks access: add the service user to the gpio group")]
    NoChips,
    /// A chip hearth may not open.
    #[error("cannot open {path}: permission denied: add the service user to the gpio group (`usermod -aG gpio USER`, then restart hearth) and, under systemd, allow the device in the unit (DeviceAllow=char-gpiochip rw)")]
    PermissionDenied {
        /// The chip's path.
        path: String,
    },
    /// A chip that cannot be opened for another reason.
    #[error("cannot open {path}: {error}: check the GPIO driver (`dmesg`, `gpiodetect`)")]
    Open {
        /// The chip's path.
        path: String,
        /// The system's error.
        error: String,
    },
    /// The chip named by the manifest or the configuration is not there.
    #[error("GPIO chip {spec:?} (from {origin}) is not on this machine; the chips are: {available}: set {origin} to one of them (a path, name or label)")]
    ChipNotFound {
        /// The chip as written.
        spec: String,
        /// Where it was written.
        origin: ChipOrigin,
        /// The chips that exist.
        available: String,
    },
    /// An offset without a chip to count it on.
    #[error("gpio.line {line:?} is an offset, which needs a chip: set gpio.chip in the tool's manifest (or [gpio] chip in hearth.toml) to one of {available}, or give the line's name")]
    OffsetNeedsChip {
        /// The line as rendered.
        line: String,
        /// The chips that exist.
        available: String,
    },
    /// An offset past the chip's last line.
    #[error("line offset {offset} is not on {chip}, which has {num_lines} lines: fix gpio.line in the tool's manifest")]
    OffsetOutOfRange {
        /// The offset asked for.
        offset: u32,
        /// The chip's summary.
        chip: String,
        /// Its number of lines.
        num_lines: u32,
    },
    /// A line name no chip has.
    #[error("no line named {line:?} on {looked_in}{hint}: line names come from the board's device tree (`gpioinfo` lists them): fix gpio.line in the tool's manifest, or give an offset with gpio.chip")]
    LineNotFound {
        /// The name asked for.
        line: String,
        /// The chips searched.
        looked_in: String,
        /// A near match, or chips that could not be searched.
        hint: String,
    },
    /// A line another consumer holds.
    #[error("{line} ({chip}:{offset}) is busy: it is held by {holder}: stop that program (`gpioinfo` shows the consumer), or if the kernel holds it (a device tree overlay such as gpio-fan or w1-gpio), remove that overlay, or use another line")]
    Busy {
        /// The line's display name.
        line: String,
        /// The chip's name.
        chip: String,
        /// The line's offset.
        offset: u32,
        /// Who holds it.
        holder: String,
    },
    /// A call that waited its whole timeout for an earlier call on the same line.
    #[error("{line} was still in use by an earlier hearth call when this one timed out; nothing was done: try again, or raise gpio.timeout_ms in the tool's manifest")]
    Late {
        /// The line and where it is.
        line: String,
    },
    /// A request or ioctl that failed.
    #[error("{what} {line} ({chip}:{offset}) failed: {error}: check the line is free for GPIO use (`gpioinfo`) and the driver (`dmesg`)")]
    Line {
        /// What was being done (`requesting`, `setting`, `reading`).
        what: &'static str,
        /// The line's display name.
        line: String,
        /// The chip's name.
        chip: String,
        /// The line's offset.
        offset: u32,
        /// The system's error.
        error: String,
    },
}

/// Where a chip spec came from (error messages name it, so the fix is in the right file).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChipOrigin {
    /// `gpio.chip` of the tool's manifest.
    Manifest,
    /// `[gpio] chip` of hearth.toml.
    Config,
}

impl std::fmt::Display for ChipOrigin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ChipOrigin::Manifest => "gpio.chip in the tool's manifest",
            ChipOrigin::Config => "[gpio] chip in hearth.toml",
        })
    }
}

/// One line of a chip, as the kernel describes it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LineDesc {
    /// Its name (may be empty).
    pub name: String,
    /// Who holds it (may be empty).
    pub consumer: String,
    /// True when it is requested (by anyone, the kernel included).
    pub used: bool,
}

/// One GPIO chip: what resolution and `hearth doctor` need to know of it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChipDesc {
    /// Its device path (`/dev/gpiochip0`, canonical).
    pub path: PathBuf,
    /// Its name (`gpiochip0`).
    pub name: String,
    /// Its label (`pinctrl-rp1`).
    pub label: String,
    /// Its lines, by offset.
    pub lines: Vec<LineDesc>,
}

impl ChipDesc {
    /// `gpiochip0 [pinctrl-rp1] 54 lines`.
    pub fn summary(&self) -> String {
        format!("{} [{}] {} lines", self.name, self.label, self.lines.len())
    }
}

fn chip_list(chips: &[ChipDesc]) -> String {
    chips
        .iter()
        .map(ChipDesc::summary)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The chip `spec` names: its path (`/dev/gpiochip0`), its name (`gpiochip0`), its
/// number (`0`) or its label (`pinctrl-rp1`), tried in that order.
pub fn find_chip<'a>(
    chips: &'a [ChipDesc],
    spec: &str,
    origin: ChipOrigin,
) -> Result<&'a ChipDesc, GpioError> {
    if chips.is_empty() {
        return Err(GpioError::NoChips);
    }
    let spec = spec.trim();
    let by_path = |c: &&ChipDesc| spec.starts_with('/') && c.path == Path::new(spec);
    let by_name = |c: &&ChipDesc| c.name == spec;
    let by_number = |c: &&ChipDesc| {
        !spec.is_empty()
            && spec.bytes().all(|b| b.is_ascii_digit())
            && c.name == format!("gpiochip{spec}")
    };
    let by_label = |c: &&ChipDesc| !c.label.is_empty() && c.label == spec;
    chips
        .iter()
        .find(by_path)
        .or_else(|| chips.iter().find(by_name))
        .or_else(|| chips.iter().find(by_number))
        .or_else(|| chips.iter().find(by_label))
        .ok_or_else(|| GpioError::ChipNotFound {
            spec: spec.to_string(),
            origin,
            available: chip_list(chips),
        })
}

/// A line found on a chip.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    /// The chip's device path.
    pub chip_path: PathBuf,
    /// The chip's name (`gpiochip0`).
    pub chip_name: String,
    /// The line's offset on the chip.
    pub offset: u32,
    /// How results name the line: the name asked for, else the line's own name, else
    /// `line N`.
    pub display: String,
    /// Who held the line when the chips were listed (empty when nobody gave a name).
    pub consumer: String,
}

/// Find `line` (a name, or an offset written in digits) on the chip `chip` names, or, with
/// no chip, by name on every chip (the first chip that has it, in device order).
/// `unreadable` are chips that could not be opened (named when a line is not found).
pub fn locate(
    chips: &[ChipDesc],
    chip: Option<(&str, ChipOrigin)>,
    line: &str,
    unreadable: &[String],
) -> Result<Located, GpioError> {
    if chips.is_empty() {
        return Err(GpioError::NoChips);
    }
    let line = line.trim();
    let candidates: Vec<&ChipDesc> = match chip {
        Some((spec, origin)) => vec![find_chip(chips, spec, origin)?],
        None => chips.iter().collect(),
    };
    if !line.is_empty() && line.bytes().all(|b| b.is_ascii_digit()) {
        let [c] = candidates.as_slice() else {
            return Err(GpioError::OffsetNeedsChip {
                line: line.to_string(),
                available: chip_list(chips),
            });
        };
        let num_lines = u32::try_from(c.lines.len()).unwrap_or(u32::MAX);
        let offset = line
            .parse::<u32>()
            .ok()
            .filter(|o| *o < num_lines)
            .ok_or_else(|| GpioError::OffsetOutOfRange {
                offset: line.parse::<u32>().unwrap_or(u32::MAX),
                chip: c.summary(),
                num_lines,
            })?;
        let desc = c.lines.get(offset as usize).cloned().unwrap_or_default();
        let display = if desc.name.is_empty() {
            format!("line {offset}")
        } else {
            desc.name.clone()
        };
        return Ok(Located {
            chip_path: c.path.clone(),
            chip_name: c.name.clone(),
            offset,
            display,
            consumer: desc.consumer,
        });
    }
    let mut found = candidates.iter().flat_map(|c| {
        c.lines
            .iter()
            .enumerate()
            .filter(|(_, l)| l.name == line)
            .map(move |(i, l)| (*c, i, l))
    });
    if let Some((c, offset, desc)) = found.next() {
        if let Some((other, o, _)) = found.next() {
            tracing::warn!(line, first = %c.name, also = %other.name, offset = o,
                "the GPIO line name is on more than one chip: using the first (set gpio.chip to choose)");
        }
        return Ok(Located {
            chip_path: c.path.clone(),
            chip_name: c.name.clone(),
            offset: u32::try_from(offset).unwrap_or(u32::MAX),
            display: line.to_string(),
            consumer: desc.consumer.clone(),
        });
    }
    let near = candidates
        .iter()
        .flat_map(|c| c.lines.iter())
        .find(|l| !l.name.is_empty() && l.name.eq_ignore_ascii_case(line))
        .map(|l| format!(" (did you mean {:?}?)", l.name));
    let mut hint = near.unwrap_or_default();
    if chip.is_none() && !unreadable.is_empty() {
        hint.push_str(&format!(
            " (not searched, hearth may not open them: {})",
            unreadable.join(", ")
        ));
    }
    Err(GpioError::LineNotFound {
        line: line.to_string(),
        looked_in: candidates
            .iter()
            .map(|c| c.summary())
            .collect::<Vec<_>>()
            .join(", "),
        hint,
    })
}

/// The errno inside a gpiocdev error, if it carries one.
fn errno(e: &gpiocdev::Error) -> Option<i32> {
    match e {
        gpiocdev::Error::Os(n) => Some(n.0),
        // the uAPI error's type is not exported; its text is std's "… (os error N)"
        gpiocdev::Error::Uapi(_, inner) => os_error_code(&inner.to_string()),
        _ => None,
    }
}

/// N of std's `… (os error N)` text.
fn os_error_code(text: &str) -> Option<i32> {
    let start = text.rfind("(os error ")? + "(os error ".len();
    text[start..].strip_suffix(')')?.parse().ok()
}

fn is_permission(e: &gpiocdev::Error) -> bool {
    matches!(errno(e), Some(libc::EACCES) | Some(libc::EPERM))
}

/// Chips that could not be opened: the path, and why.
type Unopened = Vec<(String, gpiocdev::Error)>;

/// Every chip hearth can open, with its lines; and the chips it cannot open, why.
fn list_chips() -> Result<(Vec<ChipDesc>, Unopened), GpioError> {
    let paths = match gpiocdev::chip::chips() {
        Ok(p) => p,
        Err(e) => {
            tracing::debug!(error = %e, "cannot list the GPIO chips");
            return Err(GpioError::NoChips);
        }
    };
    if paths.is_empty() {
        return Err(GpioError::NoChips);
    }
    let mut chips = Vec::with_capacity(paths.len());
    let mut failed = Vec::new();
    for path in paths {
        let shown = path.display().to_string();
        let opened = gpiocdev::Chip::from_path(&path).and_then(|chip| {
            let info = chip.info()?;
            let lines = (0..info.num_lines)
                .map(|offset| match chip.line_info(offset) {
                    Ok(l) => LineDesc {
                        name: l.name,
                        consumer: l.consumer,
                        used: l.used,
                    },
                    Err(e) => {
                        tracing::debug!(chip = %shown, offset, error = %e, "cannot read a GPIO line's info");
                        LineDesc::default()
                    }
                })
                .collect();
            Ok(ChipDesc {
                path: chip.path().to_path_buf(),
                name: info.name,
                label: info.label,
                lines,
            })
        });
        match opened {
            Ok(c) => chips.push(c),
            Err(e) => failed.push((shown, e)),
        }
    }
    if chips.is_empty() {
        return Err(match failed.into_iter().next() {
            Some((path, e)) if is_permission(&e) => GpioError::PermissionDenied { path },
            Some((path, e)) => GpioError::Open {
                path,
                error: e.to_string(),
            },
            None => GpioError::NoChips,
        });
    }
    Ok((chips, failed))
}

/// An output line hearth holds, and the level it drives.
#[derive(Debug, Default)]
struct Held {
    request: Option<gpiocdev::Request>,
    active_low: bool,
    /// The logical level driven (true = active).
    active: bool,
}

type HeldLines = Mutex<HashMap<(PathBuf, u32), Arc<Mutex<Held>>>>;

/// The GPIO chips: the default chip, and the output lines hearth holds (a released output
/// line may fall back to its default level, so each stays requested; the next call on the
/// same chip and offset reuses the request).
#[derive(Debug, Default)]
pub struct GpioBackend {
    /// The default chip (`[gpio] chip`, or the board profile's): path, name or label.
    pub chip: Option<String>,
    held: Arc<HeldLines>,
}

impl GpioBackend {
    /// With a default chip (from `[gpio]` or the board profile).
    pub fn new(chip: Option<String>) -> Self {
        GpioBackend {
            chip,
            held: Arc::default(),
        }
    }

    /// The chips of this machine, one line each (`gpiochip0 [pinctrl-rp1] 54 lines`), for
    /// `hearth doctor`. An error (with its fix) when there is none, hearth may not open
    /// them, or the configured default chip is not among them.
    pub fn probe(&self) -> Result<Vec<String>, String> {
        let (chips, failed) = list_chips().map_err(|e| e.to_string())?;
        if let Some(spec) = &self.chip {
            find_chip(&chips, spec, ChipOrigin::Config).map_err(|e| e.to_string())?;
        }
        let mut out: Vec<String> = chips.iter().map(ChipDesc::summary).collect();
        out.extend(failed.iter().map(|(path, e)| {
            if is_permission(e) {
                GpioError::PermissionDenied { path: path.clone() }.to_string()
            } else {
                GpioError::Open {
                    path: path.clone(),
                    error: e.to_string(),
                }
                .to_string()
            }
        }));
        Ok(out)
    }
}

/// One call, rendered: what the blocking part does.
struct Op {
    line: String,
    chip: Option<(String, ChipOrigin)>,
    kind: OpKind,
    active_low: bool,
    bias: Option<GpioBias>,
    /// Past this, the call has timed out: the line is left alone (no late set or pulse).
    deadline: Instant,
}

#[derive(Clone, Copy)]
enum OpKind {
    Set(bool),
    Read,
    Pulse(Duration),
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The errors of requesting or driving a located line.
fn line_error(what: &'static str, at: &Located, e: &gpiocdev::Error) -> GpioError {
    match errno(e) {
        Some(libc::EBUSY) => GpioError::Busy {
            line: at.display.clone(),
            chip: at.chip_name.clone(),
            offset: at.offset,
            holder: holder(at),
        },
        Some(libc::EACCES) | Some(libc::EPERM) => GpioError::PermissionDenied {
            path: at.chip_path.display().to_string(),
        },
        _ => GpioError::Line {
            what,
            line: at.display.clone(),
            chip: at.chip_name.clone(),
            offset: at.offset,
            error: e.to_string(),
        },
    }
}

/// Who holds a busy line: its consumer now (read again), else as listed.
fn holder(at: &Located) -> String {
    let now = gpiocdev::Chip::from_path(&at.chip_path)
        .and_then(|c| c.line_info(at.offset))
        .map(|i| i.consumer)
        .unwrap_or_default();
    let name = if now.is_empty() {
        at.consumer.clone()
    } else {
        now
    };
    if name.is_empty() {
        "another consumer (it gave no name)".to_string()
    } else {
        format!("{name:?}")
    }
}

/// Request `at` as an output driving `active`, or reuse hearth's request of it.
fn drive(slot: &mut Held, at: &Located, active: bool, active_low: bool) -> Result<(), GpioError> {
    let level = if active {
        Level::Active
    } else {
        Level::Inactive
    };
    if slot.active_low == active_low {
        if let Some(req) = &slot.request {
            match req.set_lone_value(level) {
                Ok(()) => {
                    slot.active = active;
                    return Ok(());
                }
                Err(e) => {
                    tracing::warn!(line = %at.display, error = %e, "setting a held GPIO line failed; requesting it again");
                }
            }
        }
    }
    // release first: the kernel refuses a second request of a line hearth holds
    slot.request = None;
    let mut builder = gpiocdev::Request::builder();
    builder
        .on_chip(&at.chip_path)
        .with_consumer(CONSUMER)
        .with_line(at.offset)
        .as_output(level);
    if active_low {
        builder.as_active_low();
    }
    let req = builder
        .request()
        .map_err(|e| line_error("requesting", at, &e))?;
    slot.request = Some(req);
    slot.active_low = active_low;
    slot.active = active;
    Ok(())
}

/// The blocking part of a call: find the line, then set, read or pulse it.
fn run_blocking(op: Op, held: Arc<HeldLines>) -> Result<String, GpioError> {
    let (chips, failed) = list_chips()?;
    let unreadable: Vec<String> = failed.iter().map(|(p, _)| p.clone()).collect();
    let chip = op.chip.as_ref().map(|(spec, origin)| {
        // a path may be a symlink (/dev/gpiochip4 → gpiochip0): compare canonical paths
        let spec = if spec.starts_with('/') {
            std::fs::canonicalize(spec)
                .map(|p| p.display().to_string())
                .unwrap_or_else(|_| spec.clone())
        } else {
            spec.clone()
        };
        (spec, *origin)
    });
    let at = locate(
        &chips,
        chip.as_ref().map(|(s, o)| (s.as_str(), *o)),
        &op.line,
        &unreadable,
    )?;
    let place = format!("{} ({}:{})", at.display, at.chip_name, at.offset);
    // one call at a time per line: a set waits for a pulse on the same line to end
    let slot = Arc::clone(
        lock(&held)
            .entry((at.chip_path.clone(), at.offset))
            .or_default(),
    );
    let mut slot = lock(&slot);
    if Instant::now() > op.deadline {
        return Err(GpioError::Late { line: place });
    }
    match op.kind {
        OpKind::Set(active) => {
            drive(&mut slot, &at, active, op.active_low)?;
            tracing::info!(line = %place, active, "GPIO line set");
            let note = match (op.active_low, active) {
                (false, _) => "",
                (true, true) => " (active_low: driven low)",
                (true, false) => " (active_low: driven high)",
            };
            Ok(format!(
                "{place} set to {}{note}",
                if active { "on" } else { "off" }
            ))
        }
        OpKind::Pulse(duration) => {
            drive(&mut slot, &at, true, op.active_low)?;
            std::thread::sleep(duration);
            drive(&mut slot, &at, false, op.active_low).map_err(|e| GpioError::Line {
                what: "releasing the pulse on",
                line: at.display.clone(),
                chip: at.chip_name.clone(),
                offset: at.offset,
                error: format!("{e} (the line may still be active)"),
            })?;
            tracing::info!(line = %place, ms = duration.as_millis(), "GPIO line pulsed");
            Ok(format!(
                "{place} pulsed on for {} ms{}",
                duration.as_millis(),
                if op.active_low {
                    " (active_low: driven low)"
                } else {
                    ""
                }
            ))
        }
        OpKind::Read => {
            let physical_high = if slot.request.is_some() {
                // hearth drives it: report what it drives (reading an output back is not
                // supported by every driver)
                slot.active != slot.active_low
            } else {
                let mut builder = gpiocdev::Request::builder();
                builder
                    .on_chip(&at.chip_path)
                    .with_consumer(CONSUMER)
                    .with_line(at.offset)
                    .as_input();
                if op.active_low {
                    builder.as_active_low();
                }
                if let Some(b) = op.bias {
                    builder.with_bias(b.to_gpiocdev());
                }
                let req = builder
                    .request()
                    .map_err(|e| line_error("requesting", &at, &e))?;
                let level = req
                    .lone_value()
                    .map_err(|e| line_error("reading", &at, &e))?;
                (level == Level::Active) != op.active_low
            };
            let level = if physical_high { "high" } else { "low" };
            Ok(if op.active_low {
                let logical = if physical_high { "inactive" } else { "active" };
                format!("{} is {level} ({logical}, active_low)", at.display)
            } else {
                format!("{} is {level}", at.display)
            })
        }
    }
}

/// Run one call: render the line (and value), find the line, then set, read or pulse it
/// (blocking ioctls on a blocking thread, under the timeout).
pub async fn run(tool: &str, spec: &GpioSpec, args: &Value, b: &GpioBackend) -> ExecOutput {
    let line = match super::render(&spec.line, args) {
        Ok(l) if l.trim().is_empty() => {
            return ExecOutput::error(format!(
                "{tool}: gpio.line `{}` rendered to an empty string: fix the template in the tool's manifest",
                spec.line
            ))
        }
        Ok(l) => l.trim().to_string(),
        Err(e) => {
            return ExecOutput::error(format!(
                "{tool}: cannot render gpio.line `{}`: {e}",
                spec.line
            ))
        }
    };
    let kind = match &spec.action {
        GpioAction::Read => OpKind::Read,
        GpioAction::Pulse { duration } => OpKind::Pulse(*duration),
        GpioAction::Set { value } => {
            let text = match super::render(value, args) {
                Ok(t) => t,
                Err(e) => {
                    return ExecOutput::error(format!(
                        "{tool}: cannot render gpio.value `{value}`: {e}"
                    ))
                }
            };
            match parse_level(&text) {
                Some(v) => OpKind::Set(v),
                None => {
                    return ExecOutput::error(format!(
                        "{tool}: gpio.value `{value}` rendered to {text:?}, which is not a level: make it render to true/false, 1/0, on/off or high/low"
                    ))
                }
            }
        }
    };
    let chip = match (&spec.chip, &b.chip) {
        (Some(c), _) => Some((c.clone(), ChipOrigin::Manifest)),
        (None, Some(c)) => Some((c.clone(), ChipOrigin::Config)),
        (None, None) => None,
    };
    let op = Op {
        line,
        chip,
        kind,
        active_low: spec.active_low,
        bias: spec.bias,
        deadline: Instant::now() + spec.timeout,
    };
    let limit = match kind {
        OpKind::Pulse(d) => spec.timeout + d,
        _ => spec.timeout,
    };
    let held = Arc::clone(&b.held);
    // a pulse runs to its end on the blocking thread even if this call is dropped, so the
    // line is never left active
    let task = tokio::task::spawn_blocking(move || run_blocking(op, held));
    match tokio::time::timeout(limit, task).await {
        Err(_) => ExecOutput::error(format!(
            "{tool}: the GPIO chip did not answer within {} ms: check the GPIO driver (`dmesg`), or raise gpio.timeout_ms in the tool's manifest",
            limit.as_millis()
        )),
        Ok(Err(e)) => ExecOutput::error(format!("{tool}: the GPIO call failed inside hearth: {e}")),
        Ok(Ok(Err(e))) => ExecOutput::error(format!("{tool}: {e}")),
        Ok(Ok(Ok(text))) => ExecOutput::done(text),
    }
}

#[cfg(test)]
mod tests;
