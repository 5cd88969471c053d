//! The words of two Runs on one issue: the readable part of an adoption record (a live
//! thirdshift Command, as its host first saw it) and the evidence the view gives a Run that
//! collides with the one that keeps the issue. No decisions here: which Run keeps the issue is
//! `protocol::collision`'s.

use super::code;
use crate::protocol::record::{AdoptRecord, Salvage};

/// The readable part of an adoption record comment.
pub fn adopt_comment(r: &AdoptRecord) -> String {
    let c = &r.command;
    format!(
        "🧭 **thirdshift {} run seen** on host {} (PID {}, record {}), claim {}. Of the Runs \
         working on this issue, the one recorded first keeps it; a later one collides with it.\
         \n\n<sub>Posted once by its host's `observe`. Only a record by a trusted author counts.</sub>",
        code(&r.kind),
        code(&c.host),
        c.pid,
        code(&c.record),
        code(&r.claim_id)
    )
}

/// Why a Run collides: `owner` (claim id) on `owner_host` keeps the issue, recorded first.
pub fn colliding(host: &str, owner: &str, owner_host: &str) -> String {
    format!(
        "collides on this issue with {} on host {}, recorded first, which keeps it; this one runs \
         on host {}",
        code(owner),
        code(owner_host),
        code(host)
    )
}

/// The salvage commit's reason for a Command stopped because `owner` on `owner_host` keeps its
/// issue.
pub fn salvage_reason(owner: &str, owner_host: &str) -> String {
    format!("stopped: it collided with {owner} on {owner_host}, which keeps the issue")
}

/// `observe`'s line for Command `claim` on `issue`, stopped now because `owner` on `owner_host`
/// keeps the issue.
pub fn stopped_line(issue: u64, claim: &str, owner: &str, owner_host: &str) -> String {
    format!(
        "#{issue}: stopped thirdshift's Command {claim}: it collided with {owner} on {owner_host}, \
         which keeps the issue (`thirdshift.on_collision: stop`)"
    )
}

/// The end record's reason for a Command this host (`host`) stopped because `owner` on
/// `owner_host` keeps the issue, with where its work is.
pub fn stopped(host: &str, owner: &str, owner_host: &str, kept: Option<&Salvage>) -> String {
    let work = match kept {
        Some(k) if k.pushed => format!("its work is on branch {} on origin", code(&k.branch)),
        Some(k) if k.nothing_to_keep => "it left no work to keep".to_string(),
        Some(k) => format!(
            "its work stays on host {} in {} ({})",
            code(host),
            code(&k.worktree),
            k.error.as_deref().unwrap_or("not pushed")
        ),
        None => "no worktree of it was found to keep".to_string(),
    };
    format!(
        "Stopped on host {} (`thirdshift.on_collision: stop`): it collided on this issue with {} \
         on host {}, recorded first, which keeps it and its labels; {work}.",
        code(host),
        code(owner),
        code(owner_host)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adoption_comment_names_the_command_and_the_rule() {
        let r = crate::protocol::record::adopt::tests::sample_adopt();
        insta::assert_snapshot!("adopt_comment", adopt_comment(&r));
    }

    #[test]
    fn a_stopped_commands_end_says_who_keeps_the_issue_and_where_its_work_is() {
        let kept = Salvage {
            pushed: true,
            ..Salvage::untouched("/w/r-issue-9".into(), "thirdshift/salvage/ts-b".into())
        };
        let left = Salvage {
            error: Some("push refused".into()),
            ..Salvage::untouched("/w/r-issue-9".into(), "thirdshift/salvage/ts-b".into())
        };
        let said = [Some(&kept), Some(&left), None]
            .map(|k| stopped("build-09", "ts-a", "build-07", k))
            .join("\n");
        insta::assert_snapshot!("stopped", said);
    }

    #[test]
    fn a_collision_names_both_hosts_and_the_owner() {
        insta::assert_snapshot!(
            "colliding",
            colliding("build-09", "ts-00000000000000a7", "build-07")
        );
    }
}
