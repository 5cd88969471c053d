//! The `/thirdshift` command grammar, free of IO: what a comment asks for, or why it cannot be
//! read. A command sits on the first non-blank line of a comment, at its start (at most three
//! spaces in); a line that is quoted (`>`), indented into a code block, inside a fence, inline
//! code or an HTML comment does not start with `/thirdshift` and so is not a command:
//!
//! ```text
//! /thirdshift recover [--continue] [--force] [--kill]
//! /thirdshift cancel [--requeue]
//! /thirdshift status
//! /thirdshift help
//! ```
//!
//! Errors are data (`ParseError`), answered by the bot, never panics. Whatever follows the first
//! line is ignored: hidden records in a command comment are the comment author's words, not ours,
//! and this module never looks at them. Who may run a command, and what it does, are decided
//! elsewhere (`reconcile::plan::answers`); the text of help and errors is in `text::replies`.

/// The word every command starts with.
pub const PREFIX: &str = "/thirdshift";

/// Longest word kept in an error, in characters; longer words are clipped.
const MAX_WORD_CHARS: usize = 40;

/// A command's verb. Its help text is an exhaustive match in `text::replies::verb_help`, so a
/// new verb without help does not compile.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Verb {
    Recover,
    Cancel,
    Status,
    Help,
}

impl Verb {
    pub const ALL: [Verb; 4] = [Verb::Recover, Verb::Cancel, Verb::Status, Verb::Help];

    pub fn name(self) -> &'static str {
        match self {
            Verb::Recover => "recover",
            Verb::Cancel => "cancel",
            Verb::Status => "status",
            Verb::Help => "help",
        }
    }

    /// The flags the verb accepts.
    pub fn flags(self) -> &'static [Flag] {
        match self {
            Verb::Recover => &[Flag::Continue, Flag::Force, Flag::Kill],
            Verb::Cancel => &[Flag::Requeue],
            Verb::Status | Verb::Help => &[],
        }
    }
}

/// A flag of `recover` or `cancel`. Its help text is an exhaustive match in
/// `text::replies::flag_help`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Flag {
    Continue,
    Force,
    Kill,
    Requeue,
}

impl Flag {
    pub const ALL: [Flag; 4] = [Flag::Continue, Flag::Force, Flag::Kill, Flag::Requeue];

    /// The flag as written, with its dashes.
    pub fn name(self) -> &'static str {
        match self {
            Flag::Continue => "--continue",
            Flag::Force => "--force",
            Flag::Kill => "--kill",
            Flag::Requeue => "--requeue",
        }
    }
}

/// The flags given to `recover`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Recover {
    /// Re-queue the issue as a Continuation, whatever the recovery policy says.
    pub continue_: bool,
    /// End the Claim although its host is silent (a higher permission).
    pub force: bool,
    /// Ask the owning host to kill a live Run first.
    pub kill: bool,
}

/// The flags given to `cancel`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cancel {
    /// Hand the issue straight back to the queue; without it the cancel holds the issue until a
    /// person puts the ready label back.
    pub requeue: bool,
}

/// Every flag given, whichever verb: each verb accepts only its own (`Verb::flags`).
#[derive(Clone, Copy, Debug, Default)]
struct Given {
    recover: Recover,
    cancel: Cancel,
}

impl Given {
    /// Sets `flag`; false when it was given already.
    fn set(&mut self, flag: Flag) -> bool {
        let slot = match flag {
            Flag::Continue => &mut self.recover.continue_,
            Flag::Force => &mut self.recover.force,
            Flag::Kill => &mut self.recover.kill,
            Flag::Requeue => &mut self.cancel.requeue,
        };
        !std::mem::replace(slot, true)
    }
}

/// A command that parsed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Command {
    Recover(Recover),
    Cancel(Cancel),
    Status,
    Help,
}

impl Command {
    pub fn verb(self) -> Verb {
        match self {
            Command::Recover(_) => Verb::Recover,
            Command::Cancel(_) => Verb::Cancel,
            Command::Status => Verb::Status,
            Command::Help => Verb::Help,
        }
    }

    /// The command in its canonical spelling, e.g. `recover --continue --force`.
    pub fn canonical(self) -> String {
        let mut out = self.verb().name().to_string();
        let flags = match self {
            Command::Recover(r) => vec![
                (r.continue_, Flag::Continue),
                (r.force, Flag::Force),
                (r.kill, Flag::Kill),
            ],
            Command::Cancel(c) => vec![(c.requeue, Flag::Requeue)],
            Command::Status | Command::Help => vec![],
        };
        for (_, flag) in flags.into_iter().filter(|(on, _)| *on) {
            out.push(' ');
            out.push_str(flag.name());
        }
        out
    }
}

