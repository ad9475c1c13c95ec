//! Home Assistant's things, read over its WebSocket API and followed.
//!
//! One read asks, on one authenticated connection, for `get_states`,
//! `homeassistant/expose_entity/list`, `config/entity_registry/get_entries` (the exposed
//! entities' entries: names, aliases, areas), `config/device_registry/list` and
//! `config/area_registry/list`; `hearth_house::homeassistant::things` makes the things. The
//! watch then subscribes to the registries' change events (an alias added, an entity moved,
//! an area renamed) and reads again half a second after the last one, and every
//! [`HouseWatch::refresh`] anyway (exposing an entity Home Assistant keeps no registry entry
//! for fires no event). A connection lost, refused or timed out is retried with backoff (1 s
//! doubling to a minute); the tools made from the last good read stay meanwhile, and a call
//! says the house cannot be reached.
//!
//! The token is sent only in the `auth` message, never logged.

use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use hearth_house::homeassistant::{things, Answers, Found};
use serde_json::{json, Value};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::WebSocketStream;

use super::Hub;
use crate::config::HomeAssistantSection;

/// Time for the connection, the authentication and each command's answer.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(20);
/// How long after a registry event the registries are read again (more events in between
/// wait with it).
const SETTLE: Duration = Duration::from_millis(500);
/// The longest wait between two attempts to reach Home Assistant.
const BACKOFF_MAX: Duration = Duration::from_secs(60);
/// The registry events that change what the house is.
const EVENTS: [&str; 3] = [
    "entity_registry_updated",
    "area_registry_updated",
    "device_registry_updated",
];

/// Where the house is read from, and how often it is read again with no event.
#[derive(Clone)]
pub struct HouseWatch {
    /// The base URL, as `[homeassistant] url` gives it.
    pub url: String,
    token: String,
    /// A read with no event to cause it, this often.
    pub refresh: Duration,
}

impl std::fmt::Debug for HouseWatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HouseWatch")
            .field("url", &self.url)
            .field("refresh", &self.refresh)
            .finish_non_exhaustive()
    }
}

/// Why the house could not be read; each names the fix.
#[derive(Debug, thiserror::Error)]
pub enum HouseError {
    #[error("[homeassistant] url {0:?} is not http(s)://HOST[:PORT]: fix it in hearth.toml")]
    Url(String),
    #[error("cannot reach Home Assistant at {url}: {why} (is it running? check [homeassistant] url in hearth.toml)")]
    Unreachable { url: String, why: String },
    #[error("Home Assistant at {0} rejected the token: create a long-lived access token in your Home Assistant profile (Security tab) and put it in [homeassistant] token_file")]
    Token(String),
    #[error("Home Assistant at {url} answered {command} with an error: {message}")]
    Refused {
        url: String,
        command: String,
        message: String,
    },
    #[error("Home Assistant at {url} sent what its WebSocket API does not: {what}")]
    Protocol { url: String, what: String },
    #[error("Home Assistant at {url}: {source}")]
    Answers {
        url: String,
        #[source]
        source: hearth_house::HouseError,
    },
    #[error("[homeassistant] token_file {0}: {1}")]
    TokenFile(String, String),
}

impl HouseWatch {
    /// From `[homeassistant]`: `None` when `discover = false`.
    pub fn from_config(section: &HomeAssistantSection) -> Result<Option<HouseWatch>, HouseError> {
        if !section.discover {
            return Ok(None);
        }
        let fix = "create a long-lived access token in your Home Assistant profile (Security tab) and save it in this file, readable by hearth's user";
        let token = crate::secret::read_word(&section.token_file, fix).map_err(|problem| {
            HouseError::TokenFile(section.token_file.display().to_string(), problem)
        })?;
        Ok(Some(HouseWatch {
            url: section.url.trim().trim_end_matches('/').to_string(),
            token,
            refresh: Duration::from_secs(section.refresh_s.max(1)),
        }))
    }
}

/// A stream hearth reads and writes: TCP, or TLS over it.
trait Io: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Io for T {}

type Socket = WebSocketStream<Box<dyn Io>>;

/// An authenticated connection, and the id of its next command.
struct Connection {
    socket: Socket,
    next_id: u64,
    url: String,
    /// A registry event came while a command's answer was awaited.
    changed: bool,
}

