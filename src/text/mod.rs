//! Every piece of text the bot posts to GitHub, as constructor functions, so the wording is in
//! one place and snapshot-tested. A record's comment is rendered here from the record
//! (`comment::ToComment`); records never call text.
//!
//! It does not encode records (see `crate::protocol::record`) or decide anything. Values from records
//! (hosts, paths, reasons) are rendered so that they cannot break the Markdown around them:
//! every line we write starts with fixed text, so no value can open a code fence or start a
//! line with a record marker and hide or forge the record line below it.

pub mod cancel;
pub mod cause;
pub mod collision;
pub mod comment;
pub mod evidence;
pub mod failures;
pub mod reasons;
pub mod replies;
pub mod salvage;
pub mod trust;

pub use comment::ToComment;

use chrono::{DateTime, Utc};

use crate::protocol::record::{ClaimRecord, EndRecord, HostReport, Outcome, Verdict};

/// The readable part of a claim record comment.
pub fn claim_comment(c: &ClaimRecord) -> String {
    let session = c.session_id.map(|s| format!(", session {s}"));
    let mut out = format!(
        "🔒 **Claimed** by a Run on {} (pid {}{}) — stage {} since {}.",
        code(&c.host),
        c.pid,
        session.unwrap_or_default(),
        code(&c.stage),
        time(c.stage_since)
    );
    let mut lines = vec![format!(
        "- Claim {}, {} run, claimed {}",
        code(&c.claim_id),
        c.kind.as_str(),
        time(c.claimed_at)
    )];
    if let Some(h) = &c.harness {
        let model = c.model.as_deref().map(|m| format!(" (model {})", code(m)));
        lines.push(format!(
            "- Harness: {}{}",
            code(h),
            model.unwrap_or_default()
        ));
    } else if let Some(m) = &c.model {
        lines.push(format!("- Model: {}", code(m)));
    }
    if let Some(s) = &c.agent_session {
        lines.push(format!("- Agent session: {}", code(s)));
    }
    if let Some(b) = &c.branch {
        lines.push(format!("- Branch: {}", code(b)));
    }
    if let Some(w) = &c.worktree {
        lines.push(format!("- Worktree: {}", code(w)));
    }
    if !c.logs.is_empty() {
        let logs: Vec<String> = c.logs.iter().map(|l| link_or_code(l)).collect();
        lines.push(format!("- Logs: {}", logs.join(", ")));
    }
    out.push_str("\n\n");
    out.push_str(&lines.join("\n"));
    out.push_str(
        "\n\n<sub>This comment is the Claim's record: only its Run edits it. \
         Ask `/thirdshift status` for the live view.</sub>",
    );
    out
}

/// The readable part of an end record comment: one sentence for the outcome, then the detail.
pub fn end_comment(e: &EndRecord) -> String {
    let mut out = format!(
        "{}\n\n- Claim {} ended by {} at {}",
        ending_sentence(e),
        code(&e.claim_id),
        code(&e.actor),
        time(e.ended_at)
    );
    if let Some(a) = e.run.thirdshift() {
        out.push_str(&format!(
            "\n- thirdshift's Command {} on host {}: PID {}, started {}",
            code(&a.record),
            code(&a.host),
            a.pid,
            code(&a.process_start)
        ));
    }
    if let Some(code) = e.exit_code {
        out.push_str(&format!("\n- Exit code: {code}"));
    }
    if let Some(sig) = e.signal {
        out.push_str(&format!("\n- Signal: {}", signal_name(sig)));
    }
    if let Some(c) = &e.cause {
        out.push_str(&format!("\n- Cause: {}", cause::cause_words(c)));
    }
    if let Some(labels) = &e.labels_after {
        let labels: Vec<String> = labels.iter().map(|l| code(l)).collect();
        let labels = if labels.is_empty() {
            "none of the thirdshift labels".to_string()
        } else {
            labels.join(", ")
        };
        out.push_str(&format!("\n- Labels after: {labels}"));
    }
    out.push_str(&work_lines(e));
    out.push_str(&failures::end_lines(e));
    if !e.reason.trim().is_empty() {
        out.push_str("\n\n");
        out.push_str(&quote(&e.reason));
    }
    out
}

