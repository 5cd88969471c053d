//! The protocol every host and every pass agrees on, pure (no IO, no clock): the records in
//! issue comments and who owns an issue (`record`), which of the Runs working on one issue keeps
//! it when several do (`collision`), the configuration that parameterises the
//! rules (`config`), the label and work rules (`rules`), the failure limits (`failures`), the
//! `/thirdshift` command grammar (`command`), thirdshift's own fingerprints (`fingerprint`),
//! Command records (`thirdshift`) and the agent session in a Session log (`session_log`),
//! whether a git remote is this repository (`remote`) and the Harnesses' resume commands
//! (`resume`). It renders no text for people (that is `text`, which
//! renders from records).

pub mod collision;
pub mod command;
pub mod config;
pub mod failures;
pub mod fingerprint;
pub mod record;
pub mod remote;
pub mod resume;
pub mod rules;
pub mod session_log;
pub mod thirdshift;
