//! The chaos soak's Runs, keyed to stages rather than to the clock. Each Run's command stops at
//! two gates and waits there until the harness opens the gate or kills it: `claimed` (before any
//! work) and `working` (after it cloned origin into its own worktree on the Issue branch, passed
//! `stage working --worktree`, committed a file and left another one uncommitted). A Run's fate
//! is then where it was stopped and how ([`Fate`]), which a fault-free replay applies again to
//! the same Runs whatever the timing (`replay.rs`). This file decides no fate and asserts nothing.

use std::path::{Path, PathBuf};

use thirdshift_reconciler::host::signal_session;

/// How a Run was broken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kill {
    /// kill -9 of the Run and its command's whole session.
    Whole,
    /// kill -9 of the Run only: its command lives on until the harness lets it stop.
    RunOnly,
    /// kill -9 of the command's session only: the Run sees it die and ends the Claim failed.
    Child,
}

impl Kill {
    pub fn name(self) -> &'static str {
        match self {
            Kill::Whole => "run and session",
            Kill::RunOnly => "run only",
            Kill::Child => "session only",
        }
    }
}

/// A gate a Run's command waits at.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Stage {
    Claimed,
    Working,
}

impl Stage {
    fn word(self) -> &'static str {
        match self {
            Stage::Claimed => "claimed",
            Stage::Working => "working",
        }
    }
}

/// How a Run's life ended, at the gate it was waiting at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    Kill(Kill),
    /// The command exits with this code (at `working` only).
    Exit(i32),
}

/// One Run that owned its issue when it reached `claimed`, and what the soak did to it.
#[derive(Clone, Debug)]
pub struct Fate {
    pub issue: u64,
    pub host: String,
    pub claim_id: String,
    /// Its claim's comment id: the order the replay starts Runs in.
    pub claim_comment: u64,
    pub stage: Stage,
    pub end: End,
}

/// A Run's command waiting at a gate, as its mark says: the Run's PID and its command's session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Waiting {
    pub stage: Stage,
    pub issue: u64,
    pub claim_id: String,
    pub run_pid: u32,
    pub sid: u32,
}

/// The folders of marks (a command reached a point), gates (the harness let it go on) and
/// worktrees, and the script every Run's command runs.
pub struct Gates {
    pub marks: PathBuf,
    gates: PathBuf,
    trees: PathBuf,
    bare: PathBuf,
}

impl Gates {
    pub fn new(dir: &Path, bare: &Path) -> Gates {
        let g = Gates {
            marks: dir.join("marks"),
            gates: dir.join("gates"),
            trees: dir.join("trees"),
            bare: bare.to_path_buf(),
        };
        for d in [&g.marks, &g.gates, &g.trees] {
            std::fs::create_dir_all(d).expect("gate folders");
        }
        g
    }

    /// The command's script: mark `claimed` (with the Run's PID and its own session), wait;
    /// clone origin on the Issue branch, pass `stage working`, mark that, commit a file, leave
    /// another uncommitted, mark `working`, wait; exit with the code the gate holds. A `stop`
    /// at `claimed` exits 0 before any work.
    pub fn script(&self) -> String {
        let bin = env!("CARGO_BIN_EXE_thirdshift-reconciler");
        let (m, gt, t, bare) = (
            self.marks.display(),
            self.gates.display(),
            self.trees.display(),
            self.bare.display(),
        );
        let g = "git -c user.name=Run -c user.email=run@example.org -c commit.gpgsign=false";
        format!(
            "id=\"$THIRDSHIFT_ISSUE.$THIRDSHIFT_CLAIM_ID\"; b=\"issue-$THIRDSHIFT_ISSUE\"; \
             wait_gate() {{ until [ -e '{gt}/'\"$1.$id\" ]; do sleep 0.03; done; \
             cat '{gt}/'\"$1.$id\"; }}; \
             echo \"$PPID $$\" > '{m}/'\"claimed.$id.tmp\"; \
             mv '{m}/'\"claimed.$id.tmp\" '{m}/'\"claimed.$id\"; \
             [ \"$(wait_gate claimed)\" = stop ] && exit 0; \
             wt='{t}/'\"wt-$id\"; {g} clone -q '{bare}' \"$wt\" || exit 8; cd \"$wt\"; \
             {g} checkout -q -B \"$b\" \"origin/$b\" 2>/dev/null || {g} checkout -q -b \"$b\"; \
             '{bin}' stage working --worktree \"$wt\" || exit 9; \
             touch '{m}/'\"$id\"; echo \"$id\" > \"$id.txt\"; {g} add \"$id.txt\"; \
             {g} commit -qm \"work $id\"; echo draft > \"draft-$id.txt\"; \
             echo \"$PPID $$\" > '{m}/'\"working.$id.tmp\"; \
             mv '{m}/'\"working.$id.tmp\" '{m}/'\"working.$id\"; \
             exit \"$(wait_gate working)\""
        )
    }

