//! The `homeassistant` executor: call a Home Assistant service, or read one entity's state,
//! over Home Assistant's REST API (`[homeassistant]` in hearth.toml gives the URL and the
//! file holding a long-lived access token).
//!
//! ```toml
//! [tool.homeassistant]
//! service = "light.turn_{{ 'on' if on else 'off' }}"    # DOMAIN.SERVICE, a template
//! data = { entity_id = "light.{{ room | replace(' ', '_') }}", brightness_pct = "{{ brightness }}" }
//! timeout_ms = 5000                                      # default 5000
//! ```
//! or, to read a state (exactly one of `service` and `state`):
//! ```toml
//! [tool.homeassistant]
//! state = "sensor.{{ room | replace(' ', '_') }}_temperature"   # an entity id, a template
//! ```
//!
//! A service call is `POST /api/services/DOMAIN/SERVICE` with `data` as the JSON body (`{}`
//! without it); `data` is a JSON template, so `"{{ brightness }}"` sends a number. A state
//! read is `GET /api/states/ENTITY_ID`. Both send `Authorization: Bearer TOKEN` and
//! `Content-Type: application/json`.
//!
//! What a call acts on is checked before anything is sent (`values::check` at
//! `Place::Ha`); a value that does not fit is an error naming the field, the value and the
//! fix, and nothing is sent:
//! - the rendered service must be `domain.service`, and the state read's entity
//!   `domain.object_id` (lowercase letters, digits, `_`);
//! - the targets of service data, `entity_id`, `device_id`, `area_id`, `floor_id` and
//!   `label_id`, at the top of `data` or in its `target` table, each hold an id or a list of
//!   ids: entity ids `domain.object_id`, the others `[a-z0-9_]+`; never `all` or `none`,
//!   which Home Assistant reads as every entity, or none. This holds for the manifest's own
//!   ids too, when it loads;
//! - only the manifest chooses which targets there are: `target` must be a table of those
//!   keys (not a template, which could bring any), and `data` is a table whose keys are
//!   never templates.
//!
//! Result of a service call: `light.turn_on done`, then one `entity: state` line per state
//! Home Assistant reports changed. Result of a state read: the state with its unit and the
//! entity's friendly name (`21.5 °C (Kitchen temperature)`). Errors name the tool, Home
//! Assistant's URL and the fix: a rejected token (401), an unknown service or entity (404),
//! Home Assistant's own message for a bad request (400), no answer or no connection.

use std::path::PathBuf;
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

use super::output::values::{self, HaId, Place};
use super::Check;
use super::{ExecOutput, ToolsError};
use crate::config::HomeAssistantSection;

/// `timeout_ms` when a manifest does not give one.
pub(crate) const DEFAULT_TIMEOUT_MS: u64 = 5_000;
/// At most this many changed states are listed in a service call's result.
const MAX_STATES_LISTED: usize = 10;
/// The most of a response body read.
const MAX_BODY_BYTES: u64 = 1024 * 1024;

/// Why the `[homeassistant]` configuration cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum HaError {
    /// The token file cannot be read or is empty.
    #[error("[homeassistant] token_file {0}: {1}")]
    Token(String, String),
}

/// `[tool.homeassistant]` as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct HaTable {
    /// `domain.service` template (a service call).
    #[serde(default)]
    pub service: Option<String>,
    /// The service data: a JSON template (a table).
    #[serde(default)]
    pub data: Option<Value>,
    /// An entity id template (a state read).
    #[serde(default)]
    pub state: Option<String>,
    /// Time for the request.
    #[serde(default = "default_timeout_ms")]
    pub timeout_ms: u64,
}

fn default_timeout_ms() -> u64 {
    DEFAULT_TIMEOUT_MS
}

/// What a call does.
#[derive(Debug, Clone, PartialEq)]
pub enum HaAction {
    /// Call a service: its `domain.service` template and its data template.
    Service {
        service: String,
        data: Option<Value>,
    },
    /// Read an entity's state: its entity id template.
    State { entity_id: String },
}

