//! Running under systemd (`Type=notify`): readiness, status lines and the watchdog.
//!
//! Without `$NOTIFY_SOCKET` (not under systemd) every message is a no-op. With
//! `WatchdogSec=` set, systemd passes `$WATCHDOG_USEC`; [`spawn_watchdog`] then pings at
//! half that interval, but only after every probe answered in time: an actor that hangs
//! (its mailbox no longer processed) stops the pings, and systemd restarts the unit.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use sd_notify::NotifyState;

/// One liveness check: resolves `Ok` when the component answered.
pub(crate) type Probe =
    Arc<dyn Fn() -> Pin<Box<dyn Future<Output = Result<(), String>> + Send>> + Send + Sync>;

/// Where notifications go (systemd's socket; a recorder in tests).
pub(crate) type Notifier = Arc<dyn Fn(&[NotifyState]) + Send + Sync>;

/// The notifier that writes to `$NOTIFY_SOCKET` (nothing when it is unset).
pub(crate) fn systemd_notifier() -> Notifier {
    Arc::new(|states: &[NotifyState]| {
        if let Err(e) = sd_notify::notify(states) {
            tracing::warn!(error = %e, "cannot notify systemd");
        }
    })
}

/// True when started by systemd with a notify socket.
pub(crate) fn under_systemd() -> bool {
    std::env::var_os("NOTIFY_SOCKET").is_some()
}

/// `READY=1` with a status line.
pub fn ready(status: &str) {
    (systemd_notifier())(&[NotifyState::Ready, NotifyState::Status(status)]);
}

/// A `STATUS=` line (what `systemctl status` shows).
pub fn status(status: &str) {
    (systemd_notifier())(&[NotifyState::Status(status)]);
}

/// `STOPPING=1`.
pub fn stopping() {
    (systemd_notifier())(&[NotifyState::Stopping, NotifyState::Status("stopping")]);
}

/// The watchdog's settings.
#[derive(Clone)]
pub struct Watchdog {
    /// Time between checks (half of systemd's `WatchdogSec`).
    pub interval: Duration,
    /// Time each probe has to answer.
    pub probe_timeout: Duration,
    /// The components checked, by name.
    pub probes: Vec<(&'static str, Probe)>,
    /// Where pings go.
    pub notify: Notifier,
}

impl Watchdog {
    /// Probes and interval from the environment: None unless systemd asked for a watchdog
    /// (`$WATCHDOG_USEC`, for this process).
    pub fn from_env(probes: Vec<(&'static str, Probe)>) -> Option<Watchdog> {
        let period = sd_notify::watchdog_enabled()?;
        let interval = (period / 2).max(Duration::from_millis(100));
        Some(Watchdog {
            interval,
            probe_timeout: interval.min(Duration::from_secs(5)),
            probes,
            notify: systemd_notifier(),
        })
    }

    /// Check every probe once: the names of those that failed or did not answer in time.
    pub async fn check(&self) -> Vec<String> {
        let checks = self.probes.iter().map(|(name, probe)| {
            let fut = probe();
            let timeout = self.probe_timeout;
            async move {
                match tokio::time::timeout(timeout, fut).await {
                    Ok(Ok(())) => None,
                    Ok(Err(e)) => Some(format!("{name} ({e})")),
                    Err(_) => Some(format!(
                        "{name} (no answer within {} ms)",
                        timeout.as_millis()
                    )),
                }
            }
        });
        futures_util::future::join_all(checks)
            .await
            .into_iter()
            .flatten()
            .collect()
    }
}

/// Ping the watchdog every `interval` while every probe answers. A failed check sends no
/// ping and says which component is stuck (log and `STATUS=`).
pub fn spawn_watchdog(dog: Watchdog) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        tracing::info!(
            interval_ms = dog.interval.as_millis() as u64,
            probes = dog.probes.len(),
            "systemd watchdog on"
        );
        let mut failing = false;
        loop {
            tokio::time::sleep(dog.interval).await;
            let failed = dog.check().await;
            if failed.is_empty() {
                if failing {
                    tracing::info!("every component answers again");
                    (dog.notify)(&[NotifyState::Status("running")]);
                    failing = false;
                }
                (dog.notify)(&[NotifyState::Watchdog]);
            } else {
                let what = failed.join(", ");
                tracing::error!(not_answering = %what, "watchdog not pinged: a component is stuck");
                let status = format!("not answering: {what}");
                (dog.notify)(&[NotifyState::Status(&status)]);
                failing = true;
            }
        }
    })
}

/// A probe that asks `check` and maps its error to text.
pub fn probe<F, Fut, E>(check: F) -> Probe
where
    F: Fn() -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<(), E>> + Send + 'static,
    E: std::fmt::Display,
{
    Arc::new(move || {
        let fut = check();
        Box::pin(async move { fut.await.map_err(|e| e.to_string()) })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Mutex;

    fn recorder() -> (Notifier, Arc<Mutex<Vec<String>>>) {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let s = seen.clone();
        let notify: Notifier = Arc::new(move |states: &[NotifyState]| {
            let mut s = s.lock().unwrap();
            for st in states {
                s.push(st.to_string());
            }
        });
        (notify, seen)
    }

    #[tokio::test]
    async fn pings_only_while_every_probe_answers() {
        let hung = Arc::new(AtomicBool::new(false));
        let h = hung.clone();
        let stuck = probe(move || {
            let h = h.clone();
            async move {
                if h.load(Ordering::SeqCst) {
                    // a component whose mailbox is no longer processed
                    std::future::pending::<()>().await;
                }
                Ok::<(), String>(())
            }
        });
        let fine = probe(|| async { Ok::<(), String>(()) });
        let (notify, seen) = recorder();
        let dog = Watchdog {
            interval: Duration::from_millis(40),
            probe_timeout: Duration::from_millis(30),
            probes: vec![("agent", stuck), ("tools", fine)],
            notify,
        };
        assert!(dog.check().await.is_empty());
        let task = spawn_watchdog(dog.clone());
        tokio::time::sleep(Duration::from_millis(300)).await;
        let pings = |s: &Mutex<Vec<String>>| {
            s.lock()
                .unwrap()
                .iter()
                .filter(|m| *m == "WATCHDOG=1")
                .count()
        };
        let before = pings(&seen);
        assert!(before >= 3, "{:?}", seen.lock().unwrap());

        hung.store(true, Ordering::SeqCst);
        let failed = dog.check().await;
        assert_eq!(failed.len(), 1);
        assert!(failed[0].starts_with("agent (no answer"), "{failed:?}");
        tokio::time::sleep(Duration::from_millis(120)).await;
        let at_hang = pings(&seen);
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert_eq!(pings(&seen), at_hang, "no ping while the agent hangs");
        assert!(seen
            .lock()
            .unwrap()
            .iter()
            .any(|m| m.starts_with("STATUS=not answering: agent")));

        hung.store(false, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert!(pings(&seen) > at_hang, "pings resume once it answers");
        task.abort();
    }

    #[tokio::test]
    async fn a_failing_probe_names_its_error() {
        let (notify, _) = recorder();
        let dog = Watchdog {
            interval: Duration::from_millis(10),
            probe_timeout: Duration::from_millis(50),
            probes: vec![(
                "engine",
                probe(|| async { Err::<(), _>("the actor is gone") }),
            )],
            notify,
        };
        assert_eq!(dog.check().await, ["engine (the actor is gone)"]);
    }
}
