//! The `dbus` executor: call a method of another service on the system or session bus.
//!
//! ```toml
//! [tool.dbus]
//! bus = "session"                               # "system" (default) | "session"
//! destination = "org.freedesktop.Notifications" # the service's bus name
//! path = "/org/freedesktop/Notifications"       # the object path
//! interface = "org.freedesktop.Notifications"
//! method = "Notify"
//! signature = "susssasa{sv}i"   # the arguments' D-Bus signature ("" or absent: no arguments)
//! args = ["hearth", 0, "", "{{ title }}", "{{ body }}", [], {}, 5000]
//! timeout_ms = 5000             # default 5000
//! ```
//!
//! `destination`, `path`, `interface` and `method` are fixed text, checked as D-Bus names at
//! load time: one that holds a template fails the load (a call's values never choose what
//! is called; make one tool per method the model may call). `args` holds one JSON template
//! per top-level type of `signature`
//! (rendered like [`super::render_json`]: a lone `{{ x }}` keeps x's type), converted to
//! that type:
//!
//! - `y n q i u x t`: an integer in the type's range (a float with no fraction, or a string
//!   holding an integer, is accepted); `d`: any number (or a string holding one);
//! - `b`: a boolean (or the string `true`/`false`);
//! - `s`: a string (a number or boolean is written out); `o`: an object path; `g`: a
//!   signature;
//! - `aX`: a JSON array of X (`ay` also takes a string: its UTF-8 bytes); `a{KV}`: a JSON
//!   object (keys converted to K); `(…)`: a JSON array with one item per field;
//! - `v`: the type is taken from the JSON value: string → `s`, boolean → `b`, integer →
//!   `x` (int64; `t` above its range), other number → `d`, array of strings → `as`, other
//!   array → `av`, object → `a{sv}`.
//!
//! A value that does not fit is an error naming the argument, the type and the value, and
//! the call is not made; so is a string (a dictionary key included) holding a NUL
//! character, which D-Bus cannot carry (the bus would drop hearth's connection). `h` (file
//! descriptors) cannot be passed.
//!
//! Result: a reply with no values is `empty`; one string is the result text; anything else
//! is the values as JSON (one value as itself, several as an array). D-Bus errors name the
//! problem: the service not running, no such method, the bus policy denying the call,
//! rejected arguments, no answer within `timeout_ms`.

use std::str::FromStr;
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;
use tokio::sync::Mutex;
use zbus::names::{BusName, InterfaceName, MemberName};
use zbus::{Array, Dict, ObjectPath, Signature, Structure, Variant};

use super::output::values::{self, is_template, Place};
use super::Check;
use super::{ExecOutput, ToolsError};

/// `timeout_ms` when a manifest does not give one.
pub(crate) const DEFAULT_TIMEOUT_MS: u64 = 5_000;

/// `[tool.dbus]` as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct DbusTable {
    /// `system` (default) or `session`.
    #[serde(default)]
    pub bus: Option<String>,
    /// The service's bus name.
    pub destination: String,
    /// The object path.
    pub path: String,
    /// The interface.
    pub interface: String,
    /// The method.
    pub method: String,
    /// The arguments' signature.
    #[serde(default)]
    pub signature: Option<String>,
    /// One JSON template per argument.
    #[serde(default)]
    pub args: Vec<Value>,
    /// Time the service has to answer.
    #[serde(default = "default_timeout_ms")]
    pub timeout_ms: u64,
}

fn default_timeout_ms() -> u64 {
    DEFAULT_TIMEOUT_MS
}

/// Which message bus.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DbusBus {
    /// The system bus.
    System,
    /// The user's session bus.
    Session,
}

impl std::fmt::Display for DbusBus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            DbusBus::System => "system",
            DbusBus::Session => "session",
        })
    }
}

