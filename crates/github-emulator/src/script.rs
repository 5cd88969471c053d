//! Scripted faults, for tests that need one exact sequence of events rather than a rate: the
//! next requests of a method to a route answered 502 (applied first, or not), and the next
//! comments created left out of a given number of comment list reads (a replica that catches
//! up one step per list read). Lists stay ordered as GitHub's replicas are: a comment is never
//! listed before an earlier one, so a later comment stays hidden at least as long.
//!
//! It holds no rates and draws nothing at random; `Faults` (mod.rs) does that.

use std::collections::VecDeque;

use super::Sim;

/// What the tests scripted and what of it is left.
#[derive(Debug, Default)]
pub(crate) struct Script {
    failures: Vec<Failure>,
    lags: VecDeque<u32>,
    /// The most list reads any comment is still hidden from (every hidden comment counts down
    /// together, so this is the floor for a comment created now).
    hidden_max: u32,
}

#[derive(Debug)]
struct Failure {
    method: String,
    route: String,
    left: u32,
    applied: bool,
}

impl Script {
    /// Consumes a scripted failure for this request: `Some(applied)` when it is to fail.
    pub(crate) fn take_failure(&mut self, method: &str, route: &str) -> Option<bool> {
        let f = self
            .failures
            .iter_mut()
            .find(|f| f.left > 0 && f.method == method && f.route == route)?;
        f.left -= 1;
        let applied = f.applied;
        self.failures.retain(|f| f.left > 0);
        Some(applied)
    }

    /// How many list reads a comment created now is left out of.
    pub(crate) fn hide_new_comment(&mut self) -> u32 {
        let own = self.lags.pop_front().unwrap_or(0);
        let hidden = own.max(self.hidden_max);
        self.hidden_max = hidden;
        hidden
    }

    /// Whether some comment is still hidden from lists by the script.
    pub(crate) fn hiding(&self) -> bool {
        self.hidden_max > 0
    }

    /// Counts one list read done.
    pub(crate) fn list_read(&mut self) {
        self.hidden_max = self.hidden_max.saturating_sub(1);
    }
}

impl Sim {
    /// Answers the next `n` `method` requests to `route` (a route template as in the request
    /// log, e.g. `/repos/{owner}/{repo}/issues/{issue_number}/comments`) with 502; when
    /// `applied`, a write is carried out first (GitHub failed after doing it).
    pub fn fail_next(&self, method: &str, route: &str, n: u32, applied: bool) {
        self.lock().script.failures.push(Failure {
            method: method.to_ascii_uppercase(),
            route: route.to_string(),
            left: n,
            applied,
        });
    }

    /// Ends every failure `fail_next` scripted that is still waiting (GitHub is well again).
    pub fn clear_failures(&self) {
        self.lock().script.failures.clear();
    }

    /// The next comments created are left out of comment lists (per issue and repo-wide) for
    /// these many list reads each, in creation order; a single comment read sees them at once.
    pub fn lag_next_comments(&self, reads: &[u32]) {
        self.lock().script.lags.extend(reads.iter().copied());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_later_comment_is_hidden_at_least_as_long_as_an_earlier_one() {
        let mut s = Script::default();
        s.lags.extend([3, 1]);
        assert_eq!(s.hide_new_comment(), 3);
        assert_eq!(s.hide_new_comment(), 3);
        s.list_read();
        assert_eq!(
            s.hide_new_comment(),
            2,
            "unscripted, still behind the earlier ones"
        );
    }

    #[test]
    fn a_scripted_failure_is_used_up() {
        let mut s = Script::default();
        s.failures.push(Failure {
            method: "POST".into(),
            route: "/r".into(),
            left: 2,
            applied: true,
        });
        assert_eq!(s.take_failure("GET", "/r"), None);
        assert_eq!(s.take_failure("POST", "/r"), Some(true));
        assert_eq!(s.take_failure("POST", "/r"), Some(true));
        assert_eq!(s.take_failure("POST", "/r"), None);
    }
}
