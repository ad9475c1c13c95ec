//! 1,000 short timers ringing on time, in a test binary of its own: the fast tests run in
//! parallel, and a ring's lateness is measured here with nothing else of the suite beside it.
//! `cargo bench --bench timers` reports the same figures.

/// 1,000 timers of 2 to 6 seconds, set at once while another timer is changed back to back:
/// each rings within 100 ms of its due time at the 99th percentile (one delayed message for
/// the earliest; the file written by a task of its own, so a ring never waits for a write),
/// and none early.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_short_timers_ring_on_time() {
    let d = std::env::temp_dir().join(format!("hearth-timers-thousand-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    let n = 1000;
    let late = hearth_testkit::timers::ring_lateness(&d, n, true)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let p99 = late[n * 99 / 100];
    eprintln!(
        "{n} timers: late median {} ms, p99 {p99} ms, max {} ms",
        late[n / 2],
        late[n - 1]
    );
    assert!(late[0] >= 0, "none rang early: {}", late[0]);
    assert!(p99 <= 100, "p99 {p99} ms late (median {})", late[n / 2]);
    let _ = std::fs::remove_dir_all(&d);
}