/// Who started a Continuation, in words.
pub fn started_by(by: crate::protocol::record::StartedBy) -> &'static str {
    use crate::protocol::record::StartedBy;
    match by {
        StartedBy::Companion => "the dead Run's companion",
        StartedBy::Pickup => "pickup",
        StartedBy::Other => "another starter",
    }
}

/// Where a dead Run's work is and how to go on with it: the Continuation, the pull request,
/// what its host kept, and the command that resumes the agent session.
fn work_lines(e: &EndRecord) -> String {
    let mut out = String::new();
    if let Some(c) = &e.continuation {
        let session = c
            .agent_session
            .as_deref()
            .map_or("a new session".into(), |s| format!("session {}", code(s)));
        let harness = c.harness.as_deref().map(|h| format!(" ({})", code(h)));
        let branch = c
            .branch
            .as_deref()
            .map(|b| format!(" on branch {}", code(b)));
        out.push_str(&format!(
            "\n- Continuation {}: the next Run resumes {session}{}{}",
            c.number,
            harness.unwrap_or_default(),
            branch.unwrap_or_default()
        ));
        if let Some(s) = &c.started {
            out.push_str(&format!(
                "\n- Started on {} by {}: claim {}",
                code(&s.host),
                started_by(s.by),
                code(&s.claim_id)
            ));
        }
    }
    if let Some(pr) = e.pull_request {
        out.push_str(&format!("\n- Pull request: #{pr}"));
    }
    if let Some(k) = &e.kept {
        out.push_str(&format!("\n- Work: {}", kept_line(k)));
        let on_request = matches!(e.outcome, Outcome::HandedBack | Outcome::Cancelled);
        if on_request && !k.nothing_to_keep {
            out.push_str(
                "\n- Stopped on request, so the issue is not handed to people: the next Run (or a \
                 person) can go on from this work",
            );
        }
    }
    match (&e.resume, &e.session) {
        (Some(cmd), _) => out.push_str(&format!("\n- Resume the agent session: {}", code(cmd))),
        (None, Some(id)) => out.push_str(&format!(
            "\n- Agent session: {} (no resume command is known for its Harness)",
            code(id)
        )),
        (None, None) => {}
    }
    out
}

/// One line saying what salvage kept and where.
fn kept_line(k: &crate::protocol::record::Salvage) -> String {
    let head = k.head.as_deref().map(|h| code(h.get(..12).unwrap_or(h)));
    let at = head.map(|h| format!(" at {h}")).unwrap_or_default();
    if k.worktree_missing {
        return format!("worktree {} is gone; nothing to salvage", code(&k.worktree));
    }
    if k.nothing_to_keep {
        return format!("nothing to keep in worktree {}", code(&k.worktree));
    }
    let untouched = k.head.is_none() && k.commits.is_empty() && k.dirty_files == 0;
    if let (true, false, Some(e)) = (untouched, k.pushed, k.error.as_deref()) {
        return format!(
            "left as it is in worktree {}, branch {}; not salvaged ({})",
            code(&k.worktree),
            code(&k.branch),
            one_line(e)
        );
    }
    if k.pushed {
        let commit = k.salvage_commit.as_deref().map(|c| {
            format!(
                ", with the uncommitted work in {}",
                code(c.get(..12).unwrap_or(c))
            )
        });
        return format!(
            "pushed to branch {}{at}{}",
            code(&k.branch),
            commit.unwrap_or_default()
        );
    }
    let why = k.error.as_deref().map(|e| format!(" ({})", one_line(e)));
    format!(
        "kept on the host in worktree {}, branch {}{at}: {} uncommitted file(s), {} unpushed \
         commit(s); not pushed{}",
        code(&k.worktree),
        code(&k.branch),
        k.dirty_files,
        k.unpushed_commits,
        why.unwrap_or_default()
    )
}