/// A checked `[tool.homeassistant]`.
#[derive(Debug, Clone, PartialEq)]
pub struct HaSpec {
    /// The service call or state read.
    pub action: HaAction,
    /// Time for the request.
    pub timeout: Duration,
}

impl HaTable {
    /// Check the table: exactly one of service and state, templates, the id shapes.
    pub fn check(self, c: &Check) -> Result<HaSpec, ToolsError> {
        let action = match (self.service, self.state) {
            (Some(_), Some(_)) => {
                return Err(c.invalid(
                    "homeassistant",
                    "has both service and state: keep service to call a service, or state to read an entity (make two tools for both)",
                ))
            }
            (None, None) => {
                return Err(c.invalid(
                    "homeassistant",
                    "needs service = \"domain.service\" (a service call) or state = \"domain.object_id\" (a state read)",
                ))
            }
            (Some(service), None) => {
                c.template("homeassistant.service", &service)?;
                check_id_template(c, "homeassistant.service", &service, "light.turn_on")?;
                if let Some(data) = &self.data {
                    check_data(c, data)?;
                }
                HaAction::Service {
                    service,
                    data: self.data,
                }
            }
            (None, Some(entity_id)) => {
                if self.data.is_some() {
                    return Err(c.invalid(
                        "homeassistant.data",
                        "is for service calls: a state read sends no data; remove it",
                    ));
                }
                c.template("homeassistant.state", &entity_id)?;
                check_id_template(c, "homeassistant.state", &entity_id, "sensor.kitchen_temperature")?;
                HaAction::State { entity_id }
            }
        };
        let timeout = c.timeout("homeassistant", self.timeout_ms, DEFAULT_TIMEOUT_MS)?;
        Ok(HaSpec { action, timeout })
    }
}

/// Load-time check of a `domain.name` template: a template without blocks must have the
/// shape already; the literal text of one with blocks may hold only id characters.
fn check_id_template(
    c: &Check,
    field: &str,
    source: &str,
    example: &str,
) -> Result<(), ToolsError> {
    let literal = values::literal_text(source);
    let templated = literal.len() != source.len();
    let bad = if templated {
        literal
            .chars()
            .any(|ch| !(ch.is_ascii_lowercase() || ch.is_ascii_digit() || ch == '_' || ch == '.'))
    } else {
        values::check(Place::Ha(HaId::Entity), source).is_err()
    };
    if bad {
        return Err(c.invalid(
            field,
            format!("{source:?} is not of the form domain.name (lowercase letters, digits and `_` on each side of one dot), e.g. {example:?}"),
        ));
    }
    Ok(())
}

/// The keys of service data that choose what a call acts on (at the top of `data` or in its
/// `target` table), and the id each holds.
const TARGET_KEYS: [(&str, HaId); 5] = [
    ("entity_id", HaId::Entity),
    ("device_id", HaId::Device),
    ("area_id", HaId::Area),
    ("floor_id", HaId::Floor),
    ("label_id", HaId::Label),
];

/// The id a target key holds; None for any other key.
fn target_id(key: &str) -> Option<HaId> {
    TARGET_KEYS
        .iter()
        .find(|(k, _)| *k == key)
        .map(|(_, id)| *id)
}

/// Every target of service data (rendered or as written): its field, the id it holds and
/// its value.
fn targets(data: &Value) -> Vec<(String, HaId, &Value)> {
    let Value::Object(top) = data else {
        return Vec::new();
    };
    let in_target = match top.get("target") {
        Some(Value::Object(target)) => Some(("homeassistant.data.target", target)),
        _ => None,
    };
    std::iter::once(("homeassistant.data", top))
        .chain(in_target)
        .flat_map(|(prefix, table)| {
            table.iter().filter_map(move |(key, value)| {
                target_id(key).map(|id| (format!("{prefix}.{key}"), id, value))
            })
        })
        .collect()
}

