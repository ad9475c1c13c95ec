//! The session slice (`tests/session/slice.jsonl`: a request of every kind) spoken into one
//! input and heard by ONE `hearth run --realtime --once --json` process, as a daemon hears a
//! conversation, all real: the Piper voice speaks the requests (in this test), `hearth-stt`
//! (whisper tiny.en), Qwen2.5-Coder-0.5B with the demo home's tools. Then scored as
//! `cargo bench --bench session` scores the whole set (hearth-testkit's `session`, whose
//! unit tests are that crate's own).
//!
//! Needs `scripts/fetch-models` and `hearth-stt` built beside `hearth` (`cargo test
//! --workspace` does both builds). `HEARTH_SKIP_REAL_MODEL=1` skips locally; CI never sets it.

#[cfg(all(feature = "llm", feature = "piper"))]
mod real {
    use std::path::Path;
    use std::time::Duration;

    use hearth_testkit::bench::load_average;
    use hearth_testkit::session::report::{
        case_table, details, summarise, summary_header, summary_row,
    };
    use hearth_testkit::session::run::{
        add_noise, timeline, write_wav, Hearth, Speaker, NOISE_DBFS,
    };
    use hearth_testkit::session::score::{score_all, Observed};
    use hearth_testkit::session::set::{load, set_path};

    /// At least this many of the slice's 12 requests (11 before the unlock asked for a yes)
    /// must run exactly their tools. Before the
    /// continuous-session fixes (HEAD d427697, release builds): 3 and 5 of 11. After them
    /// (HEAD 1158ef2, the debug build CI runs): 9 of 11; the two wrong were misheard by
    /// whisper tiny.en ("Unlock the front door." as "Mop the front door.", "And the bedroom
    /// too." as "and the bedroom tooth."). Piper's noise makes every take of the slice differ,
    /// so one more mishearing is allowed for.
    const RIGHT_AT_LEAST: usize = 8;

    /// The model directory holds everything `hearth run` needs and `hearth-stt` is built, or
    /// None when skipping is asked for.
    fn ready() -> Option<()> {
        hearth_testkit::model::voice_models().map(|_| ())
    }

    #[test]
    fn the_slice_in_one_session_runs_its_tools_and_claims_nothing_false() {
        if ready().is_none() {
            return;
        }
        let cases = load(&set_path("slice")).expect("tests/session/slice.jsonl loads");
        let mut speaker = Speaker::load().expect("the Piper voice: run scripts/fetch-models");
        let clips: Vec<Vec<f32>> = cases
            .iter()
            .enumerate()
            .map(|(i, c)| speaker.speak(i, &c.say).expect("Piper speaks"))
            .collect();
        let mut input = timeline(&clips, 1.0, 4.0, 2.0);
        add_noise(&mut input.samples, NOISE_DBFS, 7);
        let work = std::env::temp_dir().join(format!("hearth-session-test-{}", std::process::id()));
        let hearth = Hearth {
            exe: env!("CARGO_BIN_EXE_hearth").into(),
            tools: Path::new(env!("CARGO_MANIFEST_DIR")).join("tools"),
            work: work.clone(),
            config: None,
        };
        hearth.check().expect("hearth and hearth-stt are built");
        let wav = work.join("slice.wav");
        write_wav(&wav, &input.samples).expect("the input WAV is written");
        let limit = Duration::from_secs_f64(input.secs() + 600.0);
        let turns = hearth
            .run_voice(&wav, "slice", limit, &mut |_| {})
            .expect("hearth run hears the slice");
        let observed: Vec<Observed> = turns.iter().map(Observed::from_voice).collect();
        let scored = score_all(&cases, &input.windows, observed);
        let summary = summarise("spoken", "slice", &scored);
        let report = format!(
            "{}{}\n{}{}\nload average at the end: {}",
            case_table(&scored),
            details(&scored),
            summary_header(),
            summary_row(&summary),
            load_average().unwrap_or_default()
        );
        eprintln!("{report}");
        assert_eq!(
            summary.false_claims, 0,
            "replies claimed what no call did:\n{report}"
        );
        assert_eq!(
            summary.calls_on_none, 0,
            "calls on requests that need none:\n{report}"
        );
        assert!(
            summary.right >= RIGHT_AT_LEAST,
            "{} of {} right, fewer than {RIGHT_AT_LEAST}:\n{report}",
            summary.right,
            summary.cases
        );
        let _ = std::fs::remove_dir_all(&work);
    }
}
