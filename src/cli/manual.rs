//! The command line's own documentation, generated from its clap definitions (`cli.rs`), so it
//! never drifts from them: `completions SHELL` prints a completion script (clap_complete), `man`
//! the man page in roff (clap_mangen). Nothing here reads GitHub or the config.

use clap::CommandFactory as _;

use crate::cli::Cli;

/// Writes the completion script for `shell` to `out`.
pub fn completions(shell: clap_complete::Shell, out: &mut dyn std::io::Write) {
    let mut cmd = Cli::command();
    clap_complete::generate(shell, &mut cmd, "thirdshift-reconciler", out);
}

/// Writes the man page (roff) to `out`.
pub fn man(out: &mut dyn std::io::Write) -> std::io::Result<()> {
    clap_mangen::Man::new(Cli::command()).render(out)?;
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bash_completion_and_the_man_page_name_every_command() {
        let mut script = Vec::new();
        completions(clap_complete::Shell::Bash, &mut script);
        let script = String::from_utf8(script).unwrap();
        let mut page = Vec::new();
        man(&mut page).unwrap();
        let page = String::from_utf8(page).unwrap();
        assert!(page.starts_with(".ie") || page.contains(".TH"), "{page}");
        for command in ["observe", "reconcile", "status", "completions"] {
            assert!(script.contains(command), "{command} in the completion");
            assert!(page.contains(command), "{command} in the man page");
        }
    }
}
