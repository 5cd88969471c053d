//! Where a thirdshift Command worked: its record names no worktree, but its Command log does.
//! thirdshift 0.19.0 makes each Run's worktree a sibling of its launch repository, named
//! `<repo>-<issue branch>` (`src/worktree.rs` `add`, `sibling`), and prints the step
//! `creating worktree <path> on <branch> from <source>` (`progress::step`, kept in the Command log
//! as `thirdshift: HH:MM:SS <message>`, `src/progress.rs`; a Pickup's log relays its dispatched
//! Run's as `thirdshift: HH:MM:SS #<issue>: <message>`, `progress::relayed`). The Command log lies
//! beside the record, named as the record up to its first `.` with `.log` (`src/logs/owner.rs`
//! `record_log`).
//!
//! The same log holds the agent's own tool use (`thirdshift: HH:MM:SS <stage>: $ <first line>`,
//! `progress::bash`), so an agent can print any path after `creating worktree `. Only a line
//! whose message *is* the step (no stage before it) is read, and only the first one for the
//! Command's Issue branch: thirdshift makes the worktree before any agent session starts. Even
//! that path is believed only where thirdshift would have made it: a linked git worktree named
//! `<repo>-<branch>`, beside a work tree of its own clone, whose `origin` is this repository on
//! its web host (`protocol::remote`). Whatever branch is checked out there now does not matter:
//! salvage pushes another branch to a branch of its own, never onto the Issue branch.
//!
//! It reads files only.

use std::path::{Path, PathBuf};

use crate::protocol::remote::{shown, RemoteRepo};

use super::writers::{common_dir, git_dir_of, origin_of};

/// The Command log beside the record at `record`.
pub fn command_log(record: &Path) -> Option<PathBuf> {
    let name = record.file_name()?.to_str()?;
    let stem = name.split('.').next().filter(|s| !s.is_empty())?;
    Some(record.with_file_name(format!("{stem}.log")))
}

/// What a Command log says of the Command's worktree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Named {
    /// The worktree thirdshift made for the Command, as a canonical path.
    Worktree(PathBuf),
    /// The log names none for the branch (the Command died before making one), or is not there.
    Nothing,
    /// A worktree the log names, or a log, that cannot be believed or read: left alone, with why.
    NotBelieved { path: String, why: String },
}

/// The Command whose worktree is looked for: its repository, issue and Issue branch.
pub struct Expected<'a> {
    pub repo: &'a RemoteRepo,
    pub issue: u64,
    pub branch: &'a str,
}

/// The worktree thirdshift's own step in the Command log at `log` says it made for
/// `want.branch` (the first one), believed only where thirdshift makes one (module docs).
pub fn from_log(log: &Path, want: &Expected) -> Named {
    let text = match std::fs::read_to_string(log) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Named::Nothing,
        Err(e) => {
            return Named::NotBelieved {
                path: String::new(),
                why: format!("the Command log {} cannot be read: {e}", log.display()),
            }
        }
    };
    let Some(path) = text
        .lines()
        .find_map(|l| created(l, want.issue, want.branch))
    else {
        return Named::Nothing;
    };
    match believed(&path, want) {
        Ok(real) => Named::Worktree(real),
        Err(why) => Named::NotBelieved {
            path: path.display().to_string(),
            why,
        },
    }
}

/// The path in thirdshift's own step `thirdshift: HH:MM:SS creating worktree <path> on <branch>
/// from <source>` (or its relayed form, `#<issue>: ` before the step) for `branch`; `None` for
/// any other line, an agent's among them.
fn created(line: &str, issue: u64, branch: &str) -> Option<PathBuf> {
    let rest = line.strip_prefix("thirdshift: ")?;
    let (stamp, message) = rest.split_at_checked(8)?;
    let is_stamp = stamp.bytes().enumerate().all(|(at, b)| match at {
        2 | 5 => b == b':',
        _ => b.is_ascii_digit(),
    });
    let message = message.strip_prefix(' ').filter(|_| is_stamp)?;
    let relayed = format!("#{issue}: ");
    let message = message.strip_prefix(relayed.as_str()).unwrap_or(message);
    let rest = message.strip_prefix("creating worktree ")?;
    let (path, _) = rest.rsplit_once(&format!(" on {branch} from "))?;
    Some(PathBuf::from(path)).filter(|p| p.is_absolute())
}