/// A checked `[tool.dbus]`.
#[derive(Debug, Clone, PartialEq)]
pub struct DbusSpec {
    /// The bus to call on.
    pub bus: DbusBus,
    /// The service's bus name.
    pub destination: String,
    /// The object path.
    pub path: String,
    /// The interface.
    pub interface: String,
    /// The method.
    pub method: String,
    /// The arguments' signature as written.
    pub signature: String,
    /// The type of each argument.
    pub arg_types: Vec<Signature>,
    /// One JSON template per argument.
    pub args: Vec<Value>,
    /// Time the service has to answer (connecting included).
    pub timeout: Duration,
}

/// Which D-Bus name a manifest field holds.
#[derive(Clone, Copy)]
enum NameKind {
    Bus,
    Path,
    Interface,
    Member,
}

/// Check a D-Bus name: None when valid, else what is wrong.
fn name_problem(kind: NameKind, name: &str) -> Option<String> {
    let checked = match kind {
        NameKind::Bus => BusName::try_from(name).map(|_| ()),
        NameKind::Path => ObjectPath::try_from(name).map(|_| ()),
        NameKind::Interface => InterfaceName::try_from(name).map(|_| ()),
        NameKind::Member => MemberName::try_from(name).map(|_| ()),
    };
    let what = match kind {
        NameKind::Bus => "a bus name (org.example.Service, or a unique name :1.42)",
        NameKind::Path => {
            "an object path (/org/example/Object: `/`-separated [A-Za-z0-9_] elements)"
        }
        NameKind::Interface => "an interface name (org.example.Interface1)",
        NameKind::Member => "a method name (SetTemperature: letters, digits, `_`)",
    };
    checked
        .err()
        .map(|e| format!("{name:?} is not {what}: {e}"))
}

/// Split a signature into its top-level complete types, each parsed (`susssasa{sv}i` gives 8).
pub(crate) fn split_signature(signature: &str) -> Result<Vec<Signature>, String> {
    /// Length of the complete type at the start of `b`.
    fn complete(b: &[u8], depth: usize) -> Option<usize> {
        if depth > 64 {
            return None;
        }
        match *b.first()? {
            b'a' => Some(1 + complete(&b[1..], depth + 1)?),
            b'(' => {
                let mut i = 1;
                while *b.get(i)? != b')' {
                    i += complete(&b[i..], depth + 1)?;
                }
                Some(i + 1)
            }
            b'{' => {
                let key = complete(&b[1..], depth + 1)?;
                let value = complete(&b[1 + key..], depth + 1)?;
                (*b.get(1 + key + value)? == b'}').then_some(key + value + 2)
            }
            c if b"ybnqiuxtdsogvh".contains(&c) => Some(1),
            _ => None,
        }
    }
    let bytes = signature.trim().as_bytes();
    let mut types = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let len = complete(&bytes[at..], 0).ok_or_else(|| {
            format!(
                "{signature:?} is not a D-Bus signature (it breaks at byte {at}): write one type per argument, e.g. \"su\" or \"a{{sv}}\""
            )
        })?;
        let part = &signature.trim()[at..at + len];
        let parsed = Signature::from_str(part).map_err(|e| {
            format!("{signature:?} is not a D-Bus signature ({part:?}: {e}): write one type per argument, e.g. \"su\" or \"a{{sv}}\"")
        })?;
        if part.contains('h') {
            return Err(format!(
                "{signature:?} has a file descriptor (h), which a manifest cannot pass: call this method from a program ([tool.exec]) instead"
            ));
        }
        types.push(parsed);
        at += len;
    }
    Ok(types)
}

