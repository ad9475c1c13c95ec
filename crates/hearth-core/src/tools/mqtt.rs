//! The `mqtt` executor: publish one message to the broker of `[mqtt]` (Zigbee2MQTT,
//! Tasmota, ESPHome, …) and, optionally, wait for the device's answer on its state topic.
//!
//! ```toml
//! [[tool]]
//! name = "set_light"
//! description = "Turn a light on or off."
//! [tool.parameters]
//! type = "object"
//! required = ["room", "on"]
//! additionalProperties = false
//! [tool.parameters.properties.room]
//! type = "string"
//! enum = ["kitchen", "living room"]
//! [tool.parameters.properties.on]
//! type = "boolean"
//! [tool.mqtt]
//! topic = "zigbee2mqtt/{{ room }} light/set"        # a template; no `+` or `#`
//! payload = { state = "{{ 'ON' if on else 'OFF' }}" } # a table, array, number or
//!                                                     # boolean: sent as JSON
//! # payload = "ON"       # a string: sent as that text (not JSON-quoted); none: empty
//! qos = 1                # 0, 1 or 2 (default 1)
//! retain = false         # default false
//! state_topic = "zigbee2mqtt/{{ room }} light"   # optional: wait for the device's answer
//! timeout_ms = 5000      # default 5000: connecting, publishing and the state wait
//! ```
//!
//! Every string of `topic`, `payload` and `state_topic` is a template over the call's
//! arguments. A JSON payload keeps the type of a lone expression (`"{{ brightness }}"`
//! sends a number). In a topic, each value (each `{{ … }}` output) must stay within one
//! level: a value holding `/`, `+` or `#` or NUL, or beginning with `$` (the broker's own
//! `$SYS/…` topics), is an error naming the value and the fix, and nothing is sent; so is
//! a topic that renders empty. Write the levels in the manifest
//! (`"zigbee2mqtt/{{ room }}/{{ device }}/set"`), never in a value.
//!
//! Result: without `state_topic`, `published to TOPIC` once the broker has the message
//! (QoS 1: its PUBACK, QoS 2: its PUBCOMP, QoS 0: once written to the socket). With
//! `state_topic`, hearth subscribes to it before publishing and the result is the first
//! message that arrives on it after the publish (trimmed, and cut at 2048 bytes with a note
//! like every result: `output::MAX_RESULT_BYTES`). Errors name
//! the tool, the broker and the problem.
//!
//! The broker connection ([`MqttBackend`]) is opened on first use and kept: one client, one
//! task that polls it. After a failure the task tries again every second (a warning is
//! logged once per outage); a call made while the broker cannot be reached fails at the
//! next failed attempt with the reason, and is not sent later. `[mqtt] url = "mqtts://…"`
//! connects over TLS ([`tls`]).

use std::collections::{HashMap, HashSet, VecDeque};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use rumqttc::{
    AsyncClient, ClientError, ConnectReturnCode, ConnectionError, Event, EventLoop, MqttOptions,
    Outgoing, Packet, QoS, Request, SubscribeReasonCode, TlsConfiguration, Transport,
};
use serde::Deserialize;
use serde_json::Value;
use tokio::sync::{broadcast, oneshot};
use tokio::time::Instant;

use super::output::values::{self, Place};
use super::Check;
use super::ToolStatus;
use super::{ExecOutput, ToolsError};
use crate::config::{broker_address, BrokerAddress, MqttSection};

mod tls;

/// `timeout_ms` when a manifest does not give one.
pub(crate) const DEFAULT_TIMEOUT_MS: u64 = 5_000;
/// Keep-alive when `[mqtt] keep_alive_s` is not set.
pub(crate) const DEFAULT_KEEP_ALIVE_S: u64 = 30;
/// Pause between two failed connection attempts.
const RETRY: Duration = Duration::from_secs(1);
/// Requests that may wait for the connection task at once.
const REQUEST_CAPACITY: usize = 64;
/// Largest packet sent (state messages of big devices included).
const MAX_PACKET_BYTES: usize = 256 * 1024;
/// Largest packet accepted: Zigbee2MQTT's retained `bridge/devices` holds every device's
/// definition, some 8 KB each (the corpus's ten devices are 78 KB): room for a house of a
/// thousand.
const MAX_INCOMING_BYTES: usize = 16 * 1024 * 1024;

/// Why the `[mqtt]` configuration cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum MqttError {
    /// `url` is not `mqtt://HOST[:PORT]`.
    #[error("[mqtt] url {0:?}: {1}: write it as mqtt://HOST[:PORT], or mqtts://HOST[:PORT] for TLS, in hearth.toml")]
    Url(String, String),
    /// `password_file` cannot be read.
    #[error("[mqtt] password_file {}: cannot read it ({source}): put the broker password on its first line, readable by hearth's user, or remove password_file from hearth.toml", path.display())]
    PasswordFile {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// `password_file` can be read or changed by users other than hearth.
    #[error("[mqtt] password_file {}: {problem}", path.display())]
    PasswordFileOpen { path: PathBuf, problem: String },
    /// `password_file` has no password on its first line.
    #[error("[mqtt] password_file {} is empty: put the broker password on its first line", path.display())]
    EmptyPassword { path: PathBuf },
    /// A password without a user name (MQTT 3.1.1 cannot send one).
    #[error("[mqtt] password_file is set but username is not: add username = \"…\" to [mqtt] in hearth.toml")]
    PasswordWithoutUser,
    /// A TLS key for a plain `mqtt://` broker.
    #[error("[mqtt] {0} is set but url is not mqtts://: TLS needs url = \"mqtts://HOST\" (port 8883 by default), or remove {0}")]
    TlsKeyWithoutTls(&'static str),
    /// `ca_file`, `client_cert_file` or `client_key_file` cannot be used.
    #[error("[mqtt] {key} {}: {problem}", path.display())]
    TlsFile {
        key: &'static str,
        path: PathBuf,
        problem: String,
    },
    /// Only one of `client_cert_file` and `client_key_file`.
    #[error("[mqtt] client_cert_file and client_key_file go together: set both (the client certificate and its private key, PEM) or neither")]
    ClientAuthHalf,
    /// The client certificate and key do not make an identity.
    #[error("[mqtt] client_cert_file and client_key_file cannot be used together: {0} (is the key the certificate's?)")]
    ClientIdentity(String),
    /// The system has no CA certificates to check the broker with.
    #[error("[mqtt] url is mqtts:// but this system has no CA certificates{0}: set ca_file to the CA that signed the broker's certificate, or install ca-certificates")]
    NoSystemRoots(String),
    /// rustls refused the settings.
    #[error("[mqtt] TLS: {0}")]
    Tls(String),
}

/// `[tool.mqtt]` as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct MqttTable {
    /// The topic template.
    pub topic: String,
    /// The payload: a string template (sent as text) or any other TOML value (JSON).
    #[serde(default)]
    pub payload: Option<Value>,
    /// 0, 1 or 2.
    #[serde(default = "default_qos")]
    pub qos: i64,
    /// Ask the broker to keep the message for later subscribers.
    #[serde(default)]
    pub retain: bool,
    /// A topic template to wait on for the device's answer.
    #[serde(default)]
    pub state_topic: Option<String>,
    /// Time for connecting, publishing and the state wait.
    #[serde(default = "default_timeout_ms")]
    pub timeout_ms: u64,
}

