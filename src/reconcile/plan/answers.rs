//! `/thirdshift` commands as one more input to `plan`: for each command waiting on an issue
//! (earliest first), the permission check, the decision and the reply, from the same snapshot and
//! the same rules as a scheduled pass, so the two can never decide differently. Pure: the author's
//! role was read into the snapshot, and ids of what a command writes derive from its comment id,
//! so a command handled twice (by its event and by a pass) writes the same records, which apply
//! finds and does not repeat.
//!
//! `recover` ends a Claim its host proved dead, exactly as a pass would (`--continue` re-queues it
//! as a Continuation); it is refused with the evidence while the owner or its writers live, unless
//! `--kill` asks the owning host to kill the Run (a cancel record with `recover`, carried out by
//! that host's `observe`); with `--force` (a higher role) it ends the Claim of a host that has not
//! reported, naming the person as the end record's actor. `cancel` posts a cancel request;
//! `status` and `help` only answer.

use crate::protocol::command::{Cancel, Command, Parsed, Recover};
use crate::protocol::record::{Answer, CancelRecord, ClaimView, ReplyRecord, Verdict};
use crate::protocol::rules::REFUSAL_REPLY_EVERY;
use crate::snapshot::{CommandView, IssueSnapshot};
use crate::text::evidence;
use crate::text::reasons::recovered_reason;
use crate::text::replies as text;

use super::recover::Asked;
use super::{Action, Evidence, Finding, Planner, Steps};

/// A command decided, its reply not yet posted.
pub(super) struct Answered<'a> {
    cmd: &'a CommandView,
    reply: Reply,
}

/// The answer to one command, and the Claim it concerned.
struct Reply {
    answer: Answer,
    claim_id: Option<String>,
    detail: String,
}

impl Reply {
    fn new(answer: Answer, claim: Option<&ClaimView>, detail: impl Into<String>) -> Reply {
        Reply {
            answer,
            claim_id: claim.map(|c| c.record.claim_id.clone()),
            detail: detail.into(),
        }
    }
}

/// The request id of the cancel record a command posts: derived from the command comment, so
/// handling the command again finds the same request instead of posting another.
pub fn request_id(comment_id: u64) -> String {
    format!("cx-cmd-{comment_id}")
}