impl DbusTable {
    /// Check the table: the bus, the names, the signature, and one template per argument.
    pub fn check(self, c: &Check) -> Result<DbusSpec, ToolsError> {
        let bus = match self.bus.as_deref().map(str::trim) {
            None | Some("system") => DbusBus::System,
            Some("session") => DbusBus::Session,
            Some(other) => {
                return Err(c.invalid(
                    "dbus.bus",
                    format!("{other:?} is not a bus: use \"system\" or \"session\""),
                ))
            }
        };
        for (field, kind, value) in [
            ("dbus.destination", NameKind::Bus, &self.destination),
            ("dbus.path", NameKind::Path, &self.path),
            ("dbus.interface", NameKind::Interface, &self.interface),
            ("dbus.method", NameKind::Member, &self.method),
        ] {
            if is_template(value) {
                return Err(c.invalid(
                    field,
                    format!("{value:?} is a template, but what a tool calls must be fixed in the manifest (a call's values must never choose the service, the object, the interface or the method): write the name itself, and make one tool per method the model may call"),
                ));
            }
            if let Some(problem) = name_problem(kind, value) {
                return Err(c.invalid(field, problem));
            }
        }
        let signature = self.signature.unwrap_or_default();
        let arg_types = split_signature(&signature).map_err(|p| c.invalid("dbus.signature", p))?;
        if arg_types.len() != self.args.len() {
            return Err(c.invalid(
                "dbus.args",
                format!(
                    "has {} values but dbus.signature {signature:?} has {} arguments: give one value per type of the signature",
                    self.args.len(),
                    arg_types.len()
                ),
            ));
        }
        for (i, (arg, ty)) in self.args.iter().zip(&arg_types).enumerate() {
            let field = format!("dbus.args[{i}]");
            c.json_template(&field, arg)?;
            if let Some((s, refusal)) = string_refusal(arg) {
                return Err(c.invalid(field, format!("{} {refusal}", values::quoted(s))));
            }
            if !values::json_has_template(arg) {
                json_to_variant(ty, arg)
                    .map_err(|e| c.invalid(format!("{field}{}", e.at), e.to_string()))?;
            }
        }
        let timeout = c.timeout("dbus", self.timeout_ms, DEFAULT_TIMEOUT_MS)?;
        Ok(DbusSpec {
            bus,
            destination: self.destination,
            path: self.path,
            interface: self.interface,
            method: self.method,
            signature,
            arg_types,
            args: self.args,
            timeout,
        })
    }
}

/// A JSON value that does not fit a D-Bus type.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("expected {expected}, got {got}: fix dbus.args (or dbus.signature) in the tool's manifest, or narrow the tool's parameters so the value fits")]
pub(crate) struct ConvertError {
    /// Where inside the argument the value is (`[2]`, `.key`, `[0].on`), empty at its top.
    pub at: String,
    /// The type, described (`an unsigned 32-bit integer (u)`).
    pub expected: String,
    /// The value, as JSON (cut at 80 bytes).
    pub got: String,
}

impl ConvertError {
    fn new(sig: &Signature, v: &Value) -> ConvertError {
        let mut got = v.to_string();
        if got.len() > 80 {
            let mut cut = 80;
            while !got.is_char_boundary(cut) {
                cut -= 1;
            }
            got.truncate(cut);
            got.push('…');
        }
        ConvertError {
            at: String::new(),
            expected: describe(sig),
            got,
        }
    }

    /// The same error one level further out (`step` is the item's place in its container).
    fn inside(mut self, step: String) -> ConvertError {
        self.at = format!("{step}{}", self.at);
        self
    }
}

/// A D-Bus type in words, with its code.
fn describe(sig: &Signature) -> String {
    let words = match sig {
        Signature::U8 => "a byte 0-255",
        Signature::Bool => "a boolean",
        Signature::I16 => "a 16-bit integer",
        Signature::U16 => "an unsigned 16-bit integer",
        Signature::I32 => "a 32-bit integer",
        Signature::U32 => "an unsigned 32-bit integer",
        Signature::I64 => "a 64-bit integer",
        Signature::U64 => "an unsigned 64-bit integer",
        Signature::F64 => "a number",
        Signature::Str => "a string",
        Signature::ObjectPath => "an object path",
        Signature::Signature => "a D-Bus signature",
        Signature::Variant => "a string, number, boolean, array or object",
        Signature::Array(_) => "an array",
        Signature::Dict { .. } => "an object",
        Signature::Structure(_) => "an array with one item per field",
        _ => "a value hearth cannot build",
    };
    format!("{words} ({sig})")
}

