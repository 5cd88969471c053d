//! This machine: who it is (host name, machine id, boot id), its processes (identity that
//! survives PID reuse, session membership, signals, waiting for one to end) and the local folder
//! of Claims it took. `table.rs` snapshots the process table, `liveness.rs` judges a Claim from
//! it, `verdicts.rs` judges this host's Claims, `capacity.rs` says how many Runs this host may
//! carry and how many it carries now, `stop.rs` stops a cancelled Run (TERM, grace, KILL),
//! `private.rs` makes the state folder's files the user's only, `turn.rs` makes two processes of
//! one host take turns at a job, `login.rs` keeps who the credentials belong to. Nothing here
//! talks to GitHub. Its door is this file: the submodules are private, and what the rest of the
//! tool uses is named here. A Run's git (branch, salvage) is `crate::salvage`; thirdshift's own
//! Runs on this machine are `crate::thirdshift`.

mod capacity;
mod identity;
mod liveness;
mod login;
mod oom;
mod private;
mod process;
mod state;
mod stop;
mod table;
mod turn;
mod verdicts;

pub use capacity::{capacity, capacity_source, live_claims};
pub use identity::{boot_id, boot_time, system_hostname, HostIdentity};
pub use liveness::{judge, writers};
pub use login::{cached as cached_login, keep as keep_login, key as login_key};
pub use oom::mark as oom_mark;
pub use private::{append as append_private, dir as private_dir, write as write_private};
pub use process::{
    command_path, not_dumpable, session_members, signal_session, signallable, ticks_per_second,
    wait_for_exit, ProcessIdentity, Stat,
};
pub use state::{cache_path, LocalClaim, LocalStatus, StateDir};
pub use stop::{kill, stop, stop_processes};
pub use table::{ProcessEntry, ProcessTable};
pub use turn::Turn;
pub use verdicts::Judge;