/// The WebSocket address of a base URL, the host and port to connect to, and whether TLS.
fn endpoint(url: &str) -> Result<(String, String, u16, bool), HouseError> {
    let bad = || HouseError::Url(url.to_string());
    let (tls, rest) = if let Some(r) = url.strip_prefix("https://") {
        (true, r)
    } else if let Some(r) = url.strip_prefix("http://") {
        (false, r)
    } else {
        return Err(bad());
    };
    let authority = rest.split('/').next().unwrap_or_default();
    if authority.is_empty() || authority.contains('@') {
        return Err(bad());
    }
    let default_port = if tls { 443 } else { 80 };
    let port_of =
        |p: Option<&str>| p.map_or(Ok(default_port), |p| p.parse::<u16>().map_err(|_| bad()));
    let (host, port) = match authority.strip_prefix('[') {
        // an IPv6 address: [::1]:8123
        Some(inside) => {
            let (host, after) = inside.split_once(']').ok_or_else(bad)?;
            let port = match after {
                "" => None,
                p => Some(p.strip_prefix(':').ok_or_else(bad)?),
            };
            (host.to_string(), port_of(port)?)
        }
        None => match authority.split_once(':') {
            Some((h, p)) => (h.to_string(), port_of(Some(p))?),
            None => (authority.to_string(), default_port),
        },
    };
    let scheme = if tls { "wss" } else { "ws" };
    Ok((
        format!("{scheme}://{authority}/api/websocket"),
        host,
        port,
        tls,
    ))
}

/// The stream to Home Assistant, TLS-wrapped for https (the system's CA certificates).
async fn stream(url: &str, host: &str, port: u16, tls: bool) -> Result<Box<dyn Io>, HouseError> {
    let unreachable = |why: String| HouseError::Unreachable {
        url: url.to_string(),
        why,
    };
    let tcp = tokio::net::TcpStream::connect((host, port))
        .await
        .map_err(|e| unreachable(e.to_string()))?;
    if !tls {
        return Ok(Box::new(tcp));
    }
    let mut roots = rustls::RootCertStore::empty();
    for cert in rustls_native_certs::load_native_certs().certs {
        let _ = roots.add(cert);
    }
    let config = rustls::ClientConfig::builder_with_provider(std::sync::Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|e| unreachable(e.to_string()))?
    .with_root_certificates(roots)
    .with_no_client_auth();
    let name = rustls::pki_types::ServerName::try_from(host.to_string()).map_err(|e| {
        unreachable(format!(
            "{host} is not a name a certificate can carry ({e})"
        ))
    })?;
    let tls = tokio_rustls::TlsConnector::from(std::sync::Arc::new(config))
        .connect(name, tcp)
        .await
        .map_err(|e| unreachable(format!("TLS: {e}")))?;
    Ok(Box::new(tls))
}

impl Connection {
    /// Connect and authenticate.
    async fn open(watch: &HouseWatch) -> Result<Connection, HouseError> {
        let (ws_url, host, port, tls) = endpoint(&watch.url)?;
        let url = watch.url.clone();
        let unreachable = |why: String| HouseError::Unreachable {
            url: url.clone(),
            why,
        };
        let io = tokio::time::timeout(ANSWER_TIMEOUT, stream(&url, &host, port, tls))
            .await
            .map_err(|_| unreachable(format!("no connection within {ANSWER_TIMEOUT:?}")))??;
        let (socket, _) = tokio::time::timeout(
            ANSWER_TIMEOUT,
            tokio_tungstenite::client_async(ws_url.as_str(), io),
        )
        .await
        .map_err(|_| unreachable(format!("no WebSocket answer within {ANSWER_TIMEOUT:?}")))?
        .map_err(|e| unreachable(format!("WebSocket: {e}")))?;
        let mut conn = Connection {
            socket,
            next_id: 1,
            url,
            changed: false,
        };
        let hello = conn.receive().await?;
        if hello.get("type").and_then(Value::as_str) != Some("auth_required") {
            return Err(conn.protocol(format!("{hello} first, not auth_required")));
        }
        conn.send(json!({"type": "auth", "access_token": watch.token}))
            .await?;
        let answer = conn.receive().await?;
        match answer.get("type").and_then(Value::as_str) {
            Some("auth_ok") => Ok(conn),
            Some("auth_invalid") => Err(HouseError::Token(conn.url.clone())),
            _ => Err(conn.protocol(format!("{answer} to the authentication"))),
        }
    }