fn default_qos() -> i64 {
    1
}

fn default_timeout_ms() -> u64 {
    DEFAULT_TIMEOUT_MS
}

/// What a call publishes.
#[derive(Debug, Clone, PartialEq)]
pub enum MqttPayload {
    /// No `payload`: an empty message.
    Empty,
    /// A string template, sent as the rendered text.
    Text(String),
    /// A JSON template ([`super::render_json`]), sent serialised.
    Json(Value),
}

/// A checked `[tool.mqtt]`.
#[derive(Debug, Clone, PartialEq)]
pub struct MqttSpec {
    /// The topic template.
    pub topic: String,
    /// The payload template.
    pub payload: MqttPayload,
    /// Delivery guarantee asked of the broker.
    pub qos: QoS,
    /// The retain flag.
    pub retain: bool,
    /// The state topic template, when the call waits for the device's answer.
    pub state_topic: Option<String>,
    /// Time for the whole call.
    pub timeout: Duration,
}

impl MqttTable {
    /// Check the table: templates, topics without wildcards, qos and timeout.
    pub fn check(self, c: &Check) -> Result<MqttSpec, ToolsError> {
        check_topic_template(c, "mqtt.topic", &self.topic)?;
        if let Some(state) = &self.state_topic {
            check_topic_template(c, "mqtt.state_topic", state)?;
            if state.trim() == self.topic.trim() {
                return Err(c.invalid(
                    "mqtt.state_topic",
                    "is the same as mqtt.topic, so the answer would be hearth's own message: give the topic the device reports its state on (Zigbee2MQTT: the topic without /set)",
                ));
            }
        }
        let payload = match self.payload {
            None => MqttPayload::Empty,
            Some(Value::String(s)) => {
                c.template("mqtt.payload", &s)?;
                MqttPayload::Text(s)
            }
            Some(v) => {
                c.json_template("mqtt.payload", &v)?;
                MqttPayload::Json(v)
            }
        };
        let qos = match self.qos {
            0 => QoS::AtMostOnce,
            1 => QoS::AtLeastOnce,
            2 => QoS::ExactlyOnce,
            other => {
                return Err(c.invalid(
                    "mqtt.qos",
                    format!(
                        "is {other}, but must be 0, 1 or 2 (1, the default, suits most devices)"
                    ),
                ))
            }
        };
        let timeout = c.timeout("mqtt", self.timeout_ms, DEFAULT_TIMEOUT_MS)?;
        Ok(MqttSpec {
            topic: self.topic,
            payload,
            qos,
            retain: self.retain,
            state_topic: self.state_topic,
            timeout,
        })
    }
}

/// Check a topic template at load time: it compiles, reads only parameters, is not blank
/// and has no wildcard in its literal text.
fn check_topic_template(c: &Check, field: &str, source: &str) -> Result<(), ToolsError> {
    c.template(field, source)?;
    if let Some(problem) = values::literal_problem(source) {
        return Err(c.invalid(field, problem));
    }
    if source.trim().is_empty() {
        return Err(c.invalid(
            field,
            "is empty: give the device's topic, e.g. \"zigbee2mqtt/kitchen light/set\"",
        ));
    }
    if values::literal_text(source).contains(['+', '#']) {
        return Err(c.invalid(
            field,
            format!("{source:?} has an MQTT wildcard (`+` or `#`): a tool needs one exact topic, e.g. \"zigbee2mqtt/kitchen light/set\""),
        ));
    }
    Ok(())
}

/// A rendered topic that can be used: not empty, no wildcard, no NUL, not too long.
fn check_topic(field: &str, topic: &str) -> Result<(), String> {
    if topic.is_empty() {
        return Err(format!(
            "{field} rendered to an empty topic: check the values its template reads"
        ));
    }
    if topic.contains(['+', '#']) {
        return Err(format!(
            "{field} rendered to {topic:?}, which has an MQTT wildcard (`+` or `#`): the arguments must not contain them (use an enum in the tool's parameters)"
        ));
    }
    if topic.contains('\0') || topic.len() > 65_535 {
        return Err(format!(
            "{field} rendered to a topic MQTT cannot carry (a NUL character, or over 65535 bytes)"
        ));
    }
    Ok(())
}