/// The worktree of thirdshift Command `adopted` of `repo`, from its Command log: `None` when the
/// Command has no Issue branch (nothing to look for).
pub fn of_command(adopted: &super::Adopted, repo: &RemoteRepo) -> Option<Named> {
    let branch = adopted.claim.branch.as_deref()?;
    let log = command_log(&adopted.path).unwrap_or_default();
    let want = Expected {
        repo,
        issue: adopted.claim.issue,
        branch,
    };
    Some(from_log(&log, &want))
}

/// `path` made real, when it is where thirdshift makes `want`'s worktree; else why not.
fn believed(path: &Path, want: &Expected) -> Result<PathBuf, String> {
    let name = format!("{}-{}", want.repo.name(), want.branch);
    let named = path.file_name().and_then(|n| n.to_str());
    if !named.is_some_and(|n| n.eq_ignore_ascii_case(&name)) {
        return Err(format!(
            "thirdshift names the worktree of {} `{name}`",
            want.branch
        ));
    }
    let real = std::fs::canonicalize(path).map_err(|e| format!("it is not there ({e})"))?;
    if !real.join(".git").is_file() {
        return Err("it is not a linked git worktree, as thirdshift makes one".into());
    }
    let git_dir = git_dir_of(&real).ok_or("its .git file names no git folder")?;
    let back = std::fs::read_to_string(git_dir.join("gitdir")).unwrap_or_default();
    if std::fs::canonicalize(back.trim()).ok() != Some(real.join(".git")) {
        return Err("its git folder does not name it back".into());
    }
    let common = common_dir(&git_dir);
    let origin = origin_of(&common).ok_or("its clone has no origin")?;
    if !want.repo.named_by(&origin) {
        return Err(format!(
            "its clone's origin is {}, not {}",
            shown(&origin),
            want.repo
        ));
    }
    if !beside_a_work_tree(&common, &real) {
        return Err("no work tree of its clone lies beside it, as its launch repository".into());
    }
    Ok(real)
}

