//! The one error type of this crate: what went wrong reading, writing or interpreting an event.

/// Which part of an event was being read when the stream ended or a limit was hit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// The JSON header line.
    Header,
    /// The `data_length` bytes of JSON data after the header.
    Data,
    /// The `payload_length` bytes of binary payload.
    Payload,
}

impl std::fmt::Display for Part {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Part::Header => "header line",
            Part::Data => "data block",
            Part::Payload => "payload",
        })
    }
}

/// Errors of the Wyoming codec and of the typed event helpers.
///
/// [`Error::is_recoverable`] tells whether the stream is still in step after a read error, so a
/// server can answer with an `error` event and go on reading the next event.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Reading from or writing to the underlying stream failed.
    #[error("wyoming stream I/O: {0}")]
    Io(#[from] std::io::Error),

    /// The stream ended inside an event (a clean end between events is `Ok(None)`, not an error).
    #[error("the stream ended inside the {part}: {}", eof_detail(*.got, *.expected))]
    UnexpectedEof {
        /// The part being read.
        part: Part,
        /// Bytes of that part received before the end.
        got: u64,
        /// Bytes announced for it (`None` for the header line, which ends at a newline).
        expected: Option<u64>,
    },

    /// A header line, data block or payload is longer than the reader's [`crate::Limits`].
    #[error("the {part} is {length} bytes, over the limit of {limit} bytes")]
    TooLong {
        /// The part that is too long.
        part: Part,
        /// Its length: as announced in the header, or for a header line, the bytes seen so far.
        length: u64,
        /// The configured limit.
        limit: usize,
    },

    /// The header line is not a JSON object.
    #[error("the header line is not a JSON object: {0}")]
    BadHeader(#[source] serde_json::Error),

    /// A header field is missing or has the wrong JSON type. Recoverable unless the field is one of
    /// the lengths: then it is not known how many bytes of the event follow.
    #[error("header field `{field}` {problem}")]
    BadHeaderField {
        /// The field name (`type`, `data`, `data_length`, `payload_length`).
        field: &'static str,
        /// What is wrong with it.
        problem: &'static str,
    },

    /// The data block is not a JSON object.
    #[error("the data block of a `{kind}` event is not a JSON object: {source}")]
    BadData {
        /// The event type from the header.
        kind: String,
        /// Why it does not parse (for valid JSON that is not an object, a custom message).
        source: serde_json::Error,
    },

    /// A typed helper was given an event of another type.
    #[error("expected a `{expected}` event, got `{got}`")]
    WrongType {
        /// The type the helper handles.
        expected: &'static str,
        /// The type of the event it was given.
        got: String,
    },

    /// An event's data does not have the fields its type needs (e.g. `audio-start` without `rate`).
    #[error("bad `{kind}` event data: {source}")]
    BadEventData {
        /// The event type.
        kind: &'static str,
        /// The field that is missing or of the wrong type, as serde reports it.
        source: serde_json::Error,
    },
}

impl Error {
    /// True when the reader is still positioned at the start of the next event, so reading can go
    /// on: a header line that is not a JSON object, is too long (the rest of the line is skipped) or
    /// has a bad `type` or `data` (the announced data and payload are skipped), or a data block that
    /// is not a JSON object (its payload is skipped too). The typed helpers' errors are about one
    /// event and never affect the stream.
    ///
    /// False for I/O errors, an end of stream inside an event, a bad `data_length` or
    /// `payload_length`, and an announced length over the limit: nothing more can be read in step.
    pub fn is_recoverable(&self) -> bool {
        match self {
            Error::BadHeaderField { field, .. } => !field.ends_with("_length"),
            Error::BadHeader(_) | Error::BadData { .. } => true,
            Error::TooLong { part, .. } => *part == Part::Header,
            Error::WrongType { .. } | Error::BadEventData { .. } => true,
            Error::Io(_) | Error::UnexpectedEof { .. } => false,
        }
    }
}

fn eof_detail(got: u64, expected: Option<u64>) -> String {
    match expected {
        Some(n) => format!("got {got} of {n} bytes"),
        None => format!("got {got} bytes and no newline"),
    }
}
