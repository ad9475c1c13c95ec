//! Reading and writing events on byte streams, framed as the Wyoming protocol frames them:
//!
//! ```text
//! {"type": "...", "data": {...}, "data_length": N, "payload_length": M, "version": "..."}\n
//! <N bytes: a JSON object, merged on top of the header's data>
//! <M bytes: binary payload>
//! ```
//!
//! Every field but `type` is optional. [`EventReader`] reads with [`Limits`] (never allocating
//! for more than it has received, and never more than a limit) and is cancel-safe;
//! [`write_event`] writes as the reference implementation does: the data in a data block,
//! lengths and `version` in the header.

use serde_json::{Map, Value};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWrite, AsyncWriteExt};

use crate::error::{Error, Part};
use crate::event::Event;

/// The `version` this codec writes in every header: the release of the reference implementation
/// (the `wyoming` Python package) whose framing and events this crate follows and is tested against.
pub const PROTOCOL_VERSION: &str = "1.10.2";

/// Bytes taken into memory at once for a data block or payload before more has arrived.
const INITIAL_CAPACITY: usize = 64 * 1024;

/// Upper bounds for what [`EventReader`] accepts. A longer header line, data block or payload is
/// an [`Error::TooLong`]: the reader never holds more than these in memory for one event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Longest header line, in bytes, without the newline.
    pub max_header: usize,
    /// Longest data block (`data_length`), in bytes.
    pub max_data: usize,
    /// Longest payload (`payload_length`), in bytes.
    pub max_payload: usize,
}

impl Default for Limits {
    /// 1 MiB header line (peers that put all data in the header), 8 MiB data block (an `info` of a
    /// server with hundreds of voices), 16 MiB payload (30 s of 48 kHz 16-bit stereo in one chunk,
    /// with room to spare).
    fn default() -> Self {
        Limits {
            max_header: 1024 * 1024,
            max_data: 8 * 1024 * 1024,
            max_payload: 16 * 1024 * 1024,
        }
    }
}

/// Where the reader is inside the current event. Kept in the reader between calls, so a
/// cancelled [`EventReader::read_event`] loses nothing.
#[derive(Debug)]
enum Partial {
    /// Reading a header line. `discarded` counts the bytes skipped once the line went over the
    /// limit (the rest of the line is then read and dropped).
    Header { line: Vec<u8>, discarded: u64 },
    /// Reading the data block and the payload announced by a parsed header.
    Body(Body),
}

#[derive(Debug)]
struct Body {
    kind: String,
    data: Map<String, Value>,
    data_len: usize,
    data_buf: Vec<u8>,
    payload_len: usize,
    payload_buf: Vec<u8>,
    /// Payload bytes consumed (equal to `payload_buf.len()` unless the payload is being skipped).
    payload_read: usize,
    /// An error found in the header or data; the rest of the event is skipped, then it is returned.
    failed: Option<Error>,
}

impl Partial {
    fn new_header() -> Self {
        Partial::Header {
            line: Vec::new(),
            discarded: 0,
        }
    }
}

/// Reads Wyoming events from a buffered byte stream.
///
/// [`read_event`](Self::read_event) is cancel-safe: the progress of a partly received event is
/// kept in the reader, so it can be used in `tokio::select!` and the next call goes on where the
/// cancelled one stopped. After an error that is not [recoverable](Error::is_recoverable), stop
/// reading: the stream is out of step.
#[derive(Debug)]
pub struct EventReader<R> {
    inner: R,
    limits: Limits,
    partial: Partial,
}

impl<R: AsyncBufRead + Unpin> EventReader<R> {
    /// A reader with the default [`Limits`].
    pub fn new(inner: R) -> Self {
        Self::with_limits(inner, Limits::default())
    }

    /// A reader with the given limits.
    pub fn with_limits(inner: R, limits: Limits) -> Self {
        EventReader {
            inner,
            limits,
            partial: Partial::new_header(),
        }
    }

    /// The limits in force.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// The underlying stream.
    pub fn get_ref(&self) -> &R {
        &self.inner
    }

    /// The underlying stream, mutably (reading from it directly puts this reader out of step).
    pub fn get_mut(&mut self) -> &mut R {
        &mut self.inner
    }

