//! The remote engine's HTTP side: blocking requests with ureq (its connections pooled, a
//! pooled one the server closed is never reused), each bounded by the connect and read
//! timeouts, and every failure made an [`EngineError`] that names the server and the fix.
//!
//! The API key is read once here, from `[agent.openai] api_key_file` (a file hearth alone may
//! read, `secret::check_private`), sent as `Authorization: Bearer`, and never logged or
//! shown: [`Client`] has no `Debug` that prints it.

use std::io::Read;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::sse::{self, Decoder, Event};
use crate::llm::EngineError;

/// A request's answer read whole (an error body, the models, the props) is at most this.
const MAX_BODY: u64 = 4 << 20;

/// What a streamed answer may bring in all (a completion of `max_tokens` is ~300 bytes a
/// token as llama-cpp-python sends it): past it the server is sending garbage.
const MAX_STREAM: usize = 16 << 20;

/// Whether a stream goes on after an event.
pub(crate) enum Flow {
    More,
    Enough,
}

/// A server's address and how to talk to it.
pub(crate) struct Client {
    agent: ureq::Agent,
    /// The server's root (`http://host:port`): no trailing slash, no `/v1`.
    pub root: String,
    key: Option<String>,
    pub connect: Duration,
    pub read: Duration,
}

/// `url` as a root to put paths after: trimmed, without a trailing `/` or `/v1` (OpenAI
/// clients are often given the `/v1` base; llama.cpp's and llama-cpp-python's own endpoints,
/// `/props` and `/extras/tokenize`, are outside it).
pub(crate) fn root_of(url: &str) -> String {
    let u = url.trim().trim_end_matches('/');
    u.strip_suffix("/v1").unwrap_or(u).to_string()
}

/// The key in `file`: one word, in a file only hearth may read.
fn read_key(file: &Path) -> Result<String, EngineError> {
    crate::secret::read_word(file, "put the server's API key in it, alone").map_err(|problem| {
        EngineError::ApiKey {
            file: file.display().to_string(),
            problem,
        }
    })
}

impl Client {
    /// A client of `url`, the key read from `key_file` (if any).
    pub fn new(
        url: &str,
        key_file: Option<&Path>,
        connect: Duration,
        read: Duration,
    ) -> Result<Client, EngineError> {
        let root = root_of(url);
        let key = key_file.map(read_key).transpose()?;
        if key.is_some() && crate::secret::in_clear(&root) {
            tracing::warn!(
                url = %root,
                "[agent.openai] url is plain http to another machine: the API key crosses the network in clear; use https://"
            );
        }
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .max_redirects(0)
            // a stream must come as it is written, not compressed in blocks
            .accept_encoding("identity")
            .user_agent(concat!("hearth/", env!("CARGO_PKG_VERSION")))
            .timeout_connect(Some(connect))
            .timeout_per_read(Some(read))
            .timeout_recv_response(Some(read))
            .tls_config(
                ureq::tls::TlsConfig::builder()
                    .root_certs(ureq::tls::RootCerts::PlatformVerifier)
                    .build(),
            )
            .build()
            .new_agent();
        Ok(Client {
            agent,
            root,
            key,
            connect,
            read,
        })
    }