impl Planner<'_> {
    /// Decides every command waiting on `issue`; returns whether one of them ended its owner
    /// (which the pass then does not judge again) and the answers, posted by [`Self::reply`]
    /// once the pass has judged the issue, so each can say what the pass did there too.
    pub(super) fn commands(
        &self,
        issue: &IssueSnapshot,
        s: &mut Steps,
        findings: &mut Vec<Finding>,
    ) -> (bool, Vec<Answered<'_>>) {
        let mut ended_by: Option<u64> = None;
        let mut answered = Vec::new();
        let waiting = self.snapshot.commands.iter();
        for cmd in waiting.filter(|c| c.pending.issue == issue.number) {
            let p = &cmd.pending;
            if self.refused_quietly(cmd) {
                if !p.refused {
                    s.answers.push(react(p.issue, p.comment_id, "-1"));
                }
                continue;
            }
            s.acks.push(react(p.issue, p.comment_id, "eyes"));
            let reply = self.answer(issue, cmd, &mut ended_by, s, findings);
            answered.push(Answered { cmd, reply });
        }
        (ended_by.is_some(), answered)
    }

    /// Posts the answers of [`Self::commands`] with their reactions; `also` is what the pass did
    /// on the issue besides (a dead Run's Claim it ended), told in each reply.
    pub(super) fn reply(&self, answered: Vec<Answered>, also: Option<&Finding>, s: &mut Steps) {
        for Answered { cmd, reply } in answered {
            let p = &cmd.pending;
            let command = match &p.parsed {
                Parsed::Command(c) => Some(c.canonical()),
                _ => None,
            };
            let detail = match also {
                Some(f) => text::also_did(&reply.detail, f.claim_id.as_deref(), &f.note),
                None => reply.detail,
            };
            let body = text::reply(p, command.as_deref(), reply.answer, &detail);
            let record = ReplyRecord {
                command_comment_id: p.comment_id,
                issue: p.issue,
                author: p.author.clone(),
                command: command.unwrap_or_else(|| "invalid".into()),
                answer: reply.answer,
                claim_id: reply.claim_id,
                replied_at: self.input.now,
            };
            s.answers.push(Action::PostReply {
                issue: p.issue,
                body: record.to_comment(&body),
                reply: Box::new(record),
            });
            let verdict = if reply.answer.is_success() {
                "+1"
            } else {
                "-1"
            };
            s.answers.push(react(p.issue, p.comment_id, verdict));
        }
    }

    /// Whether `cmd`, by someone without the role, is refused by a `-1` reaction alone (none at
    /// all once it carries one): its author was already told within the hour
    /// ([`REFUSAL_REPLY_EVERY`]), or an earlier command of theirs is told in this pass. Only the
    /// first such command an hour gets a reply, so a stranger's comments cost one reaction each.
    fn refused_quietly(&self, cmd: &CommandView) -> bool {
        let needed = self.config.commands.permission;
        let refused = |c: &CommandView| !c.pending.edited && c.role < needed;
        if !refused(cmd) {
            return false;
        }
        let author = cmd.pending.author.to_ascii_lowercase();
        let told = self.snapshot.refusals.get(&author);
        if told.is_some_and(|at| self.input.now - *at < REFUSAL_REPLY_EVERY) || cmd.pending.refused
        {
            return true;
        }
        let first = self
            .snapshot
            .commands
            .iter()
            .filter(|c| refused(c) && !c.pending.refused)
            .filter(|c| c.pending.author.eq_ignore_ascii_case(&author))
            .map(|c| c.pending.comment_id)
            .min();
        first != Some(cmd.pending.comment_id)
    }

    /// The decision on one command; its writes go to `s`.
    fn answer(
        &self,
        issue: &IssueSnapshot,
        cmd: &CommandView,
        ended_by: &mut Option<u64>,
        s: &mut Steps,
        findings: &mut Vec<Finding>,
    ) -> Reply {
        if cmd.pending.edited {
            let detail = text::edited(&cmd.pending.author);
            return Reply::new(Answer::NotPermitted, None, detail);
        }
        let needed = self.config.commands.permission;
        if cmd.role < needed {
            let detail = text::not_permitted(&cmd.pending.author, cmd.role, needed, "A command");
            return Reply::new(Answer::NotPermitted, None, detail);
        }
        let command = match &cmd.pending.parsed {
            Parsed::Command(c) => *c,
            Parsed::Invalid(e) => return Reply::new(Answer::Invalid, None, text::invalid(e)),
            Parsed::NotACommand => return Reply::new(Answer::Invalid, None, text::help()),
        };
        let owner = issue.ownership.owner.as_ref();
        match command {
            Command::Help => Reply::new(Answer::Answered, None, text::help()),
            Command::Status => self.status(issue),
            Command::Cancel(flags) => self.cancel(issue, cmd, flags, s),
            Command::Recover(flags) => {
                let force = self.config.commands.force_permission;
                if flags.force && cmd.role < force {
                    let (who, role) = (&cmd.pending.author, cmd.role);
                    let detail = text::not_permitted(who, role, force, "`recover --force`");
                    return Reply::new(Answer::NotPermitted, owner, detail);
                }
                if let (Some(first), Some(o)) = (*ended_by, owner) {
                    let detail = text::being_recovered(&o.record.claim_id, first);
                    return Reply::new(Answer::AlreadyRequested, Some(o), detail);
                }
                let reply = self.recover_cmd(issue, cmd, flags, s, findings);
                if matches!(
                    reply.answer,
                    Answer::Recovered | Answer::Continued | Answer::Forced
                ) {
                    *ended_by = Some(cmd.pending.comment_id);
                }
                reply
            }
        }
    }

    fn status(&self, issue: &IssueSnapshot) -> Reply {
        let Some(owner) = &issue.ownership.owner else {
            return Reply::new(Answer::Answered, None, self.nothing_active(issue));
        };
        let verdict = match self.evidence(owner) {
            Evidence::Missing if self.starting(&owner.record) => evidence::status_starting(),
            Evidence::Missing => evidence::status_awaiting_host(),
            Evidence::OtherMachine { machine_id } => evidence::status_host_mismatch(machine_id),
            Evidence::Verdict(v) => evidence::status_verdict(&v.verdict),
        };
        Reply::new(Answer::Answered, Some(owner), text::status(owner, &verdict))
    }

    fn cancel(
        &self,
        issue: &IssueSnapshot,
        cmd: &CommandView,
        flags: Cancel,
        s: &mut Steps,
    ) -> Reply {
        let own = &issue.ownership;
        let Some(owner) = own.owner.as_ref().filter(|_| issue.open) else {
            if let Some(reply) = self.cancel_adopted(issue, cmd, s) {
                return reply;
            }
            return Reply::new(Answer::NothingToDo, None, self.nothing_active(issue));
        };
        if let Some(p) = own.pending_cancel(&owner.record.claim_id) {
            let detail = text::already_requested(owner, p.comment_id);
            return Reply::new(Answer::AlreadyRequested, Some(owner), detail);
        }
        let id = self.request(owner, cmd, Command::Cancel(flags), s);
        let detail = text::cancel_requested(owner, &id, flags.requeue);
        Reply::new(Answer::CancelRequested, Some(owner), detail)
    }

    /// `cancel` of a live thirdshift Command on an issue no claim of ours owns: its host is asked
    /// to stop it the way thirdshift stops itself (`thirdshift stop … --requeue`, see
    /// `crate::observe::stop_adopted`). `None` when no live Command of thirdshift is reported there.
    fn cancel_adopted(
        &self,
        issue: &IssueSnapshot,
        cmd: &CommandView,
        s: &mut Steps,
    ) -> Option<Reply> {
        let (report, verdict) = self.snapshot.live_adopted_on(issue)?;
        let (id, host) = (&verdict.claim_id, &report.report.host);
        let reply = |answer, detail: String| Reply {
            answer,
            claim_id: Some(id.clone()),
            detail,
        };
        if let Some(p) = issue.ownership.pending_adopted_cancel(id) {
            let detail = text::adopted_already_requested(id, p.comment_id);
            return Some(reply(Answer::AlreadyRequested, detail));
        }
        let p = &cmd.pending;
        let record = CancelRecord {
            request_id: request_id(p.comment_id),
            claim_id: id.clone(),
            issue: p.issue,
            requested_by: p.author.clone(),
            reason: Some(text::request_reason(&p.author, "cancel", p.comment_id)),
            requested_at: self.input.now,
            recover: false,
            requeue: false,
        };
        let request = record.request_id.clone();
        s.requests.push(Action::PostCancel {
            issue: p.issue,
            cancel: Box::new(record),
        });
        let detail = text::adopted_cancel_requested(host, id, &request);
        Some(reply(Answer::CancelRequested, detail))
    }

    /// `recover`, with the owner's evidence deciding, as in a pass.
    fn recover_cmd(
        &self,
        issue: &IssueSnapshot,
        cmd: &CommandView,
        flags: Recover,
        s: &mut Steps,
        findings: &mut Vec<Finding>,
    ) -> Reply {
        if !issue.open {
            return Reply::new(Answer::NothingToDo, None, text::issue_closed());
        }
        let Some(owner) = &issue.ownership.owner else {
            return Reply::new(Answer::NothingToDo, None, self.nothing_active(issue));
        };
        let mut asked = Asked {
            continue_: flags.continue_,
            actor: None,
            cause: None,
        };
        let silent = match self.evidence(owner) {
            Evidence::Verdict(v) => match &v.verdict {
                Verdict::Dead { reason, evidence } => {
                    let c = &owner.record;
                    let why = recovered_reason(&c.host, &c.claim_id, *reason, evidence);
                    asked.cause = Some(self.cause_of_death(owner, *reason));
                    let before = s.ends.len();
                    let f = self.end_dead(issue, owner, why, v.kept.as_ref(), &asked, s);
                    let continued = s.ends[before..].iter().any(
                        |a| matches!(a, Action::PostEnd { end, .. } if end.continuation.is_some()),
                    );
                    let detail = text::recovered(&f.note);
                    findings.push(f);
                    let answer = if continued {
                        Answer::Continued
                    } else {
                        Answer::Recovered
                    };
                    return Reply::new(answer, Some(owner), detail);
                }
                Verdict::Alive | Verdict::WritersAlive { .. } => {
                    return self.live(issue, owner, cmd, flags, s);
                }
            },
            Evidence::Missing | Evidence::OtherMachine { .. } => {
                self.judge_owner(issue, owner, &mut Steps::default()).note
            }
        };
        if !flags.force {
            let force = self.config.commands.force_permission;
            let detail = text::refused_silent(&silent, force);
            return Reply::new(Answer::Refused, Some(owner), detail);
        }
        let login = &cmd.pending.author;
        let why = text::forced_reason(login, cmd.pending.comment_id, owner, &silent);
        let asked = Asked {
            actor: Some(login.clone()),
            ..asked
        };
        let f = self.end_dead(issue, owner, why, None, &asked, s);
        let detail = text::forced(&f.note, login);
        findings.push(f);
        Reply::new(Answer::Forced, Some(owner), detail)
    }

    /// `recover` of a live owner (or one with live writers): refused with the evidence, or with
    /// `--kill` a request that its host kill the Run and recover it.
    fn live(
        &self,
        issue: &IssueSnapshot,
        owner: &ClaimView,
        cmd: &CommandView,
        flags: Recover,
        s: &mut Steps,
    ) -> Reply {
        let evidence = self.judge_owner(issue, owner, &mut Steps::default()).note;
        if !flags.kill {
            return Reply::new(Answer::Refused, Some(owner), text::refused_alive(&evidence));
        }
        if let Some(p) = issue.ownership.pending_cancel(&owner.record.claim_id) {
            let detail = text::already_requested(owner, p.comment_id);
            return Reply::new(Answer::AlreadyRequested, Some(owner), detail);
        }
        let id = self.request(owner, cmd, Command::Recover(flags), s);
        Reply::new(
            Answer::KillRequested,
            Some(owner),
            text::kill_requested(owner, &id),
        )
    }

    /// Adds a cancel record for `owner` asked by `cmd`; returns its request id.
    fn request(
        &self,
        owner: &ClaimView,
        cmd: &CommandView,
        command: Command,
        s: &mut Steps,
    ) -> String {
        let p = &cmd.pending;
        let recover = matches!(command, Command::Recover(_));
        let requeue = matches!(command, Command::Cancel(c) if c.requeue);
        let command = command.canonical();
        let record = CancelRecord {
            request_id: request_id(p.comment_id),
            claim_id: owner.record.claim_id.clone(),
            issue: p.issue,
            requested_by: p.author.clone(),
            reason: Some(text::request_reason(&p.author, &command, p.comment_id)),
            requested_at: self.input.now,
            recover,
            requeue,
        };
        let id = record.request_id.clone();
        s.requests.push(Action::PostCancel {
            issue: p.issue,
            cancel: Box::new(record),
        });
        id
    }

    fn nothing_active(&self, issue: &IssueSnapshot) -> String {
        let last = issue.ownership.last_ended().map(|(_, e)| e);
        text::nothing_active(last)
    }
}

fn react(issue: u64, comment_id: u64, content: &'static str) -> Action {
    Action::React {
        issue,
        comment_id,
        content,
    }
}