/// An integer from a JSON number (or a float with no fraction, or a string holding one).
fn integer(v: &Value) -> Option<i128> {
    match v {
        Value::Number(n) => n
            .as_i64()
            .map(i128::from)
            .or_else(|| n.as_u64().map(i128::from))
            .or_else(|| {
                n.as_f64()
                    .filter(|f| f.fract() == 0.0 && f.abs() < 1.8e19)
                    .map(|f| f as i128)
            }),
        Value::String(s) => s.trim().parse::<i128>().ok(),
        _ => None,
    }
}

/// Convert a JSON value to the D-Bus type `sig` (see the module docs for the rules).
pub(crate) fn json_to_variant(
    sig: &Signature,
    v: &Value,
) -> Result<Variant<'static>, ConvertError> {
    let bad = || ConvertError::new(sig, v);
    macro_rules! int {
        ($t:ty, $variant:ident) => {
            integer(v)
                .and_then(|i| <$t>::try_from(i).ok())
                .map(Variant::$variant)
                .ok_or_else(bad)
        };
    }
    match sig {
        Signature::U8 => int!(u8, U8),
        Signature::I16 => int!(i16, I16),
        Signature::U16 => int!(u16, U16),
        Signature::I32 => int!(i32, I32),
        Signature::U32 => int!(u32, U32),
        Signature::I64 => int!(i64, I64),
        Signature::U64 => int!(u64, U64),
        Signature::F64 => match v {
            Value::Number(n) => n.as_f64().map(Variant::F64).ok_or_else(bad),
            Value::String(s) => s
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|f| f.is_finite())
                .map(Variant::F64)
                .ok_or_else(bad),
            _ => Err(bad()),
        },
        Signature::Bool => match v {
            Value::Bool(b) => Ok(Variant::Bool(*b)),
            Value::String(s) if s.trim() == "true" => Ok(Variant::Bool(true)),
            Value::String(s) if s.trim() == "false" => Ok(Variant::Bool(false)),
            _ => Err(bad()),
        },
        Signature::Str => match v {
            Value::String(s) => Ok(Variant::from(s.clone())),
            Value::Number(n) => Ok(Variant::from(n.to_string())),
            Value::Bool(b) => Ok(Variant::from(b.to_string())),
            _ => Err(bad()),
        },
        Signature::ObjectPath => match v {
            Value::String(s) => ObjectPath::try_from(s.clone())
                .map(Variant::ObjectPath)
                .map_err(|_| bad()),
            _ => Err(bad()),
        },
        Signature::Signature => match v {
            Value::String(s) => Signature::from_str(s)
                .map(Variant::Signature)
                .map_err(|_| bad()),
            _ => Err(bad()),
        },
        Signature::Variant => infer(v)
            .map(|inner| Variant::Variant(Box::new(inner)))
            .ok_or_else(bad),
        Signature::Array(child) => {
            let child: &Signature = child;
            let mut array = Array::new(child);
            match (v, child) {
                (Value::String(s), Signature::U8) => {
                    for b in s.bytes() {
                        array.append(Variant::U8(b)).map_err(|_| bad())?;
                    }
                }
                (Value::Array(items), _) => {
                    for (i, item) in items.iter().enumerate() {
                        let element =
                            json_to_variant(child, item).map_err(|e| e.inside(format!("[{i}]")))?;
                        array.append(element).map_err(|_| bad())?;
                    }
                }
                _ => return Err(bad()),
            }
            Ok(Variant::Array(array))
        }
        Signature::Dict { key, value } => {
            let Value::Object(map) = v else {
                return Err(bad());
            };
            let (key, value): (&Signature, &Signature) = (key, value);
            let mut dict = Dict::new(key, value);
            for (k, item) in map {
                // keys are strings in JSON: numbers and booleans are parsed from them
                let k_json = Value::String(k.clone());
                let k_variant =
                    json_to_variant(key, &k_json).map_err(|e| e.inside(format!("[key {k:?}]")))?;
                let v_variant =
                    json_to_variant(value, item).map_err(|e| e.inside(format!(".{k}")))?;
                dict.append(k_variant, v_variant).map_err(|_| bad())?;
            }
            Ok(Variant::Dict(dict))
        }
        Signature::Structure(fields) => {
            let Value::Array(items) = v else {
                return Err(bad());
            };
            if items.len() != fields.iter().count() {
                return Err(bad());
            }
            let mut builder = zbus::wire::StructureBuilder::new();
            for (i, (field, item)) in fields.iter().zip(items).enumerate() {
                let field = json_to_variant(field, item).map_err(|e| e.inside(format!("[{i}]")))?;
                builder = builder.append_field(field);
            }
            builder.build().map(Variant::Structure).map_err(|_| bad())
        }
        _ => Err(bad()),
    }
}