/// Render the topic template `source` of `field`: every value in it must stay in its level
/// ([`values::check`] at [`Place::Topic`]), and the topic must be one MQTT can carry
/// ([`check_topic`]).
fn render_topic(field: &str, source: &str, args: &Value) -> Result<String, String> {
    let rendered = values::render_marked(source, args)
        .map_err(|e| format!("cannot build {field} from `{source}`: {e}"))?;
    for (_, value) in rendered.values() {
        values::check(Place::Topic, value).map_err(|refusal| {
            format!(
                "not sent: {field} rendered to {:?}, where the value {} {refusal}",
                rendered.text,
                values::quoted(value)
            )
        })?;
    }
    check_topic(field, &rendered.text)?;
    Ok(rendered.text)
}

/// The broker of `[mqtt]`, connected on first use and kept.
pub struct MqttBackend {
    /// The broker's host.
    pub host: String,
    /// The broker's port.
    pub port: u16,
    /// The client id hearth connects with.
    pub client_id: String,
    username: Option<String>,
    password: Option<String>,
    keep_alive: Duration,
    /// TLS (`mqtts://`): the checked client configuration.
    tls: Option<Arc<rustls::ClientConfig>>,
    link: Mutex<Option<Arc<Link>>>,
}

impl std::fmt::Debug for MqttBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MqttBackend")
            .field("host", &self.host)
            .field("port", &self.port)
            .field("client_id", &self.client_id)
            .field("username", &self.username)
            .field("password", &self.password.as_ref().map(|_| "…"))
            .field("tls", &self.tls.is_some())
            .finish_non_exhaustive()
    }
}

impl MqttBackend {
    /// From `[mqtt]`: parses the url and reads the password file and, for `mqtts://`, the
    /// TLS files. Connects on first use.
    pub fn new(section: &MqttSection) -> Result<Self, MqttError> {
        let BrokerAddress { host, port, tls } =
            broker_address(&section.url).map_err(|e| MqttError::Url(section.url.clone(), e))?;
        let tls = tls::client_config(section, tls)?;
        let password = match &section.password_file {
            None => None,
            Some(path) => {
                let text =
                    std::fs::read_to_string(path).map_err(|source| MqttError::PasswordFile {
                        path: path.clone(),
                        source,
                    })?;
                crate::secret::check_private(path).map_err(|problem| {
                    MqttError::PasswordFileOpen {
                        path: path.clone(),
                        problem,
                    }
                })?;
                let line = text.lines().next().unwrap_or("").trim();
                if line.is_empty() {
                    return Err(MqttError::EmptyPassword { path: path.clone() });
                }
                Some(line.to_string())
            }
        };
        let username = section
            .username
            .as_deref()
            .map(str::trim)
            .filter(|u| !u.is_empty())
            .map(str::to_string);
        if password.is_some() && username.is_none() {
            return Err(MqttError::PasswordWithoutUser);
        }
        let client_id = section
            .client_id
            .as_deref()
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .map(str::to_string)
            .unwrap_or_else(default_client_id);
        Ok(MqttBackend {
            host,
            port,
            client_id,
            username,
            password,
            keep_alive: Duration::from_secs(
                section.keep_alive_s.unwrap_or(DEFAULT_KEEP_ALIVE_S).max(1),
            ),
            tls,
            link: Mutex::new(None),
        })
    }

    /// `HOST:PORT`, as errors name the broker.
    pub fn address(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }

    fn options(&self, client_id: String) -> MqttOptions {
        let mut o = MqttOptions::new(client_id, self.host.clone(), self.port);
        o.set_keep_alive(self.keep_alive)
            .set_clean_session(true)
            .set_max_packet_size(MAX_INCOMING_BYTES, MAX_PACKET_BYTES);
        if let Some(user) = &self.username {
            o.set_credentials(user.clone(), self.password.clone().unwrap_or_default());
        }
        if let Some(config) = &self.tls {
            o.set_transport(Transport::tls_with_config(TlsConfiguration::Rustls(
                Arc::clone(config),
            )));
        }
        o
    }

    /// Whether the broker is reached over TLS.
    pub fn uses_tls(&self) -> bool {
        self.tls.is_some()
    }

    /// Check that the broker accepts a connection with these settings, on a fresh
    /// connection of its own (client id `<client_id>-probe`), closed after.
    pub async fn probe(&self, timeout: Duration) -> Result<(), String> {
        let addr = self.address();
        let (client, mut eventloop) =
            AsyncClient::new(self.options(format!("{}-probe", self.client_id)), 4);
        let connected = tokio::time::timeout(timeout, async {
            loop {
                match eventloop.poll().await {
                    Ok(Event::Incoming(Packet::ConnAck(_))) => return Ok(()),
                    Ok(_) => {}
                    Err(e) => return Err(describe(&e, &addr, false, self.uses_tls())),
                }
            }
        })
        .await
        .unwrap_or_else(|_| {
            Err(format!(
                "the MQTT broker at {addr} did not accept a connection within {} ms (check [mqtt] url in hearth.toml and that the broker is running)",
                timeout.as_millis()
            ))
        });
        if connected.is_ok() && client.try_disconnect().is_ok() {
            // write the DISCONNECT so the broker logs a clean goodbye; bounded
            let _ = tokio::time::timeout(Duration::from_millis(500), async {
                while let Ok(event) = eventloop.poll().await {
                    if event == Event::Outgoing(Outgoing::Disconnect) {
                        break;
                    }
                }
            })
            .await;
        }
        connected
    }

    /// The kept connection, started on first use (and again if its task has ended).
    fn link(&self) -> Arc<Link> {
        let mut slot = self.link.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(link) = slot.as_ref().filter(|l| !l.task.is_finished()) {
            return Arc::clone(link);
        }
        let (client, eventloop) =
            AsyncClient::new(self.options(self.client_id.clone()), REQUEST_CAPACITY);
        // room for a house's retained announcements at once (the house's watch reads them)
        let (messages, _) = broadcast::channel(4096);
        let shared = Arc::new(Shared {
            state: Mutex::new(LinkState::default()),
            messages,
        });
        let addr = self.address();
        tracing::debug!(broker = %addr, client_id = %self.client_id, "connecting to the MQTT broker");
        let task = tokio::spawn(drive(eventloop, Arc::clone(&shared), addr, self.uses_tls()));
        let link = Arc::new(Link {
            client,
            shared,
            task,
        });
        *slot = Some(Arc::clone(&link));
        link
    }

