//! The salvage commit: staging the worktree, deciding whether there is anything new (the staged
//! tree differs from HEAD's and from origin's), and committing it as
//! `thirdshift: failed run (<reason>)` under the repository's identity or a fallback one, hooks
//! and signing off. It never pushes; that is the caller's next step.

use chrono::SecondsFormat;

use super::{Origin, SalvageRequest, Salvager, Uncommitted};

/// Fallback identity for the salvage commit when the repository has none configured.
const FALLBACK_NAME: &str = "thirdshift";
const FALLBACK_EMAIL: &str = "thirdshift@localhost";

impl Salvager<'_> {
    /// Stages everything and commits it if the tree differs from HEAD's and from origin's.
    pub(super) fn commit_uncommitted(&mut self, origin: &Origin) -> Uncommitted {
        let staged = self
            .git
            .run(&["add", "-A"])
            .and_then(|_| self.git.run(&["write-tree"]));
        let tree = match staged {
            Ok(tree) => tree.trim().to_string(),
            Err(e) => return self.kept(e),
        };
        let same_as = |rev: Option<&str>| {
            rev.and_then(|r| self.git.sha(&format!("{r}^{{tree}}")))
                .is_some_and(|t| t == tree)
        };
        if same_as(Some("HEAD")) || same_as(origin.sha.as_deref()) {
            return Uncommitted::Nothing;
        }
        let mut args = self.identity();
        let message = commit_message(self.req);
        args.extend(
            ["commit", "--no-verify", "--no-gpg-sign", "--quiet", "-m"]
                .map(String::from)
                .into_iter()
                .chain([message.0, "-m".to_string(), message.1]),
        );
        if let Err(e) = self.git.run(&args) {
            return self.kept(e);
        }
        match self.git.sha("HEAD") {
            Some(sha) => Uncommitted::Committed(sha),
            None => self.kept("the salvage commit cannot be read back".to_string()),
        }
    }

    fn kept(&mut self, error: String) -> Uncommitted {
        self.errors.push(format!(
            "uncommitted work left in {}: {error}",
            self.out.worktree
        ));
        Uncommitted::Kept
    }

    /// `-c user.name=… -c user.email=…` for whichever of the two the repository lacks.
    fn identity(&self) -> Vec<String> {
        let get = |key: &str| {
            self.git
                .run(&["config", "--get", key])
                .ok()
                .filter(|v| !v.trim().is_empty())
        };
        identity_args(get("user.name").is_some(), get("user.email").is_some())
    }
}

fn identity_args(has_name: bool, has_email: bool) -> Vec<String> {
    let mut args = Vec::new();
    if !has_name {
        args.extend(["-c".to_string(), format!("user.name={FALLBACK_NAME}")]);
    }
    if !has_email {
        args.extend(["-c".to_string(), format!("user.email={FALLBACK_EMAIL}")]);
    }
    args
}

/// The trailer naming the Claim whose Run's work a salvage commit holds, so a repeated salvage
/// of that Claim recognises the commit as its own.
pub(super) const CLAIM_TRAILER: &str = "Thirdshift-Claim";

/// Subject and body of the salvage commit.
fn commit_message(req: &SalvageRequest) -> (String, String) {
    let subject = format!("thirdshift: failed run ({})", one_line(req.reason));
    let time = req.now.to_rfc3339_opts(SecondsFormat::Secs, true);
    let host = one_line(req.host);
    let body = format!(
        "The Run working on this branch ended ({reason}) and its work was salvaged by \
         thirdshift.\n\
         Uncommitted work at the time of the failure is included in this commit.\n\
         \n\
         Time: {time}\n\
         Host: {host}\n\
         {CLAIM_TRAILER}: {claim}",
        reason = one_line(req.reason),
        claim = one_line(req.claim_id),
    );
    (subject, body)
}

/// `text` with control characters (newlines included) turned into spaces.
fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect::<String>()
        .trim()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{TimeZone, Utc};
    use std::path::Path;

    fn request<'a>(reason: &'a str, host: &'a str) -> SalvageRequest<'a> {
        SalvageRequest {
            worktree: Path::new("/nowhere"),
            branch: "issue-7",
            remote: "origin",
            claim_id: "c-1",
            reason,
            host,
            now: Utc.with_ymd_and_hms(2025, 3, 4, 5, 6, 7).unwrap(),
        }
    }

    #[test]
    fn commit_message_names_reason_time_host_and_uncommitted_work() {
        let (subject, body) = commit_message(&request("killed", "builder-1"));
        assert_eq!(subject, "thirdshift: failed run (killed)");
        assert!(body.contains("Time: 2025-03-04T05:06:07Z"), "{body}");
        assert!(body.contains("Host: builder-1"), "{body}");
        assert!(body.ends_with("\nThirdshift-Claim: c-1"), "{body}");
        assert!(body.contains("Uncommitted work at the time of the failure is included"));
    }

    #[test]
    fn a_reason_with_a_newline_cannot_break_the_subject() {
        let (subject, body) = commit_message(&request("killed\nSigned-off-by: x", "h\nost"));
        assert_eq!(subject, "thirdshift: failed run (killed Signed-off-by: x)");
        assert!(body.contains("Host: h ost"));
    }

    #[test]
    fn fallback_identity_only_for_what_is_missing() {
        assert!(identity_args(true, true).is_empty());
        assert_eq!(
            identity_args(false, false),
            [
                "-c",
                "user.name=thirdshift",
                "-c",
                "user.email=thirdshift@localhost"
            ]
        );
        assert_eq!(
            identity_args(true, false),
            ["-c", "user.email=thirdshift@localhost"]
        );
    }
}
