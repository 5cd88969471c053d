//! How a person goes on with a Run's agent session: the command for each Harness thirdshift
//! 0.19.0 supports (claude, codex, grok, opencode, agy, muse: the resume flags its
//! `src/harness/*.rs` pass each CLI, in their interactive form), run from the Run's worktree (a
//! Claude session belongs to its directory), every word shell-quoted since a person pastes it
//! and the id and path come from the Run. An unknown Harness gets no guessed command: the end
//! record names the session id alone. Used by end records (a Run's own and reconcile's), and
//! the view; a Continuation's next Run gets it as `THIRDSHIFT_RESUME_COMMAND`. Pure.

use crate::protocol::record::{ClaimRecord, EndRecord};

/// The command that resumes `session` of `harness` from `worktree`, when the Harness is known.
pub fn resume_command(
    harness: Option<&str>,
    session: Option<&str>,
    worktree: Option<&str>,
) -> Option<String> {
    let session = shell_word(session.filter(|s| !s.trim().is_empty())?);
    let command = match harness?.trim().to_ascii_lowercase().as_str() {
        "claude" | "claude-code" => format!("claude --resume {session}"),
        "codex" => format!("codex resume {session}"),
        "grok" => format!("grok -r {session}"),
        "opencode" => format!("opencode -s {session}"),
        "agy" => format!("agy --conversation {session}"),
        "muse" => format!("muse --session-id {session}"),
        _ => return None,
    };
    Some(match worktree.filter(|w| !w.trim().is_empty()) {
        Some(w) => format!("cd {} && {command}", shell_word(w)),
        None => command,
    })
}

/// `word` as one shell word: as it is when every character is safe, else in single quotes.
pub fn shell_word(word: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "-_.:@/=+,%".contains(c);
    if !word.is_empty() && word.chars().all(safe) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// Writes into `end` what a person needs to resume `claim`'s agent session by hand: the resume
/// command (from the worktree) and the session id.
pub fn hand_off(end: &mut EndRecord, claim: &ClaimRecord) {
    end.resume = resume_command(
        claim.harness.as_deref(),
        claim.agent_session.as_deref(),
        claim.worktree.as_deref(),
    );
    end.session.clone_from(&claim.agent_session);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_of_the_six_harnesses_resumes_from_the_worktree() {
        // given a worktree path with a space and a quote, and a session id per Harness
        let worktree = "/home/ci/work trees/bob's issue-7";
        let commands: Vec<String> = ["claude", "codex", "grok", "opencode", "agy", "muse"]
            .iter()
            .map(|h| {
                let id = format!("{h}-session-1");
                resume_command(Some(h), Some(&id), Some(worktree)).expect("a known Harness")
            })
            .collect();
        // then each command changes into the worktree first, quoted, then resumes the session
        insta::assert_snapshot!(commands.join("\n"));
        for c in &commands {
            assert!(
                c.starts_with("cd '/home/ci/work trees/bob'\\''s issue-7' && "),
                "{c}"
            );
        }
    }

    #[test]
    fn a_pasted_command_changes_into_exactly_the_worktree_and_names_exactly_the_session() {
        let dir = tempfile::tempdir().unwrap();
        let worktree = dir.path().join("a b'c");
        std::fs::create_dir(&worktree).unwrap();
        let id = "x; rm -rf ~ `id` $(id)";
        let cmd = resume_command(Some("claude"), Some(id), worktree.to_str()).unwrap();
        // a shell running it with a `claude` that prints where it runs and what it got
        let shim = "claude() { pwd; printf '%s\\n' \"$@\"; }; ";
        let out = std::process::Command::new("sh")
            .args(["-c", &format!("{shim}{cmd}")])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines, [worktree.to_str().unwrap(), "--resume", id]);
    }

    #[test]
    fn an_unknown_harness_or_no_session_gets_no_guessed_command() {
        assert_eq!(resume_command(Some("aider"), Some("s-3"), Some("/w")), None);
        assert_eq!(resume_command(Some("claude"), None, Some("/w")), None);
        assert_eq!(resume_command(None, Some("s-4"), Some("/w")), None);
        assert_eq!(
            resume_command(Some("Codex"), Some("s-2"), None).as_deref(),
            Some("codex resume s-2")
        );
    }
}