    /// The underlying stream; a partly read event is dropped.
    pub fn into_inner(self) -> R {
        self.inner
    }

    /// True when part of an event has been read and the rest is still awaited (a header line
    /// without its newline, or a header whose data block or payload has not all arrived). A
    /// server's idle timeout uses it to tell a quiet client from one stalled inside an event.
    pub fn is_mid_event(&self) -> bool {
        match &self.partial {
            Partial::Header { line, discarded } => !line.is_empty() || *discarded > 0,
            Partial::Body(_) => true,
        }
    }

    /// The next event, or `None` when the stream ends cleanly between events.
    ///
    /// Blank lines between events are skipped, and a `\r` before the newline is ignored.
    pub async fn read_event(&mut self) -> Result<Option<Event>, Error> {
        loop {
            let buf = self.inner.fill_buf().await?;
            let step = match &mut self.partial {
                Partial::Header { line, discarded } => {
                    header_step(buf, line, discarded, &self.limits)
                }
                Partial::Body(body) => body_step(buf, body),
            };
            match step {
                Step::More(consumed) => self.inner.consume(consumed),
                Step::Eof => {
                    let partial = std::mem::replace(&mut self.partial, Partial::new_header());
                    return match partial {
                        Partial::Header { line, discarded }
                            if line.is_empty() && discarded == 0 =>
                        {
                            Ok(None)
                        }
                        Partial::Header { line, discarded } => Err(Error::UnexpectedEof {
                            part: Part::Header,
                            got: line.len() as u64 + discarded,
                            expected: None,
                        }),
                        Partial::Body(body) => Err(body.eof_error()),
                    };
                }
                Step::LineDone(consumed) => {
                    self.inner.consume(consumed);
                    let partial = std::mem::replace(&mut self.partial, Partial::new_header());
                    let Partial::Header { line, discarded } = partial else {
                        continue;
                    };
                    if discarded > 0 {
                        return Err(Error::TooLong {
                            part: Part::Header,
                            length: discarded,
                            limit: self.limits.max_header,
                        });
                    }
                    match parse_header(&line, &self.limits) {
                        Ok(None) => continue, // a blank line
                        Ok(Some(body)) => self.partial = Partial::Body(body),
                        Err(e) => return Err(e),
                    }
                }
                Step::BodyDone(consumed) => self.inner.consume(consumed),
            }
            if let Partial::Body(body) = &self.partial {
                if body.is_complete() {
                    let partial = std::mem::replace(&mut self.partial, Partial::new_header());
                    if let Partial::Body(body) = partial {
                        return body.finish().map(Some);
                    }
                }
            }
        }
    }
}

/// What one look at the buffered bytes did.
enum Step {
    /// Consumed this many bytes; the current part needs more.
    More(usize),
    /// The stream ended (the buffer was empty).
    Eof,
    /// Consumed this many bytes, through the header line's newline.
    LineDone(usize),
    /// Consumed this many bytes of the body (which may now be complete).
    BodyDone(usize),
}

fn header_step(buf: &[u8], line: &mut Vec<u8>, discarded: &mut u64, limits: &Limits) -> Step {
    if buf.is_empty() {
        return Step::Eof;
    }
    let (chunk, done) = match buf.iter().position(|&b| b == b'\n') {
        Some(i) => (&buf[..i], Some(i + 1)),
        None => (buf, None),
    };
    if *discarded > 0 || line.len() + chunk.len() > limits.max_header {
        // Over the limit: drop what was kept and skip to the end of the line.
        *discarded += (line.len() + chunk.len()) as u64;
        *line = Vec::new();
    } else {
        line.extend_from_slice(chunk);
    }
    match done {
        Some(consumed) => Step::LineDone(consumed),
        None => Step::More(buf.len()),
    }
}

fn body_step(buf: &[u8], body: &mut Body) -> Step {
    if buf.is_empty() {
        return Step::Eof;
    }
    let mut consumed = 0;
    if body.data_buf.len() < body.data_len {
        let take = (body.data_len - body.data_buf.len()).min(buf.len());
        body.data_buf.extend_from_slice(&buf[..take]);
        consumed += take;
        if body.data_buf.len() == body.data_len {
            body.merge_data();
        }
    }
    let rest = &buf[consumed..];
    if body.payload_read < body.payload_len && !rest.is_empty() {
        let take = (body.payload_len - body.payload_read).min(rest.len());
        if body.failed.is_none() {
            body.payload_buf.extend_from_slice(&rest[..take]);
        }
        body.payload_read += take;
        consumed += take;
    }
    Step::BodyDone(consumed)
}