/// The D-Bus value a `v` argument holds, from the JSON value's own type.
fn infer(v: &Value) -> Option<Variant<'static>> {
    Some(match v {
        Value::String(s) => Variant::from(s.clone()),
        Value::Bool(b) => Variant::Bool(*b),
        Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => Variant::I64(i),
            (None, Some(u), _) => Variant::U64(u),
            (None, None, Some(f)) => Variant::F64(f),
            _ => return None,
        },
        Value::Array(items) if !items.is_empty() && items.iter().all(Value::is_string) => {
            let mut array = Array::new(&Signature::Str);
            for s in items.iter().filter_map(Value::as_str) {
                array.append(Variant::from(s.to_string())).ok()?;
            }
            Variant::Array(array)
        }
        Value::Array(items) => {
            let mut array = Array::new(&Signature::Variant);
            for item in items {
                array
                    .append(Variant::Variant(Box::new(infer(item)?)))
                    .ok()?;
            }
            Variant::Array(array)
        }
        Value::Object(map) => {
            let mut dict = Dict::new(&Signature::Str, &Signature::Variant);
            for (k, item) in map {
                dict.append(
                    Variant::from(k.clone()),
                    Variant::Variant(Box::new(infer(item)?)),
                )
                .ok()?;
            }
            Variant::Dict(dict)
        }
        Value::Null => return None,
    })
}

/// A D-Bus value as JSON: numbers, booleans and strings as themselves (object paths and
/// signatures as strings), arrays and structures as arrays, dictionaries as objects (keys
/// written as strings), variants as the value they hold.
pub(crate) fn variant_to_json(v: &Variant<'_>) -> Value {
    match v {
        Variant::U8(n) => Value::from(*n),
        Variant::Bool(b) => Value::Bool(*b),
        Variant::I16(n) => Value::from(*n),
        Variant::U16(n) => Value::from(*n),
        Variant::I32(n) => Value::from(*n),
        Variant::U32(n) => Value::from(*n),
        Variant::I64(n) => Value::from(*n),
        Variant::U64(n) => Value::from(*n),
        Variant::F64(f) => serde_json::Number::from_f64(*f)
            .map(Value::Number)
            .unwrap_or_else(|| Value::String(f.to_string())),
        Variant::Str(s) => Value::String(s.to_string()),
        Variant::Signature(s) => Value::String(s.to_string()),
        Variant::ObjectPath(p) => Value::String(p.as_str().to_string()),
        Variant::Variant(inner) => variant_to_json(inner),
        Variant::Array(a) => Value::Array(a.inner().iter().map(variant_to_json).collect()),
        Variant::Dict(d) => Value::Object(
            d.iter()
                .map(|(k, v)| {
                    let key = match variant_to_json(k) {
                        Value::String(s) => s,
                        other => other.to_string(),
                    };
                    (key, variant_to_json(v))
                })
                .collect(),
        ),
        Variant::Structure(s) => Value::Array(s.fields().iter().map(variant_to_json).collect()),
        #[allow(unreachable_patterns)]
        other => Value::String(other.to_string()),
    }
}

