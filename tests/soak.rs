//! The soak, short (the bench runs it long: `cargo bench --bench soak`): 300 spoken turns
//! and 60 tool providers coming and going through one process, the agent on the scripted
//! engine. Every turn comes and none fails, every provider's tool is called, and no bounded
//! container (sessions, queues, caches, registered tools) is ever over its limit, as sampled
//! in process and as the face's `Bounds` property says.
#![cfg(feature = "piper")]

use hearth_testkit::services::PrivateBus;
use hearth_testkit::soak::*;

#[test]
fn a_long_run_stays_within_every_bound() {
    let models = hearth::models::model_dir().expect("a model directory");
    let tts = hearth::tts::TtsConfig::new(models.join("en_US-joe-medium.onnx"));
    let state = std::env::temp_dir().join(format!("hearth-soak-{}", std::process::id()));
    // SAFETY: set before the runtime starts its threads; the demo tools read it.
    unsafe { std::env::set_var("HEARTH_DEMO_STATE", &state) };
    let bus = PrivateBus::start();
    let plan = SoakPlan {
        turns: 300,
        cycles: 60,
        warmup_turns: 50,
        warmup_cycles: 10,
    };
    let tools = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tools");
    let rt = tokio::runtime::Runtime::new().unwrap();
    let report = rt.block_on(soak(plan, &bus.address, tts, &tools));
    let _ = std::fs::remove_dir_all(&state);
    println!("{report:#?}");
    assert_eq!(report.turns, 300, "{report:#?}");
    assert!(report.failed.is_empty(), "{:#?}", report.failed);
    assert_eq!(report.missed, 0);
    assert_eq!(report.cycles, 60);
    assert!(
        report.cycle_failures.is_empty(),
        "{:#?}",
        report.cycle_failures
    );
    assert!(
        report.over().is_empty(),
        "over their limit: {:#?}",
        report.over()
    );
    // the containers that must have been exercised were seen, and the sessions' limit reached
    let seen = |name: &str| report.highest.iter().find(|l| l.name == name);
    for name in [
        "agent.sessions",
        "agent.queue",
        "agent.toolsets",
        "tools.registered",
        "tts.recent",
        "pipeline.pending",
    ] {
        assert!(
            seen(name).is_some(),
            "{name} was never seen: {:#?}",
            report.highest
        );
    }
    let sessions = seen("agent.sessions").unwrap();
    assert_eq!(
        sessions.len, sessions.cap,
        "48 callers that stay fill the sessions: {sessions:?}"
    );
    // the property says the same as the process
    assert!(!report.bounds_at_end.is_empty());
    for b in &report.bounds_at_end {
        assert!(b["len"].as_u64() <= b["cap"].as_u64(), "{b}");
    }
}