    /// Close the kept connection: DISCONNECT goes after every request already queued, so
    /// those are written first; waits up to [`CLOSE_WAIT`] for it to be written.
    pub async fn close(&self) {
        let link = self.link.lock().unwrap_or_else(|e| e.into_inner()).take();
        let Some(link) = link.filter(|l| !l.task.is_finished()) else {
            return;
        };
        if link.client.try_disconnect().is_ok() {
            let deadline = Instant::now() + CLOSE_WAIT;
            while !link.task.is_finished() && Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }
        if !link.task.is_finished() {
            tracing::warn!(broker = %self.address(), "the MQTT connection did not close in time: dropped");
            link.task.abort();
        }
    }

    /// Every message the kept connection receives from now on, on whatever it subscribed
    /// to ([`MqttBackend::subscribe`]). The house's watch reads Zigbee2MQTT's bridge and the
    /// discovery topics through it.
    pub fn messages(&self) -> broadcast::Receiver<Arc<Message>> {
        self.link().shared.messages.subscribe()
    }

    /// The last payload heard on `topic` by the kept connection, if any (kept for
    /// [`KEPT_TOPICS`] topics): what a house thing last said of its state.
    pub fn last(&self, topic: &str) -> Option<Vec<u8>> {
        self.link().shared.lock().last.get(topic).cloned()
    }

    /// Whether the kept connection has subscribed to `filter` since it last connected (a
    /// reconnection starts over: a clean session).
    pub fn subscribed(&self, filter: &str) -> bool {
        self.link().shared.lock().subscribed.contains(filter)
    }

    /// Subscribe the kept connection to `filter` (QoS 0); Ok once the broker grants it. The
    /// broker then sends what it kept on the topics.
    pub async fn subscribe(&self, filter: &str, timeout: Duration) -> Result<(), String> {
        let deadline = Instant::now() + timeout;
        let link = self.link();
        let ack = link.enqueue(Kind::Subscribe(filter.to_string()), |c| {
            c.try_subscribe(filter, QoS::AtMostOnce)
        })?;
        self.wait(
            &link,
            ack,
            deadline,
            timeout.as_millis(),
            &format!("the subscription to {filter}"),
        )
        .await
        .map(|_| ())
    }

    /// Publish `payload` to `topic` (QoS 1, not kept); Ok once the broker has it. For the
    /// house's things, whose topics and payloads `hearth_house` made and checked.
    pub async fn send(
        &self,
        topic: &str,
        payload: Vec<u8>,
        timeout: Duration,
    ) -> Result<(), String> {
        check_topic("the house's topic", topic)?;
        self.publish(Publication {
            topic,
            payload,
            qos: QoS::AtLeastOnce,
            retain: false,
            state_topic: None,
            timeout,
        })
        .await
        .map(|_| ())
    }

    /// Publish one message; with `state_topic`, the first message on it after the publish.
    async fn publish(&self, p: Publication<'_>) -> Result<Option<String>, String> {
        let deadline = Instant::now() + p.timeout;
        let link = self.link();
        let ms = p.timeout.as_millis();
        let mut answers = None;
        if let Some(state_topic) = p.state_topic {
            // listen first: nothing sent on the state topic after the publish is missed
            let rx = link.shared.messages.subscribe();
            if !link.shared.lock().subscribed.contains(state_topic) {
                let ack = link.enqueue(Kind::Subscribe(state_topic.to_string()), |c| {
                    c.try_subscribe(state_topic, QoS::AtMostOnce)
                })?;
                self.wait(
                    &link,
                    ack,
                    deadline,
                    ms,
                    &format!("the subscription to {state_topic}"),
                )
                .await?;
            }
            answers = Some(rx);
        }
        let ack = link.enqueue(Kind::Publish(p.qos), |c| {
            c.try_publish(p.topic, p.qos, p.retain, p.payload)
        })?;
        let sent = self
            .wait(
                &link,
                ack,
                deadline,
                ms,
                &format!("the message to {}", p.topic),
            )
            .await?;
        let (Some(mut rx), Some(state_topic)) = (answers, p.state_topic) else {
            return Ok(None);
        };
        loop {
            match tokio::time::timeout_at(deadline, rx.recv()).await {
                Err(_) => {
                    return Err(format!(
                        "published to {} on the MQTT broker at {}, but no state arrived on {state_topic} within {ms} ms (is the device on and paired? check mqtt.state_topic in the manifest)",
                        p.topic,
                        self.address()
                    ))
                }
                Ok(Err(broadcast::error::RecvError::Lagged(n))) => {
                    tracing::debug!(skipped = n, "MQTT messages skipped while waiting for a state");
                }
                Ok(Err(broadcast::error::RecvError::Closed)) => {
                    return Err(format!(
                        "published to {}, but the connection to the MQTT broker at {} ended before a state arrived on {state_topic}",
                        p.topic,
                        self.address()
                    ))
                }
                Ok(Ok(m)) if m.topic == state_topic && !m.retain && m.seq > sent => {
                    return Ok(Some(state_text(&m.payload)));
                }
                Ok(Ok(_)) => {}
            }
        }
    }

    /// Wait for a request's acknowledgement until `deadline`; the error explains a timeout.
    async fn wait(
        &self,
        link: &Link,
        ack: oneshot::Receiver<Result<u64, String>>,
        deadline: Instant,
        ms: u128,
        what: &str,
    ) -> Result<u64, String> {
        match tokio::time::timeout_at(deadline, ack).await {
            Ok(Ok(result)) => result,
            Ok(Err(_)) => Err(format!(
                "the connection to the MQTT broker at {} stopped before {what} was acknowledged",
                self.address()
            )),
            Err(_) => {
                let st = link.shared.lock();
                Err(match (&st.connected, &st.last_error) {
                    (false, Some(problem)) => problem.clone(),
                    (false, None) => format!(
                        "no connection to the MQTT broker at {} within {ms} ms (check [mqtt] url in hearth.toml and that the broker is running)",
                        self.address()
                    ),
                    (true, _) => format!(
                        "the MQTT broker at {} did not acknowledge {what} within {ms} ms",
                        self.address()
                    ),
                })
            }
        }
    }
}

