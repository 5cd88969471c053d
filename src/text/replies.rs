//! Every sentence the bot writes about `/thirdshift` commands: help (an exhaustive match on the
//! command enum, so a command without help does not compile), parse errors, refusals and the
//! replies, plus the reasons commands put into end and cancel records.
//!
//! It decides nothing. Words from a command comment are untrusted: they are shown as inline code
//! with control characters escaped, on one line, so they cannot open a fence, mention anyone,
//! start a record line or run anywhere.

use chrono::{DateTime, Utc};

use super::code;
use crate::protocol::command::{Flag, ParseError, Pending, Verb};
use crate::protocol::config::Role;
use crate::protocol::record::{Answer, ClaimView, EndView};

/// What a verb does, one sentence.
pub fn verb_help(verb: Verb) -> &'static str {
    match verb {
        Verb::Recover => {
            "end the Claim of a Run its host proved dead, the way a failed run ends (refused \
             while the Run or any of its writers lives)"
        }
        Verb::Cancel => {
            "ask the host running the Run to stop it; the issue then waits for a person to put \
             the ready label back"
        }
        Verb::Status => "show the Claim: host, stage, session and what its host last reported",
        Verb::Help => "show this help",
    }
}

/// What a flag does, one sentence.
pub fn flag_help(flag: Flag) -> &'static str {
    match flag {
        Flag::Continue => "re-queue the issue as a Continuation that resumes the agent session",
        Flag::Force => {
            "end the Claim although its host has not reported on it (needs a higher permission)"
        }
        Flag::Kill => "ask the owning host to kill a live Run first, then recover it",
        Flag::Requeue => "put the issue straight back in the queue once the Run has stopped",
    }
}

/// The whole help: every verb with its flags.
pub fn help() -> String {
    let mut out = String::from("Commands, on the first line of a new comment:\n");
    for verb in Verb::ALL {
        let flags: String = verb
            .flags()
            .iter()
            .map(|f| format!(" [{}]", f.name()))
            .collect();
        out.push_str(&format!(
            "\n- `/thirdshift {}{flags}`: {}",
            verb.name(),
            verb_help(verb)
        ));
        for f in verb.flags() {
            out.push_str(&format!("\n  - `{}`: {}", f.name(), flag_help(*f)));
        }
    }
    out
}

/// Why a command could not be read, with a suggestion when one is close.
pub fn parse_error(e: &ParseError) -> String {
    let mean = |s: Option<String>| {
        s.map(|s| format!(" Did you mean `{s}`?"))
            .unwrap_or_default()
    };
    match e {
        ParseError::MissingVerb => "`/thirdshift` needs a command.".to_string(),
        ParseError::UnknownVerb { word, suggestion } => format!(
            "{} is not a command.{}",
            untrusted(word),
            mean(suggestion.map(|v| format!("/thirdshift {}", v.name())))
        ),
        ParseError::UnknownFlag {
            verb,
            flag,
            suggestion,
        } => format!(
            "`{}` does not take {}.{}",
            verb.name(),
            untrusted(flag),
            mean(suggestion.map(|f| f.name().to_string()))
        ),
        ParseError::DuplicateFlag { verb, flag } => {
            format!("`{}` was given `{}` twice.", verb.name(), flag.name())
        }
        ParseError::UnexpectedArgument { verb, word } => {
            format!("`{}` takes no argument {}.", verb.name(), untrusted(word))
        }
    }
}

/// The reply comment's readable part: whose command, which comment, the answer, the detail.
/// `command` is the canonical spelling, `None` when the comment could not be read.
pub fn reply(cmd: &Pending, command: Option<&str>, answer: Answer, detail: &str) -> String {
    format!(
        "{} @{}: `/thirdshift {}` ([comment {}]({})): **{}**\n\n{detail}\n\n\
         <sub>thirdshift answers each command comment once.</sub>",
        if answer.is_success() { "✅" } else { "⛔" },
        cmd.author,
        command.unwrap_or("…"),
        cmd.comment_id,
        cmd.html_url,
        headline(answer),
    )
}

/// A reply's detail after what the same pass did on the issue besides answering it (a dead
/// Run's Claim it ended), so a mistyped command is not left looking ignored.
pub fn also_did(detail: &str, claim_id: Option<&str>, note: &str) -> String {
    let claim = claim_id.map_or(String::new(), |c| format!(" `{c}`"));
    format!("This pass also ended the Claim{claim} on this issue: {note}\n\n{detail}")
}

fn headline(answer: Answer) -> &'static str {
    match answer {
        Answer::Recovered => "recovered",
        Answer::Continued => "recovered as a Continuation",
        Answer::Forced => "recovered by force",
        Answer::KillRequested => "kill requested",
        Answer::CancelRequested => "cancel requested",
        Answer::AlreadyRequested => "already requested",
        Answer::NothingToDo => "nothing to do",
        Answer::Answered => "answered",
        Answer::Refused => "refused",
        Answer::NotPermitted => "not permitted",
        Answer::Invalid => "not understood",
    }
}

pub fn not_permitted(author: &str, role: Role, needed: Role, what: &str) -> String {
    format!(
        "{what} needs the `{}` role or higher on this repository; @{author} has `{}`. Nothing \
         was changed.",
        needed.as_str(),
        role.as_str()
    )
}

pub fn edited(author: &str) -> String {
    format!(
        "This command was edited after @{author} posted it. GitHub does not say who edited it, \
         and anyone with write access may edit any comment, so an edited command is not run. \
         Nothing was changed; post the command again as a new comment."
    )
}

