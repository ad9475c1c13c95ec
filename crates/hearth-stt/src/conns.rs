//! What bounds a TCP connection's hold on the server: the table of connections the accept loop
//! chooses from when every slot is taken, and the reader that gives up when a client sends
//! nothing for too long.
//!
//! The policy, in one place (the server's module doc says why):
//!
//! - A connection is **idle** while no audio stream is open on it and no transcription is
//!   running for it: it waits for its next event. A connection **streaming** has an
//!   `audio-start` without its `audio-stop`; one **transcribing** waits for the model.
//! - When every slot is taken and a client arrives, the connection idle the longest is closed
//!   for it (with an `error` event saying why). A streaming one is closed only if it is
//!   *stalled*: it has sent nothing for [`STALLED_STREAM`], or its stream has been open longer
//!   than the registry's longest stream (the audio limit in seconds plus [`STALLED_STREAM`]:
//!   longer than any utterance the server accepts takes to say, so a client trickling a few
//!   bytes every few seconds cannot hold a slot for ever). A transcribing one is never closed.
//! - If none can be closed, the newcomer waits until a slot frees or a connection turns idle.

use std::collections::HashMap;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, ReadBuf};
use tokio::sync::Notify;
use tokio::time::{Instant, Sleep};

/// A stream with nothing received for this long is *stalled*: a newcomer may take its slot
/// when every slot is taken. Live audio arrives every 20–100 ms (hearth sends 64 ms chunks,
/// Wyoming satellites about as often), and a client that sends a recorded utterance sends it
/// at once; 5 s without a byte inside a stream is a client that is not streaming.
pub const STALLED_STREAM: Duration = Duration::from_secs(5);

/// Where a connection's session is, as the accept loop sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Waiting for an event with no audio stream open.
    Idle,
    /// Inside an audio stream (`audio-start` received, `audio-stop` not yet).
    Streaming,
    /// Waiting for the model to transcribe its utterance.
    Transcribing,
}

#[derive(Debug)]
struct Entry {
    peer: SocketAddr,
    phase: Phase,
    /// When the phase was last set: after the connection's last event.
    since: Instant,
    /// When its audio stream opened, while it is streaming.
    stream_since: Option<Instant>,
    /// Chosen to make room; the session closes at its next look.
    evicted: bool,
    wake: Arc<Notify>,
}

#[derive(Debug, Default)]
struct Table {
    next_id: u64,
    conns: HashMap<u64, Entry>,
}

/// The TCP connections being served. Cheap to clone (shared).
#[derive(Debug, Clone)]
pub struct Registry {
    table: Arc<Mutex<Table>>,
    /// A stream open longer than this is stalled, however often it sends.
    longest_stream: Duration,
}

/// A connection closed to make room for a newcomer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Eviction {
    /// Its peer.
    pub peer: SocketAddr,
    /// Its phase when chosen (idle, or a stalled stream).
    pub phase: Phase,
    /// How long it had been in that phase.
    pub quiet_for: Duration,
}