/// The title of the registry issue.
pub const REGISTRY_TITLE: &str = "thirdshift: Runs and hosts";

/// The readable body of the registry issue (until the live view is written into it).
pub fn registry_body() -> String {
    "🗂️ **thirdshift registry.** Each host that runs agent Runs keeps one report comment here \
     (its verdict on every Claim it holds); reconcile reads them to end Claims whose Run is \
     proven dead. Please keep this issue open; do not edit the hidden line below."
        .to_string()
}

/// The readable part of a host report: one line per Claim the host watches.
pub fn host_report_comment(r: &HostReport) -> String {
    let mut out = format!(
        "🖥️ **Host report** from {} (machine {}, boot {}): {} Claim{} on this host.",
        code(&r.host),
        code(short_id(&r.machine_id)),
        code(short_id(&r.boot_id)),
        r.claims.len(),
        if r.claims.len() == 1 { "" } else { "s" }
    );
    if let (Some(capacity), Some(used)) = (r.capacity, r.slots_used) {
        out.insert_str(
            out.len() - 1,
            &format!(
                "; {used} of {capacity} slot{} in use",
                if capacity == 1 { "" } else { "s" }
            ),
        );
    }
    if !r.claims.is_empty() {
        out.push('\n');
    }
    for c in &r.claims {
        let verdict = match &c.verdict {
            Verdict::Alive => "**alive**".to_string(),
            Verdict::Dead { reason, evidence } => {
                format!("**dead** ({}): {}", reason.as_str(), one_line(evidence))
            }
            Verdict::WritersAlive { evidence, .. } => {
                format!("**writers alive**: {}", one_line(evidence))
            }
        };
        out.push_str(&format!(
            "\n- #{} claim {}: {verdict}",
            c.issue,
            code(&c.claim_id)
        ));
    }
    out.push_str(
        "\n\n<sub>Written by this host's `observe`; edited in place when a verdict changes.</sub>",
    );
    out
}

fn short_id(id: &str) -> &str {
    id.get(..8).unwrap_or(id)
}

/// What happened, for a person reading the issue: the outcome's sentence, except that a
/// recovery says who or what decided it (a person by force, a kill on request, a host's proof).
fn ending_sentence(e: &EndRecord) -> String {
    let how = "the way a failed run ends; nothing it left behind was removed";
    if let Some(login) = e.forced_by() {
        let verb = match e.outcome {
            Outcome::Continued => "🔁 **Continued by force**",
            _ => "🩹 **Recovered by force**",
        };
        return format!(
            "{verb}: @{login} ended this Claim with `/thirdshift recover --force`; no host \
             proved the Run gone. It was ended {how}."
        );
    }
    if e.outcome != Outcome::Recovered {
        return outcome_sentence(e.outcome).to_string();
    }
    if let Some(a) = e.run.thirdshift() {
        return format!(
            "🩹 **Recovered**: host {} proved thirdshift's Command gone (its evidence is below), \
             so its Claim was ended as thirdshift's own failed run ends; nothing it left behind \
             was removed.",
            code(&a.host)
        );
    }
    if e.actor.starts_with("observe@") && e.signal.is_some() {
        return format!(
            "🩹 **Recovered**: its host killed the Run on request (`/thirdshift recover --kill`) \
             and ended its Claim {how}."
        );
    }
    format!(
        "🩹 **Recovered**: the Run's host proved the Run is gone (its evidence is below), so its \
         Claim was ended {how}."
    )
}

