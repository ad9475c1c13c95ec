//! Calls that wait for a yes: a tool's `confirm` (the question in the tool's words), and a
//! call hearth asks about rather than refuse (its way or value not said), driven by the
//! scripted engine as `agent.rs` drives the hop loop.

use std::path::PathBuf;

use hearth::agent::Ask;

use super::agent::{
    ask, ask_in, executions, rig, rig_in, spoken, tools_dir_with, CHATML, KITCHEN_CALL, MAIL_CALL,
};

/// set_light with turning a light off waiting for a yes (`[tool.confirm]`).
fn confirming_tools() -> (PathBuf, PathBuf) {
    tools_dir_with(
        "[tool.confirm]\nwhen = { on = false }\nask = \"Turn off the {{ room }} light?\"\n",
    )
}

#[tokio::test]
async fn a_call_that_waits_for_a_yes_runs_on_a_yes_and_never_otherwise() {
    // intents on: the requests are matched by the tool's derived sentences; the model is
    // asked only for what no intent matches ("Okay." each time)
    let r = rig_in(
        confirming_tools(),
        &["Okay.", "Okay.", "Okay."],
        "qwen2.5",
        CHATML,
        |_, _| {},
    )
    .await;
    let asked = ask(&r.agent, "turn off the kitchen light").await.unwrap();
    assert_eq!(asked.reply, "Turn off the kitchen light?");
    assert!(asked.hops[0].calls.is_empty());
    let hook = asked.hops[0].hook.as_deref().unwrap_or("");
    assert!(hook.starts_with("waiting for a yes: set_light"), "{hook}");
    assert!(executions(&r.log).is_empty(), "nothing runs on one hearing");
    // another conversation's yes is not this one's
    let elsewhere = ask_in(&r.agent, "other", "yes").await.unwrap();
    assert!(elsewhere.hops.iter().all(|h| h.calls.is_empty()));
    assert!(executions(&r.log).is_empty());
    let yes = ask(&r.agent, "Yes, please.").await.unwrap();
    assert_eq!(yes.reply, "The kitchen light is off.");
    assert_eq!(executions(&r.log), ["kitchen off"]);
    // a second yes has nothing to confirm
    let again = ask(&r.agent, "yes").await.unwrap();
    assert!(again.hops.iter().all(|h| h.calls.is_empty()), "{again:?}");
    assert_eq!(executions(&r.log), ["kitchen off"]);

    // a no is answered, and nothing runs
    ask(&r.agent, "turn off the living room light")
        .await
        .unwrap();
    let no = ask(&r.agent, "No.").await.unwrap();
    assert_eq!(no.reply, hearth::agent::confirm::DECLINED);
    assert_eq!(executions(&r.log), ["kitchen off"]);

    // another request drops the question: a later yes runs nothing
    ask(&r.agent, "turn off the living room light")
        .await
        .unwrap();
    let other = ask(&r.agent, "turn on the kitchen light").await.unwrap();
    assert_eq!(
        other.reply, "The kitchen light is on.",
        "the other direction runs at once"
    );
    ask(&r.agent, "yes").await.unwrap();
    assert_eq!(executions(&r.log), ["kitchen off", "kitchen on"]);

    // a yes said beforehand (`hearth ask --yes`) runs it at once
    let mut told = Ask::new("s", "turn off the kitchen light");
    told.confirmed = true;
    let done = hearth::agent::ask(&r.agent, told).await.unwrap();
    assert_eq!(done.reply, "The kitchen light is off.");
    assert_eq!(
        executions(&r.log),
        ["kitchen off", "kitchen on", "kitchen off"]
    );
}

