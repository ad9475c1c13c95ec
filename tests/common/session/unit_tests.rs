// The scorer's unit tests (included by tests/session.rs only: the bench, built with
// `cfg(test)` but no test harness, would see them as unused code).

mod set {
    use crate::session::set::*;
    use serde_json::{Map, Value};

    #[test]
    fn both_sets_load_and_cover_every_kind() {
        for name in ["demo", "slice"] {
            let cases = load(&set_path(name)).unwrap();
            for kind in Kind::ALL {
                assert!(cases.iter().any(|c| c.kind == kind), "{name}: no {kind:?}");
            }
        }
    }

    #[test]
    fn the_demo_set_has_what_the_problem_needs() {
        let cases = load(&set_path("demo")).unwrap();
        let n = |k: Kind| cases.iter().filter(|c| c.kind == k).count();
        assert!(cases.len() >= 48, "{}", cases.len());
        assert!(n(Kind::None) >= 8);
        assert!(n(Kind::Two) >= 6);
        assert!(n(Kind::FollowUp) >= 6);
        let lock = |locked: bool| {
            cases.iter().flat_map(|c| &c.expect).any(|e| {
                e.name == "set_lock" && e.arguments.get("locked") == Some(&Value::Bool(locked))
            })
        };
        assert!(lock(true) && lock(false), "lock and unlock");
        // a follow-up never opens the set: it needs a turn before it
        assert_ne!(cases[0].kind, Kind::FollowUp);
    }

    #[test]
    fn a_none_case_with_calls_is_refused() {
        let case = Case {
            say: "Thank you.".into(),
            kind: Kind::None,
            expect: vec![Expect {
                name: "get_time".into(),
                arguments: Map::new(),
            }],
            note: None,
            line: 1,
        };
        assert!(check(&case).is_err());
    }
}

mod text {
    use crate::session::text::*;

    #[test]
    fn words_are_lower_case_without_punctuation() {
        assert_eq!(
            plain("Turn on the Kitchen light."),
            "turn on the kitchen light"
        );
        assert_eq!(
            plain("What's the thermostat set to?"),
            "whats the thermostat set to"
        );
    }

    #[test]
    fn number_words_and_numerals_compare_equal() {
        assert_eq!(
            plain("Set it to 21.5 degrees."),
            plain("set it to twenty-one point five degrees")
        );
        assert_eq!(plain("40%"), "40 percent");
        assert_eq!(plain("nineteen degrees"), "19 degrees");
        assert_eq!(plain("19.0 degrees"), "19 degrees");
        assert_eq!(plain("a hundred percent"), "100 percent");
        assert_eq!(
            plain("set it to 60 percent"),
            plain("Set it to sixty percent.")
        );
        // "one" alone stays a word
        assert_eq!(plain("turn this one off"), "turn this one off");
        assert_eq!(plain("21:30"), "21:30");
    }

    #[test]
    fn a_request_heard_twice_is_a_duplicate() {
        assert!(duplicated(
            "What time is it? What time is it?",
            "What time is it?"
        ));
        assert!(duplicated("Thank you. Thank you.", "Thank you."));
        assert!(duplicated(
            "Turn on the kitchen light, turn on the kitchen light.",
            "Turn on the kitchen light."
        ));
        assert!(duplicated(
            "lock the front lock the front door",
            "Lock the front door."
        ));
    }

    #[test]
    fn a_repetition_the_request_has_itself_is_not_a_duplicate() {
        assert!(!duplicated("What time is it?", "What time is it?"));
        assert!(!duplicated(
            "Lock the back door and the garage door.",
            "Lock the back door and the garage door."
        ));
        let said = "Say go go go go go go.";
        assert!(!duplicated(said, said));
        // a mishearing is not a duplicate
        assert!(!duplicated(
            "Turn on the kitchen lights.",
            "Turn on the kitchen light."
        ));
    }

    #[test]
    fn mishearings_ignore_case_punctuation_and_number_words() {
        assert!(!misheard(
            "set the thermostat to 19 degrees",
            "Set the thermostat to nineteen degrees."
        ));
        assert!(misheard(
            "Turn on the kitchen lights.",
            "Turn on the kitchen light."
        ));
        assert!(misheard("", "Thank you."));
    }
}

