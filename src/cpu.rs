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
//! One process-wide fact, like the CPU itself: the voice holds it, the engine reads it.
//! A wait is bounded ([`GIVE_WAY_MAX`]), so a synthesis that hangs slows the model, never
//! stops it.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Syntheses under way.
static SPEAKING: AtomicUsize = AtomicUsize::new(0);

/// The longest one step of the model waits for speech.
pub(crate) const GIVE_WAY_MAX: Duration = Duration::from_millis(600);

/// How often a waiting step looks again.
const POLL: Duration = Duration::from_millis(2);

/// Held while a sentence is synthesised; dropping it ends the hold.
#[must_use = "the hold ends when this is dropped"]
pub struct Speaking(());

impl Drop for Speaking {
    fn drop(&mut self) {
        SPEAKING.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A sentence is being synthesised until the returned hold is dropped.
pub fn speaking() -> Speaking {
    SPEAKING.fetch_add(1, Ordering::SeqCst);
    Speaking(())
}

/// Whether speech is being synthesised now.
pub(crate) fn is_speaking() -> bool {
    SPEAKING.load(Ordering::SeqCst) > 0
}

/// Blocks while speech is being synthesised, at most [`GIVE_WAY_MAX`]; how long it waited.
pub(crate) fn give_way() -> Duration {
    let start = Instant::now();
    while is_speaking() && start.elapsed() < GIVE_WAY_MAX {
        std::thread::sleep(POLL);
    }
    start.elapsed()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_model_waits_while_speech_is_synthesised_and_no_longer() {
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
}