/// One sentence per outcome, for a person reading the issue.
fn outcome_sentence(o: Outcome) -> &'static str {
    match o {
        Outcome::Done => "✅ **Done**: the Run finished its work and ended its Claim.",
        Outcome::Failed => {
            "❌ **Failed**: the Run's command failed before finishing; nothing it left in its \
             worktree was removed."
        }
        Outcome::HandedBack => {
            "↩️ **Handed back**: the Run was asked to stop and gave the issue back."
        }
        Outcome::Withdrawn => {
            "🏳️ **Withdrawn**: another Run claimed this issue first, so this Claim stepped \
             back before doing any work."
        }
        Outcome::Superseded => {
            "⏭️ **Superseded**: an earlier Claim owns this issue, so this later one was ended."
        }
        Outcome::Recovered => {
            "🩹 **Recovered**: the Run's host proved the Run is gone, so its Claim was ended the \
             way a failed run ends; nothing it left behind was removed."
        }
        Outcome::Cancelled => "🛑 **Cancelled**: the Run was stopped on request.",
        Outcome::Continued => {
            "🔁 **Continued**: the Run's host showed the Run is gone; the issue was queued \
             again so a new Run can resume the session."
        }
        Outcome::Swept => {
            "🧹 **Swept**: this Claim was cleared up because no Run was working on it any more."
        }
    }
}

/// `9` → `9 (SIGKILL)`.
fn signal_name(sig: i32) -> String {
    match signal_abbrev(sig) {
        Some(name) => format!("{sig} ({name})"),
        None => sig.to_string(),
    }
}

/// `9` → `SIGKILL`, for the signals a Run is commonly stopped or killed by.
fn signal_abbrev(sig: i32) -> Option<&'static str> {
    Some(match sig {
        1 => "SIGHUP",
        2 => "SIGINT",
        3 => "SIGQUIT",
        6 => "SIGABRT",
        9 => "SIGKILL",
        11 => "SIGSEGV",
        13 => "SIGPIPE",
        14 => "SIGALRM",
        15 => "SIGTERM",
        _ => return None,
    })
}

/// `2025-03-04 05:06 UTC`.
fn time(t: DateTime<Utc>) -> String {
    t.format("%Y-%m-%d %H:%M UTC").to_string()
}

/// `value` as inline code on one line, whatever backticks it holds.
pub fn code(value: &str) -> String {
    let v = one_line(value);
    let longest = v.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    if v.starts_with('`') || v.ends_with('`') || v.is_empty() {
        format!("{fence} {v} {fence}")
    } else {
        format!("{fence}{v}{fence}")
    }
}

/// An http(s) URL as an autolink; anything else (a path) as code.
fn link_or_code(value: &str) -> String {
    let plain = !value.contains(|c: char| c.is_whitespace() || c == '<' || c == '>');
    if plain && (value.starts_with("https://") || value.starts_with("http://")) {
        format!("<{value}>")
    } else {
        code(value)
    }
}