mod claims {
    use crate::session::claims::*;
    use serde_json::json;

    fn light(room: &str, on: bool) -> Call {
        let state = if on { "on" } else { "off" };
        Call::ok(
            "set_light",
            json!({"room": room, "on": on}),
            &format!("{room} light {state}"),
        )
    }

    #[test]
    fn a_confirmation_with_no_call_is_false() {
        for reply in [
            "The office light is on.",
            "The kitchen light is now off.",
            "The front door is locked.",
            "The thermostat is set to 21 degrees.",
            "I can confirm the thermostat is at 21 degrees and the kitchen light is on.",
            "I've turned on the kitchen light.",
            "Done.",
            "Okay, turning off the bedroom light.",
            "The living room light is at 40 percent.",
            "It's 9:15 PM.",
            "Today is Tuesday, March 3rd.",
        ] {
            assert!(false_claim(reply, &[]).is_some(), "{reply}");
        }
    }

    #[test]
    fn words_that_claim_nothing_are_not_false() {
        for reply in [
            "",
            "You're welcome!",
            "Why did the chicken cross the road? To get to the other side.",
            "I can turn lights on and off, set the thermostat and lock doors.",
            // the session bench's "What can you do?" once got this: a list of offers
            "You can turn on the kitchen light, set the thermostat to 21.5 degrees, and lock the front door.",
            "You could set it to 40 percent.",
            "Sorry, nothing was done. Please say it again.",
            "Sorry, I couldn't finish that.",
            "Would you like me to turn on the kitchen light?",
            "I'm fine, thank you.",
            "Good night!",
            "I can't tell the time without a clock.",
            "You're done!",
            "You're all set, good night.",
        ] {
            assert_eq!(false_claim(reply, &[]), None, "{reply}");
        }
    }

    #[test]
    fn a_confirmation_of_the_call_that_ran_is_true() {
        let calls = [light("kitchen", true)];
        assert_eq!(false_claim("The kitchen light is on.", &calls), None);
        assert_eq!(false_claim("Done, I've turned it on.", &calls), None);
        let two = [
            light("kitchen", false),
            Call::ok(
                "set_lock",
                json!({"door": "front", "locked": true}),
                "front door locked",
            ),
        ];
        assert_eq!(
            false_claim("The kitchen light is off. The front door is locked.", &two),
            None
        );
        let warm = [Call::ok(
            "set_thermostat",
            json!({"temperature": 21.5}),
            "thermostat set to 21.5 degrees",
        )];
        assert_eq!(
            false_claim("The thermostat is set to 21.5 degrees.", &warm),
            None
        );
    }

    #[test]
    fn a_state_read_by_a_get_call_is_true_and_its_opposite_false() {
        let read = [Call::ok(
            "get_lock",
            json!({"door": "front"}),
            "front door unlocked",
        )];
        assert_eq!(false_claim("The front door is unlocked.", &read), None);
        assert!(false_claim("The front door is locked.", &read).is_some());
        let time = [Call::ok("get_time", json!({}), "21:14")];
        assert_eq!(false_claim("It's 21:14.", &time), None);
    }

    #[test]
    fn a_claim_about_a_device_no_call_touched_is_false() {
        let calls = [light("kitchen", false)];
        // the second device was never locked
        let why = false_claim(
            "The kitchen light is off and the front door is locked.",
            &calls,
        );
        assert!(why.is_some_and(|w| w.contains("front")));
        // the state contradicts what ran
        assert!(false_claim("The kitchen light is on.", &calls).is_some());
        // a number no call set
        let warm = [Call::ok(
            "set_thermostat",
            json!({"temperature": 19}),
            "thermostat set to 19 degrees",
        )];
        assert!(false_claim("The thermostat is set to 22 degrees.", &warm).is_some());
    }

    #[test]
    fn a_call_that_failed_backs_no_claim() {
        let mut failed = light("kitchen", true);
        failed.status = "error".into();
        assert!(false_claim("The kitchen light is on.", &[failed]).is_some());
    }
}

mod score {
    use crate::session::claims::Call;
    use crate::session::score::*;
    use crate::session::set::{Case, Expect, Kind};
    use serde_json::json;
    use serde_json::Value;

