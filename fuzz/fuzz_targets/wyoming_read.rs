//! Any bytes as a Wyoming stream (the first byte picks a read buffer size and the limits),
//! read with `EventReader` event by event until the end or an error the stream cannot
//! recover from. Must hold:
//! - no panic, and no hang (each call consumes bytes or ends);
//! - the limits are kept: no event has a payload over `max_payload`, a type over
//!   `max_header`, or data larger than its header line and data block could hold
//!   (re-serialised compactly, JSON only grows where a float takes its shortest form, e.g.
//!   `1e15` → `1000000000000000.0`: under 5×);
//! - the same bytes read through a small buffer (headers, data blocks and payloads arriving
//!   in pieces) give the same events and the same errors as read all at once;
//! - every event read, written back with `write_event`, reads again (default limits) to an
//!   equal event, and nothing after it.
#![no_main]

#[path = "shared/runtime.rs"]
mod shared_runtime;

use libfuzzer_sys::fuzz_target;
use shared_runtime::runtime;
use tokio::io::{AsyncBufRead, BufReader};
use wyoming::{write_event, Event, EventReader, Limits};

/// Small enough that fuzz inputs (4 KiB by default) cross every limit.
const SMALL: Limits = Limits {
    max_header: 160,
    max_data: 96,
    max_payload: 256,
};

/// Every result until a clean end or an unrecoverable error; errors as their `Debug` text.
async fn read_all<R: AsyncBufRead + Unpin>(inner: R, limits: Limits) -> Vec<Result<Event, String>> {
    let mut reader = EventReader::with_limits(inner, limits);
    let mut out = Vec::new();
    loop {
        match reader.read_event().await {
            Ok(Some(event)) => out.push(Ok(event)),
            Ok(None) => break,
            Err(e) => {
                let stop = !e.is_recoverable();
                out.push(Err(format!("{e:?}")));
                if stop {
                    break;
                }
            }
        }
    }
    out
}

fuzz_target!(|data: &[u8]| {
    let Some((&knobs, stream)) = data.split_first() else {
        return;
    };
    let capacity = 1 + usize::from(knobs & 0x1f);
    let limits = if knobs & 0x80 == 0 {
        SMALL
    } else {
        Limits::default()
    };
    runtime().block_on(async {
        let whole = read_all(stream, limits).await;
        let pieces = read_all(BufReader::with_capacity(capacity, stream), limits).await;
        assert_eq!(whole, pieces, "read through a {capacity}-byte buffer");

        for event in whole.iter().filter_map(|r| r.as_ref().ok()) {
            let payload = event.payload.as_deref().unwrap_or_default();
            assert!(
                payload.len() <= limits.max_payload,
                "payload over the limit"
            );
            assert!(
                event.payload.as_ref().is_none_or(|p| !p.is_empty()),
                "empty payload is None"
            );
            assert!(
                event.kind.len() <= limits.max_header,
                "type over the header limit"
            );
            let data_len = serde_json::to_vec(&event.data).map_or(0, |d| d.len());
            assert!(
                data_len <= 5 * (limits.max_header + limits.max_data),
                "data of {data_len} bytes cannot come from a header and block within the limits"
            );

            let mut bytes = Vec::new();
            if let Err(e) = write_event(&mut bytes, event).await {
                panic!("an event that was read cannot be written: {e}");
            }
            let again = read_all(&bytes[..], Limits::default()).await;
            assert_eq!(again, [Ok(event.clone())], "round trip through {bytes:?}");
        }
    });
});
