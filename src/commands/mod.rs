//! `/thirdshift` comment commands: `parse.rs` reads a comment (pure), `handle.rs` is the IO of
//! `command --event FILE`. What a command does is decided by reconcile's pure plan
//! (`reconcile::plan::commands`), so a command and a scheduled pass can never decide differently;
//! this module holds no decision about Claims.

pub mod handle;
pub mod parse;
pub mod pending;

pub use parse::{parse, Command, Flag, ParseError, Parsed, Recover, Verb};
pub use pending::Pending;
