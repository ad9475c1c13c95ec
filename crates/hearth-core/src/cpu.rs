//! Two cores shared: speech first.
//!
//! On a two-core board the model and the voice each get half the machine when they run at
//! once, and a reply's first sentence then takes about three times as long to synthesise
//! (a 13-character "You're welcome!" in 223–296 ms beside the model, 52–80 ms alone, in the
//! spoken session's logs) while the model writes sentences nobody hears yet. So while a
//! reply's first sentence is being synthesised ([`speaking`]; Tts holds it for a sentence
//! that comes after a quiet second), the model's engine waits before each of its steps
//! ([`give_way`]): the rest of the reply is written while the first plays. The later
//! sentences are synthesised beside the model, while audio plays: holding the model back
//! for them too moved its work into the playback, where the echo canceller's capture fell
//! behind on the debug-built end-to-end tests.
//!
//! Work done ahead of a turn (the next prompt warmed, [`crate::agent`]'s warm-up) gives way
//! to recognition as well ([`recognising`], [`wait_ahead`]): a warm-up of a history just cut
//! back (500 tokens) beside whisper once took 24 s, and the utterance 19 s to be heard (1 s
//! alone), and every request after it fell behind (the daily session, 2 cores).
//!
//! One process-wide fact, like the CPU itself: the voice holds it, the engine reads it.
//! A wait is bounded ([`GIVE_WAY_MAX`], [`AHEAD_WAIT_MAX`]), so a synthesis or recognition
//! that hangs slows the model, never stops it.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Syntheses under way.
static SPEAKING: AtomicUsize = AtomicUsize::new(0);

/// Utterances being recognised.
static RECOGNISING: AtomicUsize = AtomicUsize::new(0);

/// The longest one step of the model waits for speech.
pub const GIVE_WAY_MAX: Duration = Duration::from_millis(600);

/// The longest one step of work done ahead waits for the voice (an utterance's recognition
/// is bounded by `hearth::stt::SttConfig::utterance_timeout`, 30 s by default).
pub const AHEAD_WAIT_MAX: Duration = Duration::from_secs(30);

/// How often a waiting step looks again.
const POLL: Duration = Duration::from_millis(2);

/// Held while a sentence is synthesised or an utterance recognised; dropping it ends the
/// hold.
#[must_use = "the hold ends when this is dropped"]
pub struct Hold(&'static AtomicUsize);

impl Drop for Hold {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

fn hold(count: &'static AtomicUsize) -> Hold {
    count.fetch_add(1, Ordering::SeqCst);
    Hold(count)
}

/// A sentence is being synthesised until the returned hold is dropped.
pub fn speaking() -> Hold {
    hold(&SPEAKING)
}

/// An utterance is being recognised until the returned hold is dropped (by a recogniser on
/// this machine or not: only work done ahead waits for it).
pub fn recognising() -> Hold {
    hold(&RECOGNISING)
}

/// Whether speech is being synthesised now.
pub fn is_speaking() -> bool {
    SPEAKING.load(Ordering::SeqCst) > 0
}

/// Whether an utterance is being recognised now.
fn is_recognising() -> bool {
    RECOGNISING.load(Ordering::SeqCst) > 0
}

/// Blocks while speech is being synthesised, at most [`GIVE_WAY_MAX`]; how long it waited.
pub fn give_way() -> Duration {
    wait_while(is_speaking, GIVE_WAY_MAX)
}

/// For work done ahead of a turn: blocks while speech is synthesised or an utterance
/// recognised, until `cancelled` (a turn wants the engine) or [`AHEAD_WAIT_MAX`]; how long
/// it waited.
pub fn wait_ahead(cancelled: impl Fn() -> bool) -> Duration {
    wait_while(
        || (is_speaking() || is_recognising()) && !cancelled(),
        AHEAD_WAIT_MAX,
    )
}

fn wait_while(busy: impl Fn() -> bool, max: Duration) -> Duration {
    let start = Instant::now();
    while busy() && start.elapsed() < max {
        std::thread::sleep(POLL);
    }
    start.elapsed()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The holds are process-wide: these tests take turns.
    static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

    #[test]
    fn the_model_waits_while_speech_is_synthesised_and_no_longer() {
        let _serial = SERIAL
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        // nothing synthesised: no wait
        assert!(give_way() < Duration::from_millis(1));
        let hold = speaking();
        let waiter = std::thread::spawn(give_way);
        std::thread::sleep(Duration::from_millis(50));
        drop(hold);
        let waited = waiter.join().unwrap();
        assert!(waited >= Duration::from_millis(45), "{waited:?}");
        assert!(waited < GIVE_WAY_MAX, "{waited:?}");
        assert!(!is_speaking());
        // a hold never dropped: the wait ends at the bound
        let stuck = speaking();
        let waited = give_way();
        assert!(waited >= GIVE_WAY_MAX, "{waited:?}");
        drop(stuck);
    }

    #[test]
    fn work_done_ahead_waits_while_an_utterance_is_recognised_until_a_turn_wants_the_engine() {
        let cancel = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let cancelled = {
            let cancel = cancel.clone();
            move || cancel.load(Ordering::SeqCst)
        };
        let _serial = SERIAL
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        // work already cancelled never waits
        let hold = recognising();
        assert!(wait_ahead(|| true) < Duration::from_millis(1));
        // a turn's steps do not wait for recognition
        assert!(give_way() < Duration::from_millis(1));
        let waiter = std::thread::spawn({
            let cancelled = cancelled.clone();
            move || wait_ahead(cancelled)
        });
        std::thread::sleep(Duration::from_millis(50));
        drop(hold);
        let waited = waiter.join().unwrap();
        assert!(waited >= Duration::from_millis(45), "{waited:?}");
        assert!(waited < AHEAD_WAIT_MAX, "{waited:?}");
        // still recognising, but a turn cancels the work: the wait ends
        let hold = recognising();
        let waiter = std::thread::spawn(move || wait_ahead(cancelled));
        std::thread::sleep(Duration::from_millis(50));
        cancel.store(true, Ordering::SeqCst);
        let waited = waiter.join().unwrap();
        assert!(waited >= Duration::from_millis(45), "{waited:?}");
        assert!(waited < Duration::from_secs(5), "{waited:?}");
        drop(hold);
    }
}
