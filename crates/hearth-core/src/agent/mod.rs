//! The agent: the LLM hop loop, as an actor.
//!
//! One turn: first its plan (`plan.rs`, decided once from the words, the session and the
//! tools, with no engine: an answer to the session's question, a recall, a local intent, the
//! near phrase asked about, or the model; the voice path's "would a local intent answer
//! this?" reads the same plan). The local intents ([`crate::intent`]): a request that a tool's sentence
//! templates (its own, and those its shape implies: `intent/derive.rs`) match whole (or, failing that, a follow-up to the calls the session ran before:
//! "turn it off again", "make it warmer", [`Before`]) runs those calls at once and is
//! answered with their confirmations (`say`, else the shape's), with no LLM hop ([`Handled::Intent`]). Otherwise the user's
//! text joins the session's history; each hop renders the chat template, generates (under a
//! grammar when the preset's `tool_choice_policy` asks for one), streams the output into the
//! parser chain, validates what it found, runs the valid calls and feeds the results back,
//! until the model answers in words or `max_hops` runs out.
//!
//! One turn runs at a time, and the agent owns the one queue of requests waiting for it
//! (spoken, D-Bus, CLI alike): each [`Ask`] carries its deadline ([`Ask::wait_up_to`]), waits
//! in arrival order up to it, and is refused with `Busy`, `QueueFull` ([`QUEUE_LIMIT`]) or
//! `WaitedTooLong` otherwise. Neither the bus nor the voice pipeline keeps a queue.
//!
//! Where the pieces are (this file only declares them and re-exports the face; no module
//! imports from it): `messages.rs`, the face (`Ask`, `AgentMsg`, `Turn`, `AgentError`, the
//! configuration); `actor.rs`, the actor and its one queue; `shared.rs`, what every turn
//! shares with the actor and the work all turns do with it (rendering to fit the context,
//! running calls, keeping a turn in its session); `session.rs`, what a conversation keeps
//! and the bounded store of them; `turn.rs`, the hop
//! loop (`run_turn`, `hop`, the turn's state); `hooks.rs`, the small-model hooks and the
//! recovery from flagged hops, each a function returning a decision; `generate.rs`, one
//! hop's streamed generation; `reply.rs`, what is said; `plan.rs`, what a request is (the one
//! decision of which path answers it); `intent_turn.rs`, the turns the plan answers without
//! the model;
//! `check.rs`, the reply checks, with `reading.rs`, what a reply states as a reading and
//! what results carry; `history.rs`, what a turn leaves in its session.
//!
//! The ten rules, and where each lives:
//! 1. raw-first detection: the parser sees the raw output, think blocks included
//!    (`generate.rs` streams every token into [`Parser::stream`]);
//! 2. only [`Speakable`] text is returned as the reply (think, markup, JSON removed)
//!    (`reply.rs`; sentences sent as they settle in `generate.rs`);
//! 3. two phases: only calls that pass validation (allowlist + JSON Schema) run (`turn.rs`
//!    runs only `ParseOutput::calls`; the tools actor checks them again);
//! 4. per-preset detector chains: [`Preset::parser`];
//! 5. loose formats are allowlist-gated inside the parser ([`crate::toolcall`]);
//! 6. call ids round-trip into the tool messages verbatim (`TurnState::round_trip` in
//!    `turn.rs`);
//! 7. synthetic-user fallback when the template has no tool role or the call was not native
//!    ([`synthetic_results`], `TurnState::round_trip`);
//! 8. grammar per `tool_choice_policy` ([`crate::llm::ToolChoice::for_hop`], cached by
//!    fingerprint; the hooks' overrides of it: `NextHop` in `hooks.rs`);
//! 9. small-model hooks (`hooks.rs`, each a function returning a decision that `turn.rs`
//!    applies): a repeated identical call (hint, then stop), an echoed tool payload (never
//!    spoken; one nudge, then a reply built from the results), invalid, empty or
//!    schema-echo arguments for a known tool (re-ask once, held to that tool's grammar when
//!    the preset has one, then stop), hop exhaustion (a short spoken apology);
//! 10. telemetry per hop and call (parse mode, fallback, candidates, schema result, status)
//!     (the `hop` span and [`HopReport`] in `turn.rs`, the per-call events of `run_calls`).
//!
//! **Nothing claimed that was not done, nothing said that no result carries.** While no
//! call has run in a turn, every sentence the model writes is checked before it is spoken
//! ([`ReplyCheck`]): a claim of an action or a device state, a reading (a temperature, a
//! time, a date, a level, a number with a unit, a state of the home such as "is cold", a
//! yes or no to a question about the home: `reading.rs`), talk about functions or tools, a
//! reply repeated to a different request, or the request (or an earlier one) said back is
//! held back, with everything after it; so is a reply with nothing to speak.
//! The turn is then asked again once, in the way that answers what went wrong
//! (`Recovery` in `hooks.rs`): words that needed a call, or a call to a misnamed tool, held to a
//! call with the history (what "it" refers to); words copied from the history, nothing
//! speakable, nothing at all and a call nobody asked for held to words, without the history
//! and shown no tools (the words prompt); never the same prompt again. A second flag
//! ends the turn. After calls, the model's words are checked against
//! what the turn's results carry (with the request and the calls' arguments): a number, a
//! time, a date or a state of the home that none of them carries, or the request said back,
//! is never spoken, and the turn answers with words built from the results instead. The
//! first calls of a turn run only when they are about what was said
//! ([`ReplyCheck::grounded`]): the request, or the turn before it when the request points
//! back at it ("turn it off", "and the bedroom too": [`check::refers_back`]). No call of
//! any hop runs with a value nobody said ([`crate::intent::unsupported`]: a number, an enum
//! value, a switch's direction); the other calls of its hop do, and the rest of the request
//! is asked for in a follow-up hop. When no call of the hop is left: before any call it is
//! recovered from like a claim, after calls the turn ends with what ran.
//! When nothing works, the turn says so ([`NOTHING_DONE`]) and is not kept in the history,
//! so one bad turn cannot teach the next; nor is a turn that answered nothing (an apology
//! and no call done), nor, ever, words that failed a check or what a flagged hop wrote
//! (`history.rs`). The turn reports what was caught (`unfounded`, and each hop's `hook`).
//!
//! A hop whose calls all succeeded and all have a confirmation (`say`, or their shape's:
//! "The bedroom temperature is 21.5 degrees.") speaks those at once
//! and skips the second LLM hop, unless the request asked for more than was called (more
//! clauses than calls, see [`clauses`]: "what time is it? and switch the light off"): then
//! a follow-up hop, held to a tool call, may call the next tool; a call already made, or
//! none, ends the turn with the confirmations. What a turn leaves in the session's history
//! is [`HistoryMode`]'s choice; the history is trimmed oldest-first when the prompt would
//! not fit the context.

mod actor;
mod check;
pub mod confirm;
mod generate;
mod history;
mod hooks;
mod intent_turn;
mod messages;
mod plan;
mod reading;
mod recall;
mod reply;
mod report;
mod session;
mod shared;
mod turn;
mod warm;
mod which;
mod words;

pub use actor::{Agent, AgentState};
pub use check::small_talk;
pub use history::HistoryMode;
pub use messages::plan_ahead;
pub use messages::{
    ask, AgentArgs, AgentConfig, AgentError, AgentMsg, Ask, CallReport, Foreseen, Handled,
    HopReport, Timings, Turn, APOLOGY, MODEL_UNAVAILABLE, NOTHING_DONE, QUEUE_LIMIT,
};
pub use messages::{HISTORY_TOKENS, TURN_BUDGET};
pub use plan::Planned;
pub use session::SESSIONS_KEPT;
pub use words::{clauses, request_parts};
