//! The timers actor against its real state file: every change acknowledged is on disk, a
//! restart finds the same timers, what fell due meanwhile rings late (or is dropped when
//! too old), a question when a request could mean two, and a kill at any moment. How late
//! 1,000 timers ring is tests/timers.rs (a binary of its own: no other test beside it).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use hearth::timers::{Fired, Run, Store, Timer, TimerError, TimersMsg, Which};
use ractor::ActorRef;
use tokio::sync::mpsc;

fn dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("hearth-timers-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

async fn timers(dir: &std::path::Path) -> ActorRef<TimersMsg> {
    hearth_testkit::timers::spawn(dir).await.unwrap()
}

async fn start(
    t: &ActorRef<TimersMsg>,
    name: Option<&str>,
    secs: u64,
) -> Result<Timer, TimerError> {
    ractor::call!(t, |reply| TimersMsg::Start {
        name: name.map(str::to_string),
        length: Duration::from_secs(secs),
        room: Some("kitchen".into()),
        reminder: None,
        reply,
    })
    .unwrap()
}

async fn list(t: &ActorRef<TimersMsg>) -> Vec<Timer> {
    ractor::call!(t, TimersMsg::List).unwrap()
}

fn names(ts: &[Timer]) -> Vec<Option<String>> {
    ts.iter().map(|t| t.name.clone()).collect()
}

#[tokio::test]
async fn what_was_acknowledged_is_what_a_restart_finds() {
    let d = dir("restart");
    let t = timers(&d).await;
    let pasta = start(&t, Some("Pasta"), 480).await.unwrap();
    assert_eq!(pasta.name.as_deref(), Some("pasta"));
    start(&t, Some("eggs"), 300).await.unwrap();
    start(&t, None, 600).await.unwrap();
    assert_eq!(
        start(&t, Some("pasta"), 60).await,
        Err(TimerError::Taken("pasta".into()))
    );
    assert_eq!(start(&t, None, 0).await, Err(TimerError::Length));
    // three timers and none named: which?
    let which = ractor::call!(t, TimersMsg::Cancel, Which::Only).unwrap();
    assert_eq!(
        which.unwrap_err().to_string(),
        "Which timer: pasta, eggs or the 10 minute one?"
    );
    let gone = ractor::call!(t, TimersMsg::Cancel, Which::Named("eggs".into())).unwrap();
    assert_eq!(names(&gone.unwrap()), [Some("eggs".to_string())]);
    let paused = ractor::call!(t, TimersMsg::Pause, Which::Named("pasta".into()))
        .unwrap()
        .unwrap();
    assert!(matches!(paused.run, Run::Paused { left_ms } if left_ms > 470_000));
    let again = ractor::call!(t, TimersMsg::Pause, Which::Named("pasta".into())).unwrap();
    assert_eq!(
        again.unwrap_err().to_string(),
        "The pasta timer is already paused."
    );
    // "add a minute" could mean either: which?
    let which = ractor::call!(t, TimersMsg::Adjust, Which::Only, 60_000).unwrap();
    assert_eq!(
        which.unwrap_err().to_string(),
        "Which timer: pasta or the 10 minute one?"
    );
    // "resume the timer": only one is paused
    let resumed = ractor::call!(t, TimersMsg::Resume, Which::Only)
        .unwrap()
        .unwrap();
    assert_eq!(resumed.name.as_deref(), Some("pasta"));
    ractor::call!(t, TimersMsg::Pause, Which::Named("pasta".into()))
        .unwrap()
        .unwrap();
    // "pause the timer": only one runs
    let unnamed = ractor::call!(t, TimersMsg::Pause, Which::Only)
        .unwrap()
        .unwrap();
    assert_eq!(unnamed.name, None);
    ractor::call!(t, TimersMsg::Resume, Which::Named("Pasta".into()))
        .unwrap()
        .unwrap();
    let added = ractor::call!(t, TimersMsg::Adjust, Which::Only, 60_000).unwrap();
    assert!(added.is_err(), "{added:?}");
    let added = ractor::call!(t, TimersMsg::Resume, Which::Only)
        .unwrap()
        .unwrap();
    assert_eq!(added.name, None);
    let added = ractor::call!(t, TimersMsg::Cancel, Which::Named("pasta".into()))
        .unwrap()
        .unwrap();
    assert_eq!(names(&added), [Some("pasta".to_string())]);
    start(&t, Some("pasta"), 480).await.unwrap();
    ractor::call!(t, TimersMsg::Pause, Which::Named("pasta".into()))
        .unwrap()
        .unwrap();
    let added = ractor::call!(t, TimersMsg::Adjust, Which::Named(String::new()), 60_000).unwrap();
    assert_eq!(added, Err(TimerError::NoSuch(String::new())));
    let added = ractor::call!(t, TimersMsg::Adjust, Which::Named("pasta".into()), 60_000)
        .unwrap()
        .unwrap();
    assert_eq!(added.total_ms, 540_000);
    let added = ractor::call!(t, TimersMsg::Adjust, Which::Named("pasta".into()), 60_000)
        .unwrap()
        .unwrap();
    assert_eq!(added.total_ms, 600_000);
    assert!(
        matches!(added.run, Run::Paused { left_ms } if left_ms > 590_000),
        "{added:?}"
    );
    let before = list(&t).await;
    t.stop(None);
    tokio::time::sleep(Duration::from_millis(50)).await;

    let t = timers(&d).await;
    let after = list(&t).await;
    assert_eq!(after, before, "the same timers after a restart");
    // ids go on from where they were
    let next = start(&t, Some("tea"), 120).await.unwrap();
    assert!(after.iter().all(|x| x.id < next.id), "{after:?} {next:?}");
    let all = ractor::call!(t, TimersMsg::Cancel, Which::All)
        .unwrap()
        .unwrap();
    assert_eq!(all.len(), 3);
    assert_eq!(
        ractor::call!(t, TimersMsg::Cancel, Which::Only).unwrap(),
        Err(TimerError::None)
    );
    t.stop(None);
    let _ = std::fs::remove_dir_all(&d);
}

#[tokio::test]
async fn a_timer_due_while_hearth_was_down_rings_at_start_and_an_old_one_does_not() {
    let d = dir("down");
    let t = timers(&d).await;
    start(&t, Some("pasta"), 1).await.unwrap();
    t.stop(None);
    tokio::time::sleep(Duration::from_millis(1500)).await;
    // and one two hours overdue, written as an older hearth would have left it
    let store = Store::in_dir(&d);
    let mut left = store.load();
    let now = jiff::Timestamp::now().as_millisecond();
    left.timers.push(Timer {
        id: 40,
        name: Some("bread".into()),
        total_ms: 1_000,
        run: Run::Running {
            due_ms: now - 2 * 3600 * 1000,
        },
        room: None,
        alarm: None,
        reminder: None,
    });
    store.save(&left.timers, 41).unwrap();

    let t = timers(&d).await;
    let (tx, mut rx) = mpsc::unbounded_channel();
    t.cast(TimersMsg::Subscribe(tx)).unwrap();
    let f: Fired = tokio::time::timeout(Duration::from_secs(2), rx.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(f.timer.name.as_deref(), Some("pasta"));
    assert!(f.late_ms >= 400, "{f:?}");
    assert!(
        tokio::time::timeout(Duration::from_millis(300), rx.recv())
            .await
            .is_err(),
        "the bread timer, two hours overdue, does not ring"
    );
    assert!(list(&t).await.is_empty(), "both are out of the file");
    t.stop(None);
    let _ = std::fs::remove_dir_all(&d);
}

#[tokio::test]
async fn a_paused_timer_does_not_ring_and_a_resumed_one_does() {
    let d = dir("pause");
    let t = timers(&d).await;
    let (tx, mut rx) = mpsc::unbounded_channel();
    t.cast(TimersMsg::Subscribe(tx)).unwrap();
    start(&t, Some("eggs"), 1).await.unwrap();
    ractor::call!(t, TimersMsg::Pause, Which::Only)
        .unwrap()
        .unwrap();
    let no_ring = tokio::time::timeout(Duration::from_millis(1300), rx.recv()).await;
    assert!(no_ring.is_err(), "paused: no ring");
    let resumed = Instant::now();
    ractor::call!(t, TimersMsg::Resume, Which::Named("eggs".into()))
        .unwrap()
        .unwrap();
    let f = tokio::time::timeout(Duration::from_millis(2000), rx.recv())
        .await
        .expect("rings once resumed")
        .unwrap();
    assert_eq!(f.timer.name.as_deref(), Some("eggs"));
    assert!(
        resumed.elapsed() >= Duration::from_millis(700),
        "{:?}",
        resumed.elapsed()
    );
    t.stop(None);
    let _ = std::fs::remove_dir_all(&d);
}

/// The crash test's server: this test binary run again as this ignored test, serving
/// timer changes on its stdin (`HEARTH_TIMERS_SERVE` names the state directory).
#[test]
#[ignore = "helper: the timers server the crash test kills"]
fn helper_timers_server() {
    let Some(dir) = std::env::var_os("HEARTH_TIMERS_SERVE") else {
        println!("nothing to do: the crash test starts this helper with HEARTH_TIMERS_SERVE");
        return;
    };
    hearth_testkit::timers::serve(std::path::Path::new(&dir));
}

/// SIGKILL at random moments while timers are set, changed and cancelled: after each
/// restart the file holds exactly what was acknowledged (or that and the one change in
/// flight). `cargo bench --bench timers` runs a thousand rounds.
#[test]
fn a_killed_hearth_keeps_exactly_the_timers_it_acknowledged() {
    let d = dir("crash");
    let exe = std::env::current_exe().unwrap();
    let spawn = |dir: &std::path::Path| {
        let mut c = std::process::Command::new(&exe);
        c.args([
            "--exact",
            "timers::helper_timers_server",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("HEARTH_TIMERS_SERVE", dir)
        .env("RUST_LOG", "off");
        c
    };
    let seed = jiff::Timestamp::now().as_second() as u64;
    let report =
        hearth_testkit::timers::crash_rounds(spawn, &d, 12, seed).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(report.rounds, 12);
    assert!(report.acknowledged > 0, "{report:?}");
    let _ = std::fs::remove_dir_all(&d);
}
