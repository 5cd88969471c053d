//! Processes on this host: identity as PID plus exact start time in clock ticks since boot (so a
//! reused PID is told apart), session membership, and signals to a whole session. Read from
//! `/proc`; Linux only. It gives facts, not verdicts.

use std::fs;

/// A process as a claim record names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProcessIdentity {
    pub pid: u32,
    pub start_ticks: u64,
}

impl ProcessIdentity {
    /// The identity of a running process, or `None` when no such process exists.
    pub fn of(pid: u32) -> Option<ProcessIdentity> {
        let stat = Stat::read(pid)?;
        Some(ProcessIdentity {
            pid,
            start_ticks: stat.start_ticks,
        })
    }

    /// This process.
    pub fn current() -> ProcessIdentity {
        Self::of(std::process::id()).unwrap_or(ProcessIdentity {
            pid: std::process::id(),
            start_ticks: 0,
        })
    }

    /// The process that started this one.
    pub fn parent() -> Option<ProcessIdentity> {
        let ppid = unsafe { libc::getppid() };
        u32::try_from(ppid).ok().and_then(Self::of)
    }
}

/// The fields of `/proc/PID/stat` this tool uses.
#[derive(Clone, Copy, Debug)]
pub struct Stat {
    pub state: char,
    pub ppid: u32,
    pub session: u32,
    pub start_ticks: u64,
}

impl Stat {
    /// Reads and parses `/proc/PID/stat`; `None` if the process is gone.
    pub fn read(pid: u32) -> Option<Stat> {
        Self::parse(&fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
    }

    /// Parses a stat line; the command name may hold spaces and parentheses, so fields are
    /// counted after the last `)`.
    pub fn parse(line: &str) -> Option<Stat> {
        let rest = &line[line.rfind(')')? + 1..];
        let fields: Vec<&str> = rest.split_whitespace().collect();
        Some(Stat {
            state: fields.first()?.chars().next()?,
            ppid: fields.get(1)?.parse().ok()?,
            session: fields.get(3)?.parse().ok()?,
            start_ticks: fields.get(19)?.parse().ok()?,
        })
    }
}

/// `pid` as a `pid_t` when a host may signal it: above 1 (`kill(0)` and `kill(-1)` reach every
/// process of a group or of the user, 1 is init) and within range. The last guard behind the
/// record rule (`record::field::pid`).
pub fn signallable(pid: u32) -> Option<libc::pid_t> {
    libc::pid_t::try_from(pid).ok().filter(|p| *p > 1)
}

/// Makes this process not dumpable (`PR_SET_DUMPABLE` 0): its `/proc/PID/environ`, `mem` and
/// `cmdline` are then root's, and no process of the same user can ptrace it, so a Run's command
/// cannot read the credentials its Run holds. A child that execs another program is dumpable
/// again, as the kernel resets it.
pub fn not_dumpable() {
    // SAFETY: prctl(PR_SET_DUMPABLE, 0) changes only this process's dumpable flag.
    let rc = unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) };
    if rc != 0 {
        tracing::warn!(
            "could not make this process undumpable: {}",
            std::io::Error::last_os_error()
        );
    }
}

/// Every live (non-zombie) process whose session id is `sid`.
pub fn session_members(sid: u32) -> Vec<u32> {
    let Ok(dir) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            Stat::read(*pid).is_some_and(|s| s.session == sid && s.state != 'Z' && s.state != 'X')
        })
        .collect()
}

/// Sends `signal` to every process of session `sid` (its process group first, then any member
/// that moved to another group). Returns how many processes were signalled.
pub fn signal_session(sid: u32, signal: i32) -> usize {
    let Some(pgid) = signallable(sid) else {
        return 0;
    };
    unsafe { libc::kill(-pgid, signal) };
    let members = session_members(sid);
    for pid in &members {
        if let Some(pid) = signallable(*pid) {
            unsafe { libc::kill(pid, signal) };
        }
    }
    members.len()
}

/// The kernel's clock ticks per second (`sysconf(_SC_CLK_TCK)`), the unit of a process's start
/// ticks; 100 when it cannot be read.
pub fn ticks_per_second() -> u64 {
    // SAFETY: sysconf(3) reads a constant of the running system.
    let n = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    u64::try_from(n).ok().filter(|n| *n > 0).unwrap_or(100)
}

/// Waits until process `p` (that exact process: its start ticks) has ended; at once when it is
/// gone already. Through a pidfd, so no polling and no timer.
pub async fn wait_for_exit(p: ProcessIdentity) {
    // SAFETY: pidfd_open(2) with a PID and no flags; the fd is owned and closed below.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, p.pid as libc::c_long, 0) } as i32;
    if fd < 0 {
        return;
    }
    // The PID may have been reused between our reading and the pidfd: check it is still the one.
    if ProcessIdentity::of(p.pid) != Some(p) {
        // SAFETY: closing the fd opened above.
        unsafe { libc::close(fd) };
        return;
    }
    let _ = tokio::task::spawn_blocking(move || {
        let mut pfd = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: poll(2) on one valid pollfd; -1 waits until the process exits.
        while unsafe { libc::poll(&mut pfd, 1, -1) } < 0
            && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted
        {}
        // SAFETY: closing the fd opened above.
        unsafe { libc::close(fd) };
    })
    .await;
}

/// The `PATH` a Run gives its command: the folder of this binary (`exe`) first, then its own.
pub fn command_path(exe: &std::path::Path) -> Vec<std::path::PathBuf> {
    let rest = std::env::var_os("PATH").unwrap_or_default();
    (exe.parent().map(std::path::Path::to_path_buf).into_iter())
        .chain(std::env::split_paths(&rest))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pids_0_and_1_and_out_of_range_ones_are_never_signalled() {
        assert_eq!(signallable(0), None);
        assert_eq!(signallable(1), None);
        assert_eq!(signallable(u32::MAX), None);
        assert_eq!(signallable(2), Some(2));
    }

    #[test]
    fn stat_line_with_parentheses_in_the_name_parses() {
        let line = "4242 (my (odd) cmd) S 1 4242 4242 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 \
                    987654 0 0";
        let stat = Stat::parse(line).expect("parses");
        assert_eq!(stat.state, 'S');
        assert_eq!(stat.ppid, 1);
        assert_eq!(stat.session, 4242);
        assert_eq!(stat.start_ticks, 987654);
    }

    #[test]
    fn a_process_is_its_pid_and_the_start_tick_the_kernel_reports_until_it_is_gone() {
        // given a process, and its start tick as another program reads it (field 22 of stat)
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .expect("sleep starts");
        let pid = child.id();
        let out = std::process::Command::new("sh")
            .args(["-c", &format!("cut -d' ' -f22 /proc/{pid}/stat")])
            .output()
            .expect("sh runs");
        let ticks: u64 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
        // then its identity is that PID and that tick
        assert_eq!(
            ProcessIdentity::of(pid),
            Some(ProcessIdentity {
                pid,
                start_ticks: ticks
            })
        );
        // and once it is gone and reaped, it has none
        child.kill().unwrap();
        child.wait().unwrap();
        assert_eq!(ProcessIdentity::of(pid), None);
    }

    #[test]
    fn a_missing_pid_has_no_identity() {
        assert_eq!(ProcessIdentity::of(u32::MAX - 1), None);
    }
}