/// Whether another work tree of the clone whose git folder is `common` (its main one, or a
/// linked one) lies in the same folder as `wt`: where thirdshift's launch repository is.
fn beside_a_work_tree(common: &Path, wt: &Path) -> bool {
    let main = (common.file_name() == Some(".git".as_ref()))
        .then(|| common.parent().map(Path::to_path_buf))
        .flatten();
    let linked = std::fs::read_dir(common.join("worktrees"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| std::fs::read_to_string(e.path().join("gitdir")).ok())
        .filter_map(|g| Path::new(g.trim()).parent().map(Path::to_path_buf));
    main.into_iter()
        .chain(linked)
        .filter_map(|t| std::fs::canonicalize(t).ok())
        .any(|t| t != wt && t.parent() == wt.parent())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::thirdshift::testing::{clone_with_worktree, git};

    #[test]
    fn the_command_log_lies_beside_the_record_named_up_to_its_first_dot() {
        let record = Path::new("/l/a/b/commands/issue/7-20261204T100000+0000~0123.command.json");
        assert_eq!(
            command_log(record).unwrap(),
            Path::new("/l/a/b/commands/issue/7-20261204T100000+0000~0123.log")
        );
        let child = Path::new("/l/p/20261204T100000+0000~ab.issue-7.child.json");
        assert_eq!(
            command_log(child).unwrap(),
            Path::new("/l/p/20261204T100000+0000~ab.log")
        );
    }

    #[test]
    fn only_thirdshifts_own_worktree_step_is_read_never_an_agents_line() {
        let own = "thirdshift: 10:00:03 creating worktree /w/my repo-issue-7 on issue-7 from \
                   origin/main";
        assert_eq!(
            created(own, 7, "issue-7"),
            Some(PathBuf::from("/w/my repo-issue-7"))
        );
        assert_eq!(created(own, 7, "issue-70"), None);
        let relayed = "thirdshift: 10:00:03 #7: creating worktree /w/r-issue-7 on issue-7 from x";
        assert_eq!(created(relayed, 7, "issue-7"), Some("/w/r-issue-7".into()));
        assert_eq!(created(relayed, 8, "issue-7"), None, "another Run's relay");
        for agents in [
            "thirdshift: 10:00:09 implementing: $ echo creating worktree /o/r-issue-7 on issue-7 \
             from x",
            "thirdshift: 10:00:09 #7: implementing: $ echo creating worktree /o/r-issue-7 on \
             issue-7 from x",
            "echo creating worktree /o/r-issue-7 on issue-7 from x",
            "thirdshift: 1:00:09 creating worktree /o/r-issue-7 on issue-7 from x",
            "thirdshift: 10:00:03 creating worktree rel on issue-7 from x",
        ] {
            assert_eq!(created(agents, 7, "issue-7"), None, "{agents}");
        }
    }

    /// A launch clone `<dir>/widgets` whose origin is `url`, with thirdshift's worktree for
    /// `issue-7` beside it at `<dir>/<name>`.
    fn launch_with_worktree(dir: &Path, url: &str, name: &str) -> PathBuf {
        let wt = dir.join(name);
        clone_with_worktree(&dir.join("widgets"), url, &wt, "issue-7");
        wt
    }

    /// A Command log at `<dir>/7-x.log` whose first worktree step names `first`, then `later`.
    fn log_naming(dir: &Path, first: &Path, later: &Path) -> PathBuf {
        let log = dir.join("7-x.log");
        let step = |p: &Path| {
            format!(
                "thirdshift: 10:00:03 creating worktree {} on issue-7 from origin/main\n",
                p.display()
            )
        };
        std::fs::write(&log, step(first) + &step(later)).unwrap();
        log
    }

    fn named(log: &Path) -> Named {
        let repo = RemoteRepo::new("https://api.github.com", "acme/widgets");
        let want = Expected {
            repo: &repo,
            issue: 7,
            branch: "issue-7",
        };
        from_log(log, &want)
    }

    fn why(named: Named) -> String {
        match named {
            Named::NotBelieved { why, .. } => why,
            other => panic!("believed: {other:?}"),
        }
    }

    #[test]
    fn the_first_worktree_thirdshift_made_is_believed_whatever_branch_it_is_on_now() {
        // given thirdshift's worktree beside its launch clone of acme/widgets, and a log naming
        // it first and another path after
        let tmp = tempfile::tempdir().unwrap();
        let url = "git@github.com:acme/widgets.git";
        let wt = launch_with_worktree(tmp.path(), url, "widgets-issue-7");
        let log = log_naming(tmp.path(), &wt, &tmp.path().join("widgets"));
        // then the first is the Command's worktree
        let real = std::fs::canonicalize(&wt).unwrap();
        assert_eq!(named(&log), Named::Worktree(real.clone()));
        // and stays so once the agent switched it to a branch of its own
        git(&wt, &["switch", "-q", "-c", "scratch"]);
        assert_eq!(named(&log), Named::Worktree(real));
        // and a log with no step for the branch names nothing
        std::fs::write(&log, "thirdshift: 10:00:01 labelling #7\n").unwrap();
        assert_eq!(named(&log), Named::Nothing);
        assert_eq!(named(&tmp.path().join("none.log")), Named::Nothing);
    }

    #[test]
    fn a_worktree_thirdshift_would_not_have_made_is_not_believed() {
        let tmp = tempfile::tempdir().unwrap();
        let ours = "https://github.com/acme/widgets.git";
        // a clone of the same owner/name on another host
        let evil = launch_with_worktree(
            &tmp.path().join("a"),
            "https://evil.example/acme/widgets.git",
            "widgets-issue-7",
        );
        let log = log_naming(tmp.path(), &evil, &evil);
        assert!(why(named(&log)).contains("evil.example/acme/widgets"));
        // a worktree named otherwise
        let odd = launch_with_worktree(&tmp.path().join("b"), ours, "scratch");
        let log = log_naming(tmp.path(), &odd, &odd);
        assert!(why(named(&log)).contains("`widgets-issue-7`"));
        // a worktree not beside its launch clone
        let c = tmp.path().join("c");
        launch_with_worktree(&c, ours, "x");
        let far = tmp.path().join("far/widgets-issue-7");
        std::fs::create_dir_all(far.parent().unwrap()).unwrap();
        git(
            &c.join("widgets"),
            &[
                "worktree",
                "add",
                "-q",
                "-b",
                "other",
                far.to_str().unwrap(),
            ],
        );
        let log = log_naming(tmp.path(), &far, &far);
        assert!(why(named(&log)).contains("beside it"));
        // a plain folder, and a clone of its own, at the right place
        let plain = tmp.path().join("d/widgets-issue-7");
        std::fs::create_dir_all(&plain).unwrap();
        let log = log_naming(tmp.path(), &plain, &plain);
        assert!(why(named(&log)).contains("not a linked git worktree"));
        // a path that is not there
        let gone = tmp.path().join("e/widgets-issue-7");
        let log = log_naming(tmp.path(), &gone, &gone);
        assert!(why(named(&log)).contains("not there"));
    }
}
