//! Progress of a long read, on stderr: a bar on a terminal (indicatif), plain lines when stderr
//! is piped or logged (one when it starts, one when it ends, no carriage returns or colours), and
//! nothing for short reads or under `-q`. A pass over many issues never sits silent for a minute.
//! It only reports; it never changes what is read.

use std::io::IsTerminal as _;
use std::time::Instant;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Reads of fewer items than this show no progress.
pub const THRESHOLD: u64 = 10;

/// Whether progress is shown at all (`-q` turns it off for this process).
static QUIET: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Turns progress off (the CLI's `-q`).
pub fn quiet() {
    QUIET.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// The progress of one read of `total` items.
pub struct Progress {
    what: &'static str,
    total: u64,
    started: Instant,
    bar: Option<ProgressBar>,
    plain: bool,
}

impl Progress {
    /// Starts showing progress of reading `total` `what`s (e.g. "issues").
    pub fn start(what: &'static str, total: u64) -> Progress {
        let shown = total >= THRESHOLD && !QUIET.load(std::sync::atomic::Ordering::Relaxed);
        let terminal = std::io::stderr().is_terminal();
        let bar = (shown && terminal).then(|| {
            let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
            let style = ProgressStyle::with_template("reading {msg} [{bar:30}] {pos}/{len}")
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> ");
            bar.set_style(style);
            bar.set_message(what);
            bar.tick();
            bar
        });
        let plain = shown && !terminal;
        if plain {
            eprintln!("thirdshift-reconciler: reading {total} {what}…");
        }
        Progress {
            what,
            total,
            started: Instant::now(),
            bar,
            plain,
        }
    }

    /// `n` more items read.
    pub fn advance(&self, n: u64) {
        if let Some(bar) = &self.bar {
            bar.inc(n);
        }
    }

    /// The read is over.
    pub fn finish(self) {
        if let Some(bar) = &self.bar {
            bar.finish();
        }
        if self.plain {
            eprintln!(
                "thirdshift-reconciler: read {} {} in {:.1} s",
                self.total,
                self.what,
                self.started.elapsed().as_secs_f64()
            );
        }
    }
}
