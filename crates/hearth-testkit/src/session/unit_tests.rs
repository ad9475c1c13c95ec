// The scorer's unit tests: the sets, the texts, the claims, the scores, the tables and the
// bare tools.

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
            answer: None,
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
    fn a_reply_that_says_the_request_back_is_an_echo() {
        for (reply, request) in [
            ("Lock the front door.", "lock the front door"),
            ("Okay, lock the front door.", "Lock the front door."),
            ("Sure, lock the front door!", "Lock the front door."),
            (
                "Set the thermostat to twenty-one point five degrees.",
                "Set the thermostat to 21.5 degrees.",
            ),
            ("And the back door too.", "And the back door too."),
            // said back, then a confirmation
            (
                "Lock the front door. The front door is locked.",
                "Lock the front door.",
            ),
            ("OK. Turn it off again.", "Turn it off again."),
        ] {
            assert!(echoed(reply, request), "{reply:?} to {request:?}");
        }
    }

    #[test]
    fn a_reply_in_its_own_words_is_no_echo() {
        for (reply, request) in [
            ("The front door is locked.", "Lock the front door."),
            ("You're welcome!", "Thank you."),
            ("", "Thank you."),
            ("Lock the front door.", ""),
            // more than the request
            (
                "Lock the front door and the back door.",
                "Lock the front door.",
            ),
            // less than it
            ("Lock the door.", "Lock the front door."),
            ("Okay.", "Okay."),
        ] {
            assert!(!echoed(reply, request), "{reply:?} to {request:?}");
        }
    }

    #[test]
    fn sentences_end_at_marks_but_not_inside_numbers() {
        assert_eq!(
            sentences("It is 21.5 degrees. Done! Is it on?"),
            vec!["It is 21.5 degrees.", " Done!", " Is it on?"]
        );
        assert_eq!(sentences("It's 9 a.m. now"), vec!["It's 9 a.m.", " now"]);
        assert_eq!(sentences("  "), Vec::<&str>::new());
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
    fn a_household_s_own_tools_are_read_by_what_their_calls_name() {
        // the household set's tools: their own names and parameters
        let on = Call::ok(
            "switch_light",
            json!({"room": "kitchen", "power": true}),
            "kitchen light on",
        );
        assert_eq!(
            false_claim("Okay, the kitchen light is on.", std::slice::from_ref(&on)),
            None
        );
        assert!(false_claim("The kitchen light is off.", std::slice::from_ref(&on)).is_some());
        assert!(false_claim("The bedroom light is on.", &[on]).is_some());
        let locked = Call::ok(
            "door_lock",
            json!({"door": "back", "action": "lock"}),
            "back door locked",
        );
        assert_eq!(
            false_claim("The back door is locked.", std::slice::from_ref(&locked)),
            None
        );
        assert!(false_claim("The back door is unlocked.", &[locked]).is_some());
        let read = Call::ok(
            "room_temperature",
            json!({"room": "bedroom"}),
            "21.5 degrees",
        );
        assert_eq!(
            false_claim(
                "The bedroom temperature is 21.5 degrees.",
                std::slice::from_ref(&read)
            ),
            None
        );
        assert!(false_claim("It is 23 degrees.", std::slice::from_ref(&read)).is_some());
        assert!(
            false_claim("The bedroom light is on.", &[read]).is_some(),
            "a reading of the room is not its light"
        );
        let heat = Call::ok("heating", json!({"target": 20}), "heating set to 20");
        assert_eq!(
            false_claim("Heating set to 20 degrees.", std::slice::from_ref(&heat)),
            None
        );
        assert!(false_claim("The thermostat is set to 22 degrees.", &[heat]).is_some());
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
    fn readings_the_old_rules_missed_are_claims() {
        for reply in [
            "The garage door is open.",
            "The temperature is 22.",
            "The thermostat is at 21.",
            "It's 75 Fahrenheit.",
            "It's 9 a.m.",
            "It's half past 9.",
            "It is noon.",
            "It's on.",
            "I can confirm the thermostat is 21 degrees.",
        ] {
            assert!(false_claim(reply, &[]).is_some(), "{reply}");
        }
        // a state or number no call set or read, in a sentence that names no device
        let lock = [Call::ok(
            "set_lock",
            json!({"door": "front", "locked": true}),
            "front door locked",
        )];
        assert!(false_claim("It's on.", &lock).is_some());
        assert!(false_claim("It's at 40 percent.", &lock).is_some());
        assert_eq!(false_claim("It's locked.", &lock), None);
        // a door can be closed and locked at once
        assert_eq!(
            false_claim("The front door is closed and locked.", &lock),
            None
        );
    }

    #[test]
    fn a_reading_no_call_read_is_fabricated() {
        let one = |reply: &str, calls: &[Call]| {
            let found = fabricated_readings(reply, calls);
            assert_eq!(found.len(), 1, "{reply}: {found:?}");
        };
        one("The temperature in the bedroom is 22 degrees Celsius.", &[]);
        one("It's 9:15 PM.", &[]);
        one("Today is Tuesday.", &[]);
        one("The garage door is open.", &[]);
        one("The kitchen light is currently off.", &[]);
        one("The bathroom light has been switched off.", &[]);
        one("The living room light is at 40 percent.", &[]);
        // a call ran, but not on what the sentence reads
        let time = [Call::ok("get_time", json!({}), "21:14")];
        one("It is 21:14 and 22 degrees.", &time);
        one("The thermostat is at 21.", &time);
        let read = [Call::ok(
            "get_thermostat",
            json!({}),
            "thermostat set to 19 degrees",
        )];
        // the thermostat is not the bedroom's light; 21 is not what it read
        one("The temperature in the bedroom is 19 degrees.", &read);
        one("The thermostat is at 21 degrees.", &read);
        one("It's on.", &read);
        let lock = [Call::ok(
            "get_lock",
            json!({"door": "front"}),
            "front door unlocked",
        )];
        one("The front door is locked.", &lock);
        // each sentence counts
        let found = fabricated_readings("It's 22 degrees. The front door is locked.", &[]);
        assert_eq!(found.len(), 2, "{found:?}");
    }

    #[test]
    fn readings_a_call_backs_and_claims_that_read_nothing_are_not_fabricated() {
        let none = |reply: &str, calls: &[Call]| {
            let found = fabricated_readings(reply, calls);
            assert!(found.is_empty(), "{reply}: {found:?}");
        };
        // actions, not readings (they are false claims with no call, but read nothing)
        for reply in [
            "I've turned on the kitchen light.",
            "I turned it off.",
            "Done.",
            "All set.",
        ] {
            none(reply, &[]);
            assert!(false_claim(reply, &[]).is_some(), "{reply}");
        }
        // no reading at all
        for reply in [
            "Is the front door locked?",
            "The front door is not locked.",
            "You can set it to 21 degrees.",
            "Sorry, I can't read the temperature.",
            "You're welcome!",
            "I'll turn it on in 5 minutes.",
        ] {
            none(reply, &[]);
        }
        none("The kitchen light is on.", &[light("kitchen", true)]);
        none("It's on.", &[light("kitchen", true)]);
        none(
            "The thermostat is set to 21.5 degrees.",
            &[Call::ok(
                "set_thermostat",
                json!({"temperature": 21.5}),
                "thermostat set to 21.5 degrees",
            )],
        );
        none(
            "The thermostat is at 19 degrees.",
            &[Call::ok(
                "get_thermostat",
                json!({}),
                "thermostat set to 19 degrees",
            )],
        );
        none("It's 21:14.", &[Call::ok("get_time", json!({}), "21:14")]);
        none(
            "The front door is unlocked.",
            &[Call::ok(
                "get_lock",
                json!({"door": "front"}),
                "front door unlocked",
            )],
        );
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
            answer: None,
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
            phrase_pass: None,
            asked: None,
            answer: false,
        }
    }

    #[test]
    fn a_question_then_the_right_calls_is_right_and_counted_as_asked() {
        use crate::session::report::summarise;
        use crate::session::score::Asked;
        let on = || Expect {
            name: "set_light".into(),
            arguments: json!({"room": "kitchen", "on": true})
                .as_object()
                .cloned()
                .unwrap(),
        };
        let c = case(
            Kind::Paraphrase,
            "It's too dark in the kitchen.",
            vec![on()],
        );
        let light = Call {
            name: "set_light".into(),
            arguments: json!({"room": "kitchen", "on": true}),
            status: "ok".into(),
            result: "kitchen light on".into(),
        };
        let mut asked = turn(&c.say, "Shall I turn on the kitchen light?", vec![], 1.0);
        asked.asked = Some(asked.reply.clone());
        let mut yes = turn("Yes.", "The kitchen light is on.", vec![light.clone()], 4.0);
        mark_answers(std::slice::from_mut(&mut yes), &[(3.9, 4.6)]);
        assert!(yes.answer);
        let right = score(&c, vec![asked.clone(), yes.clone()]);
        assert_eq!(
            (right.verdict, right.asked),
            (Verdict::Right, Asked::ThenRight)
        );
        assert!(!right.refused);
        assert!(!right.misheard, "the yes is not part of what was heard");
        // asked and never answered: wrong, but not refused
        let unanswered = score(&c, vec![asked]);
        assert_eq!(
            (unanswered.verdict, unanswered.asked, unanswered.refused),
            (Verdict::Wrong, Asked::ThenWrong, false)
        );
        // refused: nothing ran, nothing asked
        let sorry = score(
            &c,
            vec![turn(&c.say, "Sorry, I couldn't finish that.", vec![], 1.0)],
        );
        assert!(sorry.refused);
        assert_eq!(sorry.asked, Asked::No);
        // a yes said though nothing asked (an input spoken before answers waited for a
        // question): run at once, the yes after it
        // is neither part of the request nor a second hearing of it
        let at_once = turn(&c.say, "The kitchen light is on.", vec![light.clone()], 1.0);
        let mut stray = turn("Yes.", "Okay.", vec![], 4.0);
        stray.answer = true;
        let once = score(&c, vec![at_once.clone(), stray]);
        assert_eq!((once.verdict, once.asked), (Verdict::Right, Asked::No));
        assert!(!once.split() && !once.misheard, "{once:?}");
        // and a call on a yes nothing asked for is the request's (here: one too many)
        let mut again = turn("Yes.", "", vec![light.clone(), light], 4.0);
        again.calls[1].arguments = json!({"room": "bedroom", "on": true});
        again.answer = true;
        assert_eq!(score(&c, vec![at_once, again]).verdict, Verdict::Wrong);
        let s = summarise("typed-session", "x", &[right, unanswered, sorry]);
        assert_eq!(
            (s.asked_then_right, s.asked_and_wrong, s.refused, s.split),
            (1, 1, 1, 0)
        );
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
                    ("endpoint".into(), 60.0),
                    ("stt".into(), 300.0),
                    ("first_voice".into(), f64::from(i) * 100.0),
                ];
                score(&case(Kind::Command, "turn on the light", vec![]), vec![t])
            })
            .collect();
        let table = stage_table(&scored);
        // a stage's share: what it adds to the stage on the way before it
        assert!(
            table.contains("| endpoint | 3 | 60 | 60 | 60 | 60 |"),
            "{table}"
        );
        assert!(table.contains("| stt | 3 | 300 | 300 | – | – |"), "{table}");
        assert!(
            table.contains("| first_voice | 3 | 200 | 300 | 140 | 240 |"),
            "{table}"
        );
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
        // a free text's spellings that mean the same
        let mum = expect(
            "set_reminder",
            json!({"text": {"one_of": ["call mum", "call mom"]}, "time": "6:00 PM"}),
        );
        let reminder = |text: &str| json!({"text": text, "time": "6:00 PM"});
        assert!(meets(
            &mum,
            &Call::ok("set_reminder", reminder("call mom"), "")
        ));
        assert!(meets(
            &mum,
            &Call::ok("set_reminder", reminder("call mum"), "")
        ));
        // whisper writes a name with its capital
        assert!(meets(
            &mum,
            &Call::ok("set_reminder", reminder("call Mum"), "")
        ));
        assert!(!meets(
            &mum,
            &Call::ok("set_reminder", reminder("call me"), "")
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
    fn calls_the_request_did_not_ask_for_are_unasked() {
        let show = |calls: Vec<&Call>| calls.into_iter().map(show_call).collect::<Vec<_>>();
        // a second value after the right one
        let warm = [expect("set_thermostat", json!({"temperature": 22.5}))];
        let (a, b) = (
            Call::ok("set_thermostat", json!({"temperature": 22.5}), ""),
            Call::ok("set_thermostat", json!({"temperature": 10}), ""),
        );
        assert_eq!(
            show(unasked(&warm, &[&a, &b])),
            [r#"set_thermostat({"temperature":10})"#]
        );
        assert_eq!(show(unasked(&warm, &[&b, &a])).len(), 1);
        assert!(unasked(&warm, &[&a]).is_empty());
        // a wrong argument: the living room turned on for "turn off ... the living room"
        let off = [
            expect("set_light", json!({"room": "kitchen", "on": false})),
            expect("set_light", json!({"room": "living room", "on": false})),
        ];
        let kitchen = Call::ok("set_light", json!({"room": "kitchen", "on": false}), "");
        let living_on = Call::ok("set_light", json!({"room": "living room", "on": true}), "");
        assert_eq!(unasked(&off, &[&kitchen, &living_on]), [&living_on]);
        // two calls that could fill one range: the later is extra
        let warmer = [expect(
            "set_thermostat",
            json!({"temperature": {"min": 19.5, "max": 25}}),
        )];
        let (c20, c21) = (
            Call::ok("set_thermostat", json!({"temperature": 20}), ""),
            Call::ok("set_thermostat", json!({"temperature": 21}), ""),
        );
        assert_eq!(
            show(unasked(&warmer, &[&c20, &c21])),
            [r#"set_thermostat({"temperature":21})"#]
        );
        // a call that could take either expectation is moved to let another fit
        let either = [
            expect(
                "set_thermostat",
                json!({"temperature": {"min": 19, "max": 25}}),
            ),
            expect("set_thermostat", json!({"temperature": 20})),
        ];
        assert!(unasked(&either, &[&c20, &c21]).is_empty());
        // anything on a request that asks for nothing
        let time = Call::ok("get_time", json!({}), "21:14");
        assert_eq!(show(unasked(&[], &[&time])), ["get_time()"]);
    }

    #[test]
    fn the_score_counts_unasked_calls_that_ran_once_each() {
        let c = case(
            Kind::Command,
            "Set the thermostat to 22.5 degrees.",
            vec![expect("set_thermostat", json!({"temperature": 22.5}))],
        );
        let right = Call::ok("set_thermostat", json!({"temperature": 22.5}), "");
        let extra = Call::ok("set_thermostat", json!({"temperature": 10}), "");
        let mut failed = Call::ok("set_light", json!({"room": "kitchen", "on": true}), "");
        failed.status = "error".into();
        let calls = vec![right.clone(), extra.clone(), extra, failed];
        let s = score(&c, vec![turn(&c.say, "", calls, 0.0)]);
        assert_eq!(s.verdict, Verdict::Wrong);
        assert_eq!(s.unasked, [r#"set_thermostat({"temperature":10})"#]);
        let s = score(&c, vec![turn(&c.say, "", vec![right], 0.0)]);
        assert_eq!(s.verdict, Verdict::Right);
        assert!(s.unasked.is_empty());
    }

    #[test]
    fn echoes_and_fabricated_readings_are_scored_per_case() {
        use crate::session::report::summarise;
        let c = case(
            Kind::Question,
            "What's the temperature in the bedroom?",
            vec![expect("get_thermostat", json!({}))],
        );
        // no call, and a temperature
        let s = score(
            &c,
            vec![turn(
                &c.say,
                "The temperature in the bedroom is 22 degrees Celsius.",
                vec![],
                0.0,
            )],
        );
        assert_eq!(s.fabricated.len(), 1);
        assert!(!s.echoed);
        // what was heard, said back
        let heard = "What's the temperature in the bathroom?";
        let echo = score(&c, vec![turn(heard, heard, vec![], 0.0)]);
        assert!(echo.echoed);
        assert!(echo.fabricated.is_empty());
        let read = Call::ok("get_thermostat", json!({}), "thermostat set to 21 degrees");
        let fine = score(
            &c,
            vec![turn(
                &c.say,
                "The thermostat is at 21 degrees.",
                vec![read],
                0.0,
            )],
        );
        assert!(fine.fabricated.is_empty() && !fine.echoed && fine.unasked.is_empty());
        let sum = summarise("typed", "demo", &[s, echo, fine]);
        assert_eq!(
            (sum.fabricated_readings, sum.unasked_calls, sum.echoed),
            (1, 0, 1)
        );
        // a greeting answered in kind is no echo; a joke asked back is
        let night = case(Kind::None, "Good night.", vec![]);
        assert!(!score(&night, vec![turn(&night.say, "Good night!", vec![], 0.0)]).echoed);
        let joke = case(Kind::None, "Tell me a joke.", vec![]);
        assert!(score(&joke, vec![turn(&joke.say, "Tell me a joke.", vec![], 0.0)]).echoed);
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
        assert_eq!(o.phrase_search(), None);
        // a turn whose transcript the recogniser's phrase pass searched for
        let mut v = v;
        v["phrase_pass"] = json!({"open": "is the Mac door locked.", "phrase": "is the back door locked.",
            "open_logprob": -3.0, "phrase_logprob": -3.75, "taken": true, "steps": 20, "ms": 80.0});
        let search = Observed::from_voice(&v).phrase_search().unwrap();
        assert_eq!(search.open, "is the Mac door locked.");
        assert_eq!(search.phrase.as_deref(), Some("is the back door locked."));
        assert_eq!((search.below, search.taken), (Some(0.75), true));
        assert_eq!(search.way_contrast, None);
        v["phrase_pass"]["way_contrast"] = json!(4.5);
        let search = Observed::from_voice(&v).phrase_search().unwrap();
        assert_eq!(search.way_contrast, Some(4.5));
        // one in the set already took no search
        v["phrase_pass"]["steps"] = json!(0);
        assert_eq!(Observed::from_voice(&v).phrase_search(), None);
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

mod tools {
    use crate::session::tools::*;

    fn demo() -> std::path::PathBuf {
        crate::root().join("tools")
    }

    #[test]
    fn a_bare_manifest_keeps_everything_but_the_sentences() {
        let text = std::fs::read_to_string(demo().join("demo.toml")).unwrap();
        let declared: toml::Table = text.parse().unwrap();
        let bare: toml::Table = bare_manifest(&text).unwrap().parse().unwrap();
        let tools = |t: &toml::Table| t["tool"].as_array().unwrap().clone();
        let (declared, bare) = (tools(&declared), tools(&bare));
        assert_eq!(declared.len(), bare.len());
        assert!(declared.iter().any(|t| t.get("intent").is_some()));
        assert!(declared.iter().any(|t| t.get("say").is_some()));
        for (d, b) in declared.iter().zip(&bare) {
            let (d, b) = (d.as_table().unwrap(), b.as_table().unwrap());
            for key in SENTENCE_KEYS {
                assert!(b.get(key).is_none(), "{key} left in {}", b["name"]);
            }
            let mut kept = d.clone();
            kept.retain(|k, _| !SENTENCE_KEYS.contains(&k));
            assert_eq!(&kept, b);
        }
    }

    #[test]
    fn the_bare_copy_loads_and_keeps_the_program_executable() {
        use std::os::unix::fs::PermissionsExt;
        let to = std::env::temp_dir().join(format!("hearth-bare-tools-{}", std::process::id()));
        copy_bare(&demo(), &to).unwrap();
        // again over the first copy: made afresh
        copy_bare(&demo(), &to).unwrap();
        let mode = std::fs::metadata(to.join("demo-home"))
            .unwrap()
            .permissions()
            .mode();
        assert_ne!(mode & 0o111, 0, "demo-home is not executable: {mode:o}");
        let text = std::fs::read_to_string(to.join("demo.toml")).unwrap();
        assert!(
            !text.contains("[[tool.intent]]") && !text.contains("say ="),
            "{text}"
        );
        let bare = hearth::tools::Registry::load_dir(&to).unwrap();
        let declared = hearth::tools::Registry::load_dir(demo()).unwrap();
        assert_eq!(
            bare.names().collect::<Vec<_>>(),
            declared.names().collect::<Vec<_>>()
        );
        let _ = std::fs::remove_dir_all(&to);
    }
}

#[test]
fn a_sentence_a_result_gave_is_founded_and_another_is_not() {
    use super::claims::{fabricated_readings, false_claim, Call};
    let calls = [Call::ok(
        "set_light",
        serde_json::json!({"name": "night light", "on": true}),
        "The bed light in the bedroom is on.",
    )];
    assert_eq!(
        false_claim("The bed light in the bedroom is on.", &calls),
        None
    );
    assert!(fabricated_readings("The bed light in the bedroom is on.", &calls).is_empty());
    assert!(false_claim("The bed light in the bedroom is off.", &calls).is_some());
    assert!(false_claim("The front door is locked.", &calls).is_some());
}