/// Free text as a Markdown quote: every line starts with `> `, so none can start a fence or a
/// record line.
fn quote(text: &str) -> String {
    text.trim()
        .lines()
        .map(|l| {
            format!("> {}", l.trim_end_matches('\r'))
                .trim_end()
                .to_string()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn one_line(value: &str) -> String {
    value.replace(['\r', '\n'], " ")
}

/// `text` safe to print on a terminal: every control character but line breaks and tabs (an
/// escape sequence in an issue title or a forged record, a carriage return that hides a line)
/// shown as `\u{fffd}`. Every line the CLI prints goes through it.
pub fn for_terminal(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '\n' | '\t' => c,
            c if c.is_control() => '\u{fffd}',
            c => c,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::record::claim::tests::{minimal_claim, sample_claim};
    use crate::protocol::record::end::tests::sample_end;
    use crate::protocol::record::{decode, Decoded, Record};

    #[test]
    fn host_report_with_each_verdict() {
        use crate::protocol::record::{ClaimVerdict, DeathReason};
        let report = HostReport {
            host: "builder-1".into(),
            machine_id: "0123456789abcdef".into(),
            boot_id: "fedcba98-7654".into(),
            claims: vec![
                ClaimVerdict {
                    claim_id: "c-a".into(),
                    issue: 3,
                    verdict: Verdict::Alive,
                    kept: None,
                    run: Default::default(),
                    finished: None,
                    watched: false,
                },
                ClaimVerdict {
                    claim_id: "c-b".into(),
                    issue: 4,
                    verdict: Verdict::Dead {
                        reason: DeathReason::PidGone,
                        evidence: "pid 42 is gone".into(),
                    },
                    kept: None,
                    run: Default::default(),
                    finished: None,
                    watched: false,
                },
                ClaimVerdict {
                    claim_id: "c-c".into(),
                    issue: 5,
                    verdict: Verdict::WritersAlive {
                        pids: vec![7],
                        evidence: "pid 7 of its session runs".into(),
                    },
                    kept: None,
                    run: Default::default(),
                    finished: None,
                    watched: false,
                },
            ],
            capacity: None,
            slots_used: None,
            booted_at: None,
            refresh_secs: None,
            written_at: None,
        };
        insta::assert_snapshot!(host_report_comment(&report));
        let with_slots = HostReport {
            capacity: Some(2),
            slots_used: Some(1),
            ..report
        };
        let first = host_report_comment(&with_slots);
        assert!(
            first.starts_with("🖥️ **Host report** from `builder-1`")
                && first.contains(": 3 Claims on this host; 1 of 2 slots in use.\n"),
            "{first}"
        );
    }

    #[test]
    fn claim_comment_with_every_detail() {
        insta::assert_snapshot!(sample_claim().to_comment());
    }

    #[test]
    fn claim_comment_just_after_claiming() {
        insta::assert_snapshot!(claim_comment(&minimal_claim()));
    }

    #[test]
    fn end_comment_for_every_outcome() {
        for outcome in Outcome::ALL {
            let mut end = sample_end(outcome);
            match outcome {
                Outcome::HandedBack | Outcome::Cancelled => {
                    end.exit_code = None;
                    end.signal = Some(15);
                    end.reason = "CMD's session was sent SIGTERM".into();
                }
                Outcome::Done => {
                    end.exit_code = Some(0);
                    end.reason = "CMD exited with code 0".into();
                    end.labels_after = Some(vec![]);
                }
                Outcome::Recovered | Outcome::Continued => {
                    end.actor = "reconcile".into();
                    end.exit_code = None;
                    end.reason = "build-01 reports PID 4242 gone: the host rebooted \
                                  (boot id changed)\nwork pushed to issue-42"
                        .into();
                }
                _ => {}
            }
            insta::assert_snapshot!(format!("end_{}", outcome.as_str()), end.to_comment());
        }
    }

    #[test]
    fn every_ending_says_exactly_what_happened() {
        let proved = "build-01 reports PID 4242 gone (PID gone): /proc/4242 does not exist";
        let recovered = || EndRecord {
            exit_code: None,
            ..sample_end(Outcome::Recovered)
        };
        let mut on_evidence = recovered();
        on_evidence.actor = "reconcile@ci".into();
        on_evidence.reason = reasons::recovered_reason(
            "build-01",
            "c-0123456789abcdef",
            crate::protocol::record::DeathReason::PidGone,
            "/proc/4242 does not exist",
        );
        let mut forced = recovered();
        forced.actor = "alice".into();
        forced.reason = format!(
            "@alice forced the end of claim c-0123456789abcdef with `/thirdshift recover \
             --force` (comment 5000000123) while its host build-01 had not proved it dead: \
             {proved}"
        );
        let mut killed_on_request = recovered();
        killed_on_request.actor = "observe@build-01".into();
        killed_on_request.signal = Some(9);
        killed_on_request.reason = "recovered on request cx-cmd-5000000123 by alice: host \
             build-01 sent SIGTERM to the Run and its session; 2 process(es) still running after \
             the 10 s grace period were killed (SIGKILL)"
            .into();
        let cancelled = |killed| {
            let mut e = sample_end(Outcome::Cancelled);
            e.exit_code = None;
            e.signal = Some(15);
            e.reason = format!(
                "cancelled on request cx-0000000000000001 by cancel@build-02: {}",
                reasons::stopped_reason(15, killed)
            );
            e
        };
        let all = [
            on_evidence,
            forced,
            killed_on_request,
            cancelled(false),
            cancelled(true),
        ];
        let text: Vec<String> = all.iter().map(EndRecord::to_comment).collect();
        insta::assert_snapshot!(text.join("\n\n---\n\n"));
    }

    fn salvage(pushed: bool) -> crate::protocol::record::Salvage {
        crate::protocol::record::Salvage {
            worktree: "/work/wt/issue-42".into(),
            branch: "issue-42".into(),
            head: Some("0123456789abcdef0123".into()),
            salvage_commit: Some("0123456789abcdef0123".into()),
            commits: vec!["fedcba9876543210".into(), "0123456789abcdef0123".into()],
            pushed,
            dirty_files: 3,
            unpushed_commits: if pushed { 0 } else { 2 },
            worktree_missing: false,
            nothing_to_keep: false,
            error: (!pushed).then(|| "git push: origin unreachable".into()),
            moved_to: None,
        }
    }

    #[test]
    fn hand_off_names_the_kept_work_the_pr_and_the_resume_command() {
        let mut end = sample_end(Outcome::Recovered);
        end.kept = Some(salvage(true));
        end.pull_request = Some(57);
        end.resume = Some("claude --resume sess-9".into());
        insta::assert_snapshot!(end.to_comment());
    }

    #[test]
    fn hand_off_of_unpushed_work_says_where_it_stays() {
        let mut end = sample_end(Outcome::Recovered);
        end.kept = Some(salvage(false));
        insta::assert_snapshot!(end.to_comment());
    }

    #[test]
    fn failed_run_whose_writers_outlived_it_says_its_worktree_was_left_alone() {
        let mut end = sample_end(Outcome::Failed);
        end.kept = Some(crate::protocol::record::Salvage {
            error: Some(salvage::writers_left(&[4301], 10)),
            ..crate::protocol::record::Salvage::untouched(
                "/work/wt/issue-42".into(),
                "issue-42".into(),
            )
        });
        insta::assert_snapshot!(end.to_comment());
    }

    #[test]
    fn run_stopped_on_request_says_where_its_work_is_and_why_it_is_queued_again() {
        let mut end = sample_end(Outcome::Cancelled);
        end.labels_after = Some(vec!["ready-for-agent".into()]);
        end.exit_code = None;
        end.signal = Some(15);
        end.reason = "cancelled on request cx-00000000000000aa by cancel@build-02 (comment \
                      5000000002): the Run was stopped by signal 15; its command's session was \
                      stopped"
            .into();
        end.kept = Some(salvage(true));
        insta::assert_snapshot!(end.to_comment());
    }

    #[test]
    fn a_thirdshift_commands_end_names_its_record_host_pid_and_start() {
        let mut end = sample_end(Outcome::Recovered);
        end.claim_id = "ts-00c0ffee00c0ffee".into();
        end.actor = "reconcile@build-02".into();
        end.exit_code = None;
        end.claim_comment_id = None;
        end.labels_after = Some(vec!["in-progress".into(), "agent-failed".into()]);
        end.resume = Some("claude --resume 5f0c".into());
        end.reason = crate::text::reasons::adopted_recovered_reason(
            "build-01",
            "acme/widgets/commands/issue/42-20261204T100000+0000~0123456789abcdef.command.json",
            crate::protocol::record::DeathReason::PidGone,
            "pid 4242 is gone",
            end.labels_after.as_deref().unwrap(),
        );
        end.run = crate::protocol::record::RunOf::thirdshift_of(
            crate::protocol::record::AdoptedEvidence {
                host: "build-01".into(),
                machine_id: "0123456789abcdef0123456789abcdef".into(),
                record: "acme/widgets/commands/issue/42-20261204T100000+0000~0123456789abcdef\
                     .command.json"
                    .into(),
                pid: 4242,
                process_start: "8d1f0c2a-6b1e-4f7e-9a3b-2c5d7e9f1a3b:987654".into(),
            },
        );
        end.kept = Some(salvage(true));
        insta::assert_snapshot!(end.to_comment());
    }

    #[test]
    fn a_hand_off_of_an_unknown_harness_names_the_session_and_guesses_no_command() {
        let mut end = sample_end(Outcome::Failed);
        end.session = Some("sess-x".into());
        let text = end.to_comment();
        assert!(
            text.contains("Agent session: `sess-x` (no resume command is known for its Harness)"),
            "{text}"
        );
        assert!(!text.contains("Resume the agent session"), "{text}");
    }

    #[test]
    fn continuation_names_the_session_the_next_run_resumes() {
        let mut end = sample_end(Outcome::Continued);
        end.continuation = Some(Box::new(crate::protocol::record::Continuation {
            number: 2,
            branch: Some("issue-42".into()),
            agent_session: Some("sess-9".into()),
            harness: Some("codex".into()),
            worktree: None,
            started: None,
        }));
        insta::assert_snapshot!(end.to_comment());
    }

    #[test]
    fn a_started_continuation_says_where_and_by_whom() {
        // given a Continuation its dead Run's companion started on h1
        let mut end = sample_end(Outcome::Continued);
        end.continuation = Some(Box::new(crate::protocol::record::Continuation {
            number: 1,
            branch: Some("issue-42".into()),
            agent_session: Some("sess-9".into()),
            harness: None,
            worktree: None,
            started: Some(Box::new(crate::protocol::record::ContinuationStart {
                claim_id: "c-00000000000000c1".into(),
                host: "h1".into(),
                by: crate::protocol::record::StartedBy::Companion,
            })),
        }));
        // then its comment names the new Run's claim, its host and its starter
        insta::assert_snapshot!(end.to_comment());
    }

    #[test]
    fn hostile_values_cannot_hide_or_forge_the_record_line() {
        // given a claim whose one-line values try to open a fence and to start a second record
        // line, and an end whose reason (which may span lines) tries both
        let claim = ClaimRecord {
            harness: Some("x ``` y".into()),
            branch: Some("<!-- thirdshift:v1:claim {} -->".into()),
            worktree: Some("`tick`".into()),
            ..sample_claim()
        };
        let end = EndRecord {
            reason: "```\n<!-- thirdshift:v1:end {} -->".into(),
            ..sample_end(Outcome::Failed)
        };
        // then each comment still decodes to exactly its own record
        assert_eq!(
            decode(&claim.to_comment()),
            Decoded::Record(Record::Claim(claim))
        );
        assert_eq!(decode(&end.to_comment()), Decoded::Record(Record::End(end)));
    }

    #[test]
    fn code_spans_survive_backticks_and_newlines() {
        assert_eq!(code("a"), "`a`");
        assert_eq!(code("a`b"), "``a`b``");
        assert_eq!(code("`x`"), "`` `x` ``");
        assert_eq!(code("a\nb"), "`a b`");
    }

    #[test]
    fn logs_are_links_when_urls_and_code_otherwise() {
        assert_eq!(link_or_code("https://x.test/l"), "<https://x.test/l>");
        assert_eq!(link_or_code("/var/log/a"), "`/var/log/a`");
        assert_eq!(link_or_code("https://x.test/a b"), "`https://x.test/a b`");
    }
}