/// A target value that cannot be sent: its field, the value as messages show it, and why.
struct BadTarget {
    field: String,
    shown: String,
    why: String,
}

/// Check one target's value, `id` or a list of them, each fit to be `kind`
/// ([`values::check`] at [`Place::Ha`]).
fn check_target(field: &str, kind: HaId, value: &Value) -> Result<(), BadTarget> {
    let items: Vec<(String, &Value)> = match value {
        Value::Array(items) => items
            .iter()
            .enumerate()
            .map(|(i, v)| (format!("{field}[{i}]"), v))
            .collect(),
        one => vec![(field.to_string(), one)],
    };
    for (field, item) in items {
        let Some(id) = item.as_str() else {
            return Err(BadTarget {
                field,
                shown: values::quoted(&item.to_string()),
                why:
                    "is not an id or a list of ids (strings): make the manifest's template give one"
                        .into(),
            });
        };
        values::check(Place::Ha(kind), id).map_err(|refusal| BadTarget {
            field,
            shown: values::quoted(id),
            why: refusal.to_string(),
        })?;
    }
    Ok(())
}

/// Load-time check of `data`: a table of templates, whose `target` (if any) is a table of
/// target keys, and whose targets written without a template are ids that fit.
fn check_data(c: &Check, data: &Value) -> Result<(), ToolsError> {
    let Value::Object(table) = data else {
        return Err(c.invalid(
            "homeassistant.data",
            "must be a table, e.g. data = { entity_id = \"light.kitchen\" }",
        ));
    };
    c.json_template("homeassistant.data", data)?;
    let keys = TARGET_KEYS.map(|(k, _)| k).join(", ");
    match table.get("target") {
        None => {}
        Some(Value::Object(target)) => {
            if let Some(key) = target.keys().find(|k| target_id(k).is_none()) {
                return Err(c.invalid(
                    format!("homeassistant.data.target.{key}"),
                    format!("is not a target: a target table holds {keys}"),
                ));
            }
        }
        Some(_) => {
            return Err(c.invalid(
                "homeassistant.data.target",
                format!("must be a table of {keys}, e.g. target = {{ area_id = \"kitchen\" }} (a template could target anything)"),
            ))
        }
    }
    for (field, kind, value) in targets(data) {
        if values::json_has_template(value) {
            continue;
        }
        check_target(&field, kind, value)
            .map_err(|bad| c.invalid(bad.field, format!("{} {}", bad.shown, bad.why)))?;
    }
    Ok(())
}

/// Home Assistant of `[homeassistant]`.
pub struct HaBackend {
    /// The base URL, without a trailing slash.
    pub url: String,
    /// Where the token came from (errors name it).
    pub token_file: PathBuf,
    token: String,
    /// Kept, so connections to Home Assistant are reused.
    agent: ureq::Agent,
}

impl std::fmt::Debug for HaBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HaBackend")
            .field("url", &self.url)
            .field("token_file", &self.token_file)
            .finish_non_exhaustive()
    }
}

/// Said once, at start: see [`crate::secret::in_clear`].
fn warn_if_in_clear(url: &str) {
    if crate::secret::in_clear(url) {
        tracing::warn!(
            url,
            "[homeassistant] url is plain http: the access token crosses the network in clear; use https:// (Home Assistant's own TLS, or a reverse proxy in front of it)"
        );
    }
}