/// Why a `/thirdshift` line could not be read. Words are kept clipped to 40 characters, as
/// written (the text module renders them safely).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParseError {
    /// `/thirdshift` alone.
    MissingVerb,
    UnknownVerb {
        word: String,
        suggestion: Option<Verb>,
    },
    UnknownFlag {
        verb: Verb,
        flag: String,
        suggestion: Option<Flag>,
    },
    DuplicateFlag {
        verb: Verb,
        flag: Flag,
    },
    /// A word that is not a flag after the verb.
    UnexpectedArgument {
        verb: Verb,
        word: String,
    },
}

/// What a comment holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Parsed {
    /// Not addressed to thirdshift.
    NotACommand,
    Command(Command),
    Invalid(ParseError),
}

impl Parsed {
    /// Whether the comment is addressed to thirdshift (a command, or a failed attempt at one).
    pub fn is_addressed(&self) -> bool {
        !matches!(self, Parsed::NotACommand)
    }
}

/// Reads a comment body. Linear in the length of its first non-blank line; never panics.
pub fn parse(body: &str) -> Parsed {
    let Some(line) = body.lines().find(|l| !l.trim().is_empty()) else {
        return Parsed::NotACommand;
    };
    let Some(rest) = command_rest(line) else {
        return Parsed::NotACommand;
    };
    match parse_words(rest.split_whitespace()) {
        Ok(c) => Parsed::Command(c),
        Err(e) => Parsed::Invalid(e),
    }
}

/// What follows `/thirdshift` when `line` is a command line: at most three spaces before it
/// (four make a code block, a tab too), and whitespace or the end after it.
fn command_rest(line: &str) -> Option<&str> {
    let trimmed = line.trim_start_matches(' ');
    if line.len() - trimmed.len() > 3 {
        return None;
    }
    let rest = trimmed.strip_prefix(PREFIX)?;
    match rest.chars().next() {
        None => Some(rest),
        Some(c) if c.is_whitespace() => Some(rest),
        Some(_) => None,
    }
}

fn parse_words<'a>(mut words: impl Iterator<Item = &'a str>) -> Result<Command, ParseError> {
    let word = words.next().ok_or(ParseError::MissingVerb)?;
    let verb = Verb::ALL
        .into_iter()
        .find(|v| v.name() == word)
        .ok_or_else(|| ParseError::UnknownVerb {
            word: clip(word),
            suggestion: closest(word, &Verb::ALL, |v| v.name()),
        })?;
    let mut given = Given::default();
    for word in words {
        if !word.starts_with('-') {
            return Err(ParseError::UnexpectedArgument {
                verb,
                word: clip(word),
            });
        }
        let accepted = verb.flags();
        let Some(flag) = accepted.iter().copied().find(|f| f.name() == word) else {
            return Err(ParseError::UnknownFlag {
                verb,
                flag: clip(word),
                suggestion: closest(word, accepted, |f| f.name()),
            });
        };
        if !given.set(flag) {
            return Err(ParseError::DuplicateFlag { verb, flag });
        }
    }
    Ok(match verb {
        Verb::Recover => Command::Recover(given.recover),
        Verb::Cancel => Command::Cancel(given.cancel),
        Verb::Status => Command::Status,
        Verb::Help => Command::Help,
    })
}

/// The first `MAX_WORD_CHARS` characters of `word`, with `…` when clipped.
fn clip(word: &str) -> String {
    let mut out: String = word.chars().take(MAX_WORD_CHARS).collect();
    if word.chars().nth(MAX_WORD_CHARS).is_some() {
        out.push('…');
    }
    out
}

/// The candidate within edit distance 2 of `word` (ignoring case), closest first, if any.
fn closest<T: Copy>(word: &str, candidates: &[T], name: impl Fn(T) -> &'static str) -> Option<T> {
    if word.chars().count() > 20 {
        return None;
    }
    let word = word.to_lowercase();
    candidates
        .iter()
        .map(|&c| (distance(&word, name(c)), c))
        .filter(|(d, _)| *d <= 2)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// Levenshtein distance over characters (both words are short).
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            let next = (row[j] + 1).min(row[j + 1] + 1).min(prev + cost);
            prev = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

/// A command comment with no trusted reply yet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pending {
    pub issue: u64,
    pub comment_id: u64,
    pub author: String,
    pub html_url: String,
    pub parsed: Parsed,
    /// The comment was edited after it was posted. GitHub's REST API does not say by whom, and
    /// any write collaborator may edit it, so an edited command is never run in its author's
    /// name (docs/commands.md).
    pub edited: bool,
    /// The comment carries a `-1` reaction: a command its author had no role for, refused so
    /// already (by a reply, or by the reaction alone), is not handled again. Read only when the
    /// author lacks the role, so no one can silence a command its author may give.
    pub refused: bool,
}

#[cfg(test)]
mod tests;