    fn expect(name: &str, arguments: Value) -> Expect {
        Expect {
            name: name.into(),
            arguments: arguments.as_object().cloned().unwrap_or_default(),
        }
    }

    fn case(kind: Kind, say: &str, expect: Vec<Expect>) -> Case {
        Case {
            say: say.into(),
            kind,
            expect,
            note: None,
            line: 1,
        }
    }

    fn turn(heard: &str, reply: &str, calls: Vec<Call>, at: f64) -> Observed {
        Observed {
            heard: heard.into(),
            reply: reply.into(),
            calls,
            first_voice_ms: Some(900.0),
            after_endpoint_ms: Some(300.0),
            total_ms: None,
            stages: Vec::new(),
            path: None,
            start_s: Some(at),
            end_s: Some(at + 1.5),
            interrupted: false,
            error: None,
        }
    }

    #[test]
    fn the_stage_table_gives_median_and_p95_per_path() {
        use crate::session::report::{p95, stage_table};
        assert_eq!(p95((1..=20).map(f64::from).collect()), Some(19.0));
        assert_eq!(p95(vec![5.0]), Some(5.0));
        assert_eq!(p95(Vec::new()), None);
        let scored: Vec<Scored> = (1..=3)
            .map(|i| {
                let mut t = turn("turn on the light", "", vec![], f64::from(i));
                t.path = Some("llm".into());
                t.first_voice_ms = Some(f64::from(i) * 100.0);
                t.stages = vec![
                    ("endpoint".into(), 640.0),
                    ("first_voice".into(), f64::from(i) * 100.0),
                ];
                score(&case(Kind::Command, "turn on the light", vec![]), vec![t])
            })
            .collect();
        let table = stage_table(&scored);
        assert!(table.contains("| first_voice | 3 | 200 | 300 |"), "{table}");
        assert!(
            table.contains("first llm turn's first voice: 100 ms"),
            "{table}"
        );
        assert!(table.contains("the 2 after it: median 250 ms"), "{table}");
    }

    #[test]
    fn numbers_match_by_value_and_ranges_by_bounds() {
        let e = expect("set_thermostat", json!({"temperature": 21}));
        assert!(meets(
            &e,
            &Call::ok("set_thermostat", json!({"temperature": 21.0}), "")
        ));
        assert!(!meets(
            &e,
            &Call::ok("set_thermostat", json!({"temperature": 21.5}), "")
        ));
        let warmer = expect(
            "set_thermostat",
            json!({"temperature": {"min": 19.5, "max": 25}}),
        );
        assert!(meets(
            &warmer,
            &Call::ok("set_thermostat", json!({"temperature": 20}), "")
        ));
        assert!(!meets(
            &warmer,
            &Call::ok("set_thermostat", json!({"temperature": 19}), "")
        ));
        // an extra argument is a different call
        let light = expect("set_light", json!({"room": "kitchen", "on": true}));
        let extra = json!({"room": "kitchen", "on": true, "level": 3});
        assert!(!meets(&light, &Call::ok("set_light", extra, "")));
    }

    #[test]
    fn two_calls_match_in_any_order_and_repeats_count_once() {
        let c = case(
            Kind::Two,
            "Turn on the bedroom and the bathroom lights.",
            vec![
                expect("set_light", json!({"room": "bedroom", "on": true})),
                expect("set_light", json!({"room": "bathroom", "on": true})),
            ],
        );
        let bath = Call::ok("set_light", json!({"room": "bathroom", "on": true}), "");
        let bed = Call::ok("set_light", json!({"room": "bedroom", "on": true}), "");
        let calls = vec![bath.clone(), bed.clone(), bath.clone()];
        let s = score(&c, vec![turn(&c.say, "", calls, 0.0)]);
        assert_eq!(s.verdict, Verdict::Right);
        let s = score(&c, vec![turn(&c.say, "", vec![bed], 0.0)]);
        assert_eq!(s.verdict, Verdict::Wrong);
    }

    #[test]
    fn a_failed_call_does_not_count_as_done() {
        let c = case(
            Kind::Command,
            "Lock the front door.",
            vec![expect("set_lock", json!({"door": "front", "locked": true}))],
        );
        let mut call = Call::ok("set_lock", json!({"door": "front", "locked": true}), "");
        call.status = "error".into();
        let s = score(
            &c,
            vec![turn(&c.say, "The front door is locked.", vec![call], 0.0)],
        );
        assert_eq!(s.verdict, Verdict::Wrong);
        assert!(s.false_claim.is_some());
        assert_eq!(s.failed.len(), 1);
    }