/// A reply's values as the result text: none → empty, one string → the string, one other
/// value → its JSON, several → a JSON array.
fn reply_text(reply: &zbus::Message) -> Result<String, zbus::Error> {
    let body = reply.body();
    if body.is_empty() || matches!(body.signature(), Signature::Unit) {
        return Ok(String::new());
    }
    let values: Structure<'_> = body.deserialize()?;
    Ok(match values.fields() {
        [] => String::new(),
        [Variant::Str(s)] => s.to_string(),
        [one] => variant_to_json(one).to_string(),
        many => Value::Array(many.iter().map(variant_to_json).collect()).to_string(),
    })
}

/// The buses `[tool.dbus]` tools call on: a connection to each, opened when first needed
/// and kept (dropped and reopened after an I/O failure).
#[derive(Debug, Default)]
pub struct DbusBackend {
    system_address: Option<String>,
    session_address: Option<String>,
    system: Mutex<Option<zbus::Connection>>,
    session: Mutex<Option<zbus::Connection>>,
}

impl DbusBackend {
    /// Buses at explicit addresses (`unix:path=…`); None keeps the standard bus
    /// (`Connection::system()` / `Connection::session()`).
    pub fn with_addresses(system: Option<String>, session: Option<String>) -> Self {
        DbusBackend {
            system_address: system,
            session_address: session,
            ..DbusBackend::default()
        }
    }

    /// The connection to `bus`, opened if needed.
    pub async fn connection(&self, bus: DbusBus) -> Result<zbus::Connection, zbus::Error> {
        let (slot, address) = match bus {
            DbusBus::System => (&self.system, &self.system_address),
            DbusBus::Session => (&self.session, &self.session_address),
        };
        let mut guard = slot.lock().await;
        if let Some(c) = guard.as_ref() {
            return Ok(c.clone());
        }
        let conn = match (address, bus) {
            (Some(a), _) => {
                zbus::connection::Builder::address(a.as_str())
                    .build()
                    .await?
            }
            (None, DbusBus::System) => zbus::Connection::system().await?,
            (None, DbusBus::Session) => zbus::Connection::session().await?,
        };
        tracing::debug!(%bus, "connected to the D-Bus bus");
        *guard = Some(conn.clone());
        Ok(conn)
    }

    /// Forget the connection to `bus` (the next call reconnects).
    async fn reset(&self, bus: DbusBus) {
        let slot = match bus {
            DbusBus::System => &self.system,
            DbusBus::Session => &self.session,
        };
        *slot.lock().await = None;
    }
}

/// The name and description of a D-Bus error reply.
fn error_parts(e: &zbus::Error) -> Option<(String, Option<String>)> {
    match e {
        zbus::Error::MethodError(name, msg, _) => Some((name.to_string(), msg.clone())),
        zbus::Error::FDO(fdo) => {
            let fdo: &zbus::fdo::Error = fdo;
            if let zbus::fdo::Error::ZBus(inner) = fdo {
                return error_parts(inner);
            }
            Some((
                zbus::DBusError::name(fdo).to_string(),
                zbus::DBusError::description(fdo).map(str::to_string),
            ))
        }
        _ => None,
    }
}

/// A D-Bus error as one readable line: its name and message.
pub fn error_text(e: &zbus::Error) -> String {
    match error_parts(e) {
        Some((name, Some(msg))) if !msg.is_empty() => format!("{name}: {msg}"),
        Some((name, _)) => name,
        None => e.to_string(),
    }
}

/// The first string of `v` (a value or a dictionary key, at any depth) that a D-Bus
/// argument may not carry ([`values::check`] at [`Place::Text`]), with why.
fn string_refusal(v: &Value) -> Option<(&str, values::Refusal)> {
    let check = |s: &str| values::check(Place::Text, s).err();
    match v {
        Value::String(s) => check(s).map(|r| (s.as_str(), r)),
        Value::Array(items) => items.iter().find_map(string_refusal),
        Value::Object(m) => m.iter().find_map(|(k, item)| {
            check(k)
                .map(|r| (k.as_str(), r))
                .or_else(|| string_refusal(item))
        }),
        _ => None,
    }
}

