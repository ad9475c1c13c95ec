//! Events built from the fuzzer's bytes (any type string, a data map of any JSON keys and
//! values up to 32 levels deep, an optional payload of any bytes), written one after another
//! with `write_event`, then read back with `EventReader`. Must hold:
//! - no panic, and writing to memory never fails;
//! - with the default limits, through a buffer of a data-chosen size, the events read are
//!   the events written (an empty payload reads as none, as on the wire), then a clean end;
//! - with small limits, the first event alone reads back equal when its header line, data
//!   block and payload are within them, and otherwise as `TooLong` naming the first part
//!   over its limit (header, then data, then payload), never as anything else.
//!
//! Floats compare exactly: the codec reads with serde_json's `float_roundtrip` (in this
//! build `hearth`'s jsonschema turns it on too, so this target alone would not catch its loss:
//! `floats_read_back_to_the_value_written` in crates/wyoming does).
#![no_main]

#[path = "shared/runtime.rs"]
mod shared_runtime;

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use serde_json::{Map, Value};
use shared_runtime::runtime;
use tokio::io::{AsyncBufRead, BufReader};
use wyoming::{write_event, Error, Event, EventReader, Limits, Part};

/// Deeper values are cut to null (serde_json reads at most 128 levels).
const MAX_DEPTH: usize = 32;

const SMALL: Limits = Limits {
    max_header: 120,
    max_data: 80,
    max_payload: 200,
};

#[derive(Debug, Arbitrary)]
enum Json {
    Null,
    Bool(bool),
    Int(i64),
    Uint(u64),
    Float(f64),
    Str(String),
    Array(Vec<Json>),
    Object(Vec<(String, Json)>),
}

#[derive(Debug, Arbitrary)]
struct EventIn {
    kind: String,
    data: Vec<(String, Json)>,
    payload: Option<Vec<u8>>,
}

#[derive(Debug, Arbitrary)]
struct Input {
    capacity: u8,
    events: Vec<EventIn>,
}

fn value(j: &Json, depth: usize) -> Value {
    if depth >= MAX_DEPTH {
        return Value::Null;
    }
    match j {
        Json::Null => Value::Null,
        Json::Bool(b) => Value::Bool(*b),
        Json::Int(i) => Value::from(*i),
        Json::Uint(u) => Value::from(*u),
        // NaN and infinities have no JSON form
        Json::Float(f) => serde_json::Number::from_f64(*f).map_or(Value::Null, Value::Number),
        Json::Str(s) => Value::String(s.clone()),
        Json::Array(items) => Value::Array(items.iter().map(|i| value(i, depth + 1)).collect()),
        Json::Object(entries) => Value::Object(object(entries, depth + 1)),
    }
}

fn object(entries: &[(String, Json)], depth: usize) -> Map<String, Value> {
    entries
        .iter()
        .map(|(k, v)| (k.clone(), value(v, depth)))
        .collect()
}

fn event(e: &EventIn) -> Event {
    Event {
        kind: e.kind.clone(),
        data: object(&e.data, 0),
        payload: e.payload.clone(),
    }
}

/// As it reads back: an empty payload is none on the wire.
fn as_read(mut e: Event) -> Event {
    if e.payload.as_ref().is_some_and(Vec::is_empty) {
        e.payload = None;
    }
    e
}

async fn written(e: &Event) -> Vec<u8> {
    let mut bytes = Vec::new();
    if let Err(err) = write_event(&mut bytes, e).await {
        panic!("writing {e:?} to memory failed: {err}");
    }
    bytes
}

async fn read_all<R: AsyncBufRead + Unpin>(inner: R) -> Result<Vec<Event>, Error> {
    let mut reader = EventReader::new(inner);
    let mut out = Vec::new();
    while let Some(e) = reader.read_event().await? {
        out.push(e);
    }
    Ok(out)
}

/// The lengths `bytes` (one written event) announces: header line, data block, payload.
fn lengths(bytes: &[u8]) -> (usize, u64, u64) {
    let newline = bytes
        .iter()
        .position(|&b| b == b'\n')
        .unwrap_or_else(|| panic!("no newline after the header in {bytes:?}"));
    let header: Map<String, Value> = serde_json::from_slice(&bytes[..newline])
        .unwrap_or_else(|e| panic!("the header written is not a JSON object ({e}): {bytes:?}"));
    let len = |k: &str| header.get(k).and_then(Value::as_u64).unwrap_or(0);
    (newline, len("data_length"), len("payload_length"))
}

fuzz_target!(|input: Input| {
    let events: Vec<Event> = input.events.iter().map(event).collect();
    let capacity = 1 + usize::from(input.capacity);
    runtime().block_on(async {
        let mut stream = Vec::new();
        for e in &events {
            stream.extend(written(e).await);
        }
        let back = read_all(BufReader::with_capacity(capacity, &stream[..])).await;
        let expected: Vec<Event> = events.iter().cloned().map(as_read).collect();
        match back {
            Ok(back) => assert_eq!(back, expected, "through a {capacity}-byte buffer"),
            Err(e) => panic!("{expected:?} written as {stream:?} reads back as an error: {e}"),
        }

        let Some(first) = events.first() else {
            return;
        };
        let bytes = written(first).await;
        let (header, data, payload) = lengths(&bytes);
        let over = if header > SMALL.max_header {
            Some((Part::Header, header as u64))
        } else if data > SMALL.max_data as u64 {
            Some((Part::Data, data))
        } else if payload > SMALL.max_payload as u64 {
            Some((Part::Payload, payload))
        } else {
            None
        };
        let got = EventReader::with_limits(&bytes[..], SMALL)
            .read_event()
            .await;
        match (over, got) {
            (None, Ok(Some(e))) => assert_eq!(e, as_read(first.clone())),
            (
                Some((part, length)),
                Err(Error::TooLong {
                    part: p,
                    length: l,
                    limit: _,
                }),
            ) if (p, l) == (part, length) => {}
            (over, got) => panic!("small limits, {over:?} over: read {got:?} from {bytes:?}"),
        }
    });
});