/// The default client id: `hearth-<hostname>`, else `hearth-<pid>`.
fn default_client_id() -> String {
    let from_file = std::fs::read_to_string("/etc/hostname").ok();
    let host = from_file
        .as_deref()
        .and_then(|t| t.lines().next())
        .map(str::trim)
        .filter(|h| !h.is_empty())
        .map(str::to_string)
        .or_else(|| {
            std::env::var("HOSTNAME")
                .ok()
                .map(|h| h.trim().to_string())
                .filter(|h| !h.is_empty())
        });
    match host {
        Some(h) => format!("hearth-{h}"),
        None => format!("hearth-{}", std::process::id()),
    }
}

/// A state message as the result text: UTF-8 (lossy); the result caps it
/// ([`ExecOutput::done`]).
fn state_text(payload: &[u8]) -> String {
    String::from_utf8_lossy(payload).into_owned()
}

/// One publish of a call.
struct Publication<'a> {
    topic: &'a str,
    payload: Vec<u8>,
    qos: QoS,
    retain: bool,
    state_topic: Option<&'a str>,
    timeout: Duration,
}

/// Run one call: render, publish, and wait as the spec says.
pub async fn run(
    tool: &str,
    spec: &MqttSpec,
    arguments: &Value,
    backend: Option<&MqttBackend>,
) -> ExecOutput {
    let Some(backend) = backend else {
        return ExecOutput::error(format!(
            "{tool}: no MQTT broker is configured: add [mqtt] url = \"mqtt://HOST:1883\" to hearth.toml"
        ));
    };
    let render = |field: &str, source: &str| {
        super::render(source, arguments)
            .map_err(|e| format!("{tool}: cannot build {field} from `{source}`: {e}"))
    };
    let topic = match render_topic("mqtt.topic", &spec.topic, arguments) {
        Ok(t) => t,
        Err(e) => return ExecOutput::error(format!("{tool}: {e}")),
    };
    let state_topic = match &spec.state_topic {
        None => None,
        Some(source) => match render_topic("mqtt.state_topic", source, arguments) {
            Ok(t) => Some(t),
            Err(e) => return ExecOutput::error(format!("{tool}: {e}")),
        },
    };
    if let Some(st) = &state_topic {
        if *st == topic {
            return ExecOutput::error(format!(
                "{tool}: mqtt.state_topic rendered to the topic it publishes to ({topic:?}): give the device's state topic in the manifest"
            ));
        }
    }
    let payload = match &spec.payload {
        MqttPayload::Empty => Vec::new(),
        MqttPayload::Text(source) => match render("mqtt.payload", source) {
            Ok(t) => t.into_bytes(),
            Err(e) => return ExecOutput::error(e),
        },
        MqttPayload::Json(template) => match super::render_json(template, arguments) {
            Ok(v) => v.to_string().into_bytes(),
            Err(e) => return ExecOutput::error(format!("{tool}: cannot build mqtt.payload: {e}")),
        },
    };
    tracing::debug!(%topic, bytes = payload.len(), state_topic = ?state_topic, "mqtt publish");
    let published = backend
        .publish(Publication {
            topic: &topic,
            payload,
            qos: spec.qos,
            retain: spec.retain,
            state_topic: state_topic.as_deref(),
            timeout: spec.timeout,
        })
        .await;
    match published {
        Ok(None) => ExecOutput {
            status: ToolStatus::Ok,
            text: format!("published to {topic}"),
        },
        Ok(Some(state)) => ExecOutput::done(state),
        Err(e) => ExecOutput::error(format!("{tool}: {e}")),
    }
}

// ---- the kept connection -------------------------------------------------------------

