//! What the tool says about records it ignores for their author: once per pass and in every
//! view, naming the login, how many of its records were ignored, and the exact config line that
//! would trust it. It decides nothing (who is trusted is `protocol::record::Trust`'s), and never
//! suggests trusting anyone as fact: a login may be a stranger forging records.

/// The config line that trusts `login` (added to `.github/thirdshift.yml`).
pub fn trust_line(login: &str) -> String {
    format!("trusted_authors: [\"{login}\"]")
}

/// Records by `login`, not trusted by `me`, were ignored.
pub fn untrusted_records(login: &str, count: usize, me: &str) -> String {
    let records = if count == 1 { "record" } else { "records" };
    format!(
        "{count} {records} by @{login} ignored: @{me} (the identity this runs as) does not trust \
         that author, so its Claims, ends and host reports are not believed (its Runs show as \
         unowned). If @{login} is the identity your hosts or workflows write as, add `{}` to \
         .github/thirdshift.yml; if not, someone is forging records",
        trust_line(login)
    )
}

/// An open registry issue by `author`, not trusted by `me` and without write access: not used,
/// `me` makes its own.
pub fn untrusted_registry(issue: u64, author: &str, me: &str) -> String {
    format!(
        "registry issue #{issue} was opened by @{author}, whom @{me} (the identity this runs as) \
         does not trust: it is not used, and this identity makes and uses its own. If \
         @{author} is the identity your hosts or workflows write as, add `{}` to \
         .github/thirdshift.yml; if not, close #{issue}",
        trust_line(author)
    )
}

/// An open registry issue by `author`, who writes to the repository but is not trusted by `me`:
/// no second one is made, and nothing this needs the registry for is done until one trusts the
/// other.
pub fn registry_of_an_untrusted_writer(issue: u64, author: &str, me: &str) -> String {
    format!(
        "registry issue #{issue} was opened by @{author}, who writes to this repository, but @{me} \
         (the identity this runs as) does not trust @{author}: no second registry issue is made \
         beside it, and this host's report is not written. Add `{}` to .github/thirdshift.yml \
         (and `trusted_authors: [\"{me}\"]` where @{author} runs), or run here as @{author}",
        trust_line(author)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_messages_name_the_login_the_count_and_the_exact_config_line() {
        insta::assert_snapshot!(untrusted_records("alice", 3, "github-actions[bot]"));
        insta::assert_snapshot!(untrusted_records("alice", 1, "bot"));
        insta::assert_snapshot!(untrusted_registry(7, "alice", "github-actions[bot]"));
        insta::assert_snapshot!(registry_of_an_untrusted_writer(
            7,
            "alice",
            "github-actions[bot]"
        ));
    }
}
