//! The `homeassistant` executor against a loopback HTTP/1.1 server that answers like Home
//! Assistant's REST API and records every request: method, path, headers and the exact
//! JSON body; errors for a rejected token, unknown services and entities, a bad request,
//! a closed port and a server that never answers; manifest errors; the examples.

use crate::common::fixtures::write_secret;
use crate::common::manifest::*;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hearth::config::HomeAssistantSection;
use hearth::tools::homeassistant::HaBackend;
use hearth::tools::{Backends, Registry, ToolStatus};
use serde_json::{json, Value};

const TOKEN: &str = "test-token.abc";

/// One request as the server read it.
#[derive(Debug, Clone)]
struct Recorded {
    method: String,
    path: String,
    /// Lowercased names.
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Recorded {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap()
    }
}

/// What the server does with a request: answer (status, JSON body) or never answer.
enum Reply {
    Answer(u16, String),
    Silence,
}

/// A loopback HTTP/1.1 server; stops accepting when dropped.
struct FakeHa {
    port: u16,
    requests: Arc<Mutex<Vec<Recorded>>>,
    stop: Arc<AtomicBool>,
}

impl FakeHa {
    fn start(reply: impl Fn(&Recorded) -> Reply + Send + Sync + 'static) -> FakeHa {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let reply = Arc::new(reply);
        let (log, stopped) = (Arc::clone(&requests), Arc::clone(&stop));
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                if stopped.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                let (log, reply, stopped) =
                    (Arc::clone(&log), Arc::clone(&reply), Arc::clone(&stopped));
                std::thread::spawn(move || serve(stream, &log, &*reply, &stopped));
            }
        });
        FakeHa {
            port,
            requests,
            stop,
        }
    }

    /// Answers like Home Assistant: checks the token, knows a few services and entities.
    fn home_assistant() -> FakeHa {
        Self::start(|r| {
            if r.header("authorization") != Some(&format!("Bearer {TOKEN}")) {
                return Reply::Answer(401, "401: Unauthorized".into());
            }
            let answer = |status, v: Value| Reply::Answer(status, v.to_string());
            match (r.method.as_str(), r.path.as_str()) {
                ("GET", "/api/") => answer(200, json!({"message": "API running."})),
                ("GET", "/api/states/sensor.kitchen_temperature") => answer(
                    200,
                    json!({"entity_id": "sensor.kitchen_temperature", "state": "21.5",
                           "attributes": {"unit_of_measurement": "°C",
                                          "friendly_name": "Kitchen temperature"},
                           "last_changed": "2024-01-01T00:00:00+00:00"}),
                ),
                ("GET", "/api/states/sensor.bedroom_temperature") => answer(
                    200,
                    json!({"entity_id": "sensor.bedroom_temperature", "state": "19",
                           "attributes": {"unit_of_measurement": "°C"}}),
                ),
                ("GET", p) if p.starts_with("/api/states/") => {
                    answer(404, json!({"message": "Entity not found."}))
                }
                ("POST", "/api/services/light/broken") => {
                    answer(400, json!({"message": "Invalid JSON specified."}))
                }
                ("POST", p) if p.starts_with("/api/services/") => {
                    let mut parts = p["/api/services/".len()..].splitn(2, '/');
                    let domain = parts.next().unwrap_or("");
                    if !["light", "switch", "scene", "climate", "homeassistant"].contains(&domain) {
                        return answer(404, json!({"message": "Service not found."}));
                    }
                    let body: Value = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
                    let state = if p.ends_with("turn_off") { "off" } else { "on" };
                    let changed: Vec<Value> = match body.get("entity_id") {
                        Some(Value::String(id)) => vec![json!({"entity_id": id, "state": state,
                                                              "attributes": {}})],
                        _ => vec![],
                    };
                    answer(200, Value::Array(changed))
                }
                _ => answer(404, json!({"message": "Not found."})),
            }
        })
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().unwrap().clone()
    }
}