/// Parses a header line into the body still to read; `Ok(None)` for a blank line.
fn parse_header(line: &[u8], limits: &Limits) -> Result<Option<Body>, Error> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    let value: Value = serde_json::from_slice(line).map_err(Error::BadHeader)?;
    let Value::Object(mut header) = value else {
        return Err(Error::BadHeader(serde::de::Error::custom(
            "valid JSON, but not an object",
        )));
    };
    // Lengths first: if they are sound, the event's bytes can be skipped whatever else is wrong.
    let data_len = length_field(&header, "data_length", limits.max_data, Part::Data)?;
    let payload_len = length_field(&header, "payload_length", limits.max_payload, Part::Payload)?;
    let mut failed = None;
    let kind = match header.remove("type") {
        Some(Value::String(kind)) => kind,
        Some(_) => {
            failed = Some(Error::BadHeaderField {
                field: "type",
                problem: "is not a string",
            });
            String::new()
        }
        None => {
            failed = Some(Error::BadHeaderField {
                field: "type",
                problem: "is missing",
            });
            String::new()
        }
    };
    let data = match header.remove("data") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(data)) => data,
        Some(_) => {
            failed.get_or_insert(Error::BadHeaderField {
                field: "data",
                problem: "is not an object",
            });
            Map::new()
        }
    };
    Ok(Some(Body {
        kind,
        data,
        data_len,
        data_buf: Vec::with_capacity(data_len.min(INITIAL_CAPACITY)),
        payload_len,
        payload_buf: Vec::with_capacity(payload_len.min(INITIAL_CAPACITY)),
        payload_read: 0,
        failed,
    }))
}

/// A length field of the header: absent or null is 0; otherwise a non-negative integer within
/// `limit`.
fn length_field(
    header: &Map<String, Value>,
    field: &'static str,
    limit: usize,
    part: Part,
) -> Result<usize, Error> {
    let length = match header.get(field) {
        None | Some(Value::Null) => return Ok(0),
        Some(value) => value.as_u64().ok_or(Error::BadHeaderField {
            field,
            problem: "is not a non-negative integer",
        })?,
    };
    match usize::try_from(length) {
        Ok(n) if n <= limit => Ok(n),
        _ => Err(Error::TooLong {
            part,
            length,
            limit,
        }),
    }
}

impl Body {
    fn is_complete(&self) -> bool {
        self.data_buf.len() == self.data_len && self.payload_read == self.payload_len
    }

    /// Merges the complete data block on top of the header's data.
    fn merge_data(&mut self) {
        if self.data_len == 0 || self.failed.is_some() {
            return;
        }
        match serde_json::from_slice::<Value>(&self.data_buf) {
            Ok(Value::Object(block)) => self.data.extend(block),
            Ok(_) => {
                self.failed = Some(Error::BadData {
                    kind: self.kind.clone(),
                    source: serde::de::Error::custom("valid JSON, but not an object"),
                })
            }
            Err(source) => {
                self.failed = Some(Error::BadData {
                    kind: self.kind.clone(),
                    source,
                })
            }
        }
    }

    fn finish(self) -> Result<Event, Error> {
        if let Some(e) = self.failed {
            return Err(e);
        }
        Ok(Event {
            kind: self.kind,
            data: self.data,
            payload: (self.payload_len > 0).then_some(self.payload_buf),
        })
    }

    fn eof_error(&self) -> Error {
        if self.data_buf.len() < self.data_len {
            Error::UnexpectedEof {
                part: Part::Data,
                got: self.data_buf.len() as u64,
                expected: Some(self.data_len as u64),
            }
        } else {
            Error::UnexpectedEof {
                part: Part::Payload,
                got: self.payload_read as u64,
                expected: Some(self.payload_len as u64),
            }
        }
    }
}