impl HaBackend {
    /// From `[homeassistant]`: reads the token file (trimmed) and normalises the URL.
    pub fn new(section: &HomeAssistantSection) -> Result<Self, HaError> {
        let file = section.token_file.display().to_string();
        let fix = "create a long-lived access token in your Home Assistant profile (Security tab) and save it in this file, readable by hearth's user";
        let token = crate::secret::read_word(&section.token_file, fix)
            .map_err(|problem| HaError::Token(file.clone(), problem))?;
        warn_if_in_clear(&section.url);
        Ok(HaBackend {
            url: section.url.trim().trim_end_matches('/').to_string(),
            token_file: section.token_file.clone(),
            token,
            agent: ureq::Agent::config_builder()
                .http_status_as_error(false)
                .max_redirects(0)
                .user_agent(concat!("hearth/", env!("CARGO_PKG_VERSION")))
                .build()
                .new_agent(),
        })
    }

    /// Check that the API answers and takes the token: `GET /api/` must give
    /// `{"message": "API running."}`. Ok names the URL.
    pub async fn probe(&self, timeout: Duration) -> Result<String, String> {
        let url = format!("{}/api/", self.url);
        let answer = self.request(Method::Get, url, None, timeout).await?;
        let message = match answer.status {
            200 => serde_json::from_str::<Value>(&answer.body)
                .ok()
                .and_then(|v| v.get("message").and_then(Value::as_str).map(str::to_string)),
            401 | 403 => return Err(self.token_rejected(answer.status)),
            _ => None,
        };
        match message.as_deref() {
            Some("API running.") => Ok(format!("Home Assistant API running at {}", self.url)),
            _ => Err(format!(
                "{} answered {} to GET /api/ with {}, not Home Assistant's {{\"message\": \"API running.\"}}: check [homeassistant] url in hearth.toml",
                self.url,
                answer.status,
                snippet(&answer.body)
            )),
        }
    }

    /// Call a service on the entity a found thing is (`house` tools): the entity id is checked
    /// for its place first, and nothing is sent when it does not fit. Ok: the summary a
    /// manifest's service call gives.
    pub async fn call_service(
        &self,
        call: &hearth_house::homeassistant::ServiceCall,
        timeout: Duration,
    ) -> Result<String, String> {
        let service = format!("{}.{}", call.domain, call.service);
        for (field, kind, value) in targets(&call.data) {
            if let Err(bad) = check_target(&field, kind, value) {
                return Err(format!(
                    "not called: {} is {}, which {}",
                    bad.field, bad.shown, bad.why
                ));
            }
        }
        let url = format!("{}/api/services/{}/{}", self.url, call.domain, call.service);
        tracing::debug!(%service, body = %call.data, "homeassistant service call");
        let answer = self
            .request(
                Method::Post,
                url,
                Some(call.data.to_string().into_bytes()),
                timeout,
            )
            .await?;
        match answer.status {
            200 | 201 => Ok(service_summary(&service, &answer.body)),
            status => Err(status_error(
                self,
                status,
                &answer.body,
                &format!("service {service}"),
                "the entity's exposure in Home Assistant",
            )),
        }
    }

    /// The live state object of `entity_id` (`GET /api/states/ENTITY_ID`): `state` and
    /// `attributes`, as Home Assistant has them now.
    pub async fn state(&self, entity_id: &str, timeout: Duration) -> Result<Value, String> {
        if let Err(refusal) = values::check(Place::Ha(HaId::Entity), entity_id) {
            return Err(format!(
                "not read: the entity id {}, which {refusal}",
                values::quoted(entity_id)
            ));
        }
        let url = format!("{}/api/states/{entity_id}", self.url);
        let answer = self.request(Method::Get, url, None, timeout).await?;
        match answer.status {
            200 => serde_json::from_str::<Value>(&answer.body)
                .ok()
                .filter(|v| v.get("state").is_some())
                .ok_or_else(|| {
                    format!(
                        "Home Assistant at {} answered the state of {entity_id} with {}, not a state object",
                        self.url,
                        snippet(&answer.body)
                    )
                }),
            status => Err(status_error(
                self,
                status,
                &answer.body,
                &format!("entity {entity_id}"),
                "the entity's exposure in Home Assistant",
            )),
        }
    }