    fn protocol(&self, what: String) -> HouseError {
        HouseError::Protocol {
            url: self.url.clone(),
            what,
        }
    }

    async fn send(&mut self, message: Value) -> Result<(), HouseError> {
        let url = self.url.clone();
        self.socket
            .send(Message::text(message.to_string()))
            .await
            .map_err(|e| HouseError::Unreachable {
                url,
                why: e.to_string(),
            })
    }

    /// The next JSON message (pings are answered by the library; a close is an error).
    async fn receive(&mut self) -> Result<Value, HouseError> {
        let url = self.url.clone();
        let gone = |why: String| HouseError::Unreachable {
            url: url.clone(),
            why,
        };
        loop {
            let next = tokio::time::timeout(ANSWER_TIMEOUT, self.socket.next())
                .await
                .map_err(|_| gone(format!("no answer within {ANSWER_TIMEOUT:?}")))?;
            match next {
                None => return Err(gone("the connection closed".into())),
                Some(Err(e)) => return Err(gone(e.to_string())),
                Some(Ok(Message::Text(text))) => {
                    return serde_json::from_str(text.as_str())
                        .map_err(|e| self.protocol(format!("a message that is not JSON ({e})")))
                }
                Some(Ok(Message::Close(_))) => return Err(gone("it closed the connection".into())),
                Some(Ok(_)) => continue,
            }
        }
    }

    /// One command's `result`; registry events that come meanwhile mark the house changed.
    async fn command(&mut self, mut message: Value) -> Result<Value, HouseError> {
        let id = self.next_id;
        self.next_id += 1;
        let name = message
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        if let Some(m) = message.as_object_mut() {
            m.insert("id".into(), json!(id));
        }
        self.send(message).await?;
        loop {
            let answer = self.receive().await?;
            if answer.get("type").and_then(Value::as_str) == Some("event") {
                self.changed = true;
                continue;
            }
            if answer.get("id").and_then(Value::as_u64) != Some(id) {
                continue;
            }
            if answer.get("success").and_then(Value::as_bool) == Some(true) {
                return Ok(answer.get("result").cloned().unwrap_or(Value::Null));
            }
            let message = answer
                .pointer("/error/message")
                .and_then(Value::as_str)
                .unwrap_or("no message")
                .to_string();
            return Err(HouseError::Refused {
                url: self.url.clone(),
                command: name,
                message,
            });
        }
    }

    /// Read the registries and make the things.
    async fn read(&mut self) -> Result<Found, HouseError> {
        let states = self.command(json!({"type": "get_states"})).await?;
        let exposed = self
            .command(json!({"type": "homeassistant/expose_entity/list"}))
            .await?;
        let ids: Vec<&str> = exposed
            .get("exposed_entities")
            .and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .filter(|(_, v)| v.get("conversation").and_then(Value::as_bool) == Some(true))
                    .map(|(k, _)| k.as_str())
                    .collect()
            })
            .unwrap_or_default();
        let entities = self
            .command(json!({"type": "config/entity_registry/get_entries", "entity_ids": ids}))
            .await?;
        let devices = self
            .command(json!({"type": "config/device_registry/list"}))
            .await?;
        let areas = self
            .command(json!({"type": "config/area_registry/list"}))
            .await?;
        let answers = Answers {
            states,
            entities,
            devices,
            areas,
            exposed,
        };
        things(&answers).map_err(|source| HouseError::Answers {
            url: self.url.clone(),
            source,
        })
    }
}

/// One read of the house: connect, authenticate, read, close (`hearth devices`, `hearth
/// doctor`, and a one-shot `hearth ask`).
pub async fn read_once(watch: &HouseWatch) -> Result<Found, HouseError> {
    let mut conn = Connection::open(watch).await?;
    let found = conn.read().await;
    let _ = conn.socket.close(None).await;
    found
}

/// Log what a read found, and what it left out (never silently).
fn report(found: &Found) {
    for left in &found.left {
        tracing::info!(entity = %left.entity_id, why = %left.reason, "an exposed Home Assistant entity has no tool");
    }
    tracing::info!(
        things = found.things.len(),
        left_out = found.left.len(),
        areas = found.areas.len(),
        "read the house from Home Assistant"
    );
}

/// Offer what `found` holds through the hub; how many tools there are then.
async fn offer(hub: &Hub, found: &Found) -> usize {
    hub.found(hearth_house::Source::HomeAssistant, found.things.clone())
        .await
}