    /// The client of the server `cfg` names, with its key and timeouts.
    pub fn of(cfg: &super::OpenAiConfig) -> Result<Client, EngineError> {
        Client::new(
            &cfg.url,
            cfg.api_key_file.as_deref(),
            cfg.connect_timeout,
            cfg.read_timeout,
        )
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.root)
    }

    fn with_key<B>(&self, req: ureq::RequestBuilder<B>) -> ureq::RequestBuilder<B> {
        match &self.key {
            Some(k) => req.header("Authorization", format!("Bearer {k}")),
            None => req,
        }
    }

    /// `GET path`, all of it within `within` when given.
    fn get(
        &self,
        path: &str,
        within: Option<Duration>,
    ) -> Result<ureq::http::Response<ureq::Body>, EngineError> {
        let req = self.with_key(self.agent.get(self.url(path)));
        let req = req.config().timeout_global(within).build();
        req.call().map_err(|e| self.transport(&e))
    }

    /// `POST path` with a JSON body, all of it within `within` when given.
    fn post(
        &self,
        path: &str,
        body: &Value,
        within: Option<Duration>,
    ) -> Result<ureq::http::Response<ureq::Body>, EngineError> {
        let req = self.with_key(self.agent.post(self.url(path)));
        let req = req
            .header("Content-Type", "application/json")
            .config()
            .timeout_global(within)
            .build();
        req.send(body.to_string()).map_err(|e| self.transport(&e))
    }

    /// A transport failure as the agent says it.
    fn transport(&self, e: &ureq::Error) -> EngineError {
        use ureq::Timeout as T;
        let down = |reason: String| EngineError::Unreachable {
            url: self.root.clone(),
            reason,
        };
        match e {
            ureq::Error::Timeout(T::Connect | T::Resolve) => down(format!(
                "no connection within {} s (`[agent.openai] connect_timeout_s`)",
                secs(self.connect)
            )),
            ureq::Error::Timeout(_) => self.timeout(),
            ureq::Error::HostNotFound => down("its host name does not resolve".into()),
            ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::ConnectionRefused => {
                down("connection refused: nothing listens there".into())
            }
            ureq::Error::Io(io) => down(io.to_string()),
            ureq::Error::Protocol(p) => EngineError::BadAnswer {
                url: self.root.clone(),
                what: format!("answered with broken HTTP ({p})"),
            },
            other => down(other.to_string()),
        }
    }

    fn timeout(&self) -> EngineError {
        EngineError::Timeout {
            url: self.root.clone(),
            secs: secs(self.read),
        }
    }

    /// The answer to a request that did not succeed (`status` is not 2xx).
    fn refusal(&self, path: &str, status: u16, body: &str) -> EngineError {
        match status {
            401 | 403 => EngineError::Refused {
                url: self.root.clone(),
                status,
            },
            404 => EngineError::NoEndpoint {
                url: self.root.clone(),
                path: path.to_string(),
            },
            _ => EngineError::BadAnswer {
                url: self.root.clone(),
                what: format!(
                    "answered HTTP {status} to {path}: {}",
                    sse::error_text(body)
                ),
            },
        }
    }

    /// A whole answer's JSON (2xx), or the error it is.
    fn json(
        &self,
        path: &str,
        resp: ureq::http::Response<ureq::Body>,
    ) -> Result<Value, EngineError> {
        let status = resp.status().as_u16();
        let text = resp
            .into_body()
            .with_config()
            .limit(MAX_BODY)
            .read_to_string()
            .map_err(|e| self.transport(&e))?;
        if !(200..300).contains(&status) {
            return Err(self.refusal(path, status, &text));
        }
        serde_json::from_str(&text).map_err(|_| EngineError::BadAnswer {
            url: self.root.clone(),
            what: format!("answered {path} with {} (not JSON)", sse::snippet(&text)),
        })
    }

    /// The model ids `GET /v1/models` lists (the server answers and takes the key).
    pub fn models(&self, within: Duration) -> Result<Vec<String>, EngineError> {
        let path = "/v1/models";
        let v = self.json(path, self.get(path, Some(within))?)?;
        Ok(v.get("data")
            .and_then(Value::as_array)
            .map(|models| {
                models
                    .iter()
                    .filter_map(|m| m.get("id").and_then(Value::as_str).map(str::to_string))
                    .collect()
            })
            .unwrap_or_default())
    }

    /// llama.cpp's `GET /props` (its chat template, context, end tokens), or `None` where
    /// the server has none (llama-cpp-python).
    pub fn props(&self, within: Duration) -> Result<Option<Value>, EngineError> {
        let path = "/props";
        let resp = self.get(path, Some(within))?;
        if resp.status().as_u16() == 404 {
            return Ok(None);
        }
        self.json(path, resp).map(Some)
    }

    /// How many tokens `text` is in the server's tokenizer: llama-cpp-python's
    /// `/extras/tokenize/count`, else llama.cpp's `/tokenize`. `Ok(None)`: neither is there.
    pub fn count_tokens(
        &self,
        text: &str,
        within: Duration,
        way: &mut Tokenizer,
    ) -> Result<Option<usize>, EngineError> {
        if *way == Tokenizer::Unknown || *way == Tokenizer::Extras {
            let path = "/extras/tokenize/count";
            let resp = self.post(path, &serde_json::json!({ "input": text }), Some(within))?;
            if resp.status().as_u16() != 404 {
                let v = self.json(path, resp)?;
                *way = Tokenizer::Extras;
                return count_of(&v, "count")
                    .map(Some)
                    .ok_or_else(|| self.odd(path, &v));
            }
        }
        if *way == Tokenizer::Unknown || *way == Tokenizer::LlamaCpp {
            let path = "/tokenize";
            let body =
                serde_json::json!({ "content": text, "add_special": false, "parse_special": true });
            let resp = self.post(path, &body, Some(within))?;
            if resp.status().as_u16() != 404 {
                let v = self.json(path, resp)?;
                *way = Tokenizer::LlamaCpp;
                return count_of(&v, "tokens")
                    .map(Some)
                    .ok_or_else(|| self.odd(path, &v));
            }
        }
        *way = Tokenizer::None;
        Ok(None)
    }

    fn odd(&self, path: &str, v: &Value) -> EngineError {
        EngineError::BadAnswer {
            url: self.root.clone(),
            what: format!("answered {path} with {}", sse::snippet(&v.to_string())),
        }
    }

    /// A streamed completion: each event to `each` as it comes, until `[DONE]`, `each` says
    /// enough, or `stop()` says so between reads (then the connection is dropped: the
    /// server sees it closed). An error the server sends, a stream that ends before
    /// `[DONE]`, garbage, and no data for the read timeout (keep-alive comments do not
    /// count) are errors.
    pub fn stream(
        &self,
        path: &str,
        body: &Value,
        stop: impl Fn() -> bool,
        mut each: impl FnMut(sse::Chunk) -> Flow,
    ) -> Result<(), EngineError> {
        let resp = self.post(path, body, None)?;
        let status = resp.status().as_u16();
        let content_type = resp
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string();
        if !(200..300).contains(&status) {
            let text = resp
                .into_body()
                .with_config()
                .limit(MAX_BODY)
                .read_to_string()
                .unwrap_or_default();
            return Err(self.refusal(path, status, &text));
        }
        if !content_type.starts_with("text/event-stream") {
            return Err(EngineError::BadAnswer {
                url: self.root.clone(),
                what: format!(
                    "answered a streamed completion with {content_type:?}, not text/event-stream"
                ),
            });
        }
        let garbage = |what: String| EngineError::BadAnswer {
            url: self.root.clone(),
            what,
        };
        let mut reader = resp.into_body().into_reader();
        let mut decoder = Decoder::new();
        let mut buf = vec![0u8; 8192];
        let (mut total, mut last_data) = (0usize, Instant::now());
        loop {
            if stop() {
                return Ok(());
            }
            let n = match reader.read(&mut buf) {
                Ok(n) => n,
                Err(e) => return Err(self.broken(&e)),
            };
            let events = if n == 0 {
                decoder.finish()
            } else {
                total += n;
                if total > MAX_STREAM {
                    return Err(garbage(format!(
                        "sent over {} MiB for one completion",
                        MAX_STREAM >> 20
                    )));
                }
                decoder.push(&buf[..n])
            };
            let events = events.map_err(garbage)?;
            if events.is_empty() && last_data.elapsed() > self.read {
                // only keep-alive comments for longer than the read timeout
                return Err(self.timeout());
            }
            for e in events {
                last_data = Instant::now();
                match e {
                    Event::Chunk(c) => {
                        if let Flow::Enough = each(c) {
                            return Ok(());
                        }
                    }
                    Event::Done => return Ok(()),
                    Event::Error(message) => {
                        return Err(garbage(format!("reported an error: {message}")))
                    }
                }
            }
            if n == 0 {
                return Err(garbage(
                    "closed the stream before its end (no [DONE]); its log says why (a prompt longer than its context ends so)"
                        .into(),
                ));
            }
        }
    }

    /// A read that failed mid-stream.
    fn broken(&self, e: &std::io::Error) -> EngineError {
        let inner = e.get_ref().and_then(|i| i.downcast_ref::<ureq::Error>());
        match inner {
            Some(u) => self.transport(u),
            None if e.kind() == std::io::ErrorKind::TimedOut => self.timeout(),
            None => EngineError::Unreachable {
                url: self.root.clone(),
                reason: format!("the connection broke in the middle of the answer ({e})"),
            },
        }
    }
}

