//! [`Event`]: one Wyoming message, as it is on the wire (type, JSON data, optional binary payload).

use serde_json::{Map, Value};

/// One Wyoming event: its type (`audio-chunk`, `transcript`, ...), its JSON data and an optional
/// binary payload (PCM audio for `audio-chunk`).
///
/// An empty payload is the same as none on the wire: the writer leaves out `payload_length` for
/// it, as the reference implementation does, and the reader gives `None` for `payload_length: 0`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Event {
    /// The event type, the header's `type` field.
    pub kind: String,
    /// The event data: the header's `data` merged with the data block (the block's keys win).
    pub data: Map<String, Value>,
    /// The binary payload, if any.
    pub payload: Option<Vec<u8>>,
}

impl Event {
    /// An event of this type with no data and no payload.
    pub fn new(kind: impl Into<String>) -> Self {
        Event {
            kind: kind.into(),
            data: Map::new(),
            payload: None,
        }
    }

    /// This event with `data` as its data.
    pub fn with_data(mut self, data: Map<String, Value>) -> Self {
        self.data = data;
        self
    }

    /// This event with `payload` as its payload.
    pub fn with_payload(mut self, payload: Vec<u8>) -> Self {
        self.payload = Some(payload);
        self
    }

    /// True if this event is of type `kind`.
    pub fn is(&self, kind: &str) -> bool {
        self.kind == kind
    }
}