/// Run one call: render the arguments, convert them to the signature's types, call the
/// method on the bus under the timeout, and render the reply.
pub async fn run(tool: &str, spec: &DbusSpec, args: &Value, b: &DbusBackend) -> ExecOutput {
    let (destination, path, interface, method) =
        (&spec.destination, &spec.path, &spec.interface, &spec.method);
    let mut fields = Vec::with_capacity(spec.args.len());
    for (i, (template, ty)) in spec.args.iter().zip(&spec.arg_types).enumerate() {
        let value = match super::render_json(template, args) {
            Ok(v) => v,
            Err(e) => {
                return ExecOutput::error(format!("{tool}: cannot render dbus.args[{i}]: {e}"))
            }
        };
        if let Some((s, refusal)) = string_refusal(&value) {
            return ExecOutput::error(format!(
                "{tool}: not called: dbus.args[{i}] got {}, which {refusal}",
                values::quoted(s)
            ));
        }
        match json_to_variant(ty, &value) {
            Ok(v) => fields.push(v),
            Err(e) => return ExecOutput::error(format!("{tool}: dbus.args[{i}]{}: {e}", e.at)),
        }
    }
    let call_name = format!("{interface}.{method}");
    tracing::debug!(bus = %spec.bus, %destination, %path, method = %call_name, "dbus call");
    let bus = spec.bus;
    let call = async {
        let conn = b.connection(bus).await.map_err(|e| (true, e))?;
        let reply = if fields.is_empty() {
            conn.call_method(
                Some(destination.as_str()),
                path.as_str(),
                Some(interface.as_str()),
                method.as_str(),
                &(),
            )
            .await
        } else {
            let body = fields
                .into_iter()
                .fold(zbus::wire::StructureBuilder::new(), |s, f| {
                    s.append_field(f)
                })
                .build()
                .map_err(|e| (false, e))?;
            conn.call_method(
                Some(destination.as_str()),
                path.as_str(),
                Some(interface.as_str()),
                method.as_str(),
                &body,
            )
            .await
        };
        reply.map_err(|e| (false, e))
    };
    let reply = match tokio::time::timeout(spec.timeout, call).await {
        Err(_) => {
            return ExecOutput::error(format!(
                "{tool}: {destination} did not answer {call_name} within {} ms on the {bus} bus: check that the service works, or raise dbus.timeout_ms in the tool's manifest",
                spec.timeout.as_millis()
            ))
        }
        Ok(Err((connecting, e))) => {
            if connecting || matches!(e, zbus::Error::InputOutput(_)) {
                b.reset(bus).await;
            }
            return ExecOutput::error(format!(
                "{tool}: {}",
                explain(&e, connecting, bus, destination, path, &call_name)
            ));
        }
        Ok(Ok(reply)) => reply,
    };
    match reply_text(&reply) {
        Ok(text) => ExecOutput::done(text),
        Err(e) => ExecOutput::error(format!(
            "{tool}: cannot read the reply of {destination} to {call_name}: {e}"
        )),
    }
}