impl Drop for FakeHa {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // wake the accept loop so it sees the flag
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

/// Read one request (request line, headers, Content-Length body), record it, reply, close.
fn serve(
    stream: TcpStream,
    log: &Mutex<Vec<Recorded>>,
    reply: &(dyn Fn(&Recorded) -> Reply + Send + Sync),
    stop: &AtomicBool,
) {
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut line = String::new();
    if reader.read_line(&mut line).unwrap_or(0) == 0 {
        return;
    }
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or("").to_string();
    let path = parts.next().unwrap_or("").to_string();
    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).unwrap_or(0) == 0 {
            return;
        }
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        if let Some((n, v)) = h.split_once(':') {
            headers.push((n.trim().to_ascii_lowercase(), v.trim().to_string()));
        }
    }
    let len: usize = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; len];
    reader.read_exact(&mut body).unwrap();
    let r = Recorded {
        method,
        path,
        headers,
        body,
    };
    log.lock().unwrap().push(r.clone());
    let mut stream = stream;
    match reply(&r) {
        Reply::Answer(status, body) => {
            let reason = match status {
                200 => "OK",
                400 => "Bad Request",
                401 => "Unauthorized",
                404 => "Not Found",
                _ => "Other",
            };
            let response = format!(
                "HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = stream.write_all(response.as_bytes());
        }
        Reply::Silence => {
            // hold the connection open without a word, for at most 10 s
            for _ in 0..100 {
                if stop.load(Ordering::SeqCst) {
                    break;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        }
    }
}

/// Backends with Home Assistant at `url` and a token file holding `token`.
fn backends(url: &str, token: &str) -> (Arc<Backends>, PathBuf) {
    let token_file = scratch_dir("ha-token").join("ha-token");
    write_secret(&token_file, &format!("  {token}\n"));
    let ha = HaBackend::new(&HomeAssistantSection {
        url: format!("{url}/"),
        token_file: token_file.clone(),
        discover: false,
        refresh_s: 30,
    })
    .unwrap();
    let mut b = Backends::none();
    b.homeassistant = Some(ha);
    (Arc::new(b), token_file)
}

const TOOLS: &str = r#"
[[tool]]
name = "set_light"
description = "Set a light."
[tool.parameters]
type = "object"
required = ["room", "on"]
additionalProperties = false
[tool.parameters.properties.room]
type = "string"
[tool.parameters.properties.on]
type = "boolean"
[tool.parameters.properties.brightness]
type = "integer"
[tool.homeassistant]
service = "light.turn_{{ 'on' if on else 'off' }}"
data = { entity_id = "light.{{ room | replace(' ', '_') }}", brightness_pct = "{{ brightness if brightness is defined else 100 }}" }

[[tool]]
name = "all_off"
description = "Everything off."
[tool.homeassistant]
service = "homeassistant.turn_off"

[[tool]]
name = "temperature"
description = "Read a temperature."
[tool.parameters]
type = "object"
required = ["room"]
[tool.parameters.properties.room]
type = "string"
[tool.homeassistant]
state = "sensor.{{ room | replace(' ', '_') }}_temperature"
timeout_ms = 3000

[[tool]]
name = "service"
description = "Call any light service."
[tool.parameters]
type = "object"
required = ["name"]
[tool.parameters.properties.name]
type = "string"
[tool.homeassistant]
service = "light.{{ name }}"
data = { entity_id = "light.kitchen" }
"#;

fn assert_headers(r: &Recorded) {
    assert_eq!(
        r.header("authorization"),
        Some(format!("Bearer {TOKEN}").as_str())
    );
    assert_eq!(r.header("content-type"), Some("application/json"));
}

#[tokio::test]
async fn service_call_posts_the_typed_data() {
    let ha = FakeHa::home_assistant();
    let (b, _) = backends(&ha.url(), TOKEN);
    let r = registry(TOOLS, b);

    let o = r
        .call(&call(
            "set_light",
            json!({"room": "living room", "on": true, "brightness": 40}),
        ))
        .await;
    assert_eq!(o.status, ToolStatus::Ok, "{}", o.result);
    assert_eq!(o.result, "light.turn_on done\nlight.living_room: on");
    let reqs = ha.requests();
    assert_eq!(reqs.len(), 1);
    let q = &reqs[0];
    assert_eq!(q.method, "POST");
    assert_eq!(q.path, "/api/services/light/turn_on");
    assert_headers(q);
    assert_eq!(
        std::str::from_utf8(&q.body).unwrap(),
        r#"{"entity_id":"light.living_room","brightness_pct":40}"#,
        "brightness_pct is a number"
    );

    let o = r
        .call(&call("set_light", json!({"room": "kitchen", "on": false})))
        .await;
    assert_eq!(o.status, ToolStatus::Ok, "{}", o.result);
    assert_eq!(o.result, "light.turn_off done\nlight.kitchen: off");
    let q = &ha.requests()[1];
    assert_eq!(q.path, "/api/services/light/turn_off");
    assert_eq!(
        q.json(),
        json!({"entity_id": "light.kitchen", "brightness_pct": 100})
    );

    // no data: an empty object
    let o = r.call(&call("all_off", json!({}))).await;
    assert_eq!(o.status, ToolStatus::Ok, "{}", o.result);
    assert_eq!(o.result, "homeassistant.turn_off done");
    let q = &ha.requests()[2];
    assert_eq!(q.path, "/api/services/homeassistant/turn_off");
    assert_headers(q);
    assert_eq!(&q.body[..], b"{}");
}

#[tokio::test]
async fn state_read_gives_the_state_with_its_unit() {
    let ha = FakeHa::home_assistant();
    let (b, _) = backends(&ha.url(), TOKEN);
    let r = registry(TOOLS, b);
    let o = r
        .call(&call("temperature", json!({"room": "kitchen"})))
        .await;
    assert_eq!(o.status, ToolStatus::Ok, "{}", o.result);
    assert_eq!(o.result, "21.5 °C (Kitchen temperature)");
    let q = &ha.requests()[0];
    assert_eq!(q.method, "GET");
    assert_eq!(q.path, "/api/states/sensor.kitchen_temperature");
    assert_eq!(
        q.header("authorization"),
        Some(format!("Bearer {TOKEN}").as_str())
    );
    assert!(q.body.is_empty());
    let o = r
        .call(&call("temperature", json!({"room": "bedroom"})))
        .await;
    assert_eq!(o.result, "19 °C");
}

#[tokio::test]
async fn a_rejected_token_names_the_token_file() {
    let ha = FakeHa::home_assistant();
    let (b, token_file) = backends(&ha.url(), "stale-token");
    let r = registry(TOOLS, Arc::clone(&b));
    let o = r
        .call(&call("set_light", json!({"room": "kitchen", "on": true})))
        .await;
    assert_eq!(o.status, ToolStatus::Error);
    assert_eq!(
        o.result,
        format!(
            "set_light: Home Assistant at {} rejected the token (401): create a long-lived access token in your Home Assistant profile (Security tab) and put it in {}",
            ha.url(),
            token_file.display()
        )
    );
    assert_eq!(
        ha.requests()[0].header("authorization"),
        Some("Bearer stale-token")
    );
    let e = b
        .homeassistant
        .as_ref()
        .unwrap()
        .probe(Duration::from_secs(2))
        .await
        .unwrap_err();
    assert!(e.contains(&token_file.display().to_string()), "{e}");
}

#[tokio::test]
async fn unknown_services_and_entities_are_named() {
    let ha = FakeHa::home_assistant();
    let (b, _) = backends(&ha.url(), TOKEN);
    let r = registry(
        &format!(
            "{TOOLS}\n[[tool]]\nname = \"lock\"\ndescription = \"x\"\n[tool.homeassistant]\nservice = \"lock.unlock\"\n"
        ),
        b,
    );
    let o = r.call(&call("temperature", json!({"room": "attic"}))).await;
    assert_eq!(o.status, ToolStatus::Error);
    assert_eq!(
        o.result,
        format!("temperature: Home Assistant at {} has no entity sensor.attic_temperature (404): check homeassistant.state in the manifest against Home Assistant (Developer tools)", ha.url())
    );
    let o = r.call(&call("lock", json!({}))).await;
    assert_eq!(o.status, ToolStatus::Error);
    assert!(
        o.result.starts_with(&format!(
            "lock: Home Assistant at {} has no service lock.unlock (404)",
            ha.url()
        )) && o.result.contains("homeassistant.service"),
        "{}",
        o.result
    );
    // 400: Home Assistant's own message
    let o = r.call(&call("service", json!({"name": "broken"}))).await;
    assert_eq!(o.status, ToolStatus::Error);
    assert!(
        o.result
            .contains("rejected the call to service light.broken (400): Invalid JSON specified."),
        "{}",
        o.result
    );
}

#[tokio::test]
async fn a_bad_rendered_id_is_an_error_and_nothing_is_sent() {
    let ha = FakeHa::home_assistant();
    let (b, _) = backends(&ha.url(), TOKEN);
    let r = registry(TOOLS, b);
    let o = r.call(&call("service", json!({"name": "turn on"}))).await;
    assert_eq!(o.status, ToolStatus::Error);
    assert!(
        o.result
            .starts_with("service: not called: homeassistant.service rendered to \"light.turn on\", which is not domain.service"),
        "{}",
        o.result
    );
    let o = r
        .call(&call("set_light", json!({"room": "Hall/../x", "on": true})))
        .await;
    assert_eq!(o.status, ToolStatus::Error);
    assert!(
        o.result
            .contains("homeassistant.data.entity_id rendered to \"light.Hall/../x\""),
        "{}",
        o.result
    );
    let o = r
        .call(&call("temperature", json!({"room": "../../api"})))
        .await;
    assert_eq!(o.status, ToolStatus::Error);
    assert!(
        o.result
            .contains("homeassistant.state rendered to \"sensor.../../api_temperature\""),
        "{}",
        o.result
    );
    assert!(ha.requests().is_empty(), "{:?}", ha.requests());
}

const TARGETS: &str = r#"
[[tool]]
name = "plug_on"
description = "Switch one plug on."
[tool.parameters]
type = "object"
required = ["plug"]
[tool.parameters.properties.plug]
[tool.homeassistant]
service = "switch.turn_on"
data = { entity_id = "{{ plug }}" }

[[tool]]
name = "room_lights"
description = "Lights of one area on."
[tool.parameters]
type = "object"
required = ["area"]
[tool.parameters.properties.area]
[tool.homeassistant]
service = "light.turn_on"
data = { target = { area_id = "{{ area }}" }, brightness_pct = 50 }
"#;

#[tokio::test]
async fn a_call_never_targets_every_entity_or_an_id_of_the_wrong_shape() {
    let ha = FakeHa::home_assistant();
    let (b, _) = backends(&ha.url(), TOKEN);
    let r = registry(TARGETS, b);
    for (plug, fragment) in [
        (
            json!("all"),
            "homeassistant.data.entity_id rendered to \"all\"",
        ),
        (
            json!("none"),
            "homeassistant.data.entity_id rendered to \"none\"",
        ),
        (
            json!(["switch.kettle", "all"]),
            "homeassistant.data.entity_id[1] rendered to \"all\"",
        ),
        (json!("switch.kettle, lock.front"), "not an entity id"),
    ] {
        let o = r.call(&call("plug_on", json!({ "plug": plug }))).await;
        assert_eq!(o.status, ToolStatus::Error, "{}", o.result);
        assert!(
            o.result.starts_with("plug_on: not called: "),
            "{}",
            o.result
        );
        assert!(
            o.result.contains(fragment),
            "{fragment:?} not in {}",
            o.result
        );
    }
    for (area, fragment) in [
        (
            json!("all"),
            "homeassistant.data.target.area_id rendered to \"all\"",
        ),
        (json!("kitchen/../x"), "not an area id"),
        (
            json!({"entity_id": "switch.kettle"}),
            "not an id or a list of ids",
        ),
        (json!(3), "not an id or a list of ids"),
    ] {
        let o = r.call(&call("room_lights", json!({ "area": area }))).await;
        assert_eq!(o.status, ToolStatus::Error, "{}", o.result);
        assert!(
            o.result.contains(fragment),
            "{fragment:?} not in {}",
            o.result
        );
    }
    assert!(ha.requests().is_empty(), "{:?}", ha.requests());
    // what the manifest means still goes through
    let o = r
        .call(&call("plug_on", json!({"plug": "switch.kettle"})))
        .await;
    assert_eq!(o.status, ToolStatus::Ok, "{}", o.result);
    let o = r
        .call(&call("room_lights", json!({"area": "kitchen"})))
        .await;
    assert_eq!(o.status, ToolStatus::Ok, "{}", o.result);
    let sent: Vec<Value> = ha.requests().iter().map(|q| q.json()).collect();
    assert_eq!(
        sent,
        [
            json!({"entity_id": "switch.kettle"}),
            json!({"target": {"area_id": "kitchen"}, "brightness_pct": 50})
        ]
    );
}

#[tokio::test]
async fn a_closed_port_names_the_url() {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}");
    let (b, _) = backends(&url, TOKEN);
    let r = registry(TOOLS, Arc::clone(&b));
    let t = Instant::now();
    let o = r
        .call(&call("temperature", json!({"room": "kitchen"})))
        .await;
    assert_eq!(o.status, ToolStatus::Error);
    assert_eq!(
        o.result,
        format!("temperature: cannot reach Home Assistant at {url}: connection refused (is it running? check [homeassistant] url in hearth.toml)")
    );
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
    let e = b
        .homeassistant
        .as_ref()
        .unwrap()
        .probe(Duration::from_secs(1))
        .await
        .unwrap_err();
    assert!(e.contains(&url) && e.contains("connection refused"), "{e}");
}

#[tokio::test]
async fn a_silent_server_times_out() {
    let ha = FakeHa::start(|_| Reply::Silence);
    let (b, _) = backends(&ha.url(), TOKEN);
    let r = registry(&TOOLS.replace("timeout_ms = 3000", "timeout_ms = 500"), b);
    let t = Instant::now();
    let o = r
        .call(&call("temperature", json!({"room": "kitchen"})))
        .await;
    let elapsed = t.elapsed();
    assert_eq!(o.status, ToolStatus::Error);
    assert_eq!(
        o.result,
        format!("temperature: Home Assistant at {} did not answer within 500 ms (is it running and reachable? check [homeassistant] url in hearth.toml)", ha.url())
    );
    assert!(
        elapsed >= Duration::from_millis(450) && elapsed < Duration::from_millis(1500),
        "{elapsed:?}"
    );
    assert_eq!(ha.requests().len(), 1, "the request did arrive");
}

#[tokio::test]
async fn probe_checks_the_api() {
    let ha = FakeHa::home_assistant();
    let (b, _) = backends(&ha.url(), TOKEN);
    let ok = b
        .homeassistant
        .as_ref()
        .unwrap()
        .probe(Duration::from_secs(2))
        .await
        .unwrap();
    assert!(ok.contains(&ha.url()), "{ok}");
    let q = &ha.requests()[0];
    assert_eq!((q.method.as_str(), q.path.as_str()), ("GET", "/api/"));
    assert_headers(q);

    // something that is not Home Assistant
    let other = FakeHa::start(|_| Reply::Answer(200, "{\"hello\": 1}".into()));
    let (b, _) = backends(&other.url(), TOKEN);
    let e = b
        .homeassistant
        .as_ref()
        .unwrap()
        .probe(Duration::from_secs(2))
        .await
        .unwrap_err();
    assert!(
        e.contains("API running.") && e.contains("[homeassistant] url"),
        "{e}"
    );
}

#[test]
fn manifest_load_errors() {
    let e = load_error(
        "homeassistant",
        "service = \"light.turn_on\"\nstate = \"sensor.x\"",
    );
    assert!(e.contains("both service and state"), "{e}");
    let e = load_error("homeassistant", "timeout_ms = 100");
    assert!(e.contains("needs service") && e.contains("or state"), "{e}");
    let e = load_error("homeassistant", "service = \"turn_on\"");
    assert!(
        e.contains("homeassistant.service") && e.contains("domain.name"),
        "{e}"
    );
    let e = load_error("homeassistant", "service = \"Light.{{ room }}\"");
    assert!(e.contains("homeassistant.service"), "{e}");
    let e = load_error("homeassistant", "state = \"sensor temperature\"");
    assert!(e.contains("homeassistant.state"), "{e}");
    let e = load_error(
        "homeassistant",
        "service = \"light.turn_on\"\ndata = { entity_id = \"light.{{ rooom }}\" }",
    );
    assert!(
        e.contains("homeassistant.data.entity_id uses `rooom`"),
        "{e}"
    );
    let e = load_error(
        "homeassistant",
        "service = \"light.turn_on\"\nurl = \"http://x\"",
    );
    assert!(e.contains("unknown field") && e.contains("url"), "{e}");
    let e = load_error("homeassistant", "state = \"sensor.x\"\ntimeout_ms = 0");
    assert!(e.contains("homeassistant.timeout_ms"), "{e}");
    // what a service call targets: ids of the right shape, never every entity, and a
    // target table whose keys the manifest writes
    for (data, fragments) in [
        (
            "{ entity_id = \"all\" }",
            &["homeassistant.data.entity_id", "\"all\"", "every entity"][..],
        ),
        (
            "{ target = { entity_id = [\"light.a\", \"none\"] } }",
            &["homeassistant.data.target.entity_id[1]", "\"none\""],
        ),
        (
            "{ area_id = \"Living Room\" }",
            &["homeassistant.data.area_id", "not an area id"],
        ),
        (
            "{ area_id = 5 }",
            &["homeassistant.data.area_id", "an id or a list of ids"],
        ),
        (
            "{ target = \"{{ room }}\" }",
            &["homeassistant.data.target", "must be a table"],
        ),
        (
            "{ target = { entity = \"light.a\" } }",
            &[
                "homeassistant.data.target.entity",
                "not a target",
                "entity_id",
            ],
        ),
    ] {
        let e = load_error(
            "homeassistant",
            &format!("service = \"light.turn_on\"\ndata = {data}"),
        );
        for f in fragments {
            assert!(e.contains(f), "{f:?} not in {e}");
        }
    }
}

#[tokio::test]
async fn the_home_assistant_examples_send_what_home_assistant_expects() {
    let ha = FakeHa::home_assistant();
    let (b, _) = backends(&ha.url(), TOKEN);
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tools/examples");
    let tools: Vec<_> = hearth::tools::load_dir(dir)
        .unwrap()
        .into_iter()
        .filter(|t| t.executor.kind() == "homeassistant")
        .collect();
    let r = Registry::new(tools).unwrap().with_backends(b).unwrap();

    let o = r
        .call(&call("set_thermostat", json!({"temperature": 21.5})))
        .await;
    assert_eq!(o.status, ToolStatus::Ok, "{}", o.result);
    let q = &ha.requests()[0];
    assert_eq!(q.path, "/api/services/climate/set_temperature");
    assert_eq!(
        q.json(),
        json!({"entity_id": "climate.living_room", "temperature": 21.5})
    );
    let bad = r
        .call(&call("set_thermostat", json!({"temperature": 45})))
        .await;
    assert_eq!(bad.status, ToolStatus::Error, "out of range never runs");

    let o = r
        .call(&call("activate_scene", json!({"scene": "movie night"})))
        .await;
    assert_eq!(o.status, ToolStatus::Ok, "{}", o.result);
    let q = &ha.requests()[1];
    assert_eq!(q.path, "/api/services/scene/turn_on");
    assert_eq!(q.json(), json!({"entity_id": "scene.movie_night"}));

    let o = r
        .call(&call(
            "set_switch",
            json!({"switch": "garden pump", "on": false}),
        ))
        .await;
    assert_eq!(o.status, ToolStatus::Ok, "{}", o.result);
    assert_eq!(o.result, "switch.turn_off done\nswitch.garden_pump: off");
    assert_eq!(ha.requests()[2].path, "/api/services/switch/turn_off");

    let o = r
        .call(&call("get_temperature", json!({"room": "kitchen"})))
        .await;
    assert_eq!(o.status, ToolStatus::Ok, "{}", o.result);
    assert_eq!(o.result, "21.5 °C (Kitchen temperature)");
    assert_eq!(ha.requests().len(), 4);
}

/// A token file other users of the machine can read is refused at start, with the fix.
#[test]
fn a_token_others_can_read_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let token_file = scratch_dir("ha-open-token").join("ha-token");
    std::fs::write(&token_file, "abc\n").unwrap();
    std::fs::set_permissions(&token_file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let section = HomeAssistantSection {
        url: "https://ha.lan:8123".into(),
        token_file: token_file.clone(),
        discover: false,
        refresh_s: 30,
    };
    let e = HaBackend::new(&section).unwrap_err().to_string();
    assert!(
        e.starts_with(&format!(
            "[homeassistant] token_file {}: has mode 644",
            token_file.display()
        )),
        "{e}"
    );
    assert!(e.contains("chmod 640"), "{e}");
    std::fs::set_permissions(&token_file, std::fs::Permissions::from_mode(0o640)).unwrap();
    assert!(HaBackend::new(&section).is_ok());
}