    /// Commands waiting at a gate not yet opened, in issue and claim order.
    pub fn waiting(&self) -> Vec<Waiting> {
        let Ok(dir) = std::fs::read_dir(&self.marks) else {
            return Vec::new();
        };
        let mut out: Vec<Waiting> = dir
            .filter_map(|e| e.ok())
            .filter_map(|e| self.read_mark(&e.file_name().to_string_lossy()))
            .filter(|w| !self.gate(w.stage, w.issue, &w.claim_id).exists())
            .collect();
        out.sort_by(|a, b| (a.issue, &a.claim_id, a.stage).cmp(&(b.issue, &b.claim_id, b.stage)));
        out
    }

    fn read_mark(&self, name: &str) -> Option<Waiting> {
        let (stage, rest) = name.split_once('.')?;
        let stage = match stage {
            "claimed" => Stage::Claimed,
            "working" => Stage::Working,
            _ => return None,
        };
        let (issue, claim_id) = rest.split_once('.')?;
        if claim_id.contains('.') {
            return None;
        }
        let text = std::fs::read_to_string(self.marks.join(name)).ok()?;
        let (pid, sid) = text.trim().split_once(' ')?;
        Some(Waiting {
            stage,
            issue: issue.parse().ok()?,
            claim_id: claim_id.to_string(),
            run_pid: pid.parse().ok()?,
            sid: sid.parse().ok()?,
        })
    }

    fn gate(&self, stage: Stage, issue: u64, claim_id: &str) -> PathBuf {
        self.gates
            .join(format!("{}.{issue}.{claim_id}", stage.word()))
    }

    /// Opens the gate `w` waits at with `word` (`go`, `stop`, or an exit code), atomically.
    pub fn open(&self, w: &Waiting, word: &str) {
        let gate = self.gate(w.stage, w.issue, &w.claim_id);
        let tmp = gate.with_extension("tmp");
        std::fs::write(&tmp, word).expect("gate written");
        std::fs::rename(&tmp, &gate).expect("gate opened");
    }

    /// Whether the Run of `claim_id` on `issue` passed its `stage working`.
    pub fn passed_stage(&self, issue: u64, claim_id: &str) -> bool {
        self.marks.join(format!("{issue}.{claim_id}")).exists()
    }

    /// Ends the life of the Run waiting as `w` as `end` says (a Run killed alone stays waiting,
    /// its command alive, until [`Gates::stop`]).
    pub fn apply(&self, w: &Waiting, end: End) {
        match end {
            End::Exit(code) => self.open(w, &code.to_string()),
            End::Kill(how) => {
                if how != Kill::Child {
                    // SAFETY: kill(2) of a PID our Run's command wrote in its mark.
                    unsafe { libc::kill(w.run_pid as i32, libc::SIGKILL) };
                }
                if how != Kill::RunOnly {
                    signal_session(w.sid, libc::SIGKILL);
                    // Nobody waits there any more: the gate only marks the Run handled.
                    self.open(w, "killed");
                }
            }
        }
    }

    /// Lets the command of a Run killed alone end by itself: before any work at `claimed`,
    /// with exit 0 at `working`.
    pub fn stop(&self, w: &Waiting) {
        let word = if w.stage == Stage::Claimed {
            "stop"
        } else {
            "0"
        };
        self.open(w, word);
    }
}
