//! Exit codes that scripts and workflows rely on (`run`'s own in [`run`]), and the error type
//! that carries one up to `main`. It does not print anything itself.

/// Success.
pub const OK: i32 = 0;
/// An error a person must look at (network, permissions, bad input).
pub const ERROR: i32 = 1;
/// Wrong usage (clap uses 2 as well).
pub const USAGE: i32 = 2;
/// `claim`/`run`: the Claim was not taken (owned, not Ready, closed, or a lost race).
pub const LOST: i32 = 3;
/// `stage`: the Claim is no longer ours (ended or superseded); the Run must stop.
pub const NOT_OURS: i32 = 4;

/// `run` passes its command's status through when it is 1 to 239 (128 + N when a signal N
/// killed it, or when a signal N to the Run stopped it); these codes are `run`'s own, so a
/// script can always tell the Run's outcome from its command's.
pub mod run {
    /// The command exited 240 or higher: its exact status is in the end record.
    pub const CMD_HIGH: i32 = 240;
    /// The command could not be started (not found, not executable); the Claim ended `failed`.
    pub const NOT_STARTED: i32 = 241;
    /// The Claim was not taken (owned, not Ready, closed, or a lost race); nothing ran.
    pub const LOST: i32 = 242;
    /// The Claim stopped being ours before the command started.
    pub const NOT_OURS: i32 = 243;
    /// Wrong usage, or a value readers would refuse; nothing ran.
    pub const USAGE: i32 = 244;
    /// An error a person must look at (network, permissions, the state folder).
    pub const ERROR: i32 = 245;

    /// The Run's exit code for its command's exit status `status`.
    pub fn of_cmd(status: i32) -> i32 {
        status.min(CMD_HIGH)
    }

    /// The Run's exit code for an error of its own whose code, as any other command would
    /// exit with it, is `code`.
    pub fn of_error(code: i32) -> i32 {
        match code {
            super::LOST => LOST,
            super::NOT_OURS => NOT_OURS,
            super::USAGE => USAGE,
            _ => ERROR,
        }
    }
}

/// An outcome that ends the program with a specific exit code and a message for people.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct Exit {
    pub code: i32,
    pub message: String,
}

impl Exit {
    /// The Claim was not taken.
    pub fn lost(message: impl Into<String>) -> Exit {
        Exit {
            code: LOST,
            message: message.into(),
        }
    }

    /// The Claim is no longer ours.
    pub fn not_ours(message: impl Into<String>) -> Exit {
        Exit {
            code: NOT_OURS,
            message: message.into(),
        }
    }

    /// Wrong usage or a command that cannot be carried out as asked.
    pub fn usage(message: impl Into<String>) -> Exit {
        Exit {
            code: USAGE,
            message: message.into(),
        }
    }
}

/// The exit code for an error returned to `main`.
pub fn code_of(err: &anyhow::Error) -> i32 {
    err.downcast_ref::<Exit>().map_or(ERROR, |e| e.code)
}

/// `err` from `run`, carrying `run`'s own exit code for it ([`run::of_error`]).
pub fn for_run(err: anyhow::Error) -> anyhow::Error {
    let code = run::of_error(code_of(&err));
    Exit {
        code,
        message: format!("{err:#}"),
    }
    .into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_own_codes_never_collide_with_a_status_it_passes_through() {
        let own = [
            run::NOT_STARTED,
            run::LOST,
            run::NOT_OURS,
            run::USAGE,
            run::ERROR,
        ];
        for status in 0..=255 {
            assert!(!own.contains(&run::of_cmd(status)), "status {status}");
        }
        assert_eq!(run::of_cmd(3), 3);
        assert_eq!(run::of_cmd(128 + 9), 137);
        assert_eq!(run::of_cmd(255), run::CMD_HIGH);
        let lost = for_run(Exit::lost("taken").into());
        assert_eq!(code_of(&lost), run::LOST);
        assert_eq!(code_of(&for_run(anyhow::anyhow!("502"))), run::ERROR);
    }
}