/// An error of a call, with its likely cause and fix.
fn explain(
    e: &zbus::Error,
    connecting: bool,
    bus: DbusBus,
    destination: &str,
    path: &str,
    call: &str,
) -> String {
    if connecting {
        let fix = match bus {
            DbusBus::Session => "run hearth in the user's session (DBUS_SESSION_BUS_ADDRESS must be set), or use bus = \"system\" in the tool's manifest",
            DbusBus::System => "check that dbus-daemon (or dbus-broker) is running",
        };
        return format!("cannot connect to the {bus} bus: {e}: {fix}");
    }
    let text = error_text(e);
    let Some((name, _)) = error_parts(e) else {
        return format!("calling {call} on {destination} failed: {text}");
    };
    let short = name.rsplit('.').next().unwrap_or(&name);
    match short {
        "ServiceUnknown" | "NameHasNoOwner" => format!(
            "{destination} is not running on the {bus} bus ({text}): start the service, or fix dbus.destination (and dbus.bus) in the tool's manifest"
        ),
        "UnknownMethod" => format!(
            "{destination} has no method {call} taking these arguments at {path} ({text}): fix dbus.interface, dbus.method or dbus.signature in the tool's manifest (`busctl introspect {destination} {path}` lists them)"
        ),
        "UnknownObject" => format!(
            "{destination} has no object {path} ({text}): fix dbus.path in the tool's manifest (`busctl tree {destination}` lists them)"
        ),
        "UnknownInterface" => format!(
            "{destination} has no interface for {call} at {path} ({text}): fix dbus.interface in the tool's manifest"
        ),
        "AccessDenied" | "InteractiveAuthorizationRequired" => format!(
            "the {bus} bus policy denies hearth calling {call} on {destination} ({text}): allow it in the bus policy (a file in /etc/dbus-1/{bus}.d/ with <policy user=\"USER\"><allow send_destination=\"{destination}\"/></policy>, USER being hearth's service user), or in the service's own polkit rules"
        ),
        "InvalidArgs" | "InvalidSignature" => format!(
            "{destination} rejected the arguments of {call} ({text}): fix dbus.signature and dbus.args in the tool's manifest"
        ),
        "NoReply" | "Timeout" | "TimedOut" => format!(
            "{destination} did not answer {call} ({text}): check that the service works"
        ),
        _ => format!("{destination} answered {call} with an error: {text}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sig(s: &str) -> Signature {
        Signature::from_str(s).unwrap()
    }

    #[test]
    fn splits_top_level_types() {
        let parts: Vec<String> = split_signature("susssasa{sv}i")
            .unwrap()
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(parts, ["s", "u", "s", "s", "s", "as", "a{sv}", "i"]);
        assert_eq!(split_signature("").unwrap().len(), 0);
        assert_eq!(split_signature("(sd)").unwrap(), vec![sig("(sd)")]);
        assert_eq!(split_signature("(sd)a(ii)").unwrap().len(), 2);
        for bad in ["a", "(s", "a{vs}", "z", "s}", "{sv}", "h"] {
            assert!(split_signature(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn converts_and_rejects() {
        assert_eq!(
            json_to_variant(&sig("u"), &json!(7)).unwrap(),
            Variant::U32(7)
        );
        assert_eq!(
            json_to_variant(&sig("u"), &json!("7")).unwrap(),
            Variant::U32(7)
        );
        assert_eq!(
            json_to_variant(&sig("y"), &json!(255.0)).unwrap(),
            Variant::U8(255)
        );
        assert!(json_to_variant(&sig("y"), &json!(256)).is_err());
        assert!(json_to_variant(&sig("u"), &json!(-1)).is_err());
        assert!(json_to_variant(&sig("i"), &json!(1.5)).is_err());
        let e = json_to_variant(&sig("aq"), &json!([1, "x"])).unwrap_err();
        assert_eq!(e.at, "[1]");
        // dictionary keys are parsed from JSON's string keys
        let d = json_to_variant(&sig("a{us}"), &json!({"5": "x"})).unwrap();
        assert_eq!(variant_to_json(&d), json!({"5": "x"}));
        let e = json_to_variant(&sig("a{bs}"), &json!({"maybe": "x"})).unwrap_err();
        assert_eq!(e.at, "[key \"maybe\"]");
        let e = json_to_variant(&sig("a{sv}"), &json!({"k": null})).unwrap_err();
        assert_eq!(e.at, ".k");
        assert_eq!(
            variant_to_json(
                &json_to_variant(&sig("a{sv}"), &json!({"a": [1, "x"], "b": 2.5})).unwrap()
            ),
            json!({"a": [1, "x"], "b": 2.5})
        );
        assert_eq!(
            variant_to_json(&json_to_variant(&sig("(sai)"), &json!(["x", [1, 2]])).unwrap()),
            json!(["x", [1, 2]])
        );
    }
}
