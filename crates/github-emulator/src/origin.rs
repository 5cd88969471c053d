//! The repository's branches as the emulator serves them: the ones seeded with
//! `Sim::add_branch`, overlaid with the `refs/heads/*` of a real bare git repository
//! (`Sim::set_git_origin`) read at the moment of asking, so a Run that pushes to that repository
//! is seen by the next request, as GitHub would see it. Also the details of one commit of that
//! repository (tree, parents, author, committer, message) for `GET .../branches/{branch}`.
//!
//! It runs `git` with every `GIT_*` variable removed from its environment, so a caller inside a
//! git hook or a worktree cannot redirect it. It never writes to the repository, and it knows
//! nothing of HTTP: routes turn its errors into answers.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};

use chrono::{DateTime, Utc};

use super::Sim;

/// One side of a commit: who and when.
#[derive(Clone, Debug)]
pub(crate) struct Signature {
    pub name: String,
    pub email: String,
    pub date: DateTime<Utc>,
}

/// What GitHub shows of a commit, as git holds it.
#[derive(Clone, Debug)]
pub(crate) struct CommitInfo {
    pub tree: String,
    pub parents: Vec<String>,
    pub author: Signature,
    pub committer: Signature,
    pub message: String,
}

/// Every branch (name to sha): seeded ones, then the git origin's, which win on a clash.
pub(crate) fn branches(sim: &Sim) -> Result<BTreeMap<String, String>, String> {
    let (mut all, path) = {
        let st = sim.lock();
        (st.branches.clone(), st.git_origin.clone())
    };
    if let Some(path) = path {
        all.extend(git_heads(&path)?);
    }
    Ok(all)
}

/// The commit `sha` of the git origin; `None` without an origin or when git does not know it
/// (a seeded branch's made-up sha).
pub(crate) fn commit(sim: &Sim, sha: &str) -> Option<CommitInfo> {
    let path = sim.lock().git_origin.clone()?;
    if !sha.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    let format = "--format=%T%n%P%n%an%n%ae%n%aI%n%cn%n%ce%n%cI%n%B";
    let out = git(&path, &["log", "-1", "--no-walk", format, sha]).ok()?;
    parse_commit(&out)
}

/// `refs/heads/*` of the bare repository at `path`, as (name, sha).
fn git_heads(path: &Path) -> Result<Vec<(String, String)>, String> {
    let out = git(
        path,
        &[
            "for-each-ref",
            "--format=%(objectname) %(refname)",
            "refs/heads",
        ],
    )?;
    Ok(out
        .lines()
        .filter_map(|line| {
            let (sha, name) = line.split_once(' ')?;
            let name = name.strip_prefix("refs/heads/")?;
            Some((name.to_string(), sha.to_string()))
        })
        .collect())
}

/// Runs `git --git-dir PATH ARGS...` with a clean environment; stdout, or what went wrong.
fn git(path: &Path, args: &[&str]) -> Result<String, String> {
    let mut cmd = Command::new("git");
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("GIT_") {
            cmd.env_remove(key);
        }
    }
    let out = cmd
        .arg("-c")
        .arg("log.showSignature=false")
        .arg("--git-dir")
        .arg(path)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("running git: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "git --git-dir {} {}: {}",
            path.display(),
            args.first().copied().unwrap_or(""),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Parses the `--format` of [`commit`]: tree, parents, author (name, email, date), committer
/// (same), then the message.
fn parse_commit(out: &str) -> Option<CommitInfo> {
    let f: Vec<&str> = out.splitn(9, '\n').collect();
    if f.len() < 8 {
        return None;
    }
    let signature = |at: usize| -> Option<Signature> {
        let date = DateTime::parse_from_rfc3339(f[at + 2]).ok()?;
        Some(Signature {
            name: f[at].to_string(),
            email: f[at + 1].to_string(),
            date: date.with_timezone(&Utc),
        })
    };
    Some(CommitInfo {
        tree: f[0].to_string(),
        parents: f[1].split_whitespace().map(str::to_string).collect(),
        author: signature(2)?,
        committer: signature(5)?,
        message: f.get(8).unwrap_or(&"").trim_end().to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commit_format_is_parsed_with_a_multi_line_message() {
        let out = "t1\np1 p2\nAda\nada@x.org\n2024-05-01T10:00:00+02:00\nBob\nbob@x.org\n\
                   2024-05-01T09:00:00Z\nSubject\n\nBody line\n";
        let c = parse_commit(out).expect("parses");
        assert_eq!(c.tree, "t1");
        assert_eq!(c.parents, ["p1", "p2"]);
        assert_eq!(c.author.name, "Ada");
        assert_eq!(c.author.date.to_rfc3339(), "2024-05-01T08:00:00+00:00");
        assert_eq!(c.committer.email, "bob@x.org");
        assert_eq!(c.message, "Subject\n\nBody line");
    }

    #[test]
    fn a_root_commit_has_no_parents() {
        let out = "t\n\nA\na@x\n2024-01-01T00:00:00Z\nA\na@x\n2024-01-01T00:00:00Z\nm\n";
        assert!(parse_commit(out).expect("parses").parents.is_empty());
    }
}