#[tokio::test]
async fn a_call_the_model_chose_waits_for_a_yes_too() {
    const OFF: &str = "<tool_call>\n{\"name\": \"set_light\", \"arguments\": {\"room\": \"kitchen\", \"on\": false}}\n</tool_call>";
    let r = rig_in(
        confirming_tools(),
        &[OFF, "never generated"],
        "qwen2.5",
        CHATML,
        |cfg, _| cfg.intents = false,
    )
    .await;
    let asked = ask(&r.agent, "switch the kitchen light off").await.unwrap();
    assert_eq!(asked.reply, "Turn off the kitchen light?");
    assert!(executions(&r.log).is_empty());
    let yes = ask(&r.agent, "go ahead").await.unwrap();
    assert_eq!(yes.reply, "The kitchen light is off.");
    assert_eq!(executions(&r.log), ["kitchen off"]);
    assert_eq!(
        r.recorded.lock().unwrap().len(),
        1,
        "the yes took no model hop"
    );
}

/// A call about what the request names, whose way nobody said ("It's too dark in the
/// kitchen." → the kitchen light on), is asked about in the tool's own words rather than
/// refused; a yes runs it, a no runs nothing.
#[tokio::test]
async fn a_call_whose_way_nobody_said_is_asked_about_and_runs_on_a_yes() {
    let r = rig(
        &[KITCHEN_CALL, KITCHEN_CALL],
        "qwen2.5-coder",
        CHATML,
        |_, _| {},
    )
    .await;
    let (turn, said) = spoken(&r.agent, "s", "It's too dark in the kitchen.").await;
    assert!(executions(&r.log).is_empty(), "nothing ran before the yes");
    assert_eq!(said, ["Shall I turn on the kitchen light?"]);
    assert!(turn.hops[0]
        .hook
        .as_deref()
        .is_some_and(|h| h.starts_with("waiting for a yes: set_light")));
    let (_, said) = spoken(&r.agent, "s", "Yes, please.").await;
    assert_eq!(executions(&r.log), ["kitchen on"]);
    assert_eq!(said, ["The kitchen light is on."]);

    let (_, said) = spoken(&r.agent, "s", "It's too dark in the kitchen.").await;
    assert_eq!(said, ["Shall I turn on the kitchen light?"]);
    let (_, said) = spoken(&r.agent, "s", "No.").await;
    assert_eq!(executions(&r.log), ["kitchen on"], "a no runs nothing");
    assert_eq!(said, [hearth::agent::confirm::DECLINED]);
    // a yes with nothing asked runs nothing and says so, without the model
    let (turn, said) = spoken(&r.agent, "s", "Yes.").await;
    assert_eq!(said, [hearth::agent::confirm::UNASKED]);
    assert_eq!(turn.hops[0].telemetry.parse_mode, "unasked");
    assert_eq!(executions(&r.log), ["kitchen on"]);
}

/// "Turn on the light." in a house of two rooms, where the model chose one nobody named:
/// hearth asks which instead of refusing, an answer that names a room runs the call there
/// (not the model's guess); a yes is asked the question again, and another request drops
/// the calls.
#[tokio::test]
async fn a_call_right_but_for_a_room_nobody_named_asks_which() {
    let r = rig(
        &[KITCHEN_CALL, KITCHEN_CALL, KITCHEN_CALL, "Which kitchen?"],
        "qwen2.5-coder",
        CHATML,
        |_, _| {},
    )
    .await;
    let (turn, said) = spoken(&r.agent, "s", "Turn on the light.").await;
    assert!(
        executions(&r.log).is_empty(),
        "nothing ran before the answer"
    );
    let [question] = said.as_slice() else {
        panic!("{said:?}")
    };
    assert_eq!(question, "Which room: the kitchen or living room?");
    assert!(turn.hops[0]
        .hook
        .as_deref()
        .is_some_and(|h| h.starts_with("waiting for a choice: set_light")));
    let (turn, said) = spoken(&r.agent, "s", "The living room, please.").await;
    assert_eq!(executions(&r.log), ["living room on"]);
    assert_eq!(said, ["The living room light is on."]);
    assert_eq!(turn.hops[0].telemetry.parse_mode, "chosen");

    let (_, said) = spoken(&r.agent, "s", "Turn on the light.").await;
    assert!(said[0].starts_with("Which room"), "{said:?}");
    // a yes names no room: asked again, and the calls still wait for one
    let (turn, again) = spoken(&r.agent, "s", "Yes.").await;
    assert_eq!(executions(&r.log), ["living room on"]);
    assert_eq!(again, said);
    assert!(turn.hops[0]
        .hook
        .as_deref()
        .is_some_and(|h| h.starts_with("waiting for a choice")));
    spoken(&r.agent, "s", "The kitchen.").await;
    assert_eq!(executions(&r.log), ["living room on", "kitchen on"]);
    // another request drops them
    spoken(&r.agent, "s", "Turn on the light.").await;
    let (turn, _) = spoken(&r.agent, "s", "What time is it?").await;
    assert_ne!(turn.hops[0].telemetry.parse_mode, "chosen");
    spoken(&r.agent, "s", "The kitchen.").await;
    assert_eq!(
        executions(&r.log),
        ["living room on", "kitchen on"],
        "an answer after another request runs nothing held"
    );
}