/// Which tokenize endpoint the server has (learned at the first count).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tokenizer {
    Unknown,
    /// llama-cpp-python's `/extras/tokenize/count`.
    Extras,
    /// llama.cpp's `/tokenize`.
    LlamaCpp,
    /// Neither: counts are estimated.
    None,
}

/// `key` of `v` as a count: a number, or the length of an array.
fn count_of(v: &Value, key: &str) -> Option<usize> {
    match v.get(key)? {
        Value::Array(a) => Some(a.len()),
        n => n.as_u64().and_then(|n| usize::try_from(n).ok()),
    }
}

/// Whole seconds of `d`, at least 1 (for messages).
pub(crate) fn secs(d: Duration) -> u64 {
    d.as_secs().max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_root_is_the_url_without_v1() {
        for (url, root) in [
            ("http://gpu-box:8080", "http://gpu-box:8080"),
            ("http://gpu-box:8080/", "http://gpu-box:8080"),
            (" http://gpu-box:8080/v1/ ", "http://gpu-box:8080"),
            ("https://llm.example/api/v1", "https://llm.example/api"),
        ] {
            assert_eq!(root_of(url), root, "{url}");
        }
    }

    #[test]
    fn counts_come_as_numbers_or_token_lists() {
        assert_eq!(
            count_of(&serde_json::json!({"count": 12}), "count"),
            Some(12)
        );
        assert_eq!(
            count_of(&serde_json::json!({"tokens": [1, 2, 3]}), "tokens"),
            Some(3)
        );
        assert_eq!(
            count_of(&serde_json::json!({"tokens": "x"}), "tokens"),
            None
        );
    }

    fn client(url: &str) -> Client {
        Client::new(url, None, Duration::from_secs(2), Duration::from_secs(5)).unwrap()
    }

    #[test]
    fn refusals_name_the_server_and_what_it_said() {
        let c = client("http://gpu-box:8080/v1");
        let e = c.refusal("/v1/completions", 401, "").to_string();
        assert!(
            e.contains("http://gpu-box:8080") && e.contains("api_key_file"),
            "{e}"
        );
        let e = c.refusal("/v1/completions", 404, "Not Found").to_string();
        assert!(e.contains("has no /v1/completions"), "{e}");
        let body =
            r#"{"error":{"message":"Requested tokens (5001) exceed context window of 4096"}}"#;
        let e = c.refusal("/v1/completions", 500, body).to_string();
        assert!(
            e.contains("HTTP 500") && e.contains("exceed context window"),
            "{e}"
        );
    }

    #[test]
    fn a_key_file_must_be_one_private_word() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("hearth-openai-key-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let write = |name: &str, text: &str, mode: u32| {
            let p = dir.join(name);
            std::fs::write(&p, text).unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
            p
        };
        let ok = write("ok", "sk-123\n", 0o600);
        assert_eq!(read_key(&ok).unwrap(), "sk-123");
        let open = write("open", "sk-123\n", 0o644);
        let e = read_key(&open).unwrap_err().to_string();
        assert!(e.contains("api_key_file") && e.contains("chmod"), "{e}");
        let two = write("two", "sk-1 sk-2\n", 0o600);
        let e = read_key(&two).unwrap_err().to_string();
        assert!(
            e.contains("one word") && e.contains("[agent.openai] api_key_file"),
            "{e}"
        );
        let empty = write("empty", "\n", 0o600);
        assert!(read_key(&empty).unwrap_err().to_string().contains("empty"));
        let e = read_key(&dir.join("missing")).unwrap_err().to_string();
        assert!(e.contains("cannot be read"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