impl Registry {
    /// An empty registry in which a stream open longer than `longest_stream` is stalled.
    pub fn new(longest_stream: Duration) -> Self {
        Registry {
            table: Arc::default(),
            longest_stream,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Table> {
        // A panic while holding this lock leaves only plain data behind: carry on with it.
        self.table
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Registers a new connection, idle from now.
    pub fn register(&self, peer: SocketAddr) -> ConnHandle {
        let wake = Arc::new(Notify::new());
        let mut table = self.lock();
        let id = table.next_id;
        table.next_id += 1;
        table.conns.insert(
            id,
            Entry {
                peer,
                phase: Phase::Idle,
                since: Instant::now(),
                stream_since: None,
                evicted: false,
                wake: wake.clone(),
            },
        );
        ConnHandle {
            id,
            registry: self.clone(),
            wake,
        }
    }

    /// Connections registered.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.lock().conns.len()
    }

    /// Chooses a connection to close for a newcomer (see the module doc), marks it and wakes
    /// it. `None` when none can be closed, or when one chosen earlier is still closing (its
    /// slot is on its way: one newcomer never closes two connections).
    pub fn evict_one(&self, now: Instant) -> Option<Eviction> {
        let mut table = self.lock();
        let candidates = table.conns.iter().map(|(&id, e)| Candidate {
            id,
            phase: e.phase,
            quiet: now.saturating_duration_since(e.since),
            stream_open: e
                .stream_since
                .map_or(Duration::ZERO, |t| now.saturating_duration_since(t)),
            evicted: e.evicted,
        });
        let id = pick_victim(candidates, self.longest_stream)?;
        let entry = table.conns.get_mut(&id)?;
        entry.evicted = true;
        entry.wake.notify_one();
        Some(Eviction {
            peer: entry.peer,
            phase: entry.phase,
            quiet_for: now.saturating_duration_since(entry.since),
        })
    }
}

/// A connection as [`pick_victim`] sees it.
#[derive(Debug, Clone, Copy)]
struct Candidate {
    id: u64,
    phase: Phase,
    /// Time in its phase: since its last event.
    quiet: Duration,
    /// How long its audio stream has been open (zero when not streaming).
    stream_open: Duration,
    /// Already chosen to make room.
    evicted: bool,
}

/// The connection to close for a newcomer: the longest idle; else the stalled stream quiet
/// the longest (stalled: quiet for [`STALLED_STREAM`], or open longer than `longest_stream`);
/// never one transcribing. `None` if an earlier eviction is still under way.
fn pick_victim(conns: impl Iterator<Item = Candidate>, longest_stream: Duration) -> Option<u64> {
    let mut idle: Option<(u64, Duration)> = None;
    let mut stalled: Option<(u64, Duration)> = None;
    for Candidate {
        id,
        phase,
        quiet,
        stream_open,
        evicted,
    } in conns
    {
        if evicted {
            return None;
        }
        let slot = match phase {
            Phase::Idle => &mut idle,
            Phase::Streaming if quiet >= STALLED_STREAM || stream_open > longest_stream => {
                &mut stalled
            }
            Phase::Streaming | Phase::Transcribing => continue,
        };
        // Ties go to the older id (the earlier connection).
        if slot.is_none_or(|(best_id, best)| quiet > best || (quiet == best && id < best_id)) {
            *slot = Some((id, quiet));
        }
    }
    idle.or(stalled).map(|(id, _)| id)
}

/// A session's entry in the [`Registry`]; dropping it removes the entry.
#[derive(Debug)]
pub struct ConnHandle {
    id: u64,
    registry: Registry,
    wake: Arc<Notify>,
}

impl ConnHandle {
    /// Sets the phase (from now). `false` if the connection was chosen to make room while it
    /// was idle or stalled: the session must close instead of going on.
    pub fn set_phase(&self, phase: Phase) -> bool {
        let mut table = self.registry.lock();
        match table.conns.get_mut(&self.id) {
            Some(entry) if !entry.evicted => {
                let now = Instant::now();
                entry.stream_since = match (phase, entry.stream_since) {
                    (Phase::Streaming, Some(opened)) => Some(opened),
                    (Phase::Streaming, None) => Some(now),
                    _ => None,
                };
                entry.phase = phase;
                entry.since = now;
                true
            }
            _ => false,
        }
    }

    /// Resolves once the connection has been chosen to make room.
    pub async fn evicted(&self) {
        loop {
            let notified = self.wake.notified();
            if self.is_evicted() {
                return;
            }
            notified.await;
        }
    }

    fn is_evicted(&self) -> bool {
        let table = self.registry.lock();
        table.conns.get(&self.id).is_none_or(|e| e.evicted)
    }
}

impl Drop for ConnHandle {
    fn drop(&mut self) {
        self.registry.lock().conns.remove(&self.id);
    }
}

/// The error an [`IdleReader`] fails a read with: no byte for its limit.
#[derive(Debug, thiserror::Error)]
#[error("no data from the client for {} s", .0.as_secs_f64())]
pub struct IdleTimeout(pub Duration);

/// A reader that fails a read with [`std::io::ErrorKind::TimedOut`] (wrapping [`IdleTimeout`])
/// once it has waited `limit` without receiving a byte. The clock runs only while a read
/// waits: time spent elsewhere (the session waiting for the model) does not count, and every
/// byte that arrives starts it again.
#[derive(Debug)]
pub struct IdleReader<R> {
    inner: R,
    limit: Duration,
    timer: Option<Pin<Box<Sleep>>>,
}

impl<R> IdleReader<R> {
    /// Wraps `inner`.
    pub fn new(inner: R, limit: Duration) -> Self {
        IdleReader {
            inner,
            limit,
            timer: None,
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for IdleReader<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = &mut *self;
        match Pin::new(&mut this.inner).poll_read(cx, buf) {
            Poll::Ready(result) => {
                this.timer = None;
                Poll::Ready(result)
            }
            Poll::Pending => {
                let limit = this.limit;
                let timer = this
                    .timer
                    .get_or_insert_with(|| Box::pin(tokio::time::sleep(limit)));
                match timer.as_mut().poll(cx) {
                    Poll::Ready(()) => {
                        this.timer = None;
                        Poll::Ready(Err(std::io::Error::new(
                            std::io::ErrorKind::TimedOut,
                            IdleTimeout(limit),
                        )))
                    }
                    Poll::Pending => Poll::Pending,
                }
            }
        }
    }
}

/// True for the error an [`IdleReader`] fails with.
pub fn is_idle_timeout(e: &std::io::Error) -> bool {
    e.kind() == std::io::ErrorKind::TimedOut
        && e.get_ref().is_some_and(|inner| inner.is::<IdleTimeout>())
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    const S: Duration = Duration::from_secs(1);

    const LONGEST: Duration = Duration::from_secs(65);

    fn conn(id: u64, phase: Phase, quiet_s: u32) -> Candidate {
        Candidate {
            id,
            phase,
            quiet: quiet_s * S,
            stream_open: if phase == Phase::Streaming {
                quiet_s * S
            } else {
                Duration::ZERO
            },
            evicted: false,
        }
    }

    fn pick(conns: &[Candidate]) -> Option<u64> {
        pick_victim(conns.iter().copied(), LONGEST)
    }

    #[test]
    fn the_longest_idle_goes_first_then_a_stalled_stream_never_a_transcription() {
        let idle = |id, s| conn(id, Phase::Idle, s);
        let streaming = |id, s| conn(id, Phase::Streaming, s);
        let transcribing = |id, s| conn(id, Phase::Transcribing, s);
        // The longest idle, even when a stream has been quiet longer.
        let conns = [idle(1, 3), idle(2, 9), streaming(3, 60), idle(4, 1)];
        assert_eq!(pick(&conns), Some(2));
        // No idle one: the stream quiet the longest, if quiet for STALLED_STREAM.
        let conns = [streaming(1, 6), streaming(2, 8), transcribing(3, 600)];
        assert_eq!(pick(&conns), Some(2));
        // Streams that are alive, and transcriptions: nobody.
        let conns = [streaming(1, 0), streaming(2, 4), transcribing(3, 600)];
        assert_eq!(pick(&conns), None);
        // Ties: the earlier connection.
        let conns = [idle(7, 2), idle(5, 2), idle(6, 2)];
        assert_eq!(pick(&conns), Some(5));
        // One already on its way out: wait for it.
        let mut leaving = idle(2, 1);
        leaving.evicted = true;
        assert_eq!(pick(&[idle(1, 9), leaving]), None);
    }

    #[test]
    fn a_stream_open_longer_than_any_utterance_is_stalled_however_often_it_sends() {
        // A trickle: a few bytes every 4 s, the stream open for 66 s.
        let trickle = Candidate {
            stream_open: LONGEST + S,
            quiet: 4 * S,
            ..conn(1, Phase::Streaming, 4)
        };
        let talking = Candidate {
            stream_open: 30 * S,
            quiet: Duration::ZERO,
            ..conn(2, Phase::Streaming, 0)
        };
        assert_eq!(pick(&[talking, trickle]), Some(1));
        // at the limit it is still a stream in time
        let at_limit = Candidate {
            stream_open: LONGEST,
            ..trickle
        };
        assert_eq!(pick(&[talking, at_limit]), None);
    }

    fn addr(port: u16) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], port))
    }

    #[tokio::test(start_paused = true)]
    async fn eviction_marks_wakes_and_frees_the_entry() {
        let registry = Registry::new(LONGEST);
        let old = registry.register(addr(1));
        tokio::time::advance(S).await;
        let busy = registry.register(addr(2));
        assert!(busy.set_phase(Phase::Transcribing));
        tokio::time::advance(S).await;
        let fresh = registry.register(addr(3));
        assert_eq!(registry.len(), 3);

        let eviction = registry.evict_one(Instant::now()).unwrap();
        assert_eq!(eviction.peer, addr(1));
        assert_eq!(eviction.phase, Phase::Idle);
        assert_eq!(eviction.quiet_for, 2 * S);
        // Woken, and refused a phase change: it must close.
        tokio::time::timeout(S, old.evicted()).await.unwrap();
        assert!(!old.set_phase(Phase::Streaming));
        // While it is closing, nobody else is chosen.
        assert_eq!(registry.evict_one(Instant::now()), None);
        drop(old);
        assert_eq!(registry.len(), 2);
        // Then the next idle one; never the transcribing one.
        assert_eq!(registry.evict_one(Instant::now()).unwrap().peer, addr(3));
        drop(fresh);
        assert_eq!(registry.evict_one(Instant::now()), None);
        assert!(busy.set_phase(Phase::Idle));
    }

    #[tokio::test(start_paused = true)]
    async fn a_stream_is_timed_from_its_start_not_its_last_chunk() {
        let registry = Registry::new(10 * S);
        let trickle = registry.register(addr(1));
        for _ in 0..3 {
            // a chunk every 4 s keeps it from being quiet for STALLED_STREAM
            assert!(trickle.set_phase(Phase::Streaming));
            tokio::time::advance(4 * S).await;
        }
        let eviction = registry.evict_one(Instant::now()).unwrap();
        assert_eq!((eviction.peer, eviction.phase), (addr(1), Phase::Streaming));
        // a new stream on another connection starts its own clock
        let next = registry.register(addr(2));
        drop(trickle);
        assert!(next.set_phase(Phase::Streaming));
        tokio::time::advance(4 * S).await;
        assert!(next.set_phase(Phase::Transcribing));
        assert!(next.set_phase(Phase::Idle));
        assert!(next.set_phase(Phase::Streaming));
        tokio::time::advance(4 * S).await;
        assert_eq!(registry.evict_one(Instant::now()), None);
    }

    #[tokio::test(start_paused = true)]
    async fn an_idle_reader_times_out_only_while_waiting() {
        let (mut client, server) = tokio::io::duplex(64);
        let mut reader = IdleReader::new(server, 10 * S);
        let mut buf = [0u8; 8];
        // Bytes that come within the limit restart the clock.
        for _ in 0..3 {
            tokio::time::advance(9 * S).await;
            client.write_all(b"x").await.unwrap();
            assert_eq!(reader.read(&mut buf).await.unwrap(), 1);
        }
        // Time that passes while nobody reads does not count...
        tokio::time::advance(60 * S).await;
        let started = Instant::now();
        // ...but 10 s of waiting without a byte does.
        let err = reader.read(&mut buf).await.unwrap_err();
        assert!(is_idle_timeout(&err), "{err:?}");
        assert_eq!(started.elapsed(), 10 * S);
        assert!(err.to_string().contains("10 s"), "{err}");
    }
}