    fn token_rejected(&self, status: u16) -> String {
        format!(
            "Home Assistant at {} rejected the token ({status}): create a long-lived access token in your Home Assistant profile (Security tab) and put it in {}",
            self.url,
            self.token_file.display()
        )
    }

    /// One request, run on the blocking pool with `timeout` for all of it.
    async fn request(
        &self,
        method: Method,
        url: String,
        body: Option<Vec<u8>>,
        timeout: Duration,
    ) -> Result<Answer, String> {
        let token = self.token.clone();
        let agent = self.agent.clone();
        let base = self.url.clone();
        let ms = timeout.as_millis();
        let job =
            tokio::task::spawn_blocking(move || send(&agent, method, &url, &token, body, timeout));
        // a backstop: ureq's own global timeout ends the request
        match tokio::time::timeout(timeout + Duration::from_millis(500), job).await {
            Err(_) => Err(no_answer(&base, ms)),
            Ok(Err(e)) => Err(format!(
                "the request to Home Assistant failed inside hearth: {e}"
            )),
            Ok(Ok(Err(e))) => Err(describe(&e, &base, ms)),
            Ok(Ok(Ok(answer))) => Ok(answer),
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum Method {
    Get,
    Post,
}

/// A response: its status and (capped) body.
struct Answer {
    status: u16,
    body: String,
}

fn send(
    agent: &ureq::Agent,
    method: Method,
    url: &str,
    token: &str,
    body: Option<Vec<u8>>,
    timeout: Duration,
) -> Result<Answer, ureq::Error> {
    let auth = format!("Bearer {token}");
    let mut response = match method {
        Method::Get => agent
            .get(url)
            .config()
            .timeout_global(Some(timeout))
            .build()
            .header("Authorization", &auth)
            .header("Content-Type", "application/json")
            .call()?,
        Method::Post => agent
            .post(url)
            .config()
            .timeout_global(Some(timeout))
            .build()
            .header("Authorization", &auth)
            .header("Content-Type", "application/json")
            .send(body.unwrap_or_else(|| b"{}".to_vec()))?,
    };
    let status = response.status().as_u16();
    let body = response
        .body_mut()
        .with_config()
        .limit(MAX_BODY_BYTES)
        .lossy_utf8(true)
        .read_to_string()?;
    Ok(Answer { status, body })
}

fn no_answer(base: &str, ms: u128) -> String {
    format!("Home Assistant at {base} did not answer within {ms} ms (is it running and reachable? check [homeassistant] url in hearth.toml)")
}

/// A transport error as a sentence naming Home Assistant's URL and the fix.
fn describe(e: &ureq::Error, base: &str, ms: u128) -> String {
    let url_fix = "is it running? check [homeassistant] url in hearth.toml";
    match e {
        ureq::Error::Timeout(_) => no_answer(base, ms),
        ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::TimedOut => no_answer(base, ms),
        ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::ConnectionRefused => {
            format!("cannot reach Home Assistant at {base}: connection refused ({url_fix})")
        }
        ureq::Error::HostNotFound => {
            format!("cannot reach Home Assistant at {base}: host not found (check [homeassistant] url in hearth.toml)")
        }
        other => format!("cannot reach Home Assistant at {base}: {other} ({url_fix})"),
    }
}

/// The start of a body, for messages.
fn snippet(body: &str) -> String {
    let body = body.trim();
    if body.is_empty() {
        return "an empty body".to_string();
    }
    let mut end = body.len().min(200);
    while !body.is_char_boundary(end) {
        end -= 1;
    }
    if end < body.len() {
        format!("{:?}…", &body[..end])
    } else {
        format!("{body:?}")
    }
}

/// Home Assistant's own `message` in an error body, else the body's start.
fn ha_message(body: &str) -> String {
    serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| v.get("message").and_then(Value::as_str).map(str::to_string))
        .unwrap_or_else(|| snippet(body))
}

/// Run one call: render, check the ids, send, summarise.
pub async fn run(
    tool: &str,
    spec: &HaSpec,
    arguments: &Value,
    ha: Option<&HaBackend>,
) -> ExecOutput {
    let Some(ha) = ha else {
        return ExecOutput::error(format!(
            "{tool}: Home Assistant is not configured: add [homeassistant] url and token_file to hearth.toml"
        ));
    };
    let render = |field: &str, source: &str| {
        super::render(source, arguments)
            .map(|s| s.trim().to_string())
            .map_err(|e| format!("{tool}: cannot build {field} from `{source}`: {e}"))
    };
    match &spec.action {
        HaAction::Service { service, data } => {
            let service = match render("homeassistant.service", service) {
                Ok(s) => s,
                Err(e) => return ExecOutput::error(e),
            };
            if let Err(refusal) = values::check(Place::Ha(HaId::Service), &service) {
                return ExecOutput::error(format!(
                    "{tool}: not called: homeassistant.service rendered to {}, which {refusal}",
                    values::quoted(&service)
                ));
            }
            let Some((domain, name)) = service.split_once('.') else {
                return ExecOutput::error(format!("{tool}: homeassistant.service has no dot"));
            };
            let body = match data {
                None => Value::Object(Default::default()),
                Some(t) => match super::render_json(t, arguments) {
                    Ok(v) => v,
                    Err(e) => {
                        return ExecOutput::error(format!(
                            "{tool}: cannot build homeassistant.data: {e}"
                        ))
                    }
                },
            };
            for (field, kind, value) in targets(&body) {
                if let Err(bad) = check_target(&field, kind, value) {
                    return ExecOutput::error(format!(
                        "{tool}: not called: {} rendered to {}, which {}",
                        bad.field, bad.shown, bad.why
                    ));
                }
            }
            let url = format!("{}/api/services/{domain}/{name}", ha.url);
            tracing::debug!(%service, %body, "homeassistant service call");
            let answer = match ha
                .request(
                    Method::Post,
                    url,
                    Some(body.to_string().into_bytes()),
                    spec.timeout,
                )
                .await
            {
                Ok(a) => a,
                Err(e) => return ExecOutput::error(format!("{tool}: {e}")),
            };
            match answer.status {
                200 | 201 => ExecOutput::done(service_summary(&service, &answer.body)),
                _ => ExecOutput::error(format!(
                    "{tool}: {}",
                    status_error(
                        ha,
                        answer.status,
                        &answer.body,
                        &format!("service {service}"),
                        "homeassistant.service"
                    )
                )),
            }
        }
        HaAction::State { entity_id } => {
            let entity_id = match render("homeassistant.state", entity_id) {
                Ok(s) => s,
                Err(e) => return ExecOutput::error(e),
            };
            if let Err(refusal) = values::check(Place::Ha(HaId::Entity), &entity_id) {
                return ExecOutput::error(format!(
                    "{tool}: not read: homeassistant.state rendered to {}, which {refusal}",
                    values::quoted(&entity_id)
                ));
            }
            let url = format!("{}/api/states/{entity_id}", ha.url);
            tracing::debug!(%entity_id, "homeassistant state read");
            let answer = match ha.request(Method::Get, url, None, spec.timeout).await {
                Ok(a) => a,
                Err(e) => return ExecOutput::error(format!("{tool}: {e}")),
            };
            match answer.status {
                200 => match state_summary(&answer.body) {
                    Some(text) => ExecOutput::done(text),
                    None => ExecOutput::error(format!(
                        "{tool}: Home Assistant at {} answered the state of {entity_id} with {}, not a state object: check [homeassistant] url in hearth.toml",
                        ha.url,
                        snippet(&answer.body)
                    )),
                },
                _ => ExecOutput::error(format!(
                    "{tool}: {}",
                    status_error(ha, answer.status, &answer.body, &format!("entity {entity_id}"), "homeassistant.state")
                )),
            }
        }
    }
}

/// The error for a non-success status: `what` is "service light.turn_on" or "entity …",
/// `field` the manifest key that names it.
fn status_error(ha: &HaBackend, status: u16, body: &str, what: &str, field: &str) -> String {
    match status {
        401 | 403 => ha.token_rejected(status),
        404 => format!(
            "Home Assistant at {} has no {what} (404): check {field} in the manifest against Home Assistant (Developer tools)",
            ha.url
        ),
        400 => format!(
            "Home Assistant at {} rejected the call to {what} (400): {} (check homeassistant.data in the manifest)",
            ha.url,
            ha_message(body)
        ),
        _ => format!(
            "Home Assistant at {} answered {status} for {what}: {}",
            ha.url,
            ha_message(body)
        ),
    }
}

/// `light.turn_on done` and one `entity: state` line per changed state reported.
fn service_summary(service: &str, body: &str) -> String {
    let parsed: Value = serde_json::from_str(body).unwrap_or(Value::Null);
    // `?return_response` answers {"changed_states": [...], ...}; a plain call, the list
    let states = match &parsed {
        Value::Array(items) => items.as_slice(),
        Value::Object(m) => m
            .get("changed_states")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or(&[]),
        _ => &[],
    };
    let mut text = format!("{service} done");
    for s in states.iter().take(MAX_STATES_LISTED) {
        let id = s.get("entity_id").and_then(Value::as_str).unwrap_or("?");
        let state = s.get("state").and_then(Value::as_str).unwrap_or("?");
        text.push_str(&format!("\n{id}: {state}"));
    }
    if states.len() > MAX_STATES_LISTED {
        text.push_str(&format!(
            "\n… and {} more",
            states.len() - MAX_STATES_LISTED
        ));
    }
    text
}

/// `21.5 °C (Kitchen temperature)` from a state object; None when it is not one.
fn state_summary(body: &str) -> Option<String> {
    let v: Value = serde_json::from_str(body).ok()?;
    let state = v.get("state")?.as_str()?;
    let attributes = v.get("attributes");
    let attr = |k: &str| {
        attributes
            .and_then(|a| a.get(k))
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
    };
    let mut text = state.to_string();
    if let Some(unit) = attr("unit_of_measurement") {
        text.push(' ');
        text.push_str(unit);
    }
    if let Some(name) = attr("friendly_name") {
        text.push_str(&format!(" ({name})"));
    }
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn check(table: &str) -> Result<HaSpec, ToolsError> {
        let t: HaTable = toml::from_str(table).unwrap();
        let props = vec!["room".to_string(), "on".to_string()];
        t.check(&Check {
            path: Path::new("/etc/hearth/tools/ha.toml"),
            tool: "t",
            properties: &props,
        })
    }

    #[test]
    fn targets_are_found_at_the_top_and_in_target() {
        let data = serde_json::json!({
            "entity_id": "light.a", "brightness": 3,
            "target": {"area_id": ["kitchen", "hall"], "device_id": "abc"},
            "options": {"entity_id": "not.a_target"},
        });
        let found: Vec<(String, HaId)> = targets(&data)
            .into_iter()
            .map(|(f, id, _)| (f, id))
            .collect();
        assert_eq!(
            found,
            [
                ("homeassistant.data.entity_id".to_string(), HaId::Entity),
                ("homeassistant.data.target.area_id".to_string(), HaId::Area),
                (
                    "homeassistant.data.target.device_id".to_string(),
                    HaId::Device
                ),
            ]
        );
        let bad = check_target(
            "homeassistant.data.target.area_id",
            HaId::Area,
            &serde_json::json!(["kitchen", "all"]),
        )
        .unwrap_err();
        assert_eq!(bad.field, "homeassistant.data.target.area_id[1]");
        assert_eq!(bad.shown, "\"all\"");
        assert!(bad.why.contains("every entity"), "{}", bad.why);
    }

    #[test]
    fn table_checks() {
        let s = check("service = \"light.turn_{{ 'on' if on else 'off' }}\"\ndata = { entity_id = \"light.{{ room }}\" }").unwrap();
        assert!(matches!(s.action, HaAction::Service { .. }));
        assert_eq!(s.timeout, Duration::from_millis(DEFAULT_TIMEOUT_MS));
        let s = check("state = \"sensor.{{ room }}_temperature\"\ntimeout_ms = 100").unwrap();
        assert!(matches!(s.action, HaAction::State { .. }));
        let e = check("service = \"a.b\"\nstate = \"c.d\"")
            .unwrap_err()
            .to_string();
        assert!(e.contains("both service and state"), "{e}");
        let e = check("timeout_ms = 1").unwrap_err().to_string();
        assert!(e.contains("needs service"), "{e}");
        let e = check("service = \"light turn_on\"")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("homeassistant.service") && e.contains("domain.name"),
            "{e}"
        );
        let e = check("service = \"Light.{{ room }}\"")
            .unwrap_err()
            .to_string();
        assert!(e.contains("homeassistant.service"), "{e}");
        let e = check("state = \"c.d\"\ndata = {}").unwrap_err().to_string();
        assert!(e.contains("homeassistant.data"), "{e}");
        let e = check("service = \"a.b\"\ndata = [1]")
            .unwrap_err()
            .to_string();
        assert!(e.contains("must be a table"), "{e}");
        let e = check("service = \"a.b\"\ndata = { x = \"{{ nope }}\" }")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("homeassistant.data.x") && e.contains("`nope`"),
            "{e}"
        );
    }

