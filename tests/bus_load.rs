//! Load on the D-Bus face: 1000 `Ask` calls from 20 concurrent clients (text mode, the real
//! model). Every call gets a reply or `io.hearth.Error.Busy` (none is lost, none fails
//! otherwise), the calls that queue behind a running turn are served, and the daemon's RSS
//! after a second such burst equals its RSS before it within 5 MB. A client told Busy asks again 20 ms later, so
//! most of the 1000 are refused: one turn takes about a second on two cores.

use hearth_testkit::daemon::*;
use hearth_testkit::model::*;
use hearth_testkit::services::*;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const CALLS: usize = 1000;
const CLIENTS: usize = 20;
const PROMPTS: [&str; 3] = [
    "What time is it?",
    "Turn off the kitchen light.",
    "Turn on the living room light.",
];

#[derive(Default)]
struct Tally {
    replies: AtomicUsize,
    busy: AtomicUsize,
}

async fn ask(conn: &zbus::Connection, text: &str) -> Result<String, zbus::Error> {
    let reply = conn
        .call_method(
            Some("io.hearth.Agent1"),
            "/io/hearth/Agent",
            Some("io.hearth.Agent1"),
            "Ask",
            &(text,),
        )
        .await?;
    reply.body().deserialize::<String>()
}

/// `CALLS` Asks from `CLIENTS` connections at once, each client asking again 20 ms after a
/// Busy: what was answered, and the failures.
async fn burst(bus: &PrivateBus) -> (Arc<Tally>, Vec<String>) {
    let next = Arc::new(AtomicUsize::new(0));
    let tally = Arc::new(Tally::default());
    let mut clients = Vec::new();
    for _ in 0..CLIENTS {
        let conn = bus.connect().await;
        let (next, tally) = (next.clone(), tally.clone());
        clients.push(tokio::spawn(async move {
            let mut failures = Vec::new();
            loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                if i >= CALLS {
                    return failures;
                }
                match ask(&conn, PROMPTS[i % PROMPTS.len()]).await {
                    Ok(reply) if !reply.trim().is_empty() => {
                        tally.replies.fetch_add(1, Ordering::SeqCst);
                    }
                    Ok(_) => failures.push(format!("call {i}: an empty reply")),
                    Err(zbus::Error::MethodError(name, _, _))
                        if name.as_str() == "io.hearth.Error.Busy" =>
                    {
                        tally.busy.fetch_add(1, Ordering::SeqCst);
                        // a client that was told Busy waits a little before asking again
                        tokio::time::sleep(Duration::from_millis(20)).await;
                    }
                    Err(e) => failures.push(format!("call {i}: {e}")),
                }
            }
        }));
    }
    let mut all = Vec::new();
    for c in clients {
        all.extend(c.await.expect("a client task"));
    }
    (tally, all)
}

#[test]
fn a_thousand_asks_from_twenty_clients() {
    let Some(model) = qwen_path() else { return };
    let rt = tokio::runtime::Runtime::new().unwrap();
    let bus = PrivateBus::start();
    let broker = Broker::start("load");
    let mut daemon = Daemon::start("load", &bus, &broker, &model, None);
    daemon.wait_ready();

    // warm up with two whole bursts, unmeasured: the prompt cache, the grammars, the
    // allocator's per-thread arenas (the agent's warm-ups after turns run on whichever
    // runtime thread is free); what the measured burst adds after it is what a leak adds
    for _ in 0..2 {
        let (_, failures) = rt.block_on(burst(&bus));
        assert!(failures.is_empty(), "{failures:?}\n{}", daemon.log());
        std::thread::sleep(Duration::from_secs(2));
    }
    let before = daemon.rss_kib();

    let start = Instant::now();
    let (tally, failures) = rt.block_on(burst(&bus));
    let took = start.elapsed();
    // the clients' connections are closed: their conversations are dropped
    std::thread::sleep(Duration::from_secs(2));
    let after = daemon.rss_kib();
    let replies = tally.replies.load(Ordering::SeqCst);
    let busy = tally.busy.load(Ordering::SeqCst);
    println!(
        "{CALLS} Asks from {CLIENTS} clients in {:.1} s: {replies} replies, {busy} Busy, {} failed; RSS {before} KiB before, {after} KiB after ({:+} KiB)",
        took.as_secs_f64(),
        failures.len(),
        after as i64 - before as i64
    );
    assert!(failures.is_empty(), "{failures:?}\n{}", daemon.log());
    assert_eq!(replies + busy, CALLS, "every call answered");
    // the first wave alone is served whole: one turn running and the queue behind it
    assert!(
        replies > hearth::bus::QUEUE_LIMIT,
        "the queued calls were not served: {replies} replies"
    );
    assert!(
        after.abs_diff(before) <= 5 * 1024,
        "RSS {before} KiB before, {after} KiB after"
    );
    assert!(
        daemon.child.try_wait().unwrap().is_none(),
        "the daemon is still running"
    );
}
