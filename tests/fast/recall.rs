//! "What did you just do?" and "undo that" (`crates/hearth-core/src/agent/recall.rs`), on the agent rig of
//! `agent.rs`.

use super::agent::{ask, executions, rig_in, tools_dir_with, CHATML, MAIL_CALL};

/// "What did you just do?" tells the last calls in the tools' own words; "undo that" runs
/// the declared way back (`[tool.inverse]`), and refuses, running nothing, for a tool that
/// declares none. Neither asks the model.
#[tokio::test]
async fn what_did_you_do_and_undo_answer_from_the_last_calls() {
    let inverse = "[tool.inverse]\narguments = { room = \"{{ room }}\", on = \"{{ not on }}\" }";
    let r = rig_in(
        tools_dir_with(inverse),
        &[MAIL_CALL, "You have three unread mails."],
        "qwen2.5",
        CHATML,
        |_, _| {},
    )
    .await;
    let nothing = ask(&r.agent, "What did you just do?").await.unwrap();
    assert_eq!(
        nothing.reply,
        "I haven't done anything in this conversation yet."
    );
    ask(&r.agent, "turn on the kitchen light").await.unwrap();
    let told = ask(&r.agent, "What did you just do?").await.unwrap();
    assert_eq!(told.reply, "The last thing I did: the kitchen light is on.");
    let undone = ask(&r.agent, "Undo that, please.").await.unwrap();
    assert_eq!(undone.reply, "The kitchen light is off.");
    assert_eq!(executions(&r.log), ["kitchen on", "kitchen off"]);
    // the model's call of a tool with no way back: told, and never undone
    ask(&r.agent, "how much mail is there").await.unwrap();
    let told = ask(&r.agent, "what did you do").await.unwrap();
    assert!(
        told.reply
            .starts_with("The last thing I did: I ran check mail"),
        "{}",
        told.reply
    );
    let refused = ask(&r.agent, "undo that").await.unwrap();
    assert_eq!(
        refused.reply,
        "I can't undo that: check mail has no way back declared, so I changed nothing."
    );
    assert_eq!(executions(&r.log), ["kitchen on", "kitchen off", "mail"]);
    assert_eq!(
        r.recorded.lock().unwrap().len(),
        2,
        "only the mail asked the model"
    );
}
