//! Waits on child processes that end in a failure, never a hang: a process that outlives its
//! deadline is killed (its process group, when it leads one) and the test fails saying what it
//! waited for.

use std::io::{BufRead as _, Read as _};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Runs `cmd` as `Command::output` does, failing the test when it has not exited within `limit`.
pub fn output_within(cmd: &mut Command, limit: Duration, what: &str) -> Output {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{what} starts: {e}"));
    let drain = |r: Option<Box<dyn std::io::Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut r) = r {
                let _ = r.read_to_end(&mut buf);
            }
            buf
        })
    };
    let out = drain(child.stdout.take().map(|o| Box::new(o) as _));
    let err = drain(child.stderr.take().map(|e| Box::new(e) as _));
    let status = exit_within(&mut child, limit, what);
    Output {
        status,
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    }
}

/// Waits for `child` to exit, failing the test (after killing it and its group) when it has
/// not within `limit`.
pub fn exit_within(child: &mut Child, limit: Duration, what: &str) -> std::process::ExitStatus {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            return status;
        }
        if Instant::now() >= deadline {
            let pid = child.id() as i32;
            // SAFETY: kill(2) of the child this test started and of a group it may lead.
            unsafe {
                libc::kill(-pid, libc::SIGKILL);
                libc::kill(pid, libc::SIGKILL);
            }
            let _ = child.wait();
            panic!("waited {limit:?} for {what}; it never ended (killed)");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The first line `child` prints on its stdout, failing the test when none comes within `limit`.
pub fn first_line_within(child: &mut Child, limit: Duration, what: &str) -> String {
    let out = child.stdout.take().expect("stdout piped");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = std::io::BufReader::new(out).read_line(&mut line);
        let _ = tx.send(line);
    });
    rx.recv_timeout(limit)
        .unwrap_or_else(|_| panic!("waited {limit:?} for {what}; it printed no line"))
}