/// One client and the task polling its event loop (aborted when dropped).
struct Link {
    client: AsyncClient,
    shared: Arc<Shared>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Link {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The most topics whose last payload a connection keeps ([`MqttBackend::last`]): a house
/// of a few hundred devices, each with a state topic or a few.
const KEPT_TOPICS: usize = 4096;

/// What the calls and the polling task share.
struct Shared {
    state: Mutex<LinkState>,
    /// Every message received, to the calls waiting for a state.
    messages: broadcast::Sender<Arc<Message>>,
}

/// A message received on a subscribed topic.
pub struct Message {
    /// Its topic.
    pub topic: String,
    /// Its payload, as sent.
    pub payload: Vec<u8>,
    /// Whether the broker kept it (sent at subscription).
    pub retain: bool,
    /// Its place among the connection's events (see [`LinkState::seq`]).
    seq: u64,
}

/// What a waiting call asked for.
#[derive(Debug)]
enum Kind {
    Publish(QoS),
    Subscribe(String),
}

/// A call waiting for its request to be acknowledged: `Ok(seq)` of the moment it was
/// written, or the problem.
struct Waiter {
    kind: Kind,
    tx: oneshot::Sender<Result<u64, String>>,
}

impl Waiter {
    fn finish(self, result: Result<u64, String>) {
        // the call may have timed out and gone: nobody to tell
        let _ = self.tx.send(result);
    }
}

/// The connection's bookkeeping.
///
/// Requests reach the event loop in the order they were queued, and it reports each as
/// written (`Outgoing::Publish(pkid)`, `Outgoing::Subscribe(pkid)`) in that order, so the
/// waiters queue in `queued` in the same order (queued under the lock with the request)
/// and are matched front first; from then on by packet id.
#[derive(Default)]
struct LinkState {
    /// A CONNACK was the last thing heard (no error since).
    connected: bool,
    /// Why the last connection attempt or connection failed (a full sentence).
    last_error: Option<String>,
    /// Waiters whose requests are not yet written, oldest first.
    queued: VecDeque<Waiter>,
    /// QoS 1 and 2 publishes written, by packet id: the waiter and its write's `seq`.
    acks: HashMap<u16, (Waiter, u64)>,
    /// Subscriptions written, by packet id.
    subacks: HashMap<u16, Waiter>,
    /// A publish held back by a packet id collision (sent when that id is acknowledged).
    collided: Option<(u16, Waiter)>,
    /// State topics subscribed to on this connection.
    subscribed: HashSet<String>,
    /// The last payload of each topic heard (at most [`KEPT_TOPICS`]): a house thing's state
    /// is read from it.
    last: HashMap<String, Vec<u8>>,
    /// Counts publishes written and received, so a state wait takes only messages that
    /// arrived after its publish was written.
    seq: u64,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, LinkState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Book-keep one event of the event loop.
    fn handle(&self, event: Event) {
        let mut st = self.lock();
        match event {
            Event::Incoming(Packet::ConnAck(_)) => {
                st.connected = true;
                st.last_error = None;
                // a clean session: subscriptions start over
                st.subscribed.clear();
            }
            Event::Incoming(Packet::Publish(p)) => {
                st.seq += 1;
                if st.last.len() < KEPT_TOPICS || st.last.contains_key(&p.topic) {
                    st.last.insert(p.topic.clone(), p.payload.to_vec());
                }
                let message = Arc::new(Message {
                    topic: p.topic,
                    payload: p.payload.to_vec(),
                    retain: p.retain,
                    seq: st.seq,
                });
                // no receiver is fine: nobody waits for a state right now
                let _ = self.messages.send(message);
            }
            Event::Incoming(Packet::PubAck(a)) => st.acknowledged(a.pkid, QoS::AtLeastOnce),
            Event::Incoming(Packet::PubComp(c)) => st.acknowledged(c.pkid, QoS::ExactlyOnce),
            Event::Incoming(Packet::SubAck(s)) => {
                if let Some(w) = st.subacks.remove(&s.pkid) {
                    let granted = s
                        .return_codes
                        .iter()
                        .all(|c| matches!(c, SubscribeReasonCode::Success(_)));
                    match (granted, &w.kind) {
                        (true, Kind::Subscribe(topic)) => {
                            st.subscribed.insert(topic.clone());
                            w.finish(Ok(0));
                        }
                        (false, Kind::Subscribe(topic)) => {
                            let problem = format!(
                                "the MQTT broker refused the subscription to {topic} (check the broker's ACL for hearth's [mqtt] username)"
                            );
                            w.finish(Err(problem));
                        }
                        (_, Kind::Publish(_)) => w.finish(Err(mismatch())),
                    }
                }
            }
            Event::Outgoing(Outgoing::Publish(pkid)) => {
                st.seq += 1;
                let seq = st.seq;
                let waiter = match st.collided.take() {
                    Some((id, w)) if id == pkid => Some(w),
                    other => {
                        st.collided = other;
                        st.queued.pop_front()
                    }
                };
                match waiter {
                    Some(
                        w @ Waiter {
                            kind: Kind::Publish(QoS::AtMostOnce),
                            ..
                        },
                    ) => w.finish(Ok(seq)),
                    Some(
                        w @ Waiter {
                            kind: Kind::Publish(_),
                            ..
                        },
                    ) => {
                        st.acks.retain(|_, (w, _)| !w.tx.is_closed());
                        st.acks.insert(pkid, (w, seq));
                    }
                    Some(w) => w.finish(Err(mismatch())),
                    None => tracing::debug!(pkid, "an MQTT publish nobody waits for"),
                }
            }
            Event::Outgoing(Outgoing::Subscribe(pkid)) => match st.queued.pop_front() {
                Some(
                    w @ Waiter {
                        kind: Kind::Subscribe(_),
                        ..
                    },
                ) => {
                    st.subacks.retain(|_, w| !w.tx.is_closed());
                    st.subacks.insert(pkid, w);
                }
                Some(w) => w.finish(Err(mismatch())),
                None => tracing::debug!(pkid, "an MQTT subscription nobody waits for"),
            },
            Event::Outgoing(Outgoing::AwaitAck(pkid)) => {
                // the broker still holds a message with this packet id: the publish goes
                // out when that one is acknowledged
                if let Some(w) = st.queued.pop_front() {
                    if let Some((_, earlier)) = st.collided.replace((pkid, w)) {
                        earlier.finish(Err(mismatch()));
                    }
                }
            }
            _ => {}
        }
    }

    /// The connection failed (`problem` says why): requests written but not acknowledged
    /// and `dropped` requests never written are lost; their calls get the problem.
    fn connection_lost(&self, problem: &str, dropped: usize) {
        let mut st = self.lock();
        st.connected = false;
        st.last_error = Some(problem.to_string());
        st.subscribed.clear();
        let mut lost: Vec<Waiter> = st.acks.drain().map(|(_, (w, _))| w).collect();
        lost.extend(st.subacks.drain().map(|(_, w)| w));
        lost.extend(st.collided.take().map(|(_, w)| w));
        for _ in 0..dropped {
            match st.queued.pop_front() {
                Some(w) => lost.push(w),
                None => break,
            }
        }
        drop(st);
        for w in lost {
            w.finish(Err(problem.to_string()));
        }
    }
}

impl LinkState {
    /// The broker acknowledged the publish with this packet id (`qos` tells which ack).
    fn acknowledged(&mut self, pkid: u16, qos: QoS) {
        let is_ours = matches!(self.acks.get(&pkid), Some((Waiter { kind: Kind::Publish(q), .. }, _)) if *q == qos);
        if is_ours {
            if let Some((w, seq)) = self.acks.remove(&pkid) {
                w.finish(Ok(seq));
            }
        }
    }
}

/// A bookkeeping mismatch (a bug in hearth, never expected).
fn mismatch() -> String {
    tracing::error!("MQTT acknowledgements got out of step with the requests");
    "hearth lost track of this MQTT request; try again".to_string()
}

impl Link {
    /// Queue a request with its waiter, in one step under the lock (see [`LinkState`]).
    fn enqueue(
        &self,
        kind: Kind,
        send: impl FnOnce(&AsyncClient) -> Result<(), ClientError>,
    ) -> Result<oneshot::Receiver<Result<u64, String>>, String> {
        let (tx, rx) = oneshot::channel();
        let mut st = self.shared.lock();
        st.queued.push_back(Waiter { kind, tx });
        if let Err(e) = send(&self.client) {
            st.queued.pop_back();
            return Err(match e {
                ClientError::Request(_) | ClientError::TryRequest(_) if self.task.is_finished() => {
                    "the MQTT connection task has stopped; try again".to_string()
                }
                _ => format!(
                    "{} MQTT requests are already waiting for the broker; try again shortly",
                    REQUEST_CAPACITY
                ),
            });
        }
        Ok(rx)
    }
}

/// How long closing waits for the queued requests and DISCONNECT to be written.
const CLOSE_WAIT: Duration = Duration::from_secs(2);

/// Poll the event loop for as long as the connection is kept (until DISCONNECT is written).
async fn drive(mut eventloop: EventLoop, shared: Arc<Shared>, addr: String, tls: bool) {
    let mut outage = false;
    loop {
        match eventloop.poll().await {
            Ok(Event::Outgoing(Outgoing::Disconnect)) => {
                tracing::info!(broker = %addr, "MQTT connection closed");
                return;
            }
            Ok(event) => {
                if matches!(event, Event::Incoming(Packet::ConnAck(_))) {
                    if outage {
                        tracing::info!(broker = %addr, "connected to the MQTT broker again");
                    } else {
                        tracing::info!(broker = %addr, "connected to the MQTT broker");
                    }
                    outage = false;
                }
                shared.handle(event);
            }
            Err(e) => {
                let was_connected = shared.lock().connected;
                let problem = describe(&e, &addr, was_connected, tls);
                // events the failed poll left buffered come first (written before the failure)
                let buffered: Vec<Event> = eventloop.state.events.drain(..).collect();
                for event in buffered {
                    shared.handle(event);
                }
                // take every request not yet written, so none goes out after a reconnect
                // (a clean session would drop the in-flight ones anyway)
                eventloop.clean();
                eventloop.state.collision = None;
                let dropped = eventloop
                    .pending
                    .drain(..)
                    .filter(|r| match r {
                        Request::Publish(p) => p.pkid == 0,
                        Request::Subscribe(s) => s.pkid == 0,
                        _ => false,
                    })
                    .count();
                shared.connection_lost(&problem, dropped);
                if outage {
                    tracing::debug!(broker = %addr, error = %e, "the MQTT broker is still unreachable");
                } else {
                    tracing::warn!(broker = %addr, "{problem}; retrying every second");
                    outage = true;
                }
                tokio::time::sleep(RETRY).await;
            }
        }
    }
}

/// A connection error as a sentence that names the broker, the problem and the fix.
fn describe(e: &ConnectionError, addr: &str, was_connected: bool, tls: bool) -> String {
    if tls && !was_connected {
        let host = addr.rsplit_once(':').map_or(addr, |(h, _)| h);
        if let Some(tls) = tls::describe(e, addr, host) {
            return tls;
        }
    }
    let credentials = "check [mqtt] username and password_file in hearth.toml";
    match e {
        ConnectionError::ConnectionRefused(code) => {
            let (reason, fix) = match code {
                ConnectReturnCode::NotAuthorized => ("not authorised", credentials),
                ConnectReturnCode::BadUserNamePassword => {
                    ("bad user name or password", credentials)
                }
                ConnectReturnCode::BadClientId => (
                    "the client id was rejected",
                    "set another [mqtt] client_id in hearth.toml",
                ),
                ConnectReturnCode::RefusedProtocolVersion => (
                    "it does not speak MQTT 3.1.1",
                    "enable MQTT 3.1.1 on the broker",
                ),
                ConnectReturnCode::ServiceUnavailable | ConnectReturnCode::Success => {
                    ("the service is unavailable", "check the broker's log")
                }
            };
            format!("the MQTT broker at {addr} refused the connection: {reason} ({fix})")
        }
        ConnectionError::Io(io) if !was_connected => {
            let what = match io.kind() {
                std::io::ErrorKind::ConnectionRefused => "connection refused".to_string(),
                _ => io.to_string(),
            };
            format!("cannot reach the MQTT broker at {addr}: {what} (is it running? check [mqtt] url in hearth.toml)")
        }
        ConnectionError::NetworkTimeout if !was_connected => format!(
            "cannot reach the MQTT broker at {addr}: no answer to the connection (is it running? check [mqtt] url in hearth.toml)"
        ),
        other if was_connected => {
            format!("the connection to the MQTT broker at {addr} was lost: {other}")
        }
        other => format!(
            "cannot connect to the MQTT broker at {addr}: {other} (check [mqtt] url in hearth.toml)"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn check(table: &str) -> Result<MqttSpec, ToolsError> {
        let t: MqttTable = toml::from_str(table).unwrap();
        let props = vec!["room".to_string(), "on".to_string()];
        t.check(&Check {
            path: Path::new("/etc/hearth/tools/x.toml"),
            tool: "t",
            properties: &props,
        })
    }

    #[test]
    fn table_defaults_and_checks() {
        let s = check("topic = \"z/{{ room }}/set\"\npayload = { state = \"{{ on }}\" }").unwrap();
        assert_eq!(s.qos, QoS::AtLeastOnce);
        assert!(!s.retain);
        assert_eq!(s.timeout, Duration::from_millis(DEFAULT_TIMEOUT_MS));
        assert!(matches!(s.payload, MqttPayload::Json(_)));
        let s = check("topic = \"t\"\npayload = \"ON\"\nqos = 0").unwrap();
        assert_eq!(s.payload, MqttPayload::Text("ON".into()));
        assert_eq!(s.qos, QoS::AtMostOnce);
        assert_eq!(check("topic = \"t\"").unwrap().payload, MqttPayload::Empty);

        let e = check("topic = \"t\"\nqos = 3").unwrap_err().to_string();
        assert!(e.contains("mqtt.qos") && e.contains("0, 1 or 2"), "{e}");
        let e = check("topic = \"z/+/set\"").unwrap_err().to_string();
        assert!(e.contains("mqtt.topic") && e.contains("wildcard"), "{e}");
        let e = check("topic = \"t\"\nstate_topic = \"z/#\"")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("mqtt.state_topic") && e.contains("wildcard"),
            "{e}"
        );
        let e = check("topic = \"t\"\nstate_topic = \"t\"")
            .unwrap_err()
            .to_string();
        assert!(e.contains("same as mqtt.topic"), "{e}");
        let e = check("topic = \" \"").unwrap_err().to_string();
        assert!(e.contains("empty"), "{e}");
        let e = check("topic = \"t\"\ntimeout_ms = 0")
            .unwrap_err()
            .to_string();
        assert!(e.contains("mqtt.timeout_ms"), "{e}");
        let e = check("topic = \"t/{{ rooom }}\"").unwrap_err().to_string();
        assert!(e.contains("`rooom`"), "{e}");
        let e = check("topic = \"t\"\npayload = { a = [\"{{ nope }}\"] }")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("mqtt.payload.a[0]") && e.contains("`nope`"),
            "{e}"
        );
    }

    #[test]
    fn a_topic_value_stays_in_its_level() {
        let t = "zigbee2mqtt/{{ room }} light/set";
        let topic =
            |room: &str| render_topic("mqtt.topic", t, &serde_json::json!({ "room": room }));
        assert_eq!(
            topic("living room").unwrap(),
            "zigbee2mqtt/living room light/set"
        );
        for (room, fragment) in [
            ("kitchen/../lock", "`/`"),
            ("front door/set", "`/`"),
            ("+", "wildcard"),
            ("a#", "wildcard"),
            ("$SYS", "`$`"),
            ("a\0", "NUL"),
        ] {
            let e = topic(room).unwrap_err();
            assert!(
                e.starts_with(&format!(
                    "not sent: mqtt.topic rendered to {:?}",
                    format!("zigbee2mqtt/{room} light/set")
                )),
                "{e}"
            );
            assert!(e.contains(fragment), "{fragment:?} not in {e}");
        }
        // a value that is the whole topic may not reach the broker's own topics either
        let e = render_topic(
            "mqtt.state_topic",
            "{{ t }}",
            &serde_json::json!({"t": "$SYS"}),
        )
        .unwrap_err();
        assert!(e.contains("mqtt.state_topic") && e.contains("`$`"), "{e}");
        // the manifest's own levels are its own
        assert_eq!(
            render_topic(
                "mqtt.topic",
                "cmnd/{{ plug }}/POWER",
                &serde_json::json!({"plug": "kettle"})
            )
            .unwrap(),
            "cmnd/kettle/POWER"
        );
        let e = render_topic("mqtt.topic", "{{ nope }}/x", &serde_json::json!({})).unwrap_err();
        assert!(
            e.starts_with("cannot build mqtt.topic from `{{ nope }}/x`"),
            "{e}"
        );
    }

    #[test]
    fn rendered_topics_are_checked() {
        assert!(check_topic("mqtt.topic", "a/b").is_ok());
        assert!(check_topic("mqtt.topic", "").unwrap_err().contains("empty"));
        assert!(check_topic("mqtt.topic", "a/+/b")
            .unwrap_err()
            .contains("wildcard"));
        assert!(check_topic("mqtt.topic", "a/#")
            .unwrap_err()
            .contains("wildcard"));
    }

    #[test]
    fn a_state_is_capped_like_every_result() {
        let o = ExecOutput::done(state_text(b"  ON\n"));
        assert_eq!(o.text, "ON");
        let big = vec![b'x'; super::super::output::MAX_RESULT_BYTES + 10];
        let o = ExecOutput::done(state_text(&big));
        assert!(
            o.text.ends_with(&format!(
                "[output cut: {} bytes, only the first {} kept]",
                big.len(),
                super::super::output::MAX_RESULT_BYTES
            )),
            "{}",
            o.text
        );
    }

    #[test]
    fn backend_settings() {
        let section = |password_file: Option<PathBuf>, username: Option<&str>| MqttSection {
            url: "mqtt://broker.lan".into(),
            client_id: None,
            username: username.map(str::to_string),
            password_file,
            keep_alive_s: None,
            ca_file: None,
            client_cert_file: None,
            client_key_file: None,
        };
        let b = MqttBackend::new(&section(None, None)).unwrap();
        assert_eq!(b.address(), "broker.lan:1883");
        assert!(b.client_id.starts_with("hearth-"), "{}", b.client_id);
        let missing = PathBuf::from("/nonexistent/hearth-mqtt-password");
        let e = MqttBackend::new(&section(Some(missing), Some("u")))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("/nonexistent/hearth-mqtt-password") && e.contains("password_file"),
            "{e}"
        );
        let dir = std::env::temp_dir().join(format!("hearth-mqtt-unit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("pw");
        std::fs::write(&file, "  secret  \nignored\n").unwrap();
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        }
        let b = MqttBackend::new(&section(Some(file.clone()), Some("u"))).unwrap();
        assert_eq!(b.password.as_deref(), Some("secret"));
        assert!(!format!("{b:?}").contains("secret"));
        let e = MqttBackend::new(&section(Some(file.clone()), None))
            .unwrap_err()
            .to_string();
        assert!(e.contains("username"), "{e}");
        std::fs::write(&file, "\n").unwrap();
        let e = MqttBackend::new(&section(Some(file), Some("u")))
            .unwrap_err()
            .to_string();
        assert!(e.contains("is empty"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
