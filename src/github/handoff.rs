//! Handing credentials to a process of ours (a companion, a Run that `pickup` starts) without
//! its environment or arguments: from `execve` until it makes itself undumpable, a process's
//! `/proc/PID/environ` and `cmdline` are readable by every process of the same user, and a
//! watcher can poll for them. So the parent writes the credential variables into one end of a
//! Unix socket pair and closes it; the child inherits the other end (the only descriptor of the
//! pair without close-on-exec, and only in that child) and finds its number in
//! `THIRDSHIFT_CREDENTIALS_FD`, which names no secret. The child reads it in
//! `auth::take_from_env`, after `host::not_dumpable`. A socket, unlike a pipe, cannot be
//! reopened through `/proc/PID/fd/N` by another process, even in that first window.
//!
//! It does not choose which credentials a child gets (callers do) and sends nothing over the
//! network.

use std::io::{Read as _, Write as _};
use std::os::fd::{AsRawFd as _, FromRawFd as _, OwnedFd};
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt as _;
use std::process::Command;

/// The variable naming the inherited descriptor the credentials are read from.
pub const HANDOFF_FD_VAR: &str = "THIRDSHIFT_CREDENTIALS_FD";

/// Most bytes read from the descriptor (a PEM key is under 4 KiB).
const MOST: u64 = 64 * 1024;

/// Sets `command` up to receive `vars` (`NAME`, value) over an inherited socket; nothing to do
/// when there are none. The credentials are written before the child exists, so the child never
/// waits for its parent.
pub fn hand_over(command: &mut Command, vars: &[(String, String)]) -> std::io::Result<()> {
    if vars.is_empty() {
        return Ok(());
    }
    let (mut ours, theirs) = UnixStream::pair()?;
    ours.write_all(&encode(vars))?;
    drop(ours);
    let theirs = OwnedFd::from(theirs);
    let fd = theirs.as_raw_fd();
    command.env(HANDOFF_FD_VAR, fd.to_string());
    // SAFETY: fcntl is async-signal-safe; in the child only, the descriptor survives exec.
    // The closure owns `theirs`, so the parent closes it when the command is dropped.
    unsafe {
        command.pre_exec(move || {
            let _keep = &theirs;
            if libc::fcntl(fd, libc::F_SETFD, 0) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    Ok(())
}

/// The credential variables handed to this process, read once from the descriptor
/// `THIRDSHIFT_CREDENTIALS_FD` names (then closed, and the variable removed); none when it names
/// no socket. Call it while single-threaded (it changes the environment).
pub(super) fn receive(allowed: &[&str]) -> Vec<(String, String)> {
    let Some(fd) = std::env::var(HANDOFF_FD_VAR).ok() else {
        return Vec::new();
    };
    std::env::remove_var(HANDOFF_FD_VAR);
    let Some(fd) = fd.trim().parse::<i32>().ok().filter(|fd| *fd > 2) else {
        return Vec::new();
    };
    if !is_socket(fd) {
        return Vec::new();
    }
    // SAFETY: the descriptor is open, a socket, and handed to this process alone to read.
    let stream = unsafe { UnixStream::from_raw_fd(fd) };
    let mut bytes = Vec::new();
    if stream.take(MOST).read_to_end(&mut bytes).is_err() {
        return Vec::new();
    }
    decode(&bytes, allowed)
}

fn is_socket(fd: i32) -> bool {
    // SAFETY: fstat only writes into the struct given.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    let ok = unsafe { libc::fstat(fd, &mut st) } == 0;
    ok && (st.st_mode & libc::S_IFMT) == libc::S_IFSOCK
}

/// `NAME=value` pairs, each ended by a NUL (no variable's value can hold one).
fn encode(vars: &[(String, String)]) -> Vec<u8> {
    let mut out = Vec::new();
    for (name, value) in vars {
        out.extend_from_slice(name.as_bytes());
        out.push(b'=');
        out.extend_from_slice(value.as_bytes());
        out.push(0);
    }
    out
}

fn decode(bytes: &[u8], allowed: &[&str]) -> Vec<(String, String)> {
    String::from_utf8_lossy(bytes)
        .split('\0')
        .filter_map(|kv| kv.split_once('='))
        .filter(|(name, _)| allowed.contains(name))
        .map(|(name, value)| (name.to_string(), value.to_string()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_handed_over_is_what_is_received_and_only_credential_names() {
        let vars = vec![
            ("GITHUB_TOKEN".to_string(), "ghs_a=b".to_string()),
            ("PATH".to_string(), "/evil".to_string()),
            (
                "THIRDSHIFT_APP_KEY".to_string(),
                "-----BEGIN\nx\n".to_string(),
            ),
        ];
        let got = decode(&encode(&vars), &["GITHUB_TOKEN", "THIRDSHIFT_APP_KEY"]);
        assert_eq!(got, [vars[0].clone(), vars[2].clone()]);
    }
}