pub fn invalid(e: &ParseError) -> String {
    format!("{}\n\n{}", parse_error(e), help())
}

/// The evidence a dead Claim was recovered on, and where the issue goes.
pub fn recovered(note: &str) -> String {
    format!("{note}. The end record on this issue names the evidence and where the work is.")
}

/// The end record's reason for a forced recover.
pub fn forced_reason(login: &str, comment_id: u64, claim: &ClaimView, evidence: &str) -> String {
    format!(
        "@{login} forced the end of claim {} with `/thirdshift recover --force` (comment \
         {comment_id}) while its host {} had not proved it dead: {evidence}",
        claim.record.claim_id, claim.record.host
    )
}

pub fn forced(note: &str, login: &str) -> String {
    format!(
        "{note}. The end record names @{login} as the one who forced it; if the Run is in fact \
         alive it must stop, as it no longer owns the issue."
    )
}

pub fn refused_alive(evidence: &str) -> String {
    format!(
        "{evidence}, so its Claim is not ended. To stop it and recover its issue, ask \
         `/thirdshift recover --kill` (or `/thirdshift cancel --requeue` to hand it back)."
    )
}

pub fn refused_silent(evidence: &str, force: Role) -> String {
    format!(
        "{evidence}: nothing proves the Run dead, so its Claim is not ended. If the host is gone \
         for good, someone with the `{}` role can ask `/thirdshift recover --force`.",
        force.as_str()
    )
}

pub fn kill_requested(claim: &ClaimView, request_id: &str) -> String {
    format!(
        "Asked host {} to kill the Run of claim {} (request {}). Its next `observe` stops \
         the Run (SIGTERM, then SIGKILL), keeps its work and ends the Claim as recovered.",
        code(&claim.record.host),
        code(&claim.record.claim_id),
        code(request_id)
    )
}

pub fn cancel_requested(claim: &ClaimView, request_id: &str, requeue: bool) -> String {
    format!(
        "Asked host {} to stop the Run of claim {} (request {}). Its next `observe` stops \
         the Run, keeps its work (committed and pushed to the Issue branch), ends the Claim as \
         cancelled and {}",
        code(&claim.record.host),
        code(&claim.record.claim_id),
        code(request_id),
        super::cancel::after_cancel(requeue)
    )
}

/// `cancel` of a live thirdshift Command: its host is asked to stop it as thirdshift stops
/// itself.
pub fn adopted_cancel_requested(host: &str, claim_id: &str, request_id: &str) -> String {
    format!(
        "Asked host {} to stop thirdshift's Command {} (request {}). Its next `observe` runs \
         `thirdshift stop <its record> --requeue`: thirdshift then keeps its work, ends its \
         Claim and puts the issue back in the queue itself, which takes a few minutes; once it \
         has, the host records how it ended here.",
        code(host),
        code(claim_id),
        code(request_id)
    )
}

/// A request for thirdshift Command `claim_id` is already waiting.
pub fn adopted_already_requested(claim_id: &str, comment_id: u64) -> String {
    format!(
        "A request for thirdshift's Command {} is already waiting (comment {comment_id}); \
         nothing more was written.",
        code(claim_id)
    )
}

/// The cancel record's reason for a command.
pub fn request_reason(login: &str, command: &str, comment_id: u64) -> String {
    format!("@{login} asked `/thirdshift {command}` in comment {comment_id}")
}

pub fn already_requested(claim: &ClaimView, comment_id: u64) -> String {
    format!(
        "A request for claim {} is already waiting (comment {comment_id}); nothing more was \
         written.",
        code(&claim.record.claim_id)
    )
}

pub fn being_recovered(claim_id: &str, comment_id: u64) -> String {
    format!(
        "Claim {} was ended in answer to comment {comment_id} in this same pass.",
        code(claim_id)
    )
}

/// No active Claim: how the last one ended, if any.
pub fn nothing_active(last: Option<&EndView>) -> String {
    match last {
        None => "This issue has no active Run and has never been claimed.".to_string(),
        Some(e) => format!(
            "This issue has no active Run. Its last Claim {} ended **{}** by {} at {}.",
            code(&e.record.claim_id),
            e.record.outcome.as_str(),
            code(&e.record.actor),
            time(e.record.ended_at)
        ),
    }
}

pub fn issue_closed() -> &'static str {
    "This issue is closed: reconcile ends any Claim left on it as swept."
}

/// `status` of an active Claim.
pub fn status(claim: &ClaimView, verdict: &str) -> String {
    let c = &claim.record;
    let session = match (&c.agent_session, c.session_id) {
        (Some(s), _) => code(s),
        (None, Some(sid)) => format!("process session {sid}"),
        (None, None) => "not recorded".to_string(),
    };
    format!(
        "- Claim: {} (comment {})\n- Host: {} (pid {})\n- Stage: {} since {}\n- Session: \
         {session}\n- Verdict: {verdict}",
        code(&c.claim_id),
        claim.comment_id,
        code(&c.host),
        c.pid,
        code(&c.stage),
        time(c.stage_since)
    )
}

/// An untrusted word as inline code: one line, control characters escaped.
fn untrusted(word: &str) -> String {
    let escaped: String = word
        .chars()
        .map(|c| {
            if c.is_control() {
                c.escape_unicode().to_string()
            } else {
                c.to_string()
            }
        })
        .collect();
    code(&escaped)
}

fn time(t: DateTime<Utc>) -> String {
    t.format("%Y-%m-%d %H:%M UTC").to_string()
}

#[cfg(test)]
mod tests;
