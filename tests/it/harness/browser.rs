//! Headless Chromium for the tests that check the HTML page as a browser renders it: Debian's
//! Chromium, which `.ci/run` installs; a missing browser fails the test, never skips it.

use std::path::{Path, PathBuf};

/// Debian's Chromium (`.ci/run` installs it); a missing browser fails the test, never skips it.
pub fn chromium() -> PathBuf {
    let found = ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .map(|name| {
            std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
                .map(|dir| dir.join(name))
                .find(|p| p.is_file())
        })
        .find_map(|p| p);
    found.unwrap_or_else(|| {
        panic!(
            "headless Chromium is needed for the browser test and was not found{}: install it with \
             `apt-get install -y chromium` (as .ci/run does)",
            if std::env::var_os("CI").is_some() { " in CI" } else { "" }
        )
    })
}

/// Runs Chromium headless on `page` with `args`; returns stdout.
pub fn chromium_run(page: &Path, args: &[String]) -> String {
    let profile = tempfile::tempdir().unwrap();
    let mut cmd = std::process::Command::new(chromium());
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--hide-scrollbars",
    ])
    .arg(format!("--user-data-dir={}", profile.path().display()))
    .args(args)
    .arg(format!("file://{}", page.display()));
    let out = super::output_within(&mut cmd, std::time::Duration::from_secs(120), "chromium");
    assert!(
        out.status.success(),
        "chromium: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}