/// Read the house once and offer its tools (a one-shot command's start): errors are the
/// caller's to report.
pub async fn offer_once(watch: &HouseWatch, hub: &Hub) -> Result<usize, HouseError> {
    let found = read_once(watch).await?;
    report(&found);
    Ok(offer(hub, &found).await)
}

/// Follow the house for as long as the task runs: read, offer the tools, and read again on
/// every registry change and every `refresh`; reconnect with backoff when the connection
/// goes. Ends only when the tools actor is gone.
pub async fn watch_home_assistant(watch: HouseWatch, hub: Hub) {
    let mut backoff = Duration::from_secs(1);
    let mut failures = 0u32;
    loop {
        match follow(&watch, &hub, &mut backoff).await {
            Ok(()) => return,
            Err(e) => {
                failures += 1;
                if failures == 1 {
                    tracing::warn!(error = %e, retry_s = backoff.as_secs(), "the house cannot be read from Home Assistant: its tools from the last read stay; trying again");
                } else {
                    tracing::debug!(error = %e, failures, retry_s = backoff.as_secs(), "Home Assistant still cannot be reached");
                }
            }
        }
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(BACKOFF_MAX);
    }
}

/// One connection's life: `Ok` only when the tools actor is gone.
async fn follow(watch: &HouseWatch, hub: &Hub, backoff: &mut Duration) -> Result<(), HouseError> {
    let mut conn = Connection::open(watch).await?;
    for event in EVENTS {
        conn.command(json!({"type": "subscribe_events", "event_type": event}))
            .await?;
    }
    let mut last: Option<Found> = None;
    loop {
        conn.changed = false;
        let found = conn.read().await?;
        *backoff = Duration::from_secs(1);
        let same = last.as_ref().is_some_and(|l| {
            l.things == found.things && l.areas == found.areas && l.left == found.left
        });
        if !same {
            report(&found);
            offer(hub, &found).await;
            last = Some(found);
        }
        if !hub.open() {
            return Ok(());
        }
        // wait for a registry event (then let more come) or the refresh
        if !conn.changed {
            let wait = tokio::time::sleep(watch.refresh);
            tokio::pin!(wait);
            loop {
                tokio::select! {
                    _ = &mut wait => break,
                    message = conn.socket.next() => match message {
                        Some(Ok(Message::Text(text))) => {
                            let event = serde_json::from_str::<Value>(text.as_str()).ok();
                            if event.is_some_and(|e| e.get("type").and_then(Value::as_str) == Some("event")) {
                                break;
                            }
                        }
                        Some(Ok(Message::Close(_))) | None => {
                            return Err(HouseError::Unreachable { url: watch.url.clone(), why: "the connection closed".into() })
                        }
                        Some(Err(e)) => {
                            return Err(HouseError::Unreachable { url: watch.url.clone(), why: e.to_string() })
                        }
                        Some(Ok(_)) => {}
                    },
                }
            }
        }
        // more events in the next moment are part of the same change
        loop {
            match tokio::time::timeout(SETTLE, conn.socket.next()).await {
                Err(_) => break,
                Ok(Some(Ok(_))) => continue,
                Ok(Some(Err(e))) => {
                    return Err(HouseError::Unreachable {
                        url: watch.url.clone(),
                        why: e.to_string(),
                    })
                }
                Ok(None) => {
                    return Err(HouseError::Unreachable {
                        url: watch.url.clone(),
                        why: "the connection closed".into(),
                    })
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_websocket_address_follows_the_base_url() {
        assert_eq!(
            endpoint("http://homeassistant.local:8123").unwrap(),
            (
                "ws://homeassistant.local:8123/api/websocket".into(),
                "homeassistant.local".into(),
                8123,
                false
            )
        );
        assert_eq!(
            endpoint("https://ha.example.org").unwrap(),
            (
                "wss://ha.example.org/api/websocket".into(),
                "ha.example.org".into(),
                443,
                true
            )
        );
        assert!(endpoint("ftp://x").is_err());
        assert!(endpoint("http://user:pw@x:1").is_err());
        assert!(endpoint("http://x:notaport").is_err());
        assert_eq!(endpoint("http://[::1]:8123").unwrap().1, "::1");
        assert_eq!(endpoint("http://[::1]").unwrap().2, 80);
    }
}