    #[test]
    fn words_only_on_a_command_are_wrong_and_a_false_claim() {
        let c = case(
            Kind::Command,
            "Turn on the kitchen light.",
            vec![expect("set_light", json!({"room": "kitchen", "on": true}))],
        );
        let s = score(
            &c,
            vec![turn(
                "Turn on the kitchen light.",
                "The office light is on.",
                vec![],
                3.0,
            )],
        );
        assert_eq!(s.verdict, Verdict::Wrong);
        assert!(s.false_claim.is_some());
        assert!(!s.misheard && !s.duplicated);
        assert_eq!(score(&c, vec![]).verdict, Verdict::Missed);
    }

    #[test]
    fn none_cases_are_right_only_without_calls() {
        let c = case(Kind::None, "Tell me a joke.", vec![]);
        let s = score(
            &c,
            vec![turn(
                &c.say,
                "Why did the chicken cross the road?",
                vec![],
                0.0,
            )],
        );
        assert_eq!(s.verdict, Verdict::Right);
        assert!(!s.calls_on_none);
        let time = Call::ok("get_time", json!({}), "9:15 PM");
        let s = score(&c, vec![turn(&c.say, "It's 9:15 PM.", vec![time], 0.0)]);
        assert_eq!(s.verdict, Verdict::Wrong);
        assert!(s.calls_on_none);
    }

    #[test]
    fn turns_go_to_the_case_they_overlap_most_or_are_nearest() {
        let windows = [(1.0, 2.5), (6.5, 8.0), (12.0, 13.0)];
        let turns = [
            turn("a", "", vec![], 0.8),  // 0.8..2.3: the first
            turn("b", "", vec![], 6.0),  // 6.0..7.5: the second
            turn("c", "", vec![], 9.0),  // 9.0..10.5: overlaps none, nearest the second
            turn("d", "", vec![], 12.2), // the third
        ];
        assert_eq!(align(&windows, &turns), vec![vec![0], vec![1, 2], vec![3]]);
        let unplaced = Observed {
            start_s: None,
            ..turns[0].clone()
        };
        assert_eq!(align(&windows, &[unplaced]), vec![Vec::<usize>::new(); 3]);
    }

    #[test]
    fn a_voice_turn_is_read_from_hearths_json() {
        let v = json!({
            "heard": "Lock the front door.",
            "turn": {"reply": "The front door is locked.", "path": "intent",
                     "hops": [{"calls": [{"name": "set_lock", "arguments": {"door": "front", "locked": true},
                                           "status": "ok", "result": "front door locked"}]}],
                     "timings_ms": {"total": 250.0}},
            "error": null, "interrupted": false,
            "timings_ms": {"first_voice": 812.5, "endpoint": 600.0}, "start_s": 4.5, "end_s": 5.9
        });
        let o = Observed::from_voice(&v);
        assert_eq!(o.calls.len(), 1);
        assert_eq!(o.path.as_deref(), Some("intent"));
        assert_eq!(
            (o.first_voice_ms, o.start_s, o.end_s),
            (Some(812.5), Some(4.5), Some(5.9))
        );
        assert_eq!(o.after_endpoint_ms, Some(212.5));
        assert_eq!(o.total_ms, Some(250.0));
    }
}

mod report {
    use crate::session::report::*;

    #[test]
    fn medians_of_odd_even_and_empty() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(vec![4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(vec![]), None);
    }

    #[test]
    fn cells_stay_on_one_line_without_bars() {
        assert_eq!(cell("a | b\nc", 20), "a / b c");
        assert_eq!(cell("abcdef", 4), "abc…");
    }

    #[test]
    fn the_summary_header_and_row_have_as_many_columns() {
        let s = summarise("spoken", "slice", &[]);
        let cols = |line: &str| line.matches('|').count();
        let header = summary_header();
        let first = header.lines().next().unwrap();
        let rule = header.lines().nth(1).unwrap();
        assert_eq!(cols(first), cols(&summary_row(&s)));
        assert_eq!(cols(first), cols(rule));
    }
}