/// Writes one event and flushes: a header line with `type`, `version` and the lengths, then the
/// data as a JSON block (if there is any data), then the payload (if it is not empty).
pub async fn write_event<W: AsyncWrite + Unpin + ?Sized>(
    writer: &mut W,
    event: &Event,
) -> Result<(), Error> {
    let data = if event.data.is_empty() {
        Vec::new()
    } else {
        serde_json::to_vec(&event.data).map_err(std::io::Error::other)?
    };
    let payload = event.payload.as_deref().unwrap_or_default();

    let mut header = Map::new();
    header.insert("type".into(), Value::String(event.kind.clone()));
    header.insert("version".into(), Value::String(PROTOCOL_VERSION.into()));
    if !data.is_empty() {
        header.insert("data_length".into(), data.len().into());
    }
    if !payload.is_empty() {
        header.insert("payload_length".into(), payload.len().into());
    }
    let mut head = serde_json::to_vec(&header).map_err(std::io::Error::other)?;
    head.push(b'\n');
    head.extend_from_slice(&data);

    writer.write_all(&head).await?;
    if !payload.is_empty() {
        writer.write_all(payload).await?;
    }
    writer.flush().await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use tokio::io::{AsyncWriteExt, BufReader};

    /// What `wyoming` 1.10.2 (Python) writes for an `audio-chunk` with a 4-byte payload and a
    /// `transcript`, byte for byte.
    const PYTHON_BYTES: &[u8] = b"{\"type\": \"audio-chunk\", \"version\": \"1.10.2\", \"data_length\": 61, \"payload_length\": 4}\n{\"rate\": 16000, \"width\": 2, \"channels\": 1, \"timestamp\": null}\x01\x02\x03\x04{\"type\": \"transcript\", \"version\": \"1.10.2\", \"data_length\": 38}\n{\"text\": \"turn on the kitchen light.\"}";

    fn map(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(m) => m,
            other => panic!("not an object: {other}"),
        }
    }

    fn reader(bytes: &[u8]) -> EventReader<&[u8]> {
        EventReader::new(bytes)
    }

    async fn read_all(bytes: &[u8]) -> Vec<Result<Event, Error>> {
        let mut r = reader(bytes);
        let mut out = Vec::new();
        loop {
            match r.read_event().await {
                Ok(Some(e)) => out.push(Ok(e)),
                Ok(None) => break,
                Err(e) => {
                    let stop = !e.is_recoverable();
                    out.push(Err(e));
                    if stop {
                        break;
                    }
                }
            }
        }
        out
    }

    async fn written(event: &Event) -> Vec<u8> {
        let mut out = Vec::new();
        write_event(&mut out, event).await.unwrap();
        out
    }

    #[tokio::test]
    async fn reads_what_the_python_package_writes() {
        let mut r = reader(PYTHON_BYTES);
        let chunk = r.read_event().await.unwrap().unwrap();
        assert_eq!(chunk.kind, "audio-chunk");
        assert_eq!(
            chunk.data,
            map(json!({"rate": 16000, "width": 2, "channels": 1, "timestamp": null}))
        );
        assert_eq!(chunk.payload.as_deref(), Some(&[1u8, 2, 3, 4][..]));
        let transcript = r.read_event().await.unwrap().unwrap();
        assert_eq!(transcript.kind, "transcript");
        assert_eq!(transcript.data["text"], "turn on the kitchen light.");
        assert_eq!(transcript.payload, None);
        assert!(r.read_event().await.unwrap().is_none());
    }

    #[tokio::test]
    async fn writes_header_data_block_and_payload() {
        let event = Event::new("audio-chunk")
            .with_data(map(json!({"rate": 16000, "width": 2, "channels": 1})))
            .with_payload(vec![9, 8, 7]);
        let bytes = written(&event).await;
        let newline = bytes.iter().position(|&b| b == b'\n').unwrap();
        let header: Value = serde_json::from_slice(&bytes[..newline]).unwrap();
        let data = br#"{"rate":16000,"width":2,"channels":1}"#;
        assert_eq!(
            header,
            json!({"type": "audio-chunk", "version": PROTOCOL_VERSION,
                   "data_length": data.len(), "payload_length": 3})
        );
        assert_eq!(&bytes[newline + 1..newline + 1 + data.len()], data);
        assert_eq!(&bytes[newline + 1 + data.len()..], &[9, 8, 7]);

        // No data, no payload: a bare header line.
        let bytes = written(&Event::new("describe")).await;
        assert_eq!(
            bytes,
            format!("{{\"type\":\"describe\",\"version\":\"{PROTOCOL_VERSION}\"}}\n").as_bytes()
        );
    }

    #[tokio::test]
    async fn round_trips() {
        let events = [
            Event::new("describe"),
            Event::new("transcript").with_data(map(json!({"text": "héllo\nworld ✓"}))),
            Event::new("audio-chunk")
                .with_data(map(
                    json!({"rate": 22050, "width": 2, "channels": 2, "timestamp": 5}),
                ))
                .with_payload((0..=255u8).cycle().take(10_000).collect()),
            Event::new("x").with_payload(b"\n\n{not json}\n".to_vec()),
            Event::new("nested").with_data(map(json!({"a": {"b": [1, 2, {"c": null}]}}))),
        ];
        let mut bytes = Vec::new();
        for e in &events {
            write_event(&mut bytes, e).await.unwrap();
        }
        let read: Vec<Event> = read_all(&bytes)
            .await
            .into_iter()
            .map(Result::unwrap)
            .collect();
        assert_eq!(read, events);
    }

    #[tokio::test]
    async fn floats_read_back_to_the_value_written() {
        // Each is written in its shortest form, which a parser that rounds approximately
        // reads back one unit in the last place off (these three did without
        // serde_json's `float_roundtrip`).
        let floats: [f64; 3] = [
            1.0715660391465826e-75,
            -1.81996730402717e-179,
            -1.603964615428183e143,
        ];
        for f in floats {
            let event = Event::new("t").with_data(map(json!({ "x": f })));
            let read = reader(&written(&event).await)
                .read_event()
                .await
                .unwrap()
                .unwrap();
            assert_eq!(
                read.data["x"].as_f64().map(f64::to_bits),
                Some(f.to_bits()),
                "{f:e}"
            );
        }
    }

    #[tokio::test]
    async fn data_in_the_header_and_in_a_block_merge_block_winning() {
        // Data only in the header (how early peers wrote it).
        let only_header = b"{\"type\":\"transcript\",\"data\":{\"text\":\"hi\"}}\n";
        let e = reader(only_header).read_event().await.unwrap().unwrap();
        assert_eq!(e.data, map(json!({"text": "hi"})));

        // Both: the block is merged on top of the header's data.
        let block = br#"{"text":"from block","language":"en"}"#;
        let mut bytes = format!(
            "{{\"type\":\"transcript\",\"data\":{{\"text\":\"from header\",\"extra\":1}},\"data_length\":{}}}\n",
            block.len()
        )
        .into_bytes();
        bytes.extend_from_slice(block);
        let e = reader(&bytes).read_event().await.unwrap().unwrap();
        assert_eq!(
            e.data,
            map(json!({"text": "from block", "extra": 1, "language": "en"}))
        );

        // `data: null`, zero and null lengths are all "nothing".
        let e =
            reader(b"{\"type\":\"t\",\"data\":null,\"data_length\":0,\"payload_length\":null}\n")
                .read_event()
                .await
                .unwrap()
                .unwrap();
        assert_eq!(e, Event::new("t"));
    }

    #[tokio::test]
    async fn reads_one_byte_at_a_time() {
        let mut r = EventReader::new(BufReader::with_capacity(1, PYTHON_BYTES));
        let a = r.read_event().await.unwrap().unwrap();
        let b = r.read_event().await.unwrap().unwrap();
        assert_eq!(a.payload.as_deref(), Some(&[1u8, 2, 3, 4][..]));
        assert_eq!(b.data["text"], "turn on the kitchen light.");
        assert!(r.read_event().await.unwrap().is_none());
    }

    #[tokio::test]
    async fn partial_arrival_and_cancelled_reads_lose_nothing() {
        let (client, server) = tokio::io::duplex(64);
        let mut r = EventReader::new(BufReader::new(server));
        let (mut write_half, mut keep) = (client, Vec::new());
        let event = Event::new("audio-chunk")
            .with_data(map(json!({"rate": 16000, "width": 2, "channels": 1})))
            .with_payload(vec![7; 300]);
        write_event(&mut keep, &event).await.unwrap();
        assert!(!r.is_mid_event());

        // Feed the bytes in pieces that cut the header, the data and the payload; after each
        // piece, poll the read once and drop it (as a `select!` that picks another branch would).
        for piece in keep.chunks(37) {
            write_half.write_all(piece).await.unwrap();
            tokio::select! {
                biased;
                done = r.read_event() => {
                    // Only the last piece may complete the event.
                    assert_eq!(done.unwrap().unwrap(), event);
                    assert!(!r.is_mid_event(), "between events again");
                    drop(write_half);
                    assert!(r.read_event().await.unwrap().is_none());
                    return;
                }
                _ = std::future::ready(()) => assert!(r.is_mid_event()),
            }
        }
        panic!("the event never completed");
    }

    #[tokio::test]
    async fn blank_lines_and_crlf_are_tolerated() {
        let bytes = b"\n\r\n  \n{\"type\":\"ping\"}\r\n\n{\"type\":\"pong\"}\n";
        let kinds: Vec<String> = read_all(bytes)
            .await
            .into_iter()
            .map(|e| e.unwrap().kind)
            .collect();
        assert_eq!(kinds, ["ping", "pong"]);
    }

    #[tokio::test]
    async fn garbage_header_is_reported_and_reading_goes_on() {
        let bytes = b"hello there\n[1,2]\n{\"data\":{}}\n{\"type\":7}\n{\"type\":\"t\",\"data\":[1]}\n{\"type\":\"ok\"}\n";
        let results = read_all(bytes).await;
        assert_eq!(results.len(), 6, "{results:?}");
        assert!(matches!(results[0], Err(Error::BadHeader(_))));
        assert!(matches!(results[1], Err(Error::BadHeader(_))));
        assert!(matches!(
            results[2],
            Err(Error::BadHeaderField {
                field: "type",
                problem: "is missing"
            })
        ));
        assert!(matches!(
            results[3],
            Err(Error::BadHeaderField { field: "type", .. })
        ));
        assert!(matches!(
            results[4],
            Err(Error::BadHeaderField { field: "data", .. })
        ));
        assert!(results[..5]
            .iter()
            .all(|r| r.as_ref().unwrap_err().is_recoverable()));
        assert_eq!(results[5].as_ref().unwrap().kind, "ok");
        let msg = results[2].as_ref().unwrap_err().to_string();
        assert_eq!(msg, "header field `type` is missing");
    }

    #[tokio::test]
    async fn a_bad_type_still_skips_the_events_bytes() {
        // The lengths are sound, so the data and payload are skipped and the next event is read.
        let bytes =
            b"{\"type\":[],\"data_length\":2,\"payload_length\":3}\n{}\n\nx{\"type\":\"next\"}\n";
        let results = read_all(bytes).await;
        assert!(matches!(
            results[0],
            Err(Error::BadHeaderField { field: "type", .. })
        ));
        assert_eq!(results[1].as_ref().unwrap().kind, "next");
        assert_eq!(results.len(), 2);
    }

    #[tokio::test]
    async fn bad_data_block_is_reported_and_its_payload_skipped() {
        let bytes = b"{\"type\":\"a\",\"data_length\":5,\"payload_length\":2}\n[1,2]\n\n{\"type\":\"b\",\"data_length\":3}\n{x}{\"type\":\"c\"}\n";
        let results = read_all(bytes).await;
        assert_eq!(results.len(), 3, "{results:?}");
        assert!(matches!(&results[0], Err(Error::BadData { kind, .. }) if kind == "a"));
        assert!(matches!(&results[1], Err(Error::BadData { kind, .. }) if kind == "b"));
        assert!(results[0].as_ref().unwrap_err().is_recoverable());
        assert_eq!(results[2].as_ref().unwrap().kind, "c");
    }

    #[tokio::test]
    async fn bad_lengths_stop_the_stream() {
        for header in [
            "{\"type\":\"a\",\"data_length\":-1}\n",
            "{\"type\":\"a\",\"payload_length\":1.5}\n",
            "{\"type\":\"a\",\"payload_length\":\"4\"}\n",
        ] {
            let err = reader(header.as_bytes()).read_event().await.unwrap_err();
            assert!(
                matches!(err, Error::BadHeaderField { field, .. } if field.ends_with("_length")),
                "{header}: {err}"
            );
            assert!(!err.is_recoverable());
        }
    }

    #[tokio::test]
    async fn oversized_lengths_are_refused_before_reading() {
        let limits = Limits {
            max_header: 100,
            max_data: 10,
            max_payload: 20,
        };
        // Announced lengths far over the limit (up to u64::MAX) never allocate.
        for (header, part, length) in [
            (
                format!("{{\"type\":\"a\",\"payload_length\":{}}}\n", u64::MAX),
                Part::Payload,
                u64::MAX,
            ),
            (
                "{\"type\":\"a\",\"payload_length\":21}\n".to_string(),
                Part::Payload,
                21,
            ),
            (
                "{\"type\":\"a\",\"data_length\":11}\n".to_string(),
                Part::Data,
                11,
            ),
        ] {
            let mut r = EventReader::with_limits(header.as_bytes(), limits);
            let err = r.read_event().await.unwrap_err();
            match &err {
                Error::TooLong {
                    part: p,
                    length: l,
                    limit,
                } => {
                    assert_eq!((*p, *l), (part, length));
                    assert_eq!(*limit, if part == Part::Data { 10 } else { 20 });
                }
                other => panic!("{header}: {other}"),
            }
            assert!(!err.is_recoverable());
        }
        // At the limit is fine.
        let mut bytes = b"{\"type\":\"a\",\"data_length\":10,\"payload_length\":20}\n".to_vec();
        bytes.extend_from_slice(br#"{"k":"vv"}"#);
        bytes.extend_from_slice(&[0; 20]);
        let e = EventReader::with_limits(&bytes[..], limits)
            .read_event()
            .await
            .unwrap()
            .unwrap();
        assert_eq!(e.payload.map(|p| p.len()), Some(20));
    }

    #[tokio::test]
    async fn overlong_header_line_is_skipped() {
        let limits = Limits {
            max_header: 32,
            ..Limits::default()
        };
        let long = format!(
            "{{\"type\":\"a\",\"data\":{{\"x\":\"{}\"}}}}\n",
            "y".repeat(5000)
        );
        let bytes = format!("{long}{{\"type\":\"after\"}}\n");
        // One byte at a time too, so the limit is crossed in the middle of buffered reads.
        for capacity in [1, 7, 8192] {
            let mut r = EventReader::with_limits(
                BufReader::with_capacity(capacity, bytes.as_bytes()),
                limits,
            );
            let err = r.read_event().await.unwrap_err();
            assert!(
                matches!(err, Error::TooLong { part: Part::Header, length, limit: 32 } if length == long.len() as u64 - 1),
                "{err}"
            );
            assert!(err.is_recoverable());
            assert_eq!(r.read_event().await.unwrap().unwrap().kind, "after");
        }
    }

    #[tokio::test]
    async fn eof_inside_an_event_is_an_error() {
        let full = PYTHON_BYTES;
        let header_end = full.iter().position(|&b| b == b'\n').unwrap() + 1;
        // In the header line, in the data block, in the payload.
        let cases = [
            (10, Part::Header, 10, None),
            (header_end + 5, Part::Data, 5, Some(61)),
            (header_end + 61 + 3, Part::Payload, 3, Some(4)),
        ];
        for (cut, part, got, expected) in cases {
            let err = reader(&full[..cut]).read_event().await.unwrap_err();
            match err {
                Error::UnexpectedEof {
                    part: p,
                    got: g,
                    expected: x,
                } => assert_eq!((p, g, x), (part, got, expected), "cut at {cut}"),
                other => panic!("cut at {cut}: {other}"),
            }
        }
        let err = reader(&full[..header_end + 61 + 3])
            .read_event()
            .await
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "the stream ended inside the payload: got 3 of 4 bytes"
        );
        assert!(!err.is_recoverable());
        // A clean end between events is not an error.
        assert!(reader(b"").read_event().await.unwrap().is_none());
    }
}