    #[test]
    fn summaries() {
        let body = r#"[{"entity_id":"light.kitchen","state":"on","attributes":{}}]"#;
        assert_eq!(
            service_summary("light.turn_on", body),
            "light.turn_on done\nlight.kitchen: on"
        );
        assert_eq!(service_summary("scene.turn_on", "[]"), "scene.turn_on done");
        let body =
            r#"{"changed_states":[{"entity_id":"switch.a","state":"off"}],"service_response":{}}"#;
        assert_eq!(
            service_summary("switch.turn_off", body),
            "switch.turn_off done\nswitch.a: off"
        );
        let body = r#"{"entity_id":"sensor.t","state":"21.5","attributes":{"unit_of_measurement":"°C","friendly_name":"Kitchen temperature"}}"#;
        assert_eq!(
            state_summary(body).unwrap(),
            "21.5 °C (Kitchen temperature)"
        );
        assert_eq!(state_summary(r#"{"state":"on"}"#).unwrap(), "on");
        assert!(state_summary("[]").is_none());
    }

    #[test]
    fn token_file_errors_name_the_file() {
        let section = |p: &str| HomeAssistantSection {
            url: "http://ha.lan:8123/".into(),
            token_file: PathBuf::from(p),
            discover: false,
            refresh_s: 30,
        };
        let e = HaBackend::new(&section("/nonexistent/hearth-ha-token"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("/nonexistent/hearth-ha-token") && e.contains("long-lived"),
            "{e}"
        );
        let file = std::env::temp_dir().join(format!("hearth-ha-unit-{}", std::process::id()));
        std::fs::write(&file, "  \n").unwrap();
        let p = file.to_string_lossy().into_owned();
        let e = HaBackend::new(&section(&p)).unwrap_err().to_string();
        assert!(e.contains(&p) && e.contains("is empty"), "{e}");
        std::fs::write(&file, " abc.def \n").unwrap();
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        }
        let b = HaBackend::new(&section(&p)).unwrap();
        assert_eq!(b.url, "http://ha.lan:8123");
        assert_eq!(b.token, "abc.def");
        assert!(!format!("{b:?}").contains("abc.def"));
        std::fs::remove_file(&file).unwrap();
    }
}
