//! Exit codes that scripts and workflows rely on, and the error type that carries one up to
//! `main`. It does not print anything itself.

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