/// A request heard unsurely: the transcript is no request of the tools', the recogniser's
/// near phrase is ("turn on the kitchen lite" / "turn on the kitchen light"). hearth asks
/// whether it was meant, in the tool's own words, instead of asking the model; a yes runs
/// it. A transcript that is a request itself, or that asks to know something, is taken as
/// it is.
#[tokio::test]
async fn a_request_heard_unsurely_is_asked_about_and_runs_on_a_yes() {
    // intents on; the model, if it were asked, would check the mail
    let r = rig(&[MAIL_CALL, MAIL_CALL], "qwen2.5", CHATML, |cfg, _| {
        cfg.intents = true;
    })
    .await;
    let heard = |text: &str, near: &str| {
        let mut a = Ask::new("s", text);
        a.heard_as = Some(near.to_string());
        a
    };
    let unsure = heard("turn on the kitchen lite", "turn on the kitchen light");
    let asked = hearth::agent::ask(&r.agent, unsure).await.unwrap();
    assert_eq!(asked.reply, "Shall I turn on the kitchen light?");
    assert_eq!(asked.hops[0].telemetry.parse_mode, "heard as");
    let hook = asked.hops[0].hook.as_deref().unwrap_or("");
    assert!(hook.starts_with("waiting for a yes: set_light"), "{hook}");
    assert!(executions(&r.log).is_empty(), "nothing runs before the yes");
    let yes = ask(&r.agent, "Yes.").await.unwrap();
    assert_eq!(yes.reply, "The kitchen light is on.");
    assert_eq!(executions(&r.log), ["kitchen on"]);

    // a no runs nothing
    let unsure = heard("turn off the kitchen lite", "turn off the kitchen light");
    hearth::agent::ask(&r.agent, unsure).await.unwrap();
    let no = ask(&r.agent, "No.").await.unwrap();
    assert_eq!(no.reply, hearth::agent::confirm::DECLINED);
    assert_eq!(executions(&r.log), ["kitchen on"]);

    // what was heard, when it is a request, runs as heard
    let sure = heard("turn off the kitchen light", "turn on the kitchen light");
    let done = hearth::agent::ask(&r.agent, sure).await.unwrap();
    assert_eq!(done.reply, "The kitchen light is off.");
    assert_eq!(executions(&r.log), ["kitchen on", "kitchen off"]);

    // a question is never turned into a proposal: it goes to the model as heard
    let question = heard("is the kitchen lite on", "turn on the kitchen light");
    let answered = hearth::agent::ask(&r.agent, question).await.unwrap();
    assert_ne!(answered.hops[0].telemetry.parse_mode, "heard as");
    assert!(!answered.reply.starts_with("Shall I"), "{}", answered.reply);
    let on = executions(&r.log)
        .iter()
        .filter(|e| *e == "kitchen on")
        .count();
    assert_eq!(on, 1, "the near phrase never runs unasked");
}
